//! Joins both sides' samples into interval lines and decides, from the
//! sender's `TCP_INFO`, whether a buffer or the receive window limited the
//! flow. Pure functions, unit-tested on synthetic samples.

use crate::proto::Sample;
use serde::Serialize;
use std::fmt::Write as _;
use tcpwise_tcp::{AppliedBuffers, TcpInfo, path};

/// One interval line.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Interval {
    /// Start, seconds.
    pub start_s: f64,
    /// Inside `-O`'s omitted start: printed, marked, and left out of the
    /// summary (iperf3's `omitted`).
    #[serde(default)]
    pub omitted: bool,
    /// End, seconds.
    pub end_s: f64,
    /// Bytes the receiver got in the interval.
    pub bytes: u64,
    /// Goodput, Mbit/s.
    pub mbit: f64,
    /// Sender's smoothed RTT at the end, ms.
    pub rtt_ms: Option<f64>,
    /// Sender's RTT variance at the end, ms (iperf3's `rttvar`).
    #[serde(default)]
    pub rttvar_ms: Option<f64>,
    /// Sender's congestion window at the end, bytes.
    pub cwnd_bytes: Option<u64>,
    /// The receive window the sender was last offered, bytes
    /// (`tcpi_snd_wnd`, iperf3's `snd_wnd`).
    #[serde(default)]
    pub snd_wnd_bytes: Option<u64>,
    /// The sender's path MTU at the end, bytes (iperf3's `pmtu`).
    #[serde(default)]
    pub pmtu: Option<u32>,
    /// Sender's retransmissions in the interval.
    pub retransmits: Option<u64>,
    /// Percent of the interval the sender was limited by the receive window.
    pub rwnd_limited_pct: Option<f64>,
    /// Percent of the interval the sender was limited by its send buffer.
    pub sndbuf_limited_pct: Option<f64>,
    /// The receiver's SO_RCVBUF at the end of the interval, bytes.
    pub rcvbuf_bytes: Option<u64>,
    /// The sender's SO_SNDBUF at the end of the interval, bytes.
    pub sndbuf_bytes: Option<u64>,
    /// The sender's pacing rate at the end (`tcpi_pacing_rate`), Mbit/s:
    /// what its congestion control (or `-b`) lets it send at.
    #[serde(default)]
    pub pacing_mbit: Option<f64>,
    /// The sender's latest delivery-rate sample (`tcpi_delivery_rate`), Mbit/s.
    #[serde(default)]
    pub delivery_mbit: Option<f64>,
    /// BBR's bandwidth estimate at the end (`TCP_CC_INFO`), Mbit/s; BBR only.
    #[serde(default)]
    pub bbr_bw_mbit: Option<f64>,
    /// BBR's min RTT estimate, ms.
    #[serde(default)]
    pub bbr_min_rtt_ms: Option<f64>,
}

/// The run's summary.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Summary {
    /// Bytes received over the time from the first to the last byte, Mbit/s.
    pub goodput_mbit: f64,
    /// Bytes received.
    pub bytes: u64,
    /// Seconds from the first to the last byte at the receiver.
    pub seconds: f64,
    /// Sender's RTT (mean of interval samples), ms.
    pub rtt_ms: Option<f64>,
    /// Sender's minimum RTT, ms.
    pub min_rtt_ms: Option<f64>,
    /// Sender's retransmissions.
    pub retransmits: Option<u64>,
    /// Whether a buffer or the receive window limited the flow.
    pub buffer_limited: bool,
    /// Cap the static receive buffer puts on the flow at the measured RTT; null unless one applies.
    pub predicted_cap_mbit: Option<f64>,
    /// Percent of the sender's busy time limited by the receive window.
    pub rwnd_limited_pct: Option<f64>,
    /// Percent of the sender's busy time limited by its send buffer.
    pub sndbuf_limited_pct: Option<f64>,
    /// Largest window the receiver advertised (its `TCP_INFO.rcv_wnd`), bytes.
    pub advertised_window_bytes: Option<u32>,
    /// What limited the flow and what to change; null when nothing to say.
    pub diagnosis: Option<String>,
    /// `-O`: seconds left out at the start (goodput, bytes and seconds are
    /// then over the rest).
    #[serde(default)]
    pub omitted_s: Option<f64>,
    /// Bytes the sender wrote, and over how long (its own clock): iperf3's
    /// `sum_sent`, which differs from what arrived while data is in flight.
    #[serde(default)]
    pub sent_bytes: Option<u64>,
    /// Seconds of the sender's run.
    #[serde(default)]
    pub sent_seconds: Option<f64>,
}

/// Everything `tcpwise perf client` reports.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PerfReport {
    /// The data connection's local and remote addresses.
    pub ends: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
    /// Interval lines.
    pub intervals: Vec<Interval>,
    /// Summary and diagnosis.
    pub summary: Summary,
    /// What the receive and send buffers held while the test ran, read
    /// from the sockets themselves (autotuning grows them from the
    /// `tcp_rmem`/`tcp_wmem` defaults).
    pub grown: Grown,
    /// Buffers of the receiving socket as set up (before autotuning).
    pub receiver_buffers: AppliedBuffers,
    /// Buffers of the sending socket.
    pub sender_buffers: AppliedBuffers,
    /// Whether the server sent (`-R`).
    pub reverse: bool,
    /// Warnings (capped buffers and the like).
    pub warnings: Vec<String>,
    /// `-b`: whether the pacing held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing: Option<PacingCheck>,
    /// `--get-server-output`: the server's own lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_output: Option<String>,
    /// `-Z`: how the sender sent, and with `msg` what the kernel did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<ZeroCopyReport>,
    /// This end's MSS on the data connection (`tcpi_snd_mss`, what
    /// `TCP_MAXSEG` reads; iperf3's `tcp_mss_default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<u32>,
}

/// `-Z`: the method, and for `MSG_ZEROCOPY` the sender's counts.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct ZeroCopyReport {
    /// `sendfile` or `msg`.
    pub method: crate::proto::ZeroCopy,
    /// `msg`: sends, completions, and completions the kernel copied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<crate::proto::ZeroCopyCount>,
}

impl std::fmt::Display for ZeroCopyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "zero copy: {}", self.method)?;
        match self.counts {
            None => write!(f, " (the sender's bytes went from an in-memory file)"),
            Some(c) => {
                write!(
                    f,
                    ": {} sends, {} completed, {} of them copied by the kernel after all",
                    c.sends, c.completed, c.copied
                )?;
                if c.completed > 0 && c.copied * 2 > c.completed {
                    write!(
                        f,
                        " (the path delivers to a local receiver, as loopback and TUN do, so the pages are copied anyway)"
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// Socket buffer sizes as the test went, from each side's samples.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Grown {
    /// The receiver's SO_RCVBUF at the end, bytes.
    pub rcvbuf_end_bytes: Option<u64>,
    /// The receiver's largest SO_RCVBUF seen, bytes.
    pub rcvbuf_peak_bytes: Option<u64>,
    /// The sender's SO_SNDBUF at the end, bytes.
    pub sndbuf_end_bytes: Option<u64>,
    /// The sender's largest SO_SNDBUF seen, bytes.
    pub sndbuf_peak_bytes: Option<u64>,
}

impl Grown {
    /// From the receiver's and the sender's samples, in time order.
    pub fn from_samples(rx: &[Sample], tx: &[Sample]) -> Grown {
        Grown {
            rcvbuf_end_bytes: rx.iter().rev().find_map(|s| s.rcvbuf),
            rcvbuf_peak_bytes: rx.iter().filter_map(|s| s.rcvbuf).max(),
            sndbuf_end_bytes: tx.iter().rev().find_map(|s| s.sndbuf),
            sndbuf_peak_bytes: tx.iter().filter_map(|s| s.sndbuf).max(),
        }
    }
}

fn delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// Interval `i` from consecutive receiver samples and the sender samples
/// that end the same intervals.
pub fn interval(
    rx0: &Sample,
    rx1: &Sample,
    tx0: Option<&Sample>,
    tx1: Option<&Sample>,
) -> Interval {
    let secs = (rx1.t - rx0.t).max(1e-9);
    let bytes = rx1.bytes.saturating_sub(rx0.bytes);
    let i1 = tx1.and_then(|s| s.info.as_ref());
    let i0 = tx0.and_then(|s| s.info.as_ref());
    let span_us = match (tx0, tx1) {
        (Some(a), Some(b)) => ((b.t - a.t) * 1e6).max(1.0),
        _ => secs * 1e6,
    };
    let pct = |f: fn(&TcpInfo) -> Option<u64>| -> Option<f64> {
        let d = delta(i0.map_or(Some(0), f), i1.and_then(f))?;
        Some((100.0 * d as f64 / span_us).min(100.0))
    };
    Interval {
        start_s: rx0.t,
        omitted: false,
        end_s: rx1.t,
        bytes,
        mbit: bytes as f64 * 8.0 / secs / 1e6,
        rtt_ms: i1.map(|i| f64::from(i.rtt_us) / 1000.0),
        rttvar_ms: i1.map(|i| f64::from(i.rttvar_us) / 1000.0),
        cwnd_bytes: i1.map(TcpInfo::cwnd_bytes),
        snd_wnd_bytes: i1.and_then(|i| i.snd_wnd).map(u64::from),
        pmtu: i1.map(|i| i.pmtu),
        retransmits: i1
            .map(|i| u64::from(i.total_retrans) - i0.map_or(0, |x| u64::from(x.total_retrans))),
        rwnd_limited_pct: pct(|i| i.rwnd_limited_us),
        sndbuf_limited_pct: pct(|i| i.sndbuf_limited_us),
        rcvbuf_bytes: rx1.rcvbuf,
        sndbuf_bytes: tx1.and_then(|s| s.sndbuf),
        // u64::MAX is the kernel's "no limit" before the first RTT sample.
        pacing_mbit: i1
            .and_then(|i| i.pacing_rate)
            .filter(|&r| r != u64::MAX)
            .map(|r| r as f64 * 8.0 / 1e6),
        delivery_mbit: i1
            .and_then(|i| i.delivery_rate)
            .map(|r| r as f64 * 8.0 / 1e6),
        bbr_bw_mbit: i1.and_then(|i| i.bbr_bw).map(|b| b as f64 * 8.0 / 1e6),
        bbr_min_rtt_ms: i1
            .and_then(|i| i.bbr_min_rtt_us)
            .map(|u| f64::from(u) / 1e3),
    }
}

/// `-b` for TCP: whether the writes' throttle held the rate.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct PacingCheck {
    /// The rate asked for, Mbit/s.
    pub target_mbit: f64,
    /// Full intervals after the first (slow start) that were compared.
    pub intervals: usize,
    /// The largest difference from the target among them, percent.
    pub worst_pct: f64,
    /// Their goodput, lowest and highest, Mbit/s.
    pub min_mbit: f64,
    /// Highest.
    pub max_mbit: f64,
}

impl PacingCheck {
    /// From the interval lines: every full interval after the first.
    pub fn of(lines: &[Interval], target_mbit: f64) -> Option<PacingCheck> {
        let full = lines.first().map(|l| l.end_s - l.start_s)?;
        let v: Vec<f64> = lines
            .iter()
            .skip(1)
            .filter(|l| l.end_s - l.start_s >= 0.9 * full)
            .map(|l| l.mbit)
            .collect();
        if v.is_empty() {
            return None;
        }
        let worst = v
            .iter()
            .map(|m| (m - target_mbit).abs() / target_mbit * 100.0)
            .fold(0.0, f64::max);
        Some(PacingCheck {
            target_mbit,
            intervals: v.len(),
            worst_pct: worst,
            min_mbit: v.iter().copied().fold(f64::INFINITY, f64::min),
            max_mbit: v.iter().copied().fold(0.0, f64::max),
        })
    }
}

/// What a test interrupted by Ctrl-C had measured: its full intervals.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Partial {
    /// Intervals completed.
    pub intervals: usize,
    /// Bytes in them.
    pub bytes: u64,
    /// Their seconds.
    pub seconds: f64,
    /// Goodput over them, Mbit/s.
    pub goodput_mbit: f64,
    /// Retransmissions in them.
    pub retransmits: Option<u64>,
}

impl Partial {
    /// From the interval lines printed so far.
    pub fn of(lines: &[Interval]) -> Partial {
        let bytes: u64 = lines.iter().map(|l| l.bytes).sum();
        let seconds =
            lines.last().map_or(0.0, |l| l.end_s) - lines.first().map_or(0.0, |l| l.start_s);
        Partial {
            intervals: lines.len(),
            bytes,
            seconds,
            goodput_mbit: if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds / 1e6
            } else {
                0.0
            },
            retransmits: lines.iter().map(|l| l.retransmits).sum(),
        }
    }
}

impl std::fmt::Display for Partial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "interrupted: partial summary over {} intervals: {} in {} = {:.2} Mbit/s goodput; retransmits {}",
            self.intervals,
            human_bytes(self.bytes),
            human_secs(self.seconds),
            self.goodput_mbit,
            self.retransmits.map_or("-".into(), |r| r.to_string())
        )
    }
}

/// The server's own view of a test, one line per sample, for
/// `--get-server-output`: its bytes, and its socket's RTT, window and
/// retransmissions when it sends.
pub fn server_text(samples: &[Sample], sender: bool) -> String {
    let mut out = String::new();
    let mut prev = Sample::default();
    for s in samples {
        // The final sample can land on the last interval's end.
        if s.t - prev.t < 0.01 {
            continue;
        }
        let secs = s.t - prev.t;
        let bytes = s.bytes.saturating_sub(prev.bytes);
        let _ = write!(
            out,
            "[{:5.1}-{:5.1} s] {:>10} {:>8.2} Mbit/s {}",
            prev.t,
            s.t,
            human_bytes(bytes),
            bytes as f64 * 8.0 / secs / 1e6,
            if sender { "sent" } else { "received" },
        );
        if let (true, Some(i)) = (sender, s.info.as_ref()) {
            let _ = write!(
                out,
                "  rtt {}  cwnd {}  retr {}",
                human_ms(f64::from(i.rtt_us) / 1000.0).replace(' ', ""),
                human_bytes(i.cwnd_bytes()),
                u64::from(i.total_retrans)
                    - prev.info.as_ref().map_or(0, |p| u64::from(p.total_retrans))
            );
        }
        out.push('\n');
        prev = s.clone();
    }
    out
}

/// `-O N`: the summary's goodput over the full intervals that start at or
/// after N seconds (slow start left out, as iperf3's `--omit` does), and
/// the sender's line from its sample at N seconds on (`tx`, the sender's
/// samples), so the two lines cover the same time.
pub fn omit(summary: &mut Summary, lines: &[Interval], tx: &[Sample], omit_s: f64) {
    if let Some(at) = tx.iter().rfind(|s| s.t <= omit_s + 0.05) {
        summary.sent_bytes = summary.sent_bytes.map(|b| b.saturating_sub(at.bytes));
        summary.sent_seconds = summary.sent_seconds.map(|t| (t - at.t).max(0.0));
    }
    let kept: Vec<&Interval> = lines
        .iter()
        .filter(|l| l.start_s >= omit_s - 1e-6)
        .collect();
    let secs: f64 = kept.iter().map(|l| l.end_s - l.start_s).sum();
    if secs > 0.0 {
        let bytes: u64 = kept.iter().map(|l| l.bytes).sum();
        summary.goodput_mbit = bytes as f64 * 8.0 / secs / 1e6;
        summary.bytes = bytes;
        summary.seconds = secs;
        summary.omitted_s = Some(omit_s);
    }
}

/// What the user asked for, for the diagnosis.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// Static receive buffer of the receiving socket.
    pub rcvbuf: Option<u64>,
    /// Static send buffer of the sending socket.
    pub sndbuf: Option<u64>,
    /// The path's bottleneck rate, if the user told us (for the BDP).
    pub path_rate_bps: Option<f64>,
    /// The buffers came from `-w` (both at once), not `--rcvbuf`.
    pub window_flag: bool,
}

/// Whether a flow rwnd-limited `rwnd_pct` % of its busy time was held by
/// the window, for the static-buffer verdict: a fifth of the sender's busy
/// time, not a majority. A flow held by a small pinned buffer grows its
/// cwnd to that window and stops there, so the two limits take turns:
/// `-R --rcvbuf 64KB / 256KB / 400KB` on 100 ms, 50 Mbit/s gave 33-47 %
/// rwnd-limited (35 % on a loaded CI machine, where a majority rule read
/// "not the buffer"), `--rcvbuf 2MB` (the path's limit, not the
/// buffer's) 4 % (4 Dec).
fn held_by_window(rwnd_pct: Option<f64>) -> bool {
    rwnd_pct.is_some_and(|p| p > 20.0)
}

/// The median goodput of the intervals after the first (slow start), when
/// there are at least two.
fn steady_mbit(intervals: &[Interval]) -> Option<f64> {
    let mut v: Vec<f64> = intervals.iter().skip(1).map(|i| i.mbit).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The bandwidth-delay product a fix is sized by: the path's, or per
/// 100 Mbit/s where the rate is unknown (empty without an RTT).
fn bdp_text(rate_bps: Option<f64>, rtt_ms: Option<f64>) -> String {
    match (rate_bps, rtt_ms) {
        (Some(rate), Some(rtt)) => format!(
            "the path's BDP at {:.0} Mbit/s is {:.2} MB",
            rate / 1e6,
            path::bdp_bytes(rate, rtt / 1e3) / 1e6
        ),
        (None, Some(rtt)) => format!(
            "each 100 Mbit/s of path rate at this RTT needs a {:.2} MB window",
            path::bdp_bytes(100e6, rtt / 1e3) / 1e6
        ),
        _ => String::new(),
    }
}

/// The advertised window `w` in words when it was ample for the goodput
/// (the reader, not the window, held the flow back); `None` when the
/// window could explain the goodput or the RTT is unknown.
fn ample_window(w: u32, rtt_ms: Option<f64>, goodput_mbit: f64) -> Option<String> {
    let rtt_txt = rtt_ms.map_or("unknown".to_string(), human_ms);
    match rtt_ms {
        // Loopback: microseconds of RTT; any window is ample, the reader is slow.
        Some(r) if r < 0.05 => Some(format!("{w} bytes at {rtt_txt}")),
        Some(r) => {
            let cap = path::window_cap_bps(f64::from(w), r / 1e3) / 1e6;
            (goodput_mbit < 0.7 * cap).then(|| format!("{w} bytes, {cap:.0} Mbit/s at {rtt_txt}"))
        }
        None => None,
    }
}

/// The diagnosis of a send-buffer-limited flow: a pinned `--sndbuf`, or
/// autotuning's ceiling.
fn sndbuf_text(
    asked: Option<u64>,
    pct: f64,
    tx: &AppliedBuffers,
    grown: Option<u64>,
    bdp_txt: &str,
) -> String {
    match asked {
        Some(s) => format!(
            "limited by the static send buffer {pct:.0}% of the time: --sndbuf {s} asked, the kernel holds {}; {bdp_txt}. Fix: drop --sndbuf and let autotuning size it.",
            tx.snd_held
        ),
        None => format!(
            "limited by the send buffer {pct:.0}% of the time: autotuning stops at the third value of net.ipv4.tcp_wmem at the sender ({}){}; {bdp_txt}. Fix: raise that value to at least twice the BDP (sysctl -w net.ipv4.tcp_wmem=\"4096 16384 N\"); never pin SO_SNDBUF, which turns autotuning off.",
            tx.snd_autotune_max
                .map_or("value unknown".into(), |v| format!("{v} bytes")),
            grown.map_or(String::new(), |g| format!(
                " and the sender's buffer grew to {g} bytes"
            )),
        ),
    }
}

/// Builds the summary, with a diagnosis only when the flow really was
/// limited by a buffer or the receive window. `max_rcv_wnd` is the largest
/// window the receiver advertised: a window-limited flow far below
/// `max_rcv_wnd / RTT` was held back by a slow reader, not a small buffer.
pub fn summarize(
    max_rcv_wnd: Option<u32>,
    intervals: &[Interval],
    rx_last: &Sample,
    tx_last: Option<&Sample>,
    rx_buffers: &AppliedBuffers,
    tx_buffers: &AppliedBuffers,
    asked: &Asked,
) -> Summary {
    let seconds = rx_last.t.max(1e-9);
    let goodput = rx_last.bytes as f64 * 8.0 / seconds / 1e6;
    let info = tx_last.and_then(|s| s.info.as_ref());
    let rtts: Vec<f64> = intervals.iter().filter_map(|i| i.rtt_ms).collect();
    let rtt_ms = (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64);
    let min_rtt_ms = info
        .and_then(|i| i.min_rtt_us)
        .map(|u| f64::from(u) / 1000.0);
    let busy = info.and_then(|i| i.busy_time_us).unwrap_or(0).max(1) as f64;
    let rwnd_pct = info
        .and_then(|i| i.rwnd_limited_us)
        .map(|u| (100.0 * u as f64 / busy).min(100.0));
    let sndbuf_pct = info
        .and_then(|i| i.sndbuf_limited_us)
        .map(|u| (100.0 * u as f64 / busy).min(100.0));
    // The cap of a static receive buffer at the RTT the flow really saw
    // (a window-limited flow builds no queue, so min RTT is its RTT).
    let cap_rtt_ms = min_rtt_ms.or(rtt_ms);
    let predicted = asked
        .rcvbuf
        .zip(cap_rtt_ms)
        .map(|(_, rtt)| path::rcvbuf_cap_mbit(rx_buffers.rcv_held, rtt));
    let rwnd_bound = rwnd_pct.is_some_and(|p| p > 50.0);
    let sndbuf_bound = sndbuf_pct.is_some_and(|p| p > 50.0);
    let rcvbuf_verdict = asked.rcvbuf.zip(cap_rtt_ms).and_then(|(a, rtt)| {
        path::diagnose_rcvbuf(&path::RcvbufCase {
            asked: a,
            held: rx_buffers.rcv_held,
            rtt_ms: rtt,
            goodput_mbit: goodput,
            steady_mbit: steady_mbit(intervals),
            window_bound: held_by_window(rwnd_pct),
            path_rate_bps: asked.path_rate_bps,
            flag: if asked.window_flag { "-w" } else { "--rcvbuf" },
        })
    });
    let bdp_txt = bdp_text(asked.path_rate_bps, cap_rtt_ms);
    let diagnosis = if let Some(d) = rcvbuf_verdict {
        Some(d.text)
    } else if rwnd_bound
        && let Some(w) = max_rcv_wnd
        && let Some(open) = ample_window(w, cap_rtt_ms, goodput)
    {
        Some(format!(
            "limited by the receive window {:.0}% of the time, but the window the receiver advertised ({open}) was large: the receiving application did not read fast enough and its buffer filled. Fix: read more often or in larger reads (--read-sizing), or give the reader more CPU.",
            rwnd_pct.unwrap_or(0.0),
        ))
    } else if rwnd_bound {
        Some(format!(
            "limited by the receive window {:.0}% of the time without a static buffer: autotuning stops at the third value of net.ipv4.tcp_rmem at the receiver ({}), too small for this path; {bdp_txt}. Fix: raise that value to at least twice the BDP; never pin SO_RCVBUF, which turns autotuning off.",
            rwnd_pct.unwrap_or(0.0),
            rx_buffers
                .rcv_autotune_max
                .map_or("value unknown".into(), |v| format!("{v} bytes"))
        ))
    } else if sndbuf_bound {
        let grown_snd = intervals.iter().filter_map(|i| i.sndbuf_bytes).max();
        Some(sndbuf_text(
            asked.sndbuf,
            sndbuf_pct.unwrap_or(0.0),
            tx_buffers,
            grown_snd,
            &bdp_txt,
        ))
    } else {
        None
    };
    Summary {
        goodput_mbit: goodput,
        bytes: rx_last.bytes,
        seconds,
        rtt_ms,
        min_rtt_ms,
        retransmits: info.map(|i| u64::from(i.total_retrans)),
        buffer_limited: diagnosis
            .as_deref()
            .is_some_and(|d| !d.contains("did not read fast enough")),
        predicted_cap_mbit: predicted,
        rwnd_limited_pct: rwnd_pct,
        sndbuf_limited_pct: sndbuf_pct,
        advertised_window_bytes: max_rcv_wnd,
        diagnosis,
        omitted_s: None,
        sent_bytes: tx_last.map(|s| s.bytes),
        sent_seconds: tx_last.map(|s| s.t),
    }
}

/// Milliseconds as a person reads them; microseconds where milliseconds
/// would round to zero (loopback).
pub fn human_ms(ms: f64) -> String {
    if ms < 1.0 {
        format!("{:.0} µs", ms * 1e3)
    } else {
        format!("{ms:.1} ms")
    }
}

/// Seconds as a person reads them; milliseconds below a tenth of a second.
pub fn human_secs(s: f64) -> String {
    if s < 0.1 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// Bytes as a person reads them: `1.92 MB`, `767.4 KB`, `512 B`.
pub fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000 => format!("{:.2} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} KB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

/// One interval line, as `tcpwise perf client` prints it.
impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}%"));
        write!(
            f,
            "[{:5.1}-{:5.1} s] {:>10} {:>8.2} Mbit/s  retr {:>4}  cwnd {:>9}  rtt {:>7}  rwnd-limited {:>4}  sndbuf-limited {:>4}  pacing {:>6}",
            self.start_s,
            self.end_s,
            human_bytes(self.bytes),
            self.mbit,
            self.retransmits.map_or("-".into(), |r| r.to_string()),
            self.cwnd_bytes.map_or("-".into(), human_bytes),
            self.rtt_ms
                .map_or("-".into(), |r| human_ms(r).replace(' ', "")),
            pct(self.rwnd_limited_pct),
            pct(self.sndbuf_limited_pct),
            self.pacing_mbit.map_or("-".into(), |m| format!("{m:.1}M")),
        )?;
        if let (Some(bw), Some(rtt)) = (self.bbr_bw_mbit, self.bbr_min_rtt_ms) {
            write!(f, "  bbr bw {bw:.1}M min_rtt {rtt:.1}ms")?;
        }
        if self.omitted {
            write!(f, "  (omitted)")?;
        }
        Ok(())
    }
}

/// The closing lines (summary, buffers, diagnosis), as `tcpwise perf client` prints them.
impl std::fmt::Display for PerfReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.summary;
        let ms = |v: Option<f64>| v.map_or("-".into(), human_ms);
        let pct = |v: Option<f64>| v.map_or("-".into(), |p| format!("{p:.0}%"));
        let how = |asked: Option<u64>, start: u64| match (asked, start) {
            (Some(n), _) => format!("asked {n}"),
            // An iperf3 peer's socket (`--iperf3`): not ours to read.
            (None, 0) => "not seen from this end".to_string(),
            (None, s) => format!("autotuned from {s}"),
        };
        let b = |v: Option<u64>| v.map_or("-".to_string(), |n| n.to_string());
        let g = &self.grown;
        writeln!(
            f,
            "summary: {} in {} = {:.2} Mbit/s goodput; rtt {} (min {}); retransmits {}{}",
            human_bytes(s.bytes),
            human_secs(s.seconds),
            s.goodput_mbit,
            ms(s.rtt_ms),
            ms(s.min_rtt_ms),
            s.retransmits.map_or("-".into(), |r| r.to_string()),
            s.omitted_s.map_or(String::new(), |o| format!(
                " (the first {o:.1} s omitted: -O)"
            )),
        )?;
        writeln!(
            f,
            "buffers: receiver holds {} B at the end (peak {}, {}), sender holds {} B (peak {}, {}); receive-window-limited {}, send-buffer-limited {} of the sender's busy time",
            b(g.rcvbuf_end_bytes),
            b(g.rcvbuf_peak_bytes),
            how(
                self.receiver_buffers.rcv_asked,
                self.receiver_buffers.rcv_held
            ),
            b(g.sndbuf_end_bytes),
            b(g.sndbuf_peak_bytes),
            how(self.sender_buffers.snd_asked, self.sender_buffers.snd_held),
            pct(s.rwnd_limited_pct),
            pct(s.sndbuf_limited_pct),
        )?;
        if let Some(d) = &s.diagnosis {
            writeln!(f, "diagnosis: {d}")?;
        }
        if let Some(t) = &self.server_output {
            writeln!(f, "server output:")?;
            write!(f, "{t}")?;
        }
        if let Some(z) = &self.zerocopy {
            writeln!(f, "{z}")?;
        }
        if let Some(p) = &self.pacing {
            writeln!(
                f,
                "pacing: -b {:.2} Mbit/s held by the writes (iperf3's throttle): {} intervals after the first at {:.2}-{:.2} Mbit/s, worst {:.1} % from the target",
                p.target_mbit, p.intervals, p.min_mbit, p.max_mbit, p.worst_pct
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
