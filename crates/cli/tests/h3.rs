//! HTTP/3: interoperability both ways with an independent implementation
//! (aioquic 1.7.2's example client and server, from PyPI; `scripts/test`
//! installs them), and `get --http3` against a path that drops UDP.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The aioquic examples (`http3_server.py`, `http3_client.py`), where
/// `scripts/test` unpacks them, when the package and the demo app's
/// modules import.
fn aioquic(test: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/peers/aioquic-1.7.2/examples")
        .canonicalize()
        .ok();
    let imports = Command::new("python3")
        .args(["-c", "import aioquic, starlette, wsproto, jinja2"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let ok = imports
        && dir
            .as_ref()
            .is_some_and(|d| d.join("http3_server.py").exists());
    peer_ok(
        test,
        "aioquic 1.7.2 with its examples in target/peers (scripts/test installs them)",
        ok,
    )
    .then(|| dir.unwrap())
}

/// A certificate and key for 127.0.0.1 (an end-entity one: rustls
/// refuses a CA certificate as a server's).
fn cert(dir: &Path) -> (PathBuf, PathBuf) {
    let (c, k) = (dir.join("cert.pem"), dir.join("key.pem"));
    let ok = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(&k)
        .arg("-out")
        .arg(&c)
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "openssl could not make a certificate");
    (c, k)
}

/// Waits (at most 10 s) until something listens on UDP `port`.
fn wait_udp(port: u16) {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        let o = Command::new("ss")
            .args(["-Hlun", &format!("sport = :{port}")])
            .output()
            .unwrap();
        if !o.stdout.is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on UDP port {port}");
}

const SIZES: [(&str, usize); 3] = [("one", 1), ("mb", 1_000_000), ("hundred", 100_000_000)];

/// `tcpwise get --http3-only` from aioquic's `http3_server.py` (its demo
/// app serves STATIC_ROOT's files): every size byte-exact.
fn get_from_aioquic(ex: &Path, dir: &Path, root: &Path, (c, k): (&Path, &Path)) {
    let port = free_port();
    let _server = Proc(
        Command::new("python3")
            .arg("http3_server.py")
            .arg("--certificate")
            .arg(c)
            .arg("--private-key")
            .arg(k)
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "demo:app",
            ])
            .current_dir(ex)
            .env("STATIC_ROOT", root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_udp(port);
    for (name, n) in SIZES {
        let out = dir.join(format!("got-{name}"));
        let o = tcpwise(&[
            "get",
            "--http3-only",
            "--cacert",
            c.to_str().unwrap(),
            &format!("https://127.0.0.1:{port}/{name}"),
            "-o",
            out.to_str().unwrap(),
            "-w",
            "%{http_version} %{http_code} %{size_download}",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_eq!(stdout(&o), format!("3 200 {n}"), "{name}");
        assert_eq!(sha256_of(&out), sha256_of(&root.join(name)), "{name}");
        std::fs::remove_file(&out).unwrap();
    }
}

#[test]
fn aioquic_interop_both_ways_byte_exact_with_ranges() {
    let Some(ex) = aioquic("aioquic_interop") else {
        return;
    };
    let d = TempDir::new("h3");
    let root = d.0.join("root");
    std::fs::create_dir(&root).unwrap();
    for (i, (name, n)) in SIZES.iter().enumerate() {
        std::fs::write(root.join(name), blob(*n, 7 + i as u64)).unwrap();
    }
    let (c, k) = cert(&d.0);

    get_from_aioquic(&ex, &d.0, &root, (&c, &k));

    // 2. aioquic's http3_client.py from tcpwise serve --http3 --root.
    let (_tw, base) = serve_loopback(&[
        "--tls",
        "--http3",
        "--root",
        root.to_str().unwrap(),
        "--cert-out",
        d.0.join("tw.pem").to_str().unwrap(),
    ]);
    let twport: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    wait_udp(twport);
    let got = d.0.join("aioquic-out");
    std::fs::create_dir(&got).unwrap();
    let urls: Vec<String> = SIZES
        .iter()
        .map(|(name, _)| format!("https://127.0.0.1:{twport}/{name}"))
        .collect();
    let o = Command::new("python3")
        .arg("http3_client.py")
        .arg("--ca-certs")
        .arg(d.0.join("tw.pem"))
        .arg("--output-dir")
        .arg(&got)
        .args(&urls)
        .current_dir(&ex)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for (name, _) in SIZES {
        assert_eq!(
            sha256_of(&got.join(name)),
            sha256_of(&root.join(name)),
            "aioquic's client, {name}: {}",
            stderr(&o)
        );
    }
    // Ranges, through the example client's HttpClient (its command line
    // sends no headers): one range, and two as multipart/byteranges.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/aioquic_range.py");
    let mb = std::fs::read(root.join("mb")).unwrap();
    let range = |r: &str| {
        let out = d.0.join("range");
        let o = Command::new("python3")
            .arg(&script)
            .arg(&ex)
            .arg(d.0.join("tw.pem"))
            .arg(format!("https://127.0.0.1:{twport}/mb"))
            .arg(r)
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{r}: {}", stderr(&o));
        (stdout(&o).trim().to_string(), std::fs::read(&out).unwrap())
    };
    let (status, body) = range("bytes=1000-1999");
    assert_eq!(status, "206 bytes 1000-1999/1000000");
    assert_eq!(body, &mb[1000..2000]);
    let (status, body) = range("bytes=0-9,999990-");
    assert!(status.starts_with("206"), "{status}");
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.contains("content-range: bytes 0-9/1000000")
            && text.contains("content-range: bytes 999990-999999/1000000"),
        "{text}"
    );
    let find = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    assert!(find(&mb[..10]) && find(&mb[999_990..]));
}

/// `emu pair` whose client side drops every UDP packet it sends (an htb
/// class with a zero-byte FIFO: this kernel has no gact to drop with).
const BLOCK_UDP: &str = "tc qdisc add dev tw0 root handle 1: htb default 1 && \
    tc class add dev tw0 parent 1: classid 1:99 htb rate 1gbit && \
    tc qdisc add dev tw0 parent 1:99 bfifo limit 0 && \
    tc filter add dev tw0 parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff classid 1:99 2>/dev/null";

#[test]
fn udp_blocked_http3_falls_back_to_tcp_and_http3_only_fails_in_one_line() {
    if !netns_ok("udp_blocked_http3") || !tool_ok("udp_blocked_http3", "tc") {
        return;
    }
    let u = "https://$TCPWISE_PEER:5301/bytes/1000";
    let script = format!(
        "{BLOCK_UDP} && \
         {BIN} get --http3 -k -v -o /dev/null {u} -w 'version=%{{http_version}} total=%{{time_total}}\\n' 2>&1 | grep -v '^[<>]'; \
         {BIN} get --http3-only -k --connect-timeout 2 -o /dev/null {u}; echo only=$?; \
         tc -s qdisc show dev tw0 | grep -A1 bfifo"
    );
    let o = testbed_serving(
        &format!("exec {BIN} serve --tls --http3 --bind 198.18.0.2:5301"),
        &["--rtt", "20ms"],
        &script,
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}{err}");
    // --http3: TCP joined after the Happy Eyeballs delay (250 ms) and won;
    // -v says so; the answer is HTTP/2 by ALPN.
    assert!(
        out.contains("HTTP/3: no QUIC handshake within 250 ms, TCP connected first; using TCP"),
        "{out}"
    );
    let line = out.lines().find(|l| l.starts_with("version=")).unwrap();
    assert!(line.starts_with("version=2 "), "{line}");
    let total: f64 = line.split("total=").nth(1).unwrap().parse().unwrap();
    // The delay, then TCP's and TLS's round trips and the request's: 3 x 20 ms.
    assert!((0.31..2.0).contains(&total), "{line}");
    // --http3-only: one line and curl's 28 (the connect timeout).
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("tcpwise: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("no QUIC handshake within 2000 ms"),
        "{err}"
    );
    assert!(out.contains("only=28"), "{out}");
    // The UDP really was dropped on the link, not refused.
    let dropped = out
        .split("dropped ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(dropped > 0, "{out}");
}

#[test]
fn bench_http3_loads_serve_http3_and_refuses_plain_http() {
    let d = TempDir::new("h3bench");
    let pem = d.0.join("c.pem");
    let (_tw, base) = serve_loopback(&["--tls", "--http3", "--cert-out", pem.to_str().unwrap()]);
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    wait_udp(port);
    let o = tcpwise(&[
        "bench",
        "--http3",
        "-m",
        "4",
        "-c",
        "2",
        "-n",
        "400",
        "--cacert",
        pem.to_str().unwrap(),
        "--json",
        &format!("{base}/bytes/100"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let s = &v["summary"];
    assert_eq!(s["protocol"], "HTTP/3", "{s}");
    assert_eq!(
        (s["requests"].as_u64(), s["errors"].as_u64()),
        (Some(400), Some(0)),
        "{s}"
    );
    assert_eq!(s["streams"], 4);
    let o = tcpwise(&["bench", "--http3", "-n", "1", "http://127.0.0.1:1/"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--http3 needs an https:// URL"),
        "{}",
        stderr(&o)
    );
}

/// HTTP/3 under HTTP/1.1's connection limits: a QUIC connection that asks
/// nothing is closed at `--header-timeout`, one idle after its request at
/// `--idle-timeout`, each within 0.5 s (QUIC's own idle timeout is the
/// client's, 60 s here, and would have held both).
#[test]
fn http3_connections_obey_the_header_and_idle_timeouts() {
    let has = Command::new("python3")
        .args(["-c", "import aioquic"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !peer_ok(
        "http3_timeouts",
        "the aioquic package (scripts/test installs it)",
        has,
    ) {
        return;
    }
    let d = TempDir::new("h3-idle");
    let pem = d.0.join("tw.pem");
    let (_tw, base) = serve_loopback(&[
        "--tls",
        "--http3",
        "--header-timeout",
        "2s",
        "--idle-timeout",
        "3s",
        "--cert-out",
        pem.to_str().unwrap(),
    ]);
    let port = base.rsplit(':').next().unwrap().to_string();
    wait_udp(port.parse().unwrap());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/aioquic_idle.py");
    for (mode, limit) in [("silent", 2.0), ("after-one", 3.0)] {
        let o = Command::new("python3")
            .arg(&script)
            .arg(&pem)
            .args(["127.0.0.1", &port, mode, "10"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        let after = v["closed_after"].as_f64();
        println!(
            "http3 {mode}: closed after {after:?} s (limit {limit} s): {}",
            v["reason"]
        );
        let after = after.unwrap_or_else(|| panic!("{mode}: still open after 10 s"));
        assert!(after <= limit + 0.5, "{mode}: {after} s");
    }
}
