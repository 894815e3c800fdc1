//! `tcpwise serve`: an HTTP/1.1 origin with keep-alive and pipelining,
//! plain or TLS. What it answers is [`routes`]; the framing is
//! [`tcpwise_http::h1`]; this module is the I/O glue.
//!
//! The request path is built like nginx's, because a test origin must not
//! be the bottleneck of the experiment it serves (see `scripts/bench-serve`):
//! - one event loop per thread, each with its own `SO_REUSEPORT`
//!   listener, so a request never crosses threads: an io_uring ring
//!   (`uring`, `--io uring`, the default for plain HTTP where the kernel
//!   has it) or a single-threaded tokio runtime on epoll (`conn`);
//! - a connection reads into its thread's buffer and parses in place;
//!   responses to every complete request of a read are written with one
//!   `write`. A connection owns buffers only while it holds a partial
//!   request or an unsent response, so a thousand idle keep-alive
//!   connections cost a few hundred bytes each, not hyper's two buffers;
//! - on epoll, a short read clears readiness (tokio does this on Linux),
//!   so a request costs one `read` and one `write`; on io_uring, a loop
//!   turn's sends go in with the wait for the next completions.
//!
//! Long work (a delay, a body over one frame, an echo) leaves the fast path
//! for async code on the connection's own buffers. It stops gracefully
//! (finishing responses in flight) when `shutdown` fires.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod command;
pub mod files;
pub mod flags;
pub mod h2;
mod h2_watch;
pub mod pattern;
pub mod routes;

/// A line on stderr; a closed stderr (a parent that stopped reading) must
/// not take the server down, as `eprintln!` would by panicking.
macro_rules! log {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod coalesce;
mod conn;
mod evict;
pub mod h3;
mod head;
mod log;
mod machine;
mod stream;
mod uring;
pub mod zero_rtt;

use conn::*;
pub use conn::{Slow, Step};
pub use flags::Io;
use head::*;
use log::*;
pub use machine::Core;

pub use routes::{MAX_BYTES, MAX_DELAY_MS};

use routes::{Body, Reply};
use std::cell::RefCell;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tcpwise_http::h1::{self, BodyLen, FramingError};
use tcpwise_outcome::Shutdown;
use tcpwise_tcp::PortShare;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use zero_rtt::Handshake;

/// One full TLS record and its framing: the least a bounded rustls send
/// buffer should hold.
const TLS_RECORD: usize = 16 * 1024 + 256;

/// Server configuration.
#[derive(Clone)]
pub struct ServeOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// TLS config (self-signed from [`tcpwise_http::tls::self_signed`]).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Log one line per request to stderr, with connection ids.
    pub access_log: bool,
    /// Limits against clients that would exhaust the server.
    pub limits: Limits,
    /// `--root DIR`: serve its files and listings instead of the routes.
    pub root: Option<Arc<files::Root>>,
    /// `--gzip`: compress responses for clients that accept gzip.
    pub gzip: bool,
    /// `--notsent-lowat`: unsent response data each socket may queue.
    pub notsent_lowat: tcpwise_tcp::Lowat,
    /// `-C`: each connection's congestion control (`None`: the
    /// namespace's default).
    pub congestion: Option<String>,
    /// `--tfo`: TCP Fast Open on the listeners, with this queue (`None`: off).
    pub fastopen: Option<u32>,
    /// `--http3`: HTTP/3 over QUIC on UDP, on the TCP listener's port
    /// (needs `tls`: its certificate and tickets, ALPN `h3`).
    pub http3: bool,
    /// With `http3`: a book this server's QUIC connections are also
    /// counted in (beside the process-wide [`h3::totals`]), for a program
    /// running several servers at once.
    pub quic_book: Option<h3::QuicBook>,
    /// With `http3`: the QUIC datapath (windows, UDP buffers), filled
    /// when the endpoint opens, before `ready` is called, so the figures
    /// can be printed beside it.
    pub quic_datapath: Arc<OnceLock<tcpwise_http::quic::Datapath>>,
    /// `--io`: how [`serve_threads`] waits for its connections.
    pub io: Io,
}

/// Why `--io uring` cannot serve.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IoError {
    /// What it serves takes the slow path on every request.
    #[error("--io uring serves plain HTTP from the routes: not with --tls, --root or --gzip")]
    NotPlain,
    /// This kernel (or `kernel.io_uring_disabled`) does not give it.
    #[error("--io uring: {0}")]
    Unavailable(String),
}

impl tcpwise_outcome::Classify for IoError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        Some(match self {
            IoError::NotPlain => tcpwise_outcome::Class::Usage,
            IoError::Unavailable(_) => tcpwise_outcome::Class::Privileges,
        })
    }
}

impl Io {
    /// What `opts` runs on: [`Io::Epoll`] or [`Io::Uring`]; an error
    /// when io_uring was asked for and cannot serve them.
    pub fn resolve(opts: &ServeOptions) -> Result<Io, IoError> {
        let plain = opts.tls.is_none() && opts.root.is_none() && !opts.gzip;
        match opts.io {
            Io::Epoll => Ok(Io::Epoll),
            Io::Auto if !plain || uring::available().is_err() => Ok(Io::Epoll),
            Io::Auto => Ok(Io::Uring),
            Io::Uring if !plain => Err(IoError::NotPlain),
            Io::Uring => uring::available()
                .map(|()| Io::Uring)
                .map_err(IoError::Unavailable),
        }
    }
}

impl std::fmt::Display for Io {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Io::Auto => f.write_str("auto"),
            Io::Epoll => f.write_str("epoll (tokio)"),
            Io::Uring => write!(
                f,
                "io_uring (a single-issuer ring a thread, {} receive buffers of {} B, sockets in its file table, under load a wait for up to {} completions or {} us; tokio for slow requests)",
                uring::BUFFERS,
                uring::BUFFER_SIZE,
                coalesce::MAX,
                coalesce::WAIT.as_micros()
            ),
        }
    }
}

impl ServeOptions {
    /// A plain origin on `bind`: no TLS, no access log, the default
    /// limits, the routes (no `--root`), no gzip, the socket's unsent data
    /// unbounded (`TCP_NOTSENT_LOWAT` off: the kernel's default; the
    /// `tcpwise serve` command sets `auto`) and the namespace's congestion
    /// control. Set the fields that differ.
    pub fn new(bind: SocketAddr) -> ServeOptions {
        ServeOptions {
            bind,
            tls: None,
            access_log: false,
            limits: Limits::default(),
            root: None,
            gzip: false,
            notsent_lowat: tcpwise_tcp::Lowat::Off,
            congestion: None,
            fastopen: None,
            http3: false,
            quic_book: None,
            quic_datapath: Arc::default(),
            io: Io::Auto,
        }
    }
}

/// What one client may take. The defaults are nginx's where it has one
/// (`client_header_timeout`, `keepalive_timeout` order of magnitude), and
/// otherwise large enough for any experiment and small enough that no
/// request can exhaust memory, descriptors or tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time to receive a whole request head, counted from its first byte
    /// (from the connection's start for its first request). Slowloris
    /// connections, trickling a byte at a time, are closed after it.
    pub header_timeout: Duration,
    /// An idle keep-alive connection is closed after this long; also the
    /// longest a request body or a response may make no progress.
    pub idle_timeout: Duration,
    /// Largest request head (larger: 431 and close).
    pub max_head: usize,
    /// Largest `/echo` body (larger: 413 and close).
    pub max_body: u64,
    /// Largest N of `/bytes/N` (larger: 400).
    pub max_bytes: u64,
    /// Longest MS of `/delay/MS` (longer: 400).
    pub max_delay: Duration,
    /// Connections open at once; at the limit a newcomer closes the
    /// stalest (`evict`), logged once an episode.
    pub max_conns: usize,
}

impl Limits {
    /// Fits `max_conns` to `fds` descriptors, less 64 for listeners and the
    /// like. With `--root` a connection holds more than its socket:
    /// HTTP/1.1 one file at a time, HTTP/2 and HTTP/3 one a stream sending
    /// a file. Then at most a third of the descriptors go to connections,
    /// a third to their HTTP/1.1 files, and the rest (returned) is the
    /// streams' file budget, so the limit is never reached.
    pub fn fit_fds(self, fds: u64, root: bool) -> (Limits, usize) {
        let free = usize::try_from(fds)
            .unwrap_or(usize::MAX)
            .saturating_sub(64);
        let per = if root { 3 } else { 1 };
        let max_conns = self.max_conns.min((free / per).max(1));
        let files = free.saturating_sub(2 * max_conns).max(1);
        (Limits { max_conns, ..self }, files)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_head: h1::MAX_HEAD,
            max_body: 1 << 30,
            max_bytes: routes::MAX_BYTES,
            max_delay: Duration::from_millis(routes::MAX_DELAY_MS),
            max_conns: 16_384,
        }
    }
}

/// Serves until `shutdown` becomes true, then finishes what is in flight.
/// `ready` gets the bound address.
pub async fn serve(
    opts: ServeOptions,
    shutdown: Shutdown,
    ready: impl FnOnce(SocketAddr),
) -> io::Result<()> {
    let listener = listen(opts.bind, PortShare::Alone, opts.fastopen)?;
    let addr = listener.local_addr()?;
    let quic = quic_endpoint(&opts, addr)?;
    ready(addr);
    listener.set_nonblocking(true)?;
    let shared = Shared::new(&opts, 1);
    let h3 = quic.map(|e| {
        let (root, lim, stop, log, book) = (
            opts.root.clone(),
            opts.limits,
            shutdown.clone(),
            opts.access_log,
            opts.quic_book.clone(),
        );
        let conns = shared.conns.clone();
        tokio::spawn(h3::serve(e, (root, conns), lim, stop, log, book))
    });
    let r = serve_listener(TcpListener::from_std(listener)?, 0, opts, shutdown, shared).await;
    if let Some(h) = h3 {
        h.await.map_err(io::Error::other)??;
    }
    r
}

/// With `--http3`: the QUIC endpoint on the TCP listener's address (the
/// same port number, on UDP). Called inside a tokio runtime.
fn quic_endpoint(opts: &ServeOptions, addr: SocketAddr) -> io::Result<Option<h3::Quic>> {
    if !opts.http3 {
        return Ok(None);
    }
    let tls = opts
        .tls
        .as_ref()
        .ok_or_else(|| io::Error::other("HTTP/3 needs TLS"))?;
    let (e, datapath) = h3::bind(addr, h3::server_config(tls)?)?;
    let _ = opts.quic_datapath.set(datapath);
    Ok(Some(e))
}

/// What the threads of one server share: connection ids and the
/// connection limit.
#[derive(Clone)]
struct Shared {
    ids: Arc<AtomicU64>,
    conns: Arc<Semaphore>,
    /// The epoll workers' connections, for eviction across workers.
    workers: evict::Workers,
}

impl Shared {
    fn new(opts: &ServeOptions, threads: usize) -> Shared {
        Shared {
            ids: Arc::new(AtomicU64::new(0)),
            conns: Arc::new(Semaphore::new(
                opts.limits.max_conns.clamp(1, Semaphore::MAX_PERMITS),
            )),
            workers: evict::Workers::new(threads),
        }
    }
}

/// Listen backlog (std asks for 128, which a burst of connections overflows).
const BACKLOG: i32 = 4096;

fn listen(
    addr: SocketAddr,
    share: PortShare,
    fastopen: Option<u32>,
) -> io::Result<std::net::TcpListener> {
    let l = tcpwise_tcp::listen(addr, BACKLOG, share)?;
    if let Some(q) = fastopen {
        tcpwise_tcp::fastopen::enable_listen(&l, q)?;
    }
    Ok(l)
}

/// Serves on `threads` threads, each with its own event loop (an io_uring
/// ring or a single-threaded tokio runtime, as [`ServeOptions::io`]
/// resolves) and its own `SO_REUSEPORT` listener on the one port, so the
/// kernel spreads connections and a request never crosses threads
/// (nginx's worker model; a work-stealing runtime pays atomics and
/// cross-thread wake-ups on every request). With io_uring, connections
/// that leave the fast path run on a tokio runtime of `threads` workers.
/// Blocks until `shutdown` fires and every thread has finished what it had
/// in flight.
pub fn serve_threads(
    opts: ServeOptions,
    threads: usize,
    shutdown: Shutdown,
    ready: impl FnOnce(SocketAddr),
) -> io::Result<()> {
    let engine = Io::resolve(&opts).map_err(io::Error::other)?;
    // Thousands of connections need more than the usual 1024 descriptors.
    tcpwise_sys::raise_fd_limit();
    // The first bind is exclusive, so a port another server holds (a
    // stale `serve` with its own SO_REUSEPORT group among them) refuses
    // here instead of sharing its connections with it.
    let first = listen(opts.bind, PortShare::First, opts.fastopen)?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..threads.max(1) {
        listeners.push(listen(addr, PortShare::Join, opts.fastopen)?);
    }
    // HTTP/3 on one more thread of its own: quinn drives an endpoint
    // from one task, so more threads would not share its work.
    let h3rt = opts
        .http3
        .then(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        })
        .transpose()?;
    let quic = match &h3rt {
        Some(rt) => {
            let _in = rt.enter();
            quic_endpoint(&opts, addr)?
        }
        None => None,
    };
    ready(addr);
    let shared = Shared::new(&opts, threads.max(1));
    // With io_uring, the connections that leave the fast path run here.
    let slow = (engine == Io::Uring)
        .then(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads.max(1))
                .thread_name("tw-serve-slow")
                .enable_all()
                .build()
        })
        .transpose()?;
    let tasks = Arc::new(AtomicU64::new(0));
    let r = std::thread::scope(|s| {
        let quic = quic.zip(h3rt).map(|(e, rt)| {
            // QUIC connections count against --max-conns with TCP's.
            let root_conns = (opts.root.clone(), shared.conns.clone());
            let (lim, stop, log) = (opts.limits, shutdown.clone(), opts.access_log);
            let run = h3::serve(e, root_conns, lim, stop, log, opts.quic_book.clone());
            std::thread::Builder::new()
                .name("tw-serve-h3".into())
                .spawn_scoped(s, move || rt.block_on(run))
        });
        let quic = quic.transpose()?;
        let handles: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let (opts, stop, shared) = (opts.clone(), shutdown.clone(), shared.clone());
                let slow = slow.as_ref().map(|rt| (rt.handle().clone(), tasks.clone()));
                std::thread::Builder::new()
                    .name(format!("tw-serve-{i}"))
                    .spawn_scoped(s, move || {
                        if let Some(slow) = slow {
                            return uring::Loop::new(l, opts, shared, slow, stop)?.run();
                        }
                        l.set_nonblocking(true)?;
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?
                            .block_on(async {
                                serve_listener(TcpListener::from_std(l)?, i, opts, stop, shared)
                                    .await
                            })
                    })
            })
            .collect::<Result<_, _>>()?;
        for h in handles.into_iter().chain(quic) {
            h.join()
                .map_err(|_| io::Error::other("a server thread panicked"))??;
        }
        Ok(())
    });
    // Let the handed-over connections finish what is in flight, as the
    // epoll threads do theirs.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while slow.is_some() && tasks.load(Ordering::Relaxed) > 0 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    r
}

/// What the accept loop got: a connection and its slot, an accept error,
/// or the server's stop.
enum Next {
    Conn(
        tokio::sync::OwnedSemaphorePermit,
        tokio::net::TcpStream,
        SocketAddr,
    ),
    Failed(io::Error),
    Stop,
}

/// The next connection and its slot. At the limit, a newcomer that
/// arrives before a slot frees closes the stalest connection of any
/// worker ([`evict`]) and takes the slot it gives back; said once per
/// episode.
async fn next_conn(
    listener: &TcpListener,
    shared: &Shared,
    max_conns: usize,
    shutdown: &Shutdown,
    at_limit: &mut bool,
) -> Next {
    let accept = |permit| async move {
        tokio::select! {
            acc = listener.accept() => match acc {
                Ok((sock, peer)) => Next::Conn(permit, sock, peer),
                Err(e) => Next::Failed(e),
            },
            _ = shutdown.wait() => Next::Stop,
        }
    };
    if let Ok(p) = shared.conns.clone().try_acquire_owned() {
        *at_limit = false;
        return accept(p).await;
    }
    if !std::mem::replace(at_limit, true) {
        log!(
            "tcpwise serve: connection limit reached ({max_conns} open, --max-conns); each newcomer closes the connection that moved data longest ago"
        );
    }
    // At the limit only a newcomer in hand queues for a slot: a worker
    // that queued before its newcomer came took the slot another
    // worker's eviction freed, and that worker's newcomer then waited an
    // idle timeout for a slot (3.2 s beside 105 zero-window attackers).
    let (sock, peer) = tokio::select! {
        acc = listener.accept() => match acc {
            Ok(x) => x,
            Err(e) => return Next::Failed(e),
        },
        _ = shutdown.wait() => return Next::Stop,
    };
    if let Ok(p) = shared.conns.clone().try_acquire_owned() {
        return Next::Conn(p, sock, peer);
    }
    // With none stale anywhere, the newcomer waits for any slot.
    shared.workers.evict_for();
    tokio::select! {
        p = shared.conns.clone().acquire_owned() => match p {
            Ok(p) => Next::Conn(p, sock, peer),
            Err(e) => Next::Failed(io::Error::other(e)),
        },
        _ = shutdown.wait() => Next::Stop,
    }
}

async fn serve_listener(
    listener: TcpListener,
    me: usize,
    opts: ServeOptions,
    shutdown: Shutdown,
    shared: Shared,
) -> io::Result<()> {
    let lim = opts.limits;
    let alt_svc = (opts.http3 && opts.tls.is_some())
        .then(|| listener.local_addr().map(|a| alt_svc_h3(a.port())))
        .transpose()?;
    let mut tasks = tokio::task::JoinSet::new();
    let mut at_limit = false;
    let reg = shared.workers.registry(me).clone();
    loop {
        match next_conn(&listener, &shared, lim.max_conns, &shutdown, &mut at_limit).await {
            Next::Stop => break,
            Next::Failed(e) => {
                log!("tcpwise serve: accept: {e}");
                // Out of descriptors: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Next::Conn(permit, sock, peer) => {
                let _ = sock.set_nodelay(true);
                if let Some(cc) = &opts.congestion {
                    // Checked at start-up: it is available.
                    let _ = tcpwise_tcp::set_congestion(&socket2::SockRef::from(&sock), cc);
                }
                let sock = tcpwise_tcp::LowatStream::new(sock, opts.notsent_lowat);
                let id = shared.ids.fetch_add(1, Ordering::Relaxed) + 1;
                let fd = std::os::fd::AsRawFd::as_raw_fd(&sock);
                let member = reg.join(id, fd);
                let c = Accepted {
                    id,
                    peer,
                    fd,
                    opts: &opts,
                    stop: shutdown.clone(),
                };
                let answer = answer(sock, c);
                let log = opts.access_log;
                tasks.spawn(ALT_SVC.scope(alt_svc.clone(), async move {
                    let _permit = permit;
                    if let Err(e) = member.run(answer).await
                        && log
                    {
                        log!("conn={id} peer={peer} ended: {e}");
                    }
                }));
                // Reap finished connections so the set does not grow with churn.
                while tasks.try_join_next().is_some() {}
            }
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

/// A connection just accepted: who it is and what answers it.
struct Accepted<'a> {
    id: u64,
    peer: SocketAddr,
    fd: std::os::fd::RawFd,
    opts: &'a ServeOptions,
    stop: Shutdown,
}

/// Answers one connection: TLS (then HTTP/2 or HTTP/1.1 by ALPN) or
/// plain (h2c by its preface, else HTTP/1.1), until it ends. What it
/// needs of the options is taken now, so the future owns all it holds.
fn answer(
    sock: tcpwise_tcp::LowatStream<tokio::net::TcpStream>,
    c: Accepted<'_>,
) -> impl std::future::Future<Output = io::Result<()>> + Send + 'static {
    let (id, peer, fd, stop) = (c.id, c.peer, c.fd, c.stop);
    let (lim, log, gzip) = (c.opts.limits, c.opts.access_log, c.opts.gzip);
    let (acceptor, root) = (c.opts.tls.clone(), c.opts.root.clone());
    let send_buf = c.opts.notsent_lowat.stream_buffer();
    async move {
        match acceptor {
            Some(cfg) => {
                let accept = zero_rtt::TlsStream::accept(sock, cfg);
                let Ok(tls) = tokio::time::timeout(lim.header_timeout, accept).await else {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "TLS handshake took longer than --header-timeout",
                    ));
                };
                let mut tls = tls?;
                // rustls's own send buffer (64 KiB by default) is one more
                // queue above the socket: bound it too.
                if let Some(n) = send_buf {
                    tls.set_buffer_limit(Some(n.max(TLS_RECORD)));
                }
                let hs = tls.handshake();
                if tls.alpn_protocol() == Some(b"h2") {
                    // ALPN chose h2: hyper's HTTP/2 server, our answers.
                    let how = ("https", send_buf, hs);
                    return h2::serve_connection(tls, how, root, lim, stop).await;
                }
                let conn = Conn::new(tls, id, peer, log, lim).with_root(root, gzip);
                conn.with_fd(fd).https().with_handshake(hs).run(stop).await
            }
            None => {
                if prior_knowledge(sock.get_ref(), lim.header_timeout).await? {
                    let how = ("http", send_buf, Handshake::done());
                    return h2::serve_connection(sock, how, root, lim, stop).await;
                }
                let conn = Conn::new(sock, id, peer, log, lim).with_root(root, gzip);
                conn.with_fd(fd).run(stop).await
            }
        }
    }
}

/// Whether a plain connection starts with HTTP/2's preface (h2c with
/// prior knowledge): its first three bytes are `PRI`, a method HTTP/1.1
/// reserves for exactly this. One `peek` per connection, none per request.
async fn prior_knowledge(sock: &tokio::net::TcpStream, limit: Duration) -> io::Result<bool> {
    let mut b = [0u8; 3];
    let peeked = tokio::time::timeout(limit, async {
        loop {
            // Once the peer has closed, tokio keeps the readiness set (a
            // closed state is final), so a short prefix then is the answer.
            let closed = sock
                .ready(tokio::io::Interest::READABLE)
                .await?
                .is_read_closed();
            // A short first segment that may still become the preface is
            // reported as WouldBlock, so the readiness is cleared and the
            // next segment wakes us: a connection holding only `P` sleeps
            // (it was peeked every millisecond: 6,000 of them took a core).
            let r = sock.try_io(tokio::io::Interest::READABLE, || {
                let n = tcpwise_sys::peek_now(sock, &mut b)?;
                if !closed && n > 0 && n < 3 && h2::PREFACE.starts_with(&b[..n]) {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok(n)
            });
            match r {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return r,
            }
        }
    })
    .await;
    match peeked {
        Ok(Ok(n)) => Ok(n >= 3 && b == h2::PREFACE[..3]),
        Ok(Err(e)) => Err(e),
        // Silent past the head timeout: the HTTP/1.1 path says so and closes.
        Err(_) => Ok(false),
    }
}

/// Bytes a connection reads at once (the thread's buffer).
const READ_BUF: usize = 64 * 1024;
/// Stop answering pipelined requests of one read once this much is queued.
const OUT_HIGH: usize = 256 * 1024;
/// Bodies up to this size are written on the fast path.
const INLINE_BODY: u64 = 16 * 1024;
/// How long a closing connection drains what the client still sends, so
/// our last response is not destroyed by a reset (nginx's lingering close).
const LINGER: Duration = Duration::from_secs(1);

thread_local! {
    /// The thread's read buffer and response buffer, lent to one connection
    /// at a time for the duration of one synchronous step.
    static BUFS: RefCell<(Vec<u8>, Vec<u8>)> =
        RefCell::new((vec![0; READ_BUF], Vec::with_capacity(OUT_HIGH)));
    /// `Date` header value, rebuilt once a second.
    static DATE: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}
