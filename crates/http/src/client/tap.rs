//! The transport under hyper, and a tap on its reads that keeps the
//! response head as it came off the wire (hyper normalises version,
//! reason phrase and header case; `-i`/`-v` print them as received).

use super::*;

/// Plain or TLS transport.
pub(super) enum Transport {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    /// `--unix-socket`: plain HTTP over a Unix domain socket.
    Unix(tokio::net::UnixStream),
}

impl AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Transport::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_write(cx, data),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
            Transport::Unix(s) => Pin::new(s).poll_write(cx, data),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            Transport::Unix(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Plain(s) => s.is_write_vectored(),
            Transport::Tls(s) => s.is_write_vectored(),
            Transport::Unix(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Transport::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Transport::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// The response head as it came off the wire (HTTP/1.x): armed before a
/// request is sent, it keeps the bytes read until a final (non-1xx) head
/// is complete. At most [`TAP_MAX`] bytes.
#[derive(Default)]
pub(super) struct TapState {
    pub(super) armed: bool,
    pub(super) buf: Vec<u8>,
}

pub(super) const TAP_MAX: usize = 64 * 1024;

/// A transport with a [`TapState`] on its reads.
pub(super) struct Tapped<T> {
    pub(super) inner: T,
    pub(super) tap: Arc<Mutex<TapState>>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Tapped<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut me.inner).poll_read(cx, buf);
        let mut t = me.tap.lock().expect("lock");
        if t.armed && buf.filled().len() > before {
            let room = TAP_MAX.saturating_sub(t.buf.len());
            let got = &buf.filled()[before..];
            t.buf.extend_from_slice(&got[..got.len().min(room)]);
            if final_head(&t.buf).is_some() || t.buf.len() >= TAP_MAX {
                t.armed = false;
            }
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tapped<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }
    // Vectored writes pass through, so hyper queues a request body's
    // frames into one writev instead of copying them into its buffer.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A raw HTTP/1.x response head as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawHead {
    /// `HTTP/1.0` or `HTTP/1.1`.
    pub version: String,
    /// Status code.
    pub status: u16,
    /// Reason phrase, as written.
    pub reason: String,
    /// Headers in order and in the server's case.
    pub headers: Vec<(String, String)>,
    /// Bytes of the head.
    pub len: usize,
}

/// The first final (non-1xx) response head in `buf`, skipping interim
/// ones, or `None` when it is not complete yet.
pub fn final_head(mut buf: &[u8]) -> Option<RawHead> {
    loop {
        let mut hs = [httparse::EMPTY_HEADER; 128];
        let mut r = httparse::Response::new(&mut hs);
        let n = match r.parse(buf) {
            Ok(httparse::Status::Complete(n)) => n,
            _ => return None,
        };
        let status = r.code?;
        if (100..200).contains(&status) && status != 101 {
            buf = &buf[n..];
            continue;
        }
        return Some(RawHead {
            version: format!("HTTP/1.{}", r.version?),
            status,
            reason: r.reason.unwrap_or("").to_string(),
            headers: r
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_string(),
                        String::from_utf8_lossy(h.value).to_string(),
                    )
                })
                .collect(),
            len: n,
        });
    }
}
