//! `tcpwise dispatch aio` and the io-uring network model end to end: a
//! run prints the summary the issue names and leaves a verified file; bad
//! input, a filesystem refusing O_DIRECT and a full disk each get one line,
//! the documented exit code, and no half-written file.

use crate::common::*;
use std::process::Command;

fn uring_ok(test: &str) -> bool {
    let dir = TempDir::new("aio-probe");
    let f = dir.0.join("p.dat");
    let o = tcpwise(&[
        "dispatch",
        "aio",
        "--file",
        f.to_str().unwrap(),
        "--size",
        "1MiB",
        "-t",
        "50ms",
        "--clients",
        "1",
    ]);
    if o.status.code() != Some(3) {
        return true;
    }
    let why = stderr(&o);
    if std::env::var("TCPWISE_REQUIRE_IO_URING").as_deref() == Ok("1") {
        panic!("TCPWISE_REQUIRE_IO_URING=1 but {why}");
    }
    eprintln!("skipping {test}: {why}");
    false
}

fn root(test: &str) -> bool {
    let ok = tcpwise_sys::euid() == 0 && Command::new("unshare").arg("--version").output().is_ok();
    if !ok {
        if std::env::var("TCPWISE_REQUIRE_NETNS").as_deref() == Ok("1") {
            panic!("TCPWISE_REQUIRE_NETNS=1 but {test} needs root and unshare(1) to mount");
        }
        eprintln!("skipping {test}: needs root and unshare(1) to mount a scratch filesystem");
    }
    ok
}

#[test]
fn a_run_prints_the_summary_and_verifies_the_file() {
    if !uring_ok("a_run_prints_the_summary_and_verifies_the_file") {
        return;
    }
    let dir = TempDir::new("aio-run");
    let f = dir.0.join("data.dat");
    let fs = f.to_str().unwrap();
    for (model, skew) in [
        ("shared", "uniform"),
        ("segments:4", "zipf:0.99"),
        ("sync", "uniform"),
    ] {
        let o = tcpwise(&[
            "dispatch",
            "aio",
            "--model",
            model,
            "--clients",
            "16",
            "--threads",
            "2",
            "-t",
            "300ms",
            "--skew",
            skew,
            "--file",
            fs,
            "--size",
            "4MiB",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{model}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let s = &v["summary"];
        for k in ["tps", "p50_ms", "p99_ms", "max_ms", "inflight_peak"] {
            assert!(s[k].as_f64().is_some(), "{model}: no {k} in {v}");
        }
        assert!(s["tps"].as_f64().unwrap() > 0.0, "{v}");
        assert_eq!(s["per_thread_completions"].as_array().unwrap().len(), 2);
        assert_eq!(s["verified_pages"], 256);
        assert_eq!(s["model"], model);
        assert_eq!(s["fsync"], false);
    }
    // Text output says what it measured and that the file was checked.
    let o = tcpwise(&[
        "dispatch", "aio", "--file", fs, "--size", "4MiB", "-t", "200ms",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("tps") && out.contains("all 256 pages verified"),
        "{out}"
    );
    // Only the data file is there: no partial leftovers.
    let names: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("data.dat")]);
}

#[test]
fn bad_input_is_one_line_and_the_right_exit_code() {
    let dir = TempDir::new("aio-bad");
    let notours = dir.0.join("notours.dat");
    std::fs::write(&notours, vec![1u8; 1 << 20]).unwrap();
    let n = notours.to_str().unwrap();
    for (args, code, needle) in [
        (vec!["--model", "iocp"], 2, "unknown file-I/O model 'iocp'"),
        (vec!["--model", "segments:0"], 2, "slot count"),
        (vec!["--clients", "0"], 2, "--clients must be from 1"),
        (vec!["--threads", "0"], 2, "--threads must be from 1"),
        (vec!["--skew", "zipf:0"], 2, "zipf:S"),
        (vec!["--size", "1000"], 2, "--size 1000"),
        (
            vec!["--file", n, "--size", "1MiB"],
            2,
            "not a tcpwise page; refusing to overwrite",
        ),
        (
            vec!["--file", n, "--size", "2MiB"],
            2,
            "remove it or pass --size",
        ),
    ] {
        let o = tcpwise(&[&["dispatch", "aio"][..], &args].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        let errors = err.lines().filter(|l| l.contains("error")).count();
        assert_eq!(errors, 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(std::fs::read(&notours).unwrap(), vec![1u8; 1 << 20]);
    // --json failures are JSON too.
    let o = tcpwise(&["dispatch", "aio", "--clients", "0", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["exit_code"], 2);
}

/// Runs `tcpwise dispatch aio ARGS` with `fs` mounted on a scratch
/// directory in a private mount namespace (gone when the shell exits), and
/// lists the directory afterwards.
fn on_mounted(fs: &str, args: &str) -> (Option<i32>, String, String) {
    let dir = TempDir::new("aio-mnt");
    let d = dir.0.display();
    let o = Command::new("unshare")
        .args([
            "-m",
            "sh",
            "-c",
            &format!("mount {fs} {d} || exit 99; {BIN} dispatch aio --file {d}/x.dat {args}; rc=$?; ls -A {d} >&2; exit $rc"),
        ])
        .output()
        .unwrap();
    (o.status.code(), stdout(&o), stderr(&o))
}

#[test]
fn a_filesystem_refusing_o_direct_is_named_and_nothing_is_left() {
    if !root("a_filesystem_refusing_o_direct_is_named_and_nothing_is_left") {
        return;
    }
    // ramfs has no direct I/O at all.
    let (code, _, err) = on_mounted("-t ramfs none", "--size 1MiB -t 100ms");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--file") && err.contains("refuses O_DIRECT"),
        "{err}"
    );
    // The directory listing (one name a line) must be empty.
    let left: Vec<&str> = err.lines().filter(|l| l.starts_with("x.")).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_full_disk_is_one_line_and_no_partial_file() {
    if !root("a_full_disk_is_one_line_and_no_partial_file") {
        return;
    }
    let (code, _, err) = on_mounted("-t tmpfs -o size=1m none", "--size 4MiB -t 100ms");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no space left"), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("tcpwise: error"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    // The directory listing (one name a line) must be empty.
    let left: Vec<&str> = err.lines().filter(|l| l.starts_with("x.")).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn the_io_uring_network_model_serves_1024_clients() {
    if !uring_ok("the_io_uring_network_model_serves_1024_clients") {
        return;
    }
    let (child, line) = spawn_announcing(&[
        "dispatch",
        "server",
        "--model",
        "io-uring",
        "--bind",
        "127.0.0.1:0",
    ]);
    let _guard = KillOnPanic(child.id() as i32);
    assert!(line.contains("io-uring model"), "{line}");
    let port = line.rsplit(':').next().unwrap().to_string();
    let target = format!("127.0.0.1:{port}");
    for clients in ["4", "1024"] {
        let o = tcpwise(&[
            "dispatch",
            "load",
            &target,
            "--clients",
            clients,
            "-t",
            "500ms",
            "--warmup",
            "300ms",
            "--json",
        ]);
        assert!(o.status.success(), "{clients}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["requests"].as_u64().unwrap() > 4, "{v}");
        assert_eq!(v["errors"], 0, "{v}");
    }
    tcpwise_sys::kill(child.id() as i32, libc::SIGTERM);
    let mut child = child;
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
