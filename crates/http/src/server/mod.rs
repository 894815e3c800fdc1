//! `tcpwise serve`: an HTTP/1.1 origin with keep-alive and pipelining,
//! plain or TLS. What it answers is [`routes`]; the framing is
//! [`crate::h1`]; this module is the I/O glue.
//!
//! The request path is built like nginx's, because a test origin must not
//! be the bottleneck of the experiment it serves (see `scripts/bench-serve`):
//! - one single-threaded tokio runtime per thread, each with its own
//!   `SO_REUSEPORT` listener, so a request never crosses threads;
//! - a connection reads into its thread's buffer and parses in place;
//!   responses to every complete request of a read are written with one
//!   `write`. A connection owns buffers only while it holds a partial
//!   request or an unsent response, so a thousand idle keep-alive
//!   connections cost a few hundred bytes each, not hyper's two buffers;
//! - a short read clears readiness (tokio does this on Linux), so a
//!   request costs one `read` and one `write`.
//!
//! Long work (a delay, a body over one frame, an echo) leaves the fast path
//! for async code on the connection's own buffers. It stops gracefully
//! (finishing responses in flight) when `shutdown` fires.

pub mod command;
pub mod files;
pub mod flags;
pub mod h2;
pub mod routes;

/// A line on stderr; a closed stderr (a parent that stopped reading) must
/// not take the server down, as `eprintln!` would by panicking.
macro_rules! log {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub use routes::{MAX_BYTES, MAX_DELAY_MS};

use crate::h1::{self, BodyLen, FramingError};
use crate::pattern;
use routes::{Body, Reply};
use std::cell::RefCell;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tcpwise_outcome::Shutdown;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Server configuration.
#[derive(Clone)]
pub struct ServeOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// TLS config (self-signed from [`crate::tls::self_signed`]).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Log one line per request to stderr, with connection ids.
    pub access_log: bool,
    /// Limits against clients that would exhaust the server.
    pub limits: Limits,
    /// `--root DIR`: serve its files and listings instead of the routes.
    pub root: Option<Arc<files::Root>>,
    /// `--gzip`: compress responses for clients that accept gzip.
    pub gzip: bool,
}

/// The request path without a socket, for the fuzz target: feeds `pieces`
/// as successive reads and returns everything answered on the fast path
/// (stopping where a request would leave it). Asserts the buffers stay
/// bounded: pending input by the head limit plus one read, output of one
/// step by the pipelining bound plus one inline response.
#[doc(hidden)]
pub fn fuzz_request_path<'a>(
    pieces: impl IntoIterator<Item = &'a [u8]>,
    limits: Limits,
) -> Vec<u8> {
    let (io, _peer) = tokio::io::duplex(64);
    let mut c = Conn::new(io, 0, SocketAddr::from(([0, 0, 0, 0], 0)), false, limits);
    let mut all = Vec::new();
    let mut out = Vec::new();
    let mut feed = pieces.into_iter();
    loop {
        let data = if c.more { None } else { feed.next() };
        if data.is_none() && !c.more {
            return all;
        }
        let len = data.map_or(0, <[u8]>::len);
        out.clear();
        let step = c.consume(data, &mut out);
        assert!(
            c.pending.len() <= limits.max_head + len + READ_BUF,
            "pending {}",
            c.pending.len()
        );
        assert!(
            out.len() <= OUT_HIGH + INLINE_BODY as usize + 4096,
            "out {}",
            out.len()
        );
        all.extend_from_slice(&out);
        if !matches!(step, Step::Again) {
            return all;
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
    /// Connections open at once; more wait in the listen backlog (logged).
    pub max_conns: usize,
}

impl Limits {
    /// Raises `RLIMIT_NOFILE` as far as it goes and lowers `max_conns` to
    /// what it then allows (less 64 descriptors for listeners and files).
    pub fn fit_fd_limit(self) -> Limits {
        let fds = tcpwise_sys::raise_fd_limit();
        let fit = usize::try_from(fds)
            .unwrap_or(usize::MAX)
            .saturating_sub(64);
        Limits {
            max_conns: self.max_conns.min(fit.max(1)),
            ..self
        }
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
    let listener = listen(opts.bind, false)?;
    ready(listener.local_addr()?);
    listener.set_nonblocking(true)?;
    let shared = Shared::new(&opts);
    serve_listener(TcpListener::from_std(listener)?, opts, shutdown, shared).await
}

/// What the threads of one server share: connection ids and the
/// connection limit.
#[derive(Clone)]
struct Shared {
    ids: Arc<AtomicU64>,
    conns: Arc<Semaphore>,
}

impl Shared {
    fn new(opts: &ServeOptions) -> Shared {
        Shared {
            ids: Arc::new(AtomicU64::new(0)),
            conns: Arc::new(Semaphore::new(
                opts.limits.max_conns.clamp(1, Semaphore::MAX_PERMITS),
            )),
        }
    }
}

/// Listen backlog (std asks for 128, which a burst of connections overflows).
const BACKLOG: i32 = 4096;

fn listen(addr: SocketAddr, reuse_port: bool) -> io::Result<std::net::TcpListener> {
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
    shutdown: Shutdown,
    ready: impl FnOnce(SocketAddr),
) -> io::Result<()> {
    // Thousands of connections need more than the usual 1024 descriptors.
    tcpwise_sys::raise_fd_limit();
    let first = listen(opts.bind, true)?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..threads.max(1) {
        listeners.push(listen(addr, true)?);
    }
    ready(addr);
    let shared = Shared::new(&opts);
    std::thread::scope(|s| {
        let handles: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let (opts, stop, shared) = (opts.clone(), shutdown.clone(), shared.clone());
                std::thread::Builder::new()
                    .name(format!("tw-serve-{i}"))
                    .spawn_scoped(s, move || {
                        l.set_nonblocking(true)?;
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?
                            .block_on(async {
                                serve_listener(TcpListener::from_std(l)?, opts, stop, shared).await
                            })
                    })
            })
            .collect::<Result<_, _>>()?;
        for h in handles {
            h.join()
                .map_err(|_| io::Error::other("a server thread panicked"))??;
        }
        Ok(())
    })
}

async fn serve_listener(
    listener: TcpListener,
    opts: ServeOptions,
    shutdown: Shutdown,
    shared: Shared,
) -> io::Result<()> {
    let acceptor = opts.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let lim = opts.limits;
    let mut tasks = tokio::task::JoinSet::new();
    let mut at_limit = false;
    loop {
        // A connection slot first: at the limit, new connections wait in
        // the listen backlog (nginx's `worker_connections`), said once per episode.
        let permit = match shared.conns.clone().try_acquire_owned() {
            Ok(p) => {
                at_limit = false;
                p
            }
            Err(_) => {
                if !std::mem::replace(&mut at_limit, true) {
                    log!(
                        "tcpwise serve: connection limit reached ({} open, --max-conns); new connections wait in the listen backlog until one closes",
                        lim.max_conns
                    );
                }
                tokio::select! {
                    p = shared.conns.clone().acquire_owned() => p.map_err(io::Error::other)?,
                    _ = shutdown.wait() => break,
                }
            }
        };
        tokio::select! {
            acc = listener.accept() => {
                let (sock, peer) = match acc {
                    Ok(x) => x,
                    Err(e) => {
                        log!("tcpwise serve: accept: {e}");
                        // Out of descriptors: back off instead of spinning.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = sock.set_nodelay(true);
                let id = shared.ids.fetch_add(1, Ordering::Relaxed) + 1;
                let log = opts.access_log;
                let acceptor = acceptor.clone();
                let stop = shutdown.clone();
                let root = opts.root.clone();
                let gzip = opts.gzip;
                tasks.spawn(async move {
                    let _permit = permit;
                    let r = match acceptor {
                        Some(a) => match tokio::time::timeout(lim.header_timeout, a.accept(sock)).await {
                            // ALPN chose h2: hyper's HTTP/2 server, our answers.
                            Ok(Ok(tls)) if tls.get_ref().1.alpn_protocol() == Some(b"h2") => {
                                h2::serve_connection(tls, root, lim, stop).await
                            }
                            Ok(Ok(tls)) => Conn::new(tls, id, peer, log, lim).with_root(root, gzip).run(stop).await,
                            Ok(Err(e)) => Err(e),
                            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "TLS handshake took longer than --header-timeout")),
                        },
                        None => match prior_knowledge(&sock, lim.header_timeout).await {
                            Ok(true) => h2::serve_connection(sock, root, lim, stop).await,
                            Ok(false) => Conn::new(sock, id, peer, log, lim).with_root(root, gzip).run(stop).await,
                            Err(e) => Err(e),
                        },
                    };
                    if let Err(e) = r && log {
                        log!("conn={id} peer={peer} ended: {e}");
                    }
                });
                // Reap finished connections so the set does not grow with churn.
                while tasks.try_join_next().is_some() {}
            }
            _ = shutdown.wait() => break,
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

/// Whether a plain connection starts with HTTP/2's preface (h2c with
/// prior knowledge): its first three bytes are `PRI`, a method HTTP/1.1
/// reserves for exactly this. One `peek` per connection, none per request.
async fn prior_knowledge(sock: &tokio::net::TcpStream, limit: Duration) -> io::Result<bool> {
    let mut b = [0u8; 3];
    let peeked = tokio::time::timeout(limit, async {
        loop {
            let n = sock.peek(&mut b).await?;
            // A short first segment: wait for the rest of the three bytes
            // (rare; the preface arrives in one segment).
            if n == 0 || n >= 3 || !h2::PREFACE.starts_with(&b[..n]) {
                return Ok::<_, io::Error>(n);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
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

fn with_date<R>(f: impl FnOnce(&[u8]) -> R) -> R {
    let now = SystemTime::now();
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with_borrow_mut(|(at, s)| {
        if *at != secs {
            *at = secs;
            *s = httpdate::fmt_http_date(now);
        }
        f(s.as_bytes())
    })
}

/// One access-log line's fields.
struct Logged<'a> {
    request: &'a str,
    minor: u8,
    status: u16,
    bytes: Option<u64>,
    agent: (&'a str, &'a str),
    started: Option<Instant>,
}

/// nginx's `$time_local` in UTC: `23/Nov/2026:04:34:06 +0000`.
fn access_time(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{day:02}/{}/{year}:{:02}:{:02}:{:02} +0000",
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A request whose answer leaves the fast path.
struct Slow {
    reply: Reply,
    method: String,
    target: String,
    minor: u8,
    keep_alive: bool,
    head: bool,
    body: BodyLen,
    expect_continue: bool,
    /// The headers a file answer depends on (`--root`).
    cond: files::Conditional,
    /// `Referer` and `User-Agent`, kept only for the access log.
    agent: Option<(String, String)>,
    /// When its head was complete.
    started: Instant,
    /// Compress the answer (`--gzip`, and the client accepts it).
    gzip: bool,
}

/// What one fast step ended with.
enum Step {
    /// Every complete request was answered; read more.
    Again,
    /// A request needs the slow path (its head is consumed, its body is not).
    Slow(Box<Slow>),
    /// Close once the output is written (`true`: the client may still be
    /// sending, so drain before closing).
    Close(bool),
}

struct Conn<S> {
    io: S,
    id: u64,
    peer: SocketAddr,
    log: bool,
    /// Input not yet consumed (a partial request, or requests not yet answered).
    pending: Vec<u8>,
    /// `pending` may hold complete requests: answer them before reading.
    more: bool,
    /// Output the socket did not take yet.
    unsent: Vec<u8>,
    lim: Limits,
    /// When the wait for the current request head began: the connection's
    /// start, the end of the last answer, or the first byte of a partial head.
    since: Instant,
    /// A partial head is pending (the header timeout runs).
    in_head: bool,
    /// Requests answered.
    answered: u64,
    /// `--root`: files instead of the routes.
    root: Option<Arc<files::Root>>,
    /// `--gzip`.
    gzip: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<S> {
    fn new(io: S, id: u64, peer: SocketAddr, log: bool, lim: Limits) -> Self {
        Conn {
            io,
            id,
            peer,
            log,
            pending: Vec::new(),
            more: false,
            unsent: Vec::new(),
            lim,
            since: Instant::now(),
            in_head: true,
            answered: 0,
            root: None,
            gzip: false,
        }
    }

    fn with_root(mut self, root: Option<Arc<files::Root>>, gzip: bool) -> Self {
        self.root = root;
        self.gzip = gzip;
        self
    }

    /// When the current wait times out.
    fn deadline(&self) -> Instant {
        if self.in_head || self.answered == 0 {
            self.since + self.lim.header_timeout
        } else {
            self.since + self.lim.idle_timeout
        }
    }

    async fn run(mut self, stop: Shutdown) -> io::Result<()> {
        let mut stopped = pin!(stop.wait());
        // One lazy timer per connection: requests move `since` without
        // touching it; when it fires early it is re-armed to the deadline.
        // Only a partial head can bring the deadline forward (re-armed below).
        let mut armed = self.deadline();
        let timer = tokio::time::sleep_until(armed);
        let mut timer = pin!(timer);
        loop {
            let answered = self.answered;
            let step = tokio::select! {
                biased;
                s = poll_fn(|cx| self.poll_step(cx)) => s?,
                _ = &mut stopped => return Ok(()),
                _ = &mut timer => {
                    let due = self.deadline();
                    if Instant::now() >= due {
                        let what = if self.in_head || self.answered == 0 {
                            "request head not complete within --header-timeout"
                        } else {
                            "idle longer than --idle-timeout"
                        };
                        if self.log {
                            log!("conn={} peer={} closed: {what}", self.id, self.peer);
                        }
                        return Ok(());
                    }
                    armed = due;
                    timer.as_mut().reset(due);
                    continue;
                }
            };
            self.flush().await?;
            match step {
                Step::Again => {}
                Step::Slow(s) => {
                    // Boxed: the slow path's state stays out of every
                    // connection's task (smaller tasks, fewer cache misses).
                    if !Box::pin(self.slow(*s)).await? {
                        return self.close(true).await;
                    }
                }
                Step::Close(drain) => return self.close(drain).await,
            }
            if stop.is_triggered() {
                return Ok(());
            }
            // The header timeout runs from a partial head's first byte and
            // restarts with every answered request; idle time runs from the
            // last answer.
            let was_in_head = self.in_head;
            self.in_head = !self.pending.is_empty();
            if answered != self.answered || !self.in_head || !was_in_head {
                self.since = Instant::now();
            }
            if self.deadline() < armed {
                armed = self.deadline();
                timer.as_mut().reset(armed);
            }
        }
    }

    /// One synchronous step on the thread's buffers: read (unless complete
    /// requests are waiting), answer every complete request, write the
    /// answers once. Pending only while waiting to read.
    fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Step>> {
        BUFS.with_borrow_mut(|(scratch, out)| {
            let n = if self.more {
                None
            } else {
                let mut rb = ReadBuf::new(scratch);
                ready!(Pin::new(&mut self.io).poll_read(cx, &mut rb))?;
                let n = rb.filled().len();
                if n == 0 {
                    return Poll::Ready(Ok(Step::Close(false)));
                }
                Some(n)
            };
            out.clear();
            let step = self.consume(n.map(|n| &scratch[..n]), out);
            if !out.is_empty() {
                match Pin::new(&mut self.io).poll_write(cx, out) {
                    Poll::Ready(Ok(k)) => self.unsent.extend_from_slice(&out[k..]),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => self.unsent.extend_from_slice(out),
                }
            }
            Poll::Ready(Ok(step))
        })
    }

    /// Takes newly read bytes (`None`: none, answer what is pending) and
    /// answers every complete request into `out`; keeps the rest.
    fn consume(&mut self, data: Option<&[u8]>, out: &mut Vec<u8>) -> Step {
        let mut pend = std::mem::take(&mut self.pending);
        let direct = match data {
            // The common case: nothing pending, parse the read in place.
            Some(d) if pend.is_empty() => Some(d),
            Some(d) => {
                pend.extend_from_slice(d);
                None
            }
            None => None,
        };
        let input = direct.unwrap_or(&pend);
        let (used, step) = with_date(|date| self.answer(input, out, date));
        match direct {
            Some(d) => self.pending.extend_from_slice(&d[used..]),
            None => {
                pend.drain(..used);
                if !pend.is_empty() {
                    self.pending = pend;
                }
            }
        }
        step
    }

    /// Answers the complete requests at the front of `input` into `out`:
    /// (bytes consumed, what next). Sets `self.more` when it stopped with
    /// complete requests possibly left.
    fn answer(&mut self, input: &[u8], out: &mut Vec<u8>, date: &[u8]) -> (usize, Step) {
        let mut at = 0;
        self.more = false;
        loop {
            if out.len() >= OUT_HIGH {
                self.more = at < input.len();
                return (at, Step::Again);
            }
            let req = match h1::parse_request(&input[at..], self.lim.max_head) {
                Ok(Some(r)) => r,
                Ok(None) => return (at, Step::Again),
                Err(e) => {
                    let status = if e == FramingError::HeadTooLarge {
                        431
                    } else {
                        400
                    };
                    let msg = format!("{e}\n");
                    self.answering(&Logged {
                        request: "-",
                        minor: 1,
                        status,
                        bytes: Some(msg.len() as u64),
                        agent: ("-", "-"),
                        started: None,
                    });
                    put_text(out, status, 1, false, None, &msg, false, date);
                    return (input.len(), Step::Close(true));
                }
            };
            let mut reply = if self.root.is_some() {
                // Every file answer reads the disk: the slow path.
                Reply {
                    status: 200,
                    body: Body::File,
                    delay_ms: 0,
                    allow: None,
                }
            } else {
                routes::route(req.method, req.target, &self.lim)
            };
            if let (Body::Echo, BodyLen::Length(n)) = (&reply.body, req.body)
                && n > self.lim.max_body
            {
                let max = self.lim.max_body;
                reply = Reply::text(
                    413,
                    format!("/echo takes bodies up to {max} bytes (--max-body)\n"),
                );
            }
            let head = req.method == "HEAD";
            let body_in = &input[at + req.len..];
            let body_ready = match req.body {
                BodyLen::Length(n) => n <= body_in.len() as u64,
                BodyLen::Chunked => false,
            };
            let reply_small = match &reply.body {
                Body::Pattern { len, .. } => head || *len <= INLINE_BODY,
                Body::Echo | Body::Text(_) => true,
                Body::File => false,
            };
            // Compression streams in chunks: an HTTP/1.1 client only.
            let gzip = self.gzip
                && req.accept_gzip
                && req.minor == 1
                && matches!(
                    reply.body,
                    Body::Text(_) | Body::Pattern { .. } | Body::File
                );
            let inline = reply.delay_ms == 0 && body_ready && reply_small && !gzip;
            if !inline {
                let slow = Slow {
                    reply,
                    method: req.method.to_string(),
                    target: req.target.to_string(),
                    minor: req.minor,
                    keep_alive: req.keep_alive,
                    head,
                    body: req.body,
                    expect_continue: req.expect_continue,
                    agent: self.log.then(|| {
                        (
                            req.referer.unwrap_or("-").to_string(),
                            req.user_agent.unwrap_or("-").to_string(),
                        )
                    }),
                    started: Instant::now(),
                    gzip,
                    cond: {
                        let c = |i: usize| req.cond[i].map(String::from);
                        files::Conditional {
                            range: c(0),
                            if_range: c(1),
                            if_none_match: c(2),
                            if_modified_since: c(3),
                        }
                    },
                };
                return (at + req.len, Step::Slow(Box::new(slow)));
            }
            let body_len = match req.body {
                BodyLen::Length(n) => n as usize,
                BodyLen::Chunked => unreachable!("chunked bodies take the slow path"),
            };
            if self.log {
                let bytes = match &reply.body {
                    _ if head => 0,
                    Body::Text(t) => t.len() as u64,
                    Body::Pattern { len, .. } => *len,
                    Body::Echo => body_len as u64,
                    Body::File => 0,
                };
                let request = format!("{} {}", req.method, req.target);
                self.answering(&Logged {
                    request: &request,
                    minor: req.minor,
                    status: reply.status,
                    bytes: Some(bytes),
                    agent: (req.referer.unwrap_or("-"), req.user_agent.unwrap_or("-")),
                    started: None,
                });
            } else {
                self.answered += 1;
            }
            let keep = req.keep_alive;
            match &reply.body {
                Body::Text(t) => put_text(
                    out,
                    reply.status,
                    req.minor,
                    keep,
                    reply.allow,
                    t,
                    head,
                    date,
                ),
                Body::Echo => {
                    let h = h1::ResponseHead {
                        status: 200,
                        minor: req.minor,
                        keep_alive: keep,
                        body: BodyLen::Length(body_len as u64),
                        content_type: Some("application/octet-stream"),
                        allow: None,
                    };
                    h1::put_response_head(out, &h, date);
                    if !head {
                        out.extend_from_slice(&body_in[..body_len]);
                    }
                }
                Body::File => unreachable!("file answers take the slow path"),
                Body::Pattern { len, chunked } => {
                    put_pattern_head(out, reply.status, req.minor, keep, *len, *chunked, date);
                    if !head {
                        let data = pattern::slice(0, *len as usize);
                        if *chunked {
                            h1::put_chunk(out, data);
                            out.extend_from_slice(h1::LAST_CHUNK);
                        } else {
                            out.extend_from_slice(data);
                        }
                    }
                }
            }
            at += req.len + body_len;
            if !keep {
                return (input.len(), Step::Close(at < input.len()));
            }
        }
    }

    /// Counts an answer and, with `--access-log`, writes its line in
    /// nginx's `combined` format followed by the request time in seconds
    /// (nginx's `$request_time`), quotes in strings escaped as nginx does.
    fn answering(&mut self, l: &Logged) {
        self.answered += 1;
        if self.log {
            let q = |s: &str| s.replace('"', "\\x22");
            let secs = l.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
            log!(
                "{} - - [{}] \"{} HTTP/1.{}\" {} {} \"{}\" \"{}\" {secs:.3}",
                self.peer.ip(),
                access_time(SystemTime::now()),
                q(l.request),
                l.minor,
                l.status,
                l.bytes.map_or_else(|| "-".to_string(), |b| b.to_string()),
                q(l.agent.0),
                q(l.agent.1)
            );
        }
    }

    /// `answering` for a request off the fast path.
    fn answering_slow(&mut self, s: &Slow, status: u16, bytes: Option<u64>) {
        let request = format!("{} {}", s.method, s.target);
        let agent = s
            .agent
            .as_ref()
            .map_or(("-", "-"), |(r, u)| (r.as_str(), u.as_str()));
        self.answering(&Logged {
            request: &request,
            minor: s.minor,
            status,
            bytes: if s.head { Some(0) } else { bytes },
            agent,
            started: Some(s.started),
        });
    }

    /// Writes what the socket did not take, and flushes (TLS).
    async fn flush(&mut self) -> io::Result<()> {
        if !self.unsent.is_empty() {
            let unsent = std::mem::take(&mut self.unsent);
            self.send(&unsent).await?;
        }
        self.io.flush().await
    }

    /// Writes all of `data` (and flushes TLS); a client that takes nothing
    /// for `--idle-timeout` is dropped.
    async fn send(&mut self, data: &[u8]) -> io::Result<()> {
        let io = &mut self.io;
        match tokio::time::timeout(self.lim.idle_timeout, async {
            io.write_all(data).await?;
            io.flush().await
        })
        .await
        {
            Ok(r) => r,
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing for --idle-timeout",
            )),
        }
    }

    /// Reads more into `buf`; a client that sends nothing for
    /// `--idle-timeout` is dropped, and one that closes early is an error.
    async fn receive(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        match tokio::time::timeout(self.lim.idle_timeout, self.io.read_buf(buf)).await {
            Ok(Ok(0)) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the client closed in the middle of a request body",
            )),
            Ok(r) => r.map(drop),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request body stalled for --idle-timeout",
            )),
        }
    }

    /// Answers one request off the fast path; `false`: close afterwards.
    async fn slow(&mut self, s: Slow) -> io::Result<bool> {
        let Slow { reply, .. } = &s;
        if reply.body == Body::File {
            return self.file(&s).await;
        }
        if reply.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(reply.delay_ms)).await;
        }
        let bytes = match &reply.body {
            Body::Text(t) => Some(t.len() as u64),
            Body::Pattern { len, .. } => Some(*len),
            Body::Echo => match s.body {
                BodyLen::Length(n) => Some(n),
                BodyLen::Chunked => None,
            },
            Body::File => None,
        };
        self.answering_slow(&s, reply.status, bytes);
        if reply.body == Body::Echo {
            return self.echo(&s).await;
        }
        // A body this route does not read (and that had not all arrived):
        // answer, then close rather than read it.
        let keep = s.keep_alive && s.body == BodyLen::Length(0);
        let mut head = Vec::new();
        if s.gzip {
            let ct = match &reply.body {
                Body::Text(_) => "text/plain; charset=utf-8",
                _ => "application/octet-stream",
            };
            let allow: Vec<(&str, String)> = reply
                .allow
                .map(|a| ("allow", a.to_string()))
                .into_iter()
                .collect();
            with_date(|d| put_gzip_head(&mut head, reply.status, keep, ct, &allow, d));
            self.send(&head).await?;
            if !s.head {
                match &reply.body {
                    Body::Text(t) => self.send_gzipped(t.as_bytes()).await?,
                    Body::Pattern { len, .. } => {
                        self.send_gzipped(pattern::Reader::new(*len)).await?;
                    }
                    Body::Echo | Body::File => unreachable!("answered above"),
                }
            }
            self.io.flush().await?;
            self.more = !self.pending.is_empty();
            return Ok(keep);
        }
        match &reply.body {
            Body::Text(t) => {
                with_date(|d| {
                    put_text(
                        &mut head,
                        reply.status,
                        s.minor,
                        keep,
                        reply.allow,
                        t,
                        s.head,
                        d,
                    )
                });
                self.send(&head).await?;
            }
            Body::Pattern { len, chunked } => {
                let (len, chunked) = (*len, *chunked);
                with_date(|d| {
                    put_pattern_head(&mut head, reply.status, s.minor, keep, len, chunked, d)
                });
                self.send(&head).await?;
                if !s.head {
                    self.send_pattern(len, chunked).await?;
                }
            }
            Body::Echo | Body::File => unreachable!("answered above"),
        }
        self.io.flush().await?;
        self.more = !self.pending.is_empty();
        Ok(keep)
    }

    /// Answers a request under `--root`: a file (or its ranges), a
    /// listing, a redirect, a 304 or a refusal, as [`files::plan`] says.
    async fn file(&mut self, s: &Slow) -> io::Result<bool> {
        use files::Plan;
        use std::io::{Read, Seek, SeekFrom};
        let Some(root) = self.root.clone() else {
            return Err(io::Error::other("a file answer without --root"));
        };
        let plan = files::plan(&root, &s.method, &s.target, &s.cond);
        self.answering_slow(s, plan.status(), plan.body_len());
        // A body this answer does not read (and that had not all arrived):
        // answer, then close rather than read it.
        let keep = s.keep_alive && s.body == BodyLen::Length(0);
        let mut head = Vec::new();
        let gzip = s.gzip && plan.status() == 200;
        with_date(|d| files::put_head(&mut head, &plan, s.minor, keep, gzip, d));
        self.send(&head).await?;
        if gzip && !s.head {
            match &plan {
                Plan::Text { body, .. } => self.send_gzipped(body.as_bytes()).await?,
                Plan::File { path, .. } => self.send_gzipped(std::fs::File::open(path)?).await?,
                Plan::NotModified { .. } => {}
            }
        } else if !s.head {
            match &plan {
                Plan::Text { body, .. } => self.send(body.as_bytes()).await?,
                Plan::NotModified { .. } => {}
                Plan::File {
                    path,
                    ranges,
                    boundary,
                    ..
                } => {
                    let mut f = std::fs::File::open(path)?;
                    let mut buf = vec![0u8; pattern::FRAME];
                    for (i, &(a, b)) in ranges.iter().enumerate() {
                        if boundary.is_some() {
                            self.send(plan.part_head(i).as_bytes()).await?;
                        }
                        f.seek(SeekFrom::Start(a))?;
                        let mut left = b - a + 1;
                        while left > 0 {
                            let n = (left as usize).min(buf.len());
                            // A file that shrank under us ends the
                            // connection: its length was promised.
                            f.read_exact(&mut buf[..n])?;
                            self.send(&buf[..n]).await?;
                            left -= n as u64;
                        }
                        if boundary.is_some() {
                            self.send(b"\r\n").await?;
                        }
                    }
                    if boundary.is_some() {
                        self.send(plan.multipart_end().as_bytes()).await?;
                    }
                }
            }
        }
        self.io.flush().await?;
        self.more = !self.pending.is_empty();
        Ok(keep)
    }

    /// Sends `src` gzip-compressed (fast level: a test origin), in chunks.
    async fn send_gzipped(&mut self, mut src: impl std::io::Read) -> io::Result<()> {
        use std::io::Write as _;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut buf = vec![0u8; pattern::FRAME];
        let mut framed = Vec::new();
        loop {
            let n = src.read(&mut buf)?;
            if n == 0 {
                break;
            }
            enc.write_all(&buf[..n])?;
            if enc.get_ref().len() >= 16 * 1024 {
                framed.clear();
                h1::put_chunk(&mut framed, enc.get_ref());
                enc.get_mut().clear();
                self.send(&framed).await?;
            }
        }
        let rest = enc.finish()?;
        if !rest.is_empty() {
            framed.clear();
            h1::put_chunk(&mut framed, &rest);
            self.send(&framed).await?;
        }
        self.send(h1::LAST_CHUNK).await
    }

    async fn send_pattern(&mut self, len: u64, chunked: bool) -> io::Result<()> {
        let mut off = 0;
        let mut framed = Vec::new();
        while off < len {
            let n = (len - off).min(pattern::FRAME as u64) as usize;
            let data = pattern::slice(off, n);
            if chunked {
                framed.clear();
                h1::put_chunk(&mut framed, data);
                self.send(&framed).await?;
            } else {
                self.send(data).await?;
            }
            off += n as u64;
        }
        if chunked {
            self.send(h1::LAST_CHUNK).await?;
        }
        Ok(())
    }

    /// Streams the request body back, framed as it came.
    async fn echo(&mut self, s: &Slow) -> io::Result<bool> {
        let body = s.body;
        if s.expect_continue && self.pending.is_empty() {
            self.send(h1::CONTINUE).await?;
            self.io.flush().await?;
        }
        let mut out = Vec::new();
        let h = h1::ResponseHead {
            status: 200,
            minor: s.minor,
            keep_alive: s.keep_alive,
            body,
            content_type: Some("application/octet-stream"),
            allow: None,
        };
        with_date(|d| h1::put_response_head(&mut out, &h, d));
        self.send(&out).await?;
        let mut buf = std::mem::take(&mut self.pending);
        let mut decoder = h1::Chunked::new();
        let mut left = match body {
            BodyLen::Length(n) => n,
            BodyLen::Chunked => u64::MAX,
        };
        let mut at = 0;
        let mut echoed = 0u64;
        loop {
            // Pass on what is buffered.
            while at < buf.len() && left > 0 {
                match body {
                    BodyLen::Length(_) => {
                        let n = (left as usize).min(buf.len() - at);
                        if !s.head {
                            self.send(&buf[at..at + n]).await?;
                        }
                        at += n;
                        left -= n as u64;
                    }
                    BodyLen::Chunked => {
                        let p = decoder.next(&buf[at..]).map_err(io::Error::other)?;
                        out.clear();
                        h1::put_chunk(&mut out, &buf[at..][p.data.clone()]);
                        if p.done {
                            out.extend_from_slice(h1::LAST_CHUNK);
                            left = 0;
                        }
                        echoed += p.data.len() as u64;
                        if echoed > self.lim.max_body {
                            return Err(io::Error::other(format!(
                                "chunked /echo body over --max-body {} (response cut short)",
                                self.lim.max_body
                            )));
                        }
                        if !s.head {
                            self.send(&out).await?;
                        }
                        at += p.used;
                        if p.used == 0 {
                            break;
                        }
                    }
                }
            }
            if left == 0 {
                break;
            }
            buf.drain(..at);
            at = 0;
            if buf.capacity() < READ_BUF {
                buf.reserve(READ_BUF);
            }
            self.receive(&mut buf).await?;
        }
        buf.drain(..at);
        self.pending = if buf.is_empty() { Vec::new() } else { buf };
        self.more = !self.pending.is_empty();
        Ok(s.keep_alive)
    }

    /// Closes after a final response: TLS `close_notify` or TCP FIN, then
    /// (`drain`) reads and drops what the client still sends for up to
    /// [`LINGER`], so the response is not lost to a reset.
    async fn close(&mut self, drain: bool) -> io::Result<()> {
        let _ = tokio::time::timeout(LINGER, async {
            self.io.shutdown().await?;
            if drain {
                let mut sink = vec![0u8; 16 * 1024];
                while self.io.read(&mut sink).await? > 0 {}
            }
            Ok::<_, io::Error>(())
        })
        .await;
        Ok(())
    }
}

/// Appends a text response (`text/plain`).
#[allow(clippy::too_many_arguments)]
fn put_text(
    out: &mut Vec<u8>,
    status: u16,
    minor: u8,
    keep_alive: bool,
    allow: Option<&str>,
    text: &str,
    head_only: bool,
    date: &[u8],
) {
    let h = h1::ResponseHead {
        status,
        minor,
        keep_alive,
        body: BodyLen::Length(text.len() as u64),
        content_type: Some("text/plain; charset=utf-8"),
        allow,
    };
    h1::put_response_head(out, &h, date);
    if !head_only {
        out.extend_from_slice(text.as_bytes());
    }
}

/// A head for a gzip-compressed, chunked body.
fn put_gzip_head(
    out: &mut Vec<u8>,
    status: u16,
    keep_alive: bool,
    content_type: &str,
    headers: &[(&str, String)],
    date: &[u8],
) {
    use std::io::Write as _;
    let _ = write!(
        out,
        "HTTP/1.1 {status} {}\r\ntransfer-encoding: chunked\r\ncontent-type: {content_type}\r\ncontent-encoding: gzip\r\nvary: accept-encoding\r\n",
        h1::reason(status)
    );
    for (k, v) in headers {
        let _ = write!(out, "{k}: {v}\r\n");
    }
    if !keep_alive {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"date: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n\r\n");
}

fn put_pattern_head(
    out: &mut Vec<u8>,
    status: u16,
    minor: u8,
    keep_alive: bool,
    len: u64,
    chunked: bool,
    date: &[u8],
) {
    let h = h1::ResponseHead {
        status,
        minor,
        keep_alive,
        body: if chunked {
            BodyLen::Chunked
        } else {
            BodyLen::Length(len)
        },
        content_type: Some("application/octet-stream"),
        allow: None,
    };
    h1::put_response_head(out, &h, date);
}
