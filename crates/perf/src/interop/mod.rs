//! iperf3 interoperability: `tcpwise perf client --iperf3` runs a test
//! against any `iperf3 -s`, and `tcpwise perf server` answers `iperf3 -c`
//! on the same port as tcpwise's own clients (a connection that opens
//! with an iperf3 cookie is iperf3's; one that opens with `{` or `T` is
//! ours).
//!
//! The protocol is in [`wire`] (sans-IO); [`client`] and [`server`] are
//! the glue, and [`data`] moves the bytes. Where our end has the socket,
//! the report is tcpwise's own: intervals with the sender's `TCP_INFO`,
//! the summary and the diagnosis; the peer's figures (the bytes its end
//! counted, its retransmissions) come from iperf3's results exchange.
//! UDP is one stream either way ([`udp`]), as iperf3 runs it by default.

pub mod client;
mod data;
pub mod server;
pub mod text;
pub mod udp;
pub mod wire;

use crate::diagnose::{self, Asked, Grown, Interval, PerfReport};
use crate::proto::Sample;
use tcpwise_tcp::AppliedBuffers;

/// What one data connection of a finished test holds on our end.
#[derive(Debug, Clone, Default)]
pub struct Ours {
    /// Whether our end sent.
    pub sent: bool,
    /// Our samples, one per interval, in order (the last one at the end).
    pub samples: Vec<Sample>,
    /// The buffers our socket was given.
    pub buffers: AppliedBuffers,
    /// The connection's ends (local, remote).
    pub ends: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
    /// Our socket's descriptor (iperf3 names a stream by its own).
    pub fd: i32,
}

/// The interval lines of our samples: the sender's `TCP_INFO` when we
/// sent, bytes only when we received. As iperf3, a last interval under a
/// tenth of the one before (the moments between the last tick and the
/// end) is counted in the summary, not shown as a line.
pub fn intervals(ours: &Ours) -> Vec<Interval> {
    let zero = Sample::default();
    let mut prev = &zero;
    let mut out = Vec::new();
    let n = ours.samples.len();
    for (i, s) in ours.samples.iter().enumerate() {
        if i + 1 == n && i > 0 && (s.t - prev.t) < 0.1 * prev.t / i as f64 {
            break;
        }
        let tx = ours.sent.then_some((prev, s));
        out.push(diagnose::interval(
            prev,
            s,
            tx.map(|t| t.0),
            tx.map(|t| t.1),
        ));
        prev = s;
    }
    out
}

/// One connection's report: our samples joined with the peer's result
/// for it (the bytes it counted over its seconds, its retransmissions).
pub fn stream_report(ours: &Ours, peer: &wire::StreamResult, asked: &Asked) -> PerfReport {
    let lines = intervals(ours);
    let last = ours.samples.last().cloned().unwrap_or_default();
    let theirs = Sample {
        index: last.index,
        t: (peer.end_time - peer.start_time).max(1e-9),
        bytes: peer.bytes,
        ..Sample::default()
    };
    let (rx, tx) = if ours.sent {
        (&theirs, &last)
    } else {
        (&last, &theirs)
    };
    // The peer's buffers are its own; what -w asked of them is all we know.
    let peer_buffers = AppliedBuffers {
        rcv_asked: asked.rcvbuf,
        rcv_held: asked.rcvbuf.map_or(0, |w| 2 * w),
        snd_asked: asked.sndbuf,
        snd_held: asked.sndbuf.map_or(0, |w| 2 * w),
        ..AppliedBuffers::default()
    };
    let (rx_buffers, tx_buffers) = if ours.sent {
        (&peer_buffers, &ours.buffers)
    } else {
        (&ours.buffers, &peer_buffers)
    };
    let mut summary =
        diagnose::summarize(None, &lines, rx, Some(tx), rx_buffers, tx_buffers, asked);
    if !ours.sent {
        summary.retransmits = u64::try_from(peer.retransmits).ok();
    }
    let (rx_samples, tx_samples) = if ours.sent {
        (&[][..], &ours.samples[..])
    } else {
        (&ours.samples[..], &[][..])
    };
    PerfReport {
        ends: ours.ends,
        intervals: lines,
        summary,
        grown: Grown::from_samples(rx_samples, tx_samples),
        receiver_buffers: rx_buffers.clone(),
        sender_buffers: tx_buffers.clone(),
        reverse: !ours.sent,
        warnings: ours.buffers.warnings.clone(),
        pacing: None,
        server_output: None,
        zerocopy: None,
        mss: ours
            .samples
            .iter()
            .find_map(|s| s.info.as_ref().map(|i| i.snd_mss)),
    }
}

#[cfg(test)]
mod tests;
