//! `tcpwise lab` end to end: what it refuses before setting anything up,
//! and what an interrupted run keeps and leaves behind (nothing). The
//! experiments' figures come from `tcpwise lab` itself, not tests.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn lab_interrupted_keeps_finished_results_and_leaves_nothing() {
    if !netns_ok("lab_interrupt") {
        return;
    }
    let dir = TempDir::new("lab");
    let child = Command::new(BIN)
        .args([
            "lab",
            // Cold-start runs alone, after buffers: interrupted while it
            // runs, buffers' results are on disk.
            "buffers",
            "cold-start",
            "--runs",
            "1",
            "--rtt",
            "20ms",
            "--rate",
            "20mbit",
            "--out",
        ])
        .arg(&dir.0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the first experiment's results are on disk, then Ctrl-C.
    let results = dir.0.join("results.json");
    // Generous: beside the other tests in one binary on 2 cores this has
    // taken over 60 s (CI, 2 Dec); alone it takes about 30.
    let until = std::time::Instant::now() + Duration::from_secs(180);
    while !results.exists() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(results.exists(), "buffers finished");
    std::thread::sleep(Duration::from_millis(1500));
    tcpwise_sys::kill(pid as i32, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("finished experiments are in"),
        "{}",
        stderr(&o)
    );
    assert_eq!(leftovers(pid), Vec::<String>::new());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    assert!(
        v["experiments"]["buffers"]["summary"]["static_mbit"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(dir.0.join("report.md").exists() && dir.0.join("index.html").exists());
    // `lab report DIR` rebuilds both pages from results.json alone, byte for byte.
    let (md, html) = (dir.0.join("report.md"), dir.0.join("index.html"));
    let before = (std::fs::read(&md).unwrap(), std::fs::read(&html).unwrap());
    std::fs::remove_file(&md).unwrap();
    std::fs::remove_file(&html).unwrap();
    let o = Command::new(BIN)
        .args(["lab", "report"])
        .arg(&dir.0)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&md).unwrap() == before.0, "report.md differs");
    assert!(
        std::fs::read(&html).unwrap() == before.1,
        "index.html differs"
    );
    let o = Command::new(BIN)
        .args(["lab", "report"])
        .arg(dir.0.join("no-such-run"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn lab_sigterm_during_parallel_testbeds_exits_143_and_leaves_nothing() {
    if !netns_ok("lab_sigterm") {
        return;
    }
    let dir = TempDir::new("lab-term");
    // An earlier run's results must not pass for this one's.
    std::fs::write(dir.0.join("results.json"), "{}").unwrap();
    let child = Command::new(BIN)
        .args(["lab", "idle-selection", "--quick", "--runs", "1", "--out"])
        .arg(&dir.0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Both idle-selection testbeds (=0 and =1) are up after a second or two.
    // Generous for a loaded machine (20 s was not enough in CI, 2 Dec).
    let until = std::time::Instant::now() + Duration::from_secs(90);
    while leftovers(pid).len() < 4 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        leftovers(pid).len() >= 4,
        "two testbeds came up: {:?}",
        leftovers(pid)
    );
    tcpwise_sys::kill(pid as i32, libc::SIGTERM);
    let t0 = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143));
    // The decisive round had ended when the extras' testbeds came up:
    // its interval is kept (valid at any stop), and the stale results
    // are gone.
    assert!(
        stderr(&o).contains("finished experiments are in"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.0.join("results.json")).unwrap())
            .unwrap();
    let decision = &v["experiments"]["idle_selection"]["decision"];
    assert_eq!(decision["rounds"], 1, "{decision}");
    assert!(
        decision["parts"][0]["estimate"].as_f64().is_some(),
        "{decision}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "took {:?}",
        t0.elapsed()
    );
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
fn lab_refuses_bad_requests_before_setting_anything_up() {
    let dir = TempDir::new("lab-bad");
    let out = dir.0.join("out");
    for (args, needle) in [
        (vec!["lab", "nosuch"], "unknown experiment 'nosuch'"),
        (vec!["lab", "--runs", "0"], "at least 1"),
        (vec!["lab", "--rate", "20mbps"], "ambiguous"),
        (vec!["lab", "--rtt", "fast"], "--rtt"),
        (vec!["lab", "--budget", "20s"], "too small for one round"),
        (
            vec!["lab", "buffers", "--budget", "10s"],
            "needs --budget 18 s or more",
        ),
        (
            vec!["lab", "--budget", "5m", "--runs", "3"],
            "cannot be used with",
        ),
        (vec!["lab", "--budget", "soon"], "--budget"),
    ] {
        let mut a = args.clone();
        a.extend(["--out", out.to_str().unwrap()]);
        let o = tcpwise(&a);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} created the output directory");
    }
}

/// `lab --help` names every experiment it describes in the EXPERIMENT
/// argument's list too (that list once left out `sharing`, which runs by
/// default).
#[test]
fn lab_help_lists_every_experiment_it_describes() {
    let out = Command::new(BIN).args(["lab", "--help"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let (args, rest) = text.split_once("Options:").expect("an options section");
    let args = args.split_whitespace().collect::<Vec<_>>().join(" ");
    let described: Vec<&str> = rest
        .split_once("Experiments (")
        .expect("the experiments section")
        .1
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(described.len() >= 8, "{described:?}");
    for name in described {
        assert!(
            args.contains(&format!("{name},")) || args.contains(&format!("{name}.")),
            "the EXPERIMENT list leaves out {name}: {args}"
        );
    }
}
