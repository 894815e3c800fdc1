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
