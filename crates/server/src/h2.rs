//! `tcpwise serve` over HTTP/2: negotiated by ALPN (`h2`) on TLS, or
//! spoken from the first byte on plain TCP (prior knowledge, h2c: the
//! connection starts with the `PRI * HTTP/2.0` preface).
//!
//! The answers are the same ones HTTP/1.1 gets, from the same sans-IO
//! cores ([`super::routes::route`], [`super::files::plan`]); hyper's
//! HTTP/2 server does the framing, flow control and stream multiplexing,
//! since none of that is our contribution. Bodies stream from the
//! pattern or the file a frame at a time, so a 100 GB `/bytes/N` costs no
//! memory. What HTTP/2 leaves out: `--gzip` (HTTP/1.1 only) and the
//! access log's per-request line (HTTP/2 requests are counted per
//! connection in the log line that ends it).

use super::Limits;
use super::files::{self, FileAnswer};
use super::routes::{self, Body as RouteBody};
use super::zero_rtt::Handshake;
use crate::pattern;
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::Frame;
use std::io::{self, Read, Seek, SeekFrom};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tcpwise_outcome::Shutdown;

/// The connection preface an h2c client starts with (RFC 9113 3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub(super) type Body = BoxBody<Bytes, io::Error>;

/// Bytes a response body hands hyper at once: one HTTP/2 DATA frame of
/// the default size, so a stream held at a zero window keeps no more.
const H2_FRAME: usize = 16 * 1024;

/// `len` bytes of the pattern from offset 0, a frame at a time.
struct PatternBody {
    at: u64,
    len: u64,
}

impl hyper::body::Body for PatternBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if self.at >= self.len {
            return Poll::Ready(None);
        }
        let n = (self.len - self.at).min(H2_FRAME as u64) as usize;
        let s = pattern::slice(self.at, n);
        self.at += s.len() as u64;
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(s)))))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.len - self.at)
    }
}

/// The byte ranges of a file plan, with the multipart framing between
/// them, read a frame at a time.
struct FileBody {
    file: std::fs::File,
    /// Its descriptor's place in `--root`'s budget, given back with it.
    _permit: tokio::sync::OwnedSemaphorePermit,
    /// What is left to send: literal bytes or a range of the file.
    parts: std::collections::VecDeque<Part>,
}

enum Part {
    Literal(Bytes),
    Range(u64, u64),
}

impl hyper::body::Body for FileBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let me = &mut *self;
        let Some(part) = me.parts.pop_front() else {
            return Poll::Ready(None);
        };
        Poll::Ready(Some(match part {
            Part::Literal(b) => Ok(Frame::data(b)),
            Part::Range(a, b) => {
                let n = ((b - a + 1) as usize).min(H2_FRAME);
                let mut buf = vec![0u8; n];
                // A file that shrank under us fails the stream: its length
                // was promised.
                let r = me
                    .file
                    .seek(SeekFrom::Start(a))
                    .and_then(|_| me.file.read_exact(&mut buf));
                if a + (n as u64) <= b {
                    me.parts.push_front(Part::Range(a + n as u64, b));
                }
                r.map(|_| Frame::data(Bytes::from(buf)))
            }
        }))
    }
}

fn full(b: impl Into<Bytes>) -> Body {
    http_body_util::Full::new(b.into())
        .map_err(|never| match never {})
        .boxed()
}

fn empty() -> Body {
    full(Bytes::new())
}

/// The answer to one request, whatever carries it: hyper's HTTP/2
/// server, or HTTP/3 ([`super::h3`], its request body adapted).
pub(super) async fn answer<B>(
    req: hyper::Request<B>,
    (scheme, early): (&'static str, bool),
    root: Option<Arc<files::Root>>,
    lim: Limits,
) -> Result<hyper::Response<Body>, io::Error>
where
    B: hyper::body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let method = req.method().as_str().to_string();
    let head = method == "HEAD";
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    // The router, not the path, says whether the body is used (an echo);
    // one we will not use is read before answering, up to a limit:
    // answering first makes hyper reset the stream, which clients report
    // as an error (curl's 92) instead of the status.
    let host = req.uri().authority().map(|a| a.as_str()).or_else(|| {
        req.headers()
            .get(hyper::header::HOST)
            .and_then(|v| v.to_str().ok())
    });
    // Early data (0-RTT) that may be a replay: the unsafe methods get 425.
    let too_early = early.then(|| routes::too_early(&method)).flatten();
    let root = root.filter(|_| too_early.is_none());
    let reply = too_early.or_else(|| {
        root.is_none()
            .then(|| routes::route(&method, &target, (scheme, host), &lim))
    });
    let reply = reply.map(|r| over_max_body(r, req.headers(), lim.max_body));
    let (parts, body) = req.into_parts();
    // `unread`: a request body we answer without reading to its end. It
    // lives as long as the answer does: dropped sooner, h2 resets the
    // stream before the answer's HEADERS leave, and curl reports its 92
    // instead of the status.
    let (body, unread) = match &reply {
        Some(r) if r.body == RouteBody::Sink => return sink(body).await,
        Some(r) if r.body == RouteBody::Echo => (Some(body), None),
        // A 413 is sent before the body is read (RFC 9113 8.1: the
        // stream is then reset).
        Some(r) if r.status == 413 => (None, Some(body)),
        _ => {
            // Twice the idle time: over HTTP/2 the connection's own
            // watchdog closes a stalled body first, at the idle time.
            (None, drain(body, DRAIN, 2 * lim.idle_timeout).await)
        }
    };
    let r = respond(reply, (parts, root), (&method, &target, head), body, lim).await?;
    Ok(match unread {
        Some(u) => r.map(|answer| {
            Holding {
                answer,
                _unread: std::sync::Mutex::new(u),
            }
            .boxed()
        }),
        None => r,
    })
}

/// The answer once the request body has been dealt with.
async fn respond<B>(
    reply: Option<routes::Reply>,
    (parts, root): (hyper::http::request::Parts, Option<Arc<files::Root>>),
    (method, target, head): (&str, &str, bool),
    body: Option<B>,
    lim: Limits,
) -> Result<hyper::Response<Body>, io::Error>
where
    B: hyper::body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let req = hyper::Request::from_parts(parts, ());
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let b = hyper::Response::builder().header("date", date);
    if let Some(root) = root {
        return file_answer(b, &root, &req, (method, target), head);
    }
    let Some(reply) = reply else {
        return Err(io::Error::other("no route without --root"));
    };
    routed(b, reply, (&req, lim.max_body), body, head).await
}

/// Request body bytes a route that takes none reads and discards before
/// answering (answering first makes clients report the reset as an
/// error, curl's 92); past it, or after `--idle-timeout` without a frame,
/// it answers anyway. Nothing of it is kept.
const DRAIN: u64 = 1 << 20;

/// Reads and discards up to `max` bytes of `body`, each frame within
/// `idle`; the body back if it did not end.
async fn drain<B>(mut body: B, max: u64, idle: std::time::Duration) -> Option<B>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    let mut read = 0u64;
    while read <= max {
        match tokio::time::timeout(idle, body.frame()).await {
            Ok(Some(Ok(f))) => read += f.data_ref().map_or(0, |d| d.len() as u64),
            Ok(None) => return None,
            Ok(Some(Err(_))) | Err(_) => break,
        }
    }
    Some(body)
}

/// An answer that keeps the request body it did not read until it ends.
struct Holding<B> {
    answer: Body,
    /// Never polled; in a mutex only to be `Sync`.
    _unread: std::sync::Mutex<B>,
}

impl<B: Unpin> hyper::body::Body for Holding<B> {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        Pin::new(&mut self.answer).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.answer.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.answer.size_hint()
    }
}

/// A 413 in place of an `/echo` whose Content-Length is over `--max-body`
/// (HTTP/1.1's answer), decided before any of the body is read.
fn over_max_body(reply: routes::Reply, headers: &hyper::HeaderMap, max: u64) -> routes::Reply {
    let len = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match len {
        Some(n) if reply.body == RouteBody::Echo && n > max => routes::Reply::text(
            413,
            format!("/echo takes bodies up to {max} bytes (--max-body)\n"),
        ),
        _ => reply,
    }
}

/// `/echo`'s answer over HTTP/2 and HTTP/3: the request body passed on a
/// frame at a time as it comes, so it costs its flow-control windows, not
/// its length; past `max` bytes the stream fails (a body without a
/// Content-Length cannot be refused before it is read).
struct EchoBody<B> {
    /// In a mutex only to be `Sync` as a `BoxBody` must be (an h3 request
    /// body is not): polling takes `&mut`, so it is never locked.
    body: std::sync::Mutex<B>,
    read: u64,
    max: u64,
}

impl<B> hyper::body::Body for EchoBody<B>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        loop {
            let body = self.body.get_mut().unwrap_or_else(|p| p.into_inner());
            let frame = match std::task::ready!(Pin::new(body).poll_frame(cx)) {
                None => return Poll::Ready(None),
                Some(Err(e)) => return Poll::Ready(Some(Err(io::Error::other(e)))),
                Some(Ok(f)) => f,
            };
            // Trailers are not echoed.
            let Ok(data) = frame.into_data() else {
                continue;
            };
            self.read += data.len() as u64;
            if self.read > self.max {
                let max = self.max;
                return Poll::Ready(Some(Err(io::Error::other(format!(
                    "/echo body over --max-body {max}"
                )))));
            }
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
    }
}

/// Reads an upload to its end and discards it, however long (`/nq/upload`).
async fn sink<B>(mut body: B) -> Result<hyper::Response<Body>, io::Error>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut read = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(io::Error::other)?;
        read += frame.data_ref().map_or(0, |d| d.len() as u64);
    }
    let text = format!("received {read} bytes\n");
    hyper::Response::builder()
        .status(200)
        .header("content-type", "text/plain; charset=utf-8")
        .header("content-length", text.len())
        .body(full(text))
        .map_err(io::Error::other)
}

/// The answer from `--root`: the file plan's status, headers and body.
fn file_answer(
    mut b: hyper::http::response::Builder,
    root: &files::Root,
    req: &hyper::Request<()>,
    (method, target): (&str, &str),
    head: bool,
) -> Result<hyper::Response<Body>, io::Error> {
    let h = |n: &str| {
        req.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let cond = files::Conditional {
        range: h("range"),
        if_range: h("if-range"),
        if_none_match: h("if-none-match"),
        if_modified_since: h("if-modified-since"),
        if_match: h("if-match"),
        if_unmodified_since: h("if-unmodified-since"),
    };
    let plan = files::plan(root, method, target, &cond);
    b = b.status(plan.status());
    if let Some(n) = plan.body_len() {
        b = b.header("content-length", n);
    }
    let (ct, headers) = plan.type_and_headers();
    if let Some(ct) = ct {
        b = b.header("content-type", ct);
    }
    for (k, v) in headers {
        b = b.header(*k, v.as_str());
    }
    let permit = match (&plan, head) {
        (FileAnswer::File { .. }, false) => match root.file_permit() {
            Some(p) => Some(p),
            None => {
                // Every descriptor of the budget is held by other streams.
                let text = "too many files are being sent at once; try again\n";
                return hyper::Response::builder()
                    .status(503)
                    .header("retry-after", "1")
                    .header("content-type", "text/plain; charset=utf-8")
                    .header("content-length", text.len())
                    .body(full(text))
                    .map_err(io::Error::other);
            }
        },
        _ => None,
    };
    let body = file_body(&plan, head, permit)?;
    b.body(body).map_err(io::Error::other)
}

/// A file plan's body: its ranges, with a multipart head before each
/// when there are several.
fn file_body(
    plan: &FileAnswer,
    head: bool,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> io::Result<Body> {
    Ok(match (plan, head, permit) {
        (_, true, _)
        | (FileAnswer::NotModified { .. }, ..)
        | (FileAnswer::File { .. }, _, None) => empty(),
        (FileAnswer::Text { body, .. }, ..) => full(body.clone()),
        (
            FileAnswer::File {
                path,
                ranges,
                boundary,
                ..
            },
            _,
            Some(permit),
        ) => {
            let mut parts = std::collections::VecDeque::new();
            for (i, &(a, z)) in ranges.iter().enumerate() {
                if boundary.is_some() {
                    parts.push_back(Part::Literal(plan.part_head(i).into()));
                }
                parts.push_back(Part::Range(a, z));
                if boundary.is_some() {
                    parts.push_back(Part::Literal(Bytes::from_static(b"\r\n")));
                }
            }
            if boundary.is_some() {
                parts.push_back(Part::Literal(plan.multipart_end().into()));
            }
            FileBody {
                file: std::fs::File::open(path)?,
                _permit: permit,
                parts,
            }
            .boxed()
        }
    })
}

/// The answer the router chose: its status, headers and body (after its
/// delay, for `/delay/MS`).
async fn routed<B>(
    mut b: hyper::http::response::Builder,
    reply: routes::Reply,
    (req, max_body): (&hyper::Request<()>, u64),
    body: Option<B>,
    head: bool,
) -> Result<hyper::Response<Body>, io::Error>
where
    B: hyper::body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    b = b.status(reply.status);
    if let Some(allow) = reply.allow {
        b = b.header("allow", allow);
    }
    if reply.delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(reply.delay_ms)).await;
    }
    let body = match reply.body {
        RouteBody::Text(t) => {
            b = b
                .header("content-type", "text/plain; charset=utf-8")
                .header("content-length", t.len());
            if head { empty() } else { full(t.into_owned()) }
        }
        RouteBody::Json(t) => {
            b = b
                .header("content-type", "application/json")
                .header("content-length", t.len());
            if head { empty() } else { full(t) }
        }
        RouteBody::Pattern { len, .. } => {
            b = b
                .header("content-type", "application/octet-stream")
                .header("content-length", len);
            if head {
                empty()
            } else {
                PatternBody { at: 0, len }.boxed()
            }
        }
        RouteBody::Echo => {
            let ct = req.headers().get("content-type").cloned();
            let Some(body) = body else {
                return Err(io::Error::other("echo without a body"));
            };
            b = b.header(
                "content-type",
                ct.unwrap_or(hyper::header::HeaderValue::from_static(
                    "application/octet-stream",
                )),
            );
            if let Some(n) = req.headers().get(hyper::header::CONTENT_LENGTH) {
                b = b.header("content-length", n);
            }
            if head {
                empty()
            } else {
                EchoBody {
                    body: std::sync::Mutex::new(body),
                    read: 0,
                    max: max_body,
                }
                .boxed()
            }
        }
        RouteBody::File | RouteBody::Sink => empty(),
    };
    b.body(body).map_err(io::Error::other)
}

/// Serves one HTTP/2 connection until the client closes it or `stop`
/// fires (then a GOAWAY lets streams in flight finish).
pub async fn serve_connection<S>(
    io: S,
    (scheme, send_buf, handshake): (&'static str, Option<usize>, Handshake),
    root: Option<Arc<files::Root>>,
    lim: Limits,
    stop: Shutdown,
) -> io::Result<()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // hyper calls the service as a request's HEADERS frame is decoded:
    // the handshake's state then says whether it came as early data.
    // `serve --http3`: every answer advertises it (hyper runs streams on
    // tasks of their own, so the value is read here, on the connection's).
    let alt_svc = super::head::ALT_SVC
        .try_with(|a| a.clone())
        .ok()
        .flatten()
        .and_then(|a| hyper::header::HeaderValue::from_str(&a).ok());
    let act = Arc::new(Activity::new());
    let acts = act.clone();
    let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let early = !handshake.complete();
        let alt_svc = alt_svc.clone();
        let guard = StreamGuard::open(&acts);
        let permit = STREAMS.try_acquire().ok();
        let act = acts.clone();
        let req = req.map(|body| Marking {
            body,
            act,
            _hold: (),
        });
        let a = answer(req, (scheme, early), root.clone(), lim);
        async move {
            // Past the budget the stream is reset (hyper sends
            // RST_STREAM for a service error): a 503 would be one more
            // stream a zero window can hold.
            let Some(permit) = permit else {
                drop(guard);
                return Err(io::Error::other(
                    "too many HTTP/2 streams in flight on this server",
                ));
            };
            let mut r = a.await?;
            if let Some(v) = alt_svc {
                r.headers_mut().insert("alt-svc", v);
            }
            guard.0.touch();
            let (act, _hold) = (guard.0.clone(), (guard, permit));
            Ok::<_, io::Error>(r.map(|body| Marking { body, act, _hold }.boxed()))
        }
    });
    let exec = super::h2_watch::StreamExec {
        idle: lim.idle_timeout,
    };
    let mut b = hyper::server::conn::http2::Builder::new(exec);
    b.timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(None)
        .max_concurrent_streams(MAX_STREAMS)
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONN_WINDOW)
        .max_header_list_size(MAX_HEADER_LIST);
    // `--notsent-lowat` bounds the per-stream send buffer too: above the
    // socket it is the same queue a later stream's answer waits behind.
    b.max_send_buf_size(send_buf.unwrap_or(SEND_BUF).min(SEND_BUF));
    let conn = b.serve_connection(hyper_util::rt::TokioIo::new(io), service);
    tokio::pin!(conn);
    let mut stopping = false;
    loop {
        let (due, _) = act.deadline(&lim);
        tokio::select! {
            r = conn.as_mut() => return r.map_err(io::Error::other),
            _ = stop.wait(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
            () = tokio::time::sleep_until(due.into()) => {
                // Progress may have moved the deadline while we slept.
                let (due, why) = act.deadline(&lim);
                if due <= std::time::Instant::now() {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, why));
                }
            }
        }
    }
}

/// Streams one connection runs at once (`SETTINGS_MAX_CONCURRENT_STREAMS`;
/// RFC 9113 5.1.2 asks for no fewer than 100; hyper's default is 200).
pub const MAX_STREAMS: u32 = 100;
/// Request body bytes a stream may send before we read them
/// (`SETTINGS_INITIAL_WINDOW_SIZE`; hyper's default, 1 MiB).
pub const STREAM_WINDOW: u32 = 1 << 20;
/// Request body bytes all streams of a connection may send before we read
/// them: the most unread input a connection holds (hyper's default, 1 MiB).
pub const CONN_WINDOW: u32 = 1 << 20;
/// Response bytes a stream queues above the socket at most (hyper's
/// default is 400 KiB: with 100 streams held at a zero window, 40 MB a
/// connection).
pub const SEND_BUF: usize = 16 * 1024;
/// Largest header list a request may have (`SETTINGS_MAX_HEADER_LIST_SIZE`,
/// hyper's default).
pub const MAX_HEADER_LIST: u32 = 16 * 1024;

/// What a connection's streams are doing, for its timeouts: HTTP/1.1's
/// header and idle timeouts, held per connection for HTTP/2.
struct Activity {
    start: std::time::Instant,
    /// Requests whose answer has not ended (its body sent or dropped).
    open: std::sync::atomic::AtomicUsize,
    /// Requests decoded so far.
    requests: std::sync::atomic::AtomicU64,
    /// When a stream last made progress (a request, a request body frame,
    /// a response frame), in ns from `start`.
    last: std::sync::atomic::AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            start: std::time::Instant::now(),
            open: 0.into(),
            requests: 0.into(),
            last: 0.into(),
        }
    }

    fn touch(&self) {
        let ns = self.start.elapsed().as_nanos() as u64;
        self.last.store(ns, std::sync::atomic::Ordering::Relaxed);
    }

    /// When the connection is closed, and why, as things stand: no
    /// request by `--header-timeout` (a half preface, SETTINGS and then
    /// nothing, a header block that never ends); else nothing open for
    /// `--idle-timeout`; else no stream's progress for `--idle-timeout`
    /// (a body that never comes, a window held at zero).
    fn deadline(&self, lim: &Limits) -> (std::time::Instant, &'static str) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.requests.load(Relaxed) == 0 {
            return (
                self.start + lim.header_timeout,
                "HTTP/2: no complete request within --header-timeout",
            );
        }
        let last = self.start + std::time::Duration::from_nanos(self.last.load(Relaxed));
        let why = if self.open.load(Relaxed) == 0 {
            "HTTP/2: idle longer than --idle-timeout"
        } else {
            "HTTP/2: no stream made progress for --idle-timeout (a body or a window stalled)"
        };
        (last + lim.idle_timeout, why)
    }
}

/// One open stream of a connection's [`Activity`]: counted until dropped.
struct StreamGuard(Arc<Activity>);

impl StreamGuard {
    fn open(act: &Arc<Activity>) -> StreamGuard {
        use std::sync::atomic::Ordering::Relaxed;
        act.requests.fetch_add(1, Relaxed);
        act.open.fetch_add(1, Relaxed);
        act.touch();
        StreamGuard(act.clone())
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0
            .open
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        // A stream reset for stalling did not move its connection.
        if !super::h2_watch::stalled() {
            self.0.touch();
        }
    }
}

/// HTTP/2 streams the whole server answers at once. A stream held at a
/// zero window costs about 27 KB of RSS (its task, hyper's state, a file
/// descriptor under `--root`; measured by the test
/// `http2_attackers_are_closed_in_time_and_bounded`: 50 connections of 100
/// such streams took 164 MB, with a cap of 2,048 108 MB), so this bounds
/// those streams' memory at about 30 MB however many connections hold
/// them; past it a stream is reset at once (a 503 would be one more
/// stream to hold). Ten connections of 100 busy streams fill it.
pub const MAX_STREAMS_TOTAL: usize = 1024;

static STREAMS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_STREAMS_TOTAL);

/// A body that marks its connection's progress with each frame, holding
/// `_hold` until it ends: a response holds its stream's count and its
/// place in [`STREAMS`], a request nothing.
struct Marking<B, H> {
    body: B,
    act: Arc<Activity>,
    _hold: H,
}

impl<B, H> hyper::body::Body for Marking<B, H>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    H: Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let r = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(Some(Ok(_))) = &r {
            self.act.touch();
            super::h2_watch::touch();
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
