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
        let n = (self.len - self.at).min(pattern::FRAME as u64) as usize;
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
                let n = ((b - a + 1) as usize).min(pattern::FRAME);
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
    let (parts, body) = req.into_parts();
    let body = if let Some(routes::Reply {
        body: RouteBody::Sink,
        ..
    }) = &reply
    {
        return sink(body).await;
    } else if matches!(&reply, Some(r) if r.body == RouteBody::Echo) {
        Some(body)
    } else {
        let _ = http_body_util::Limited::new(body, 1 << 20).collect().await;
        None
    };
    let req = hyper::Request::from_parts(parts, ());
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let b = hyper::Response::builder().header("date", date);
    if let Some(root) = root {
        return file_answer(b, &root, &req, (&method, &target), head);
    }
    let Some(reply) = reply else {
        return Err(io::Error::other("no route without --root"));
    };
    routed(b, reply, &req, body, head).await
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
    let body = file_body(&plan, head)?;
    b.body(body).map_err(io::Error::other)
}

/// A file plan's body: its ranges, with a multipart head before each
/// when there are several.
fn file_body(plan: &FileAnswer, head: bool) -> io::Result<Body> {
    Ok(match (plan, head) {
        (_, true) | (FileAnswer::NotModified { .. }, _) => empty(),
        (FileAnswer::Text { body, .. }, _) => full(body.clone()),
        (
            FileAnswer::File {
                path,
                ranges,
                boundary,
                ..
            },
            _,
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
    req: &hyper::Request<()>,
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
            let got = body.collect().await.map_err(io::Error::other)?.to_bytes();
            b = b
                .header(
                    "content-type",
                    ct.unwrap_or(hyper::header::HeaderValue::from_static(
                        "application/octet-stream",
                    )),
                )
                .header("content-length", got.len());
            full(got)
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
    let service = hyper::service::service_fn(move |req| {
        let early = !handshake.complete();
        let alt_svc = alt_svc.clone();
        let a = answer(req, (scheme, early), root.clone(), lim);
        async move {
            let mut r = a.await?;
            if let Some(v) = alt_svc {
                r.headers_mut().insert("alt-svc", v);
            }
            Ok::<_, io::Error>(r)
        }
    });
    let mut b = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new());
    b.timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(None);
    // `--notsent-lowat` bounds the per-stream send buffer too: above the
    // socket it is the same queue a later stream's answer waits behind.
    if let Some(n) = send_buf {
        b.max_send_buf_size(n);
    }
    let conn = b.serve_connection(hyper_util::rt::TokioIo::new(io), service);
    tokio::pin!(conn);
    let mut stopping = false;
    loop {
        tokio::select! {
            r = conn.as_mut() => return r.map_err(io::Error::other),
            _ = stop.wait(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}
