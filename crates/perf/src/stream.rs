//! The data loops both ends share: the sender (plain writes, `sendfile`
//! or `MSG_ZEROCOPY`, paced by the kernel) and the receiver (read sizing),
//! each sampling `TCP_INFO` per interval, and the test's limit (time or
//! bytes).

use crate::PerfError;
use crate::proto::{Header, Sample};
use std::time::{Duration, Instant};
use tcpwise_tcp::{ReadSizer, SizedRead, TcpInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc::UnboundedSender;

/// When the sender stops.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// After this long.
    Time(Duration),
    /// After this many bytes.
    Bytes(u64),
}

impl Limit {
    /// From a test header.
    pub fn from_header(h: &Header) -> Limit {
        match h.bytes {
            Some(b) => Limit::Bytes(b),
            None => Limit::Time(Duration::from_millis(h.duration_ms)),
        }
    }
}

pub(crate) const CHUNK: usize = 128 * 1024;

/// Unsent bytes the sender keeps queued in its socket at most (TCP_NOTSENT_LOWAT).
pub(crate) const NOTSENT_LOWAT: u32 = 256 * 1024;

pub(crate) fn sample(index: u32, start: Instant, bytes: u64, s: &impl std::os::fd::AsFd) -> Sample {
    let sock = socket2::SockRef::from(s);
    Sample {
        index,
        t: start.elapsed().as_secs_f64(),
        bytes,
        info: TcpInfo::of(&s.as_fd()),
        rcvbuf: sock.recv_buffer_size().ok().map(|n| n as u64),
        sndbuf: sock.send_buffer_size().ok().map(|n| n as u64),
        zerocopy: None,
    }
}

/// Size of the in-memory file `-Z` sends from, in a loop.
pub(crate) const ZC_FILE: usize = 4 << 20;

/// Where a sender's bytes come from.
pub(crate) enum Source {
    /// A buffer, copied into the socket by `write`.
    Copy,
    /// An in-memory file, by `sendfile` from `offset`.
    Sendfile(std::os::fd::OwnedFd, i64),
    /// A buffer that lives as long as the program, by `MSG_ZEROCOPY`.
    Msg(&'static [u8], crate::proto::ZeroCopyCount),
}

/// The buffer `MSG_ZEROCOPY` sends from: made once, never freed or
/// written again, so no send can see it change before its completion.
pub(crate) fn pinned_chunk() -> &'static [u8] {
    static CHUNK_BUF: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    CHUNK_BUF.get_or_init(|| vec![0x5a; CHUNK])
}

impl Source {
    pub(crate) fn new(
        s: &TcpStream,
        zerocopy: Option<crate::proto::ZeroCopy>,
    ) -> std::io::Result<Source> {
        use std::os::fd::AsRawFd;
        Ok(match zerocopy {
            None => Source::Copy,
            Some(crate::proto::ZeroCopy::Sendfile) => {
                Source::Sendfile(tcpwise_tcp::zerocopy_source(ZC_FILE, 0x5a)?, 0)
            }
            Some(crate::proto::ZeroCopy::Msg) => {
                tcpwise_tcp::set_so_zerocopy(s.as_raw_fd())?;
                Source::Msg(pinned_chunk(), Default::default())
            }
        })
    }

    /// Completions waiting on the error queue, counted.
    pub(crate) fn reap(&mut self, s: &TcpStream) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        if let Source::Msg(_, count) = self {
            let r = tcpwise_tcp::reap_zerocopy(s.as_raw_fd())?;
            count.completed += r.completed;
            count.copied += r.copied;
        }
        Ok(())
    }

    pub(crate) fn count(&self) -> Option<crate::proto::ZeroCopyCount> {
        match self {
            Source::Msg(_, c) => Some(*c),
            _ => None,
        }
    }

    /// One write of up to `want` bytes.
    pub(crate) async fn send(
        &mut self,
        s: &mut TcpStream,
        chunk: &[u8],
        want: usize,
    ) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let fd = s.as_raw_fd();
        loop {
            match self {
                Source::Copy => return s.write(&chunk[..want]).await,
                Source::Sendfile(src, offset) => {
                    s.writable().await?;
                    if *offset as usize >= ZC_FILE {
                        *offset = 0;
                    }
                    let n = want.min(ZC_FILE - *offset as usize);
                    match s.try_io(tokio::io::Interest::WRITABLE, || {
                        tcpwise_tcp::sendfile(fd, src.as_raw_fd(), offset, n)
                    }) {
                        Ok(n) => return Ok(n),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        Err(e) => return Err(e),
                    }
                }
                Source::Msg(buf, count) => {
                    s.writable().await?;
                    let b: &'static [u8] = &buf[..want];
                    match s.try_io(tokio::io::Interest::WRITABLE, || {
                        tcpwise_tcp::send_zerocopy(fd, b)
                    }) {
                        // Completions are reaped per interval and when
                        // the error queue fills (ENOBUFS), not per send:
                        // a recvmsg per write would be the cost measured.
                        Ok(n) => {
                            count.sends += 1;
                            return Ok(n);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        // Too many sends await their completions (the
                        // socket's optmem): reap, give the ACKs a moment.
                        Err(e) if tcpwise_tcp::is_enobufs(&e) => {
                            self.reap(s)?;
                            tokio::time::sleep(Duration::from_micros(200)).await;
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
}

/// Sends until the limit, sampling every interval, its writes held to
/// `held` bits/s on average (`-b`, [`crate::throttle`]); returns the last
/// sample.
pub async fn run_sender(
    mut s: TcpStream,
    limit: Limit,
    interval: Duration,
    out: &UnboundedSender<Sample>,
    (zerocopy, held): (Option<crate::proto::ZeroCopy>, Option<u64>),
) -> Result<Sample, PerfError> {
    // Keep little unsent data in the socket, so the transfer ends close to
    // -t instead of draining a multi-megabyte send buffer afterwards (iperf3
    // stops within tens of ms of -t); in-flight data is not limited by it.
    if matches!(limit, Limit::Time(_)) {
        let _ = socket2::SockRef::from(&s).set_tcp_notsent_lowat(NOTSENT_LOWAT);
    }
    let chunk = vec![0x5au8; CHUNK];
    // -Z: the same bytes from a memfd by sendfile, or from a pinned buffer
    // by MSG_ZEROCOPY: no copy through here.
    let mut source = Source::new(&s, zerocopy)?;
    let start = Instant::now();
    let throttle = held.and_then(|bps| crate::throttle::Throttle::new(bps, start));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    let (mut bytes, mut index) = (0u64, 0u32);
    loop {
        let want = match limit {
            Limit::Time(d) if start.elapsed() >= d => break,
            Limit::Bytes(b) if bytes >= b => break,
            Limit::Bytes(b) => ((b - bytes) as usize).min(CHUNK),
            Limit::Time(_) => CHUNK,
        };
        // A held write waits no later than the test's end.
        let cap = match limit {
            Limit::Time(d) => Some(d.saturating_sub(start.elapsed())),
            Limit::Bytes(_) => None,
        };
        let sent = bytes;
        let write = async {
            crate::throttle::hold(throttle, sent, cap).await;
            if matches!(limit, Limit::Time(d) if start.elapsed() >= d) {
                return Ok(0);
            }
            source.send(&mut s, &chunk, want).await
        };
        tokio::select! {
            r = write => bytes += r? as u64,
            _ = tick.tick() => {
                index += 1;
                source.reap(&s)?;
                let mut smp = sample(index, start, bytes, &s);
                smp.zerocopy = source.count();
                let _ = out.send(smp);
            }
        }
    }
    s.shutdown().await?;
    // Wait for the receiver to close so the last sample sees the tail acknowledged.
    let mut sink = [0u8; 64];
    let _ = tokio::time::timeout(Duration::from_secs(30), s.read(&mut sink)).await;
    source.reap(&s)?;
    let mut last = sample(index + 1, start, bytes, &s);
    last.zerocopy = source.count();
    Ok(last)
}

/// Receives until EOF, sampling every interval; returns the last sample.
/// With a time limit, only bytes that arrive within it (from the first
/// byte) count, as iperf3 counts: what was in flight when the sender
/// stopped is drained but not reported, so the summary lasts -t.
pub async fn run_receiver(
    s: TcpStream,
    sizer: ReadSizer,
    interval: Duration,
    limit: Limit,
    out: &UnboundedSender<Sample>,
) -> Result<Sample, PerfError> {
    let mut r = SizedRead::new(s, sizer);
    let mut buf = vec![0u8; sizer.max_size().max(CHUNK)];
    // The clock starts at the first byte, so the receiver's intervals line
    // up with the sender's (one one-way delay later) instead of counting
    // the handshake's round trip as idle time.
    let first = r.read(&mut buf).await?;
    let start = Instant::now();
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    let (mut bytes, mut index, mut last_byte) = (first as u64, 0u32, 0.0f64);
    let count_for = match limit {
        Limit::Time(d) => d.as_secs_f64(),
        Limit::Bytes(_) => f64::INFINITY,
    };
    let mut open = first > 0;
    // Set once the report ends: what was counted, at the last counted byte.
    let mut reported: Option<(u32, u64, f64)> = None;
    while open {
        let counting = reported.is_none();
        tokio::select! {
            n = r.read(&mut buf) => {
                let n = n?;
                open = n > 0;
                let now = start.elapsed().as_secs_f64();
                if counting && now > count_for {
                    // The report ends here; the rest is drained unreported.
                    reported = Some((index + 1, bytes, last_byte));
                } else if counting {
                    bytes += n as u64;
                    if open {
                        last_byte = now;
                    }
                }
            }
            _ = tick.tick(), if counting => {
                index += 1;
                let _ = out.send(sample(index, start, bytes, r.get_ref()));
            }
        }
    }
    let (index, bytes, at) = reported.unwrap_or((index + 1, bytes, last_byte));
    let mut last = sample(index, start, bytes, r.get_ref());
    last.t = at.max(1e-9);
    Ok(last)
}
