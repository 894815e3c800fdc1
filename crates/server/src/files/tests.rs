use super::*;

struct Tmp(PathBuf);
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// root/ with a.txt (26 bytes), sub/b.bin, sub/index-less dir, a link out.
fn tree(tag: &str) -> (Tmp, Root) {
    let base = std::env::temp_dir().join(format!("tcpwise-files-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    let root = base.join("root");
    fs::create_dir_all(root.join("sub/deeper")).unwrap();
    fs::create_dir_all(base.join("outside")).unwrap();
    fs::write(base.join("outside/secret.txt"), "secret\n").unwrap();
    fs::write(root.join("a.txt"), "abcdefghijklmnopqrstuvwxyz").unwrap();
    fs::write(root.join("sub/b.bin"), [7u8; 1000]).unwrap();
    fs::write(root.join("sub/deeper/index.html"), "<p>hi</p>").unwrap();
    fs::write(root.join("we ird&<name>.txt"), "x").unwrap();
    std::os::unix::fs::symlink(base.join("outside"), root.join("link-out")).unwrap();
    std::os::unix::fs::symlink(root.join("a.txt"), root.join("link-in")).unwrap();
    let r = Root::new(&root).unwrap();
    (Tmp(base), r)
}

fn get(root: &Root, target: &str) -> FileAnswer {
    plan(root, "GET", target, &Conditional::default())
}

fn header<'a>(p: &'a FileAnswer, name: &str) -> Option<&'a str> {
    let h = match p {
        FileAnswer::Text { headers, .. }
        | FileAnswer::NotModified { headers }
        | FileAnswer::File { headers, .. } => headers,
    };
    h.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
}

#[test]
fn files_listings_redirects_and_types() {
    let (_t, root) = tree("basic");
    let p = get(&root, "/a.txt");
    assert_eq!(p.status(), 200);
    assert_eq!(p.body_len(), Some(26));
    assert!(matches!(&p, FileAnswer::File { content_type, .. } if content_type == "text/plain"));
    assert!(header(&p, "etag").unwrap().starts_with('"'));
    assert!(header(&p, "last-modified").unwrap().ends_with("GMT"));
    assert!(
        matches!(get(&root, "/sub/b.bin"), FileAnswer::File { ref content_type, .. } if content_type == "application/octet-stream")
    );
    // A directory without its slash is redirected, query kept.
    let p = get(&root, "/sub?x=1");
    assert_eq!(
        (p.status(), header(&p, "location")),
        (301, Some("/sub/?x=1"))
    );
    // `//sub` (the audit's `//evil.com`) is redirected to a path on this
    // host, never to a network-path reference.
    let p = get(&root, "//sub");
    assert_eq!((p.status(), header(&p, "location")), (301, Some("/sub/")));
    // With it: index.html if there is one, else a listing like python's.
    assert!(
        matches!(get(&root, "/sub/deeper/"), FileAnswer::File { ref path, .. } if path.ends_with("index.html"))
    );
    let FileAnswer::Text {
        status: 200,
        body,
        content_type,
        ..
    } = get(&root, "/")
    else {
        panic!("listing")
    };
    assert_eq!(content_type, "text/html; charset=utf-8");
    assert!(
        body.contains("<title>Directory listing for /</title>"),
        "{body}"
    );
    assert!(
        body.contains("<li><a href=\"sub/\">sub/</a></li>"),
        "{body}"
    );
    assert!(
        body.contains("<li><a href=\"link-out\">link-out@</a></li>"),
        "{body}"
    );
    assert!(
        body.contains("href=\"we%20ird%26%3Cname%3E.txt\">we ird&amp;&lt;name&gt;.txt</a>"),
        "{body}"
    );
    // Percent-encoded names are found; the in-root symlink is served.
    assert_eq!(get(&root, "/we%20ird%26%3Cname%3E.txt").status(), 200);
    assert_eq!(get(&root, "/link-in").status(), 200);
    assert_eq!(get(&root, "/nope").status(), 404);
    let p = plan(&root, "POST", "/a.txt", &Conditional::default());
    assert_eq!((p.status(), header(&p, "allow")), (405, Some("GET, HEAD")));
}

#[test]
fn conditional_requests_get_304() {
    let (_t, root) = tree("cond");
    let p = get(&root, "/a.txt");
    let etag = header(&p, "etag").unwrap().to_string();
    let lm = header(&p, "last-modified").unwrap().to_string();
    let c = |inm: Option<&str>, ims: Option<&str>| Conditional {
        if_none_match: inm.map(String::from),
        if_modified_since: ims.map(String::from),
        ..Conditional::default()
    };
    assert_eq!(
        plan(&root, "GET", "/a.txt", &c(Some(&etag), None)).status(),
        304
    );
    assert_eq!(
        plan(&root, "GET", "/a.txt", &c(Some("\"x\", *"), None)).status(),
        304
    );
    assert_eq!(
        plan(&root, "GET", "/a.txt", &c(Some("\"other\""), None)).status(),
        200
    );
    assert_eq!(
        plan(&root, "GET", "/a.txt", &c(None, Some(&lm))).status(),
        304
    );
    assert_eq!(
        plan(
            &root,
            "GET",
            "/a.txt",
            &c(None, Some("Thu, 01 Jan 1970 00:00:00 GMT"))
        )
        .status(),
        200
    );
    // If-None-Match that does not match wins over a matching date.
    assert_eq!(
        plan(&root, "GET", "/a.txt", &c(Some("\"other\""), Some(&lm))).status(),
        200
    );
    assert_eq!(
        plan(&root, "HEAD", "/a.txt", &c(Some(&etag), None)).body_len(),
        None
    );
}

#[test]
fn ranges_single_multiple_and_unsatisfiable() {
    assert_eq!(parse_ranges("bytes=0-9", 26), Ranges::Some(vec![(0, 9)]));
    assert_eq!(parse_ranges("bytes=20-", 26), Ranges::Some(vec![(20, 25)]));
    assert_eq!(parse_ranges("bytes=-5", 26), Ranges::Some(vec![(21, 25)]));
    assert_eq!(parse_ranges("bytes=-100", 26), Ranges::Some(vec![(0, 25)]));
    assert_eq!(
        parse_ranges("bytes=10-1000", 26),
        Ranges::Some(vec![(10, 25)])
    );
    assert_eq!(
        parse_ranges("bytes=0-0, 5-6", 26),
        Ranges::Some(vec![(0, 0), (5, 6)])
    );
    assert_eq!(parse_ranges("bytes=26-", 26), Ranges::Unsatisfiable);
    assert_eq!(parse_ranges("bytes=-0", 26), Ranges::Unsatisfiable);
    assert_eq!(parse_ranges("bytes=30-40,50-", 26), Ranges::Unsatisfiable);
    assert_eq!(parse_ranges("bytes=0-", 0), Ranges::Unsatisfiable);
    for bad in [
        "items=0-1",
        "bytes=5-1",
        "bytes=x-1",
        "bytes=-",
        "bytes=1",
        "0-1",
    ] {
        assert_eq!(parse_ranges(bad, 26), Ranges::Ignore, "{bad}");
    }
    let many = format!("bytes={}", vec!["0-0"; 65].join(","));
    assert_eq!(parse_ranges(&many, 26), Ranges::Ignore);

    let (_t, root) = tree("range");
    let r = |range: &str| {
        plan(
            &root,
            "GET",
            "/a.txt",
            &Conditional {
                range: Some(range.into()),
                ..Conditional::default()
            },
        )
    };
    let p = r("bytes=2-4");
    assert_eq!((p.status(), p.body_len()), (206, Some(3)));
    assert_eq!(header(&p, "content-range"), Some("bytes 2-4/26"));
    let p = r("bytes=40-");
    assert_eq!(
        (p.status(), header(&p, "content-range")),
        (416, Some("bytes */26"))
    );
    let p = r("bytes=0-1,24-");
    assert_eq!(p.status(), 206);
    let FileAnswer::File {
        boundary: Some(b), ..
    } = &p
    else {
        panic!("multipart")
    };
    // Content-Length is exactly the parts with their heads and the end.
    let want =
        p.part_head(0).len() + 2 + 2 + p.part_head(1).len() + 2 + 2 + p.multipart_end().len();
    assert_eq!(p.body_len(), Some(want as u64));
    assert!(p.part_head(1).contains("content-range: bytes 24-25/26"));
    assert_eq!(p.multipart_end(), format!("--{b}--\r\n"));
    // A stale If-Range gets the whole file.
    let p = plan(
        &root,
        "GET",
        "/a.txt",
        &Conditional {
            range: Some("bytes=0-1".into()),
            if_range: Some("\"stale\"".into()),
            ..Conditional::default()
        },
    );
    assert_eq!(p.status(), 200);
}

#[test]
fn no_path_leaves_the_root() {
    let (_t, root) = tree("escape");
    let hostile = [
        "/../outside/secret.txt",
        "/..",
        "/../",
        "/sub/../../outside/secret.txt",
        "/%2e%2e/outside/secret.txt",
        "/%2E%2E/outside/secret.txt",
        "/.%2e/outside/secret.txt",
        "/%2e./outside/secret.txt",
        "/..%2foutside%2fsecret.txt",
        "/%2e%2e%2foutside%2fsecret.txt",
        "/sub/%2e%2e/%2e%2e/outside/secret.txt",
        "/link-out/secret.txt",
        "/link-out/",
        "/link-out",
        "//etc/passwd",
        "/%2fetc%2fpasswd",
        "/./../outside/secret.txt",
        "/sub/./../..//outside/secret.txt",
        "/%00",
        "/a.txt%00.html",
        "/%c0%ae%c0%ae/outside/secret.txt",
        "/%ff",
        "/..%5c..%5coutside%5csecret.txt",
        "/%252e%252e/outside/secret.txt",
        "http://host/../outside/secret.txt",
        "../outside/secret.txt",
        "*",
        "/sub/..",
    ];
    assert!(hostile.len() >= 20);
    for t in hostile {
        let p = get(&root, t);
        assert!(
            matches!(p.status(), 400 | 403 | 404),
            "{t}: {} {p:?}",
            p.status()
        );
        if let FileAnswer::Text { body, .. } = &p {
            assert!(!body.contains("secret"), "{t}");
        }
        assert!(!matches!(&p, FileAnswer::File { .. }), "{t}");
    }
}

#[test]
fn failed_preconditions_are_412() {
    let (_t, root) = tree("precond");
    let p = get(&root, "/a.txt");
    let etag = header(&p, "etag").unwrap().to_string();
    let lm = header(&p, "last-modified").unwrap().to_string();
    let c = |im: Option<&str>, ius: Option<&str>| Conditional {
        if_match: im.map(String::from),
        if_unmodified_since: ius.map(String::from),
        ..Conditional::default()
    };
    let status = |c: &Conditional| plan(&root, "GET", "/a.txt", c).status();
    assert_eq!(status(&c(Some(&etag), None)), 200);
    assert_eq!(status(&c(Some("*"), None)), 200);
    assert_eq!(status(&c(Some("\"stale\""), None)), 412);
    // A weak tag never matches If-Match (strong comparison).
    assert_eq!(status(&c(Some(&format!("W/{etag}")), None)), 412);
    assert_eq!(status(&c(None, Some(&lm))), 200);
    assert_eq!(status(&c(None, Some("Thu, 01 Jan 1970 00:00:00 GMT"))), 412);
    // If-Match decides when both are there.
    assert_eq!(
        status(&c(Some(&etag), Some("Thu, 01 Jan 1970 00:00:00 GMT"))),
        200
    );
}

#[test]
fn compressed_types_are_not_gzipped_again() {
    let file = |ct: &str| FileAnswer::File {
        status: 200,
        path: "x".into(),
        size: 1,
        ranges: vec![(0, 0)],
        content_type: ct.into(),
        headers: Vec::new(),
        boundary: None,
    };
    for ct in [
        "image/png",
        "image/jpeg",
        "application/zip",
        "application/gzip",
        "video/mp4",
        "font/woff2",
    ] {
        assert!(!file(ct).compressible(), "{ct}");
    }
    for ct in [
        "text/html",
        "application/json",
        "image/svg+xml",
        "application/octet-stream",
        "text/plain; charset=utf-8",
    ] {
        assert!(file(ct).compressible(), "{ct}");
    }
}
