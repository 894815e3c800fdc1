//! `tcpwise bench` end to end against `tcpwise serve` and python's
//! http.server: counts that add up, every framing, TLS, an open loop that
//! shows a stalled server in its percentiles, and bad input that gets one
//! line and the documented exit code.

use crate::common::*;
use std::process::Child;
use std::time::Duration;

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        tcpwise_sys::kill(self.0.id() as i32, libc::SIGCONT);
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `tcpwise serve ARGS` on an ephemeral loopback port: (server, base URL).
fn serve(extra: &[&str]) -> (Killed, String) {
    let (child, line) = spawn_announcing(
        &[
            &["serve", "--bind", "127.0.0.1:0", "--threads", "1"][..],
            extra,
        ]
        .concat(),
    );
    let url = line.rsplit(' ').next().unwrap().to_string();
    (Killed(child), url)
}

fn bench(args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let o = tcpwise(&[&["bench"][..], args, &["--json"]].concat());
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code(), v, stderr(&o))
}

#[test]
fn closed_loop_counts_add_up_for_every_framing() {
    let (_srv, base) = serve(&[]);
    for (path, method) in [
        ("/bytes/100", "GET"),
        ("/bytes/70000?chunked=1", "GET"),
        ("/bytes/5000", "HEAD"),
        ("/echo", "POST"),
    ] {
        let url = format!("{base}{path}");
        let mut args = vec![
            url.as_str(),
            "-c",
            "8",
            "-t",
            "2",
            "-d",
            "400ms",
            "-X",
            method,
        ];
        if method == "POST" {
            args.extend(["--data", "hello"]);
        }
        let (code, v, err) = bench(&args);
        assert_eq!(code, Some(0), "{path}: {err}");
        let s = &v["summary"];
        let n = s["requests"].as_u64().unwrap();
        assert!(n > 50, "{path}: {v}");
        assert_eq!(s["errors"], 0, "{path}: {v}");
        assert_eq!(s["non_2xx"], 0, "{path}: {v}");
        assert_eq!(s["status"]["200"].as_u64(), Some(n), "{path}: {v}");
        for k in ["requests_per_s", "p50_ms", "p99_ms", "p999_ms", "max_ms"] {
            assert!(s[k].as_f64().unwrap() > 0.0, "{path}: {k} in {v}");
        }
        assert!(s["p50_ms"].as_f64() <= s["p99_ms"].as_f64());
        assert_eq!(s["mode"], "closed");
        if path.starts_with("/bytes/70000") {
            // Chunked bodies are framed, not cut: every byte was read.
            assert!(s["bytes_read"].as_u64().unwrap() >= n * 70000, "{v}");
        }
    }
}

#[test]
fn a_request_budget_is_exact_and_non_2xx_is_counted() {
    let (_srv, base) = serve(&[]);
    let (code, v, err) = bench(&[&format!("{base}/bytes/10"), "-c", "7", "-n", "100"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["summary"]["requests"], 100, "{v}");
    // Every response a 404: the figures still print (one JSON document,
    // the summary and the error), and the run fails saying why.
    let (code, v, err) = bench(&[&format!("{base}/nope"), "-c", "2", "-n", "10"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(v["summary"]["non_2xx"], 10, "{v}");
    assert_eq!(v["summary"]["error_responses"], 10, "{v}");
    assert_eq!(v["summary"]["status"]["404"], 10, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("10 of 10 responses were 4xx or 5xx (statuses 404: 10)")),
        "{v}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // In text, wrk's own line is there too.
    let o = tcpwise(&["bench", &format!("{base}/nope"), "-c", "2", "-n", "10"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("\n  Non-2xx or 3xx responses: 10"),
        "{}",
        stdout(&o)
    );
}

/// A loopback server that answers every request head with an empty 200
/// and keeps the first head it read, for the same words through wrk and
/// through `tcpwise bench`.
fn first_request(run: impl FnOnce(&str)) -> String {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/p?q=1", l.local_addr().unwrap());
    let first = std::sync::Mutex::new(None::<String>);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            l.set_nonblocking(true).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok((mut c, _)) = l.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                c.set_nonblocking(false).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while let Ok(n @ 1..) = c.read(&mut b) {
                    buf.extend_from_slice(&b[..n]);
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head: Vec<u8> = buf.drain(..end + 4).collect();
                        first
                            .lock()
                            .unwrap()
                            .get_or_insert_with(|| String::from_utf8_lossy(&head).into_owned());
                        let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                    }
                }
            }
        });
        run(&url);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    first.into_inner().unwrap().expect("a request came")
}

/// A request head's lines, sorted (wrk writes its headers from a Lua
/// table, in no fixed order).
fn lines_of(head: &str) -> Vec<String> {
    let mut v: Vec<String> = head
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    v.sort();
    v
}

#[test]
fn requests_are_wrks_host_replaced_and_no_user_agent_of_ours() {
    if !tool_ok(
        "requests_are_wrks_host_replaced_and_no_user_agent_of_ours",
        "wrk",
    ) {
        return;
    }
    for words in [
        vec![],
        vec!["-H", "Host: example.test"],
        vec!["-H", "User-Agent: ua/1", "-H", "X-A: 1"],
    ] {
        let common = ["-t", "1", "-c", "1", "-d", "1"];
        let theirs = first_request(|url| {
            let o = std::process::Command::new("wrk")
                .args(common)
                .args(&words)
                .arg(url)
                .output()
                .unwrap();
            assert!(o.status.success(), "wrk {words:?}: {}", stderr(&o));
        });
        let ours = first_request(|url| {
            let o = tcpwise(&[&["bench"][..], &common, &words, &[url]].concat());
            assert!(o.status.success(), "tcpwise {words:?}: {}", stderr(&o));
        });
        // The port differs from server to server: masked in both.
        let mask = |h: String| {
            let port = h.split("127.0.0.1:").nth(1).map(|r| {
                r.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            });
            match port {
                Some(p) if !p.is_empty() => h.replace(&format!("127.0.0.1:{p}"), "127.0.0.1:PORT"),
                _ => h,
            }
        };
        assert_eq!(lines_of(&mask(ours)), lines_of(&mask(theirs)), "{words:?}");
    }
}

#[test]
fn a_host_header_against_nginx_gets_200s_as_with_wrk() {
    if !tool_ok("a_host_header_against_nginx_gets_200s_as_with_wrk", "nginx") {
        return;
    }
    let dir = TempDir::new("bench-host");
    let port = free_port();
    let d = dir.0.display();
    std::fs::create_dir_all(dir.0.join("www")).unwrap();
    std::fs::write(dir.0.join("www/index.html"), "hello").unwrap();
    let conf = format!(
        "daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         events {{}}\n\
         http {{ access_log off; client_body_temp_path {d};\n\
           server {{ listen 127.0.0.1:{port}; root {d}/www; }} }}\n"
    );
    let _nginx = nginx_with(&dir.0, &conf, port);
    let url = format!("http://127.0.0.1:{port}/");
    let (code, v, err) = bench(&[&url, "-H", "Host: example.test", "-n", "200"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["summary"]["status"]["200"], 200, "{v}");
    // Two Host headers would be nginx's 400 to every request, and the
    // run's answer an error.
    let (code, v, _) = bench(&[&url, "-H", "host: example.test", "-n", "50"]);
    assert_eq!(
        (code, &v["summary"]["status"]["200"]),
        (Some(0), &50.into()),
        "{v}"
    );
}

#[test]
fn defaults_and_refusals_are_wrks() {
    let o = tcpwise(&[
        "bench",
        "-t",
        "2",
        "-c",
        "1",
        "-n",
        "1",
        "http://127.0.0.1:1/",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("-c must be at least -t"),
        "{}",
        stderr(&o)
    );
    let help = stdout(&tcpwise(&["bench", "--help"]));
    for default in ["[default: 10]", "[default: 2]", "[default: 2s]"] {
        assert!(help.contains(default), "{default} in {help}");
    }
}

#[test]
fn servers_that_close_after_each_response_are_reconnected() {
    let dir = TempDir::new("bench-py");
    std::fs::write(dir.0.join("f.txt"), vec![b'a'; 3000]).unwrap();
    let py = python_http(&dir.0);
    let url = format!("http://127.0.0.1:{}/f.txt", py.port);
    let (code, v, err) = bench(&[&url, "-c", "2", "-n", "40"]);
    assert_eq!(code, Some(0), "{err}");
    let s = &v["summary"];
    assert_eq!(s["requests"], 40, "{v}");
    assert_eq!(s["errors"], 0, "{v}");
    assert!(
        s["connects"].as_u64().unwrap() >= 39,
        "one connection per response: {v}"
    );
}

#[test]
fn https_needs_trust_or_insecure() {
    let dir = TempDir::new("bench-tls");
    let cert = dir.0.join("cert.pem");
    let (_srv, base) = serve(&["--tls", "--cert-out", cert.to_str().unwrap()]);
    let url = format!("{base}/bytes/100");
    let (code, _, err) = bench(&[&url, "-c", "2", "-n", "10"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("certificate"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    for extra in [vec!["-k"], vec!["--cacert", cert.to_str().unwrap()]] {
        let (code, v, err) = bench(&[&[url.as_str(), "-c", "2", "-n", "20"][..], &extra].concat());
        assert_eq!(code, Some(0), "{extra:?}: {err}");
        assert_eq!(v["summary"]["requests"], 20);
    }
}

#[test]
fn the_open_loop_shows_a_stalled_server_in_its_percentiles() {
    let (srv, base) = serve(&[]);
    let pid = srv.0.id() as i32;
    let url = format!("{base}/bytes/100");
    let child = std::process::Command::new(BIN)
        .args([
            "bench", &url, "-c", "16", "-t", "1", "--rate", "400", "-d", "3s", "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    tcpwise_sys::kill(pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(800));
    tcpwise_sys::kill(pid, libc::SIGCONT);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &v["summary"];
    assert_eq!(s["mode"], "open");
    // 0.8 s of 3 s stalled: about 27 % of requests were due during it, so
    // the p99 is most of the stall (wrk2), not a few ms (wrk).
    assert!(s["p99_ms"].as_f64().unwrap() >= 400.0, "{v}");
    assert!(s["max_ms"].as_f64().unwrap() >= 700.0, "{v}");
    // Requests due during the stall go out as soon as it ends: the rate holds.
    let rate = s["achieved_rate"].as_f64().unwrap();
    assert!((rate - 400.0).abs() / 400.0 < 0.05, "{v}");
    assert_eq!(s["errors"], 0, "{v}");
}

#[test]
fn thousands_of_connections_are_served() {
    let (_srv, base) = serve(&[]);
    let (code, v, err) = bench(&[&format!("{base}/bytes/10"), "-c", "3000", "-d", "2s"]);
    assert_eq!(code, Some(0), "{err}");
    let s = &v["summary"];
    assert_eq!(s["errors"], 0, "{v}");
    assert!(s["connects"].as_u64().unwrap() >= 3000, "{v}");
    assert_eq!(s["connections_served"], 3000, "{v}");
    assert!(s["requests"].as_u64().unwrap() >= 3000, "{v}");
}

#[test]
fn bad_input_is_one_line_and_the_right_exit_code() {
    // A port nothing listens on.
    let refused = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let refused_url = format!("http://127.0.0.1:{refused}/");
    for (args, code, needle) in [
        (vec!["http://[::1"], 2, "is not a valid URL"),
        (vec!["ftp://x/"], 2, "only http:// and https://"),
        (
            vec!["http://127.0.0.1:1/", "-c", "0"],
            2,
            "-c must be from 1",
        ),
        (
            vec!["http://127.0.0.1:1/", "--rate", "0"],
            2,
            "--rate must be",
        ),
        (
            vec!["http://127.0.0.1:1/", "-n", "0"],
            2,
            "-n must be at least 1",
        ),
        (
            vec!["http://127.0.0.1:1/", "-d", "1s", "-n", "5"],
            2,
            "cannot be used with",
        ),
        (
            vec![refused_url.as_str(), "-d", "300ms"],
            1,
            "Connection refused",
        ),
    ] {
        let o = tcpwise(&[&["bench"][..], &args].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.contains("error")).count(),
            1,
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// wrk prints its report on Ctrl-C; so does `bench`, for SIGINT and
/// SIGTERM, text and `--json`, with the time until the signal. Bare
/// seconds (`-d 30`, wrk's spelling) and `--latency` are accepted.
#[test]
fn a_signal_ends_the_run_with_the_report_so_far() {
    let (_srv, base) = serve(&[]);
    let url = format!("{base}/bytes/10");
    for (sig, json) in [(libc::SIGINT, false), (libc::SIGTERM, true)] {
        let mut args = vec!["bench", "-d", "30", "-c", "2", "-t", "1", "--latency", &url];
        if json {
            args.push("--json");
        }
        let child = std::process::Command::new(BIN)
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1200));
        tcpwise_sys::kill(child.id() as i32, sig);
        let t0 = std::time::Instant::now();
        let o = child.wait_with_output().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5), "slow to stop");
        assert_eq!(o.status.code(), Some(0), "signal {sig}: {}", stderr(&o));
        let out = stdout(&o);
        let (requests, secs) = if json {
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let s = &v["summary"];
            assert_eq!(s["interrupted"], true);
            (
                s["requests"].as_u64().unwrap(),
                s["duration_s"].as_f64().unwrap(),
            )
        } else {
            assert!(out.contains("(interrupted"), "{out}");
            let n = out.lines().nth(1).unwrap().split(' ').next().unwrap();
            let d = out.lines().next().unwrap().split(", ").nth(2).unwrap();
            let d = d.split(' ').next().unwrap();
            (n.parse().unwrap(), d.parse().unwrap())
        };
        assert!(requests > 0, "{out}");
        assert!((0.8..5.0).contains(&secs), "{secs} s: {out}");
    }
}

/// HTTP/2 load as h2load makes it: `-m` streams per connection, h2c with
/// prior knowledge and ALPN h2 over TLS; an exact `-n` budget, statuses
/// and bytes counted, a server without h2 is an error (no silent
/// HTTP/1.1), and -m without --http2 is refused in one line.
#[test]
fn http2_load_with_streams_per_connection() {
    let (_srv, base) = serve(&[]);
    let (code, v, err) = bench(&[
        &format!("{base}/bytes/100"),
        "--http2",
        "-m",
        "10",
        "-c",
        "3",
        "-n",
        "500",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let s = &v["summary"];
    assert_eq!(
        (s["requests"].as_u64(), s["errors"].as_u64()),
        (Some(500), Some(0)),
        "{v}"
    );
    assert_eq!(s["protocol"], "HTTP/2", "{v}");
    assert_eq!(s["streams"], 10, "{v}");
    assert_eq!(s["bytes_read"], 50_000, "bodies only: {v}");
    assert_eq!(s["connects"], 3, "{v}");
    let (code, v, _) = bench(&[
        &format!("{base}/nope"),
        "--http2",
        "-m",
        "4",
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "8",
    ]);
    // Every response an error page: counted, and the run fails.
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["summary"]["status"]["404"], 8, "{v}");
    // Over TLS, by ALPN.
    let dir = TempDir::new("bench-h2-tls");
    let cert = dir.0.join("cert.pem");
    let (_tls, tls_base) = serve(&["--tls", "--cert-out", cert.to_str().unwrap()]);
    let (code, v, err) = bench(&[
        &format!("{tls_base}/bytes/10"),
        "--http2",
        "-m",
        "5",
        "-c",
        "2",
        "-n",
        "100",
        "--cacert",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["summary"]["requests"], 100, "{v}");
    // python's http.server speaks HTTP/1.x only: the h2 handshake fails.
    let py_dir = TempDir::new("bench-h2-py");
    let py = python_http(&py_dir.0);
    let (code, _, err) = bench(&[
        &format!("http://127.0.0.1:{}/", py.port),
        "--http2",
        "-c",
        "1",
        "-t",
        "1",
        "-d",
        "300ms",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("HTTP/2"), "{err}");
    let (code, _, err) = bench(&[&format!("{base}/"), "-m", "4", "-n", "4"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--http2"), "{err}");
}

/// Several URLs, as h2load takes them: every connection takes them in
/// turn (HTTP/1.1 and HTTP/2 alike); another origin is refused.
#[test]
fn several_urls_are_taken_in_turn() {
    let (_srv, base) = serve(&[]);
    let (a, b) = (format!("{base}/bytes/10"), format!("{base}/bytes/30"));
    for h2 in [false, true] {
        let mut args = vec![a.as_str(), b.as_str(), "-c", "2", "-n", "100"];
        if h2 {
            args.extend(["--http2", "-m", "3"]);
        }
        let (code, v, err) = bench(&args);
        assert_eq!(code, Some(0), "{err}");
        // 50 of each: 50 * 10 + 50 * 30 body bytes (plus heads for HTTP/1.1).
        let read = v["summary"]["bytes_read"].as_u64().unwrap();
        if h2 {
            assert_eq!(read, 2000, "{v}");
        } else {
            assert!(read > 2000, "{v}");
        }
        assert_eq!(v["summary"]["requests"], 100, "{v}");
    }
    let (code, _, err) = bench(&[&a, "http://127.0.0.1:1/", "-n", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("scheme, host and port"), "{err}");
}

/// `--latency` prints wrk's "Latency Distribution" table: against the
/// same origin, wrk's block and ours have the same lines (50, 75, 90,
/// 99 %), each the same width with a time in wrk's units.
#[test]
fn latency_prints_wrks_distribution_table() {
    if !tool_ok("bench_latency_table", "wrk") {
        return;
    }
    let (_srv, base) = serve(&[]);
    let url = format!("{base}/bytes/10");
    let block = |out: &str| -> Vec<String> {
        out.lines()
            .skip_while(|l| *l != "  Latency Distribution")
            .take(5)
            .map(String::from)
            .collect()
    };
    // The same words through both: wrk's -t -c -d -H --timeout --latency.
    let words = [
        "-t",
        "1",
        "-c",
        "2",
        "-d",
        "1",
        "-H",
        "X-A: 1",
        "--timeout",
        "2s",
        "--latency",
    ];
    let wrk = std::process::Command::new("wrk")
        .args(words)
        .arg(&url)
        .output()
        .unwrap();
    let ours = tcpwise(&[&["bench"][..], &words[..], &[url.as_str()]].concat());
    assert!(ours.status.success(), "{}", stderr(&ours));
    let (theirs, ours) = (block(&stdout(&wrk)), block(&stdout(&ours)));
    assert_eq!(theirs.len(), 5, "wrk: {theirs:?}");
    assert_eq!(ours.len(), 5, "tcpwise: {ours:?}");
    let shape = |l: &str| -> (String, usize, bool) {
        let pct = l.split('%').next().unwrap_or("").to_string();
        let time = l.split('%').nth(1).unwrap_or("").trim();
        let unit = time.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let number = &time[..time.len() - unit.len()];
        let two_decimals = number.split('.').nth(1).is_some_and(|d| d.len() == 2);
        (
            pct,
            l.len(),
            two_decimals && ["us", "ms", "s"].contains(&unit),
        )
    };
    for (t, o) in theirs.iter().zip(&ours).skip(1) {
        assert_eq!(shape(t), shape(o), "wrk {t:?} vs tcpwise {o:?}");
    }
}
