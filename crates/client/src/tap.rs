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
    /// What the TLS handshake did, learnt when it completes.
    pub(super) tls: TlsFacts,
    /// An HTTP/2 connection's frames, counted for floods.
    pub(super) h2: Option<crate::h2frames::Frames>,
    /// The frames counted when a flood stopped the connection.
    pub(super) flood: Option<u32>,
    /// When the armed tap read the response's first bytes: curl's
    /// `time_starttransfer` instant (hyper parses the head after it).
    pub(super) first_read: Option<std::time::Instant>,
}

/// A TLS connection's handshake, as it becomes known: with early data
/// the handshake completes only as the response arrives.
#[derive(Default, Debug, Clone)]
pub(super) struct TlsFacts {
    /// The connection is TLS.
    pub(super) on: bool,
    /// The handshake is complete and the fields below are final.
    pub(super) done: bool,
    pub(super) resumed: bool,
    /// Bytes written while the handshake was in progress: early data.
    pub(super) early_sent: u64,
    pub(super) early_accepted: bool,
    /// Early data was possible when the connection opened: nothing has
    /// been sent yet, not even the ClientHello (see `poll_flush`).
    pub(super) early_mode: bool,
}

impl TlsFacts {
    /// For a handshake that has completed (or is in early data) on `c`.
    pub(super) fn of(c: &rustls::ClientConnection) -> TlsFacts {
        let mut f = TlsFacts {
            on: true,
            ..TlsFacts::default()
        };
        f.early_mode = c.is_handshaking();
        f.settle(c);
        f
    }

    /// Takes the final values once the handshake is complete.
    fn settle(&mut self, c: &rustls::ClientConnection) {
        if !self.done && !c.is_handshaking() {
            self.done = true;
            self.resumed = c.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
            self.early_accepted = c.is_early_data_accepted();
        }
    }

    /// The report (`None`: not TLS).
    pub(super) fn facts(&self) -> Option<TlsReport> {
        let early = self.early_sent as i64;
        self.on.then(|| TlsReport {
            resumed: self.resumed,
            early_data: if self.early_accepted { early } else { -early },
        })
    }
}

pub(super) const TAP_MAX: usize = 64 * 1024;

/// A transport with a [`TapState`] on its reads.
pub(super) struct Tapped<T> {
    pub(super) inner: T,
    pub(super) tap: Arc<Mutex<TapState>>,
}

impl Tapped<Transport> {
    fn tls(&self) -> Option<&rustls::ClientConnection> {
        match &self.inner {
            Transport::Tls(s) => Some(s.get_ref().1),
            _ => None,
        }
    }

    /// Counts what a write sent as early data (`was`: the handshake was
    /// in progress before it).
    fn count_early(&self, was: bool, r: &Poll<std::io::Result<usize>>) {
        if let (true, Poll::Ready(Ok(n)), Some(c)) = (was, r, self.tls())
            && c.is_handshaking()
        {
            self.tap.lock().expect("lock").tls.early_sent += *n as u64;
        }
    }

    fn handshaking(&self) -> bool {
        self.tls().is_some_and(|c| c.is_handshaking())
    }
}

impl AsyncRead for Tapped<Transport> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut me.inner).poll_read(cx, buf);
        let mut t = me.tap.lock().expect("lock");
        if let (false, Some(c)) = (t.tls.done, me.tls()) {
            t.tls.settle(c);
        }
        if let (Some(f), Poll::Ready(Ok(()))) = (t.h2.as_mut(), &r)
            && let Err(n) = f.feed(&buf.filled()[before..])
        {
            t.flood = Some(n);
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "an HTTP/2 control-frame flood",
            )));
        }
        if t.armed && buf.filled().len() > before {
            if t.buf.is_empty() {
                t.first_read = Some(std::time::Instant::now());
            }
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

impl AsyncWrite for Tapped<Transport> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let me = self.get_mut();
        let was = me.handshaking();
        let r = Pin::new(&mut me.inner).poll_write(cx, data);
        me.count_early(was, &r);
        r
    }
    // Vectored writes pass through, so hyper queues a request body's
    // frames into one writev instead of copying them into its buffer.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let me = self.get_mut();
        let was = me.handshaking();
        let r = Pin::new(&mut me.inner).poll_write_vectored(cx, bufs);
        me.count_early(was, &r);
        r
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        // A flush of a connection in early data that has written nothing
        // yet would send the ClientHello alone (hyper flushes as its
        // connection task starts, before the request is queued): the
        // request would then miss the SYN under TCP Fast Open, costing a
        // round trip. The first write's flush sends both.
        let idle = {
            let t = &me.tap.lock().expect("lock").tls;
            t.early_mode && t.early_sent == 0
        };
        if idle && me.handshaking() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut me.inner).poll_flush(cx)
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
