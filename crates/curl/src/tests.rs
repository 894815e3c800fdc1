use super::*;

fn no_stdin() -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::other("no stdin here"))
}

#[test]
fn as_curl_does() {
    let a = CurlArgs::default();
    let r = a.request("127.0.0.1:8080/x", &mut no_stdin).unwrap();
    assert_eq!(r.url.as_str(), "http://127.0.0.1:8080/x");
    assert_eq!(r.method, hyper::Method::GET);
    assert!(a.request("ftp://h/", &mut no_stdin).is_err());
    let d = CurlArgs {
        data: vec![Data::Ascii("a=1".into())],
        ..CurlArgs::default()
    };
    let r = d.request("http://h/", &mut no_stdin).unwrap();
    assert_eq!(r.method, hyper::Method::POST);
    // curl's order: the body's Content-Length, then its Content-Type.
    assert_eq!(r.headers[0], ("Content-Length".into(), "3".into()));
    assert_eq!(r.headers[1].1, "application/x-www-form-urlencoded");
    assert_eq!(remote_name(&r.url), PathBuf::from("index.html"));
    let u = Url::parse("http://h/dir/file.bin").unwrap();
    assert_eq!(remote_name(&u), PathBuf::from("file.bin"));
}

#[test]
fn data_parts_join_with_ampersands_and_encode_as_curl() {
    let dir = std::env::temp_dir().join(format!("tw-curl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("d.txt");
    std::fs::write(&f, "x=1\r\ny=2\n").unwrap();
    let fs = f.display().to_string();
    let a = CurlArgs {
        data: vec![
            Data::Ascii(format!("@{fs}")),
            Data::Binary(format!("@{fs}")),
            Data::Raw("@raw".into()),
            Data::UrlEncode("name=a b&c/é".into()),
            Data::UrlEncode("=x y".into()),
            Data::UrlEncode("plain~._-".into()),
            Data::UrlEncode(format!("f@{fs}")),
            Data::Ascii("@-".into()),
        ],
        ..CurlArgs::default()
    };
    let r = a
        .request("http://h/", &mut || Ok(b"in\nput".to_vec()))
        .unwrap();
    assert_eq!(
        match &r.body {
            Payload::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
            other => panic!("{other:?}"),
        },
        "x=1y=2&x=1\r\ny=2\n&@raw&name=a+b%26c%2F%C3%A9&x+y&plain~._-&f=x%3D1%0D%0Ay%3D2%0A&input"
    );
    // -G: into the query, a GET, no content type.
    let g = CurlArgs {
        data: vec![Data::Ascii("a=1".into()), Data::UrlEncode("b=c d".into())],
        get: true,
        ..CurlArgs::default()
    };
    let r = g.request("http://h/p?z=0", &mut no_stdin).unwrap();
    assert_eq!(r.method, hyper::Method::GET);
    assert_eq!(r.url.query(), Some("z=0&a=1&b=c+d"));
    assert!(r.body.is_empty() && r.headers.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_methods_are_refused_with_curls_reason() {
    let both = CurlArgs {
        head: true,
        data: vec![Data::Ascii("x".into())],
        ..CurlArgs::default()
    };
    let e = both.request("http://h/", &mut no_stdin).unwrap_err();
    assert!(matches!(e, CurlError::Methods(a, b) if a.contains("HEAD") && b.contains("POST")));
    let df = CurlArgs {
        data: vec![Data::Ascii("x".into())],
        form: vec![form::FormArg {
            text: "a=b".into(),
            literal: false,
        }],
        ..CurlArgs::default()
    };
    assert!(matches!(
        df.request("http://h/", &mut no_stdin),
        Err(CurlError::Methods(..))
    ));
    // -I with -G -d is a HEAD with a query, as in curl.
    let hg = CurlArgs {
        head: true,
        get: true,
        data: vec![Data::Ascii("q=1".into())],
        ..CurlArgs::default()
    };
    let r = hg.request("http://h/", &mut no_stdin).unwrap();
    assert_eq!(
        (r.method, r.url.query()),
        (hyper::Method::HEAD, Some("q=1"))
    );
}

#[test]
fn credentials_ranges_agent_referer_and_compression_become_headers() {
    let a = CurlArgs {
        range: Some("0-9,-5".into()),
        user_agent: Some("ua/1".into()),
        referer: Some("http://r/".into()),
        compressed: true,
        headers: vec!["X-A: 1".parse().unwrap()],
        ..CurlArgs::default()
    };
    let r = a.request("http://us%40er:p%3Aw@h/", &mut no_stdin).unwrap();
    assert_eq!(r.url.as_str(), "http://h/");
    let h = |n: &str| {
        r.headers
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.as_str())
    };
    // base64("us@er:p:w")
    assert_eq!(h("Authorization"), Some("Basic dXNAZXI6cDp3"));
    assert_eq!(h("Range"), Some("bytes=0-9,-5"));
    assert_eq!(h("User-Agent"), Some("ua/1"));
    assert_eq!(h("Referer"), Some("http://r/"));
    assert_eq!(h("Accept-Encoding"), Some(ACCEPT_ENCODING));
    assert_eq!(h("X-A"), Some("1"));
    // -u wins over the URL; -C N asks from N.
    let u = CurlArgs {
        user: Some("a:b".into()),
        resume_from: Some(100),
        ..CurlArgs::default()
    };
    let r = u.request("http://x:y@h/", &mut no_stdin).unwrap();
    assert_eq!(r.headers[0].1, "Basic YTpi");
    assert_eq!(r.headers[1], ("Range".into(), "bytes=100-".into()));
    let bad = CurlArgs {
        range: Some("a-b".into()),
        ..CurlArgs::default()
    };
    assert!(bad.request("http://h/", &mut no_stdin).is_err());
    let nopw = CurlArgs {
        user: Some("alice".into()),
        ..CurlArgs::default()
    };
    assert!(nopw.request("http://h/", &mut no_stdin).is_err());
}

#[test]
fn multipart_in_curls_form() {
    let dir = std::env::temp_dir().join(format!("tw-form-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("a.txt");
    std::fs::write(&f, "file body").unwrap();
    let parts: Vec<form::FormArg> = [
        "k=v".to_string(),
        format!("up=@{}", f.display()),
        format!("t=<{};type=text/x", f.display()),
    ]
    .into_iter()
    .map(|text| form::FormArg {
        text,
        literal: false,
    })
    .collect();
    let (ty, body, _) = form::multipart(&parts, "B", &mut no_stdin).unwrap();
    assert_eq!(ty, "multipart/form-data; boundary=B");
    assert_eq!(
        String::from_utf8(body).unwrap(),
        "--B\r\nContent-Disposition: form-data; name=\"k\"\r\n\r\nv\r\n\
         --B\r\nContent-Disposition: form-data; name=\"up\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body\r\n\
         --B\r\nContent-Disposition: form-data; name=\"t\"\r\nContent-Type: text/x\r\n\r\nfile body\r\n--B--\r\n"
    );
    let b = boundary();
    assert!(
        b.starts_with("------------------------") && b.len() == 40,
        "{b}"
    );
    // -T into a directory URL appends the file name.
    let t = CurlArgs {
        upload: Some(f.clone()),
        ..CurlArgs::default()
    };
    let r = t.request("http://h/up/", &mut no_stdin).unwrap();
    assert_eq!((r.method, r.url.path()), (hyper::Method::PUT, "/up/a.txt"));
    // Streamed when sent: the file and its length, not its bytes.
    match &r.body {
        Payload::File { path, len } => assert_eq!((path, *len), (&f, 9)),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn proxies_from_flags_and_the_environment_as_curl_reads_them() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let http = Url::parse("http://www.example.com/").unwrap();
    let https = Url::parse("https://www.example.com/").unwrap();
    let p = |u: &Url, x: Option<&str>, n: Option<&str>, e: &dyn Fn(&str) -> Option<String>| {
        proxy_for(u, x, n, e).unwrap().map(|p| (p.host, p.port))
    };
    let none = env(&[]);
    assert_eq!(
        p(&http, Some("pr:3128"), None, &none),
        Some(("pr".into(), 3128))
    );
    assert_eq!(p(&http, Some("pr"), None, &none), Some(("pr".into(), 1080)));
    assert_eq!(p(&http, Some(""), None, &none), None);
    // Upper-case HTTP_PROXY is ignored, as curl does.
    let upper = env(&[("HTTP_PROXY", "bad:1")]);
    assert_eq!(p(&http, None, None, &upper), None);
    let lower = env(&[("http_proxy", "http://u:p@pr:8"), ("HTTPS_PROXY", "s:9")]);
    assert_eq!(p(&http, None, None, &lower), Some(("pr".into(), 8)));
    assert_eq!(p(&https, None, None, &lower), Some(("s".into(), 9)));
    let exempt = env(&[
        ("http_proxy", "pr:8"),
        ("no_proxy", "localhost,.example.com"),
    ]);
    assert_eq!(p(&http, None, None, &exempt), None);
    assert_eq!(p(&http, Some("pr:1"), Some("*"), &none), None);
    assert!(no_proxy_matches("example.com", "a.example.com"));
    assert!(!no_proxy_matches("example.com", "badexample.com"));
    assert!(no_proxy_matches("::1", "[::1]"));
    let auth = proxy_for(&http, Some("u:p@pr:1"), None, &none)
        .unwrap()
        .unwrap()
        .auth;
    assert_eq!(auth.as_deref(), Some("Basic dTpw"));
    assert!(proxy_for(&http, Some("socks5://pr:1"), None, &none).is_err());
}
