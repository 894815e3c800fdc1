//! iperf3's UDP tests, both ends: one stream, either way. The "stream"
//! is a UDP socket connected to the server's port (the TCP port's number):
//! the client sends iperf3's 4-byte hello, the server connects back and
//! answers; datagrams carry iperf3's header ([`Wire::Iperf3`]); the
//! receiver counts with [`Stats`] (loss by sequence gaps, out of order,
//! RFC 3550 jitter, duplicates apart) and the results carry iperf3's
//! `jitter` (seconds), `errors` (lost) and `packets` (the highest number
//! seen, or the count sent).

use super::client::Control;
use super::wire::{Params, Results, StreamResult};
use crate::PerfError;
use crate::client::ClientOptions;
use crate::pace::{Wire, now_ns, send_at_rate};
use crate::udp::{DEFAULT_LEN, DEFAULT_RATE, Stats, UdpInterval, UdpReport, report};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;
use tokio::sync::watch;

/// The client's hello on a new UDP stream (iperf3's `UDP_CONNECT_MSG`,
/// as an x86 iperf3 writes it).
const HELLO: [u8; 4] = 0x3637_3839u32.to_le_bytes();
/// The server's answer (`UDP_CONNECT_REPLY`), and the one servers before
/// 3.10 give.
const REPLY: [u8; 4] = 0x3938_3736u32.to_le_bytes();
const LEGACY_REPLY: [u8; 4] = 987_654_321u32.to_le_bytes();

/// Client: a UDP socket connected to the server, greeted and answered.
async fn open_stream(peer: SocketAddr, local: Option<SocketAddr>) -> Result<UdpSocket, PerfError> {
    let any = if peer.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let bind = local.map_or(any.parse().expect("an address"), |l| {
        SocketAddr::new(l.ip(), 0)
    });
    let sock = UdpSocket::bind(bind).await?;
    sock.connect(peer).await?;
    sock.send(&HELLO).await?;
    let mut b = [0u8; 4];
    match tokio::time::timeout(Duration::from_secs(5), sock.recv(&mut b)).await {
        Ok(Ok(4)) if b == REPLY || b == LEGACY_REPLY => Ok(sock),
        Ok(Ok(_)) => Err(PerfError::WrongProtocol(
            peer.to_string(),
            "a UDP answer that is not iperf3's".into(),
        )),
        _ => Err(PerfError::Unreachable(
            peer.to_string(),
            "no answer to the UDP stream's hello within 5 s (is UDP to that port blocked?)".into(),
        )),
    }
}

/// Server: a UDP socket on `local` (the server's TCP address and port),
/// bound before the client is asked for its stream, so its hello finds it.
pub(crate) fn listen_stream(local: SocketAddr) -> std::io::Result<UdpSocket> {
    let raw = socket2::Socket::new(
        socket2::Domain::for_address(local),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )?;
    raw.set_reuse_address(true)?;
    raw.bind(&local.into())?;
    raw.set_nonblocking(true)?;
    UdpSocket::from_std(raw.into())
}

/// Server: waits for a client's hello, connects back and answers.
pub(crate) async fn accept_stream(sock: UdpSocket) -> std::io::Result<UdpSocket> {
    let mut b = [0u8; 64];
    let (_, from) = tokio::time::timeout(Duration::from_secs(10), sock.recv_from(&mut b))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no UDP hello"))??;
    sock.connect(from).await?;
    sock.send(&REPLY).await?;
    Ok(sock)
}

/// Receives until `stop` turns true: the counters, the seconds from the
/// first to the last datagram, and each interval to `on_interval`.
pub(crate) async fn receive(
    sock: &UdpSocket,
    wire: Wire,
    interval: Duration,
    mut stop: watch::Receiver<bool>,
    mut on_interval: impl FnMut(UdpInterval),
) -> (Stats, f64) {
    let mut buf = vec![0u8; 65_536];
    let mut stats = Stats::starting_at(1);
    let mut mark = stats.clone();
    let mut first: Option<Instant> = None;
    let (mut last_s, mut index) = (0.0, 0u32);
    while !*stop.borrow() {
        let tick = first.map(|f| tokio::time::Instant::from_std(f) + interval * (index + 1));
        let far = tokio::time::Instant::now() + Duration::from_secs(3600);
        tokio::select! {
            r = sock.recv(&mut buf) => {
                let Ok(n) = r else { continue };
                let Some((seq, sent)) = wire.decode_iperf3(&buf[..n]) else { continue };
                let f = *first.get_or_insert_with(Instant::now);
                last_s = f.elapsed().as_secs_f64();
                stats.on_packet(seq, sent, now_ns(), n);
            }
            _ = tokio::time::sleep_until(tick.unwrap_or(far)) => {
                let i = interval.as_secs_f64();
                on_interval(UdpInterval::between(&mark, &stats, f64::from(index) * i, f64::from(index + 1) * i));
                mark = stats.clone();
                index += 1;
            }
            _ = stop.changed() => {}
        }
    }
    // The moments between the last tick and the end make a line only if
    // they are a tenth of an interval or more, as in iperf3.
    let a = f64::from(index) * interval.as_secs_f64();
    if stats.packets > mark.packets && last_s - a >= 0.1 * interval.as_secs_f64() {
        on_interval(UdpInterval::between(&mark, &stats, a, last_s));
    }
    (stats, last_s)
}

/// A receiving end's result: iperf3's `errors` are the lost, `packets`
/// the highest number seen.
pub(crate) fn received(stats: &Stats, seconds: f64) -> StreamResult {
    StreamResult {
        id: 1,
        bytes: stats.bytes,
        retransmits: -1,
        jitter: stats.jitter_ms / 1000.0,
        errors: stats.lost as i64,
        packets: stats.next.saturating_sub(1) as i64,
        start_time: 0.0,
        end_time: seconds,
    }
}

/// A sender's interval line: `packets` datagrams of `len` bytes left
/// between `from` and `to` (nothing lost or late as far as it knows).
fn sent_interval(from: Duration, to: Duration, packets: u64, len: usize) -> UdpInterval {
    let bytes = packets * len as u64;
    let secs = (to - from).as_secs_f64().max(1e-9);
    UdpInterval {
        start_s: from.as_secs_f64(),
        end_s: to.as_secs_f64(),
        bytes,
        mbit: bytes as f64 * 8.0 / secs / 1e6,
        packets,
        lost: 0,
        out_of_order: 0,
        duplicates: 0,
        jitter_ms: 0.0,
        sender: true,
    }
}

/// A sending end's result: `packets` is how many it sent.
pub(crate) fn sent(count: u64, len: usize, seconds: f64) -> StreamResult {
    StreamResult {
        id: 1,
        bytes: count * len as u64,
        retransmits: -1,
        packets: count as i64,
        end_time: seconds,
        ..StreamResult::default()
    }
}

/// `perf client -u --iperf3`: one UDP stream against an iperf3 server, at
/// `-b` (iperf3's default 1 Mbit/s: 1024 × 1024 bits/s) in `-l`-byte
/// datagrams; the report as tcpwise's UDP test prints it.
pub async fn run_client(
    opts: &ClientOptions,
    mut on_interval: impl FnMut(&UdpInterval),
) -> Result<UdpReport, PerfError> {
    opts.validate()?;
    if let Some(why) = super::client::unsupported(opts, true) {
        return Err(PerfError::Config(why));
    }
    let rate = opts.pacing_bps.unwrap_or(DEFAULT_RATE);
    let len = opts.length.unwrap_or(DEFAULT_LEN);
    let wire = Wire::Iperf3 { counters64: false };
    if len < wire.header_len() {
        return Err(PerfError::Config(format!(
            "-l must be at least {} for iperf3's UDP header",
            wire.header_len()
        )));
    }
    let params = Params {
        udp: Some(true),
        bandwidth: Some(rate),
        len: Some(len as u64),
        ..Params::asked(opts)
    };
    let (mut ctl, _) = Control::open(opts, &params).await?;
    let sock = open_stream(ctl.peer, ctl.local).await?;
    let setup = ctl.setup;
    ctl.expect(super::wire::State::TestStart, setup).await?;
    ctl.expect(super::wire::State::TestRunning, setup).await?;
    let start = Instant::now();
    let cpu0 = tcpwise_sys::cpu_times();
    let (stop_tx, stop) = watch::channel(false);
    let count = Arc::new(AtomicU64::new(0));
    // The receiver runs until our timer stops it; the sender until -t on
    // its own schedule.
    let data = async {
        if opts.reverse {
            let mut lines = Vec::new();
            let (stats, secs) = receive(&sock, wire, opts.interval, stop, |i| {
                on_interval(&i);
                lines.push(i);
            })
            .await;
            Ok::<_, std::io::Error>((Some((stats, secs)), lines))
        } else {
            // The sender's own interval lines, as iperf3's client prints
            // them: what left in each interval.
            let mut lines = Vec::new();
            let ticks = async {
                let (step, mut k, mut before) = (opts.interval, 1u32, 0u64);
                while step * k <= opts.duration {
                    tokio::time::sleep_until(tokio::time::Instant::from_std(start + step * k))
                        .await;
                    let now = count.load(Ordering::Relaxed);
                    let line = sent_interval(step * (k - 1), step * k, now - before, len);
                    on_interval(&line);
                    lines.push(line);
                    (before, k) = (now, k + 1);
                }
            };
            let sending = send_at_rate(&sock, rate, len, opts.duration, wire, count.clone());
            tokio::join!(sending, ticks).0?;
            Ok((None, lines))
        }
    };
    let timer = async {
        tokio::time::sleep(opts.duration).await;
        let _ = stop_tx.send(true);
    };
    let got = tokio::select! {
        r = async { tokio::join!(data, timer).0 } => r?,
        e = ctl.interrupted() => return Err(e),
    };
    let secs = start.elapsed().as_secs_f64();
    let mut ours = super::data::results_since(cpu0, secs);
    let (got, lines) = got;
    let mine = match &got {
        Some((stats, s)) => received(stats, *s),
        None => sent(count.load(Ordering::Relaxed), len, secs),
    };
    ours.streams.push(mine);
    let theirs: Results = ctl.finish(&ours).await?;
    let peer = theirs
        .stream(1)
        .cloned()
        .ok_or_else(|| ctl.wrong("its results lack the UDP stream"))?;
    Ok(match got {
        Some((stats, s)) => report(
            "receive",
            rate,
            len,
            lines,
            peer.packets.max(0) as u64,
            &stats,
            s,
        ),
        None => send_report((rate, len), lines, count.load(Ordering::Relaxed), &peer),
    })
}

/// The sender's report: what it sent, and what the server's results say
/// arrived (its highest sequence number less its losses), its jitter and
/// goodput.
fn send_report(
    (rate, len): (u64, usize),
    lines: Vec<UdpInterval>,
    sent: u64,
    peer: &StreamResult,
) -> UdpReport {
    let highest = peer.packets.max(0) as u64;
    let arrived = highest.saturating_sub(peer.errors.max(0) as u64).min(sent);
    let lost = sent - arrived;
    let seconds = (peer.end_time - peer.start_time).max(1e-9);
    UdpReport {
        direction: "send".into(),
        rate_bps: rate,
        len,
        intervals: lines,
        sent,
        received: arrived,
        lost,
        lost_pct: crate::udp::lost_pct(lost, sent),
        out_of_order: 0,
        duplicates: 0,
        jitter_ms: peer.jitter * 1000.0,
        mbit: peer.bytes as f64 * 8.0 / seconds / 1e6,
        seconds,
    }
}

/// `iperf3 -c -u` against `perf server`: the stream accepted on the
/// control connection's own address and port, then received until
/// `TEST_END`, or (`-R`) sent at the client's `-b` until then.
pub(crate) async fn serve(
    mut ctl: tokio::net::TcpStream,
    params: &Params,
) -> Result<String, PerfError> {
    use super::data::{exchange, fail, state};
    use super::wire::{ServerErrno, State};
    use tokio::io::AsyncWriteExt;
    let wire = Wire::Iperf3 {
        counters64: params.udp_counters_64bit == Some(1),
    };
    let len = params
        .len
        .map_or(DEFAULT_LEN, |l| l as usize)
        .clamp(wire.header_len(), 65_507);
    let rate = params.bandwidth.unwrap_or(DEFAULT_RATE).max(1);
    let listening = listen_stream(ctl.local_addr()?)?;
    ctl.write_all(&[State::CreateStreams.byte()]).await?;
    let sock = match accept_stream(listening).await {
        Ok(s) => s,
        _ => {
            let _ = ctl.write_all(&ServerErrno::Accept.message()).await;
            return Err(fail("its UDP stream did not say hello within 10 s"));
        }
    };
    ctl.write_all(&[State::TestStart.byte(), State::TestRunning.byte()])
        .await?;
    let start = Instant::now();
    let cpu0 = tcpwise_sys::cpu_times();
    let (stop_tx, stop) = watch::channel(false);
    let count = Arc::new(AtomicU64::new(0));
    let guard = params.guard();
    let reverse = params.reverse == Some(true);
    let data = async {
        if reverse {
            let time = if params.time == 0 { 3600 } else { params.time };
            let _ = send_at_rate(
                &sock,
                rate,
                len,
                Duration::from_secs(time),
                wire,
                count.clone(),
            )
            .await;
            None
        } else {
            Some(receive(&sock, wire, Duration::from_secs(1), stop, |_| {}).await)
        }
    };
    let ended = async {
        let end = state(&mut ctl, guard).await;
        let _ = stop_tx.send(true);
        end
    };
    // The sender stops at TEST_END (dropped mid-schedule), the receiver
    // when told.
    let (got, end) = if reverse {
        tokio::select! {
            end = ended => (None, end),
            _ = data => (None, state(&mut ctl, guard).await),
        }
    } else {
        tokio::join!(data, ended)
    };
    if end != Some(State::TestEnd) {
        return Err(fail("the client went away before the end of the test"));
    }
    let secs = start.elapsed().as_secs_f64();
    let mut ours = super::data::results_since(cpu0, secs);
    let moved = match &got {
        Some((stats, s)) => {
            ours.streams.push(received(stats, *s));
            stats.bytes
        }
        None => {
            let n = count.load(Ordering::Relaxed);
            ours.streams.push(sent(n, len, secs));
            n * len as u64
        }
    };
    exchange(&mut ctl, &ours).await?;
    Ok(format!(
        "iperf3 UDP test{}: {moved} bytes in {secs:.2} s",
        if reverse { ", reverse" } else { "" }
    ))
}
