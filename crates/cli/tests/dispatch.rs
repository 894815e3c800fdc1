//! `tcpwise dispatch server|load` end to end on loopback: every model
//! answers the load, exits 0 on SIGTERM, and bad
//! input gets one line and the documented exit code.

use crate::common::*;

fn port_of(line: &str) -> String {
    line.rsplit(':').next().unwrap().to_string()
}

#[test]
fn each_model_serves_the_load_and_reports_on_sigterm() {
    for model in ["shared", "segments", "segments:4", "tokio"] {
        let (child, line) = spawn_announcing(&[
            "dispatch",
            "server",
            "--model",
            model,
            "--bind",
            "127.0.0.1:0",
        ]);
        let _guard = KillOnPanic(child.id() as i32);
        assert!(line.contains(model.split(':').next().unwrap()), "{line}");
        let target = format!("127.0.0.1:{}", port_of(&line));
        let o = tcpwise(&[
            "dispatch",
            "load",
            &target,
            "--clients",
            "16",
            "-t",
            "300ms",
            "--warmup",
            "100ms",
            "--json",
        ]);
        assert!(o.status.success(), "{model}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["requests"].as_u64().unwrap() > 16, "{model}: {v}");
        assert_eq!(v["errors"], 0, "{model}: {v}");
        tcpwise_sys::kill(child.id() as i32, libc::SIGTERM);
        let mut child = child;
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{model}");
    }
}

#[test]
fn bad_input_is_one_line_and_the_right_exit_code() {
    for (args, code, needle) in [
        (
            vec!["dispatch", "server", "--model", "iocp"],
            2,
            "unknown dispatch model",
        ),
        (vec!["dispatch", "server", "--workers", "0"], 2, "--workers"),
        (
            vec!["dispatch", "load", "127.0.0.1:1", "--clients", "0"],
            2,
            "--clients",
        ),
        (
            vec!["dispatch", "load", "127.0.0.1:1", "--long-fraction", "2"],
            2,
            "a probability lies between 0% and 100%",
        ),
        (
            vec!["dispatch", "load", "127.0.0.1:1", "-t", "fast"],
            2,
            "-t",
        ),
        (
            vec!["dispatch", "load", "127.0.0.1:1", "-t", "100ms"],
            1,
            "cannot connect to 127.0.0.1:1",
        ),
    ] {
        let o = tcpwise(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
