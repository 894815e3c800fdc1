//! Linux `TCP_INFO`, as a plain snapshot.
//!
//! The kernel's `struct tcp_info` grows with new kernels and is truncated
//! to the caller's length on old ones, so the raw struct is the newest we
//! know and every field past what the kernel returned is `None`. On other
//! systems [`TcpInfo::of`] returns `None`.

use serde::{Deserialize, Serialize};

use tcpwise_sys::TcpInfoRaw as Raw;

/// A `TCP_INFO` snapshot. Times are microseconds, as the kernel gives them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TcpInfo {
    /// TCP state (1 = established).
    pub state: u8,
    /// Smoothed RTT, µs.
    pub rtt_us: u32,
    /// RTT variance, µs.
    pub rttvar_us: u32,
    /// Path MTU the kernel holds for the connection, bytes.
    #[serde(default)]
    pub pmtu: u32,
    /// Retransmission timeout, µs.
    pub rto_us: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    /// Slow-start threshold, segments.
    pub snd_ssthresh: u32,
    /// Send MSS, bytes.
    pub snd_mss: u32,
    /// Receive MSS estimate, bytes.
    pub rcv_mss: u32,
    /// Segments sent but not acknowledged.
    pub unacked: u32,
    /// Retransmitted segments currently outstanding.
    pub retrans: u32,
    /// Retransmissions over the connection's life.
    pub total_retrans: u32,
    /// Receiver's estimate of the space it needs (autotuning), bytes.
    pub rcv_space: u32,
    /// Receiver-side RTT estimate, µs.
    pub rcv_rtt_us: u32,
    /// Receive slow-start threshold (window clamp), bytes.
    pub rcv_ssthresh: u32,
    /// Pacing rate, bytes/s.
    pub pacing_rate: Option<u64>,
    /// Bytes acknowledged by the peer.
    pub bytes_acked: Option<u64>,
    /// Bytes received.
    pub bytes_received: Option<u64>,
    /// Minimum RTT seen, µs.
    pub min_rtt_us: Option<u32>,
    /// Delivery rate estimate, bytes/s.
    pub delivery_rate: Option<u64>,
    /// Time busy sending, µs.
    pub busy_time_us: Option<u64>,
    /// Time limited by the peer's receive window, µs.
    pub rwnd_limited_us: Option<u64>,
    /// Time limited by the send buffer, µs.
    pub sndbuf_limited_us: Option<u64>,
    /// Bytes sent, retransmissions included.
    pub bytes_sent: Option<u64>,
    /// Bytes retransmitted.
    pub bytes_retrans: Option<u64>,
    /// Peer's advertised window, bytes.
    pub snd_wnd: Option<u32>,
    /// Our advertised window, bytes.
    pub rcv_wnd: Option<u32>,
    /// BBR's bandwidth estimate, bytes/s (`TCP_CC_INFO`; BBR sockets only).
    #[serde(default)]
    pub bbr_bw: Option<u64>,
    /// BBR's min RTT estimate, µs.
    #[serde(default)]
    pub bbr_min_rtt_us: Option<u32>,
    /// BBR's pacing gain in percent (100 cruising, 289 in start-up).
    #[serde(default)]
    pub bbr_pacing_gain_pct: Option<u32>,
}

impl TcpInfo {
    /// Reads `TCP_INFO` of a socket; `None` where unsupported.
    #[cfg(target_os = "linux")]
    pub fn of(fd: &impl std::os::fd::AsRawFd) -> Option<TcpInfo> {
        let (raw, len) = tcpwise_sys::tcp_info(fd.as_raw_fd())?;
        let mut i = TcpInfo::from_raw(&raw, len);
        if let Some(b) = tcpwise_sys::tcp_bbr_info(fd.as_raw_fd()) {
            i.bbr_bw = Some(u64::from(b.bw_hi) << 32 | u64::from(b.bw_lo));
            i.bbr_min_rtt_us = Some(b.min_rtt);
            i.bbr_pacing_gain_pct = Some(b.pacing_gain * 100 / 256);
        }
        Some(i)
    }

    /// Reads `TCP_INFO` of a socket; `None` where unsupported.
    #[cfg(not(target_os = "linux"))]
    pub fn of<T>(_fd: &T) -> Option<TcpInfo> {
        None
    }

    fn from_raw(r: &Raw, len: usize) -> TcpInfo {
        macro_rules! opt {
            ($f:ident) => {
                (std::mem::offset_of!(Raw, $f) + std::mem::size_of_val(&r.$f) <= len)
                    .then_some(r.$f)
            };
        }
        TcpInfo {
            state: r.state,
            rtt_us: r.rtt,
            rttvar_us: r.rttvar,
            pmtu: r.pmtu,
            rto_us: r.rto,
            snd_cwnd: r.snd_cwnd,
            snd_ssthresh: r.snd_ssthresh,
            snd_mss: r.snd_mss,
            rcv_mss: r.rcv_mss,
            unacked: r.unacked,
            retrans: r.retrans,
            total_retrans: r.total_retrans,
            rcv_space: r.rcv_space,
            rcv_rtt_us: r.rcv_rtt,
            rcv_ssthresh: r.rcv_ssthresh,
            pacing_rate: opt!(pacing_rate),
            bytes_acked: opt!(bytes_acked),
            bytes_received: opt!(bytes_received),
            min_rtt_us: opt!(min_rtt),
            delivery_rate: opt!(delivery_rate),
            busy_time_us: opt!(busy_time),
            rwnd_limited_us: opt!(rwnd_limited),
            sndbuf_limited_us: opt!(sndbuf_limited),
            bytes_sent: opt!(bytes_sent),
            bytes_retrans: opt!(bytes_retrans),
            snd_wnd: opt!(snd_wnd),
            rcv_wnd: opt!(rcv_wnd),
            bbr_bw: None,
            bbr_min_rtt_us: None,
            bbr_pacing_gain_pct: None,
        }
    }

    /// Congestion window in bytes.
    pub fn cwnd_bytes(&self) -> u64 {
        u64::from(self.snd_cwnd) * u64::from(self.snd_mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_kernels_give_none_for_newer_fields() {
        let raw = Raw {
            rtt: 1234,
            rwnd_limited: 5,
            rcv_wnd: 9,
            ..Raw::default()
        };
        let old = TcpInfo::from_raw(&raw, std::mem::offset_of!(Raw, pacing_rate));
        assert_eq!(old.rtt_us, 1234);
        assert_eq!(old.pacing_rate, None);
        assert_eq!(old.rwnd_limited_us, None);
        let new = TcpInfo::from_raw(&raw, std::mem::size_of::<Raw>());
        assert_eq!(new.rwnd_limited_us, Some(5));
        assert_eq!(new.rcv_wnd, Some(9));
    }

    #[test]
    fn live_loopback_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let i = TcpInfo::of(&c).expect("linux");
        assert_eq!(i.state, 1, "established");
        assert!(i.snd_mss > 0 && i.snd_cwnd >= 1);
        assert!(i.rcv_wnd.is_some(), "this kernel reports rcv_wnd");
    }
}
