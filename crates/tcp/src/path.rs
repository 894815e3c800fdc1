//! Path math: bandwidth-delay product and the throughput cap of a static
//! receive buffer.
//!
//! What Linux advertises for a receive buffer: `setsockopt(SO_RCVBUF, n)`
//! makes the kernel hold `2n` (capped at `2 × net.core.rmem_max`), because
//! the buffer also pays for skb overhead. The window it advertises is the
//! part of that it expects to fill with payload: `held × scaling_ratio/256`,
//! where (since Linux 6.7) `scaling_ratio` is learned from received
//! packets' payload/truesize; for 1448-byte segments it is 160/256, checked
//! against `TCP_INFO.rcv_wnd` (see [`LINUX_WINDOW_FRACTION`]). A window `W`
//! caps a connection at `W / RTT`. Windows does not double: the seed's
//! 278,775-byte buffer advertised about that much, 12.6 Mbit/s at 177 ms.

/// Payload bytes one 1500-byte packet carries (TCP with timestamps).
pub const PAYLOAD_PER_PACKET: f64 = 1448.0;

/// Fraction of the held receive buffer that Linux advertises as window for
/// full-sized segments: the kernel's `scaling_ratio`, payload/truesize in
/// 1/256ths, is 160/256 for a 1448-byte segment in a 2304-byte skb. Measured
/// on our 177 ms / 151 Mbit/s testbed with `--rcvbuf 278775`: the kernel held
/// 557,550 bytes and `TCP_INFO.rcv_wnd` peaked at 347,032 (0.622; the window
/// is rounded down to whole segments). Older kernels (before 6.7) used
/// `tcp_adv_win_scale=1`, i.e. 0.5.
pub const LINUX_WINDOW_FRACTION: f64 = 160.0 / 256.0;

/// Bandwidth-delay product in bytes of a path of `rate_bps` and `rtt_s`.
pub fn bdp_bytes(rate_bps: f64, rtt_s: f64) -> f64 {
    rate_bps * rtt_s / 8.0
}

/// Payload ceiling of a link of `rate_bps` IP bits per second.
pub fn payload_ceiling_bps(rate_bps: f64) -> f64 {
    rate_bps * PAYLOAD_PER_PACKET / 1500.0
}

/// Receive window Linux advertises for a receive buffer of `held` bytes
/// (what `getsockopt(SO_RCVBUF)` returns).
pub fn advertised_window(held: u64, fraction: f64) -> f64 {
    held as f64 * fraction
}

/// Goodput cap, bit/s, that a receive window of `window` bytes puts on a
/// path with `rtt_s` round-trip time.
pub fn window_cap_bps(window: f64, rtt_s: f64) -> f64 {
    if rtt_s <= 0.0 {
        f64::INFINITY
    } else {
        window * 8.0 / rtt_s
    }
}

/// The receive buffer (as passed to `SO_RCVBUF`) that Linux needs to
/// advertise a window of `bdp` bytes.
pub fn rcvbuf_for_window(bdp: f64, fraction: f64) -> u64 {
    (bdp / fraction / 2.0).ceil() as u64
}

/// A transfer through a socket whose receive buffer was pinned.
#[derive(Debug, Clone, PartialEq)]
pub struct RcvbufCase {
    /// `SO_RCVBUF` asked for.
    pub asked: u64,
    /// What the kernel holds (Linux doubles the request, capped by `rmem_max`).
    pub held: u64,
    /// The RTT the flow saw, ms (a window-limited flow builds no queue, so
    /// its smallest RTT is the one to use).
    pub rtt_ms: f64,
    /// Goodput measured, Mbit/s.
    pub goodput_mbit: f64,
    /// Goodput once slow start is over (the median of the intervals after
    /// the first), when known: a short test spends much of its time in
    /// slow start, which must not hide a cap it then ran at.
    pub steady_mbit: Option<f64>,
    /// Whether the flow was seen to be held by the receive window (TCP_INFO
    /// `rwnd_limited` a fifth of the busy time or more, or a full window
    /// per RTT arriving).
    pub window_bound: bool,
    /// The path's bottleneck rate, when known, for the BDP and the fix.
    pub path_rate_bps: Option<f64>,
    /// The flag the user pinned the buffer with (`--rcvbuf`, `-w`), named
    /// in the fix.
    pub flag: &'static str,
}

/// A size in the unit that shows it: B, KB or MB (10^3).
fn size_text(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else if bytes >= 1e3 {
        format!("{:.1} KB", bytes / 1e3)
    } else {
        format!("{bytes:.0} B")
    }
}

/// The static-buffer verdict: the cap and, when it was the limit, why.
#[derive(Debug, Clone, PartialEq)]
pub struct RcvbufDiagnosis {
    /// The cap the buffer puts on goodput at this RTT, Mbit/s.
    pub cap_mbit: f64,
    /// The explanation with the numbers and the fix.
    pub text: String,
}

/// The cap a pinned receive buffer puts on a flow at `rtt_ms`, Mbit/s.
pub fn rcvbuf_cap_mbit(held: u64, rtt_ms: f64) -> f64 {
    window_cap_bps(advertised_window(held, LINUX_WINDOW_FRACTION), rtt_ms / 1e3) / 1e6
}

/// The one diagnosis of a pinned receive buffer (Windows TCP team: a
/// static buffer caps throughput at about buffer/RTT), used by `tcpwise
/// perf` and `tcpwise get`: `Some` when the flow ran at the cap or was
/// held by the window, with the numbers and the fix.
pub fn diagnose_rcvbuf(c: &RcvbufCase) -> Option<RcvbufDiagnosis> {
    let cap = rcvbuf_cap_mbit(c.held, c.rtt_ms);
    let ran = c.goodput_mbit.max(c.steady_mbit.unwrap_or(0.0));
    // At the cap, or held by the window near it. Held by the window far
    // below the cap (loopback: 15 Gbit/s under a 320 Gbit/s cap) is a
    // reader that did not keep up, not a buffer too small.
    if !(ran >= 0.8 * cap || (c.window_bound && ran >= 0.5 * cap)) {
        return None;
    }
    let bdp = match c.path_rate_bps {
        Some(rate) => format!(
            "; the path's BDP at {:.0} Mbit/s is {}",
            rate / 1e6,
            size_text(bdp_bytes(rate, c.rtt_ms / 1e3))
        ),
        None => format!(
            "; each 100 Mbit/s of path rate at this RTT needs a {} window",
            size_text(bdp_bytes(100e6, c.rtt_ms / 1e3))
        ),
    };
    let pin = c
        .path_rate_bps
        .map(|r| {
            format!(
                " (or pin at least {} bytes)",
                rcvbuf_for_window(bdp_bytes(r, c.rtt_ms / 1e3), LINUX_WINDOW_FRACTION)
            )
        })
        .unwrap_or_default();
    let flag = c.flag;
    Some(RcvbufDiagnosis {
        cap_mbit: cap,
        text: format!(
            "limited by the static receive buffer: {flag} {} asked, the kernel holds {} (Linux doubles it) and advertises about {:.0} bytes of window; at the measured RTT of {:.1} ms that caps goodput at {cap:.2} Mbit/s (measured {:.2}){bdp}. Fix: drop {flag} and let autotuning size the buffer{pin}.",
            c.asked,
            c.held,
            advertised_window(c.held, LINUX_WINDOW_FRACTION),
            c.rtt_ms,
            c.goodput_mbit
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_bound_flow_far_below_the_cap_is_not_the_buffer() {
        // perf -w 128KB on loopback: 15 Gbit/s measured under a 320 Gbit/s
        // cap, held by the window: the reader, not the buffer.
        let case = RcvbufCase {
            asked: 128_000,
            held: 256_000,
            rtt_ms: 0.005,
            goodput_mbit: 15_068.9,
            steady_mbit: None,
            window_bound: true,
            path_rate_bps: None,
            flag: "-w",
        };
        assert!(rcvbuf_cap_mbit(case.held, case.rtt_ms) > 10.0 * case.goodput_mbit);
        assert_eq!(diagnose_rcvbuf(&case), None);
        // At its cap, the fix names the flag typed and a readable BDP.
        let at_cap = RcvbufCase {
            rtt_ms: 10.0,
            goodput_mbit: 0.95 * rcvbuf_cap_mbit(256_000, 10.0),
            ..case
        };
        let d = diagnose_rcvbuf(&at_cap).unwrap().text;
        assert!(
            d.contains("-w 128000 asked") && d.contains("Fix: drop -w "),
            "{d}"
        );
        assert!(d.contains("needs a 125.0 KB window"), "{d}");
    }

    #[test]
    fn seed_numbers() {
        // 151 Mbit/s x 177 ms = 3.34 MB in flight.
        let bdp = bdp_bytes(151e6, 0.177);
        assert!((bdp - 3_340_875.0).abs() < 1.0);
        // Windows: 278,775 B window at 177 ms = 12.6 Mbit/s.
        assert!((window_cap_bps(278_775.0, 0.177) / 1e6 - 12.6).abs() < 0.05);
        // Linux holds 2x and advertises 160/256 of that: 25 % more window
        // than Windows gave the same request, so a 15.7 Mbit/s cap.
        let w = advertised_window(2 * 278_775, LINUX_WINDOW_FRACTION);
        assert!((w - 348_469.0).abs() < 1.0, "{w}");
        assert!((window_cap_bps(w, 0.177) / 1e6 - 15.75).abs() < 0.01);
        let req = rcvbuf_for_window(bdp, LINUX_WINDOW_FRACTION);
        assert!(advertised_window(2 * req, LINUX_WINDOW_FRACTION) >= bdp);
        assert!((payload_ceiling_bps(151e6) / 1e6 - 145.77).abs() < 0.01);
    }
}
