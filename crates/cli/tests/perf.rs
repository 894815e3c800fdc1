//! `tcpwise perf` end to end: loopback for the protocol and errors, an
//! emulated path for the buffer diagnosis. Assertions are correctness
//! bounds; the seed's figures come from runs reported in the issue notes.

use crate::common::*;
use std::io::Write;
use std::process::Child;

struct PerfServer {
    child: Child,
    port: u16,
}

impl Drop for PerfServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn perf_server() -> PerfServer {
    let (child, line) = spawn_announcing(&["perf", "server", "--bind", "127.0.0.1:0"]);
    let port = line
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{line}"));
    PerfServer { child, port }
}

/// `tcpwise perf client 127.0.0.1 -p PORT` and `extra`.
fn client(port: &str, extra: &[&str]) -> std::process::Output {
    tcpwise(&[&["perf", "client", "127.0.0.1", "-p", port][..], extra].concat())
}

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn loopback_run_has_intervals_summary_and_no_diagnosis() {
    let srv = perf_server();
    let p = srv.port.to_string();
    let v = json(&tcpwise(&[
        "perf",
        "client",
        "127.0.0.1",
        "-p",
        &p,
        "-t",
        "2",
        "--interval",
        "0.5",
        "--json=tcpwise",
    ]));
    let iv = v["intervals"].as_array().unwrap();
    assert!(iv.len() >= 4, "{iv:?}");
    for k in [
        "start_s",
        "end_s",
        "bytes",
        "mbit",
        "rtt_ms",
        "cwnd_bytes",
        "retransmits",
    ] {
        assert!(iv[1].get(k).is_some(), "interval lacks {k}: {}", iv[1]);
    }
    let s = &v["summary"];
    assert!(s["goodput_mbit"].as_f64().unwrap() > 10.0);
    // On loopback the reader, not a buffer, can be the limit: never blame buffers.
    assert_eq!(s["buffer_limited"], false, "{s}");
    assert!(s["predicted_cap_mbit"].is_null(), "{s}");
    let d = s["diagnosis"].as_str().unwrap_or("");
    assert!(!d.contains("tcp_rmem") && !d.contains("--rcvbuf"), "{d}");
    // Reverse with a byte count: exactly that many bytes arrive.
    let v = json(&tcpwise(&[
        "perf",
        "client",
        "127.0.0.1",
        "-p",
        &p,
        "-R",
        "-n",
        "10000000",
        "--json=tcpwise",
    ]));
    assert_eq!(v["summary"]["bytes"], 10_000_000);
    assert_eq!(v["reverse"], true);
    // Text output: one line per interval, then the summary.
    let o = tcpwise(&[
        "perf",
        "client",
        "127.0.0.1",
        "-p",
        &p,
        "-t",
        "1",
        "--read-sizing",
        "fixed:4KiB",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("[  0.0-")), "{out}");
    assert!(
        out.contains("summary:") && out.contains("buffers:"),
        "{out}"
    );
}

#[test]
fn rcvbuf_above_rmem_max_warns_with_the_real_value() {
    let max: u64 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let srv = perf_server();
    let ask = (max * 4).to_string();
    let o = tcpwise(&[
        "perf",
        "client",
        "127.0.0.1",
        "-p",
        &srv.port.to_string(),
        "-R",
        "-t",
        "0.5",
        "--rcvbuf",
        &ask,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning") && err.contains(&(2 * max).to_string()),
        "{err}"
    );
}

#[test]
fn errors_are_one_clear_line() {
    // Refused: a port nothing listens on.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let free = l.local_addr().unwrap().port().to_string();
    drop(l);
    let o = tcpwise(&["perf", "client", "127.0.0.1", "-p", &free, "-t", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("connection refused") && stderr(&o).trim().lines().count() == 1,
        "{}",
        stderr(&o)
    );

    // Wrong protocol: something that answers like a web server.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    let o = tcpwise(&["perf", "client", "127.0.0.1", "-p", &port, "-t", "1"]);
    t.join().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("does not speak the tcpwise perf protocol") && err.contains("HTTP/1.1 400"),
        "{err}"
    );

    // Bad input.
    for args in [
        // (-t 0 is iperf3's "until stopped": see the spellings test.)
        &["perf", "client", "127.0.0.1", "-t", "-1"][..],
        &["perf", "client", "127.0.0.1", "--rcvbuf", "0"][..],
        &["perf", "client", "127.0.0.1", "--rcvbuf", "-5"][..],
        &["perf", "client", "127.0.0.1", "--sndbuf", "12 parsecs"][..],
        &["perf", "client", "127.0.0.1", "--read-sizing", "fixed"][..],
    ] {
        let o = tcpwise(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn unreachable_host_inside_a_testbed() {
    if !netns_ok("perf_unreachable") {
        return;
    }
    // Only 198.18.0.2 is routed in a pair: 198.18.0.3 is unreachable at once.
    let o = tcpwise(&[
        "emu",
        "pair",
        "-q",
        "--rtt",
        "10ms",
        "--server",
        &format!("exec {BIN} perf server"),
        "--wait-port",
        "5301",
        "--",
        BIN,
        "perf",
        "client",
        "198.18.0.3",
        "-t",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot reach 198.18.0.3:5301"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn static_receive_buffer_is_diagnosed_on_an_emulated_path() {
    if !netns_ok("perf_diagnosis") {
        return;
    }
    let script = format!(
        "{BIN} perf client $TCPWISE_PEER -R -t 3 --rcvbuf 32KB --path-rate 50mbit --json=tcpwise; echo; {BIN} perf client $TCPWISE_PEER -R -t 3 --json=tcpwise"
    );
    let o = perf_testbed("60ms", "50mbit", &script);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut docs = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
    let pinned = docs.next().unwrap().unwrap();
    let auto = docs.next().unwrap().unwrap();
    let s = &pinned["summary"];
    assert_eq!(s["buffer_limited"], true, "{s}");
    let cap = s["predicted_cap_mbit"].as_f64().unwrap();
    let got = s["goodput_mbit"].as_f64().unwrap();
    // 64 KB held, 40 KB advertised at 60 ms: about 5.3 Mbit/s.
    assert!(cap > 4.0 && cap < 7.0, "{cap}");
    assert!(
        got <= cap * 1.15 && got >= cap * 0.5,
        "goodput {got} vs cap {cap}"
    );
    assert!(
        s["diagnosis"].as_str().unwrap().contains("--rcvbuf 32000"),
        "{s}"
    );
    let a = &auto["summary"];
    assert_eq!(a["buffer_limited"], false, "{a}");
    assert!(a["diagnosis"].is_null() && a["predicted_cap_mbit"].is_null());
    assert!(
        a["goodput_mbit"].as_f64().unwrap() > got * 3.0,
        "autotuning beats the pinned buffer"
    );
}

/// A slow path with a full queue: at 500 kbit/s the sender's unsent
/// bytes (up to 256 KB) and its window in flight take seconds to arrive
/// after -t. The client used to give up 1 s past -t and call a working
/// path unreachable; it now waits for what the path still has to
/// deliver, and counts what arrived within -t as iperf3 does: iperf3 -R
/// on the same testbed, the same run, receives within 10 % of it.
#[test]
fn a_slow_bloated_path_ends_after_its_drain_not_as_unreachable() {
    if !netns_ok("perf_slow_drain") || !tool_ok("perf_slow_drain", "iperf3") {
        return;
    }
    let script = format!(
        "{BIN} perf client $TCPWISE_PEER -R -t 4 -C cubic --json=tcpwise; echo '=='; \
         iperf3 -c $TCPWISE_PEER -p 5201 -R -t 4 -C cubic -J"
    );
    let server = format!("iperf3 -s -p 5201 >/dev/null 2>&1 & exec {BIN} perf server");
    let o = testbed_serving(&server, &["--rtt", "40ms", "--rate", "500kbit"], &script);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let (ours, theirs) = text.split_once("==").unwrap_or_else(|| panic!("{text}"));
    let ours: serde_json::Value =
        serde_json::from_str(ours.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    let theirs: serde_json::Value =
        serde_json::from_str(theirs.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(ours.get("error").is_none(), "{ours}");
    let got = ours["summary"]["goodput_mbit"].as_f64().unwrap();
    let want = received_mbit(&theirs)[0];
    // The payload ceiling is 0.483 Mbit/s; both fill it.
    assert!(want > 0.40 && want < 0.50, "iperf3 received {want} Mbit/s");
    assert!(
        (got / want - 1.0).abs() < 0.10,
        "ours {got} Mbit/s, iperf3's {want}"
    );
}

/// `rb` and `tb` of every socket in `ss -tmi` output.
fn parse_ss(text: &str) -> Vec<(u64, u64)> {
    let num = |l: &str, key: &str| -> Option<u64> {
        let i = l.find(key)? + key.len();
        l[i..]
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    text.lines()
        .filter_map(|l| Some((num(l, ",rb")?, num(l, ",tb")?)))
        .collect()
}

/// The interval values of `key` around `t` seconds: the one that ends
/// before it and the one that ends after it.
fn around(v: &serde_json::Value, key: &str, t: f64) -> (u64, u64) {
    let iv = v["intervals"].as_array().unwrap();
    let at = |pick_before: bool| {
        iv.iter()
            .filter(|i| {
                let end = i["end_s"].as_f64().unwrap();
                if pick_before { end <= t } else { end >= t }
            })
            .filter_map(|i| i[key].as_u64())
            .reduce(|a, b| if pick_before { b } else { a })
            .unwrap_or_else(|| panic!("no {key} around {t} s: {v}"))
    };
    (at(true), at(false))
}

/// The buffers `perf` reports are what the sockets hold (ss's rb/tb), not
/// the tcp_rmem/tcp_wmem starting values: ss is read at `t` seconds, and
/// its values must lie within 10 % of the interval values around `t`.
fn check_against_ss(v: &serde_json::Value, ss_rx: &[(u64, u64)], ss_tx: &[(u64, u64)], t: f64) {
    let rb = ss_rx
        .iter()
        .map(|x| x.0)
        .max()
        .expect("ss saw the receiver");
    let tb = ss_tx.iter().map(|x| x.1).max().expect("ss saw the sender");
    for (name, key, got) in [("rb", "rcvbuf_bytes", rb), ("tb", "sndbuf_bytes", tb)] {
        let (before, after) = around(v, key, t);
        let (lo, hi) = (
            before.min(after) as f64 * 0.9,
            before.max(after) as f64 * 1.1,
        );
        assert!(
            (lo..=hi).contains(&(got as f64)),
            "ss {name} {got} vs perf {key} {before}..{after} around {t} s"
        );
    }
    let g = &v["grown"];
    assert!(
        g["rcvbuf_end_bytes"].as_u64().unwrap() > 131_072,
        "autotuning grew the receive buffer: {g}"
    );
}

#[test]
fn reported_buffers_match_ss_on_loopback() {
    if !tool_ok("reported_buffers_match_ss_on_loopback", "ss") {
        return;
    }
    let srv = perf_server();
    let p = srv.port.to_string();
    let child = std::process::Command::new(BIN)
        .args([
            "perf",
            "client",
            "127.0.0.1",
            "-p",
            &p,
            "-t",
            "4",
            "--json=tcpwise",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let ss = parse_ss(&String::from_utf8_lossy(
        &std::process::Command::new("ss")
            .args(["-tmi", &format!("( sport = :{p} or dport = :{p} )")])
            .output()
            .unwrap()
            .stdout,
    ));
    let o = child.wait_with_output().unwrap();
    let v = json(&o);
    // Both ends are on this host: the largest rb is the receiver's, the largest tb the sender's.
    check_against_ss(&v, &ss, &ss, 2.5);
    let text = stdout(&tcpwise(&[
        "perf",
        "client",
        "127.0.0.1",
        "-p",
        &p,
        "-t",
        "1",
    ]));
    let line = text.lines().find(|l| l.starts_with("buffers:")).unwrap();
    assert!(
        line.contains("at the end") && line.contains("autotuned from"),
        "{line}"
    );
}

#[test]
fn reported_buffers_match_ss_on_an_emulated_path() {
    if !netns_ok("reported_buffers_match_ss_on_an_emulated_path")
        || !tool_ok("reported_buffers_match_ss_on_an_emulated_path", "ss")
    {
        return;
    }
    let dir = TempDir::new("perf-ss");
    let d = dir.0.display();
    // The receiver is the client (-R); the sender's socket is in the server
    // namespace, whose name is the client's with -c replaced by -s.
    let script = format!(
        "{BIN} perf client $TCPWISE_PEER -R -t 4 --json=tcpwise > {d}/out.json & \
         sleep 2.5; ss -tmi > {d}/rx.txt; \
         ip netns exec $(echo $TCPWISE_NETNS | sed 's/-c\\([0-9]*\\)$/-s\\1/') ss -tmi > {d}/tx.txt; wait"
    );
    let o = perf_testbed("100ms", "50mbit", &script);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.0.join("out.json")).unwrap()).unwrap();
    let parse = |f: &str| parse_ss(&std::fs::read_to_string(dir.0.join(f)).unwrap());
    check_against_ss(&v, &parse("rx.txt"), &parse("tx.txt"), 2.5);
}

#[test]
fn bitrate_holds_the_writes_fq_rate_paces_and_omit_leaves_the_start_out() {
    let srv = perf_server();
    let p = srv.port.to_string();
    for reverse in [false, true] {
        // -b as iperf3's: the writes are held, so what the sender wrote
        // is what the receiver got (within what was in flight at the end).
        let mut args = vec!["-t", "2", "-b", "20mbit", "-O", "1", "--json=tcpwise"];
        if reverse {
            args.push("-R");
        }
        let v = json(&client(&p, &args));
        let s = &v["summary"];
        let (sent, got) = (
            s["sent_bytes"].as_f64().unwrap(),
            s["bytes"].as_f64().unwrap(),
        );
        let (sent_s, got_s) = (
            s["sent_seconds"].as_f64().unwrap(),
            s["seconds"].as_f64().unwrap(),
        );
        let (tx, rx) = (sent * 8.0 / sent_s / 1e6, got * 8.0 / got_s / 1e6);
        assert!(
            (tx / rx - 1.0).abs() < 0.03,
            "-R {reverse}: sender {tx:.2} vs receiver {rx:.2} Mbit/s: {s}"
        );
        assert!(
            (rx / 20.0 - 1.0).abs() < 0.05,
            "-R {reverse}: {rx:.2} Mbit/s: {s}"
        );
        assert_eq!(v["pacing"]["target_mbit"], 20.0, "{}", v["pacing"]);
        assert!(v["pacing"]["intervals"].as_u64().unwrap() >= 1);
        // -O 1 -t 2, as iperf3: 3 s in all, the first marked omitted,
        // the summary the last two seconds, saying so.
        assert_eq!(s["omitted_s"], 1.0);
        assert!((1.5..=2.2).contains(&got_s), "{s}");
        assert!((1.5..=2.2).contains(&sent_s), "{s}");
        let iv = v["intervals"].as_array().unwrap();
        assert_eq!(iv[0]["omitted"], true, "{}", iv[0]);
        assert_eq!(iv.last().unwrap()["omitted"], false);
        // --fq-rate: the sender's tcpi_pacing_rate is capped at
        // SO_MAX_PACING_RATE, whichever end sends.
        let mut args = vec!["-t", "2", "--fq-rate", "20mbit", "--json=tcpwise"];
        if reverse {
            args.push("-R");
        }
        let v = json(&client(&p, &args));
        let paced: Vec<f64> = v["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["pacing_mbit"].as_f64())
            .collect();
        assert!(
            !paced.is_empty() && paced.iter().all(|m| *m <= 20.001),
            "--fq-rate, -R {reverse}: {paced:?}"
        );
    }
    // The text says both. -t 3: a 2 s test's second interval can end
    // short of a full second (the receiver's clock starts at its first
    // byte), and the check only compares full intervals after the first.
    let o = client(&p, &["-t", "3", "-b", "8mbit", "-O", "1"]);
    let t = stdout(&o);
    assert!(t.contains("sender's writes held to 8.00 Mbit/s"), "{t}");
    assert!(t.contains("(the first 1.0 s omitted: -O)"), "{t}");
    assert!(
        t.lines()
            .any(|l| l.starts_with("[  0.0-  1.0 s]") && l.ends_with("(omitted)")),
        "{t}"
    );
    assert!(
        t.contains("pacing: -b 8.00 Mbit/s held by the writes"),
        "{t}"
    );
}

#[test]
fn address_family_local_address_and_window_flags() {
    let srv = perf_server();
    let p = srv.port.to_string();
    let client =
        |extra: &[&str]| tcpwise(&[&["perf", "client", "127.0.0.1", "-p", &p][..], extra].concat());
    let cport = free_port().to_string();
    // -4, -B and --cport: the data connection comes from the port asked for.
    let v = json(&client(&[
        "-t",
        "1",
        "-4",
        "-B",
        "127.0.0.1",
        "--cport",
        &cport,
        "--json=tcpwise",
    ]));
    assert!(v["summary"]["bytes"].as_u64().unwrap() > 0);
    // -6 against an IPv4 address: one line, no test.
    let o = client(&["-t", "1", "-6"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no IPv6 address (-6)"),
        "{}",
        stderr(&o)
    );
    // -w pins both buffers, as iperf3's does.
    let v = json(&client(&["-t", "1", "-w", "256KiB", "--json=tcpwise"]));
    assert_eq!(v["receiver_buffers"]["rcv_asked"], 262144);
    assert_eq!(v["sender_buffers"]["snd_asked"], 262144);
    // -w with --rcvbuf is refused.
    let o = client(&["-w", "1M", "--rcvbuf", "1MB"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `-n` is the test's total, as iperf3 means it, not each stream's:
/// `-n 4M -P 2` moves 4 MiB in all, from our client to our server and
/// from our server to an `iperf3 -c -R`, as iperf3 to iperf3 does.
#[test]
fn a_byte_total_is_shared_among_parallel_streams() {
    let srv = perf_server();
    let p = srv.port.to_string();
    for reverse in [false, true] {
        let mut args = vec!["-n", "4M", "-P", "2", "--json=tcpwise"];
        if reverse {
            args.push("-R");
        }
        let v = json(&client(&p, &args));
        let total: u64 = v["streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[1]["summary"]["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(total, 4 << 20, "-R {reverse}: {}", v["sums"]);
    }
    if !tool_ok("a_byte_total_is_shared_among_parallel_streams", "iperf3") {
        return;
    }
    let (_iperf3, ip) = iperf3_server();
    for port in [&ip, &p] {
        wait_port(port);
        let o = std::process::Command::new("iperf3")
            .args([
                "-c",
                "127.0.0.1",
                "-p",
                port,
                "-R",
                "-n",
                "4M",
                "-P",
                "2",
                "-J",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "iperf3 against {port}: {}", stdout(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let got = v["end"]["sum_received"]["bytes"].as_u64().unwrap();
        // What the sender wrote past the total while the end crossed.
        assert!(
            (4 << 20..(4 << 20) + 2 * 131_072 + 1).contains(&got),
            "iperf3 -R -n 4M -P 2 against port {port} received {got}"
        );
    }
}

#[test]
fn parallel_streams_and_both_directions_are_joined_with_sums_and_fairness() {
    let srv = perf_server();
    let p = srv.port.to_string();
    let client =
        |extra: &[&str]| tcpwise(&[&["perf", "client", "127.0.0.1", "-p", &p][..], extra].concat());
    let v = json(&client(&[
        "-t",
        "2",
        "-P",
        "3",
        "-b",
        "40mbit",
        "--json=tcpwise",
    ]));
    let streams = v["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 3);
    for s in streams {
        assert!(s[1]["intervals"].as_array().unwrap().len() >= 2, "{s}");
    }
    let sums = v["sums"].as_array().unwrap();
    assert_eq!(sums.len(), 1);
    assert_eq!(
        (sums[0]["direction"].as_str(), sums[0]["streams"].as_u64()),
        (Some("send"), Some(3))
    );
    let jain = sums[0]["jain_index"].as_f64().unwrap();
    assert!(jain > 1.0 / 3.0 - 1e-9 && jain <= 1.0 + 1e-9, "{jain}");
    // The sum is the streams' goodputs added up.
    let total: f64 = streams
        .iter()
        .map(|s| s[1]["summary"]["goodput_mbit"].as_f64().unwrap())
        .sum();
    assert!((sums[0]["goodput_mbit"].as_f64().unwrap() - total).abs() < 1e-6);
    assert!(!v["sum_intervals"].as_array().unwrap().is_empty());
    // --bidir: one stream each way, a sum per direction; text with [SUM] tags.
    let v = json(&client(&[
        "-t",
        "1",
        "--bidir",
        "-b",
        "20mbit",
        "--json=tcpwise",
    ]));
    let dirs: Vec<&str> = v["sums"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["direction"].as_str().unwrap())
        .collect();
    assert_eq!(dirs, ["send", "receive"]);
    let o = client(&["-t", "1", "-P", "2", "-b", "20mbit"]);
    let t = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        t.contains("[   1] [") && t.contains("[   2] [") && t.contains("[SUM] ["),
        "{t}"
    );
    assert!(t.contains("Jain's fairness index"), "{t}");
    // -P 0 is refused by the parser.
    assert_eq!(client(&["-P", "0"]).status.code(), Some(2));
}

#[test]
fn udp_at_a_rate_with_loss_reordering_and_jitter_both_ways() {
    let srv = perf_server();
    let p = srv.port.to_string();
    let client =
        |extra: &[&str]| tcpwise(&[&["perf", "client", "127.0.0.1", "-p", &p][..], extra].concat());
    for reverse in [false, true] {
        let mut args = vec!["-u", "-b", "4mbit", "-t", "2", "--json=tcpwise"];
        if reverse {
            args.push("-R");
        }
        let v = json(&client(&args));
        let sent = v["sent"].as_u64().unwrap();
        // 4 Mbit/s of 1448-byte datagrams for 2 s: 690 of them.
        assert!((680..=700).contains(&sent), "-R {reverse}: {v}");
        assert!(v["received"].as_u64().unwrap() <= sent);
        assert_eq!(v["direction"], if reverse { "receive" } else { "send" });
        for k in [
            "lost",
            "lost_pct",
            "out_of_order",
            "jitter_ms",
            "mbit",
            "seconds",
        ] {
            assert!(v.get(k).is_some(), "{k} missing: {v}");
        }
        let iv = v["intervals"].as_array().unwrap();
        assert!(iv.len() >= 2, "{v}");
        assert!(iv[0].get("jitter_ms").is_some() && iv[0].get("lost").is_some());
    }
    // The default rate is iperf3's "1 Mbit/s" (1024 × 1024 bits/s); the text names loss and jitter.
    let o = client(&["-u", "-t", "1"]);
    let t = stdout(&o);
    assert!(
        t.contains("at 1.05 Mbit/s") && t.contains("jitter") && t.contains("summary (UDP, send)"),
        "{t}"
    );
    // TCP-only flags are refused with -u.
    assert_eq!(client(&["-u", "-P", "2"]).status.code(), Some(2));
    assert_eq!(client(&["-u", "-C", "bbr"]).status.code(), Some(2));
}

#[test]
fn json_schema_ours_and_iperf3s() {
    let srv = perf_server();
    let p = srv.port.to_string();
    let client = |extra: &[&str]| client(&p, &[&["-t", "1", "-i", "0.5"][..], extra].concat());
    // Ours: every field the README and scripts use.
    let v = json(&client(&["--json=tcpwise"]));
    for k in [
        "intervals",
        "summary",
        "grown",
        "receiver_buffers",
        "sender_buffers",
        "reverse",
        "warnings",
    ] {
        assert!(v.get(k).is_some(), "{k}: {v}");
    }
    for k in [
        "start_s",
        "end_s",
        "bytes",
        "mbit",
        "rtt_ms",
        "cwnd_bytes",
        "retransmits",
        "rwnd_limited_pct",
        "sndbuf_limited_pct",
        "rcvbuf_bytes",
        "sndbuf_bytes",
        "pacing_mbit",
        "delivery_mbit",
    ] {
        assert!(
            v["intervals"][0].get(k).is_some(),
            "interval {k}: {}",
            v["intervals"][0]
        );
    }
    for k in [
        "goodput_mbit",
        "bytes",
        "seconds",
        "rtt_ms",
        "min_rtt_ms",
        "retransmits",
        "buffer_limited",
        "predicted_cap_mbit",
        "rwnd_limited_pct",
        "sndbuf_limited_pct",
        "advertised_window_bytes",
        "diagnosis",
    ] {
        assert!(
            v["summary"].get(k).is_some(),
            "summary {k}: {}",
            v["summary"]
        );
    }
    // iperf3's names, for iperf3's parsers and plotters.
    for extra in [&["--json=iperf3"][..], &["--json=iperf3", "-P", "2"][..]] {
        iperf3_layout(&json(&client(extra)), if extra.len() > 1 { 2 } else { 1 });
    }
    // A style that does not exist is refused.
    assert_eq!(client(&["--json=xml"]).status.code(), Some(2));
}

/// `--json=iperf3`'s layout: iperf3's names where its parsers read them,
/// for a test of `streams` streams.
fn iperf3_layout(v: &serde_json::Value, streams: u64) {
    assert_eq!(v["start"]["test_start"]["protocol"], "TCP");
    let n = v["start"]["test_start"]["num_streams"].as_u64().unwrap();
    assert_eq!(n, streams);
    let iv = v["intervals"].as_array().unwrap();
    assert!(iv.len() >= 2, "{v}");
    for k in [
        "start",
        "end",
        "seconds",
        "bytes",
        "bits_per_second",
        "retransmits",
    ] {
        assert!(iv[0]["sum"].get(k).is_some(), "sum {k}: {}", iv[0]);
    }
    for k in [
        "socket",
        "bytes",
        "bits_per_second",
        "snd_cwnd",
        "rtt",
        "retransmits",
        "sender",
    ] {
        assert!(
            iv[0]["streams"][0].get(k).is_some(),
            "stream {k}: {}",
            iv[0]
        );
    }
    assert_eq!(v["end"]["streams"].as_array().unwrap().len() as u64, n);
    for k in ["sum_sent", "sum_received"] {
        assert!(
            v["end"][k]["bits_per_second"].as_f64().unwrap() > 0.0,
            "{k}: {}",
            v["end"]
        );
    }
    // iperf3's keys only: ours are --json=tcpwise's.
    assert!(v.get("tcpwise").is_none());
}

#[test]
fn ctrl_c_prints_the_partial_summary_and_exits_130() {
    let srv = perf_server();
    let (o, _) = interrupted(&srv.port.to_string(), &["-t", "30", "-b", "50mbit"]);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(130), "{t}");
    assert!(t.contains("interrupted: partial summary over"), "{t}");
}

/// A client run with `extra`, sent SIGINT after 1.8 s: its output, and
/// how long it took to exit after the signal.
fn interrupted(port: &str, extra: &[&str]) -> (std::process::Output, std::time::Duration) {
    let child = std::process::Command::new(BIN)
        .args(
            [
                &["perf", "client", "127.0.0.1", "-p", port, "-i", "0.5"][..],
                extra,
            ]
            .concat(),
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1800));
    let t0 = std::time::Instant::now();
    // SAFETY: the child's pid, a plain signal.
    tcpwise_sys::kill(child.id() as i32, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    (o, t0.elapsed())
}

#[test]
fn bbrs_own_estimates_appear_with_c_bbr_only() {
    let srv = perf_server();
    let p = srv.port.to_string();
    let run = |cc: &str| {
        json(&client(
            &p,
            &["-t", "1", "-i", "0.5", "-C", cc, "--json=tcpwise"],
        ))
    };
    let bbr = run("bbr");
    let iv = &bbr["intervals"][0];
    assert!(iv["bbr_bw_mbit"].as_f64().unwrap() > 0.0, "{iv}");
    assert!(iv["bbr_min_rtt_ms"].as_f64().is_some(), "{iv}");
    let cubic = run("cubic");
    assert!(
        cubic["intervals"][0]["bbr_bw_mbit"].is_null(),
        "{}",
        cubic["intervals"][0]
    );
}

#[test]
fn get_server_output_prints_the_servers_own_lines() {
    let srv = perf_server();
    let p = srv.port.to_string();
    for (extra, role) in [(None, "received"), (Some("-R"), "sent  rtt")] {
        let mut args = vec!["-t", "1", "-i", "0.5", "--get-server-output"];
        args.extend(extra);
        let o = client(&p, &args);
        let t = stdout(&o);
        assert!(o.status.success(), "{}", stderr(&o));
        let after = t
            .split("server output:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{t}"));
        assert!(
            after.lines().filter(|l| l.contains(role)).count() >= 2,
            "{t}"
        );
    }
}

#[test]
fn zerocopy_sends_the_same_bytes_from_either_end() {
    let srv = perf_server();
    let p = srv.port.to_string();
    for (how, extra) in [
        ("sendfile", None),
        ("sendfile", Some("-R")),
        ("msg", None),
        ("msg", Some("-R")),
    ] {
        let z = format!("-Z={how}");
        let mut args = vec!["-t", "1", &z, "-b", "200mbit", "--json=tcpwise"];
        args.extend(extra);
        let v = json(&client(&p, &args));
        let s = &v["summary"];
        // Paced at 200 Mbit/s for 1 s: about 25 MB, without a copy here.
        assert!(
            s["bytes"].as_u64().unwrap() > 10_000_000,
            "{how} {extra:?}: {s}"
        );
        assert_eq!(v["zerocopy"]["method"], how, "{}", v["zerocopy"]);
        if how == "msg" {
            // Every send's completion is reaped by the end; over loopback
            // the kernel says it copied them after all.
            let c = &v["zerocopy"]["counts"];
            let sends = c["sends"].as_u64().unwrap();
            assert!(sends > 0, "{c}");
            assert_eq!(c["completed"].as_u64(), Some(sends), "{c}");
            assert_eq!(c["copied"].as_u64(), Some(sends), "{c}");
        }
    }
    // Bare -Z is iperf3's: sendfile; the text says how it sent.
    let t = stdout(&client(&p, &["-t", "1", "-Z", "-b", "50mbit"]));
    assert!(t.contains("zero copy: sendfile"), "{t}");
    let t = stdout(&client(&p, &["-t", "1", "-Z=msg", "-b", "50mbit"]));
    assert!(
        t.contains("zero copy: MSG_ZEROCOPY") && t.contains("copied by the kernel"),
        "{t}"
    );
    assert_eq!(client(&p, &["-Z", "-u"]).status.code(), Some(2));
    assert_eq!(client(&p, &["-Z=splice"]).status.code(), Some(2));
}

#[test]
fn udp_in_iperf3s_json_and_datagram_length() {
    let srv = perf_server();
    let p = srv.port.to_string();
    for extra in [None, Some("-R")] {
        let mut args = vec![
            "-u",
            "-b",
            "2mbit",
            "-l",
            "1000",
            "-t",
            "2",
            "-i",
            "0.5",
            "--json=iperf3",
        ];
        args.extend(extra);
        let v = json(&client(&p, &args));
        let ts = &v["start"]["test_start"];
        assert_eq!(ts["protocol"], "UDP", "{ts}");
        assert_eq!(ts["blksize"], 1000, "{ts}");
        assert_eq!(ts["target_bitrate"], 2_000_000, "{ts}");
        let iv = v["intervals"].as_array().unwrap();
        assert!(iv.len() >= 3, "{v}");
        for k in [
            "start",
            "end",
            "seconds",
            "bytes",
            "bits_per_second",
            "jitter_ms",
            "lost_packets",
            "packets",
            "lost_percent",
        ] {
            assert!(iv[0]["sum"].get(k).is_some(), "sum {k}: {}", iv[0]);
            assert!(iv[0]["streams"][0].get(k).is_some(), "stream {k}");
        }
        let end = &v["end"];
        // 2 Mbit/s of 1000-byte datagrams for 2 s: 500 of them.
        let sent = end["sum_sent"]["packets"].as_u64().unwrap();
        assert!((495..=505).contains(&sent), "{extra:?}: {end}");
        assert_eq!(end["sum_received"]["packets"].as_u64(), Some(sent));
        let lost = end["sum"]["lost_packets"].as_u64().unwrap();
        let got = end["sum_received"]["bytes"].as_u64().unwrap();
        assert_eq!(got, (sent - lost) * 1000, "{end}");
        let u = &end["streams"][0]["udp"];
        for k in [
            "jitter_ms",
            "lost_percent",
            "out_of_order",
            "bits_per_second",
        ] {
            assert!(u.get(k).is_some(), "udp {k}: {u}");
        }
        // iperf3's keys only: ours are --json=tcpwise's.
        assert!(v.get("tcpwise").is_none(), "{v}");
    }
    // -l is a UDP flag, with a datagram's limits.
    assert_eq!(client(&p, &["-l", "1000"]).status.code(), Some(2));
    let o = client(&p, &["-u", "-l", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-l 10"), "{}", stderr(&o));
}

#[test]
fn udp_ctrl_c_prints_the_partial_summary_and_exits_130() {
    let srv = perf_server();
    let (o, took) = interrupted(&srv.port.to_string(), &["-u", "-b", "2mbit", "-t", "30"]);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(130), "{t}");
    assert!(t.contains("interrupted: partial summary over"), "{t}");
    assert!(t.contains("jitter"), "{t}");
    // The sender's thread does not hold the exit up until -t.
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

/// A path that loses and duplicates: duplicates are counted apart, so the
/// loss is the path's (5 %), not loss less duplication (iperf3's count,
/// and ours before: 3 % loss and 5 % duplication read as 0.6 % lost).
#[test]
fn udp_duplicates_do_not_hide_loss() {
    if !netns_ok("udp_duplicates") {
        return;
    }
    let o = perf_testbed_with(
        &[
            "--rtt",
            "10ms",
            "--rate",
            "50mbit",
            "--down-loss",
            "5%",
            "--down-duplicate",
            "10%",
        ],
        &format!("{BIN} perf client $TCPWISE_PEER -u -R -b 8mbit -t 2 --json=tcpwise"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sent = v["sent"].as_f64().unwrap();
    let lost_pct = v["lost_pct"].as_f64().unwrap();
    let dup = v["duplicates"].as_f64().unwrap();
    println!("sent {sent}, lost {lost_pct:.2} %, duplicated {dup}");
    // ~1380 datagrams: 5 % loss is 69 +- 8 (sd); 10 % duplication of the
    // arrivals 131 +- 11. Bounds far outside both spreads.
    assert!((2.0..9.0).contains(&lost_pct), "{v}");
    assert!(dup > 0.05 * sent, "{v}");
    assert_eq!(
        v["received"].as_f64().unwrap() + v["lost"].as_f64().unwrap(),
        sent,
        "{v}"
    );
}

/// `--json=iperf3` is read by iperf3's own reader, the `iperf3` Python
/// package's `TestResult`, for TCP, `-R`, `-P`, `--bidir` and `-u`: no
/// missing key, sent and received each their own side's figure,
/// retransmits from the sender, `bidir` and `num_streams` as iperf3 has
/// them, and UDP's jitter and loss.
#[test]
fn iperf3_json_is_read_by_iperf3s_own_reader() {
    let has_reader = std::process::Command::new("python3")
        .args(["-c", "import iperf3"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_reader {
        assert!(
            std::env::var("CI").is_err(),
            "CI installs the iperf3 Python package (scripts/test)"
        );
        eprintln!("skipped: the iperf3 Python package is not installed (pip install iperf3)");
        return;
    }
    let srv = perf_server();
    let p = srv.port.to_string();
    let read = r#"
import iperf3, json, sys
text = sys.stdin.read()
r = iperf3.TestResult(text)
j = json.loads(text)
out = dict(error=r.error, protocol=r.protocol, num_streams=r.num_streams,
           bidir=int("sum_sent_bidir_reverse" in j["end"]), local_port=r.local_port)
if r.protocol == "TCP":
    out.update(sent=r.sent_bytes, received=r.received_bytes, retransmits=r.retransmits,
               null_retr="retransmits" in j["end"]["sum_received"])
else:
    out.update(jitter=r.jitter_ms, lost=r.lost_percent, packets=r.packets)
print(json.dumps(out))
"#;
    for (extra, streams, bidir) in [
        (&["-t", "1"][..], 1, 0),
        (&["-t", "1", "-R"][..], 1, 0),
        (&["-t", "1", "-P", "2"][..], 2, 0),
        (&["-t", "1", "--bidir"][..], 1, 1),
        (&["-t", "1", "-u", "-b", "10mbit"][..], 1, 0),
    ] {
        let o = client(&p, &[extra, &["--json=iperf3"]].concat());
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let mut py = std::process::Command::new("python3")
            .args(["-c", read])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        py.stdin.take().unwrap().write_all(&o.stdout).unwrap();
        let r = py.wait_with_output().unwrap();
        assert!(
            r.status.success(),
            "{extra:?}: TestResult refused it: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        println!("{extra:?}: {v}");
        assert!(v["error"].is_null(), "{v}");
        assert_eq!(v["num_streams"], streams, "{extra:?}: {v}");
        assert_eq!(v["bidir"], bidir, "{extra:?}: {v}");
        assert!(
            v["local_port"].as_u64().unwrap_or(0) > 0 || v["protocol"] == "UDP",
            "{v}"
        );
        if v["protocol"] == "TCP" {
            assert!(
                v["sent"].as_u64().unwrap() > 0 && v["received"].as_u64().unwrap() > 0,
                "{v}"
            );
            assert!(v["retransmits"].is_u64(), "{v}");
            assert_eq!(v["null_retr"], false, "{v}");
        } else {
            assert!(
                v["jitter"].is_f64() && v["lost"].is_f64() && v["packets"].as_u64() > Some(0),
                "{v}"
            );
        }
    }
    // A failure is {"error": "..."}, a string as iperf3 writes it.
    let o = client("1", &["--json=iperf3"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("127.0.0.1:1")),
        "{v}"
    );
}

/// iperf3's spellings: each accepted with iperf3's meaning, or refused in
/// one line that says what to use instead.
#[test]
fn iperf3_spellings_mean_what_they_mean_in_iperf3() {
    let srv = perf_server();
    let p = srv.port.to_string();
    let run = |extra: &[&str]| client(&p, extra);
    // -b 20M and 20m are 20 Mbit/s (bits, powers of 1000); -l 8K is 8192 B.
    for b in ["20M", "20m"] {
        let v = json(&run(&["-u", "-b", b, "-t", "1", "--json=tcpwise"]));
        assert_eq!(v["rate_bps"], 20_000_000, "-b {b}: {v}");
    }
    let v = json(&run(&["-u", "-l", "8K", "-t", "1", "--json=tcpwise"]));
    assert_eq!(v["len"], 8192, "{v}");
    // -t 0: until stopped (a byte count ends it here); --rcv-timeout and
    // --connect-timeout in milliseconds, -V accepted.
    let o = run(&[
        "-t",
        "0",
        "-n",
        "2000000",
        "--rcv-timeout",
        "5000",
        "--connect-timeout",
        "2000",
        "-V",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // -v is the version, as in iperf3, for the client and the server.
    for args in [&["perf", "client", "-v"][..], &["perf", "server", "-v"][..]] {
        let o = tcpwise(args);
        assert!(
            o.status.success() && stdout(&o).contains("0."),
            "{args:?}: {}",
            stdout(&o)
        );
    }
    // The ones tcpwise does not have: one line naming what to do.
    for extra in [
        &["-T", "x"][..],
        &["-f", "m"],
        &["--logfile", "l.txt"],
        &["--timestamps"],
        &["-k", "10"],
        &["-F", "f.bin"],
        &["-d"],
        &["--forceflush"],
    ] {
        let o = run(extra);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("is not in tcpwise perf"), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra:?}: {err}");
    }
    let o = tcpwise(&["perf", "server", "-D"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("-D, --daemon is not in tcpwise perf server"),
        "{}",
        stderr(&o)
    );
    // -s is accepted and -I writes the pid while the server runs.
    let t = TempDir::new("perf-pid");
    let pidf = t.0.join("perf.pid");
    let (child, _) = spawn_announcing(&[
        "perf",
        "server",
        "-s",
        "-V",
        "-I",
        pidf.to_str().unwrap(),
        "--bind",
        "127.0.0.1:0",
    ]);
    let pid = std::fs::read_to_string(&pidf).unwrap();
    assert_eq!(pid.trim(), child.id().to_string());
    tcpwise_sys::kill(child.id() as i32, libc::SIGTERM);
    let mut child = child;
    let _ = child.wait();
    assert!(!pidf.exists(), "the pid file is removed at the end");
}

/// `jq -c PATH` of a document, as iperf3's consumers read it.
fn jq(doc: &serde_json::Value, path: &str) -> serde_json::Value {
    let mut c = std::process::Command::new("jq")
        .args(["-c", path])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("jq (scripts/test installs it)");
    c.stdin
        .take()
        .unwrap()
        .write_all(doc.to_string().as_bytes())
        .unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "jq {path}");
    serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null)
}

/// The `end` figures of an iperf3 `-J` document (ours with
/// `--json=iperf3`): what arrived, each direction (`--bidir`: the
/// reverse's too), Mbit/s.
fn received_mbit(doc: &serde_json::Value) -> Vec<f64> {
    ["sum_received", "sum_received_bidir_reverse"]
        .iter()
        .filter_map(|k| doc["end"][k]["bits_per_second"].as_f64())
        .map(|b| b / 1e6)
        .collect()
}

/// `perf client --iperf3` against `iperf3 -s`, and `iperf3 -c` against
/// `perf server`, on one emulated path (40 Mbit/s, 20 ms), in one run with
/// iperf3 against itself: TCP, `-R`, `-P 4`, `--bidir`; what arrived is
/// within 3 % of iperf3-to-iperf3 (`--bidir`: both ways together; each
/// way within iperf3's own spread), the pairs' own books agree
/// (iperf3's sum_sent from our results, ours from iperf3's), and a UDP
/// test of two streams (not spoken yet) is refused in one line.
/// The jq paths iperf3's consumers read give values in ours where they
/// give them in iperf3's, and the same figures.
fn same_jq_figures(m: &str, ref_: &serde_json::Value, client: &serde_json::Value) {
    let mut paths = vec![
        ".end.sum_sent.bits_per_second",
        ".end.sum_received.bits_per_second",
        ".end.sum_sent.retransmits",
        ".end.streams[0].sender.bytes",
        ".end.streams[0].receiver.bytes",
        ".end.cpu_utilization_percent.host_total",
        ".start.test_start.num_streams",
        ".start.test_start.duration",
        "[.intervals[].sum.bits_per_second] | length",
    ];
    if m.contains("bidir") {
        paths.push(".end.sum_sent_bidir_reverse.bits_per_second");
        paths.push(".end.sum_received_bidir_reverse.bits_per_second");
    }
    for path in paths {
        let (a, b) = (jq(ref_, path), jq(client, path));
        println!("{m:>7}: {path}: iperf3 {a}, ours {b}");
        assert!(
            !a.is_null() && !b.is_null(),
            "{m} {path}: iperf3 {a}, ours {b}"
        );
        let (x, y) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        if path.contains("num_streams") || path.contains("duration") || path.contains("length") {
            assert_eq!(x, y, "{m} {path}");
        } else if path.contains("bits_per_second") {
            // Sent counts what was written into the socket, so it also
            // holds what the send buffers kept at the end: with several
            // streams each autotuned buffer adds its own share (-P 4 in
            // CI: iperf3 sent 6 % above what arrived, ours 10 %, with
            // received 0.3 % apart). Received is the goodput: 3 %.
            let tol = if m.contains("bidir") || (m.contains("-P") && path.contains("sent")) {
                0.08
            } else {
                0.03
            };
            assert!((y / x - 1.0).abs() <= tol, "{m} {path}: {x} vs {y}");
        }
    }
}

/// iperf3 against itself, our client against iperf3's server and iperf3's
/// client against ours, on one emulated path (20 ms, 40 Mbit/s), in one
/// run per mode: the same figures within the spread iperf3 has against
/// itself. A starved run is rerun whole, at most twice, and said.
#[test]
fn iperf3_interop_both_ways_on_an_emulated_path() {
    if !netns_ok("perf_iperf3_interop")
        || !tool_ok("perf_iperf3_interop", "iperf3")
        || !tool_ok("perf_iperf3_interop", "jq")
    {
        return;
    }
    rerun_if_starved("iperf3 interop", 3, iperf3_interop_once);
}

fn iperf3_interop_once() {
    let modes = ["", "-R", "-P 4", "--bidir"];
    let mut script = String::new();
    for m in modes {
        script += &format!(
            "echo '== iperf3'; iperf3 -c $TCPWISE_PEER -p 5201 -t 4 {m} -J; \
             echo '== client'; {BIN} perf client $TCPWISE_PEER --iperf3 -t 4 {m} --json=iperf3; \
             echo '== server'; iperf3 -c $TCPWISE_PEER -p 5301 -t 4 {m} -J; "
        );
    }
    script += "echo '== udp'; iperf3 -c $TCPWISE_PEER -p 5301 -u -P 2 -t 1 2>&1; echo \"exit $?\"";
    let server = format!("iperf3 -s -p 5201 & exec {BIN} perf server");
    let o = testbed_serving(&server, &["--rtt", "20ms", "--rate", "40mbit"], &script);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let parts: Vec<&str> = text.split("== ").skip(1).collect();
    assert_eq!(parts.len(), 3 * modes.len() + 1, "{text}");
    for (m, run) in modes.iter().zip(parts.chunks(3)) {
        let doc = |p: &str, who: &str| -> serde_json::Value {
            let body = p.strip_prefix(who).unwrap_or_else(|| panic!("{p}"));
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{who} {m}: {e}: {body}"))
        };
        let (ref_, client, server) = (
            doc(run[0], "iperf3"),
            doc(run[1], "client"),
            doc(run[2], "server"),
        );
        let want = received_mbit(&ref_);
        for (who, d) in [
            ("perf client --iperf3", &client),
            ("iperf3 -c to perf server", &server),
        ] {
            assert!(d.get("error").is_none(), "{who} {m}: {d}");
            let got = received_mbit(d);
            println!("{m:>7}: iperf3-iperf3 {want:.2?} Mbit/s, {who} {got:.2?}");
            assert_eq!(got.len(), want.len(), "{who} {m}");
            // Both ways at once, the directions share each link with the
            // other's acknowledgements and split it differently each run:
            // iperf3 against itself gave 36.68/36.56, 37.12/34.79,
            // 36.14/36.69 and 37.04/36.90 Mbit/s in four runs, and
            // 37.12/36.99 in a CI run (26 Nov) where our client's 35.72/36.02
            // summed 3.2 % below: iperf3's own sums span 71.91 to 74.11
            // (3.0 %). Their sum holds within 4 %, each direction within the
            // directions' spread (8 %).
            let (g, w): (f64, f64) = (got.iter().sum(), want.iter().sum());
            assert!(
                (g / w - 1.0).abs() <= 0.04,
                "{who} {m}: {g:.2} vs {w:.2} Mbit/s"
            );
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g / w - 1.0).abs() <= 0.08,
                    "{who} {m}: {g:.2} vs {w:.2} Mbit/s"
                );
            }
            // Each side's count of what moved: what was sent is at least
            // what arrived, and not more than a few windows beyond it.
            let sent = d["end"]["sum_sent"]["bytes"].as_f64().unwrap();
            let got_b = d["end"]["sum_received"]["bytes"].as_f64().unwrap();
            assert!(
                sent >= got_b && sent <= got_b * 1.2 + 2e6,
                "{who} {m}: {sent} {got_b}"
            );
        }
        same_jq_figures(m, &ref_, &client);
        // iperf3's key tree on this path too, values aside.
        assert_eq!(key_tree(&client), key_tree(&ref_), "{m}");
        // The server's end of iperf3's own report says tcpwise moved it:
        // per stream, iperf3 shows what our server counted.
        let streams = server["end"]["streams"].as_array().unwrap();
        let n = if m.contains("-P 4") {
            4
        } else if m.contains("bidir") {
            2
        } else {
            1
        };
        assert_eq!(streams.len(), n, "{m}");
    }
    let udp = parts.last().unwrap();
    assert!(udp.contains("exit 1") && udp.contains("error"), "{udp}");
}

/// On loopback: `--iperf3` against our own server (which answers both
/// protocols on one port), a plain client against `iperf3 -s` speaking
/// iperf3's protocol by itself, what `--iperf3` does not take refused in
/// one line, and a refused connection said of an iperf3 server.
#[test]
fn iperf3_protocol_on_loopback_and_its_one_line_errors() {
    let s = perf_server();
    let port = s.port.to_string();
    let v = json(&client(
        &port,
        &["--iperf3", "-t", "1", "-P", "2", "--json=tcpwise"],
    ));
    let streams = v["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 2, "{v}");
    for st in streams {
        let sum = &st[1]["summary"];
        assert!(sum["bytes"].as_u64().unwrap() > 0, "{sum}");
        assert!(sum["sent_bytes"].as_u64().unwrap() >= sum["bytes"].as_u64().unwrap());
    }
    for (flags, names) in [
        (&["-n", "1M"][..], "-n"),
        (&["-O", "1"][..], "-O"),
        (&["--rcvbuf", "64K"][..], "--rcvbuf"),
        (&["-t", "1.5"][..], "whole seconds"),
    ] {
        let o = client(&port, &[&["--iperf3"][..], flags].concat());
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.lines().count() == 1 && e.contains(names),
            "{flags:?}: {e}"
        );
    }
    drop(s);
    if !tool_ok("perf_iperf3_detect", "iperf3") {
        return;
    }
    let (mut srv, p) = iperf3_server();
    // A plain client finds the iperf3 server and speaks its protocol,
    // saying so on standard error (the rest: the line-for-line test).
    let o = client(&p, &["-t", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("is an iperf3 server"), "{}", stderr(&o));
    assert!(stdout(&o).ends_with("iperf Done.\n"), "{}", stdout(&o));
    let _ = srv.0.kill();
    // And an error names iperf3's server where the peer is iperf3.
    let o = client(&free_port().to_string(), &["--iperf3", "-t", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no iperf3 server listens there (start one with 'iperf3 -s')"),
        "{}",
        stderr(&o)
    );
}

/// Finding an iperf3 server costs it nothing: our client waits silently
/// for our server's greeting, hears none, and sends iperf3's cookie on
/// the same connection, so iperf3's log holds one test and no error (the
/// probe that wrote our header first left "unable to receive parameters
/// from client" and used up its first test).
#[test]
fn finding_an_iperf3_server_leaves_one_clean_test_in_its_log() {
    if !tool_ok("perf_iperf3_log", "iperf3") {
        return;
    }
    let dir = TempDir::new("iperf3-log");
    let log = dir.0.join("iperf3.log");
    let (mut srv, p) = iperf3_server_with(&["--logfile", log.to_str().unwrap()]);
    let o = client(&p, &["-t", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("is an iperf3 server"), "{}", stderr(&o));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = srv.0.kill();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    println!("iperf3's log:\n{text}");
    assert_eq!(text.matches("Accepted connection").count(), 1, "{text}");
    assert!(!text.contains("error"), "{text}");
}

/// `iperf3 -s` on a free loopback port, and the port.
fn iperf3_server() -> (Proc, String) {
    iperf3_server_with(&[])
}

/// The same with `extra` flags.
fn iperf3_server_with(extra: &[&str]) -> (Proc, String) {
    let p = free_port().to_string();
    let srv = Proc(
        std::process::Command::new("iperf3")
            .args(["-s", "-p", &p])
            .args(extra)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_port(&p);
    (srv, p)
}

/// iperf3's UDP both ways, on one emulated path with 2 % loss each way
/// (20 ms, 40 Mbit/s), in one run with iperf3 against itself: `-u` and
/// `-u -R` at 8 Mbit/s in 1400-byte datagrams. What arrived is within 3 %
/// of iperf3-to-iperf3, the loss inside its binomial interval around the
/// 2 % the emulator drops (3.3 standard deviations), the jitter small. A
/// starved run is rerun whole, at most twice, and said.
#[test]
fn iperf3_udp_interop_both_ways_on_a_lossy_path() {
    if !netns_ok("perf_iperf3_udp")
        || !tool_ok("perf_iperf3_udp", "iperf3")
        || !tool_ok("perf_iperf3_udp", "jq")
    {
        return;
    }
    rerun_if_starved("iperf3 UDP interop", 3, iperf3_udp_interop_once);
}

fn iperf3_udp_interop_once() {
    let modes = ["", "-R"];
    // iperf3's UDP stream opens with one datagram each way and no
    // retransmission: on a lossy path a lost one fails the run, iperf3
    // against itself too. Such a run is rerun (at most twice), and said
    // (iperf3 -J exits 0 with an "error" key).
    let mut script = String::from(
        "run() { for t in 1 2 3; do o=$(\"$@\"); case \"$o\" in *'\"error\":'*) echo \"rerun after: $o\" >&2;; *) break;; esac; done; echo \"$o\"; }; ",
    );
    for m in modes {
        let flags = format!("-u -b 8M -l 1400 -t 4 {m}");
        script += &format!(
            "echo '== iperf3'; run iperf3 -c $TCPWISE_PEER -p 5201 {flags} -J; \
             echo '== client'; run {BIN} perf client $TCPWISE_PEER --iperf3 {flags} --json=iperf3; \
             echo '== server'; run iperf3 -c $TCPWISE_PEER -p 5301 {flags} -J; "
        );
    }
    let server = format!("iperf3 -s -p 5201 & exec {BIN} perf server");
    let link = ["--rtt", "20ms", "--rate", "40mbit", "--loss", "2%"];
    let o = testbed_serving(&server, &link, &script);
    assert!(o.status.success(), "{}", stderr(&o));
    for l in stderr(&o).lines().filter(|l| l.starts_with("rerun")) {
        println!("{l}");
    }
    let text = stdout(&o);
    let parts: Vec<&str> = text.split("== ").skip(1).collect();
    assert_eq!(parts.len(), 3 * modes.len(), "{text}");
    for (m, run) in modes.iter().zip(parts.chunks(3)) {
        let mut want = None;
        for (who, p) in ["iperf3", "client", "server"].iter().zip(run) {
            let body = p.strip_prefix(who).unwrap_or_else(|| panic!("{p}"));
            let d: serde_json::Value =
                serde_json::from_str(body).unwrap_or_else(|e| panic!("{who} {m}: {e}: {body}"));
            assert!(d.get("error").is_none(), "{who} {m}: {d}\n{}", stderr(&o));
            // The jq paths iperf3's consumers read.
            let num = |path: &str| {
                jq(&d, path)
                    .as_f64()
                    .unwrap_or_else(|| panic!("{who} {m}: {path}: {d}"))
            };
            let mbit = num(".end.sum_received.bits_per_second") / 1e6;
            let (lost, packets) = (num(".end.sum.lost_packets"), num(".end.sum.packets"));
            let jitter = num(".end.sum.jitter_ms");
            assert!(num(".end.sum.lost_percent") >= 0.0);
            assert_eq!(num("[.intervals[]] | length"), 4.0, "{who} {m}");
            println!(
                "-u {m:>2} {who:>6}: {mbit:.2} Mbit/s arrived, lost {lost}/{packets}, jitter {jitter:.3} ms"
            );
            let w = *want.get_or_insert(mbit);
            assert!(
                (mbit / w - 1.0).abs() <= 0.03,
                "{who} {m}: {mbit:.2} vs {w:.2}"
            );
            let p = lost / packets;
            let sd = (0.02 * 0.98 / packets).sqrt();
            assert!(
                (p - 0.02).abs() <= 3.3 * sd,
                "{who} {m}: lost {lost} of {packets}"
            );
            assert!(jitter < 5.0, "{who} {m}: jitter {jitter}");
        }
    }
}

/// A JSON document's key paths (an array's members under `[]`): what
/// "the same key tree" compares, values aside.
fn key_tree(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    fn walk(v: &serde_json::Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let p = format!("{at}.{k}");
                    out.insert(p.clone());
                    walk(x, &p, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, &format!("{at}[]"), out)),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(v, "", &mut out);
    out
}

/// A text output's shape, line for line: every number as `N`, a unit's
/// K/M/G/T prefix dropped (the values differ run to run), runs of spaces
/// as one.
fn shape(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let mut out = String::new();
            let c: Vec<char> = l.chars().collect();
            let mut i = 0;
            while i < c.len() {
                let rest: String = c[i..].iter().collect();
                if c[i].is_ascii_digit() {
                    while i < c.len()
                        && (c[i].is_ascii_digit()
                            || (c[i] == '.' && c.get(i + 1).is_some_and(char::is_ascii_digit)))
                    {
                        i += 1;
                    }
                    out.push('N');
                    continue;
                }
                if "KMGT".contains(c[i])
                    && (rest[1..].starts_with("Bytes") || rest[1..].starts_with("bits"))
                {
                    i += 1;
                    continue;
                }
                if c[i] == ' ' && out.ends_with(' ') {
                    i += 1;
                    continue;
                }
                out.push(c[i]);
                i += 1;
            }
            out
        })
        .collect()
}

/// Against a real `iperf3 -s` on loopback, `perf client` with iperf3's
/// flags and no `--iperf3` finds the iperf3 server, speaks its protocol,
/// and prints iperf3's text line for line (the same lines, numbers
/// aside) and, with `-J`, iperf3 3.12's own key tree for the same test:
/// TCP, `-R`, `-P`, `--bidir`, `-b`, `-w`. Against our own server `-J`
/// has the same key tree.
#[test]
fn iperf3_text_and_json_keys_are_iperf3s_line_for_line() {
    if !tool_ok("perf_iperf3_shape", "iperf3") {
        return;
    }
    let (mut srv, p) = iperf3_server();
    let ours = perf_server();
    // iperf3 3.12 closes its listener after a test and opens it again: a
    // client that comes at once can find the port closed (CI, 2 Dec), so
    // each waits for the listener.
    let iperf3 = |args: &[&str]| {
        wait_port(&p);
        let o = std::process::Command::new("iperf3")
            .args([&["-c", "127.0.0.1", "-p", &p][..], args].concat())
            .output()
            .unwrap();
        assert!(o.status.success(), "iperf3 {args:?}: {}", stdout(&o));
        o
    };
    let modes = [
        "",
        "-R",
        "-P 2",
        "--bidir",
        "-b 100M",
        "-w 256K",
        "-R -P 2",
        "--bidir -P 2",
    ];
    for m in modes {
        let flags: Vec<&str> = m.split_whitespace().collect();
        let text = [&["-t", "2"][..], &flags].concat();
        let want = iperf3(&text);
        wait_port(&p);
        let got = client(&p, &text);
        assert!(got.status.success(), "{m}: {}", stderr(&got));
        assert!(
            stderr(&got).contains("is an iperf3 server"),
            "{m}: {}",
            stderr(&got)
        );
        println!(
            "{m}: iperf3's text\n{}ours\n{}",
            stdout(&want),
            stdout(&got)
        );
        assert_eq!(shape(&stdout(&got)), shape(&stdout(&want)), "{m}");
        let js = [&["-t", "1", "-J"][..], &flags].concat();
        let want = key_tree(&json(&iperf3(&js)));
        for (who, port) in [
            ("iperf3 -s", p.clone()),
            ("tcpwise perf server", ours.port.to_string()),
        ] {
            wait_port(&port);
            let got = key_tree(&json(&client(&port, &js)));
            let only = |a: &std::collections::BTreeSet<String>,
                        b: &std::collections::BTreeSet<String>| {
                a.difference(b).cloned().collect::<Vec<_>>()
            };
            assert!(
                got == want,
                "{m} against {who}: only iperf3's {:?}, only ours {:?}",
                only(&want, &got),
                only(&got, &want)
            );
        }
    }
    let _ = srv.0.kill();
}
