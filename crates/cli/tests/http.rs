//! `tcpwise get` and `tcpwise serve` against real peers: curl, wrk,
//! python3's http.server and nginx.

use crate::common::*;

use std::process::{Command, Stdio};

fn sha_stdout(o: &std::process::Output) -> String {
    let dir = TempDir::new("sha");
    let p = dir.0.join("b");
    std::fs::write(&p, &o.stdout).unwrap();
    sha256_of(&p)
}

#[test]
fn curl_fetches_every_serve_endpoint_byte_exact_over_http_and_tls() {
    if !tool_ok("curl_serve", "curl") {
        return;
    }
    let dir = TempDir::new("tls");
    let cert = dir.0.join("cert.pem");
    let (_plain, base) = serve_loopback(&[]);
    let (_tls, tbase) = serve_loopback(&["--tls", "--cert-out", cert.to_str().unwrap()]);
    let tbase = tbase.replace("127.0.0.1", "localhost");
    for b in [&base, &tbase] {
        for (path, n) in [
            ("/bytes/0", 0),
            ("/bytes/1000", 1000),
            ("/bytes/25000", 25_000),
            ("/bytes/10000000", 10_000_000),
            ("/bytes/70000?chunked=1", 70_000),
            ("/delay/50/bytes/3000", 3000),
        ] {
            let o = Command::new("curl")
                .args([
                    "-sS",
                    "--fail",
                    "--cacert",
                    cert.to_str().unwrap(),
                    &format!("{b}{path}"),
                ])
                .output()
                .unwrap();
            assert!(o.status.success(), "{b}{path}: {}", stderr(&o));
            assert_eq!(o.stdout.len(), n, "{b}{path}");
            assert_eq!(sha_stdout(&o), sha_of_pattern(n), "{b}{path}");
        }
        let o = Command::new("curl")
            .args([
                "-sS",
                "--cacert",
                cert.to_str().unwrap(),
                "--data-binary",
                "round trip",
                &format!("{b}/echo"),
            ])
            .output()
            .unwrap();
        assert_eq!(stdout(&o), "round trip");
        let o = Command::new("curl")
            .args([
                "-sS",
                "--cacert",
                cert.to_str().unwrap(),
                &format!("{b}/health"),
            ])
            .output()
            .unwrap();
        assert_eq!(stdout(&o), "ok\n");
    }
    // Our own client over TLS with --cacert, and a clear error without it.
    let o = tcpwise(&[
        "get",
        "--cacert",
        cert.to_str().unwrap(),
        &format!("{tbase}/bytes/25000"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sha_stdout(&o), sha_of_pattern(25_000));
    // Untrusted: curl's 60, with the reason.
    let o = tcpwise(&["get", &format!("{tbase}/health")]);
    assert_eq!(o.status.code(), Some(60), "{}", stderr(&o));
    assert!(stderr(&o).contains("certificate"), "{}", stderr(&o));
}

#[test]
fn wrk_can_load_serve() {
    if !tool_ok("wrk_serve", "wrk") {
        return;
    }
    let (_s, base) = serve_loopback(&[]);
    let o = Command::new("wrk")
        .args(["-t1", "-c8", "-d1s", &format!("{base}/bytes/1000")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let reqs: u64 = out
        .lines()
        .find_map(|l| {
            l.trim()
                .split_once(" requests in")
                .map(|(n, _)| n.trim().parse().unwrap())
        })
        .unwrap();
    assert!(reqs > 100, "{out}");
    assert!(
        !out.contains("Non-2xx") && !out.contains("Socket errors"),
        "{out}"
    );
}

#[test]
fn get_against_python_http_server() {
    if !tool_ok("get_python", "python3") {
        return;
    }
    let dir = TempDir::new("py");
    for (name, n) in [
        ("zero", 0usize),
        ("k1", 1000),
        ("k25", 25_000),
        ("m10", 10_000_000),
    ] {
        std::fs::write(dir.0.join(name), blob(n, n as u64 + 1)).unwrap();
    }
    let srv = python_http(&dir.0);
    for name in ["zero", "k1", "k25", "m10"] {
        let url = format!("http://127.0.0.1:{}/{name}", srv.port);
        let out = dir.0.join(format!("{name}.out"));
        let o = tcpwise(&["get", "-o", out.to_str().unwrap(), &url]);
        assert!(o.status.success(), "{url}: {}", stderr(&o));
        assert_eq!(sha256_of(&out), sha256_of(&dir.0.join(name)), "{url}");
    }
    // HEAD.
    let o = tcpwise(&["get", "-I", &format!("http://127.0.0.1:{}/k25", srv.port)]);
    assert!(
        stdout(&o).starts_with("HTTP/1.0 200")
            && stdout(&o)
                .to_ascii_lowercase()
                .contains("content-length: 25000"),
        "{}",
        stdout(&o)
    );
}

fn nginx(dir: &std::path::Path, port: u16) -> Proc {
    let d = dir.display();
    let conf = format!(
        "daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         events {{}}\n\
         http {{ log_format c '$connection $connection_requests $request $status';\n\
           access_log {d}/access.log c; client_body_temp_path {d}; keepalive_timeout 1s;\n\
           if_modified_since before;\n\
           server {{ listen 127.0.0.1:{port}; root {d}/www;\n\
             location = /r1 {{ return 302 /r2; }} location = /r2 {{ return 301 /r3; }} location = /r3 {{ return 307 /k25; }}\n\
             location = /nothing {{ return 204; }} }} }}\n"
    );
    nginx_with(dir, &conf, port)
}

#[test]
fn get_against_nginx_reuse_redirects_204_304() {
    if !tool_ok("get_nginx", "nginx") {
        return;
    }
    let dir = TempDir::new("nginx");
    std::fs::create_dir_all(dir.0.join("www")).unwrap();
    for (name, n) in [
        ("zero", 0usize),
        ("k1", 1000),
        ("k25", 25_000),
        ("m10", 10_000_000),
    ] {
        std::fs::write(dir.0.join("www").join(name), blob(n, n as u64 + 3)).unwrap();
    }
    let port = free_port();
    let _ng = nginx(&dir.0, port);
    let u = |p: &str| format!("http://127.0.0.1:{port}/{p}");
    // Four bodies in one call: byte-exact, and all on one connection.
    let outs: Vec<String> = ["zero", "k1", "k25", "m10"]
        .iter()
        .map(|n| dir.0.join(format!("{n}.out")).to_str().unwrap().to_string())
        .collect();
    // -o must precede its URL's position: pass all -o first, then URLs.
    let mut ordered = vec!["get".to_string()];
    for o in &outs {
        ordered.extend(["-o".to_string(), o.clone()]);
    }
    ordered.extend(["zero", "k1", "k25", "m10"].iter().map(|n| u(n)));
    let o = Command::new(BIN).args(&ordered).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for (n, out) in ["zero", "k1", "k25", "m10"].iter().zip(&outs) {
        assert_eq!(
            sha256_of(std::path::Path::new(out)),
            sha256_of(&dir.0.join("www").join(n)),
            "{n}"
        );
    }
    let log = std::fs::read_to_string(dir.0.join("access.log")).unwrap();
    let conns: std::collections::HashSet<&str> =
        log.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(
        conns.len(),
        1,
        "nginx saw the four requests on one connection:\n{log}"
    );
    assert!(
        log.lines().any(|l| l.split(' ').nth(1) == Some("4")),
        "{log}"
    );

    // Redirect chain with -L, 204, 304.
    let o = tcpwise(&["get", "-L", "--report-json", &u("r1")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let chain = v[0]["responses"].as_array().unwrap();
    let statuses: Vec<u64> = chain
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, vec![302, 301, 307, 200]);
    assert_eq!(chain[3]["body_bytes"], 25_000);
    assert_eq!(v[0]["url"], u("r1"));
    let o = tcpwise(&["get", "-i", &u("nothing")]);
    assert!(stdout(&o).starts_with("HTTP/1.1 204"), "{}", stdout(&o));
    let o = tcpwise(&[
        "get",
        "-i",
        "-H",
        "If-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT",
        &u("k25"),
    ]);
    assert!(stdout(&o).starts_with("HTTP/1.1 304"), "{}", stdout(&o));
}

#[test]
fn get_reports_chunked_bodies_and_bad_input() {
    let (_s, base) = serve_loopback(&[]);
    let o = tcpwise(&["get", "--timing", &format!("{base}/bytes/100000?chunked=1")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sha_stdout(&o), sha_of_pattern(100_000));
    assert!(stderr(&o).contains("pool max-burst"), "{}", stderr(&o));
    for (args, code) in [
        // curl's numbers: another scheme 1, a malformed URL 3.
        (vec!["get", "ftp://example.invalid/"], 1),
        (vec!["get", "not a url"], 3),
        (
            vec!["get", "--pool-policy", "random", "http://127.0.0.1:1/"],
            2,
        ),
        (vec!["get", "-H", "no colon", "http://127.0.0.1:1/"], 2),
        (vec!["get", "http://127.0.0.1:1/"], 7),
    ] {
        let o = tcpwise(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn get_with_a_pinned_rcvbuf_gets_the_buffer_diagnosis_on_an_emulated_path() {
    if !netns_ok("get_rcvbuf") {
        return;
    }
    let script = format!(
        "{BIN} get --rcvbuf 16KB -o /dev/null http://$TCPWISE_PEER:8080/bytes/1000000 && \
         {BIN} get -o /dev/null http://$TCPWISE_PEER:8080/bytes/1000000"
    );
    let o = tcpwise(&[
        "emu",
        "pair",
        "-q",
        "--rtt",
        "50ms",
        "--rate",
        "20mbit",
        "--server",
        &format!("exec {BIN} serve --bind 198.18.0.2:8080"),
        "--wait-port",
        "8080",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warnings: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.contains("warning"))
        .map(String::from)
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "only the pinned transfer is diagnosed: {warnings:?}"
    );
    assert!(
        warnings[0].contains("--rcvbuf 16000") && warnings[0].contains("caps goodput"),
        "{warnings:?}"
    );
}

#[test]
fn serve_finishes_responses_in_flight_on_sigterm_then_exits_zero() {
    if !tool_ok("serve_sigterm", "curl") {
        return;
    }
    let (mut server, base) = serve_loopback(&[]);
    // A response the server is still preparing (1.5 s delay) when SIGTERM lands.
    let curl = Command::new("curl")
        .args(["-sS", "--fail", &format!("{base}/delay/1500/bytes/200000")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let t0 = std::time::Instant::now();
    tcpwise_sys::kill(server.0.id() as i32, libc::SIGTERM);
    let out = curl.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the response in flight was cut: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sha_stdout(&out), sha_of_pattern(200_000));
    // New connections are refused once the signal arrived.
    let late = Command::new("curl")
        .args(["-sS", "--max-time", "2", &format!("{base}/health")])
        .output()
        .unwrap();
    assert!(
        !late.status.success(),
        "a new request was served after SIGTERM"
    );
    // And the server exits by itself, with 0, soon after its last response.
    let status = loop {
        if let Some(s) = server.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(8),
            "tcpwise serve did not exit after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(
        status.code(),
        Some(0),
        "exit status after SIGTERM: {status}"
    );
}

#[test]
fn serve_help_lists_every_limit_and_the_limit_log_line_appears() {
    let o = tcpwise(&["serve", "--help"]);
    // Unwrapped, each flag's text runs to the next flag.
    let help = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    for (flag, default) in [
        ("--header-timeout <SECONDS>", "10"),
        ("--idle-timeout <SECONDS>", "60"),
        ("--max-header-size <SIZE>", "64KiB"),
        ("--max-body <SIZE>", "1GiB"),
        ("--max-bytes <SIZE>", "100GB"),
        ("--max-delay <SECONDS>", "600"),
        ("--max-conns <N>", "16384"),
    ] {
        let text = help.split(flag).nth(1).unwrap_or("");
        let text = text.split(" --").next().unwrap_or("");
        assert!(
            text.contains("Limit:") && text.contains(&format!("[default: {default}]")),
            "{flag}: {text}"
        );
    }
    for bad in [
        &["serve", "--header-timeout", "0"][..],
        &["serve", "--max-conns", "0"],
        &["serve", "--max-body", "lots"],
    ] {
        let o = tcpwise(bad);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {e}");
        // One error line naming the flag (clap adds its "--help" hint).
        let first = e.lines().next().unwrap_or("");
        assert!(first.contains("error") && first.contains(bad[1]), "{e}");
    }

    // --max-conns 1: a second connection closes the first, which moved no
    // data, and stderr says why, once.
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--threads",
            "1",
            "--max-conns",
            "1",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let _p = Proc(child);
    let banner = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    assert!(banner.contains("at most 1 connections"), "{banner}");
    let addr = banner.rsplit("http://").next().unwrap().to_string();
    let mut a = std::net::TcpStream::connect(&addr).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut b = std::net::TcpStream::connect(&addr).unwrap();
    let line = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    assert!(
        line.contains("connection limit reached")
            && line.contains("--max-conns")
            && line.contains("moved data longest ago"),
        "{line}"
    );
    use std::io::{Read, Write};
    a.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert!(
        matches!(a.read(&mut buf), Ok(0) | Err(_)),
        "the first connection was closed"
    );
    b.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    b.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut reply = String::new();
    let _ = b.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        rx.recv_timeout(std::time::Duration::from_millis(300))
            .is_err(),
        "said once"
    );
}

/// curl with errors shown and a 10 s limit.
fn curl(args: &[&str]) -> std::process::Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .output()
        .unwrap()
}

/// A tree with text, binary, nested, spaced and empty files.
fn file_tree(root: &std::path::Path) {
    std::fs::create_dir_all(root.join("docs/deep/er")).unwrap();
    std::fs::create_dir_all(root.join("empty dir")).unwrap();
    std::fs::write(root.join("hello.txt"), "hello, world\n").unwrap();
    std::fs::write(root.join("page.html"), "<h1>page</h1>\n").unwrap();
    std::fs::write(root.join("docs/blob.bin"), blob(300_000, 5)).unwrap();
    std::fs::write(root.join("docs/deep/er/notes & more.txt"), "x & y\n").unwrap();
    std::fs::write(root.join("docs/deep/zero"), b"").unwrap();
}

/// Every file under `dir`, relative, with its contents.
fn files_under(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &std::path::Path, d: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap().map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

#[test]
fn serve_root_is_a_file_origin_for_curl_and_wget_and_never_leaves_its_root() {
    if !tool_ok("serve_root", "curl") || !tool_ok("serve_root", "wget") {
        return;
    }
    let dir = TempDir::new("root");
    let www = dir.0.join("www");
    file_tree(&www);
    std::fs::write(dir.0.join("secret.txt"), "outside the root\n").unwrap();
    std::os::unix::fs::symlink(&dir.0, www.join("up")).unwrap();
    let (_s, base) = serve_loopback(&["--root", www.to_str().unwrap()]);
    ranges_and_conditionals(&base);
    wget_mirrors_as_from_http_server(&base, &www, &dir.0);
    hostile_paths_refused(&base);
}

/// curl's ranges (one, several as multipart, past the end) and
/// conditional requests (ETag, a Last-Modified in the future: 304).
fn ranges_and_conditionals(base: &str) {
    // curl -r: one range, several (multipart), past the end (416).
    let o = curl(&["-r", "0-4", &format!("{base}/hello.txt")]);
    assert_eq!(o.stdout, b"hello");
    let o = curl(&["-i", "-r", "0-0,7-11", &format!("{base}/hello.txt")]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("HTTP/1.1 206"), "{text}");
    assert!(text.contains("multipart/byteranges; boundary="), "{text}");
    assert!(
        text.contains("content-range: bytes 7-11/13\r\n\r\nworld\r\n"),
        "{text}"
    );
    let o = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-r",
        "100-",
        &format!("{base}/hello.txt"),
    ]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "416");
    // A large file's middle, byte-exact.
    let o = curl(&["-r", "100000-199999", &format!("{base}/docs/blob.bin")]);
    assert_eq!(o.stdout, blob(300_000, 5)[100_000..200_000]);
    // ETag and Last-Modified give 304s.
    let o = curl(&["-sI", &format!("{base}/page.html")]);
    let head = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(head.contains("content-type: text/html"), "{head}");
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .unwrap()
        .trim()
        .to_string();
    let o = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-H",
        &format!("If-None-Match: {etag}"),
        &format!("{base}/page.html"),
    ]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "304");
    let o = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-z",
        "Sat, 01 Jan 2050 00:00:00 GMT",
        &format!("{base}/page.html"),
    ]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "304",
        "If-Modified-Since in the future"
    );
}

/// `wget -r` mirrors the tree byte-identically through the listings, as
/// it mirrors the same tree from `python3 -m http.server`.
fn wget_mirrors_as_from_http_server(base: &str, www: &std::path::Path, dir: &std::path::Path) {
    let mirror = |url: &str, into: &std::path::Path| {
        let o = Command::new("wget")
            .args([
                "-q",
                "-r",
                "-np",
                "-nH",
                "-R",
                "index.html*",
                "-e",
                "robots=off",
                "-P",
            ])
            .arg(into)
            .arg(url)
            .output()
            .unwrap();
        assert!(
            o.status.success() || o.status.code() == Some(8),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        files_under(into)
    };
    let ours = mirror(&format!("{base}/docs/"), &dir.join("m1"));
    let py = python_http(www);
    let theirs = mirror(
        &format!("http://127.0.0.1:{}/docs/", py.port),
        &dir.join("m2"),
    );
    drop(py);
    let want: Vec<(String, Vec<u8>)> = files_under(&www.join("docs"))
        .into_iter()
        .map(|(p, b)| (format!("docs/{p}"), b))
        .collect();
    assert_eq!(ours, want, "wget -r from tcpwise serve --root");
    assert_eq!(theirs, want, "wget -r from python3 -m http.server");
}

/// Hostile paths, sent as they are (curl would clean them up): each one
/// refused, and nothing from outside the root in any answer.
fn hostile_paths_refused(base: &str) {
    let hostile = [
        "/../secret.txt",
        "/..",
        "/docs/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/%2e./secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "/docs/%2e%2e/%2e%2e/secret.txt",
        "/up/secret.txt",
        "/up/",
        "/up",
        "//etc/passwd",
        "/%2fetc%2fpasswd",
        "/./../secret.txt",
        "/docs/./../..//secret.txt",
        "/%00",
        "/hello.txt%00.html",
        "/%c0%ae%c0%ae/secret.txt",
        "/..%5c..%5csecret.txt",
        "/%252e%252e/secret.txt",
        "http://x/../secret.txt",
        "../secret.txt",
        "*",
    ];
    let addr = base.trim_start_matches("http://").to_string();
    for t in hostile {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "GET {t} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut resp = Vec::new();
        s.read_to_end(&mut resp).unwrap();
        let resp = String::from_utf8_lossy(&resp);
        let status: u16 = resp
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        assert!(matches!(status, 400 | 403 | 404), "{t}: {resp}");
        assert!(
            !resp.contains("outside the root") && !resp.contains("root:x:0"),
            "{t}: {resp}"
        );
    }
    eprintln!("serve --root: {} hostile paths refused", hostile.len());
}

#[test]
fn serve_binds_a_port_a_name_or_a_bracketed_v6_address() {
    for args in [
        &["serve", "-p", "0"][..],
        &["serve", "--bind", "0"],
        &["serve", "--bind", "localhost:0"],
        &["serve", "--bind", "[::1]:0"],
    ] {
        let (child, line) = spawn_announcing(args);
        let _p = Proc(child);
        assert!(line.contains("http://"), "{args:?}: {line}");
        let base = line.rsplit(' ').next().unwrap();
        // Reachable where it says it listens.
        let host = base.trim_start_matches("http://");
        let url = if host.starts_with("[::]") || host.starts_with("0.0.0.0") {
            format!(
                "http://127.0.0.1:{}/health",
                host.rsplit(':').next().unwrap()
            )
        } else {
            format!("{base}/health")
        };
        let o = tcpwise(&["get", "-s", &url]);
        assert_eq!(stdout(&o), "ok\n", "{args:?} {url}: {}", stderr(&o));
    }
    for (bad, needle) in [
        (&["serve", "--bind", "127.0.0.1"][..], "no port"),
        (
            &["serve", "--bind", "nonexistent.invalid:80"],
            "cannot resolve",
        ),
        (
            &["serve", "-p", "0", "--bind", "[::]:1"],
            "cannot be used with",
        ),
        (&["serve", "--tls-name", "x"], "need --tls"),
        (
            &["serve", "--io", "uring", "--gzip", "-p", "0"],
            "--io uring serves plain HTTP from the routes",
        ),
        (&["serve", "--io", "kqueue"], "invalid value 'kqueue'"),
        (
            &["serve", "--root", "/nonexistent-tcpwise"],
            "--root /nonexistent-tcpwise",
        ),
    ] {
        let o = tcpwise(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{bad:?}: {}", stderr(&o));
    }
}

#[test]
fn access_log_is_nginx_combined_with_the_request_time() {
    if !tool_ok("access_log", "curl") {
        return;
    }
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwise"))
        .args(["serve", "--bind", "127.0.0.1:0", "--access-log"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    err.read_line(&mut banner).unwrap();
    let _p = Proc(child);
    let base = banner.trim().rsplit(' ').next().unwrap().to_string();
    for (path, agent) in [
        ("/bytes/5", "agent \"x\""),
        ("/delay/20/bytes/3", "b"),
        ("/nope", "c"),
    ] {
        let o = Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-A",
                agent,
                "-e",
                "http://ref/",
                &format!("{base}{path}"),
            ])
            .output()
            .unwrap();
        assert!(o.status.success());
    }
    let lines: Vec<String> = (0..3)
        .map(|_| {
            let mut l = String::new();
            err.read_line(&mut l).unwrap();
            l.trim_end().to_string()
        })
        .collect();
    // 127.0.0.1 - - [23/Nov/2026:04:34:36 +0000] "GET /bytes/5 HTTP/1.1" 200 5 "http://ref/" "agent \x22x\x22" 0.000
    let want = [
        (
            "\"GET /bytes/5 HTTP/1.1\" 200 5 \"http://ref/\" \"agent \\x22x\\x22\" ",
            false,
        ),
        (
            "\"GET /delay/20/bytes/3 HTTP/1.1\" 200 3 \"http://ref/\" \"b\" ",
            true,
        ),
        ("\"GET /nope HTTP/1.1\" 404 ", false),
    ];
    for (l, (mid, slow)) in lines.iter().zip(want) {
        assert!(l.starts_with("127.0.0.1 - - ["), "{l}");
        let (time, rest) = l["127.0.0.1 - - [".len()..].split_once("] ").unwrap();
        assert_eq!(time.len(), "23/Nov/2026:04:34:36 +0000".len(), "{l}");
        assert!(
            time.ends_with(" +0000") && time.as_bytes()[2] == b'/',
            "{l}"
        );
        assert!(rest.starts_with(mid), "{l}");
        let secs: f64 = rest.rsplit(' ').next().unwrap().parse().unwrap();
        if slow {
            assert!(secs >= 0.019, "the 20 ms delay is in the request time: {l}");
        }
    }
}

#[test]
fn gzip_for_clients_that_accept_it_byte_exact_after_curl_decodes_it() {
    if !tool_ok("gzip", "curl") {
        return;
    }
    let dir = TempDir::new("gzip");
    let www = dir.0.join("www");
    file_tree(&www);
    let (_a, base) = serve_loopback(&["--gzip"]);
    let (_b, fbase) = serve_loopback(&["--gzip", "--root", www.to_str().unwrap()]);
    // curl --compressed asks for it and decodes it: the same bytes.
    let o = curl(&["--compressed", &format!("{base}/bytes/300000")]);
    assert_eq!(sha_stdout(&o), sha_of_pattern(300_000));
    let o = curl(&["--compressed", &format!("{fbase}/docs/blob.bin")]);
    assert_eq!(o.stdout, blob(300_000, 5));
    let o = curl(&["--compressed", &format!("{fbase}/docs/")]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("blob.bin"));
    // On the wire it is gzip, and smaller for repetitive data.
    let o = curl(&[
        "-D",
        "-",
        "-o",
        "/dev/null",
        "-H",
        "Accept-Encoding: gzip",
        "-w",
        "%{size_download}",
        &format!("{base}/bytes/300000"),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("content-encoding: gzip") && text.contains("vary: accept-encoding"),
        "{text}"
    );
    let size: u64 = text.rsplit('\n').next().unwrap().trim().parse().unwrap();
    assert!(
        size < 30_000,
        "300 kB of a 251-byte pattern compressed to {size}"
    );
    // Not asked (or q=0): identity, with its length.
    for h in ["Accept-Encoding: identity", "Accept-Encoding: gzip;q=0"] {
        let o = curl(&[
            "-D",
            "-",
            "-o",
            "/dev/null",
            "-H",
            h,
            &format!("{base}/bytes/1000"),
        ]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            !text.contains("content-encoding") && text.contains("content-length: 1000"),
            "{h}: {text}"
        );
    }
    // Ranges stay uncompressed.
    let o = curl(&["--compressed", "-r", "0-4", &format!("{fbase}/hello.txt")]);
    assert_eq!(o.stdout, b"hello");
}

#[test]
fn http2_both_ways_curl_and_nghttp_to_serve_and_get_to_nginx() {
    if !tool_ok("http2", "curl")
        || !tool_ok("http2", "nghttp")
        || !tool_ok("http2", "nginx")
        || !tool_ok("http2", "openssl")
    {
        return;
    }
    let t = TempDir::new("h2");
    let cert = t.0.join("serve.pem");
    let cert_s = cert.to_str().unwrap();
    let (_tls, tls_base) = serve_loopback(&["--tls", "--cert-out", cert_s]);
    let (_plain, plain_base) = serve_loopback(&[]);
    // curl: ALPN h2 over TLS and prior knowledge over plain TCP; it reports HTTP/2.
    for (args, base) in [
        (vec!["--http2", "--cacert", cert_s], &tls_base),
        (vec!["--http2-prior-knowledge"], &plain_base),
    ] {
        let url = format!("{base}/bytes/200000");
        let mut a = args.clone();
        a.extend([
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_version} %{http_code} %{size_download}",
            &url,
        ]);
        let o = curl(&a);
        assert_eq!(stdout(&o), "2 200 200000", "curl {a:?}: {}", stderr(&o));
        let h = curl(&[&args[..], &["-sS", "-I", &url]].concat());
        assert!(stdout(&h).starts_with("HTTP/2 200"), "{}", stdout(&h));
    }
    // The body over HTTP/2 is the pattern, byte for byte.
    let body = curl(&[
        "-sS",
        "--http2-prior-knowledge",
        &format!("{plain_base}/bytes/1000000"),
    ]);
    assert_eq!(sha_stdout(&body), sha_of_pattern(1_000_000));
    // nghttp (nghttp2's client) over both.
    for url in [
        format!("{tls_base}/bytes/50000"),
        format!("{plain_base}/health"),
    ] {
        let o = Command::new("nghttp")
            .args(["-nv"])
            .arg(&url)
            .output()
            .unwrap();
        let text = stdout(&o);
        assert!(
            o.status.success() && text.contains(":status: 200"),
            "nghttp {url}: {text}{}",
            stderr(&o)
        );
    }
    get_http2_from_nginx(&t.0);
}

/// `tcpwise get --http2` against nginx with http2 over TLS: h2, and one
/// connection carries every request to the origin (`-Z` too); `-v` shows
/// the exchange as curl does; `--http1.1` stays on HTTP/1.1.
fn get_http2_from_nginx(dir: &std::path::Path) {
    let ng = dir.join("nginx");
    std::fs::create_dir_all(ng.join("www")).unwrap();
    std::fs::write(ng.join("www/a.txt"), "nginx over h2\n").unwrap();
    let ok = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(ng.join("key.pem"))
        .arg("-out")
        .arg(ng.join("cert.pem"))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success());
    let port = free_port();
    let d = ng.display();
    let conf = format!(
        "daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         events {{}}\n\
         http {{ access_log off; client_body_temp_path {d};\n\
           server {{ listen 127.0.0.1:{port} ssl http2; root {d}/www;\n\
             ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem; }} }}\n"
    );
    let _nginx = nginx_with(&ng, &conf, port);
    let url = format!("https://127.0.0.1:{port}/a.txt");
    let o = tcpwise(&[
        "get",
        "--http2",
        "-k",
        "-w",
        "%{http_version} %{http_code} %{conn_id} %{conn_reused}\\n",
        &url,
        &url,
        &url,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "nginx over h2\n2 200 1 0\nnginx over h2\n2 200 1 1\nnginx over h2\n2 200 1 1\n"
    );
    // -v: the request and the response as curl shows them, on stderr.
    let o = tcpwise(&["get", "-v", "-k", "-o", "/dev/null", &url]);
    let e = stderr(&o);
    assert!(
        e.contains("> GET /a.txt HTTP/2")
            && e.contains("< HTTP/2 200")
            && e.contains("* Connected to 127.0.0.1"),
        "{e}"
    );
    // -Z: three at once still share the one connection.
    let o = tcpwise(&[
        "get",
        "-Z",
        "-k",
        "-o",
        "/dev/null",
        "-o",
        "/dev/null",
        "-o",
        "/dev/null",
        "-w",
        "%{conn_id}\\n",
        &url,
        &url,
        &url,
    ]);
    assert_eq!(stdout(&o), "1\n1\n1\n", "{}", stderr(&o));
    // --http1.1 stays on HTTP/1.1.
    let o = tcpwise(&[
        "get",
        "--http1.1",
        "-k",
        "-w",
        "%{http_version}\\n",
        "-o",
        "/dev/null",
        &url,
    ]);
    assert_eq!(stdout(&o), "1.1\n");
}

#[test]
fn progress_meter_on_a_terminal_as_curl_draws_it() {
    if !tool_ok("progress_meter", "script") {
        return;
    }
    let (_s, base) = serve_loopback(&[]);
    // `script` gives the command a terminal; the body goes to a file, so
    // the meter shows (curl's rule), once the transfer has run a second.
    let run = |url: &str| {
        let o = Command::new("script")
            .args([
                "-qec",
                &format!("{BIN} get -o /dev/null {url}"),
                "/dev/null",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let slow = run(&format!("{base}/delay/1200/bytes/300000"));
    assert!(
        slow.contains("% Total    % Received % Xferd  Average Speed")
            && slow.contains("100  292k  100  292k"),
        "{slow}"
    );
    // Under a second: no meter.
    let quick = run(&format!("{base}/bytes/1000"));
    assert!(!quick.contains("% Total"), "{quick}");
}

/// `serve --root` with `--access-log` on stderr: (server, base URL, log lines).
fn serve_logging(root: &std::path::Path) -> (Proc, String, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwise"))
        .args(["serve", "--bind", "127.0.0.1:0", "--access-log", "--root"])
        .arg(root)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    err.read_line(&mut banner).unwrap();
    let base = banner.trim().rsplit(' ').next().unwrap().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    (Proc(child), base, rx)
}

/// nginx's `$request_time` is meant to run to the last byte, and an
/// aborted download is logged with the bytes sent: a client rate-limited
/// through its receive window (`get --rcvbuf 4096 --limit-rate 2M`) and
/// the logged time agree within 10 ms, curl's never exceeds its own
/// total, and a download cut by `--max-time`
/// leaves a line with fewer bytes than the file.
#[test]
fn access_log_times_run_to_the_last_byte_and_aborts_are_logged() {
    if !tool_ok("access_log_time", "curl") {
        return;
    }
    let t = TempDir::new("log-time");
    std::fs::write(t.0.join("m.bin"), blob(1_000_000, 5)).unwrap();
    std::fs::write(t.0.join("big.bin"), blob(20_000_000, 6)).unwrap();
    let (_s, base, lines) = serve_logging(&t.0);
    let next = || {
        lines
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap()
    };
    for rate in ["200k", "500k", "2M"] {
        let o = Command::new("curl")
            .args([
                "-s",
                "--limit-rate",
                rate,
                "-o",
                "/dev/null",
                "-w",
                "%{time_total}",
            ])
            .arg(format!("{base}/m.bin"))
            .output()
            .unwrap();
        let total: f64 = stdout(&o).parse().unwrap();
        let l = next();
        let logged: f64 = l.rsplit(' ').next().unwrap().parse().unwrap();
        println!("curl --limit-rate {rate}: curl's total {total:.3} s, logged {logged:.3} s");
        assert!(l.contains("\" 200 1000000 "), "{l}");
        // The log runs to the client's acknowledgement of the last byte,
        // and, when its window shows bytes left unread, to its close:
        // never past its own total. What a server cannot see is a tail
        // unread in a wide autotuned buffer (curl 7.88 --limit-rate on
        // loopback: 606,784 bytes in Recv-Q under a 1.8 MB window, 1.921
        // s total, 0.005 logged; nginx logs 0.000 for the same).
        assert!(logged <= total + 0.010, "curl {total}, logged: {l}");
    }
    // A rate-limited client whose receive buffer is small (4 KiB pinned):
    // the acknowledgement of the last byte is the end, within 10 ms.
    let o = Command::new(env!("CARGO_BIN_EXE_tcpwise"))
        .args([
            "get",
            "-s",
            "--rcvbuf",
            "4096",
            "--limit-rate",
            "2M",
            "-o",
            "/dev/null",
        ])
        .args(["-w", "%{time_total}"])
        .arg(format!("{base}/m.bin"))
        .output()
        .unwrap();
    let total: f64 = stdout(&o).parse().unwrap();
    let l = next();
    let logged: f64 = l.rsplit(' ').next().unwrap().parse().unwrap();
    println!("get --rcvbuf 4096 --limit-rate 2M: total {total:.3} s, logged {logged:.3} s");
    assert!(total > 0.3, "the rate held: {total}");
    assert!((total - logged).abs() <= 0.010, "get {total}, logged: {l}");
    let o = Command::new("curl")
        .args([
            "-s",
            "--limit-rate",
            "100k",
            "--max-time",
            "0.5",
            "-o",
            "/dev/null",
        ])
        .arg(format!("{base}/big.bin"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(28));
    let l = next();
    let bytes: u64 = l
        .split("\" 200 ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    println!("aborted download logged: {l}");
    assert!(bytes > 0 && bytes < 20_000_000, "{l}");
}

/// Requests nginx answers 400 (a signed Content-Length, no Host in
/// HTTP/1.1, two Hosts) get 400 from `serve` too, on raw sockets, and
/// from nginx in the same run.
#[test]
fn serve_answers_400_where_nginx_does() {
    use std::io::{Read, Write};
    let t = TempDir::new("bad-400");
    std::fs::create_dir_all(t.0.join("www")).unwrap();
    let (_s, base, _lines) = serve_logging(&t.0.join("www"));
    let ours = base.trim_start_matches("http://").to_string();
    let mut targets = vec![("tcpwise serve", ours)];
    let _ng = tool_ok("serve_400_nginx", "nginx").then(|| {
        let port = free_port();
        let p = nginx(&t.0, port);
        targets.push(("nginx", format!("127.0.0.1:{port}")));
        p
    });
    let cases: [&[u8]; 5] = [
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc",
        b"GET / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\nabc",
    ];
    for (name, addr) in &targets {
        for c in cases {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
            s.write_all(c).unwrap();
            let mut got = Vec::new();
            let _ = s.read_to_end(&mut got);
            let head = String::from_utf8_lossy(&got);
            assert!(
                head.starts_with("HTTP/1.1 400"),
                "{name}: {:?} -> {:?}",
                String::from_utf8_lossy(c),
                head.lines().next()
            );
        }
    }
}

/// `get -T` streams the file: a 300 MB upload (echoed back) runs in a
/// few MB, where reading it whole took its size in memory. Peak RSS comes
/// from the kernel's accounting of the finished child (python's
/// `RUSAGE_CHILDREN`).
#[test]
fn upload_streams_with_bounded_memory() {
    if !tool_ok("upload_streams", "python3") {
        return;
    }
    let t = TempDir::new("upload-rss");
    let f = t.0.join("big.bin");
    std::fs::File::create(&f)
        .unwrap()
        .set_len(300_000_000)
        .unwrap();
    let (child, line) = spawn_announcing(&["serve", "--bind", "127.0.0.1:0", "--max-body", "1G"]);
    let _srv = Proc(child);
    let base = line.rsplit(' ').next().unwrap().to_string();
    let o = Command::new("python3")
        .args([
            "-c",
            "import resource, subprocess, sys\n\
             r = subprocess.run(sys.argv[1:], capture_output=True)\n\
             print(r.returncode, r.stdout.decode(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
            BIN,
            "get",
            "-s",
            "-T",
            f.to_str().unwrap(),
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}:%{size_upload}",
            &format!("{base}/echo"),
        ])
        .output()
        .unwrap();
    let out = stdout(&o);
    let v: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(v[..2], ["0", "200:300000000"], "{out} {}", stderr(&o));
    let kb: u64 = v[2].parse().unwrap();
    println!("get -T of 300 MB: peak RSS {:.1} MB", kb as f64 / 1024.0);
    assert!(kb < 50 * 1024, "peak RSS {kb} KB");
}

/// `-R` gives the file the server's Last-Modified; `--limit-rate` holds a
/// download to its rate (400 KB at 200K takes about 2 s, not 0).
#[test]
fn remote_time_and_limit_rate() {
    let t = TempDir::new("remote-time");
    let www = t.0.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("old.bin"), blob(400_000, 9)).unwrap();
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    std::fs::File::options()
        .write(true)
        .open(www.join("old.bin"))
        .unwrap()
        .set_modified(when)
        .unwrap();
    let (_s, base, _lines) = serve_logging(&www);
    let out = t.0.join("got.bin");
    let t0 = std::time::Instant::now();
    let o = tcpwise(&[
        "get",
        "-sS",
        "-R",
        "--limit-rate",
        "200K",
        "-o",
        out.to_str().unwrap(),
        &format!("{base}/old.bin"),
    ]);
    let took = t0.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&out).unwrap().modified().unwrap(), when);
    println!("400000 B at --limit-rate 200K: {took:.2} s");
    assert!(took > 1.5, "took {took:.2} s");
}

/// `--trace-ascii`: the request head, its body and the response in
/// curl's dump blocks (the format itself is checked byte for byte against
/// curl's in the library's unit test).
#[test]
fn trace_ascii_logs_both_ways_in_curls_blocks() {
    let (_srv, base) = serve_loopback(&[]);
    let t = TempDir::new("trace");
    let f = t.0.join("t.txt");
    let o = tcpwise(&[
        "get",
        "-s",
        "--trace-ascii",
        f.to_str().unwrap(),
        "-d",
        "a=1",
        &format!("{base}/echo"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&f).unwrap();
    // curl's info lines first, then its blocks.
    assert!(text.starts_with("== Info:   Trying 127.0.0.1:"), "{text}");
    assert!(text.contains("\n=> Send header, "), "{text}");
    assert!(text.contains("0000: POST /echo HTTP/1.1\n"), "{text}");
    assert!(
        text.contains("=> Send data, 3 bytes (0x3)\n0000: a=1\n"),
        "{text}"
    );
    assert!(
        text.contains("<= Recv header, 17 bytes (0x11)\n0000: HTTP/1.1 200 OK\n"),
        "{text}"
    );
    assert!(
        text.contains("<= Recv data, 3 bytes (0x3)\n0000: a=1\n"),
        "{text}"
    );
}

/// Against nginx, the same requests from curl: 64 ordinary small headers
/// (0.7 KB; nginx limits a head's size, not its line count) get the same
/// status from both, and `$remote_user` is Basic's user name in both
/// access logs (`-` without one).
#[test]
fn serve_takes_many_headers_and_logs_the_user_as_nginx_does() {
    if !tool_ok("serve_headers_user", "nginx") || !tool_ok("serve_headers_user", "curl") {
        return;
    }
    let dir = TempDir::new("headers-user");
    let www = dir.0.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("f.txt"), "hello\n").unwrap();
    let port = free_port();
    let d = dir.0.display();
    let conf = format!(
        "daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         events {{}}\n\
         http {{ log_format u '$remote_user $status'; access_log {d}/access.log u;\n\
           client_body_temp_path {d};\n\
           server {{ listen 127.0.0.1:{port}; root {d}/www; }} }}\n"
    );
    let _ng = nginx_with(&dir.0, &conf, port);
    let (_srv, base, log) = serve_logging(&www);
    let headers: Vec<String> = (0..64).map(|i| format!("X-Header-{i}: v{i}")).collect();
    let cases: [&[&str]; 3] = [&[], &["-u", "alice:secret"], &["-u", "b\"ob:x"]];
    let mut theirs = Vec::new();
    for extra in cases {
        let status = |url: String| {
            let mut c = Command::new("curl");
            c.args(["-s", "-o", "/dev/null", "-w", "%{http_code}"]);
            for h in &headers {
                c.args(["-H", h]);
            }
            let o = c.args(extra).arg(url).output().unwrap();
            String::from_utf8_lossy(&o.stdout).to_string()
        };
        let ng = status(format!("http://127.0.0.1:{port}/f.txt"));
        let ours = status(format!("{base}/f.txt"));
        assert_eq!(ours, ng, "status with {extra:?}");
        assert_eq!(ours, "200");
        let line = log
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("an access-log line");
        // `IP - USER [time] "..."`: the third word is $remote_user.
        theirs.push(line.split(' ').nth(2).unwrap_or("").to_string());
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let nginx_log = std::fs::read_to_string(dir.0.join("access.log")).unwrap();
    let nginx_users: Vec<String> = nginx_log
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
        .collect();
    assert_eq!(theirs, nginx_users, "serve's $remote_user vs nginx's");
    assert_eq!(theirs[1], "alice");
}

/// `get`'s connect clock starts the attempt at once: a timer due "now"
/// waited for tokio's next 1 ms tick, so every time_connect on loopback
/// was 1.2-1.4 ms (curl: 0.2 ms). The loose bound is the least of 5
/// (the figures beside curl's: scripts/get-clocks, docs/get.md).
#[test]
fn the_connect_clock_holds_no_timer_tick() {
    let (_s, base) = serve_loopback(&[]);
    let url = format!("{base}/bytes/1000");
    let least = (0..5)
        .map(|_| {
            let o = tcpwise(&[
                "get",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{time_namelookup} %{time_connect}",
                &url,
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            let t: Vec<f64> = stdout(&o).split(' ').map(|v| v.parse().unwrap()).collect();
            t[1] - t[0]
        })
        .fold(f64::INFINITY, f64::min);
    println!("least connect time on loopback of 5: {:.3} ms", least * 1e3);
    assert!(least < 0.0009, "{least}");
}

/// `time_starttransfer` is the first response byte read, as curl's is:
/// a server that sends its status line, waits 400 ms, then the rest of
/// the head. Timed at the parsed head (until 3 Dec) it was 0.4 s later
/// than curl's; both now read it before the wait.
#[test]
fn the_first_byte_clock_is_the_first_byte_not_the_parsed_head() {
    if !tool_ok("first_byte_clock", "curl") {
        return;
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        for _ in 0..2 {
            let (mut s, _) = l.accept().unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut b).unwrap();
                assert!(n > 0, "the client closed before its request");
                head.extend_from_slice(&b[..n]);
            }
            s.write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(400));
            s.write_all(b"Content-Length: 2\r\nConnection: close\r\n\r\nok")
                .unwrap();
        }
    });
    let w = "%{time_starttransfer} %{time_total}";
    let ours = tcpwise(&["get", "-s", "-o", "/dev/null", "-w", w, &url]);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let theirs = curl(&["-o", "/dev/null", "-w", w, &url]);
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    server.join().unwrap();
    let times = |o: &std::process::Output| -> Vec<f64> {
        stdout(o).split(' ').map(|v| v.parse().unwrap()).collect()
    };
    let (o, c) = (times(&ours), times(&theirs));
    println!("starttransfer, total (s): tcpwise {o:?}, curl {c:?}");
    for (who, t) in [("tcpwise", &o), ("curl", &c)] {
        assert!(
            t[0] < 0.2,
            "{who}: the first byte came before the 400 ms wait: {t:?}"
        );
        assert!(t[1] >= 0.4, "{who}: the head ended after it: {t:?}");
    }
}
