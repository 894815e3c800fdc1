//! `tcpwise serve --http3`: HTTP/3 over QUIC on UDP, on the same port
//! number as the TCP listener (as browsers find it from `Alt-Svc`).
//!
//! quinn does QUIC (its sans-IO `quinn-proto` under tokio) and the `h3`
//! crate the HTTP/3 framing and QPACK; neither is our contribution. What
//! a request is answered with is: the same [`super::h2::answer`] that
//! HTTP/2 uses, from the same sans-IO cores (routes, files, ranges,
//! echo), the request body adapted to hyper's `Body` and the response's
//! frames handed to the QUIC stream one at a time, so a 100 GB
//! `/bytes/N` costs no memory here either. TLS is the `--tls` config
//! (certificate options included) with ALPN `h3` and TLS 1.3 only, as
//! QUIC requires; no 0-RTT over QUIC (`--tls-earlydata` is TCP's).

use super::Limits;
use super::files;
use super::h2;
use bytes::{Buf, Bytes};
use futures_util::stream::{FuturesUnordered, StreamExt};
use http_body_util::BodyExt;
use hyper::body::Frame;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tcpwise_outcome::Shutdown;

/// The ALPN protocol id of HTTP/3 (RFC 9114).
pub const ALPN: &[u8] = b"h3";

/// The QUIC server config from the TLS one `--tls` built: the same
/// certificate and session tickets, ALPN `h3`, no early data.
pub fn server_config(tls: &rustls::ServerConfig) -> io::Result<quinn::ServerConfig> {
    let mut c = tls.clone();
    c.alpn_protocols = vec![ALPN.to_vec()];
    c.max_early_data_size = 0;
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from(Arc::new(c))
        .map_err(|e| io::Error::other(format!("the TLS config cannot do QUIC: {e}")))?;
    // The transport is each connection's (`serve` accepts with the
    // peer's path in it).
    Ok(quinn::ServerConfig::with_crypto(Arc::new(quic)))
}

/// A QUIC endpoint and the server config its connections are accepted
/// with (each with its transport set for the peer's path).
pub struct Quic {
    endpoint: quinn::Endpoint,
    config: quinn::ServerConfig,
}

/// A QUIC endpoint on `addr` (UDP), serving with `cfg`, and the
/// datapath it got ([`tcpwise_http::quic`]). Called from inside a tokio
/// runtime.
pub fn bind(
    addr: SocketAddr,
    cfg: quinn::ServerConfig,
) -> io::Result<(Quic, tcpwise_http::quic::Datapath)> {
    let sock = std::net::UdpSocket::bind(addr)?;
    let (endpoint, datapath) = tcpwise_http::quic::endpoint(sock, Some(cfg.clone()))?;
    Ok((
        Quic {
            endpoint,
            config: cfg,
        },
        datapath,
    ))
}

/// Serves HTTP/3 on `endpoint` until `stop` fires, then lets requests in
/// flight finish (at most 10 s) and closes every connection.
pub async fn serve(
    quic: Quic,
    (root, conns): (Option<Arc<files::Root>>, Arc<tokio::sync::Semaphore>),
    lim: Limits,
    stop: Shutdown,
    log: bool,
    book: Option<QuicBook>,
) -> io::Result<()> {
    let Quic { endpoint, config } = quic;
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            inc = endpoint.accept() => {
                let Some(inc) = inc else { break };
                // At --max-conns, a new QUIC connection is refused at once
                // (CONNECTION_REFUSED): unlike TCP's, it has no listen
                // backlog to wait in.
                let Ok(permit) = conns.clone().try_acquire_owned() else {
                    if log {
                        log!("http3 peer={} refused: --max-conns reached", inc.remote_address());
                    }
                    inc.refuse();
                    continue;
                };
                let (root, stop, book) = (root.clone(), stop.clone(), book.clone());
                let mut config = config.clone();
                tasks.spawn(async move {
                    let _permit = permit;
                    let peer = inc.remote_address();
                    config.transport_config(tcpwise_http::quic::transport(peer));
                    if let Err(e) = connection(inc, config, root, lim, stop, book).await && log {
                        log!("http3 peer={peer} ended: {e}");
                    }
                });
                while tasks.try_join_next().is_some() {}
            }
            _ = stop.wait() => break,
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    endpoint.close(H3_NO_ERROR.into(), b"server stopping");
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    Ok(())
}

type Error = Box<dyn std::error::Error + Send + Sync>;

/// One QUIC connection: its requests, polled together by its task.
async fn connection(
    inc: quinn::Incoming,
    config: quinn::ServerConfig,
    root: Option<Arc<files::Root>>,
    lim: Limits,
    stop: Shutdown,
    book: Option<QuicBook>,
) -> Result<(), Error> {
    let conn = tokio::time::timeout(lim.header_timeout, inc.accept_with(Arc::new(config))?)
        .await
        .map_err(|_| "QUIC handshake took longer than --header-timeout")??;
    let _counted = Counted::new(&conn, book.as_ref());
    let mut h3c: h3::server::Connection<_, Bytes> =
        h3::server::Connection::new(h3_quinn::Connection::new(conn.clone())).await?;
    // Every request is a future this connection's task polls, not a task
    // of its own: all of them run on the HTTP/3 thread anyway, and a task
    // a request cost a spawn, a join and a scheduler trip a wake-up
    // (measured in docs/get.md, "HTTP/3's datapath").
    let mut requests = FuturesUnordered::new();
    // HTTP/1.1's connection limits: a first request within
    // --header-timeout, then no more than --idle-timeout with none in
    // flight (QUIC's own idle timeout is the client's to keep alive).
    let (mut last, mut asked) = (tokio::time::Instant::now(), false);
    loop {
        let wait = if asked {
            lim.idle_timeout
        } else {
            lim.header_timeout
        };
        tokio::select! {
            r = h3c.accept() => match r {
                Ok(Some(resolver)) => {
                    let root = root.clone();
                    requests.push(Box::pin(request(resolver, root, lim)));
                    asked = true;
                }
                Ok(None) => return Ok(()),
                // The client closing the connection is how it ends.
                Err(e) if e.is_h3_no_error() => return Ok(()),
                Err(e) => return Err(e.into()),
            },
            Some(_) = requests.next(), if !requests.is_empty() => last = tokio::time::Instant::now(),
            () = tokio::time::sleep_until(last + wait), if requests.is_empty() => {
                conn.close(H3_NO_ERROR.into(), b"idle");
                return Err(if asked {
                    "HTTP/3: idle longer than --idle-timeout"
                } else {
                    "HTTP/3: no request within --header-timeout"
                }
                .into());
            }
            _ = stop.wait() => {
                // GOAWAY: requests already sent are answered (at most
                // 10 s), then the connection closes at once: an idle
                // client would otherwise hold it until its idle timeout.
                h3c.shutdown(0).await?;
                let _ = tokio::time::timeout(Duration::from_secs(10), async {
                    while requests.next().await.is_some() {}
                })
                .await;
                conn.close(H3_NO_ERROR.into(), b"server stopping");
                return Ok(());
            }
        }
    }
}

/// Loss recovery of the QUIC connections this process served, summed
/// from quinn's own statistics (its sender's view: packets it sent and
/// declared lost), as the kernel's `RetransSegs` sums TCP's. Process-wide,
/// like the kernel's per-namespace counters: the lab reads it before and
/// after a page load, beside the server namespace's TCP counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct QuicTotals {
    /// Connections accepted (a handshake that completed).
    pub connections: u64,
    /// Packets sent.
    pub sent_packets: u64,
    /// Packets declared lost (each one's frames sent again as needed).
    pub lost_packets: u64,
}

impl QuicTotals {
    fn add(&mut self, s: &quinn::ConnectionStats) {
        self.sent_packets += s.path.sent_packets;
        self.lost_packets += s.path.lost_packets;
    }
}

/// A book of served QUIC connections: the ended ones' totals and the
/// live ones (read when asked: a connection's statistics grow while it
/// lives). Every connection goes in the process-wide book ([`totals`]);
/// a server given its own ([`super::ServeOptions::quic_book`]) also
/// counts its connections there, so servers running at once in one
/// process (the lab's testbeds) are told apart.
#[derive(Clone, Default)]
pub struct QuicBook(Arc<std::sync::Mutex<Book>>);

#[derive(Default)]
struct Book {
    ended: QuicTotals,
    live: Vec<quinn::Connection>,
}

impl std::fmt::Debug for QuicBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("QuicBook").field(&self.totals()).finish()
    }
}

impl QuicBook {
    fn lock(&self) -> std::sync::MutexGuard<'_, Book> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its connections' loss recovery so far: the ended ones and the live
    /// ones as they stand now.
    pub fn totals(&self) -> QuicTotals {
        let book = self.lock();
        let mut t = book.ended;
        for c in &book.live {
            t.add(&c.stats());
        }
        t
    }
}

static BOOK: std::sync::LazyLock<QuicBook> = std::sync::LazyLock::new(QuicBook::default);

/// The QUIC servers' loss recovery so far, process-wide: ended
/// connections and the live ones as they stand now.
pub fn totals() -> QuicTotals {
    BOOK.totals()
}

/// A served connection in its books while it lives; its final figures
/// move to the ended totals when it ends, however it ends.
struct Counted(quinn::Connection, Vec<QuicBook>);

impl Counted {
    fn new(c: &quinn::Connection, own: Option<&QuicBook>) -> Counted {
        let books: Vec<QuicBook> = std::iter::once(&*BOOK).chain(own).cloned().collect();
        for b in &books {
            let mut book = b.lock();
            book.ended.connections += 1;
            book.live.push(c.clone());
        }
        Counted(c.clone(), books)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let id = self.0.stable_id();
        let stats = self.0.stats();
        for b in &self.1 {
            let mut book = b.lock();
            book.live.retain(|c| c.stable_id() != id);
            book.ended.add(&stats);
        }
    }
}

/// HTTP/3's "no error" code (RFC 9114 8.1), for closing a connection.
const H3_NO_ERROR: u32 = 0x100;

/// One request: its head and body into the shared answer, the answer's
/// head and frames out.
async fn request<C>(
    resolver: h3::server::RequestResolver<C, Bytes>,
    root: Option<Arc<files::Root>>,
    lim: Limits,
) -> Result<(), Error>
where
    C: h3::quic::Connection<Bytes>,
    C::BidiStream: h3::quic::BidiStream<Bytes> + Send + 'static,
    <C::BidiStream as h3::quic::BidiStream<Bytes>>::RecvStream: Send + Unpin + 'static,
{
    // HTTP/1.1's limits, per stream: a head within --header-timeout, and
    // a response whose window stays shut for --idle-timeout is reset (it
    // held a descriptor under --root and a chunk of the body).
    let (req, stream) = tokio::time::timeout(lim.header_timeout, resolver.resolve_request())
        .await
        .map_err(|_| "HTTP/3: no complete request head within --header-timeout")??;
    let (mut send, recv) = stream.split();
    let resp = respond(req.map(|()| RecvBody(recv)), root, lim).await?;
    let (parts, mut body) = resp.into_parts();
    send.send_response(hyper::Response::from_parts(parts, ()))
        .await?;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data()
            && !data.is_empty()
            && tokio::time::timeout(lim.idle_timeout, send.send_data(data))
                .await
                .map_err(|_| {
                    send.stop_stream(h3::error::Code::H3_REQUEST_CANCELLED);
                    "HTTP/3: a response's window stayed shut for --idle-timeout: stream reset"
                })?
                .is_err()
        {
            return Err("HTTP/3: the client stopped a response".into());
        }
    }
    send.finish().await?;
    Ok(())
}

/// The answer to a request as h3 decoded it, whatever its body: the
/// shared [`h2::answer`], or a 500 that says why it failed.
async fn respond<B>(
    req: hyper::Request<B>,
    root: Option<Arc<files::Root>>,
    lim: Limits,
) -> Result<hyper::Response<h2::Body>, Error>
where
    B: hyper::body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    Ok(match h2::answer(req, ("https", false), root, lim).await {
        Ok(r) => r,
        Err(e) => {
            let text = format!("{e}\n");
            hyper::Response::builder()
                .status(500)
                .header("content-type", "text/plain; charset=utf-8")
                .header("content-length", text.len())
                .body(
                    http_body_util::Full::new(Bytes::from(text))
                        .map_err(|never| match never {})
                        .boxed(),
                )?
        }
    })
}

/// A request as h3 hands one over, before it is a request: the
/// pseudo-headers and fields of its HEADERS frame, and its body.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    /// `:method`.
    pub method: Vec<u8>,
    /// `:authority`.
    pub authority: Vec<u8>,
    /// `:path`.
    pub path: Vec<u8>,
    /// The other fields.
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    /// The DATA frames' bytes.
    pub body: Vec<u8>,
}

/// The HTTP/3 request path without QUIC, for the fuzz target
/// `h3_request`: a decoded request becomes a request as h3 builds one
/// (`None`: h3 would refuse it: a bad method, authority, path or field),
/// is answered by the same [`respond`] a served stream gets, and its
/// response's frames are counted instead of sent. Returns the status and
/// the body's bytes.
pub async fn answer_decoded(d: Decoded, lim: Limits) -> Option<Result<(u16, u64), Error>> {
    let uri = hyper::Uri::builder()
        .scheme("https")
        .authority(d.authority.as_slice())
        .path_and_query(d.path.as_slice())
        .build()
        .ok()?;
    let mut b = hyper::Request::builder()
        .method(hyper::Method::from_bytes(&d.method).ok()?)
        .uri(uri);
    for (n, v) in &d.fields {
        let n = hyper::header::HeaderName::from_bytes(n).ok()?;
        let v = hyper::header::HeaderValue::from_bytes(v).ok()?;
        b = b.header(n, v);
    }
    let req = b
        .body(http_body_util::Full::new(Bytes::from(d.body)))
        .ok()?;
    Some(
        async {
            let resp = respond(req, None, lim).await?;
            let status = resp.status().as_u16();
            let mut body = resp.into_body();
            let mut n = 0u64;
            while let Some(frame) = body.frame().await {
                if let Ok(data) = frame?.into_data() {
                    n += data.len() as u64;
                }
            }
            Ok((status, n))
        }
        .await,
    )
}

/// An HTTP/3 request body as hyper's `Body`, for the shared answer.
struct RecvBody<S>(h3::server::RequestStream<S, Bytes>);

impl<S> hyper::body::Body for RecvBody<S>
where
    S: h3::quic::RecvStream + Unpin,
{
    type Data = Bytes;
    type Error = h3::error::StreamError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.0.poll_recv_data(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(None)) => Poll::Ready(None),
            Poll::Ready(Ok(Some(mut b))) => {
                let n = b.remaining();
                Poll::Ready(Some(Ok(Frame::data(b.copy_to_bytes(n)))))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(method: &str, path: &str, body: &[u8]) -> Decoded {
        Decoded {
            method: method.into(),
            authority: b"example.org".to_vec(),
            path: path.into(),
            fields: vec![(b"accept".to_vec(), b"*/*".to_vec())],
            body: body.to_vec(),
        }
    }

    #[test]
    fn a_decoded_request_gets_a_served_streams_answer_or_h3s_refusal() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let lim = Limits::default();
        let answer = |d| rt.block_on(answer_decoded(d, lim));
        let ok = |d| answer(d).expect("a request").expect("an answer");
        assert_eq!(ok(decoded("GET", "/bytes/10", b"")), (200, 10));
        assert_eq!(ok(decoded("HEAD", "/bytes/10", b"")), (200, 0));
        assert_eq!(ok(decoded("POST", "/echo", b"abc")), (200, 3));
        assert_eq!(ok(decoded("GET", "/no/such/route", b"")).0, 404);
        // What h3 would not have handed over: no request at all.
        assert!(answer(decoded("G ET", "/", b"")).is_none());
        assert!(answer(decoded("GET", "no slash", b"")).is_none());
        let mut bad = decoded("GET", "/", b"");
        bad.fields.push((b"bad name".to_vec(), b"v".to_vec()));
        assert!(answer(bad).is_none());
    }
}
