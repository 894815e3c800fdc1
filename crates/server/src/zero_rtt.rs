//! The server's TLS stream, written here (not tokio-rustls's acceptor)
//! for one reason: 0-RTT only saves a round trip if the request that came
//! as early data is answered *before* the handshake completes.
//! tokio-rustls's acceptor finishes the handshake first (the client's
//! Finished arrives a round trip after its early data), so an answer to
//! early data would leave no sooner than an answer to a full handshake.
//! Here reads yield early data while the handshake is still in progress,
//! and with rustls's `send_half_rtt_data` the answer leaves at once.
//!
//! The danger is replay (RFC 8446 §8, RFC 8470): early data can be sent
//! again by anyone who saw it, and such a copy never completes its
//! handshake. [`Handshake::complete`] is what the HTTP layers ask before
//! answering: a request answered while it is `false` came as early data,
//! and [`super::routes::too_early`] refuses the unsafe methods there (425).
//! rustls accepts early data only on a single-use ticket from its session
//! cache, so a replayed ClientHello is refused early data by the server
//! that saw it first.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Whether a connection's handshake has completed, shared with the
/// HTTP layer that answers its requests.
#[derive(Debug, Clone, Default)]
pub struct Handshake(Arc<AtomicBool>);

impl Handshake {
    /// A connection whose handshake is complete (plain TCP, or TLS done).
    pub fn done() -> Handshake {
        Handshake(Arc::new(AtomicBool::new(true)))
    }

    /// `false` while the client may still be a replay: what is read now is
    /// early data.
    pub fn complete(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// A TLS 1.3 (or 1.2) server connection over `IO`.
pub struct TlsStream<IO> {
    io: IO,
    conn: rustls::ServerConnection,
    eof: bool,
    handshake: Handshake,
    /// Early-data bytes handed to the reader.
    early: u64,
}

/// Sync `Read`/`Write` over an async `IO` for rustls: `Pending` is
/// `WouldBlock` (the waker is registered by the poll underneath).
struct SyncIo<'a, 'b, IO> {
    io: &'a mut IO,
    cx: &'a mut Context<'b>,
}

impl<IO: AsyncRead + Unpin> Read for SyncIo<'_, '_, IO> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rb = ReadBuf::new(buf);
        match Pin::new(&mut *self.io).poll_read(self.cx, &mut rb) {
            Poll::Ready(Ok(())) => Ok(rb.filled().len()),
            Poll::Ready(Err(e)) => Err(e),
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl<IO: AsyncWrite + Unpin> Write for SyncIo<'_, '_, IO> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match Pin::new(&mut *self.io).poll_write(self.cx, buf) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match Pin::new(&mut *self.io).poll_write_vectored(self.cx, bufs) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match Pin::new(&mut *self.io).poll_flush(self.cx) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl<IO: AsyncRead + AsyncWrite + Unpin> TlsStream<IO> {
    /// Reads the ClientHello and sends the server's first flight: then
    /// the protocol (ALPN) is known and early data, if accepted, can be
    /// read. The rest of the handshake happens as the stream is used.
    pub async fn accept(io: IO, config: Arc<rustls::ServerConfig>) -> io::Result<TlsStream<IO>> {
        let conn = rustls::ServerConnection::new(config).map_err(tls_error)?;
        let mut s = TlsStream {
            io,
            conn,
            eof: false,
            handshake: Handshake::default(),
            early: 0,
        };
        std::future::poll_fn(|cx| s.poll_first_flight(cx)).await?;
        Ok(s)
    }

    fn poll_first_flight(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_flush_tls(cx))?;
            // The server has chosen its suite once the ClientHello is in.
            if !self.conn.is_handshaking() || self.conn.negotiated_cipher_suite().is_some() {
                self.note_handshake();
                return self.poll_flush_tls(cx);
            }
            if self.eof {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "closed during the TLS handshake",
                )));
            }
            ready!(self.poll_read_tls(cx))?;
        }
    }

    /// The negotiated application protocol (ALPN).
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.conn.alpn_protocol()
    }

    /// The connection's handshake state, for the HTTP layer.
    pub fn handshake(&self) -> Handshake {
        self.handshake.clone()
    }

    /// Bounds rustls's own send buffer (see `TLS_RECORD`).
    pub fn set_buffer_limit(&mut self, n: Option<usize>) {
        self.conn.set_buffer_limit(n);
    }

    fn note_handshake(&mut self) {
        if !self.conn.is_handshaking() {
            self.handshake.0.store(true, Ordering::Release);
        }
    }

    /// Reads TLS records from the socket and processes them. `Ready(Ok)`:
    /// something was read, or the peer closed (`self.eof`).
    fn poll_read_tls(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let n = match self.conn.read_tls(&mut SyncIo {
            io: &mut self.io,
            cx,
        }) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
            Err(e) => return Poll::Ready(Err(e)),
        };
        if n == 0 {
            self.eof = true;
        }
        if let Err(e) = self.conn.process_new_packets() {
            // Send the alert that says why, best effort.
            let _ = self.poll_flush_tls(cx);
            return Poll::Ready(Err(tls_error(e)));
        }
        self.note_handshake();
        Poll::Ready(Ok(()))
    }

    /// Writes every TLS record rustls has queued. `Pending` while the
    /// socket is full.
    fn poll_flush_tls(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut SyncIo {
                io: &mut self.io,
                cx,
            }) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for TlsStream<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        loop {
            let dst = buf.initialize_unfilled();
            // Early data first, whenever it is read: it came before any
            // data after the handshake (rustls keeps it apart until read).
            if let Some(mut early) = me.conn.early_data() {
                let n = early.read(dst)?;
                if n > 0 {
                    me.early += n as u64;
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
            }
            match me.conn.reader().read(dst) {
                Ok(n) => {
                    // 0: the peer's close_notify, a clean end.
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // Closed without close_notify: an end all the same for
                // HTTP, whose framing says whether anything is missing.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Poll::Ready(Ok(())),
                Err(e) => return Poll::Ready(Err(e)),
            }
            if me.eof {
                return Poll::Ready(Ok(()));
            }
            // Handshake records the reads produced go out before we wait.
            if let Poll::Ready(Err(e)) = me.poll_flush_tls(cx) {
                return Poll::Ready(Err(e));
            }
            ready!(me.poll_read_tls(cx))?;
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for TlsStream<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        loop {
            let n = me.conn.writer().write(data)?;
            let flushed = me.poll_flush_tls(cx)?;
            if n > 0 || data.is_empty() {
                return Poll::Ready(Ok(n));
            }
            // rustls's buffer is full: wait for the socket to take some,
            // or, before the handshake lets anything leave, for the
            // handshake to move on.
            ready!(flushed);
            if !me.conn.is_handshaking() || me.eof {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            ready!(me.poll_read_tls(cx))?;
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        me.conn.writer().flush()?;
        ready!(me.poll_flush_tls(cx))?;
        Pin::new(&mut me.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        me.conn.send_close_notify();
        ready!(me.poll_flush_tls(cx))?;
        Pin::new(&mut me.io).poll_shutdown(cx)
    }
}
