//! How much to ask for on each socket read.
//!
//! Chromium's field report: Windows delayed completing a read that could
//! be only partly filled, by 40-50 ms, while a read the data filled
//! completed at once. Its fix, read slow start: the first read asks for
//! 1 KiB and each read that fills its request doubles the next one, up to
//! a cap, so a response's first bytes are handed over at once and large
//! transfers still get large reads. Linux has no such completion delay;
//! the lab measures what the policy does here instead of assuming it.
//!
//! [`ReadSizer`] is the sans-IO policy, in the style of hyper's
//! `ReadStrategy`; [`SizedRead`] applies it to any tokio `AsyncRead` (and
//! passes writes through), so it works under hyper via `TokioIo`.

use serde::{Deserialize, Serialize};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Chromium's first read size.
pub const SLOW_START_INITIAL: usize = 1024;
/// Default cap of read slow start (Chromium's usual large read).
pub const SLOW_START_MAX: usize = 32 * 1024;
/// hyper's initial read size, used to start `Adaptive`.
pub const ADAPTIVE_INITIAL: usize = 8 * 1024;

/// A read-size policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum ReadSizer {
    /// Start at `next`, double after every read that fills its request, up to `max`.
    SlowStart {
        /// The next read's size.
        next: usize,
        /// The cap.
        max: usize,
    },
    /// Always the same size.
    Fixed {
        /// The size.
        size: usize,
    },
    /// Like hyper's adaptive strategy: double on a full read, halve after
    /// two consecutive reads under half the current size.
    Adaptive {
        /// The next read's size.
        next: usize,
        /// Lower bound.
        min: usize,
        /// Upper bound.
        max: usize,
        /// Whether the previous read was small.
        small_before: bool,
    },
}

/// A read-sizing policy that could not be parsed.
#[derive(Debug, thiserror::Error)]
pub enum ReadSizingError {
    /// Not one of the policies.
    #[error("unknown read sizing '{0}': use slow-start[:MAX], fixed:N or adaptive[:MAX]")]
    Unknown(String),
    /// `fixed` without a size.
    #[error("fixed read sizing needs a size: fixed:32KiB")]
    NeedsSize,
    /// The size is not a size.
    #[error("read size: {0}")]
    Size(#[from] tcpwise_units::UnitError),
    /// The size is out of range.
    #[error("read size '{0}' must be between 1 byte and 64MiB")]
    Range(String),
    /// A policy's state is not one [`ReadSizer`]'s constructors make (a
    /// size of 0 or past [`MAX_READ`], a next size past the cap, a floor
    /// above it): what [`ReadSizer::check`] refuses from the network.
    #[error("read sizing {0}: sizes must be 1 B to 64MiB with min <= next <= max")]
    State(String),
}

/// The largest read size a policy may ask for: its buffer's memory.
pub const MAX_READ: usize = 64 * 1024 * 1024;

impl std::str::FromStr for ReadSizer {
    type Err = ReadSizingError;

    /// Parses `slow-start`, `slow-start:MAX`, `fixed:N`, `adaptive`,
    /// `adaptive:MAX` (sizes as in `256KB`, `32KiB`, `4096`).
    fn from_str(s: &str) -> Result<ReadSizer, ReadSizingError> {
        let (kind, arg) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        let size = |a: Option<&str>, default: usize| -> Result<usize, ReadSizingError> {
            let Some(a) = a else { return Ok(default) };
            let n = tcpwise_units::parse_size(a)?;
            if n == 0 || n > MAX_READ as u64 {
                return Err(ReadSizingError::Range(a.to_string()));
            }
            Ok(n as usize)
        };
        match kind {
            "slow-start" => Ok(ReadSizer::slow_start(size(arg, SLOW_START_MAX)?)),
            "adaptive" => Ok(ReadSizer::adaptive(size(arg, 512 * 1024)?)),
            "fixed" if arg.is_some() => Ok(ReadSizer::fixed(size(arg, 0)?)),
            "fixed" => Err(ReadSizingError::NeedsSize),
            _ => Err(ReadSizingError::Unknown(s.to_string())),
        }
    }
}

/// Written as a user would type it (`slow-start:32KiB`), not as its state.
impl std::fmt::Display for ReadSizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = |n: usize| tcpwise_units::fmt_bytes(n as u64);
        match *self {
            ReadSizer::SlowStart { max, .. } => write!(f, "slow-start:{}", b(max)),
            ReadSizer::Fixed { size } => write!(f, "fixed:{}", b(size)),
            ReadSizer::Adaptive { max, .. } => write!(f, "adaptive:{}", b(max)),
        }
    }
}

impl Default for ReadSizer {
    fn default() -> Self {
        ReadSizer::slow_start(SLOW_START_MAX)
    }
}

impl ReadSizer {
    /// Chromium's read slow start: 1 KiB, doubling up to `max`.
    pub fn slow_start(max: usize) -> ReadSizer {
        ReadSizer::SlowStart {
            next: SLOW_START_INITIAL.min(max.max(1)),
            max: max.max(1),
        }
    }

    /// Fixed reads of `size` bytes.
    pub fn fixed(size: usize) -> ReadSizer {
        ReadSizer::Fixed { size: size.max(1) }
    }

    /// Adaptive reads between 1 KiB and `max`.
    pub fn adaptive(max: usize) -> ReadSizer {
        ReadSizer::Adaptive {
            next: ADAPTIVE_INITIAL.min(max),
            min: SLOW_START_INITIAL.min(max),
            max,
            small_before: false,
        }
    }

    /// Whether this state is one the constructors make: every size 1 B to
    /// [`MAX_READ`], `min <= next <= max`. A policy read from a peer (a
    /// perf header) is checked before it sizes a buffer.
    pub fn check(&self) -> Result<(), ReadSizingError> {
        let ok = |n: usize| (1..=MAX_READ).contains(&n);
        let fine = match *self {
            ReadSizer::SlowStart { next, max } => ok(next) && ok(max) && next <= max,
            ReadSizer::Fixed { size } => ok(size),
            ReadSizer::Adaptive { next, min, max, .. } => {
                ok(next) && ok(min) && ok(max) && min <= next && next <= max
            }
        };
        if fine {
            Ok(())
        } else {
            Err(ReadSizingError::State(format!("{self:?}")))
        }
    }

    /// Bytes to ask for on the next read.
    pub fn next_size(&self) -> usize {
        match *self {
            ReadSizer::SlowStart { next, .. } => next,
            ReadSizer::Fixed { size } => size,
            ReadSizer::Adaptive { next, .. } => next,
        }
    }

    /// Largest size this policy will ever ask for (its buffer memory).
    pub fn max_size(&self) -> usize {
        match *self {
            ReadSizer::SlowStart { max, .. } => max,
            ReadSizer::Fixed { size } => size,
            ReadSizer::Adaptive { max, .. } => max,
        }
    }

    /// A read asked for `requested` bytes and got `got`.
    pub fn record(&mut self, requested: usize, got: usize) {
        match self {
            ReadSizer::SlowStart { next, max } => {
                if got >= requested && requested >= *next {
                    *next = (*next * 2).min(*max);
                }
            }
            ReadSizer::Fixed { .. } => {}
            ReadSizer::Adaptive {
                next,
                min,
                max,
                small_before,
            } => {
                if got >= *next {
                    *next = (*next * 2).min(*max);
                    *small_before = false;
                } else if got < *next / 2 {
                    if *small_before {
                        *next = (*next / 2).max(*min);
                        *small_before = false;
                    } else {
                        *small_before = true;
                    }
                } else {
                    *small_before = false;
                }
            }
        }
    }
}

/// Largest number of reads [`SizedRead`] remembers for inspection.
pub const HISTORY: usize = 256;

/// An `AsyncRead` that asks its inner reader for at most the sizer's next
/// size on every read. Writes pass through untouched.
#[derive(Debug)]
pub struct SizedRead<R> {
    inner: R,
    sizer: ReadSizer,
    history: Vec<(usize, usize)>,
    bytes: u64,
    peak: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl<R> SizedRead<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, sizer: ReadSizer) -> SizedRead<R> {
        SizedRead {
            inner,
            sizer,
            history: Vec::new(),
            bytes: 0,
            peak: Default::default(),
        }
    }

    /// A handle on the largest read size asked for so far: the read
    /// buffer this connection needed. Readable after the reader moved into
    /// a connection task.
    pub fn peak_handle(&self) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
        self.peak.clone()
    }

    /// The first [`HISTORY`] reads as (requested, got).
    pub fn history(&self) -> &[(usize, usize)] {
        &self.history
    }

    /// The policy's current state.
    pub fn sizer(&self) -> &ReadSizer {
        &self.sizer
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The wrapped reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Unwraps.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for SizedRead<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let want = this.sizer.next_size().min(buf.remaining());
        if want == 0 {
            return Poll::Ready(Ok(()));
        }
        this.peak
            .fetch_max(want, std::sync::atomic::Ordering::Relaxed);
        let unfilled = buf.initialize_unfilled_to(want);
        let mut limited = ReadBuf::new(unfilled);
        match Pin::new(&mut this.inner).poll_read(cx, &mut limited) {
            Poll::Ready(Ok(())) => {
                let n = limited.filled().len();
                buf.advance(n);
                if n > 0 {
                    this.sizer.record(want, n);
                    this.bytes += n as u64;
                    if this.history.len() < HISTORY {
                        this.history.push((want, n));
                    }
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<R: AsyncWrite + Unpin> AsyncWrite for SizedRead<R> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_refuses_states_no_constructor_makes() {
        for ok in [
            ReadSizer::default(),
            ReadSizer::fixed(MAX_READ),
            ReadSizer::adaptive(1),
            ReadSizer::slow_start(1),
        ] {
            assert!(ok.check().is_ok(), "{ok:?}");
        }
        let bad = [
            ReadSizer::Fixed { size: 0 },
            ReadSizer::Fixed { size: MAX_READ + 1 },
            ReadSizer::SlowStart {
                next: 2048,
                max: 1024,
            },
            ReadSizer::SlowStart { next: 0, max: 1024 },
            ReadSizer::Adaptive {
                next: 8,
                min: 16,
                max: 32,
                small_before: false,
            },
            ReadSizer::Adaptive {
                next: 8,
                min: 1,
                max: usize::MAX,
                small_before: false,
            },
        ];
        for b in bad {
            let e = b.check().unwrap_err().to_string();
            assert!(e.contains("64MiB"), "{b:?}: {e}");
        }
    }

    #[test]
    fn slow_start_doubles_only_on_full_reads() {
        let mut s = ReadSizer::slow_start(8192);
        assert_eq!(s.next_size(), 1024);
        s.record(1024, 1024);
        assert_eq!(s.next_size(), 2048);
        s.record(2048, 100); // partial: no growth
        assert_eq!(s.next_size(), 2048);
        s.record(2048, 2048);
        s.record(4096, 4096);
        assert_eq!(s.next_size(), 8192);
        s.record(8192, 8192);
        assert_eq!(s.next_size(), 8192, "capped");
        // A read limited by the caller's buffer does not count as full.
        let mut s = ReadSizer::slow_start(8192);
        s.record(500, 500);
        assert_eq!(s.next_size(), 1024);
    }

    #[test]
    fn adaptive_grows_and_shrinks() {
        let mut a = ReadSizer::adaptive(64 * 1024);
        assert_eq!(a.next_size(), 8192);
        a.record(8192, 8192);
        assert_eq!(a.next_size(), 16384);
        a.record(16384, 100);
        assert_eq!(a.next_size(), 16384, "one small read is not enough");
        a.record(16384, 100);
        assert_eq!(a.next_size(), 8192);
        for _ in 0..20 {
            a.record(1, 1);
        }
        assert_eq!(a.next_size(), 1024, "never below min");
        let mut f = ReadSizer::fixed(4096);
        f.record(4096, 4096);
        assert_eq!(f.next_size(), 4096);
    }

    #[test]
    fn parse_forms() {
        let ps = |s: &str| s.parse::<ReadSizer>();
        assert_eq!(
            ps("slow-start").unwrap(),
            ReadSizer::slow_start(SLOW_START_MAX)
        );
        assert_eq!(ps("fixed:4096").unwrap(), ReadSizer::fixed(4096));
        assert_eq!(ps("fixed:4KiB").unwrap(), ReadSizer::fixed(4096));
        assert_eq!(ps("adaptive:65536").unwrap().max_size(), 65536);
        assert!(ps("fixed").is_err());
        assert!(ps("fixed:0").is_err());
        assert!(ps("huge").is_err());
        for s in ["slow-start:32KiB", "fixed:4KiB", "adaptive:512KiB"] {
            assert_eq!(ps(s).unwrap().to_string(), s, "written as typed");
        }
    }
}
