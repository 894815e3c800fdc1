//! `tcpwise lab sweep` and `lab merge`: bad matrices refused in one line
//! with nothing run; `examples/sweep-small.toml` killed with SIGKILL
//! part-way and resumed (every cell once, no partial file, no namespace
//! left), run as two shards and merged, and as a Slurm job array on a
//! one-host Slurm; the Kubernetes Indexed Job manifest validated against
//! the API's schemas.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn small() -> PathBuf {
    root().join("examples/sweep-small.toml")
}

/// The ids `--list` prints for a matrix.
fn listed(matrix: &Path, extra: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["lab", "sweep", matrix.to_str().unwrap(), "--list"];
    args.extend_from_slice(extra);
    let o = tcpwise(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .filter(|l| l.contains("  | emu pair "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// The ids in DIR/cells, checking each file is a whole record.
fn cells_in(dir: &Path) -> Vec<String> {
    let mut ids = Vec::new();
    for e in std::fs::read_dir(dir.join("cells")).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|err| panic!("{}: not whole: {err}", e.path().display()));
        let id = v["cell"]["id"].as_str().unwrap().to_string();
        assert_eq!(
            e.file_name().to_string_lossy(),
            format!("{id}.json"),
            "file named after its cell"
        );
        ids.push(id);
    }
    ids.sort();
    ids
}

fn no_tmp_left(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir.join("tmp"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

fn one_line_exit_2(o: &std::process::Output, wants: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(wants), "wanted {wants:?} in {err}");
}

#[test]
fn bad_matrices_and_merges_are_refused_in_one_line_and_nothing_runs() {
    let dir = TempDir::new("sweep-bad");
    let out = dir.0.join("out");
    let text = std::fs::read_to_string(small()).unwrap();
    let m = dir.0.join("typo.toml");
    // Writes the matrix, runs it into `out`, wants one line and exit 2.
    let refused = |matrix: &str, wants: &str| {
        std::fs::write(&m, matrix).unwrap();
        let (m, o) = (m.to_str().unwrap(), out.to_str().unwrap());
        one_line_exit_2(&tcpwise(&["lab", "sweep", m, "--out", o]), wants);
    };
    let line = text.lines().position(|l| l == "rate = \"16mbit\"").unwrap() + 2;
    let typo = text.replace("rate = \"16mbit\"", "rate = \"16mbit\"\nrat = 3");
    refused(&typo, &format!("typo.toml:{line}: unknown key 'rat'"));
    let o = tcpwise(&["lab", "sweep", m.to_str().unwrap(), "--list"]);
    one_line_exit_2(&o, "unknown key 'rat'");
    // A workload key the matrix does not have, and a tool flag the tool refuses.
    refused(
        &text.replace("tool = \"perf\"", "tool = \"perf\"\nflags = []"),
        "unknown field 'flags'",
    );
    refused(
        &text.replace("\"-C\", \"cubic\"", "\"-C\", \"cubic\", \"--frobnicate\""),
        "--frobnicate",
    );
    refused(
        "repetitions = 3\n[paths.a]\nrtt = \"10ms\"\n",
        "expands to zero cells",
    );
    // clap's own usage error: its line, then its hint to try --help.
    let o = tcpwise(&["lab", "sweep", small().to_str().unwrap(), "--shard", "3/2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .lines()
            .next()
            .unwrap()
            .contains("--shard takes K/N")
    );
    assert!(!out.exists(), "nothing written");
    // Shards of two matrices: headers as `lab sweep` writes them.
    let header = |d: &Path, fp: &str| {
        std::fs::create_dir_all(d.join("cells")).unwrap();
        let h = serde_json::json!({"fingerprint": fp, "version": "v", "matrix": "m.toml",
            "cells_total": 2, "shard": "1/2", "cells": ["a-r1"]});
        std::fs::write(d.join("sweep.json"), h.to_string()).unwrap();
    };
    let (a, b) = (dir.0.join("a"), dir.0.join("b"));
    header(&a, "00000000000000aa");
    header(&b, "00000000000000bb");
    let o = tcpwise(&[
        "lab",
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    one_line_exit_2(&o, "hold different matrices");
    let o = tcpwise(&[
        "lab",
        "merge",
        dir.0.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    one_line_exit_2(&o, "no sweep.json");
    assert!(!out.exists(), "nothing written");
}

#[test]
fn the_kubernetes_manifest_validates_and_its_matrix_expands() {
    if !tool_ok("kubernetes manifest", "kubernetes-validate") {
        return;
    }
    let manifest = root().join("deploy/k8s/sweep-job.yaml");
    let o = Command::new("kubernetes-validate")
        .args(["--strict", manifest.to_str().unwrap()])
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&o), stderr(&o));
    eprintln!("{said}");
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains("passed for resource job/tcpwise-sweep"),
        "{said}"
    );
    // The validator is not vacuous: a misspelt field fails.
    let dir = TempDir::new("sweep-k8s");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let bad = dir.0.join("bad.yaml");
    std::fs::write(&bad, text.replace("completionMode:", "completionMod:")).unwrap();
    let o = Command::new("kubernetes-validate")
        .args(["--strict", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!o.status.success(), "a misspelt field must fail");
    // The ConfigMap's matrix is a matrix, sharded as the pods shard it.
    let start = text.find("matrix.toml: |\n").unwrap() + "matrix.toml: |\n".len();
    let matrix: String = text[start..]
        .lines()
        .take_while(|l| l.starts_with("    "))
        .map(|l| format!("{}\n", &l[4..]))
        .collect();
    let m = dir.0.join("matrix.toml");
    std::fs::write(&m, matrix).unwrap();
    assert!(text.contains("completions: 4") && text.contains("JOB_COMPLETION_INDEX + 1))/4"));
    let all = listed(&m, &[]);
    let mut union = BTreeSet::new();
    for k in 1..=4 {
        union.extend(listed(&m, &["--shard", &format!("{k}/4")]));
    }
    assert_eq!(union, all);
}

/// Pids of `pid`'s children now.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so after ')'.
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        if after.split_whitespace().nth(1) == Some(&pid.to_string()) {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_sweep_killed_with_sigkill_resumes_with_every_cell_once_and_nothing_left() {
    if !netns_ok("sweep kill -9") {
        return;
    }
    let dir = TempDir::new("sweep-kill");
    let out = dir.0.join("out");
    let want = listed(&small(), &[]);
    // Two at a time, so the kill lands with cells done and cells in flight.
    let mut sweep = Command::new(BIN)
        .args(["lab", "sweep", small().to_str().unwrap(), "--jobs", "2"])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A point drawn from the clock: after the first cells and before the last.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let at = Duration::from_millis(4_000 + u64::from(nanos % 6_000));
    let started = Instant::now();
    let mut emus = BTreeSet::new();
    while started.elapsed() < at {
        emus.extend(children(sweep.id()));
        std::thread::sleep(Duration::from_millis(50));
    }
    sweep.kill().unwrap();
    sweep.wait().unwrap();
    let before = cells_in(&out);
    eprintln!(
        "killed at {:.1} s with {} cells written; cells' emulators seen: {}",
        at.as_secs_f64(),
        before.len(),
        emus.len()
    );
    assert!(before.len() < want.len(), "killed part-way");
    // Each cell's emulator tears its testbed down when the sweep dies.
    let until = Instant::now() + Duration::from_secs(10);
    for pid in &emus {
        while !leftovers(*pid).is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            leftovers(*pid).is_empty(),
            "emulator {pid} left {:?}",
            leftovers(*pid)
        );
    }
    let o = tcpwise(&[
        "lab",
        "sweep",
        small().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    one_line_exit_2(&o, "--resume");
    let o = tcpwise(&[
        "lab",
        "sweep",
        small().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
        "--jobs",
        "2",
    ]);
    let err = stderr(&o);
    eprintln!("{err}");
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("{} done", before.len())), "{err}");
    let after = cells_in(&out);
    assert_eq!(after.iter().cloned().collect::<BTreeSet<_>>(), want);
    assert_eq!(after.len(), want.len(), "every cell exactly once");
    no_tmp_left(&out);
    let results = results_of(&out);
    assert_eq!(results["summary"]["cells_present"], want.len());
    for c in results["cells"].as_array().unwrap() {
        assert_eq!(c["ok"], true, "{c}");
        assert!(c["figure"].as_f64().unwrap() > 1.0, "{c}");
        assert!(c["steal_pct"].is_number() && c["lateness_p99_us"][1].is_number());
    }
}

/// A sweep's `results.json`.
fn results_of(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
}

/// Runs `matrix` into `out`, which must succeed, and reads its results.
fn swept(matrix: &Path, out: &Path) -> serde_json::Value {
    let (m, o) = (matrix.to_str().unwrap(), out.to_str().unwrap());
    let run = tcpwise(&["lab", "sweep", m, "--out", o]);
    let err = stderr(&run);
    eprintln!("{err}");
    assert!(run.status.success(), "{err}");
    results_of(out)
}

fn merged_ids(out: &Path) -> BTreeSet<String> {
    let results = results_of(out);
    assert_eq!(results["summary"]["missing"].as_array().unwrap().len(), 0);
    results["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cell"]["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn two_shards_merge_into_the_whole_matrix() {
    if !netns_ok("sweep shards") {
        return;
    }
    let dir = TempDir::new("sweep-shards");
    let want = listed(&small(), &[]);
    let mut shard_dirs = Vec::new();
    for k in 1..=2 {
        let d = dir.0.join(format!("shard-{k}"));
        let o = tcpwise(&[
            "lab",
            "sweep",
            small().to_str().unwrap(),
            "--shard",
            &format!("{k}/2"),
            "--out",
            d.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            cells_in(&d).into_iter().collect::<BTreeSet<_>>(),
            listed(&small(), &["--shard", &format!("{k}/2")])
        );
        shard_dirs.push(d);
    }
    let out = dir.0.join("merged");
    let o = tcpwise(&[
        "lab",
        "merge",
        shard_dirs[0].to_str().unwrap(),
        shard_dirs[1].to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    eprintln!("{}", stdout(&o));
    assert!(stdout(&o).contains("merged 8 of 8 cells (shards: 1/2, 2/2); 0 missing"));
    assert_eq!(merged_ids(&out), want);
    // One shard of two is an incomplete merge: it says which, exits 1.
    let half = dir.0.join("half");
    let o = tcpwise(&[
        "lab",
        "merge",
        shard_dirs[0].to_str().unwrap(),
        "--out",
        half.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("merged 4 of 8 cells (shards: 1/2); 4 missing (shard 2/2 not given)"),
        "{}",
        stdout(&o)
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("8 of 8 cells, shards 1/2, 2/2 merged"),
        "{report}"
    );
    assert!(out.join("index.html").exists());
    // The same shard twice is refused.
    let again = tcpwise(&[
        "lab",
        "merge",
        shard_dirs[0].to_str().unwrap(),
        shard_dirs[0].to_str().unwrap(),
        "--out",
        dir.0.join("twice").to_str().unwrap(),
    ]);
    one_line_exit_2(&again, "one shard run twice");
}

#[test]
fn a_slurm_job_array_runs_the_shards_and_they_merge() {
    if !netns_ok("sweep on slurm")
        || !tool_ok("sweep on slurm", "slurmctld")
        || !tool_ok("sweep on slurm", "munged")
    {
        return;
    }
    let dir = TempDir::new("sweep-slurm");
    let out = dir.0.join("out");
    let o = Command::new(root().join("scripts/slurm-one-host"))
        .args(["sbatch", "--wait", "--array=1-2", "--chdir"])
        .arg(&dir.0)
        .arg(root().join("deploy/slurm/sweep.sbatch"))
        .arg(small())
        .arg(&out)
        .env("TCPWISE", BIN)
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&o), stderr(&o));
    // The tasks' own output, for the log.
    for e in std::fs::read_dir(&dir.0).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".out") {
            eprintln!(
                "{}:\n{}",
                e.path().display(),
                std::fs::read_to_string(e.path()).unwrap()
            );
        }
    }
    assert!(o.status.success(), "{said}");
    let merged = dir.0.join("merged");
    let o = tcpwise(&[
        "lab",
        "merge",
        out.join("shard-1").to_str().unwrap(),
        out.join("shard-2").to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(merged_ids(&merged), listed(&small(), &[]));
}

#[test]
fn rpm_and_get_cells_record_their_tools_figures() {
    if !netns_ok("sweep rpm and get") {
        return;
    }
    let dir = TempDir::new("sweep-tools");
    let m = dir.0.join("tools.toml");
    std::fs::write(
        &m,
        "[paths.dsl]\nrtt = \"40ms\"\nrate = \"20mbit\"\n\
         [workloads.rpm]\ntool = \"rpm\"\nargs = [\"--direction\", \"down\", \"--max-duration\", \"4\"]\n\
         server = [\"-C\", \"cubic\"]\n\
         [workloads.page]\ntool = \"get\"\nargs = [\"/bytes/200000\"]\n",
    )
    .unwrap();
    let out = dir.0.join("out");
    let results = swept(&m, &out);
    for c in results["cells"].as_array().unwrap() {
        let (unit, fig) = (c["unit"].as_str().unwrap(), c["figure"].as_f64().unwrap());
        match c["cell"]["tool"].as_str().unwrap() {
            // 200 KB at 20 Mbit/s / 40 ms: at least the 80 ms of bytes
            // and two round trips, well under 10 s.
            "get" => assert!(unit == "ms" && (150.0..10_000.0).contains(&fig), "{c}"),
            "rpm" => {
                assert!(unit == "RPM" && fig > 10.0, "{c}");
                // An rpm cell runs alone: latency under load is its figure.
                assert_eq!(c["running_max"], 1, "{c}");
                assert!(c["tool"]["phases"].is_array());
            }
            t => panic!("tool {t}"),
        }
    }
}

/// A matrix of one two-host topology whose bottleneck queue varies.
const TOPOLOGY: &str = r#"
[vary]
queue = ["0.5bdp", "8bdp"]
[workloads.bulk]
tool = "perf"
args = ["-t", "4"]
[topologies.mix]
[topologies.mix.bottleneck]
rate = "20mbit"
[[topologies.mix.host]]
name = "bbr"
rtt = "40ms"
command = "BIN perf client -C bbr -t 4 $TCPWISE_PEER > /dev/null"
[[topologies.mix.host]]
name = "other"
rtt = "40ms"
"#;

#[test]
fn a_topology_sweeps_as_a_path_does_its_figure_the_first_hosts_share() {
    let dir = TempDir::new("sweep-topology");
    let m = dir.0.join("top.toml");
    std::fs::write(&m, TOPOLOGY.replace("BIN", BIN)).unwrap();
    // Refused in one line, with nothing run: what emu dumbbell refuses,
    // and a workload whose tool times one client.
    let bad = dir.0.join("bad.toml");
    let out = dir.0.join("out");
    for (text, wants) in [
        (
            TOPOLOGY.replace("name = \"other\"", "name = \"bbr\""),
            "topology 'mix': two hosts are named 'bbr'",
        ),
        (
            TOPOLOGY.replace("tool = \"perf\"\nargs = [\"-t\", \"4\"]", "tool = \"rpm\""),
            "a topology's hosts run perf workloads only",
        ),
        (
            format!("{TOPOLOGY}[paths.mix]\nrtt = \"1ms\"\n"),
            "'mix' names a path and a topology",
        ),
    ] {
        std::fs::write(&bad, text).unwrap();
        let o = tcpwise(&[
            "lab",
            "sweep",
            bad.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        one_line_exit_2(&o, wants);
        assert!(!out.exists());
    }
    let o = tcpwise(&["lab", "sweep", m.to_str().unwrap(), "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o)
            .matches("| emu dumbbell, 2 hosts, figure: share")
            .count(),
        2
    );
    if !netns_ok("sweep topology") {
        return;
    }
    let results = swept(&m, &out);
    let cells = results["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for c in cells {
        let share = c["figure"].as_f64().unwrap();
        assert!(c["unit"] == "share" && (0.0..=1.0).contains(&share), "{c}");
        assert_eq!(c["running_max"], 1, "{c}");
        // Both hosts' flows were counted at the bottleneck, the varied
        // queue and the cell's seed on it.
        assert_eq!(
            c["emu"]["shares"][0]["from"].as_array().unwrap().len(),
            2,
            "{c}"
        );
        let topo = c["cell"]["topology"]["toml"].as_str().unwrap();
        let queue = &c["cell"]["vary"][0][1];
        assert!(
            topo.contains(&format!("queue = {queue}")) && topo.contains("seed = "),
            "{topo}"
        );
    }
    no_tmp_left(&out);
}
