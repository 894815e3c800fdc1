//! `tcpwise perf client -u`: UDP at a fixed rate, with loss, reordering
//! and jitter as iperf3 reports them; the direct check of an emulator's
//! loss, reorder and jitter settings.
//!
//! The test is set up on the TCP control connection as any other (the
//! header says `udp`, the server answers with the UDP port it bound).
//! Every datagram carries a magic, its sequence number and the sender's
//! clock when it left (ns since the Unix epoch). The receiver's
//! statistics are sans-IO ([`Stats`]):
//! - a sequence number above the next expected one counts the gap as
//!   lost; one below it is out of order and no longer lost (iperf3's rule);
//! - a sequence number seen before is a duplicate, counted apart and not
//!   as an arrival (iperf3 counts it as one, which hides loss on a path
//!   that duplicates: 3 % loss and 5 % duplication read as 0.6 % lost);
//! - jitter is RFC 3550's estimator, as iperf3 computes it: the transit
//!   time of each datagram (arrival minus departure; the two clocks' offset
//!   cancels), `J += (|D| - J) / 16` over consecutive transits;
//! - the summary's loss compares what the sender says it sent with the
//!   distinct datagrams that arrived, so losses at the very end count too.
//!
//! The sender sends on a schedule (datagram k leaves at k·size/rate): UDP
//! has no kernel pacing without the fq qdisc, so here a timer is the right
//! tool, a thread's own `nanosleep` with 1 ns slack (tokio's 1 ms timer
//! wheel clumped the datagrams); the schedule is absolute, so a late
//! wake-up sends what is due at once and the rate holds on average.

use crate::PerfError;
use crate::pace::Wire;
use crate::proto::{self, Accept, MAGIC};
pub use crate::proto::{HEADER_LEN, MAX_LEN, UdpSpec};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UdpSocket;

/// iperf3's default rate for UDP, bits/s: its `UDP_RATE`, 1024 × 1024,
/// which iperf3 calls "1 Mbps".
pub const DEFAULT_RATE: u64 = 1024 * 1024;
/// Payload size: a 1500-byte MTU less IPv6 and UDP headers.
pub const DEFAULT_LEN: usize = 1448;
use crate::pace::{END, now_ns};
pub use crate::pace::{UDP_MAGIC, decode, encode};

/// The receiver's counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    /// Distinct datagrams that arrived (duplicates not included).
    pub packets: u64,
    /// Datagrams that arrived again (a sequence number seen before).
    #[serde(default)]
    pub duplicates: u64,
    /// Their bytes (payload).
    pub bytes: u64,
    /// Lost so far by the sequence gaps seen.
    pub lost: u64,
    /// Arrived below the next expected sequence number.
    pub out_of_order: u64,
    /// RFC 3550 jitter, ms.
    pub jitter_ms: f64,
    /// Next sequence number expected.
    pub next: u64,
    #[serde(skip)]
    last_transit_ns: Option<i128>,
    /// Sequence numbers seen, a bit each.
    #[serde(skip)]
    seen: Vec<u64>,
}

impl Stats {
    /// Counters for numbers that start at `first` (iperf3's start at 1).
    pub fn starting_at(first: u64) -> Stats {
        Stats {
            next: first,
            ..Stats::default()
        }
    }

    /// Counts one datagram.
    pub fn on_packet(&mut self, seq: u64, sent_ns: u64, recv_ns: u64, len: usize) {
        // One bit a datagram: 1 MB for 8 million of them (10 s at 10 Gbit/s).
        let (word, bit) = ((seq / 64) as usize, 1u64 << (seq % 64));
        if word < (1 << 24) {
            if self.seen.len() <= word {
                self.seen.resize(word + 1, 0);
            }
            if self.seen[word] & bit != 0 {
                self.duplicates += 1;
                return;
            }
            self.seen[word] |= bit;
        }
        self.packets += 1;
        self.bytes += len as u64;
        if seq >= self.next {
            self.lost += seq - self.next;
            self.next = seq + 1;
        } else {
            self.out_of_order += 1;
            self.lost = self.lost.saturating_sub(1);
        }
        let transit = i128::from(recv_ns) - i128::from(sent_ns);
        if let Some(prev) = self.last_transit_ns {
            let d = (transit - prev).abs() as f64 / 1e6;
            self.jitter_ms += (d - self.jitter_ms) / 16.0;
        }
        self.last_transit_ns = Some(transit);
    }
}

/// `lost` of `total` in percent (0 of 0 is 0 %).
pub fn lost_pct(lost: u64, total: u64) -> f64 {
    if total > 0 {
        100.0 * lost as f64 / total as f64
    } else {
        0.0
    }
}

/// One interval of a UDP test, as the receiver saw it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UdpInterval {
    /// Start, seconds from the first datagram.
    pub start_s: f64,
    /// End.
    pub end_s: f64,
    /// Payload bytes that arrived.
    pub bytes: u64,
    /// Their rate, Mbit/s.
    pub mbit: f64,
    /// Datagrams that arrived.
    pub packets: u64,
    /// Lost in the interval (by sequence gaps).
    pub lost: u64,
    /// Out of order in the interval.
    pub out_of_order: u64,
    /// Duplicates in the interval.
    #[serde(default)]
    pub duplicates: u64,
    /// Jitter at the end of the interval, ms.
    pub jitter_ms: f64,
    /// The sender's line (`--iperf3` sending: the peer reports what
    /// arrived only at the end): what left, nothing of loss or jitter.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sender: bool,
}

impl UdpInterval {
    pub(crate) fn between(a: &Stats, b: &Stats, start_s: f64, end_s: f64) -> UdpInterval {
        let bytes = b.bytes - a.bytes;
        UdpInterval {
            start_s,
            end_s,
            bytes,
            mbit: bytes as f64 * 8.0 / (end_s - start_s).max(1e-9) / 1e6,
            packets: b.packets - a.packets,
            lost: b.lost.saturating_sub(a.lost),
            out_of_order: b.out_of_order - a.out_of_order,
            duplicates: b.duplicates - a.duplicates,
            jitter_ms: b.jitter_ms,
            sender: false,
        }
    }
}

impl std::fmt::Display for UdpInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = self.packets + self.lost;
        if self.sender {
            return write!(
                f,
                "[{:5.1}-{:5.1} s] {:>10} {:>8.2} Mbit/s  sent {} datagrams",
                self.start_s,
                self.end_s,
                crate::diagnose::human_bytes(self.bytes),
                self.mbit,
                self.packets
            );
        }
        write!(
            f,
            "[{:5.1}-{:5.1} s] {:>10} {:>8.2} Mbit/s  jitter {:.3} ms  lost {}/{} ({:.2}%)  out-of-order {}",
            self.start_s,
            self.end_s,
            crate::diagnose::human_bytes(self.bytes),
            self.mbit,
            self.jitter_ms,
            self.lost,
            total,
            lost_pct(self.lost, total),
            self.out_of_order
        )
    }
}

/// The whole UDP test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UdpReport {
    /// `send` (client to server) or `receive` (`-R`).
    pub direction: String,
    /// Rate asked for, bits/s.
    pub rate_bps: u64,
    /// Payload bytes per datagram.
    pub len: usize,
    /// Interval lines.
    pub intervals: Vec<UdpInterval>,
    /// Datagrams the sender sent.
    pub sent: u64,
    /// Distinct datagrams that arrived.
    pub received: u64,
    /// `sent - received`.
    pub lost: u64,
    /// Lost share, percent.
    pub lost_pct: f64,
    /// Out of order.
    pub out_of_order: u64,
    /// Duplicated datagrams (not counted as arrivals).
    #[serde(default)]
    pub duplicates: u64,
    /// Final jitter, ms.
    pub jitter_ms: f64,
    /// Receiver's rate over the test, Mbit/s.
    pub mbit: f64,
    /// Seconds from the first to the last datagram at the receiver.
    pub seconds: f64,
}

impl std::fmt::Display for UdpReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "summary (UDP, {}): {} of {} datagrams of {} B arrived in {:.2} s = {:.2} Mbit/s; lost {} ({:.2}%), out of order {}{}, jitter {:.3} ms (RFC 3550)",
            self.direction,
            self.received,
            self.sent,
            self.len,
            self.seconds,
            self.mbit,
            self.lost,
            self.lost_pct,
            self.out_of_order,
            if self.duplicates > 0 {
                format!(", duplicated {} (not counted as arrivals)", self.duplicates)
            } else {
                String::new()
            },
            self.jitter_ms
        )
    }
}

/// What a UDP test interrupted by Ctrl-C had measured: its intervals.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UdpPartial {
    /// Intervals completed.
    pub intervals: usize,
    /// Payload bytes that arrived in them.
    pub bytes: u64,
    /// Their seconds.
    pub seconds: f64,
    /// Datagrams that arrived.
    pub packets: u64,
    /// Lost by the sequence gaps seen (the datagrams still in flight are
    /// not counted: only the sender's total could say).
    pub lost: u64,
    /// Out of order.
    pub out_of_order: u64,
    /// Jitter at the end of the last interval, ms.
    pub jitter_ms: f64,
}

impl UdpPartial {
    /// From the interval lines printed so far.
    pub fn of(lines: &[UdpInterval]) -> UdpPartial {
        UdpPartial {
            intervals: lines.len(),
            bytes: lines.iter().map(|l| l.bytes).sum(),
            seconds: lines.last().map_or(0.0, |l| l.end_s)
                - lines.first().map_or(0.0, |l| l.start_s),
            packets: lines.iter().map(|l| l.packets).sum(),
            lost: lines.iter().map(|l| l.lost).sum(),
            out_of_order: lines.iter().map(|l| l.out_of_order).sum(),
            jitter_ms: lines.last().map_or(0.0, |l| l.jitter_ms),
        }
    }
}

impl std::fmt::Display for UdpPartial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = self.packets + self.lost;
        writeln!(
            f,
            "interrupted: partial summary over {} intervals: {} in {:.2} s = {:.2} Mbit/s; lost {}/{} ({:.2}%), out of order {}, jitter {:.3} ms",
            self.intervals,
            crate::diagnose::human_bytes(self.bytes),
            self.seconds,
            if self.seconds > 0.0 {
                self.bytes as f64 * 8.0 / self.seconds / 1e6
            } else {
                0.0
            },
            self.lost,
            total,
            lost_pct(self.lost, total),
            self.out_of_order,
            self.jitter_ms
        )
    }
}

/// Control messages of a UDP test, server to client.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum UdpMsg {
    /// The server (receiving) finished an interval.
    Interval(UdpInterval),
    /// The server's end of the test: what it sent, or what it received.
    Done {
        /// Datagrams it sent (`-R`).
        sent: u64,
        /// Its receiver counters (forward).
        stats: Option<Stats>,
        /// First to last datagram, seconds (forward).
        seconds: f64,
    },
}

/// How long a receiver waits past the test's length, and past the last
/// arrival after that, for the end marker.
const IDLE_END: Duration = Duration::from_secs(2);

/// Receives until the end marker (or see `IDLE_END`), reporting each
/// interval to `on_interval`. Returns the counters and the seconds from
/// the first to the last datagram.
pub async fn receive(
    sock: &UdpSocket,
    interval: Duration,
    limit: Duration,
    mut on_interval: impl FnMut(UdpInterval),
) -> std::io::Result<(Stats, f64)> {
    let mut buf = vec![0u8; 65_536];
    let mut stats = Stats::default();
    let mut mark = Stats::default();
    let mut first: Option<Instant> = None;
    let mut last_s = 0.0;
    let mut index = 0u32;
    // The end marker ends the test; without it (all its copies lost), 2 s
    // after the test's length, or later while datagrams still arrive (an
    // emulator or a receiver behind its schedule delivers them late: a
    // receiver that left them in its socket counted them lost), up to 10 s
    // past the length.
    let begun = tokio::time::Instant::now();
    let (soft, cap) = (
        begun + limit + IDLE_END,
        begun + limit + Duration::from_secs(10),
    );
    let mut hard = soft;
    loop {
        let next_tick = first.map(|f| tokio::time::Instant::from_std(f) + interval * (index + 1));
        let wait_until = next_tick.unwrap_or(hard).min(hard);
        tokio::select! {
            r = sock.recv(&mut buf) => {
                let n = match r {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
                    Err(e) => return Err(e),
                };
                let Some((seq, sent)) = decode(&buf[..n]) else { continue };
                if seq == END {
                    break;
                }
                hard = soft.max(tokio::time::Instant::now() + IDLE_END).min(cap);
                let f = *first.get_or_insert_with(Instant::now);
                last_s = f.elapsed().as_secs_f64();
                stats.on_packet(seq, sent, now_ns(), n);
            }
            _ = tokio::time::sleep_until(wait_until) => {
                if tokio::time::Instant::now() >= hard {
                    break;
                }
                if first.is_some() {
                    let (a, b) = (f64::from(index) * interval.as_secs_f64(), f64::from(index + 1) * interval.as_secs_f64());
                    on_interval(UdpInterval::between(&mark, &stats, a, b));
                    mark = stats.clone();
                    index += 1;
                }
            }
        }
    }
    let a = f64::from(index) * interval.as_secs_f64();
    if stats.packets > mark.packets && last_s > a {
        on_interval(UdpInterval::between(&mark, &stats, a, last_s));
    }
    Ok((stats, last_s))
}

/// The server's half of a UDP test (after the header and the answer):
/// receive, or send with `-R`.
pub async fn serve(
    header: &proto::Header,
    sock: UdpSocket,
    mut w: tokio::net::tcp::OwnedWriteHalf,
) -> Result<String, PerfError> {
    let spec = header.udp.clone().expect("a UDP header");
    let duration = Duration::from_millis(header.duration_ms);
    let interval = Duration::from_millis(header.interval_ms);
    let msg = |m: &UdpMsg| {
        let mut line = serde_json::to_vec(m).expect("serialises");
        line.push(b'\n');
        line
    };
    if header.reverse {
        // The client's hello tells us where to send.
        let mut hello = [0u8; 64];
        let (_, peer) = tokio::time::timeout(Duration::from_secs(10), sock.recv_from(&mut hello))
            .await
            .map_err(|_| {
                PerfError::WrongProtocol("client".into(), "no UDP hello within 10 s".into())
            })??;
        sock.connect(peer).await?;
        let sent = crate::pace::send_at_rate(
            &sock,
            spec.rate_bps,
            spec.len,
            duration,
            Wire::Ours,
            Default::default(),
        )
        .await?;
        w.write_all(&msg(&UdpMsg::Done {
            sent,
            stats: None,
            seconds: 0.0,
        }))
        .await?;
        return Ok(format!("sent {sent} UDP datagrams"));
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let recv = receive(&sock, interval, duration, move |i| {
        let _ = tx.send(i);
    });
    let forward = async {
        while let Some(i) = rx.recv().await {
            let _ = w.write_all(&msg(&UdpMsg::Interval(i))).await;
        }
    };
    let (r, ()) = tokio::join!(recv, forward);
    let (stats, seconds) = r?;
    let n = stats.packets;
    w.write_all(&msg(&UdpMsg::Done {
        sent: 0,
        stats: Some(stats),
        seconds,
    }))
    .await?;
    Ok(format!("received {n} UDP datagrams"))
}

/// The UDP test's header: rate and datagram length, no TCP settings.
fn udp_header(opts: &crate::options::ClientOptions, rate: u64, len: usize) -> proto::Header {
    proto::Header {
        magic: MAGIC.into(),
        reverse: opts.reverse,
        duration_ms: opts.duration.as_millis() as u64,
        bytes: None,
        interval_ms: opts.interval.as_millis().max(1) as u64,
        server_rcvbuf: None,
        server_sndbuf: None,
        server_read_sizing: None,
        congestion: None,
        pacing_bps: None,
        fq_rate_bps: None,
        udp: Some(UdpSpec {
            rate_bps: rate,
            len,
        }),
        server_output: false,
        zerocopy: None,
    }
}

/// The data socket: bound where `-B`/`--cport` say (anywhere of the
/// server's family otherwise), connected to the port the server opened.
async fn data_socket(
    addr: SocketAddr,
    data_local: Option<SocketAddr>,
    port: u16,
) -> Result<UdpSocket, PerfError> {
    let local = data_local.unwrap_or_else(|| {
        if addr.is_ipv6() {
            SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), 0)
        } else {
            SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), 0)
        }
    });
    let sock = UdpSocket::bind(local)
        .await
        .map_err(|e| PerfError::Config(format!("cannot bind to {local} (-B/--cport): {e}")))?;
    sock.connect(SocketAddr::new(addr.ip(), port)).await?;
    Ok(sock)
}

/// Reads the control connection until the server's `Done`: how many
/// datagrams it sent (`-R`).
async fn what_it_sent(
    r: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    limit: Duration,
) -> Option<u64> {
    let mut line = String::new();
    let mut sent = None;
    while let Ok(Ok(n)) = tokio::time::timeout(limit, proto::read_line(&mut *r, &mut line)).await {
        if n == 0 {
            break;
        }
        if let Ok(UdpMsg::Done { sent: s, .. }) = serde_json::from_str(line.trim()) {
            sent = Some(s);
            break;
        }
        line.clear();
    }
    sent
}

/// The server's interval lines as they come, each shown; then its
/// `Done`.
async fn server_intervals(
    r: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    on_interval: &mut impl FnMut(&UdpInterval),
    intervals: &mut Vec<UdpInterval>,
    done: &mut Option<UdpMsg>,
) {
    let mut line = String::new();
    loop {
        line.clear();
        match proto::read_line(&mut *r, &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => match serde_json::from_str::<UdpMsg>(line.trim()) {
                Ok(UdpMsg::Interval(i)) => {
                    on_interval(&i);
                    intervals.push(i);
                }
                Ok(m @ UdpMsg::Done { .. }) => {
                    *done = Some(m);
                    break;
                }
                Err(_) => {}
            },
        }
    }
}

/// Runs a UDP test against `addr`: the client's side.
pub async fn run_udp_client(
    opts: &crate::options::ClientOptions,
    mut on_interval: impl FnMut(&UdpInterval),
) -> Result<UdpReport, PerfError> {
    opts.validate()?;
    let addr = crate::net::resolve(opts).await?;
    let (ctl_local, data_local) = crate::net::local_addrs(opts, addr)?;
    let rate = opts.pacing_bps.unwrap_or(DEFAULT_RATE);
    let len = opts.length.unwrap_or(DEFAULT_LEN);
    let dialled = std::time::Instant::now();
    let (ctl, _) = crate::net::connect_with(
        addr,
        tcpwise_tcp::BufferPolicy::Auto,
        opts.connect_timeout,
        None,
        ctl_local,
    )
    .await?;
    let ctl = crate::client::greeted(ctl, addr, dialled.elapsed(), opts).await?;
    let (r, mut w) = ctl.into_split();
    let mut r = BufReader::new(r);
    let header = udp_header(opts, rate, len);
    let mut line = serde_json::to_vec(&header).map_err(|e| PerfError::Config(e.to_string()))?;
    line.push(b'\n');
    w.write_all(&line).await?;
    let mut reply = String::new();
    let wrong = |why: String| PerfError::WrongProtocol(addr.to_string(), why);
    tokio::time::timeout(
        Duration::from_secs(10),
        proto::read_line(&mut r, &mut reply),
    )
    .await
    .map_err(|_| wrong("no answer to the test header".into()))??;
    let accept: Accept =
        serde_json::from_str(reply.trim()).map_err(|_| wrong(format!("it answered {reply:?}")))?;
    if let Some(e) = accept.error {
        return Err(PerfError::Refusal(e));
    }
    let port = accept
        .udp_port
        .ok_or_else(|| wrong("no UDP port: an older server without -u".into()))?;
    let sock = data_socket(addr, data_local, port).await?;
    let limit = opts.duration + Duration::from_secs(15);
    if opts.reverse {
        // Tell the server where to send, then receive.
        let mut hello = vec![0u8; HEADER_LEN];
        encode(&mut hello, 0, now_ns());
        sock.send(&hello).await?;
        let mut local_intervals = Vec::new();
        let (stats, seconds) = receive(&sock, opts.interval, opts.duration, |i| {
            on_interval(&i);
            local_intervals.push(i);
        })
        .await?;
        let sent = what_it_sent(&mut r, limit).await;
        let sent = sent.ok_or_else(|| wrong("the server did not say what it sent".into()))?;
        return Ok(report(
            "receive",
            rate,
            len,
            local_intervals,
            sent,
            &stats,
            seconds,
        ));
    }
    let mut intervals = Vec::new();
    let mut done_msg = None;
    let read_msgs = server_intervals(&mut r, &mut on_interval, &mut intervals, &mut done_msg);
    let sender = crate::pace::send_at_rate(
        &sock,
        rate,
        len,
        opts.duration,
        Wire::Ours,
        Default::default(),
    );
    let (sent, ()) = tokio::join!(sender, async {
        let _ = tokio::time::timeout(limit, read_msgs).await;
    });
    let sent = sent?;
    match done_msg {
        Some(UdpMsg::Done {
            stats: Some(stats),
            seconds,
            ..
        }) => Ok(report("send", rate, len, intervals, sent, &stats, seconds)),
        _ => Err(wrong(
            "the server did not report the end of the test".into(),
        )),
    }
}

pub(crate) fn report(
    direction: &str,
    rate_bps: u64,
    len: usize,
    intervals: Vec<UdpInterval>,
    sent: u64,
    stats: &Stats,
    seconds: f64,
) -> UdpReport {
    // Distinct arrivals (duplicates apart), never more than were sent.
    let received = stats.packets.min(sent);
    let lost = sent.saturating_sub(received);
    UdpReport {
        direction: direction.into(),
        rate_bps,
        len,
        intervals,
        sent,
        received,
        lost,
        lost_pct: lost_pct(lost, sent),
        out_of_order: stats.out_of_order,
        duplicates: stats.duplicates,
        jitter_ms: stats.jitter_ms,
        mbit: stats.bytes as f64 * 8.0 / seconds.max(1e-9) / 1e6,
        seconds,
    }
}

/// The line a UDP test starts with.
pub fn banner(opts: &crate::options::ClientOptions) -> String {
    format!(
        "tcpwise perf: UDP {} {}:{} for {:.1} s at {:.2} Mbit/s, {} B datagrams",
        if opts.reverse { "from" } else { "to" },
        opts.host,
        opts.port,
        opts.duration.as_secs_f64(),
        opts.pacing_bps.unwrap_or(DEFAULT_RATE) as f64 / 1e6,
        opts.length.unwrap_or(DEFAULT_LEN)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_lost_late_arrivals_are_out_of_order_not_lost() {
        let mut s = Stats::default();
        for (seq, t) in [(0, 0), (1, 1), (3, 3), (2, 2), (4, 4), (7, 7)] {
            s.on_packet(seq, t * 1_000_000, t * 1_000_000 + 5_000_000, 100);
        }
        assert_eq!((s.packets, s.lost, s.out_of_order, s.next), (6, 2, 1, 8));
        // A constant transit time is no jitter.
        assert_eq!(s.jitter_ms, 0.0);
    }

    #[test]
    fn duplicates_are_counted_apart_not_as_arrivals() {
        let mut s = Stats::default();
        for seq in [0, 1, 1, 2, 4, 2, 4, 5] {
            s.on_packet(seq, 0, 5_000_000, 100);
        }
        // 0 1 2 4 5 arrived once each, 1 2 4 again; 3 is lost.
        assert_eq!(
            (s.packets, s.duplicates, s.lost, s.out_of_order),
            (5, 3, 1, 0)
        );
        let r = report("send", 1_000_000, 100, Vec::new(), 6, &s, 1.0);
        assert_eq!((r.received, r.lost, r.duplicates), (5, 1, 3));
        assert!(r.to_string().contains("duplicated 3"), "{r}");
    }

    #[test]
    fn jitter_is_rfc_3550s_estimator() {
        let mut s = Stats::default();
        // Transits 10, 12, 10 ms: D = 2, 2 ms; J = 2/16, then + (2 - 2/16)/16.
        for (seq, transit_ms) in [(0u64, 10u64), (1, 12), (2, 10)] {
            let sent = seq * 20_000_000;
            s.on_packet(seq, sent, sent + transit_ms * 1_000_000, 100);
        }
        let j1 = 2.0 / 16.0;
        let want = j1 + (2.0 - j1) / 16.0;
        assert!((s.jitter_ms - want).abs() < 1e-12, "{}", s.jitter_ms);
    }

    #[test]
    fn a_partial_summary_adds_the_intervals_and_keeps_the_last_jitter() {
        let line = |start_s: f64, packets: u64, lost: u64, jitter_ms: f64| UdpInterval {
            start_s,
            end_s: start_s + 0.5,
            bytes: packets * 1000,
            mbit: 0.0,
            packets,
            lost,
            out_of_order: 1,
            duplicates: 0,
            jitter_ms,
            sender: false,
        };
        let p = UdpPartial::of(&[line(0.0, 90, 10, 0.5), line(0.5, 100, 0, 0.7)]);
        assert_eq!(
            (p.intervals, p.packets, p.lost, p.out_of_order),
            (2, 190, 10, 2)
        );
        assert_eq!((p.bytes, p.seconds, p.jitter_ms), (190_000, 1.0, 0.7));
        assert!(p.to_string().contains("lost 10/200 (5.00%)"), "{p}");
        assert!(UdpPartial::of(&[]).to_string().contains("0/0 (0.00%)"));
    }

    #[test]
    fn datagrams_round_trip_and_strangers_are_ignored() {
        let mut b = [0u8; 64];
        encode(&mut b, 42, 7);
        assert_eq!(decode(&b), Some((42, 7)));
        assert_eq!(decode(&b[..10]), None);
        assert_eq!(decode(&[0u8; 64]), None);
    }
}
