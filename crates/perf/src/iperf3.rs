//! `--json=iperf3`: our report under iperf3's top-level names (`start`,
//! `intervals`, `end`) and field names (`bits_per_second`, `snd_cwnd`,
//! `rtt` in µs, `sum_sent`, `sum_received`, ...), so scripts written for
//! iperf3's `-J` (plotters, dashboards) read tcpwise's output unchanged.
//! Only what we measure is filled in; our own fields ride along under
//! `tcpwise`, so nothing is lost.

use crate::client::ClientOptions;
use crate::diagnose::{Interval, PerfReport};
use crate::parallel::ParallelReport;
use serde_json::{Value, json};

fn stream_interval(socket: usize, i: &Interval, sender: bool) -> Value {
    json!({
        "socket": socket,
        "start": i.start_s,
        "end": i.end_s,
        "seconds": i.end_s - i.start_s,
        "bytes": i.bytes,
        "bits_per_second": i.mbit * 1e6,
        "retransmits": i.retransmits,
        "snd_cwnd": i.cwnd_bytes,
        "rtt": i.rtt_ms.map(|r| (r * 1000.0).round() as u64),
        "omitted": false,
        "sender": sender,
    })
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

/// iperf3's `start`: `connected` (one entry a stream: its local and
/// remote address; nulls where a side is unknown), `version`,
/// `system_info`, `timestamp`, `connecting_to` and `test_start`.
fn start(
    opts: &ClientOptions,
    streams: usize,
    ends: &[Option<(std::net::SocketAddr, std::net::SocketAddr)>],
    bidir: bool,
) -> Value {
    let now = std::time::SystemTime::now();
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let connected: Vec<Value> = ends
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({
                "socket": i + 1,
                "local_host": e.map(|(l, _)| l.ip().to_string()),
                "local_port": e.map(|(l, _)| l.port()),
                "remote_host": e.map_or(opts.host.clone(), |(_, r)| r.ip().to_string()),
                "remote_port": e.map_or(opts.port, |(_, r)| r.port()),
            })
        })
        .collect();
    json!({
        "connected": connected,
        "version": format!("tcpwise {}", tcpwise_outcome::version()),
        "system_info": system_info(),
        "timestamp": { "time": httpdate::fmt_http_date(now), "timesecs": secs },
        "connecting_to": { "host": opts.host, "port": opts.port },
        "test_start": {
            "protocol": "TCP",
            "num_streams": streams,
            "blksize": crate::stream::CHUNK,
            "omit": opts.omit.as_secs_f64(),
            "duration": opts.duration.as_secs_f64(),
            "bytes": opts.bytes.unwrap_or(0),
            "blocks": 0,
            "reverse": i32::from(opts.reverse),
            "bidir": i32::from(bidir),
            "tos": 0,
        },
        "tcp_congestion": opts.congestion,
    })
}

/// iperf3's `end.cpu_utilization_percent`: this process's CPU over the
/// test's seconds; the remote side's is not reported to us (null).
fn cpu(seconds: f64) -> Value {
    let (user, system) = tcpwise_sys::cpu_times();
    let pct = |t: f64| 100.0 * t / seconds.max(1e-9);
    json!({
        "host_total": pct(user + system),
        "host_user": pct(user),
        "host_system": pct(system),
        "remote_total": null,
        "remote_user": null,
        "remote_system": null,
    })
}

fn end_stream(socket: usize, r: &PerfReport) -> Value {
    let s = &r.summary;
    let side = |sender: bool| {
        // The sender's side is what it wrote over its own run, as in
        // iperf3 (not what arrived).
        let (bytes, seconds) = match (sender, s.sent_bytes, s.sent_seconds) {
            (true, Some(b), Some(t)) => (b, t.max(1e-9)),
            _ => (s.bytes, s.seconds),
        };
        json!({
            "socket": socket,
            "start": 0.0,
            "end": seconds,
            "seconds": seconds,
            "bytes": bytes,
            "bits_per_second": bytes as f64 * 8.0 / seconds.max(1e-9),
            "retransmits": if sender { s.retransmits } else { None },
            "max_snd_cwnd": if sender { r.intervals.iter().filter_map(|i| i.cwnd_bytes).max() } else { None },
            "min_rtt": s.min_rtt_ms.map(|m| (m * 1000.0).round() as u64),
            "mean_rtt": s.rtt_ms.map(|m| (m * 1000.0).round() as u64),
            "sender": sender,
        })
    };
    json!({ "sender": side(true), "receiver": side(false) })
}

fn sum(start_s: f64, end_s: f64, bytes: u64, mbit: f64, retr: Option<u64>, sender: bool) -> Value {
    let mut v = json!({
        "start": start_s,
        "end": end_s,
        "seconds": end_s - start_s,
        "bytes": bytes,
        "bits_per_second": mbit * 1e6,
        "omitted": false,
        "sender": sender,
    });
    // iperf3 writes retransmits on the sending side only (no null).
    if let Some(r) = retr {
        v["retransmits"] = json!(r);
    }
    v
}

/// iperf3's `sum_sent`: what the sender wrote over its own run (more than
/// arrived while data was still in flight), else what arrived.
fn sent(s: &crate::diagnose::Summary) -> (f64, u64, f64) {
    match (s.sent_bytes, s.sent_seconds) {
        (Some(b), Some(t)) if t > 0.0 && s.omitted_s.is_none() => (t, b, b as f64 * 8.0 / t / 1e6),
        _ => (s.seconds, s.bytes, s.goodput_mbit),
    }
}

/// One stream's test in iperf3's `-J` shape.
pub fn single(opts: &ClientOptions, r: &PerfReport) -> Value {
    let intervals: Vec<Value> = r
        .intervals
        .iter()
        .map(|i| {
            json!({
                "streams": [stream_interval(1, i, !opts.reverse)],
                "sum": sum(i.start_s, i.end_s, i.bytes, i.mbit, i.retransmits, !opts.reverse),
            })
        })
        .collect();
    let s = &r.summary;
    let (sent_s, sent_b, sent_m) = sent(s);
    json!({
        "start": start(opts, 1, &[r.ends], false),
        "intervals": intervals,
        "end": {
            "cpu_utilization_percent": cpu(s.seconds),
            "streams": [end_stream(1, r)],
            "sum_sent": sum(0.0, sent_s, sent_b, sent_m, s.retransmits, true),
            "sum_received": sum(0.0, s.seconds, s.bytes, s.goodput_mbit, None, false),
            "sender_tcp_congestion": opts.congestion,
            "receiver_tcp_congestion": opts.congestion,
        },
        "tcpwise": r,
    })
}

/// A `-P`/`--bidir` test in iperf3's shape (streams numbered from 1).
pub fn parallel(opts: &ClientOptions, r: &ParallelReport) -> Value {
    let n = r.streams.len();
    let rounds = r
        .streams
        .iter()
        .map(|(_, s)| s.intervals.len())
        .max()
        .unwrap_or(0);
    let by_dir = |d: &str| -> Vec<&crate::parallel::SumInterval> {
        r.sum_intervals
            .iter()
            .filter(|s| s.direction == d)
            .collect()
    };
    let (sums, rsum) = (by_dir("send"), by_dir("receive"));
    let mut intervals = Vec::new();
    for k in 0..rounds {
        let streams: Vec<Value> = r
            .streams
            .iter()
            .enumerate()
            .filter_map(|(i, (_, s))| {
                s.intervals
                    .get(k)
                    .map(|l| stream_interval(i + 1, l, !s.reverse))
            })
            .collect();
        let pick = sums.get(k).or(rsum.get(k));
        let mut entry = json!({ "streams": streams });
        if let Some(s) = pick {
            entry["sum"] = sum(
                s.start_s,
                s.end_s,
                s.bytes,
                s.mbit,
                s.retransmits,
                s.direction == "send",
            );
        }
        if let (Some(_), Some(b)) = (sums.get(k), rsum.get(k)) {
            entry["sum_bidir_reverse"] =
                sum(b.start_s, b.end_s, b.bytes, b.mbit, b.retransmits, false);
        }
        intervals.push(entry);
    }
    let mut end = json!({
        "streams": r.streams.iter().enumerate().map(|(i, (_, s))| end_stream(i + 1, s)).collect::<Vec<_>>(),
        "sender_tcp_congestion": opts.congestion,
        "receiver_tcp_congestion": opts.congestion,
    });
    let seconds = r
        .streams
        .iter()
        .map(|(_, s)| s.summary.seconds)
        .fold(0.0, f64::max);
    for t in &r.sums {
        let (sent, recv) = if t.direction == "send" || !r.sums.iter().any(|x| x.direction == "send")
        {
            ("sum_sent", "sum_received")
        } else {
            ("sum_sent_bidir_reverse", "sum_received_bidir_reverse")
        };
        // What the senders of this direction wrote, over their own runs.
        let mine: Vec<_> = r
            .streams
            .iter()
            .filter(|(_, s)| s.reverse == (t.direction == "receive"))
            .map(|(_, s)| self::sent(&s.summary))
            .collect();
        let sent_s = mine.iter().map(|m| m.0).fold(0.0, f64::max);
        let sent_b: u64 = mine.iter().map(|m| m.1).sum();
        let (sent_s, sent_b, sent_m) = if sent_s > 0.0 && !mine.is_empty() {
            (sent_s, sent_b, sent_b as f64 * 8.0 / sent_s / 1e6)
        } else {
            (seconds, t.bytes, t.goodput_mbit)
        };
        end[sent] = sum(0.0, sent_s, sent_b, sent_m, t.retransmits, true);
        end[recv] = sum(0.0, seconds, t.bytes, t.goodput_mbit, None, false);
    }
    end["cpu_utilization_percent"] = cpu(seconds);
    // --bidir: iperf3 counts the streams asked for (-P), not both ways.
    let bidir =
        r.streams.iter().any(|(_, s)| s.reverse) && r.streams.iter().any(|(_, s)| !s.reverse);
    let ends: Vec<_> = r.streams.iter().map(|(_, s)| s.ends).collect();
    json!({
        "start": start(opts, if bidir { n / 2 } else { n }, &ends, bidir),
        "intervals": intervals,
        "end": end,
        "tcpwise": r,
    })
}

/// A UDP test (`-u`) in iperf3's shape: the receiver's intervals (with
/// `jitter_ms`, `lost_packets`, `packets`, `lost_percent`, as iperf3's
/// receiving side writes them), `end.streams[].udp`, `end.sum`,
/// `end.sum_sent` and `end.sum_received`; `packets` is the sender's count
/// and `lost_packets` what never arrived, as in iperf3.
pub fn udp(opts: &ClientOptions, r: &crate::udp::UdpReport) -> Value {
    let mut st = start(opts, 1, &[None], false);
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
            "cpu_utilization_percent": cpu(secs),
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
        "tcpwise": r,
    })
}
