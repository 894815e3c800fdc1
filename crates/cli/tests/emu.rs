//! `tcpwise emu` end to end: real namespaces, real kernel TCP, real peers
//! (curl, iperf3, python3's http.server). Assertions are correctness
//! bounds; precise figures come from `tcpwise emu selftest`, not tests.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn shell_runs_cmd_with_peer_env_and_returns_its_status() {
    if !netns_ok("shell_status") {
        return;
    }
    let o = tcpwise(&[
        "emu",
        "shell",
        "--rtt",
        "10ms",
        "-q",
        "--",
        "sh",
        "-c",
        "test -n \"$TCPWISE_PEER\" && test -n \"$TCPWISE_PEER6\" && echo $TCPWISE_PEER; exit 7",
    ]);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let peer = stdout(&o);
    assert!(peer.trim().starts_with("198.18."), "peer {peer}");
}

#[test]
fn curl_in_shell_fetches_from_python_http_server_on_host() {
    if !netns_ok("shell_curl")
        || !tool_ok("shell_curl", "curl")
        || !tool_ok("shell_curl", "python3")
    {
        return;
    }
    let dir = TempDir::new("curl");
    let file = dir.0.join("blob");
    std::fs::write(&file, blob(1_000_000, 7)).unwrap();
    let want = sha256_of(&file);
    let srv = python_http(&dir.0);
    let script = format!(
        "curl -sS --max-time 30 http://$TCPWISE_PEER:{p}/blob | sha256sum; \
         curl -sS --max-time 30 -g 'http://['$TCPWISE_PEER6']:{p}/blob' | sha256sum",
        p = srv.port
    );
    let o = tcpwise(&[
        "emu", "shell", "--rtt", "20ms", "--rate", "50mbit", "--", "sh", "-c", &script,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let hashes: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        hashes,
        vec![want.as_str(), want.as_str()],
        "IPv4 then IPv6 bodies byte-exact"
    );
    // The exit summary went to stderr, one line per direction.
    let err = stderr(&o);
    assert!(err.contains("  up:") && err.contains("down:"), "{err}");
}

#[test]
fn iperf3_in_shell_is_held_to_the_configured_rate() {
    if !netns_ok("shell_iperf3") || !tool_ok("shell_iperf3", "iperf3") {
        return;
    }
    let port = 15201 + (std::process::id() % 1000) as u16;
    let mut srv = Command::new("iperf3")
        .args(["-s", "-1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3 -s");
    std::thread::sleep(Duration::from_millis(300));
    let script = format!("iperf3 -c $TCPWISE_PEER -p {port} -R -t 4 -J");
    let o = tcpwise(&[
        "emu", "shell", "--rtt", "20ms", "--rate", "20mbit", "-q", "--", "sh", "-c", &script,
    ]);
    let _ = srv.kill();
    let _ = srv.wait();
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("iperf3 JSON");
    let bps = v["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .expect("bits_per_second");
    let ceiling = 20e6 * 1448.0 / 1500.0;
    assert!(
        bps <= ceiling * 1.03,
        "the link lets through more than its rate: {bps}"
    );
    assert!(bps >= ceiling * 0.5, "the link carries bulk traffic: {bps}");
}

#[test]
fn pair_runs_server_and_client_with_server_sysctls() {
    if !netns_ok("pair_curl") || !tool_ok("pair_curl", "curl") || !tool_ok("pair_curl", "python3") {
        return;
    }
    let dir = TempDir::new("pair");
    std::fs::write(dir.0.join("index.html"), b"hello through the link\n").unwrap();
    let seen = dir.0.join("sysctl");
    let server = format!(
        "cat /proc/sys/net/ipv4/tcp_slow_start_after_idle > {}; cd {} && exec python3 -m http.server 8080 --bind 198.18.0.2",
        seen.display(),
        dir.0.display()
    );
    let o = tcpwise(&[
        "emu",
        "pair",
        "--rtt",
        "30ms",
        "--rate",
        "10mbit",
        "-q",
        "--server-sysctl",
        "net.ipv4.tcp_slow_start_after_idle=0",
        "--server",
        &server,
        "--wait-port",
        "8080",
        "--",
        "sh",
        "-c",
        "curl -sS --max-time 20 http://$TCPWISE_PEER:8080/index.html",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "hello through the link\n");
    assert_eq!(std::fs::read_to_string(&seen).unwrap().trim(), "0");
}

#[test]
fn pair_reports_a_server_that_never_listens() {
    if !netns_ok("pair_nolisten") {
        return;
    }
    let o = tcpwise(&[
        "emu", "pair", "--rtt", "10ms", "--server", "exit 3", "--", "true",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    // The user's command is named, not the `sh` that ran it.
    assert!(
        err.contains("the server command 'exit 3' ended") && err.contains("before it listened"),
        "{err}"
    );
}

/// `emu` inputs that were taken without comment get one line each: a
/// --rate beside a trace, an endless --rtt, a bad value in a --config file
/// (named), and `--queue 2bdp` as `droptail:limit=2bdp`.
#[test]
fn emu_inputs_get_one_line_answers() {
    let t = TempDir::new("emu-inputs");
    let trace = t.0.join("down.trace");
    std::fs::write(&trace, "1\n2\n").unwrap();
    let bad_cfg = t.0.join("bad.toml");
    std::fs::write(&bad_cfg, "rtt = \"10xs\"\n").unwrap();
    let cfg_needle = format!("config {}: 'rtt': invalid value '10xs'", bad_cfg.display());
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--rate".into(),
                "10mbit".into(),
                "--down-trace".into(),
                trace.display().to_string(),
            ],
            "give --up-rate for the uplink instead of --rate",
        ),
        (vec!["--rtt".into(), "100000s".into()], "over the 60 s"),
        (
            vec!["--config".into(), bad_cfg.display().to_string()],
            &cfg_needle,
        ),
    ];
    for (args, needle) in &cases {
        let mut all = vec!["emu", "shell", "--print-config"];
        all.extend(args.iter().map(String::as_str));
        all.extend(["--", "true"]);
        let o = tcpwise(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    let o = tcpwise(&[
        "emu",
        "shell",
        "--print-config",
        "--rtt",
        "10ms",
        "--rate",
        "10mbit",
        "--queue",
        "2bdp",
        "--",
        "true",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn several_shells_at_once_get_their_own_subnets() {
    if !netns_ok("shells_parallel") {
        return;
    }
    let spawn = || {
        Command::new(BIN)
            .args([
                "emu",
                "shell",
                "--rtt",
                "10ms",
                "-q",
                "--",
                "sh",
                "-c",
                "echo $TCPWISE_ADDR; sleep 1",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(
        a.status.success() && b.status.success(),
        "{} {}",
        stderr(&a),
        stderr(&b)
    );
    assert_ne!(stdout(&a), stdout(&b));
}

fn killed_by(sig: i32, expect: i32) {
    let args = ["emu", "shell", "--rtt", "10ms", "-q", "--", "sleep", "30"];
    signal_testbed(&args, Duration::from_millis(200), sig, expect);
}

#[test]
fn sigterm_and_sigint_leave_nothing_behind() {
    if !netns_ok("signals") {
        return;
    }
    killed_by(libc::SIGTERM, 143);
    killed_by(libc::SIGINT, 130);
}

#[test]
fn crashing_cmd_leaves_nothing_behind() {
    if !netns_ok("crash") {
        return;
    }
    let child = Command::new(BIN)
        .args([
            "emu",
            "shell",
            "-q",
            "--",
            "sh",
            "-c",
            "sleep 0.2; kill -SEGV $$",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(128 + libc::SIGSEGV), "{}", stderr(&o));
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
fn panicking_forwarder_leaves_nothing_behind() {
    if !netns_ok("forwarder_panic")
        || !tool_ok("forwarder_panic", "python3")
        || !tool_ok("forwarder_panic", "curl")
    {
        return;
    }
    let dir = TempDir::new("panic");
    let srv = python_http(&dir.0);
    let script = format!(
        "for i in $(seq 50); do curl -s --max-time 2 http://$TCPWISE_PEER:{}/ >/dev/null; done; sleep 30",
        srv.port
    );
    let child = Command::new(BIN)
        .args([
            "emu",
            "shell",
            "--rtt",
            "2ms",
            "-q",
            "--inject-panic-after",
            "20",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    let last = err.trim().lines().last().unwrap_or("");
    assert!(
        last.starts_with("tcpwise: error: the emulator stopped") && last.contains("panicked"),
        "{err}"
    );
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
fn clean_removes_namespaces_of_dead_owners() {
    if !netns_ok("clean") {
        return;
    }
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let name = format!("tw-{pid}-c0");
    assert!(
        Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .unwrap()
            .success()
    );
    let o = tcpwise(&["emu", "clean"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("removed {name}")),
        "{}",
        stdout(&o)
    );
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

/// Link flags each refused in one line: (the words, what the line says).
fn bad_link_flags() -> &'static [(&'static [&'static str], &'static str)] {
    &[
        (
            &["emu", "shell", "--rate", "20mbps", "--", "true"],
            "ambiguous",
        ),
        (&["emu", "shell", "--rtt", "100", "--", "true"], "no unit"),
        (
            &[
                "emu",
                "shell",
                "--down-trace",
                "/nonexistent/trace",
                "--",
                "true",
            ],
            "cannot read trace",
        ),
        (
            &["emu", "shell", "--loss", "150%", "--", "true"],
            "out of range",
        ),
        (
            &[
                "emu", "shell", "--rtt", "10ms", "--delay", "5ms", "--", "true",
            ],
            "give one",
        ),
        (
            &[
                "emu",
                "pair",
                "--server-sysctl",
                "kernel.pid_max=1",
                "--server",
                "true",
                "--",
                "true",
            ],
            "per-namespace",
        ),
        (
            &["emu", "shell", "--queue", "red", "--", "true"],
            "droptail, drophead, codel, pie or fq-codel",
        ),
        (
            &[
                "emu",
                "shell",
                "--queue",
                "codel:tupdate=15ms",
                "--",
                "true",
            ],
            "does not take",
        ),
        (
            &["emu", "selftest", "--down-queue", "droptail:ecn"],
            "does not take",
        ),
        (
            &["emu", "shell", "--outage", "3s", "--", "true"],
            "DURATION@AT",
        ),
        (
            &["emu", "shell", "--reorder", "150%", "--", "true"],
            "out of range",
        ),
        (
            &["emu", "shell", "--down-corrupt", "101%", "--", "true"],
            "out of range",
        ),
        (
            &["emu", "shell", "--jitter", "lognormal:2ms", "--", "true"],
            "pareto",
        ),
        (
            &["emu", "shell", "--up-jitter", "2ms,100%", "--", "true"],
            "correlation",
        ),
        (
            &["emu", "shell", "--loss", "1%,100%", "--", "true"],
            "correlation",
        ),
    ]
}

/// `--pcap`, `--log` and `emu plot` refused, and `--police` without its burst.
fn bad_record_and_plot_flags() -> &'static [(&'static [&'static str], &'static str)] {
    &[
        (
            &["emu", "shell", "--pcap", "/proc/tcpwise-no", "--", "true"],
            "cannot create /proc/tcpwise-no",
        ),
        (
            &["emu", "selftest", "--log", "/dev/null/x"],
            "cannot create /dev/null/x",
        ),
        (
            &["emu", "plot", "/nonexistent-tcpwise", "-o", "x.svg"],
            "no up.log or down.log",
        ),
        (
            &["emu", "plot", "/etc/hostname", "-o", "x.svg"],
            "not a Mahimahi link log",
        ),
        (&["emu", "plot", "/etc", "-o", "x.png"], ".svg or .html"),
        (
            &["emu", "shell", "--police", "10mbit", "--", "true"],
            "RATE,BURST",
        ),
    ]
}

/// Words netem and Mahimahi read differently: both readings named.
fn ambiguous_link_flags() -> &'static [(&'static [&'static str], &'static str)] {
    &[
        // A bare number: netem's 1 % or Mahimahi's 100 %?
        (
            &["emu", "shell", "--loss", "1", "--", "true"],
            "mm-loss 1 = 100%",
        ),
        (
            &["emu", "shell", "--reorder", "5", "--", "true"],
            "netem (loss 1 = 1%)",
        ),
        // Bytes to tc, packets to Mahimahi.
        (
            &["emu", "shell", "--queue", "1500", "--", "true"],
            "packets to Mahimahi",
        ),
    ]
}

#[test]
fn bad_input_gets_one_line_and_nonzero_exit() {
    // These fail before any privilege is needed.
    for (args, needle) in bad_link_flags()
        .iter()
        .chain(bad_record_and_plot_flags())
        .chain(ambiguous_link_flags())
    {
        let o = tcpwise(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A trace file with a bad line, a schedule out of order or with an
/// unknown key: the line (and column) named, in one line, exit 2.
#[test]
fn bad_trace_and_schedule_files_name_the_line() {
    let dir = TempDir::new("badtrace");
    let t = dir.0.join("bad.trace");
    std::fs::write(&t, "1\n2\nbanana\n").unwrap();
    let o = tcpwise(&[
        "emu",
        "shell",
        "--up-trace",
        t.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    // A schedule out of order, or with an unknown key: line and column.
    for (text, needle) in [
        ("2s rate=10mbit\n1s rate=5mbit\n", "line 2, column 1"),
        ("0s rate=10mbit speed=3\n", "line 1, column 16"),
    ] {
        let f = dir.0.join("sched");
        std::fs::write(&f, text).unwrap();
        let o = tcpwise(&[
            "emu",
            "shell",
            "--schedule",
            f.to_str().unwrap(),
            "--",
            "true",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn missing_privileges_name_the_fix() {
    if tcpwise_sys::euid() != 0 || !tool_ok("privileges", "setpriv") {
        eprintln!("skipping missing_privileges: needs root to drop to nobody with setpriv");
        return;
    }
    let o = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            BIN,
            "emu",
            "shell",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    if err.contains("Permission denied") && err.contains("setpriv") {
        eprintln!("skipping missing_privileges: nobody cannot execute the test binary here");
        return;
    }
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("sudo") && err.trim().lines().count() == 1,
        "{err}"
    );
}

fn selftest(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["emu", "selftest", "--json"];
    all.extend_from_slice(args);
    let o = tcpwise(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("selftest JSON")
}

#[test]
fn selftest_measures_rtt_rate_and_queue_within_bounds() {
    if !netns_ok("selftest") {
        return;
    }
    let r = selftest(&[
        "--rtt",
        "30ms",
        "--rate",
        "10mbit",
        "--queue",
        "64KB",
        "--samples",
        "20",
        "--bulk",
        "3s",
    ]);
    let p50 = r["idle_rtt"]["p50_ms"].as_f64().unwrap();
    assert!((30.0..36.0).contains(&p50), "idle RTT {p50}");
    let ceiling = r["ceiling_mbit"].as_f64().unwrap();
    let steady = r["steady_goodput_mbit"].as_f64().unwrap();
    assert!(
        steady <= ceiling * 1.03 && steady >= ceiling * 0.5,
        "{steady} vs {ceiling}"
    );
    // RTT + (64 KB + the packet in service + a 128-byte probe each way)
    // / 10 Mbit/s = 82.6 ms; scheduling noise allowed on top.
    let bound = r["loaded_rtt_bound_ms"].as_f64().unwrap();
    assert!((bound - 82.605).abs() < 0.01, "{bound}");
    // The queue limit itself is exact in the stats; RTT samples are timed
    // (a VM can stall for 10+ ms), so only their median is bounded here.
    // The maximum is a figure for `tcpwise emu selftest`, not a test.
    let peak = r["directions"][1]["peak_queue_bytes"].as_u64().unwrap();
    assert!(peak <= 64_000 && peak > 40_000, "peak queue {peak}");
    // Time in the queue is on the link's clock, so exact: at most the
    // queue plus the rest of the packet in service (52.4 ms), 1 % for the
    // histogram's two significant digits.
    let sojourn = &r["directions"][1]["sojourn"];
    let max = sojourn["max_us"].as_u64().unwrap();
    assert!(max <= 53_000 && max > 20_000, "{sojourn}");
    assert!(sojourn["samples"].as_u64().unwrap() > 1000, "{sojourn}");
    // The UDP probes: sent every 50 ms through the bulk download.
    let sent = r["udp_probes_sent"].as_u64().unwrap();
    let udp = r["loaded_rtt_udp"]["p50_ms"].as_f64().unwrap();
    assert!(sent >= 30, "{sent} probes");
    assert!(
        (30.0..=bound + 5.0).contains(&udp),
        "UDP probes: median {udp}"
    );
    let loaded = r["loaded_rtt"]["p50_ms"].as_f64().unwrap();
    assert!(
        loaded <= bound + 5.0,
        "queue limit holds: median {loaded} vs {bound}"
    );
    assert!(loaded >= 30.0, "never faster than the path: {loaded}");
    let drops = r["directions"][1]["dropped_queue"].as_u64().unwrap();
    assert!(drops > 0, "drop-tail drops show in the stats");
}

#[test]
fn selftest_trace_and_loss() {
    if !netns_ok("selftest_trace") {
        return;
    }
    let dir = TempDir::new("trace");
    let t = dir.0.join("1ms.trace");
    let text: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    std::fs::write(&t, text).unwrap();
    let r = selftest(&[
        "--rtt",
        "20ms",
        "--down-trace",
        t.to_str().unwrap(),
        "--samples",
        "5",
        "--bulk",
        "3s",
    ]);
    let steady = r["steady_goodput_mbit"].as_f64().unwrap();
    let ceiling = 12.0 * 1448.0 / 1500.0;
    assert!((r["ceiling_mbit"].as_f64().unwrap() - ceiling).abs() < 0.01);
    assert!(
        steady <= ceiling * 1.03 && steady >= ceiling * 0.6,
        "trace goodput {steady}"
    );

    let r = selftest(&[
        "--rtt",
        "10ms",
        "--rate",
        "20mbit",
        "--loss",
        "1%",
        "--samples",
        "5",
        "--bulk",
        "3s",
    ]);
    let down = r["loss"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["direction"] == "down")
        .unwrap();
    let n = down["offered"].as_f64().unwrap();
    let k = down["lost"].as_f64().unwrap();
    assert!(n > 1000.0, "{n}");
    let sd = (n * 0.01 * 0.99).sqrt();
    assert!((k - 0.01 * n).abs() < 5.0 * sd, "{k} of {n}");
}

#[test]
fn pair_works_rootless_in_a_user_namespace() {
    // As uid nobody, with a world-accessible TUN device (Debian's default
    // mode; this test bind-mounts one in a private mount namespace so the
    // host's /dev/net/tun is never touched).
    if !netns_ok("rootless")
        || !tool_ok("rootless", "setpriv")
        || !tool_ok("rootless", "unshare")
        || !tool_ok("rootless", "curl")
    {
        return;
    }
    let dir = TempDir::new("rootless");
    let node = dir.0.join("tun");
    let script = format!(
        "mknod {n} c 10 200 && chmod 666 {n} && mount --bind {n} /dev/net/tun && \
         exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all {BIN} emu pair --rtt 10ms -q \
         --server-sysctl net.ipv4.tcp_slow_start_after_idle=0 \
         --server 'cat /proc/sys/net/ipv4/tcp_slow_start_after_idle; exec python3 -m http.server 8000 --bind 198.18.0.2' \
         --wait-port 8000 -- sh -c 'id -u; curl -sS -o /dev/null -w \"%{{http_code}}\\n\" http://$TCPWISE_PEER:8000/'",
        n = node.display()
    );
    let o = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    if stderr(&o).contains("Permission denied") && !stderr(&o).contains("tcpwise") {
        eprintln!(
            "skipping rootless: nobody cannot execute the test binary here: {}",
            stderr(&o)
        );
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "0\n200\n", "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("0\n"),
        "server sysctl applied: {}",
        stderr(&o)
    );
}

#[test]
fn under_sudo_commands_run_as_the_invoking_user_and_the_forwarder_keeps_root() {
    if !netns_ok("sudo_drop") {
        return;
    }
    let run = |args: &[&str]| {
        let child = Command::new(BIN)
            .args(args)
            .env("SUDO_UID", "65534")
            .env("SUDO_GID", "65534")
            .env("SUDO_USER", "nobody")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let o = child.wait_with_output().unwrap();
        assert!(
            leftovers(pid).is_empty(),
            "left behind: {:?}",
            leftovers(pid)
        );
        o
    };
    // shell: CMD as 65534, no supplementary groups, the sudo user's env.
    let o = run(&[
        "emu",
        "shell",
        "--rtt",
        "10ms",
        "--",
        "sh",
        "-c",
        "id -u; id -G; echo $USER",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "65534\n65534\nnobody\n");
    assert!(
        stderr(&o).contains("commands run as uid 65534 gid 65534"),
        "{}",
        stderr(&o)
    );
    // --as-root keeps root.
    let o = run(&[
        "emu",
        "shell",
        "--rtt",
        "10ms",
        "-q",
        "--as-root",
        "--",
        "id",
        "-u",
    ]);
    assert_eq!(stdout(&o), "0\n", "{}", stderr(&o));
    // pair: the server and the client both run as 65534 (the server writes
    // its uid where the client, in the other namespace, cannot: stderr is
    // ours; so it answers over HTTP instead).
    let o = run(&[
        "emu",
        "pair",
        "-q",
        "--rtt",
        "10ms",
        "--server",
        "mkdir -p /tmp/tw-uid-$$ && cd /tmp/tw-uid-$$ && id -u > uid && exec python3 -m http.server 8000 >/dev/null 2>&1",
        "--",
        "sh",
        "-c",
        "id -u; curl -s http://$TCPWISE_PEER:8000/uid",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "65534\n65534\n", "{}", stderr(&o));
    let _ = Command::new("sh")
        .args(["-c", "rm -rf /tmp/tw-uid-*"])
        .status();
    // A SUDO_UID that is not a number: one line, exit 2, nothing set up.
    let o = Command::new(BIN)
        .args(["emu", "shell", "--", "true"])
        .env("SUDO_UID", "abc")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("SUDO_UID=\"abc\""), "{}", stderr(&o));
}

#[test]
fn selftest_checks_per_direction_impairments() {
    if !netns_ok("selftest_impairments") {
        return;
    }
    let r = selftest(&[
        "--rtt",
        "20ms",
        "--rate",
        "50mbit",
        "--down-reorder",
        "5%",
        "--up-duplicate",
        "2%",
        "--down-jitter",
        "pareto:1ms,25%",
        "--samples",
        "20",
        "--bulk",
        "3s",
    ]);
    let checks = r["impairments"].as_array().unwrap();
    let names: Vec<String> = checks
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["what"].as_str().unwrap(),
                c["direction"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        ["duplicate up", "reorder down"],
        "only what was configured, where"
    );
    for c in checks {
        let (p, n) = (c["configured"].as_f64().unwrap(), c["of"].as_u64().unwrap());
        let m = c["measured"].as_f64().unwrap();
        assert!(n > 2000, "{c}");
        // 4.5 SD: a seeded run repeats its draws, but which packets meet
        // them depends on timing.
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!((m - p).abs() < 4.5 * sd, "{c}");
    }
    assert_eq!(r["directions"][0]["reordered"].as_u64(), Some(0));
    assert_eq!(r["directions"][1]["duplicated"].as_u64(), Some(0));
    assert_eq!(r["path"]["down"]["jitter"].as_str(), Some("pareto:1ms,25%"));
    assert!(r["path"]["up"]["jitter"].is_null());
}

#[test]
fn log_and_pcap_record_what_the_stats_count_and_plot_draws_them() {
    if !netns_ok("record") || !tool_ok("record", "tcpdump") {
        return;
    }
    let dir = TempDir::new("record");
    let rec = dir.0.join("rec");
    let stats = dir.0.join("stats.json");
    let bin = env!("CARGO_BIN_EXE_tcpwise");
    let o = tcpwise(&[
        "emu",
        "pair",
        "-q",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
        "--queue",
        "codel:limit=100KB",
        "--log",
        rec.to_str().unwrap(),
        "--pcap",
        rec.to_str().unwrap(),
        "--stats-json",
        stats.to_str().unwrap(),
        "--server",
        &format!("exec {bin} perf server"),
        "--",
        "sh",
        "-c",
        &format!("{bin} perf client -R -n 3000000 -C cubic $TCPWISE_PEER"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    for (i, d) in ["up", "down"].iter().enumerate() {
        let st = &s["directions"][i];
        let delivered = st["delivered_packets"].as_u64().unwrap();
        let bytes = st["delivered_bytes"].as_u64().unwrap();
        // tcpdump reads the capture: one record per delivered packet.
        let td = std::process::Command::new("tcpdump")
            .args(["-nn", "-r"])
            .arg(rec.join(format!("{d}.pcap")))
            .output()
            .unwrap();
        assert!(
            td.status.success(),
            "{}",
            String::from_utf8_lossy(&td.stderr)
        );
        let lines = String::from_utf8_lossy(&td.stdout).lines().count() as u64;
        assert_eq!(
            lines, delivered,
            "{d}: tcpdump records vs delivered packets"
        );
        // The log's departures add up to the delivered bytes; every line
        // is one Mahimahi's scripts accept (or a comment they skip).
        let log = std::fs::read_to_string(rec.join(format!("{d}.log"))).unwrap();
        assert!(
            log.lines()
                .nth(1)
                .unwrap()
                .starts_with("# base timestamp: ")
        );
        let mut departed = 0;
        for l in log.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(matches!(f[1], "+" | "#" | "-"), "{l}");
            assert!(
                f[0].parse::<u64>().is_ok() && f[2].parse::<u64>().is_ok(),
                "{l}"
            );
            if f[1] == "-" {
                departed += f[2].parse::<u64>().unwrap();
                assert!(f[3].parse::<u64>().is_ok(), "{l}");
            }
        }
        assert_eq!(departed, bytes, "{d}: departures vs delivered bytes");
    }
    let out = dir.0.join("link.svg");
    let o = tcpwise(&[
        "emu",
        "plot",
        rec.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("queueing delay"));
    // mm-throughput-graph's figures: capacity over the log's span.
    let err = stderr(&o);
    let cap: f64 = err
        .split("down: capacity ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!((cap - 20.0).abs() < 0.2, "{err}");
    // mm-throughput-graph's second figure too.
    assert!(err.contains("p95 signal delay "), "{err}");
    // Without -o, the same SVG on standard output (Mahimahi's scripts' way).
    let o = tcpwise(&["emu", "plot", rec.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), svg);
}

#[test]
fn config_file_round_trips_and_unknown_keys_are_refused() {
    // --print-config sets nothing up: no privileges needed.
    let dir = TempDir::new("config");
    let f = dir.0.join("bed.toml");
    std::fs::write(
        &f,
        "rtt = \"40ms\"\nqueue = \"codel:limit=400KB\"\noutage = [\"1s@30s\"]\n[down]\nrate = \"20mbit\"\n",
    )
    .unwrap();
    let o = tcpwise(&[
        "emu",
        "pair",
        "--config",
        f.to_str().unwrap(),
        "--rtt",
        "80ms",
        "--server",
        "true",
        "--print-config",
        "--",
        "true",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = stdout(&o);
    // The command line overrides the file; everything else comes through.
    for line in [
        "rtt = \"80ms\"",
        "down-rate = \"20mbit\"",
        "queue = \"codel:limit=400KB\"",
        "outage = [\"1s@30s\"]",
        "seed = 1",
    ] {
        assert!(printed.contains(line), "{line} in {printed}");
    }
    // What was printed reads back to itself.
    let g = dir.0.join("printed.toml");
    std::fs::write(&g, &printed).unwrap();
    let o = tcpwise(&[
        "emu",
        "selftest",
        "--config",
        g.to_str().unwrap(),
        "--print-config",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), printed);
    // An unknown key: one line, exit 2, before anything else.
    std::fs::write(&f, "rtt = \"40ms\"\n[down]\nbandwidth = \"1mbit\"\n").unwrap();
    let o = tcpwise(&[
        "emu",
        "pair",
        "--config",
        f.to_str().unwrap(),
        "--server",
        "true",
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("unknown key 'down-bandwidth'"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let o = tcpwise(&["emu", "selftest", "--config", "/nonexistent/bed.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read config"), "{}", stderr(&o));
}

/// Nesting (Mahimahi's `mm-delay 10 mm-delay 20`): a testbed inside a
/// testbed would take the same addresses and lose every packet, so the
/// inner one refuses in one line naming what to do, and the outer passes
/// its exit code on: nothing exits 0 with a dead link.
#[test]
fn a_nested_emu_refuses_in_one_line() {
    if !netns_ok("emu_nested") {
        return;
    }
    let inner = format!("{BIN} emu shell -q --delay 20ms -- ping -c1 -W1 $TCPWISE_PEER");
    let o = tcpwise(&[
        "emu", "shell", "-q", "--delay", "10ms", "--", "sh", "-c", &inner,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.contains("already inside the emulated path"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("20.0 ms up and 20.0 ms down"), "{line}");
}

/// An interactive `emu shell` says where it is in its prompt, as
/// Mahimahi's shells do (`[delay 50 ms]`): PS1 for sh, PROMPT_COMMAND
/// for bash; a command given to run is left alone.
#[test]
fn the_shell_prompt_names_the_emulated_path() {
    if !netns_ok("emu_prompt") {
        return;
    }
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(["emu", "shell", "-q", "--rtt", "100ms", "--rate", "50mbit"])
        .env("SHELL", "/bin/sh")
        .env_remove("PS1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"echo \"PS1=$PS1\"\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "PS1=[emu rtt 100 ms, 50 Mbit/s] $ \n");
}

/// `--meter` prints a live line a second (Mahimahi's meters, as text),
/// `--meter-downlink` the downlink's only; `--no-notice` leaves out the
/// start notice and keeps the summary; `-q` leaves out both.
#[test]
fn meter_lines_and_what_quiet_and_no_notice_leave_out() {
    if !netns_ok("emu_meter") {
        return;
    }
    let run = |flags: &[&str]| {
        let o = tcpwise(
            &[
                &["emu", "shell", "--rtt", "10ms"][..],
                flags,
                &["--", "sleep", "2.3"],
            ]
            .concat(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let e = run(&["--meter", "--no-notice"]);
    let meters: Vec<&str> = e
        .lines()
        .filter(|l| l.starts_with("tcpwise emu meter"))
        .collect();
    assert_eq!(meters.len(), 2, "{e}");
    assert!(
        meters
            .iter()
            .all(|l| l.contains(" up ") && l.contains("| down ")),
        "{e}"
    );
    assert!(!e.contains("every testbed namespace gets"), "{e}");
    // The summary comes last, after the meter's lines.
    assert!(
        e.lines().last().unwrap().starts_with("tcpwise emu down:"),
        "{e}"
    );
    let e = run(&["--meter-downlink"]);
    assert!(e.contains("every testbed namespace gets"), "{e}");
    let m = e
        .lines()
        .find(|l| l.starts_with("tcpwise emu meter"))
        .unwrap();
    assert!(m.contains("down") && !m.contains(" up "), "{m}");
    assert_eq!(run(&["-q"]), "");
}
