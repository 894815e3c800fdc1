//! `tcpwise emu pair --testbeds N`: many testbeds in one process, their
//! packets carried by one forwarder thread per core. Each testbed must
//! stay a testbed of its own (its client reaches its own server, its
//! statistics are its own), and the whole stops as one.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn testbeds_in_one_process_each_reach_their_own_server() {
    if !netns_ok("testbeds_curl")
        || !tool_ok("testbeds_curl", "curl")
        || !tool_ok("testbeds_curl", "python3")
    {
        return;
    }
    let dir = TempDir::new("testbeds");
    let d = dir.0.display();
    let stats = dir.0.join("stats.json");
    // Every server serves a file naming its testbed; every client fetches
    // it from the one peer address all testbeds share (198.18.0.2).
    let server = format!(
        "mkdir -p {d}/s$TCPWISE_TESTBED && echo served-by-$TCPWISE_TESTBED > {d}/s$TCPWISE_TESTBED/id && cd {d}/s$TCPWISE_TESTBED && exec python3 -m http.server 8080 --bind 198.18.0.2"
    );
    let client = format!(
        "curl -sS --max-time 20 http://$TCPWISE_PEER:8080/id > {d}/c$TCPWISE_TESTBED || exit 9; test $TCPWISE_TESTBED != 2 || exit 5"
    );
    let child = Command::new(BIN)
        .args([
            "emu",
            "pair",
            "--testbeds",
            "3",
            "--rtt",
            "20ms",
            "--rate",
            "10mbit",
            "--no-notice",
            "--stats-json",
            stats.to_str().unwrap(),
            "--server",
            &server,
            "--wait-port",
            "8080",
            "--",
            "sh",
            "-c",
            &client,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    // The first nonzero status, in testbed order.
    assert_eq!(o.status.code(), Some(5), "{err}");
    for k in 0..3 {
        let got = std::fs::read_to_string(dir.0.join(format!("c{k}"))).unwrap_or_default();
        assert_eq!(got.trim(), format!("served-by-{k}"), "testbed {k}: {err}");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(3);
    assert!(
        err.contains(&format!(
            "3 testbeds, their packets carried by {threads} forwarder thread(s)"
        )),
        "{err}"
    );
    if threads < 3 {
        // A thread carrying two testbeds says so beside its CPU.
        assert!(err.contains("(one thread for 2 testbeds"), "{err}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let beds = v["testbeds"].as_array().expect("testbeds");
    assert_eq!(beds.len(), 3);
    for (k, b) in beds.iter().enumerate() {
        assert_eq!(b["testbed"], k);
        assert_eq!(b["exit"], if k == 2 { 5 } else { 0 }, "{b}");
        let dirs = b["directions"].as_array().unwrap();
        assert_eq!(dirs[0]["direction"], "up");
        assert_eq!(dirs[1]["direction"], "down");
        // Each testbed carried its own handshake, request and response.
        for d in dirs {
            let n = d["delivered_packets"].as_u64().unwrap();
            assert!((3..200).contains(&n), "testbed {k} {}: {n}", d["direction"]);
            assert!(d["failure"].is_null(), "{d}");
        }
    }
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
fn testbeds_stop_together_on_sigterm_and_leave_nothing() {
    if !netns_ok("testbeds_sigterm") || !tool_ok("testbeds_sigterm", "python3") {
        return;
    }
    let args = [
        "emu",
        "pair",
        "--testbeds",
        "4",
        "--rtt",
        "10ms",
        "-q",
        "--server",
        "exec python3 -m http.server 8080 --bind 198.18.0.2",
        "--wait-port",
        "8080",
        "--",
        "sleep",
        "60",
    ];
    // Every server up and every client started first.
    signal_testbed(&args, Duration::from_secs(3), libc::SIGTERM, 143);
}

#[test]
fn testbeds_refuse_what_records_one_testbed() {
    for (args, want) in [
        (
            vec!["--testbeds", "2", "--pcap", "/tmp"],
            "--testbeds 2: --log, --pcap and --meter record one testbed",
        ),
        (
            vec!["--testbeds", "3", "--meter"],
            "--testbeds 3: --log, --pcap and --meter record one testbed",
        ),
        (vec!["--testbeds", "0"], "0 is not in 1..=256"),
        (
            vec!["--testbeds", "2", "--forwarder-threads", "2"],
            "--testbeds 2: the testbeds share one forwarder thread per core",
        ),
    ] {
        let mut all = vec!["emu", "pair", "--rtt", "10ms"];
        all.extend(args.iter());
        all.extend(["--server", "true", "--", "true"]);
        let o = tcpwise(&all);
        let err = stderr(&o);
        assert!(!o.status.success(), "{all:?}");
        assert!(err.contains(want), "{all:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
