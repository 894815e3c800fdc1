//! The UDP sender on a schedule, for `-u` both ways and for iperf3's UDP
//! tests (`--iperf3`, `iperf3 -c -u` against our server): datagram k
//! leaves at k·size/rate, numbered in our format or iperf3's ([`Wire`]).

use crate::proto::HEADER_LEN;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::net::UdpSocket;

/// First bytes of every datagram.
pub const UDP_MAGIC: u32 = 0x5457_5055; // "TWPU"
/// The sequence number that tells the receiver the sender is done.
pub(crate) const END: u64 = u64::MAX;

pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Writes a datagram's header into `buf`.
pub fn encode(buf: &mut [u8], seq: u64, sent_ns: u64) {
    buf[..4].copy_from_slice(&UDP_MAGIC.to_be_bytes());
    buf[4..12].copy_from_slice(&seq.to_be_bytes());
    buf[12..20].copy_from_slice(&sent_ns.to_be_bytes());
}

/// A datagram's (sequence, departure ns), if it is one of ours.
pub fn decode(buf: &[u8]) -> Option<(u64, u64)> {
    if buf.len() < HEADER_LEN || buf[..4] != UDP_MAGIC.to_be_bytes() {
        return None;
    }
    Some((
        u64::from_be_bytes(buf[4..12].try_into().ok()?),
        u64::from_be_bytes(buf[12..20].try_into().ok()?),
    ))
}

/// How a datagram says its number and when it left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Ours: a magic, a 64-bit number from 0, nanoseconds; an end marker
    /// follows the last.
    Ours,
    /// iperf3's: seconds and microseconds (32 bits each), then a number
    /// from 1 in 32 bits, or 64 with `--udp-counters-64bit`; no end
    /// marker (the control connection ends the test).
    Iperf3 {
        /// 64-bit numbers.
        counters64: bool,
    },
}

impl Wire {
    /// Bytes of header a datagram needs.
    pub fn header_len(self) -> usize {
        match self {
            Wire::Ours => HEADER_LEN,
            Wire::Iperf3 { counters64 } => 8 + if counters64 { 8 } else { 4 },
        }
    }

    /// Writes datagram `seq`'s header (`seq` from 0) into `buf`.
    pub fn encode(self, buf: &mut [u8], seq: u64) {
        let now = now_ns();
        match self {
            Wire::Ours => encode(buf, seq, now),
            Wire::Iperf3 { counters64 } => {
                buf[..4].copy_from_slice(&((now / 1_000_000_000) as u32).to_be_bytes());
                buf[4..8].copy_from_slice(&((now % 1_000_000_000 / 1000) as u32).to_be_bytes());
                if counters64 {
                    buf[8..16].copy_from_slice(&(seq + 1).to_be_bytes());
                } else {
                    buf[8..12].copy_from_slice(&((seq + 1) as u32).to_be_bytes());
                }
            }
        }
    }

    /// An iperf3 datagram's (number, departure ns); `None` for ours or
    /// one too short.
    pub fn decode_iperf3(self, buf: &[u8]) -> Option<(u64, u64)> {
        let Wire::Iperf3 { counters64 } = self else {
            return None;
        };
        if buf.len() < self.header_len() {
            return None;
        }
        let word = |i: usize| u32::from_be_bytes(buf[i..i + 4].try_into().expect("4 bytes"));
        let sent = u64::from(word(0)) * 1_000_000_000 + u64::from(word(4)) * 1000;
        let n = if counters64 {
            u64::from_be_bytes(buf[8..16].try_into().expect("8 bytes"))
        } else {
            u64::from(word(8))
        };
        Some((n, sent))
    }
}

/// Sends datagrams of `len` bytes at `rate_bps` for `duration` to the
/// connected peer; returns how many, and keeps `sent` at the count so
/// far (for a caller that stops it early by dropping it).
///
/// The schedule runs on a thread of its own that sleeps until each
/// datagram is due, with 1 ns timer slack, because tokio's 1 ms timer
/// wheel sends datagrams in clumps and the jitter a receiver reads would
/// measure the sender (`docs/perf.md`, "UDP"). A full send buffer (the
/// host's own queue, not the path) waits for room and sends the same
/// datagram, as iperf3 does: a datagram that never left the host is
/// neither sent nor lost.
pub async fn send_at_rate(
    sock: &UdpSocket,
    rate_bps: u64,
    len: usize,
    duration: Duration,
    wire: Wire,
    sent: Arc<AtomicU64>,
) -> std::io::Result<u64> {
    // Dropping this future (Ctrl-C) stops the thread within 50 ms, so it
    // does not hold the runtime's shutdown until -t.
    struct StopOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let stop = StopOnDrop(Default::default());
    let flag = stop.0.clone();
    let sock = socket2::SockRef::from(sock).try_clone()?;
    tokio::task::spawn_blocking(move || {
        send_on_schedule(&sock, rate_bps, len, duration, wire, &flag, &sent)
    })
    .await
    .map_err(std::io::Error::other)?
}

fn send_on_schedule(
    sock: &socket2::Socket,
    rate_bps: u64,
    len: usize,
    duration: Duration,
    wire: Wire,
    stop: &std::sync::atomic::AtomicBool,
    sent: &AtomicU64,
) -> std::io::Result<u64> {
    tcpwise_tcp::set_timer_slack_1ns();
    let len = len.max(wire.header_len());
    let gap = Duration::from_secs_f64(len as f64 * 8.0 / rate_bps as f64);
    let mut buf = vec![0u8; len];
    let start = Instant::now();
    let mut seq = 0u64;
    let fd = std::os::fd::AsRawFd::as_raw_fd(sock);
    // Ok(false): stopped while the send buffer was full.
    let send = |buf: &[u8]| -> std::io::Result<bool> {
        let mut refused = false;
        loop {
            match sock.send(buf) {
                Ok(_) => return Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(false);
                    }
                    tcpwise_sys::wait_writable(fd, 50);
                }
                // An ICMP error from an earlier datagram, reported on this
                // send (and cleared by it): this one was not sent; once more.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && !refused => {
                    refused = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => return Ok(true),
                Err(e) => return Err(e),
            }
        }
    };
    loop {
        let due = gap.mul_f64(seq as f64);
        if due >= duration {
            break;
        }
        while let Some(wait) = due.checked_sub(start.elapsed()) {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(seq);
            }
            std::thread::sleep(wait.min(Duration::from_millis(50)));
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(seq);
        }
        wire.encode(&mut buf, seq);
        if !send(&buf)? {
            return Ok(seq);
        }
        seq += 1;
        sent.store(seq, Ordering::Relaxed);
    }
    if wire == Wire::Ours {
        // The end marker, a few times (it can be lost too).
        encode(&mut buf[..HEADER_LEN], END, now_ns());
        for _ in 0..3 {
            send(&buf[..HEADER_LEN])?;
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(seq)
}
