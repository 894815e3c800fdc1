//! `-J`/`--json` (`--json=iperf3`): the report in iperf3 3.12's `-J`
//! layout, key for key (`start`, `intervals`, `end`; `bits_per_second`,
//! `snd_cwnd`, `rtt` in µs, `sum_sent`, `sum_received`, ...), so scripts
//! written for iperf3 (plotters, dashboards, the `iperf3` Python package)
//! read tcpwise's output unchanged; `crates/cli/tests/perf.rs` compares
//! the key tree with iperf3's own for each kind of test. Nothing else
//! rides along: tcpwise's own fields (buffers, diagnosis) are
//! `--json=tcpwise`'s.

use crate::client::ClientOptions;
use crate::diagnose::{Interval, PerfReport};
use crate::parallel::{Iperf3Extras, ParallelReport, SumInterval};
use serde_json::{Value, json};
use std::net::SocketAddr;

/// A whole number of seconds as iperf3 writes it (an integer), others
/// as they are.
fn secs(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// One stream's interval; the sender's `TCP_INFO` figures only where the
/// client sends (iperf3 leaves them out of a receiving client's lines).
fn stream_interval(socket: i64, i: &Interval, client_sends: bool) -> Value {
    let mut v = json!({
        "socket": socket,
        "start": i.start_s,
        "end": i.end_s,
        "seconds": i.end_s - i.start_s,
        "bytes": i.bytes,
        "bits_per_second": i.mbit * 1e6,
    });
    if client_sends {
        let us = |ms: Option<f64>| ms.map_or(0, |r| (r * 1000.0).round() as u64);
        v["retransmits"] = json!(i.retransmits.unwrap_or(0));
        v["snd_cwnd"] = json!(i.cwnd_bytes.unwrap_or(0));
        v["snd_wnd"] = json!(i.snd_wnd_bytes.unwrap_or(0));
        v["rtt"] = json!(us(i.rtt_ms));
        v["rttvar"] = json!(us(i.rttvar_ms));
        v["pmtu"] = json!(i.pmtu.unwrap_or(0));
    }
    v["omitted"] = json!(i.omitted);
    v["sender"] = json!(client_sends);
    v
}

/// `uname -a`'s words, as iperf3's `system_info` has them.
fn system_info() -> String {
    let k = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    format!(
        "{} {} {} {} {}",
        k("ostype"),
        k("hostname"),
        k("osrelease"),
        k("version"),
        std::env::consts::ARCH
    )
}

/// What iperf3's `start` says of the test beyond its streams.
pub(crate) struct Started<'a> {
    /// Streams iperf3 counts (`-P`; with `--bidir`, one direction's).
    pub streams: usize,
    /// Each stream's (local, remote) ends and socket number.
    pub ends: Vec<(Option<(SocketAddr, SocketAddr)>, i64)>,
    /// The test's cookie.
    pub cookie: String,
    /// The first stream's report (our socket's MSS and buffers).
    pub first: Option<&'a PerfReport>,
}

impl<'a> Started<'a> {
    fn of(streams: usize, r: &'a [(String, PerfReport)], extras: Option<&Iperf3Extras>) -> Self {
        let ends = r
            .iter()
            .enumerate()
            .map(|(i, (_, s))| {
                let fd = extras
                    .and_then(|x| x.fds.get(i))
                    .map_or(i as i64 + 1, |&f| i64::from(f));
                (s.ends, fd)
            })
            .collect();
        let cookie = extras.map_or_else(
            || {
                let c = crate::interop::client::random_cookie();
                String::from_utf8_lossy(&c[..c.len() - 1]).into_owned()
            },
            |x| x.cookie.clone(),
        );
        Started {
            streams,
            ends,
            cookie,
            first: r.first().map(|(_, s)| s),
        }
    }
}

/// iperf3's `start`: `connected` (one entry a stream: its local and
/// remote address; nulls where a side is unknown), `version`,
/// `system_info`, `timestamp`, `connecting_to`, `cookie`, the MSS and
/// buffers of the first stream's socket, and `test_start`.
fn start(opts: &ClientOptions, st: &Started) -> Value {
    let now = std::time::SystemTime::now();
    let secs_now = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let connected: Vec<Value> = st
        .ends
        .iter()
        .map(|(e, fd)| {
            json!({
                "socket": fd,
                "local_host": e.map(|(l, _)| l.ip().to_string()),
                "local_port": e.map(|(l, _)| l.port()),
                "remote_host": e.map_or(opts.host.clone(), |(_, r)| r.ip().to_string()),
                "remote_port": e.map_or(opts.port, |(_, r)| r.port()),
            })
        })
        .collect();
    // Our socket's buffers: the sender's when the client sends.
    let mine = st.first.map(|r| {
        if r.reverse {
            &r.receiver_buffers
        } else {
            &r.sender_buffers
        }
    });
    let rate = opts.pacing_bps.unwrap_or(0);
    json!({
        "connected": connected,
        "version": format!("tcpwise {}", tcpwise_outcome::version()),
        "system_info": system_info(),
        "timestamp": { "time": httpdate::fmt_http_date(now), "timesecs": secs_now },
        "connecting_to": { "host": opts.host, "port": opts.port },
        "cookie": st.cookie,
        "tcp_mss_default": st.first.and_then(|r| r.mss).unwrap_or(0),
        "target_bitrate": rate,
        "sock_bufsize": if opts.window_flag { opts.rcvbuf.unwrap_or(0) } else { 0 },
        "sndbuf_actual": mine.map_or(0, |b| b.snd_held),
        "rcvbuf_actual": mine.map_or(0, |b| b.rcv_held),
        "test_start": {
            "protocol": "TCP",
            "num_streams": st.streams,
            "blksize": crate::stream::CHUNK,
            "omit": secs(opts.omit.as_secs_f64()),
            "duration": secs(opts.duration.as_secs_f64()),
            "bytes": opts.bytes.unwrap_or(0),
            "blocks": 0,
            "reverse": i32::from(opts.reverse),
            "tos": 0,
            "target_bitrate": rate,
        },
    })
}

/// iperf3's `end.cpu_utilization_percent`: this process's CPU over the
/// test's seconds; the server's where its results said (iperf3's
/// protocol), else null.
fn cpu(seconds: f64, remote: Option<[f64; 3]>) -> Value {
    let (user, system) = tcpwise_sys::cpu_times();
    let pct = |t: f64| 100.0 * t / seconds.max(1e-9);
    json!({
        "host_total": pct(user + system),
        "host_user": pct(user),
        "host_system": pct(system),
        "remote_total": remote.map(|r| r[0]),
        "remote_user": remote.map(|r| r[1]),
        "remote_system": remote.map(|r| r[2]),
    })
}

/// One stream's `end` entry: the sender's books (with its `TCP_INFO`
/// extremes, zero where the sender is not our socket and unknown) and
/// the receiver's; `sender` says whether the client sends, as iperf3 3.12
/// writes it on both.
fn end_stream(socket: i64, r: &PerfReport) -> Value {
    let s = &r.summary;
    let client_sends = !r.reverse;
    let (bytes, seconds) = match (s.sent_bytes, s.sent_seconds) {
        (Some(b), Some(t)) => (b, t.max(1e-9)),
        _ => (s.bytes, s.seconds),
    };
    let max = |f: fn(&Interval) -> Option<u64>| r.intervals.iter().filter_map(f).max().unwrap_or(0);
    let us = |ms: Option<f64>| ms.map_or(0, |m| (m * 1000.0).round() as u64);
    json!({
        "sender": {
            "socket": socket,
            "start": 0,
            "end": seconds,
            "seconds": seconds,
            "bytes": bytes,
            "bits_per_second": bytes as f64 * 8.0 / seconds,
            "retransmits": s.retransmits.unwrap_or(0),
            "max_snd_cwnd": max(|i| i.cwnd_bytes),
            "max_snd_wnd": max(|i| i.snd_wnd_bytes),
            "max_rtt": max(|i| i.rtt_ms.map(|m| (m * 1000.0).round() as u64)),
            "min_rtt": us(s.min_rtt_ms),
            "mean_rtt": us(s.rtt_ms),
            "sender": client_sends,
        },
        "receiver": {
            "socket": socket,
            "start": 0,
            "end": s.seconds,
            "seconds": s.seconds,
            "bytes": s.bytes,
            "bits_per_second": s.bytes as f64 * 8.0 / s.seconds.max(1e-9),
            "sender": client_sends,
        },
    })
}

/// An interval's `sum` (`omitted` and, where the client sends,
/// `retransmits`), as iperf3 writes it.
fn interval_sum(s: &SumInterval, client_sends: bool) -> Value {
    let mut v = json!({
        "start": s.start_s,
        "end": s.end_s,
        "seconds": s.end_s - s.start_s,
        "bytes": s.bytes,
        "bits_per_second": s.mbit * 1e6,
    });
    if client_sends {
        v["retransmits"] = json!(s.retransmits.unwrap_or(0));
    }
    v["omitted"] = json!(false);
    v["sender"] = json!(client_sends);
    v
}

/// An `end` sum: `sum_sent` (with retransmits) or `sum_received`;
/// `sender` says whether the client sends that direction.
fn end_sum(seconds: f64, bytes: u64, retr: Option<u64>, client_sends: bool) -> Value {
    let mut v = json!({
        "start": 0,
        "end": seconds,
        "seconds": seconds,
        "bytes": bytes,
        "bits_per_second": bytes as f64 * 8.0 / seconds.max(1e-9),
    });
    if let Some(r) = retr {
        v["retransmits"] = json!(r);
    }
    v["sender"] = json!(client_sends);
    v
}

/// What the senders of one direction wrote, over their own runs (more
/// than arrived while data was still in flight), else what arrived.
fn sent_books(rs: &[&PerfReport]) -> (f64, u64) {
    let mut seconds = 0.0f64;
    let mut bytes = 0;
    for r in rs {
        let s = &r.summary;
        let (t, b) = match (s.sent_bytes, s.sent_seconds) {
            (Some(b), Some(t)) if t > 0.0 => (t, b),
            _ => (s.seconds, s.bytes),
        };
        seconds = seconds.max(t);
        bytes += b;
    }
    (seconds, bytes)
}

/// One stream's test (our own protocol) in iperf3's `-J` shape.
pub fn single(opts: &ClientOptions, r: &PerfReport) -> Value {
    let joined = ParallelReport {
        streams: vec![("1".into(), r.clone())],
        sum_intervals: r
            .intervals
            .iter()
            .map(|i| SumInterval {
                direction: if r.reverse { "receive" } else { "send" },
                start_s: i.start_s,
                end_s: i.end_s,
                bytes: i.bytes,
                mbit: i.mbit,
                retransmits: i.retransmits,
            })
            .collect(),
        sums: Vec::new(),
        iperf3: None,
    };
    parallel(opts, &joined)
}

/// The interval entries: every stream's k-th line, the client's sending
/// direction's sum as `sum` and, with `--bidir`, the other as
/// `sum_bidir_reverse`.
fn intervals(r: &ParallelReport, socket: &dyn Fn(usize) -> i64) -> Vec<Value> {
    let rounds = r
        .streams
        .iter()
        .map(|(_, s)| s.intervals.len())
        .max()
        .unwrap_or(0);
    let by_dir = |d: &str| -> Vec<&SumInterval> {
        r.sum_intervals
            .iter()
            .filter(|s| s.direction == d)
            .collect()
    };
    let (sends, receives) = (by_dir("send"), by_dir("receive"));
    (0..rounds)
        .map(|k| {
            let streams: Vec<Value> = r
                .streams
                .iter()
                .enumerate()
                .filter_map(|(i, (_, s))| {
                    s.intervals
                        .get(k)
                        .map(|l| stream_interval(socket(i), l, !s.reverse))
                })
                .collect();
            let mut entry = json!({ "streams": streams });
            match (sends.get(k), receives.get(k)) {
                (Some(a), Some(b)) => {
                    entry["sum"] = interval_sum(a, true);
                    entry["sum_bidir_reverse"] = interval_sum(b, false);
                }
                (Some(a), None) => entry["sum"] = interval_sum(a, true),
                (None, Some(b)) => entry["sum"] = interval_sum(b, false),
                (None, None) => {}
            }
            entry
        })
        .collect()
}

/// A test (`-P`, `--bidir`, or one stream) in iperf3's `-J` shape: its
/// streams numbered by their sockets where iperf3's protocol gave them.
pub fn parallel(opts: &ClientOptions, r: &ParallelReport) -> Value {
    let extras = r.iperf3.as_ref();
    let socket = |i: usize| {
        extras
            .and_then(|x| x.fds.get(i))
            .map_or(i as i64 + 1, |&f| i64::from(f))
    };
    let seconds = r
        .streams
        .iter()
        .map(|(_, s)| s.summary.seconds)
        .fold(0.0, f64::max);
    let mut end = json!({
        "streams": r.streams.iter().enumerate().map(|(i, (_, s))| end_stream(socket(i), s)).collect::<Vec<_>>(),
    });
    let bidir =
        r.streams.iter().any(|(_, s)| s.reverse) && r.streams.iter().any(|(_, s)| !s.reverse);
    for client_sends in [true, false] {
        let rs: Vec<&PerfReport> = r
            .streams
            .iter()
            .filter(|(_, s)| s.reverse != client_sends)
            .map(|(_, s)| s)
            .collect();
        if rs.is_empty() {
            continue;
        }
        let (sent, recv) = if bidir && !client_sends {
            ("sum_sent_bidir_reverse", "sum_received_bidir_reverse")
        } else {
            ("sum_sent", "sum_received")
        };
        let (sent_s, sent_b) = sent_books(&rs);
        let retr = rs.iter().map(|s| s.summary.retransmits.unwrap_or(0)).sum();
        let got_s = rs.iter().map(|s| s.summary.seconds).fold(0.0, f64::max);
        let got_b = rs.iter().map(|s| s.summary.bytes).sum();
        end[sent] = end_sum(sent_s, sent_b, Some(retr), client_sends);
        end[recv] = end_sum(got_s, got_b, None, client_sends);
    }
    end["cpu_utilization_percent"] = cpu(seconds, extras.map(|x| x.remote_cpu));
    let cc = opts
        .congestion
        .clone()
        .or_else(|| extras.and_then(|x| x.remote_congestion.clone()));
    end["sender_tcp_congestion"] = json!(cc);
    end["receiver_tcp_congestion"] = json!(cc);
    // --bidir: iperf3 counts the streams asked for (-P), not both ways.
    let n = r.streams.len();
    let st = Started::of(if bidir { n / 2 } else { n }, &r.streams, extras);
    json!({
        "start": start(opts, &st),
        "intervals": intervals(r, &socket),
        "end": end,
    })
}

/// A UDP test (`-u`) in iperf3's shape: the receiver's intervals (with
/// `jitter_ms`, `lost_packets`, `packets`, `lost_percent`, as iperf3's
/// receiving side writes them), `end.streams[].udp`, `end.sum`,
/// `end.sum_sent` and `end.sum_received`; `packets` is the sender's count
/// and `lost_packets` what never arrived, as in iperf3.
pub fn udp(opts: &ClientOptions, r: &crate::udp::UdpReport) -> Value {
    let mut started = Started::of(1, &[], None);
    started.ends = vec![(None, 1)];
    let mut st = start(opts, &started);
    if let Some(o) = st.as_object_mut() {
        o.remove("tcp_mss_default");
    }
    st["test_start"]["protocol"] = json!("UDP");
    st["test_start"]["blksize"] = json!(r.len);
    st["test_start"]["target_bitrate"] = json!(r.rate_bps);
    st["target_bitrate"] = json!(r.rate_bps);
    let intervals: Vec<Value> = r
        .intervals
        .iter()
        .map(|i| {
            let total = i.packets + i.lost;
            let mut v = json!({
                "socket": 1,
                "start": i.start_s,
                "end": i.end_s,
                "seconds": i.end_s - i.start_s,
                "bytes": i.bytes,
                "bits_per_second": i.mbit * 1e6,
                "packets": i.packets,
                "omitted": false,
                "sender": i.sender,
            });
            // A sender's line, as iperf3's sending client writes it, says
            // what left and nothing of loss or jitter.
            if !i.sender {
                v["jitter_ms"] = json!(i.jitter_ms);
                v["lost_packets"] = json!(i.lost);
                v["packets"] = json!(total);
                v["lost_percent"] = json!(crate::udp::lost_pct(i.lost, total));
            }
            let mut sum = v.clone();
            if let Some(o) = sum.as_object_mut() {
                o.remove("socket");
            }
            json!({ "streams": [v], "sum": sum })
        })
        .collect();
    let received_bytes = r.received * r.len as u64;
    let sent_bytes = r.sent * r.len as u64;
    let secs = opts.duration.as_secs_f64();
    let received = |socket: Option<usize>| {
        let mut v = json!({
            "start": 0.0,
            "end": r.seconds,
            "seconds": r.seconds,
            "bytes": received_bytes,
            "bits_per_second": r.mbit * 1e6,
            "jitter_ms": r.jitter_ms,
            "lost_packets": r.lost,
            "packets": r.sent,
            "lost_percent": r.lost_pct,
            "sender": false,
        });
        if let Some(s) = socket {
            v["socket"] = json!(s);
            v["out_of_order"] = json!(r.out_of_order);
        }
        v
    };
    json!({
        "start": st,
        "intervals": intervals,
        "end": {
            "cpu_utilization_percent": cpu(secs, None),
            "streams": [{ "udp": received(Some(1)) }],
            "sum": received(None),
            "sum_sent": {
                "start": 0.0,
                "end": secs,
                "seconds": secs,
                "bytes": sent_bytes,
                "bits_per_second": sent_bytes as f64 * 8.0 / secs.max(1e-9),
                "jitter_ms": 0.0,
                "lost_packets": 0,
                "packets": r.sent,
                "lost_percent": 0.0,
                "sender": true,
            },
            "sum_received": received(None),
        },
    })
}
