//! The deterministic body the server sends: byte `i` of every response is
//! `pattern_byte(i)`, so clients can check bodies without storing them.

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Byte `i` of every `/bytes/N` body.
pub fn pattern_byte(i: u64) -> u8 {
    (i.wrapping_mul(31).wrapping_add(7) % 251) as u8
}

/// Fills `buf` with the pattern starting at offset `at`.
pub fn fill(buf: &mut [u8], at: u64) {
    for (k, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(at + k as u64);
    }
}

/// A lazily generated pattern body, sized (Content-Length) or chunked.
#[derive(Debug)]
pub struct PatternBody {
    offset: u64,
    len: u64,
    sized: bool,
}

/// Frame size of generated bodies.
pub const FRAME: u64 = 64 * 1024;

impl PatternBody {
    /// `len` bytes; `sized` gives a Content-Length, otherwise chunked.
    pub fn new(len: u64, sized: bool) -> PatternBody {
        PatternBody {
            offset: 0,
            len,
            sized,
        }
    }
}

impl Body for PatternBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.offset >= self.len {
            return Poll::Ready(None);
        }
        let n = FRAME.min(self.len - self.offset);
        let mut v = vec![0u8; n as usize];
        fill(&mut v, self.offset);
        self.offset += n;
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(v)))))
    }

    fn is_end_stream(&self) -> bool {
        self.offset >= self.len
    }

    fn size_hint(&self) -> SizeHint {
        if self.sized {
            SizeHint::with_exact(self.len - self.offset)
        } else {
            SizeHint::default()
        }
    }
}
