//! `TCP_NOTSENT_LOWAT`: how much not-yet-sent data a sender lets sit in
//! its own socket. Without it a bulk sender keeps its autotuned send
//! buffer full (megabytes, seconds at a slow path's rate), and anything
//! it writes after that, such as an HTTP/2 response to a second request
//! on the same connection, waits behind all of it: the latency
//! responsiveness tests call a self probe's. With it, a write blocks
//! (poll reports the socket not writable) until the unsent backlog falls
//! under the mark, so the application's own scheduler, not the kernel's
//! FIFO, decides what goes next. Cloudflare runs 16 KB with BBR; Apple's
//! guidance and the responsiveness draft speak of a few milliseconds of
//! the flow's rate, which [`Lowat::Adaptive`] follows from `TCP_INFO`.
//!
//! The policy is sans-IO ([`Lowat::mark`]); [`Lowat::apply`] sets it on a
//! socket and [`LowatStream`] keeps an adaptive mark current as a stream
//! writes.

use crate::TcpInfo;
use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::pin::Pin;
use std::str::FromStr;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The adaptive mark's floor (Cloudflare's fixed value).
pub const ADAPTIVE_MIN: u32 = 16 * 1024;
/// The adaptive mark's ceiling.
pub const ADAPTIVE_MAX: u32 = 4 << 20;
/// How much of the flow's delivery rate the adaptive mark holds.
pub const ADAPTIVE_TIME: Duration = Duration::from_millis(5);
/// How often [`LowatStream`] re-reads `TCP_INFO` for an adaptive mark.
pub const ADAPT_EVERY: Duration = Duration::from_millis(50);

/// A `TCP_NOTSENT_LOWAT` policy (`off`, a size such as `16KiB`, or `auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lowat {
    /// The kernel's default: no mark, the whole send buffer may wait.
    #[default]
    Off,
    /// A fixed mark, bytes.
    Fixed(u32),
    /// [`ADAPTIVE_TIME`] of the flow's delivery rate, within
    /// [`ADAPTIVE_MIN`]..[`ADAPTIVE_MAX`].
    Adaptive,
}

impl Lowat {
    /// The mark for a flow whose kernel state is `info` (`None`: leave
    /// the socket as it is).
    pub fn mark(&self, info: Option<&TcpInfo>) -> Option<u32> {
        match self {
            Lowat::Off => None,
            Lowat::Fixed(n) => Some(*n),
            Lowat::Adaptive => {
                let rate = info.and_then(|i| i.delivery_rate).unwrap_or(0) as f64;
                let bytes = rate * ADAPTIVE_TIME.as_secs_f64();
                Some((bytes as u64).clamp(ADAPTIVE_MIN as u64, ADAPTIVE_MAX as u64) as u32)
            }
        }
    }

    /// The most a user-space sender should buffer per stream above the
    /// socket (an HTTP/2 server's send buffer, 400 KB by default in hyper:
    /// the same queue one layer up): the mark, or for an adaptive one its
    /// floor; `None` (off): the library's default.
    pub fn stream_buffer(&self) -> Option<usize> {
        match self {
            Lowat::Off => None,
            Lowat::Fixed(n) => Some((*n as usize).max(1024)),
            Lowat::Adaptive => Some(ADAPTIVE_MIN as usize),
        }
    }

    /// Sets the mark on `sock` (an adaptive one from its current state);
    /// returns what was set.
    pub fn apply(&self, sock: &(impl AsFd + AsRawFd)) -> io::Result<Option<u32>> {
        let Some(mark) = self.mark(TcpInfo::of(sock).as_ref()) else {
            return Ok(None);
        };
        socket2::SockRef::from(sock).set_tcp_notsent_lowat(mark)?;
        Ok(Some(mark))
    }
}

/// A `--notsent-lowat` value that is none of off, auto and a size.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LowatError {
    /// Not a size.
    #[error("'{0}' is not off, auto or a size (16KiB, 131072)")]
    NotASize(String),
    /// A size the socket option cannot hold.
    #[error("'{0}' is over 4 GiB")]
    TooLarge(String),
}

impl FromStr for Lowat {
    type Err = LowatError;
    fn from_str(s: &str) -> Result<Lowat, LowatError> {
        match s.trim() {
            "off" => Ok(Lowat::Off),
            "auto" => Ok(Lowat::Adaptive),
            other => {
                let n = tcpwise_units::parse_size(other)
                    .map_err(|_| LowatError::NotASize(s.to_string()))?;
                u32::try_from(n)
                    .map(Lowat::Fixed)
                    .map_err(|_| LowatError::TooLarge(s.to_string()))
            }
        }
    }
}

impl fmt::Display for Lowat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lowat::Off => f.write_str("off"),
            Lowat::Fixed(n) => f.write_str(&tcpwise_units::fmt_bytes(*n as u64)),
            Lowat::Adaptive => f.write_str("auto"),
        }
    }
}

/// A stream that keeps an adaptive mark current: before a write, at most
/// every [`ADAPT_EVERY`] and only once a mark's worth has been written
/// since the mark was last set, the mark is set again from `TCP_INFO`.
/// Fixed and off policies cost nothing here (set once by [`Lowat::apply`]).
///
/// Why the bytes too: a mark can only hold back a writer that has more
/// than the mark unsent, so one that wrote less since the mark was set
/// has nothing for a new mark to change. Timed alone, every keep-alive
/// connection re-read `TCP_INFO` and set the mark 20 times a second
/// however little it wrote: at 1,024 connections of small responses,
/// 0.16 `setsockopt` and 0.32 `getsockopt` per request, where at 64
/// connections 0.01 (`perf stat` on `tcpwise serve`, docs/bench.md).
pub struct LowatStream<S> {
    inner: S,
    policy: Lowat,
    next: Instant,
    /// The mark last set (the floor before the first).
    mark: u32,
    /// Bytes written since it was set.
    written: u64,
}

impl<S: AsFd + AsRawFd> LowatStream<S> {
    /// Wraps `inner`, setting the policy's first mark.
    pub fn new(inner: S, policy: Lowat) -> LowatStream<S> {
        let mark = policy.apply(&inner).ok().flatten().unwrap_or(ADAPTIVE_MIN);
        LowatStream {
            inner,
            policy,
            next: Instant::now() + ADAPT_EVERY,
            mark,
            written: 0,
        }
    }

    /// The stream inside.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsRawFd> AsRawFd for LowatStream<S> {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.inner.as_raw_fd()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for LowatStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

/// Whether an adaptive mark is due again: [`ADAPT_EVERY`] since it was
/// set, and at least the mark written since (with this write).
fn adapt_due(now: Instant, next: Instant, written: u64, mark: u32) -> bool {
    now >= next && written >= u64::from(mark)
}

impl<S: AsyncWrite + AsFd + AsRawFd + Unpin> LowatStream<S> {
    fn adapt(&mut self, len: usize) {
        if self.policy != Lowat::Adaptive {
            return;
        }
        let written = self.written + len as u64;
        // The clock only once the bytes are there: most small writes
        // stop at the comparison.
        if written >= u64::from(self.mark) {
            let now = Instant::now();
            if adapt_due(now, self.next, written, self.mark) {
                self.next = now + ADAPT_EVERY;
                self.written = 0;
                if let Ok(Some(m)) = self.policy.apply(&self.inner) {
                    self.mark = m;
                }
            }
        }
    }

    /// Counts what a write took.
    fn wrote(&mut self, r: &Poll<io::Result<usize>>) {
        if let Poll::Ready(Ok(n)) = r {
            self.written += *n as u64;
        }
    }
}

impl<S: AsyncWrite + AsFd + AsRawFd + Unpin> AsyncWrite for LowatStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.adapt(buf.len());
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(&r);
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.adapt(bufs.iter().map(|b| b.len()).sum());
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(&r);
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_print_as_typed() {
        for s in ["off", "auto", "16KiB", "100KB", "1"] {
            assert_eq!(s.parse::<Lowat>().expect(s).to_string(), s);
        }
        assert_eq!("16384".parse::<Lowat>(), Ok(Lowat::Fixed(16384)));
        assert!("fast".parse::<Lowat>().is_err());
        assert!("5GiB".parse::<Lowat>().is_err());
    }

    #[test]
    fn the_mark_is_set_again_only_after_its_time_and_its_bytes() {
        let t0 = Instant::now();
        let later = t0 + ADAPT_EVERY;
        // Its time has come, but a keep-alive connection wrote 1 KB since.
        assert!(!adapt_due(later, later, 1024, ADAPTIVE_MIN));
        // A mark's worth written, not yet its time.
        assert!(!adapt_due(t0, later, 1 << 20, ADAPTIVE_MIN));
        assert!(adapt_due(
            later,
            later,
            u64::from(ADAPTIVE_MIN),
            ADAPTIVE_MIN
        ));
    }

    #[test]
    fn adaptive_mark_is_5ms_of_the_rate_within_bounds() {
        let at = |rate: u64| TcpInfo {
            delivery_rate: Some(rate),
            ..TcpInfo::default()
        };
        // 100 Mbit/s = 12.5 MB/s: 5 ms is 62,500 bytes.
        assert_eq!(Lowat::Adaptive.mark(Some(&at(12_500_000))), Some(62_500));
        // A slow flow gets the floor, a fast one the ceiling.
        assert_eq!(Lowat::Adaptive.mark(Some(&at(1_000))), Some(ADAPTIVE_MIN));
        assert_eq!(
            Lowat::Adaptive.mark(Some(&at(10_000_000_000))),
            Some(ADAPTIVE_MAX)
        );
        assert_eq!(Lowat::Adaptive.mark(None), Some(ADAPTIVE_MIN));
        assert_eq!(Lowat::Fixed(7).mark(None), Some(7));
        assert_eq!(Lowat::Off.mark(Some(&at(1))), None);
    }
}
