//! What the client's and the server's glue share: the data loops (iperf3
//! ends a stream by the control connection's `TEST_END`, not by closing
//! it, so these run until told to stop, sampling `TCP_INFO` every
//! interval as tcpwise's own loops do), the JSON messages, the results,
//! and the server's end of a test.

use super::wire::{self, Results, State, StreamResult};
use crate::PerfError;
use crate::proto::Sample;
use crate::stream::sample;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc::UnboundedSender, watch};

/// What a data loop reports: the connection's index and a sample.
pub(crate) type Report = UnboundedSender<(usize, Sample)>;

/// One end of a data connection at work.
pub(crate) struct Flow {
    /// The connection's index (0-based, in the order opened).
    pub k: usize,
    /// The socket.
    pub sock: TcpStream,
    /// Where samples go (`None`: no intervals wanted).
    pub report: Option<Report>,
    /// The interval.
    pub interval: Duration,
    /// When the test's clock started.
    pub start: Instant,
    /// `-b`: a sending flow's writes held to this many bits/s on average
    /// ([`crate::throttle`]).
    pub held: Option<u64>,
    /// `-O`: what moves in this first stretch is left out of the flow's
    /// result, as iperf3 resets its counters when omitting ends.
    pub omit: Duration,
}

impl Flow {
    fn tell(&self, index: u32, bytes: u64) {
        if let Some(r) = &self.report {
            let _ = r.send((self.k, sample(index, self.start, bytes, &self.sock)));
        }
    }

    /// Writes `block`-sized writes (`sends`) or reads until `stop` turns
    /// true, the peer goes, or (`bytes_limit`, iperf3's `-n`) that many
    /// bytes were written; returns the last sample and the socket, still
    /// open (iperf3's server closes it at `TEST_END`, its client at the
    /// end).
    pub async fn run(
        mut self,
        sends: bool,
        block: usize,
        mut stop: watch::Receiver<bool>,
        bytes_limit: Option<u64>,
    ) -> (Sample, TcpStream) {
        let mut buf = vec![0x5au8; if sends { block.max(1) } else { 256 * 1024 }];
        let mut tick =
            tokio::time::interval_at(tokio::time::Instant::now() + self.interval, self.interval);
        let (mut bytes, mut index) = (0u64, 0u32);
        // Bytes and seconds when `omit` ended (the result counts from there).
        let mut base: Option<(u64, f64)> = None;
        let throttle = self
            .held
            .and_then(|bps| crate::throttle::Throttle::new(bps, Instant::now()));
        while !*stop.borrow() && bytes_limit.is_none_or(|l| bytes < l) {
            let want = bytes_limit.map_or(buf.len(), |l| ((l - bytes) as usize).min(buf.len()));
            let sock = &mut self.sock;
            let sent = bytes;
            let io = async {
                if sends {
                    crate::throttle::hold(throttle, sent, None).await;
                    sock.write(&buf[..want]).await
                } else {
                    sock.read(&mut buf).await
                }
            };
            tokio::select! {
                r = io => match r {
                    Ok(n) if n > 0 => {
                        bytes += n as u64;
                        if base.is_none() && self.start.elapsed() >= self.omit {
                            base = Some((bytes, self.start.elapsed().as_secs_f64()));
                        }
                    }
                    _ => break,
                },
                _ = stop.changed() => {}
                _ = tick.tick() => {
                    index += 1;
                    self.tell(index, bytes);
                }
            }
        }
        let mut last = sample(index + 1, self.start, bytes, &self.sock);
        if !self.omit.is_zero() {
            let (b, t) = base.unwrap_or((bytes, last.t));
            last.bytes -= b;
            last.t = (last.t - t).max(0.0);
        }
        (last, self.sock)
    }
}

/// Drains what is left of a connection the peer is closing, for at most
/// `limit` (a sender's tail after `TEST_END`): bytes read.
pub(crate) async fn drain(sock: &mut TcpStream, limit: Duration) -> u64 {
    let mut buf = vec![0u8; 256 * 1024];
    let mut n = 0u64;
    let _ = tokio::time::timeout(limit, async {
        while let Ok(r) = sock.read(&mut buf).await {
            if r == 0 {
                break;
            }
            n += r as u64;
        }
    })
    .await;
    n
}

/// One length-prefixed JSON message ([`super::wire::frame`]).
pub(crate) async fn read_json<T: for<'de> serde::Deserialize<'de>>(
    sock: &mut TcpStream,
) -> std::io::Result<T> {
    let mut len = [0u8; 4];
    sock.read_exact(&mut len).await?;
    let n = super::wire::json_len(len).map_err(std::io::Error::other)?;
    let mut json = vec![0u8; n as usize];
    sock.read_exact(&mut json).await?;
    super::wire::parse(&json).map_err(std::io::Error::other)
}

/// A results message begun: this process's CPU since `from` (user,
/// system seconds at the test's start) as iperf3's `cpu_util_*`
/// percentages over the `wall` seconds it ran, no streams yet.
pub(crate) fn results_since(from: (f64, f64), wall: f64) -> Results {
    let (u, s) = tcpwise_sys::cpu_times();
    let pct = |t: f64| 100.0 * t.max(0.0) / wall.max(1e-9);
    let (du, ds) = (u - from.0, s - from.1);
    Results {
        cpu_util_total: pct(du + ds),
        cpu_util_user: pct(du),
        cpu_util_system: pct(ds),
        sender_has_retransmits: -1,
        ..Results::default()
    }
}

/// Connection `k`'s result from its last sample: the bytes it moved, and
/// its retransmissions when this end sent (-1 otherwise, as iperf3).
pub(crate) fn stream_result(k: usize, sent: bool, last: &Sample) -> StreamResult {
    StreamResult {
        id: super::wire::stream_id(k),
        bytes: last.bytes,
        retransmits: match (&last.info, sent) {
            (Some(i), true) => i64::from(i.total_retrans),
            _ => -1,
        },
        start_time: 0.0,
        end_time: last.t,
        ..StreamResult::default()
    }
}

pub(crate) async fn state(sock: &mut TcpStream, limit: Duration) -> Option<State> {
    let mut b = [0u8; 1];
    match tokio::time::timeout(limit, sock.read_exact(&mut b)).await {
        Ok(Ok(_)) => State::of(b[0]),
        _ => None,
    }
}

/// The end of a test, from `TEST_END` on: the client's results, then
/// ours, then the goodbye.
pub(crate) async fn exchange(ctl: &mut TcpStream, ours: &Results) -> Result<(), PerfError> {
    ctl.write_all(&[State::ExchangeResults.byte()]).await?;
    let late = Duration::from_secs(10);
    let _client: Results = match tokio::time::timeout(late, read_json(ctl)).await {
        Ok(Ok(r)) => r,
        _ => return Err(fail("its results did not come")),
    };
    ctl.write_all(&wire::frame(ours)).await?;
    ctl.write_all(&[State::DisplayResults.byte()]).await?;
    let _ = state(ctl, late).await;
    Ok(())
}

pub(crate) fn fail(why: &str) -> PerfError {
    PerfError::WrongProtocol("iperf3 client".into(), why.into())
}
