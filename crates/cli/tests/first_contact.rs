//! What a new user hits first (issue "first contact"): each test here is
//! the regression test of one item, named after it. Timing bounds are
//! correctness bounds (a command that should stop at 2 s must not run 10).

use crate::common::*;
use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A peer that accepts every connection and then says nothing, ever.
struct Stall {
    port: u16,
    _thread: std::thread::JoinHandle<()>,
}

fn stalling_peer() -> Stall {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let thread = std::thread::spawn(move || {
        let mut held = Vec::new();
        // Bounded: the tests using it end within seconds.
        for s in l.incoming().take(4096).flatten() {
            held.push(s);
        }
    });
    Stall {
        port,
        _thread: thread,
    }
}

fn serve_on(bind: &str) -> (std::process::Child, String) {
    let (child, line) = spawn_announcing(&["serve", "--bind", bind]);
    let url = line.rsplit(' ').next().unwrap().to_string();
    (child, url)
}

struct Killed(std::process::Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn timed(args: &[&str]) -> (std::process::Output, Duration) {
    let t0 = Instant::now();
    let o = tcpwise(args);
    (o, t0.elapsed())
}

#[test]
fn ipv6_literal_urls_connect_directly() {
    let (srv, url) = serve_on("[::1]:0");
    let _srv = Killed(srv);
    assert!(url.starts_with("http://[::1]:"), "{url}");
    let o = tcpwise(&["get", &format!("{url}/health")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "ok\n");
}

#[test]
fn ipv6_literal_inside_a_testbed() {
    if !netns_ok("ipv6_literal_inside_a_testbed") {
        return;
    }
    let o = tcpwise(&[
        "emu",
        "pair",
        "-q",
        "--rtt",
        "10ms",
        "--server",
        &format!("exec {BIN} serve --bind [::]:8080"),
        "--wait-port",
        "8080",
        "--",
        BIN,
        "get",
        "http://[2001:2::2]:8080/health",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "ok\n");
}

#[test]
fn curl_spellings_work() {
    let (srv, url) = serve_on("127.0.0.1:0");
    let _srv = Killed(srv);
    for flags in [&["-sS"][..], &["-fsSL"], &["-s", "-S"]] {
        let mut args = vec!["get"];
        args.extend_from_slice(flags);
        let u = format!("{url}/health");
        args.push(&u);
        let o = tcpwise(&args);
        assert_eq!(o.status.code(), Some(0), "{flags:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), "ok\n");
    }
    // No scheme: http://, as curl assumes.
    let bare = format!("{}/health", url.trim_start_matches("http://"));
    let o = tcpwise(&["get", &bare]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "ok\n");
}

#[test]
fn get_json_has_one_entry_per_url_with_errors() {
    let (srv, url) = serve_on("127.0.0.1:0");
    let _srv = Killed(srv);
    let ok = format!("{url}/health");
    // curl's exit code is the last transfer's: the refused one first and
    // a success after it exits 0 (the report keeps both).
    let o = tcpwise(&["get", "--report-json", &ok, "http://127.0.0.1:1/"]);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let o = tcpwise(&["get", "--report-json", "http://127.0.0.1:1/", &ok]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 2, "{v}");
    assert_eq!(a[0]["url"], "http://127.0.0.1:1/");
    assert_eq!(a[0]["error"]["exit_code"], 7, "{v}");
    assert!(
        a[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("connect")
    );
    assert_eq!(a[1]["url"], ok);
    assert!(a[1]["error"].is_null());
    assert_eq!(a[1]["responses"][0]["status"], 200);
    // Units in the names of the connection history.
    let h = &a[1]["responses"][0]["conn"]["history"];
    for k in ["srtt_ns", "rto_ns", "created_at_ns", "max_burst_bytes"] {
        assert!(h.get(k).is_some(), "history lacks {k}: {h}");
    }
}

#[test]
fn json_modes_print_an_error_object_on_failure() {
    let (o, _) = timed(&["perf", "client", "127.0.0.1", "-p", "1", "--json=tcpwise"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["exit_code"], 1, "{v}");
    // iperf3's -J: its error is a string, as iperf3 writes it.
    let (o, _) = timed(&["perf", "client", "127.0.0.1", "-p", "1", "-J"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["error"].is_string(), "{v}");
    let (o, _) = timed(&["dispatch", "load", "127.0.0.1:1", "-t", "100ms", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["error"]["message"].as_str().unwrap().contains("connect"),
        "{v}"
    );
}

#[test]
fn dispatch_load_stops_at_its_duration_against_a_silent_server() {
    let peer = stalling_peer();
    let target = format!("127.0.0.1:{}", peer.port);
    let (o, took) = timed(&[
        "dispatch", "load", &target, "-t", "1s", "--warmup", "0s", "-c", "4",
    ]);
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("0 requests/s"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("no request was answered"),
        "{}",
        stderr(&o)
    );
    let (o, took) = timed(&[
        "dispatch", "load", &target, "-t", "1s", "--warmup", "0s", "--json",
    ]);
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["requests"], 0);
    assert_eq!(v["error"]["exit_code"], 1, "{v}");
}

#[test]
fn perf_stops_within_a_second_of_t_against_a_silent_server() {
    let peer = stalling_peer();
    let p = peer.port.to_string();
    let (o, took) = timed(&["perf", "client", "127.0.0.1", "-p", &p, "-t", "2"]);
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn perf_summary_lasts_as_long_as_asked_on_loopback() {
    let (child, line) = spawn_announcing(&["perf", "server", "--bind", "127.0.0.1:0"]);
    let _srv = Killed(child);
    let p = line.rsplit(':').next().unwrap().to_string();
    let o = tcpwise(&[
        "perf",
        "client",
        "127.0.0.1",
        "-p",
        &p,
        "-t",
        "3",
        "--json=tcpwise",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let secs = v["summary"]["seconds"].as_f64().unwrap();
    assert!((secs - 3.0).abs() <= 0.1, "summary seconds {secs} for -t 3");
    // Loopback: microseconds, never a zero RTT or a zero duration.
    let o = tcpwise(&["perf", "client", "127.0.0.1", "-p", &p, "-n", "10000000"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.contains(" 0.0 ms") && !out.contains("0.00 s"), "{out}");
    assert!(!out.contains("Mbit/s at 0"), "{out}");
    // The read sizing is written as a user types it.
    assert!(out.contains("receiver reads slow-start:32KiB"), "{out}");
}

#[test]
fn short_static_buffer_runs_are_diagnosed() {
    if !netns_ok("short_static_buffer_runs_are_diagnosed") {
        return;
    }
    let o = perf_testbed(
        "100ms",
        "50mbit",
        &format!("{BIN} perf client $TCPWISE_PEER -R -t 3 --rcvbuf 64KB --json=tcpwise"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["buffer_limited"], true, "{}", v["summary"]);
}

#[test]
fn misleading_emu_flags_are_refused_before_set_up() {
    let dir = TempDir::new("flags");
    let marker = dir.0.join("ran");
    let touch = format!("touch {}", marker.display());
    for (args, code, needle) in [
        (
            vec![
                "--rtt",
                "100ms",
                "--up-delay",
                "10ms",
                "--down-delay",
                "10ms",
            ],
            2,
            "--rtt and --up-delay with --down-delay",
        ),
        (vec!["--trace-once"], 2, "--trace-once needs"),
        (
            vec!["--stats-json", "/nonexistent/dir/stats.json"],
            2,
            "--stats-json",
        ),
    ] {
        let mut a = vec!["emu", "shell"];
        a.extend(args.iter().copied());
        a.extend(["--", "sh", "-c", &touch]);
        let o = tcpwise(&a);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!marker.exists(), "{args:?} ran the command");
    }
    if !netns_ok("misleading_emu_flags_are_refused_before_set_up") {
        return;
    }
    let o = tcpwise(&[
        "emu",
        "shell",
        "-q",
        "--client-sysctl",
        "net.ipv4.tcp_congestion_control=nonexistent",
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("refused the value") && !stderr(&o).contains("unknown sysctl"),
        "{}",
        stderr(&o)
    );
    let o = tcpwise(&["emu", "shell", "-q", "--", "nonexistent-cmd-tw"]);
    assert_eq!(o.status.code(), Some(127), "{}", stderr(&o));
    let o = tcpwise(&[
        "emu", "shell", "-q", "--jitter", "200ms", "--rtt", "10ms", "--", "true",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: --jitter 200ms"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_rule_for_durations_and_sizes() {
    for (args, code, needle) in [
        (
            vec!["dispatch", "load", "127.0.0.1:1", "-t", "1"],
            2,
            "no unit",
        ),
        (
            vec!["perf", "client", "127.0.0.1", "--interval", "0"],
            2,
            "--interval",
        ),
        (vec!["lab", "--out", "/etc/passwd", "buffers"], 2, "--out"),
    ] {
        let o = tcpwise(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    // Hours work where minutes do; perf -t takes seconds as iperf3 does.
    let o = tcpwise(&[
        "dispatch",
        "load",
        "127.0.0.1:1",
        "-t",
        "1h",
        "--warmup",
        "0s",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
}

#[test]
fn address_in_use_is_one_exit_code() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    for args in [
        vec!["perf", "server", "--bind", &addr],
        vec!["serve", "--bind", &addr],
        vec!["dispatch", "server", "--bind", &addr],
    ] {
        let mut child = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "{args:?} did not stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}: {err}");
        assert!(err.to_lowercase().contains("in use"), "{args:?}: {err}");
    }
}

#[test]
fn get_max_time_holds_against_a_silent_server() {
    let peer = stalling_peer();
    let url = format!("http://127.0.0.1:{}/", peer.port);
    let (o, took) = timed(&["get", "-m", "1", &url]);
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert_eq!(o.status.code(), Some(28), "{}", stderr(&o));
}

#[test]
fn emu_pair_wait_timeout_holds() {
    if !netns_ok("emu_pair_wait_timeout_holds") {
        return;
    }
    let (o, took) = timed(&[
        "emu",
        "pair",
        "-q",
        "--wait-timeout",
        "1s",
        "--server",
        "sleep 30",
        "--",
        "true",
    ]);
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("did not listen"), "{}", stderr(&o));
}

/// iperf3's -C, -i and -J: the algorithm is set on both ends of the data
/// connection (ss shows it on both sockets while the test runs); one that
/// does not exist is one line listing what does, exit 2.
#[test]
fn perf_congestion_control_on_both_ends() {
    if !tool_ok("perf_congestion_control_on_both_ends", "ss") {
        return;
    }
    let (child, line) = spawn_announcing(&["perf", "server", "--bind", "127.0.0.1:0"]);
    let _srv = Killed(child);
    let p = line.rsplit(':').next().unwrap().to_string();
    let run = Command::new(BIN)
        .args([
            "perf",
            "client",
            "127.0.0.1",
            "-p",
            &p,
            "-t",
            "2",
            "-i",
            "0.5",
            "-C",
            "reno",
            "-J",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let filter = format!("( sport = :{p} or dport = :{p} )");
    let ss = Command::new("ss").args(["-tin", &filter]).output().unwrap();
    let o = run.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["intervals"].as_array().unwrap().len() >= 3, "-i 0.5: {v}");
    let text = String::from_utf8_lossy(&ss.stdout);
    // Control connection (default) and data connection (reno), both ends.
    assert!(text.matches(" reno ").count() >= 2, "{text}");
    let o = tcpwise(&[
        "perf",
        "client",
        "127.0.0.1",
        "-p",
        &p,
        "-C",
        "nonexistent-cc",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("tcp_available_congestion_control lists"),
        "{}",
        stderr(&o)
    );
}
