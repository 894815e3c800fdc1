//! `tcpwise rpm` against `tcpwise serve`, the server side checked with
//! curl (a client that is not ours), and against servers that do not
//! speak the protocol: one line, a nonzero exit, within a time limit.

use crate::common::*;

use std::process::Command;
use std::time::{Duration, Instant};

/// A short test: 2-interval moving averages of 0.5 s, at most 3 s a phase.
const QUICK: &[&str] = &[
    "--mad",
    "2",
    "--interval",
    "500ms",
    "--max-duration",
    "3s",
    "--max-connections",
    "4",
];

fn rpm_json(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["rpm", "--json"];
    a.extend_from_slice(QUICK);
    a.extend_from_slice(args);
    let o = tcpwise(&a);
    assert!(o.status.success(), "rpm {args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("json")
}

#[test]
fn rpm_measures_serve_over_h2_tls_h2c_and_http1() {
    let (_tls, tbase) = serve_loopback(&["--tls"]);
    let (_plain, base) = serve_loopback(&[]);
    for (url, http1) in [(&tbase, false), (&base, false), (&base, true)] {
        let mut args = vec!["-k", url.as_str()];
        if http1 {
            args.push("--http1.1");
        }
        let v = rpm_json(&args);
        assert!(v["tcpwise_version"].is_string());
        assert_eq!(v["http"], if http1 { "HTTP/1.1" } else { "HTTP/2" });
        assert!(
            v["config_url"]
                .as_str()
                .unwrap()
                .ends_with("/.well-known/nq")
        );
        let phases = v["phases"].as_array().unwrap();
        assert_eq!(phases.len(), 1, "bidir is one phase");
        let ph = &phases[0];
        let caps = ph["capacity"].as_array().unwrap();
        assert_eq!(caps.len(), 2, "{url}: both directions loaded");
        for c in caps {
            assert!(c["bytes"].as_u64().unwrap() > 1_000_000, "{url}: {c}");
            assert!(c["flows"].as_u64().unwrap() >= 1);
        }
        let s = &ph["score"];
        assert!(s["rpm"].as_f64().unwrap() > 0.0, "{url}: {s}");
        assert!(s["tcp_ms"].as_f64().unwrap() > 0.0);
        assert!(s["http_ms"].as_f64().unwrap() > 0.0);
        // TLS is timed apart on https only; self probes need HTTP/2.
        assert_eq!(s["tls_ms"].is_number(), url.starts_with("https"), "{s}");
        assert_eq!(s["self_ms"].is_number(), !http1, "{url} http1={http1}: {s}");
        assert!(!ph["rounds"].as_array().unwrap().is_empty());
        assert!(!ph["intervals"].as_array().unwrap().is_empty());
        assert!(v["idle"]["score"]["rpm"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn rpm_text_is_networkquality_summary_and_sequential_runs_both_ways() {
    let (_tls, tbase) = serve_loopback(&["--tls"]);
    let mut a = vec!["rpm", "-k", "-s", tbase.as_str()];
    a.extend_from_slice(QUICK);
    let o = tcpwise(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "==== SUMMARY ====",
        "Uplink capacity: ",
        "Downlink capacity: ",
        "Uplink Responsiveness: ",
        "Downlink Responsiveness: ",
        "Idle Latency: ",
        " RPM",
        "client TCP_NOTSENT_LOWAT auto, congestion control the namespace's default; MAD 2, ID 0.5 s, TMP 95%, SDT 5%, MNP 4, MPS 100, PTC 5%",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    // An interval line per half second while it ran.
    assert!(
        out.lines().filter(|l| l.starts_with('[')).count() >= 4,
        "{out}"
    );
}

#[test]
fn serve_keeps_the_network_quality_server_contract_for_curl() {
    if !tool_ok("rpm_contract", "curl") {
        return;
    }
    let (_s, base) = serve_loopback(&["--tls", "--gzip"]);
    let base = base.replace("127.0.0.1", "localhost");
    let curl = |args: &[&str]| {
        let o = Command::new("curl")
            .args(["-sS", "-k"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "curl {args:?}: {}", stderr(&o));
        o
    };
    for v in ["--http1.1", "--http2"] {
        let cfg = curl(&[v, &format!("{base}/.well-known/nq")]);
        let j: serde_json::Value = serde_json::from_slice(&cfg.stdout).unwrap();
        assert_eq!(j["version"], 1);
        for k in [
            "small_download_url",
            "large_download_url",
            "upload_url",
            "small_https_download_url",
            "large_https_download_url",
            "https_upload_url",
        ] {
            assert!(
                j["urls"][k].as_str().unwrap().starts_with(&base),
                "{k}: {j}"
            );
        }
        let small = curl(&[v, "--compressed", &format!("{base}/nq/small")]);
        assert_eq!(small.stdout.len(), 1);
        // The large object: 200, at least 8 GB, never a content coding
        // (even from `serve --gzip` to a client that accepts gzip).
        let head = curl(&[v, "--compressed", "-I", &format!("{base}/nq/large")]);
        let h = stdout(&head).to_ascii_lowercase();
        assert!(h.contains(" 200"), "{h}");
        assert!(!h.contains("content-encoding"), "{h}");
        let len: u64 = h
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0);
        assert!(len >= 8_000_000_000, "{h}");
        let dir = TempDir::new("up");
        let f = dir.0.join("up");
        std::fs::write(&f, vec![7u8; 3_000_000]).unwrap();
        let up = curl(&[
            v,
            "--data-binary",
            &format!("@{}", f.display()),
            &format!("{base}/nq/upload"),
        ]);
        assert_eq!(stdout(&up).trim(), "received 3000000 bytes");
    }
}

/// One line on stderr, exit status `code`, within `limit`.
fn refuses(args: &[&str], code: i32, limit: Duration, want: &str) {
    let t = Instant::now();
    let o = tcpwise(args);
    let took = t.elapsed();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: want {want:?} in {err}");
    assert!(took < limit, "{args:?} took {took:?}");
}

#[test]
fn rpm_refuses_servers_that_do_not_speak_it_in_one_line() {
    let limit = Duration::from_secs(20);
    // A server with no config (python's http.server: 404).
    let empty = TempDir::new("nq-none");
    let py = python_http(&empty.0);
    let none = format!("http://127.0.0.1:{}", py.port);
    refuses(&["rpm", &none, "--http1.1"], 1, limit, "404");
    // A config that is not JSON, and one whose large URL is relative.
    let bad = TempDir::new("nq-bad");
    std::fs::create_dir_all(bad.0.join(".well-known")).unwrap();
    std::fs::write(bad.0.join(".well-known/nq"), "<html>").unwrap();
    std::fs::write(
        bad.0.join("cfg"),
        r#"{"version":1,"urls":{"small_download_url":"http://127.0.0.1:1/s","large_download_url":"/large","upload_url":"http://127.0.0.1:1/u"}}"#,
    )
    .unwrap();
    let pyb = python_http(&bad.0);
    let b = format!("http://127.0.0.1:{}", pyb.port);
    refuses(&["rpm", &b, "--http1.1"], 1, limit, "not JSON");
    refuses(
        &["rpm", "-C", &format!("{b}/cfg"), "--http1.1"],
        1,
        limit,
        "\"large_download_url\" must be an absolute http(s) URL",
    );
    // A config naming a port where nothing listens.
    let dead = free_port();
    std::fs::write(
        bad.0.join("dead"),
        format!(r#"{{"version":1,"urls":{{"small_download_url":"http://127.0.0.1:{dead}/s","large_download_url":"http://127.0.0.1:{dead}/l","upload_url":"http://127.0.0.1:{dead}/u"}}}}"#),
    )
    .unwrap();
    refuses(
        &["rpm", "-C", &format!("{b}/dead"), "--http1.1"],
        1,
        limit,
        "load",
    );
    // A server that accepts and never answers.
    let stall = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let s = format!("http://{}", stall.local_addr().unwrap());
    refuses(
        &["rpm", &s, "--connect-timeout", "1s"],
        1,
        Duration::from_secs(8),
        "stalled",
    );
    // Bad flags: exit 2.
    refuses(&["rpm", &s, "--mad", "0"], 2, limit, "--mad");
    refuses(
        &["rpm", &s, "--congestion", "nope"],
        2,
        limit,
        "congestion control 'nope'",
    );
    refuses(&["rpm", "ftp://x"], 2, limit, "only http");
}
