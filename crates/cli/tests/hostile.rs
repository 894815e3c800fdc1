//! `tcpwise get` against servers that misbehave: silent, trickling one byte
//! a second, an endless header, an endless chunked body, closing a kept-alive
//! connection just as it is reused, untrusted TLS, and a path that drops
//! every SYN. Each ends with curl's exit code and one error line, in time,
//! without a panic. Elapsed times are printed (`-- --nocapture`); the
//! bounds asserted are loose correctness bounds, not speed targets.

use crate::common::*;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hostile_server.py");

struct Hostile(Child);
impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn hostile(mode: &str, log: Option<&std::path::Path>) -> (Hostile, String) {
    let port = free_port().to_string();
    let mut args = vec![SERVER, mode, &port];
    let log = log.map(|l| l.display().to_string());
    if let Some(l) = &log {
        args.push(l);
    }
    let mut c = Command::new("python3")
        .args(&args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Hostile(c), format!("http://127.0.0.1:{port}"))
}

/// Runs `tcpwise get ARGS`: (exit code, stderr, seconds).
fn get(args: &[&str]) -> (Option<i32>, String, f64) {
    let t0 = Instant::now();
    let o = tcpwise(&[&["get"][..], args].concat());
    (o.status.code(), stderr(&o), t0.elapsed().as_secs_f64())
}

fn one_error_line(e: &str) -> bool {
    e.lines().count() == 1 && e.starts_with("tcpwise: error:")
}

#[test]
fn hostile_servers_end_with_curls_exit_codes_in_time() {
    if !tool_ok("hostile", "python3") {
        return;
    }
    let dir = TempDir::new("hostile");
    let out = dir.0.join("out").display().to_string();
    for (mode, args, code, limit) in [
        ("silent", vec!["-m", "1"], 28, 3.0),
        ("trickle", vec!["-m", "2"], 28, 4.0),
        ("endless-header", vec!["-m", "20"], 8, 10.0),
        // 1xx heads count against 300 KiB (curl 8.3's limit; 7.88 read
        // them until -m): 56, long before the 20 s.
        ("endless-1xx", vec!["-m", "20"], 56, 10.0),
        // Control frames for ever over h2c, never a response: nghttp2's
        // flood limit of 1,000, and curl 7.88's 56 for it ("Flooding was
        // detected"), long before the 20 s.
        (
            "h2-ping-flood",
            vec!["-m", "20", "--http2-prior-knowledge"],
            56,
            10.0,
        ),
        (
            "h2-settings-flood",
            vec!["-m", "20", "--http2-prior-knowledge"],
            56,
            10.0,
        ),
        (
            "endless-chunked",
            vec!["-m", "20", "--max-filesize", "5M", "-o", &out],
            63,
            10.0,
        ),
    ] {
        let (_s, base) = hostile(mode, None);
        let url = format!("{base}/x");
        let mut a = args.clone();
        a.push(&url);
        let (c, e, secs) = get(&a);
        eprintln!(
            "hostile: {mode} {args:?}: exit {c:?} in {secs:.3} s: {}",
            e.trim()
        );
        assert_eq!(c, Some(code), "{mode}: {e}");
        assert!(one_error_line(&e), "{mode}: {e}");
        assert!(secs < limit, "{mode}: {secs} s");
    }

    // Closed just as it is reused: a GET is retried once on a fresh
    // connection; a POST is never sent twice.
    let log = dir.0.join("requests.log");
    let (_s, base) = hostile("close-on-reuse", Some(&log));
    let (a, b) = (format!("{base}/a"), format!("{base}/b"));
    // -sS: quiet, but errors still print (curl's -s alone hides them).
    let (c, e, _) = get(&["-sS", "-m", "10", &a, &b]);
    assert_eq!(c, Some(0), "GET: {e}");
    let (c, e, _) = get(&["-sS", "-m", "10", "-d", "x", &a, &b]);
    eprintln!("hostile: close-on-reuse POST: exit {c:?}: {}", e.trim());
    assert_eq!(c, Some(8), "POST: {e}");
    assert!(one_error_line(&e), "{e}");
    let seen = std::fs::read_to_string(&log).unwrap();
    let posts_b = seen.lines().filter(|l| l.starts_with("POST /b")).count();
    assert_eq!(
        posts_b, 1,
        "the second POST went out once, never retried:\n{seen}"
    );
    let gets_b = seen.lines().filter(|l| l.starts_with("GET /b")).count();
    assert_eq!(
        gets_b, 2,
        "the GET was retried on a fresh connection:\n{seen}"
    );
}

#[test]
fn untrusted_tls_is_refused_with_60_and_insecure_is_explicit() {
    let (child, line) = spawn_announcing(&["serve", "--tls", "--bind", "127.0.0.1:0"]);
    let _s = Hostile(child);
    let base = line.rsplit(' ').next().unwrap().to_string();
    let url = format!("{base}/health");
    let (c, e, _) = get(&[&url]);
    eprintln!("hostile: self-signed: exit {c:?}: {}", e.trim());
    assert_eq!(c, Some(60), "{e}");
    assert!(one_error_line(&e) && e.contains("-k"), "{e}");
    let o = tcpwise(&["get", "-k", &url]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "ok\n"));
}

#[test]
fn a_path_that_drops_every_syn_hits_the_connect_timeout() {
    if !netns_ok("connect_timeout") {
        return;
    }
    // The link is down for its whole life: SYNs vanish.
    let script = format!(
        "s=$(date +%s%N); {BIN} get --connect-timeout 1 http://$TCPWISE_PEER:9/; rc=$?; e=$(date +%s%N); echo \"$rc $(( (e - s) / 1000000 ))\""
    );
    let o = tcpwise(&[
        "emu", "shell", "-q", "--rtt", "10ms", "--outage", "60s@0s", "--", "sh", "-c", &script,
    ]);
    let out = stdout(&o);
    eprintln!(
        "hostile: dropped SYNs, --connect-timeout 1: {} / {}",
        out.trim(),
        stderr(&o).trim()
    );
    let mut f = out.split_whitespace();
    let (rc, ms): (i32, u64) = (
        f.next().unwrap().parse().unwrap(),
        f.next().unwrap().parse().unwrap(),
    );
    assert_eq!(rc, 28, "{}", stderr(&o));
    assert!((900..3000).contains(&ms), "{ms} ms");
    assert!(stderr(&o).contains("--connect-timeout"), "{}", stderr(&o));
}

/// Resident memory of process `pid`, in MB (`VmRSS`).
pub fn rss_mb(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The audit's header (a 10^15-byte fixed read size) and every bounded
/// field one past its bound: each is refused on the control connection
/// with the field's name, before a data connection is opened, and the
/// server still runs a normal test afterwards.
#[test]
fn perf_server_refuses_every_header_field_past_its_bound() {
    use std::io::{Read, Write};
    let (child, line) = spawn_announcing(&["perf", "server", "--bind", "127.0.0.1:0"]);
    let pid = child.id();
    let _srv = Proc(child);
    let port = line.rsplit(':').next().unwrap().to_string();
    let before = rss_mb(pid);
    let base = serde_json::json!({"magic": "tcpwise-perf/1", "reverse": false,
        "duration_ms": 1000, "bytes": null, "interval_ms": 1000,
        "server_rcvbuf": null, "server_sndbuf": null, "server_read_sizing": null});
    let mut cases = vec![(
        "server_read_sizing",
        serde_json::json!({"policy": "fixed", "size": 1_000_000_000_000_000u64}),
    )];
    for b in tcpwise_perf::proto::BOUNDS {
        cases.push((b.field, serde_json::json!(b.max + 1)));
    }
    for (field, value) in cases {
        let mut h = base.clone();
        match field.split_once('.') {
            Some((o, i)) => {
                h[o] = serde_json::json!({"rate_bps": 1000, "len": 100});
                h[o][i] = value;
            }
            None => h[field] = value,
        }
        let mut s = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        s.write_all(format!("{h}\n").as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        let v: serde_json::Value = serde_json::from_str(answer.trim()).unwrap();
        let why = v["error"].as_str().unwrap_or_default();
        assert!(why.starts_with(field), "{field}: {answer}");
    }
    let o = tcpwise(&["perf", "client", "127.0.0.1", "-p", &port, "-n", "1000000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = rss_mb(pid);
    println!(
        "perf server RSS {before:.1} MB before, {after:.1} MB after the bad headers and a test"
    );
    assert!(after < 100.0, "{after} MB");
}

/// A second `serve` on a port a first one holds (its own SO_REUSEPORT
/// workers, two of them) exits 1 in one line, from the same and from the
/// other address family, instead of sharing the first one's connections.
#[test]
fn serve_refuses_a_busy_port_in_one_line() {
    let (_first, base) = serve_loopback(&["--threads", "2"]);
    let port = base.rsplit(':').next().unwrap().to_string();
    for bind in [
        format!("127.0.0.1:{port}"),
        format!("0.0.0.0:{port}"),
        format!("[::]:{port}"),
    ] {
        let o = tcpwise(&["serve", "--threads", "2", "--bind", &bind]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{bind}: {e}");
        assert!(
            one_error_line(&e) && e.contains("Address already in use"),
            "{bind}: {e}"
        );
    }
}

/// CPU seconds process `pid` has used (user + system).
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let f: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |r| r.1)
        .split_whitespace()
        .collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// Connections that sent only `P` (perhaps HTTP/2's preface, perhaps
/// not) cost no CPU while they wait, and none once they close: the server
/// sleeps until their next segment instead of peeking every millisecond.
/// Printed: the CPU seconds in each phase (docs/serve.md has the figures
/// before and after the fix).
#[test]
fn connections_holding_one_preface_byte_cost_no_cpu() {
    use std::io::Write;
    let (srv, base) = serve_loopback(&["--io", "epoll", "--threads", "1"]);
    let addr = base.trim_start_matches("http://").to_string();
    let mut socks: Vec<_> = (0..300)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    for s in &mut socks {
        s.write_all(b"P").unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pid = srv.0.id();
    let c0 = cpu_secs(pid);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let waiting = cpu_secs(pid) - c0;
    drop(socks);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let c1 = cpu_secs(pid);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let closed = cpu_secs(pid) - c1;
    println!(
        "300 connections holding `P`: {waiting:.2} CPU s in 2 s; after they closed {closed:.2} in 1 s"
    );
    assert!(waiting < 0.3 && closed < 0.2, "{waiting} {closed}");
    let o = tcpwise(&["get", "-s", &format!("{base}/health")]);
    assert_eq!(stdout(&o), "ok\n");
}

const H2_ATTACKER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/h2_attacker.py");

/// Open descriptors of process `pid`.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// What one attack did to the server: the attacker's close times, the
/// server's peak RSS and descriptors, and the slowest normal request.
struct Attacked {
    closed: Vec<Option<f64>>,
    /// The attacker's JSON line (`one-live` adds `reset_after`).
    line: serde_json::Value,
    /// The server's descriptors at the last sample, as the attacker
    /// printed (its connections still open).
    last_fds: usize,
    peak_mb: f64,
    peak_fds: usize,
    worst_ms: f64,
}

/// Runs `h2_attacker.py` (`mode`, `conns` connections of `streams`
/// streams on `path`) against the server `pid` at `addr` for at most
/// `wait` s, sampling its RSS and descriptors and timing a `curl -I` of
/// `/big.bin` every 200 ms meanwhile.
fn attack(
    pid: u32,
    addr: &str,
    (mode, conns, streams, path): (&str, usize, usize, &str),
    wait: f64,
) -> Attacked {
    use std::io::BufRead;
    let (host, port) = addr.rsplit_once(':').unwrap();
    let (c, s, w) = (conns.to_string(), streams.to_string(), wait.to_string());
    let mut child = Command::new("python3")
        .args([H2_ATTACKER, host, port, mode, &c, &s, path, &w])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    let (mut peak_mb, mut peak_fds, mut worst_ms) = (0.0f64, 0usize, 0.0f64);
    let mut last_fds;
    let line = loop {
        peak_mb = peak_mb.max(rss_mb(pid));
        last_fds = fds(pid);
        peak_fds = peak_fds.max(last_fds);
        // A normal curl, as the issue asks; its own clock (time_total),
        // so the time to start the process is not counted.
        let probe = Command::new("curl")
            .args([
                "-sI",
                "-m",
                "10",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code} %{time_total}",
            ])
            .arg(format!("http://{addr}/big.bin"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&probe.stdout).to_string();
        let (code, secs) = said.split_once(' ').unwrap_or(("", ""));
        assert_eq!(code, "200", "{mode}: curl said {said:?}");
        worst_ms = worst_ms.max(secs.parse::<f64>().unwrap_or(f64::INFINITY) * 1e3);
        if let Ok(l) = rx.recv_timeout(std::time::Duration::from_millis(200)) {
            break l;
        }
    };
    drop(child.stdin.take());
    let _ = child.wait();
    let v: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("{mode}: {line}"));
    let closed = v["closed_after"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64())
        .collect();
    Attacked {
        closed,
        line: v,
        last_fds,
        peak_mb,
        peak_fds,
        worst_ms,
    }
}

/// The audit's HTTP/2 attacks at its scale, against `serve --max-body
/// 1MiB --max-conns 50 --header-timeout 3s --idle-timeout 3s --root DIR`:
/// each attacker is closed (the first 49, beside the probe's connection, within the timeout plus 0.5 s,
/// those that waited in the backlog behind them one timeout later each),
/// RSS stays under 100 MB and descriptors under the limit, and a normal
/// `curl -I` is answered throughout: at --max-conns a newcomer closes the
/// connection of any worker that moved data longest ago, so it waits far
/// less than a header timeout (asserted under 1 s, a third of it, so a
/// loaded CI machine does not fail it; the figure is printed, and
/// docs/serve.md has it). Printed: each attack's figures.
#[test]
fn http2_attackers_are_closed_in_time_and_bounded() {
    if !tool_ok("http2_attackers", "python3") || !tool_ok("http2_attackers", "curl") {
        return;
    }
    let dir = TempDir::new("h2-attack");
    std::fs::write(dir.0.join("big.bin"), vec![7u8; 4 << 20]).unwrap();
    let root = dir.0.display().to_string();
    let (srv, base) = serve_loopback(&[
        "--max-body",
        "1MiB",
        "--max-conns",
        "50",
        "--header-timeout",
        "3s",
        "--idle-timeout",
        "3s",
        "--root",
        &root,
    ]);
    let pid = srv.0.id();
    let addr = base.trim_start_matches("http://").to_string();
    println!(
        "serve at rest: {:.1} MB RSS, {} descriptors",
        rss_mb(pid),
        fds(pid)
    );
    for (case, conns) in [
        (("half-preface", 50, 1, "/"), 50),
        (("pri", 50, 1, "/"), 50),
        (("settings-idle", 50, 1, "/"), 50),
        (("headers", 50, 1, "/big.bin"), 50),
        (("body", 50, 1, "/big.bin"), 50),
        // 100 streams a connection: SETTINGS_MAX_CONCURRENT_STREAMS (a
        // client that opens more is refused them; 12 of 100 also pass the
        // server's 1,024, and the rest get a 503).
        (("post-body", 12, 100, "/"), 12),
        (("zero-window", 105, 100, "/big.bin"), 105),
    ] {
        let a = attack(pid, &addr, case, 20.0);
        let mut t: Vec<f64> = a
            .closed
            .iter()
            .map(|c| c.unwrap_or(f64::INFINITY))
            .collect();
        t.sort_by(f64::total_cmp);
        // The probe's own connection holds one of the 50 slots.
        let first = t[conns.min(49) - 1];
        println!(
            "{}: {} connections, closed after {:.2} s (the first) to {:.2} s (the {}th) and {:.2} s (all); peak {:.1} MB RSS, {} descriptors; slowest curl -I /big.bin {:.0} ms",
            case.0,
            conns,
            t[0],
            first,
            conns.min(49),
            t[conns - 1],
            a.peak_mb,
            a.peak_fds,
            a.worst_ms,
        );
        assert!(first <= 3.5, "{}: {t:?}", case.0);
        assert!(t.iter().all(|x| x.is_finite()), "{}: {t:?}", case.0);
        assert!(a.peak_mb < 100.0 && a.peak_fds < 20_000, "{}", case.0);
        // A newcomer evicts the stalest connection of any worker: before
        // eviction crossed workers, one whose worker held none of the
        // attackers (SO_REUSEPORT hashed them all to the other) waited a
        // header timeout (CI, 3 Dec: 2,966 ms for half a preface).
        assert!(a.worst_ms < 1_000.0, "{}: {} ms", case.0, a.worst_ms);
    }
}

/// One live stream does not shield stalled ones: 10 connections of 100
/// GETs of a 4 MiB file with the initial window 0, stream 1's window
/// opened 4 KiB every 0.2 s, the other 99 never. The connection moves,
/// so it stays open; each stalled stream is reset (`RST_STREAM`) within
/// `--idle-timeout` plus 0.5 s of its response's HEADERS (its last
/// progress), and its file descriptor is given back. The bound is on
/// that interval, not on the time since the client sent the request:
/// the latter adds however long the server took to reach the 1,000
/// requests, which a loaded CI machine made 0.2 s more (3.70 s, 3 Dec).
#[test]
fn http2_stalled_streams_are_reset_beside_a_live_one() {
    if !tool_ok("http2_stalled_streams", "python3") || !tool_ok("http2_stalled_streams", "curl") {
        return;
    }
    let dir = TempDir::new("h2-stall");
    std::fs::write(dir.0.join("big.bin"), vec![7u8; 4 << 20]).unwrap();
    let root = dir.0.display().to_string();
    let (srv, base) = serve_loopback(&["--idle-timeout", "3s", "--root", &root]);
    let pid = srv.0.id();
    let addr = base.trim_start_matches("http://").to_string();
    let at_rest = fds(pid);
    let a = attack(pid, &addr, ("one-live", 10, 100, "/big.bin"), 6.0);
    let after = a.last_fds;
    let per_stream = |key: &str| -> Vec<f64> {
        a.line[key]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c.as_array().unwrap().iter())
            .map(|x| x.as_f64().unwrap_or(f64::INFINITY))
            .collect()
    };
    let (resets, idles) = (per_stream("reset_after"), per_stream("idle_before_reset"));
    let worst = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "one-live: {} stalled streams reset at most {:.2} s after their answer's HEADERS ({:.2} s after the request was sent); connections closed {:?}; descriptors {at_rest} at rest, peak {}, {after} after the resets (connections still open); peak {:.1} MB RSS",
        resets.len(),
        worst(&idles),
        worst(&resets),
        a.closed,
        a.peak_fds,
        a.peak_mb
    );
    assert_eq!(resets.len(), 990);
    assert!(worst(&idles) <= 3.5, "{idles:?}");
    // Nor long before its idle time: the server's clock starts when it
    // takes the stream, a little before its HEADERS leave (the file is
    // opened in between), so the margin below 3 s is that delay's.
    assert!(idles.iter().all(|&t| t >= 2.0), "{idles:?}");
    assert!(a.closed.iter().all(Option::is_none), "{:?}", a.closed);
    // Each connection (one descriptor) and its live stream's file (two:
    // the file and the response's own) stay; the stalled streams gave
    // theirs back (they held 1,000 at the peak).
    assert!(after <= at_rest + 3 * 10 + 5, "{at_rest} -> {after}");
}

/// A server that accepts and never answers the TLS handshake: curl's
/// `--connect-timeout` covers the handshake (28 in time; it was read
/// until the server went away).
#[test]
fn a_stalled_tls_handshake_hits_the_connect_timeout() {
    if !tool_ok("stalled_tls", "python3") {
        return;
    }
    let (_srv, base) = hostile("silent", None);
    let url = base.replacen("http://", "https://", 1) + "/";
    let (code, e, secs) = get(&["-s", "-S", "--connect-timeout", "1", &url]);
    println!("stalled TLS handshake, --connect-timeout 1: exit {code:?} in {secs:.3} s: {e}");
    assert_eq!(code, Some(28), "{e}");
    assert!(
        one_error_line(&e) && e.contains("TLS handshake") && secs < 2.0,
        "{secs} {e}"
    );
}

/// `--compressed` undoes stacked codings as curl does (the body of
/// `Content-Encoding: gzip, gzip, gzip` decoded three times) and refuses a
/// sixth layer with 61; a 64 MiB gzip bomb is decoded in bounded pieces
/// (unit test `decode::tests::a_bomb_is_handed_on_in_bounded_pieces`;
/// 4 GiB bombs of each coding in docs/get.md).
#[test]
fn stacked_codings_decode_as_curls() {
    if !tool_ok("stacked_codings", "python3") || !tool_ok("stacked_codings", "curl") {
        return;
    }
    let (_srv, base) = hostile("stacked-gzip", None);
    for (path, layers) in [("/3", 3), ("/6", 6)] {
        let url = format!("{base}{path}");
        let ours = tcpwise(&["get", "-s", "--compressed", &url]);
        let curl = Command::new("curl")
            .args(["-s", "--compressed", &url])
            .output()
            .unwrap();
        println!(
            "{layers} gzip layers: tcpwise exit {:?}, curl exit {:?}",
            ours.status.code(),
            curl.status.code()
        );
        assert_eq!(ours.status.code(), curl.status.code(), "{layers}");
        assert_eq!(ours.stdout, curl.stdout, "{layers}");
    }
}
