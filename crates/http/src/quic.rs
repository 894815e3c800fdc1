//! QUIC's datapath, shared by `get --http3` and `serve --http3`: the
//! transport's windows and the UDP socket's buffers, each kept because
//! a measurement moved the figure (`docs/get.md`, "HTTP/3's datapath",
//! has the runs, and the settings tried and not kept: a larger datagram
//! bound, a sparser ACK frequency, aws-lc-rs, mimalloc, a HyStart
//! slow-start exit).
//!
//! quinn's own defaults are right for what they cover: UDP GSO and GRO
//! through quinn-udp wherever the kernel has them (sending one datagram
//! per system call measured 0.26 of HTTP/2's goodput on loopback), Cubic
//! (its BBR measured 0.85 against 0.87-0.91 on 10 ms, 1 Gbit/s; a
//! HyStart delay exit in front of it cut that path's drops from 7,400
//! and 9,300 a run to 3,100 and 0 but not its goodput, 0.83 and 0.88
//! against 0.88 and 0.89), and pacing.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsFd;
use std::sync::Arc;
use tcpwise_sys::{Buffer, force_buffer};

mod udp;
pub use udp::QuietRuntime;

/// Each stream's receive window: Chromium's (`kQuicStreamMaxRecvWindowSize`,
/// 6 MB). quinn's default, 1.25 MB, is one bandwidth-delay product of
/// 100 Mbit/s at 100 ms and held a 10 ms, 1 Gbit/s path to 0.7 of
/// HTTP/2's goodput even with large socket buffers.
pub const STREAM_WINDOW: u32 = 6 << 20;
/// The connection's receive window, and what a sender keeps unacknowledged
/// over all its streams: Chromium's session window (15 MB).
pub const CONNECTION_WINDOW: u32 = 15 << 20;
/// Each UDP socket's receive and send buffer: quic-go's 7 MB. Unlike
/// TCP's, a UDP buffer has no autotuning and is no window: it is what
/// the kernel holds between the application's reads before it drops,
/// and the 208 KB default dropped enough of a 1 Gbit/s burst to keep
/// QUIC at 0.2 of that path.
pub const UDP_BUFFER: usize = 7 << 20;

/// Ack-eliciting packets the peer may take before it must acknowledge,
/// asked of it by the ACK-frequency extension (draft-ietf-quic-ack-frequency,
/// which quinn speaks; other peers ignore the request): an ACK every
/// fourth packet, where RFC 9000 has every second, because fewer ACKs
/// cost the server less per small request; sparser ones (every 11th)
/// saved more but lost goodput on a 10 ms, 1 Gbit/s path.
pub const ACK_ELICITING_THRESHOLD: u32 = 3;

/// The largest UDP payload a QUIC endpoint sends or accepts: what ten
/// datagrams in one GSO send can each carry. quinn sends at most 10
/// segments a call and the kernel takes at most 64 KB of UDP payload in
/// one (IPv4 header included), and quinn-udp counts a send the kernel
/// refuses as sent, so a larger datagram loses whole batches (measured:
/// 8 KB and 16 KB bounds gave 0.32 and 0.33 of HTTP/2's loopback goodput).
pub const DATAGRAM_MAX: u16 = ((65_535 - 20 - 8) / 10) as u16;
// Ten of the largest fit in one UDP send, headers included, and every
// path's smallest is below it.
const _: () = assert!(10 * DATAGRAM_MAX as u32 + 28 <= 65_535 && DATAGRAM_MAX >= DATAGRAM_MIN);

/// The smallest QUIC datagram (RFC 9000 §14): every path takes it.
const DATAGRAM_MIN: u16 = 1200;

/// The largest datagram the path to `peer` takes: its route's MTU less
/// the IP and UDP headers, at most [`DATAGRAM_MAX`]. MTU discovery
/// (quinn's, RFC 8899) searches up to it: on loopback (MTU 65,536)
/// 6,550-byte datagrams measured 1.27 and 1.34 times HTTP/2's goodput
/// where quinn's default bound of 1,452 gave 0.70; on a 1,500-byte path
/// it is 1,472 (IPv4), and a bound above the path's own made the search
/// lose probes for nothing (0.89 against 0.91).
pub fn datagram_bound(peer: std::net::SocketAddr) -> u16 {
    let headers = if peer.is_ipv6() { 48 } else { 28 };
    tcpwise_sys::path_mtu(peer)
        .map(|m| m.saturating_sub(headers))
        .map_or(1452, |m| {
            m.clamp(u32::from(DATAGRAM_MIN), u32::from(DATAGRAM_MAX)) as u16
        })
}

/// The transport settings both ends use on a connection to `peer`.
pub fn transport(peer: std::net::SocketAddr) -> Arc<quinn::TransportConfig> {
    let mut mtu = quinn::MtuDiscoveryConfig::default();
    mtu.upper_bound(datagram_bound(peer));
    let mut t = quinn::TransportConfig::default();
    t.mtu_discovery_config(Some(mtu));
    let mut ack = quinn::AckFrequencyConfig::default();
    ack.ack_eliciting_threshold(ACK_ELICITING_THRESHOLD.into());
    t.ack_frequency_config(Some(ack));
    t.stream_receive_window(STREAM_WINDOW.into())
        .receive_window(CONNECTION_WINDOW.into())
        .send_window(u64::from(CONNECTION_WINDOW));
    Arc::new(t)
}

/// What a QUIC endpoint runs with, to print beside its figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Datapath {
    /// The receive buffer the kernel holds (its booking: twice what was
    /// asked).
    pub receive_buffer: usize,
    /// The send buffer, booked the same way.
    pub send_buffer: usize,
}

impl std::fmt::Display for Datapath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |b: usize| b as f64 / f64::from(1u32 << 20);
        write!(
            f,
            "stream window {:.0} MiB, connection window {:.0} MiB, UDP buffers {:.1}/{:.1} MiB \
             (receive/send, as the kernel books them), GSO/GRO as quinn-udp finds them, \
             the socket polled for writing only while its send buffer is full, \
             datagrams up to the path's MTU (at most {} B), an ACK asked every {} packets \
             (ack-frequency draft), AES-GCM from ring",
            mib(STREAM_WINDOW as usize),
            mib(CONNECTION_WINDOW as usize),
            mib(self.receive_buffer),
            mib(self.send_buffer),
            DATAGRAM_MAX,
            ACK_ELICITING_THRESHOLD + 1
        )
    }
}

/// A QUIC endpoint on `sock` (a server when `server` is given), its
/// buffers set to [`UDP_BUFFER`]. Called inside a tokio runtime.
pub fn endpoint(
    sock: UdpSocket,
    server: Option<quinn::ServerConfig>,
) -> io::Result<(quinn::Endpoint, Datapath)> {
    let datapath = Datapath {
        receive_buffer: force_buffer(sock.as_fd(), Buffer::Receive, UDP_BUFFER),
        send_buffer: force_buffer(sock.as_fd(), Buffer::Send, UDP_BUFFER),
    };
    let mut config = quinn::EndpointConfig::default();
    config
        .max_udp_payload_size(DATAGRAM_MAX)
        .map_err(|e| io::Error::other(format!("QUIC endpoint: {e}")))?;
    let e = quinn::Endpoint::new(config, server, sock, Arc::new(QuietRuntime))?;
    Ok((e, datapath))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_take_the_path_mtu_within_what_gso_sends() {
        // Loopback's MTU is 65,536: the GSO bound holds.
        assert_eq!(
            datagram_bound("127.0.0.1:443".parse().unwrap()),
            DATAGRAM_MAX
        );
    }

    #[test]
    fn buffers_are_set_and_reported() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let _g = rt.enter();
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let (_e, d) = endpoint(sock, None).expect("endpoint");
        // Forced (root) the kernel books twice the 7 MiB; unprivileged,
        // twice what rmem_max/wmem_max allow.
        let root = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")));
        let max = |k: &str| {
            std::fs::read_to_string(format!("/proc/sys/net/core/{k}"))
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .unwrap_or(0)
        };
        let want = |k| {
            2 * if root {
                UDP_BUFFER
            } else {
                UDP_BUFFER.min(max(k))
            }
        };
        assert_eq!(d.receive_buffer, want("rmem_max"), "{d:?}");
        assert_eq!(d.send_buffer, want("wmem_max"), "{d:?}");
        let line = d.to_string();
        assert!(
            line.contains("stream window 6 MiB, connection window 15 MiB"),
            "{line}"
        );
    }
}
