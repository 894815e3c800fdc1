//! `tcpwise serve`: a hyper HTTP/1.1 origin with keep-alive.
//!
//! - `/bytes/N`: N bytes of [`crate::pattern`] with Content-Length
//!   (`?chunked=1`: chunked transfer coding);
//! - `/delay/MS/bytes/N`: the same after MS milliseconds;
//! - `/echo`: the request body back;
//! - `/health`: `ok`.
//!
//! Stops gracefully (finishing responses in flight) when `shutdown` fires.

use crate::pattern::PatternBody;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Largest body `/bytes/N` serves (100 GB).
pub const MAX_BYTES: u64 = 100_000_000_000;

/// Server configuration.
#[derive(Clone)]
pub struct ServeOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// TLS config (self-signed from [`crate::tls::self_signed`]).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Log one line per request to stderr, with connection ids.
    pub access_log: bool,
}

type Out = BoxBody<Bytes, hyper::Error>;

fn text(status: StatusCode, msg: impl Into<String>) -> Response<Out> {
    let mut r = Response::new(
        Full::new(Bytes::from(msg.into()))
            .map_err(|e| match e {})
            .boxed(),
    );
    *r.status_mut() = status;
    r
}

fn parse_n(s: &str) -> Option<u64> {
    s.parse::<u64>().ok().filter(|n| *n <= MAX_BYTES)
}

async fn route(req: Request<Incoming>) -> Response<Out> {
    let path = req.uri().path().to_string();
    let chunked = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv == "chunked=1"));
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let bytes = |n: u64| {
        Response::new(
            PatternBody::new(n, !chunked)
                .map_err(|e| match e {})
                .boxed(),
        )
    };
    match (req.method(), parts.as_slice()) {
        (&Method::GET | &Method::HEAD, ["health"]) => text(StatusCode::OK, "ok\n"),
        (&Method::GET | &Method::HEAD, ["bytes", n]) => match parse_n(n) {
            Some(n) => bytes(n),
            None => text(
                StatusCode::BAD_REQUEST,
                format!("/bytes/N takes N from 0 to {MAX_BYTES}\n"),
            ),
        },
        (&Method::GET | &Method::HEAD, ["delay", ms, "bytes", n]) => {
            match (ms.parse::<u64>().ok().filter(|m| *m <= 600_000), parse_n(n)) {
                (Some(ms), Some(n)) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    bytes(n)
                }
                _ => text(
                    StatusCode::BAD_REQUEST,
                    "/delay/MS/bytes/N takes MS up to 600000 and N up to 100 GB\n",
                ),
            }
        }
        (_, ["echo"]) => Response::new(req.into_body().boxed()),
        (_, ["bytes", _] | ["delay", _, "bytes", _] | ["health"]) => {
            text(StatusCode::METHOD_NOT_ALLOWED, "use GET or HEAD\n")
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: try /bytes/N, /delay/MS/bytes/N, /echo, /health\n",
        ),
    }
}

/// Serves until `shutdown` becomes true, then finishes what is in flight.
/// `ready` gets the bound address.
pub async fn serve(
    opts: ServeOptions,
    shutdown: watch::Receiver<bool>,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = listen(opts.bind, false)?;
    ready(listener.local_addr()?);
    listener.set_nonblocking(true)?;
    let ids = Arc::new(AtomicU64::new(0));
    serve_listener(TcpListener::from_std(listener)?, opts, shutdown, ids).await
}

/// Listen backlog (std asks for 128, which a burst of connections overflows).
const BACKLOG: i32 = 4096;

fn listen(addr: SocketAddr, reuse_port: bool) -> std::io::Result<std::net::TcpListener> {
    tcpwise_tcp::listen(addr, BACKLOG, reuse_port)
}

/// Serves on `threads` threads, each with its own single-threaded tokio
/// runtime and its own `SO_REUSEPORT` listener on the one port, so the
/// kernel spreads connections and a request never crosses threads
/// (nginx's worker model; a work-stealing runtime pays atomics and
/// cross-thread wake-ups on every request). Blocks until `shutdown` fires
/// and every thread has finished what it had in flight.
pub fn serve_threads(
    opts: ServeOptions,
    threads: usize,
    shutdown: watch::Receiver<bool>,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    // Thousands of connections need more than the usual 1024 descriptors.
    tcpwise_sys::raise_fd_limit();
    let first = listen(opts.bind, true)?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..threads.max(1) {
        listeners.push(listen(addr, true)?);
    }
    ready(addr);
    let ids = Arc::new(AtomicU64::new(0));
    std::thread::scope(|s| {
        let handles: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let (opts, stop, ids) = (opts.clone(), shutdown.clone(), ids.clone());
                std::thread::Builder::new()
                    .name(format!("tw-serve-{i}"))
                    .spawn_scoped(s, move || {
                        l.set_nonblocking(true)?;
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?
                            .block_on(async {
                                serve_listener(TcpListener::from_std(l)?, opts, stop, ids).await
                            })
                    })
            })
            .collect::<Result<_, _>>()?;
        for h in handles {
            h.join()
                .map_err(|_| std::io::Error::other("a server thread panicked"))??;
        }
        Ok(())
    })
}

async fn serve_listener(
    listener: TcpListener,
    opts: ServeOptions,
    mut shutdown: watch::Receiver<bool>,
    ids: Arc<AtomicU64>,
) -> std::io::Result<()> {
    let acceptor = opts.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            acc = listener.accept() => {
                let (sock, peer) = match acc {
                    Ok(x) => x,
                    Err(e) => { eprintln!("tcpwise serve: accept: {e}"); continue; }
                };
                let _ = sock.set_nodelay(true);
                let id = ids.fetch_add(1, Ordering::Relaxed) + 1;
                let log = opts.access_log;
                let acceptor = acceptor.clone();
                let stop = shutdown.clone();
                tasks.spawn(async move {
                    match acceptor {
                        Some(a) => match a.accept(sock).await {
                            Ok(tls) => connection(TokioIo::new(tls), id, peer, log, stop).await,
                            Err(e) => if log { eprintln!("conn={id} peer={peer} TLS handshake failed: {e}") },
                        },
                        None => connection(TokioIo::new(sock), id, peer, log, stop).await,
                    }
                });
            }
            _ = shutdown.changed() => break,
        }
    }
    drop(listener);
    // Let responses in flight finish (each connection got the signal too).
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    Ok(())
}

async fn connection<I>(
    io: TokioIo<I>,
    id: u64,
    peer: SocketAddr,
    log: bool,
    mut stop: watch::Receiver<bool>,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req: Request<Incoming>| async move {
        let line = log.then(|| format!("conn={id} peer={peer} {} {}", req.method(), req.uri()));
        let resp = route(req).await;
        if let Some(l) = line {
            eprintln!("{l} {}", resp.status().as_u16());
        }
        Ok::<_, std::convert::Infallible>(resp)
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, svc);
    tokio::pin!(conn);
    tokio::select! {
        r = conn.as_mut() => { if let Err(e) = r && log { eprintln!("conn={id} peer={peer} ended: {e}"); } }
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}
