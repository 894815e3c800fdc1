//! The HTTP client: hyper's connection-level API (HTTP/1.1, and HTTP/2
//! by ALPN or prior knowledge), our pool in front.
//!
//! HTTP/1.1 connections carry one request at a time, so the pool keeps
//! several per origin and the idle-selection policy picks among them.
//! An HTTP/2 connection carries every stream to its origin at once: the
//! client keeps exactly one per origin (opened once, under a per-origin
//! lock) and every request shares it, as browsers do; the policy still
//! chooses among HTTP/1.1 connections, within and across origins.
//!
//! The response head is also read off the wire as it arrived (a tap below
//! hyper), so `-i`/`-v` print the server's version, reason phrase and
//! header case, which hyper normalises.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tcpwise_pool::{History, IdlePool, Limits, Policy};
use tcpwise_tcp::{BufferPolicy, BurstMeter, ReadSizer, SizedRead, TcpInfo};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Semaphore;
use url::Url;

/// Client configuration.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Which idle connection to reuse.
    pub policy: Policy,
    /// Pool limits.
    pub limits: Limits,
    /// Connections per origin at once; further requests wait.
    pub max_conns_per_origin: usize,
    /// Read sizing of every connection.
    pub read_sizing: ReadSizer,
    /// Socket buffers (default: autotuned).
    pub buffers: BufferPolicy,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Extra trusted CA certificates (PEM), for `--cacert`.
    pub extra_ca: Vec<Vec<u8>>,
    /// Accept any server certificate (`-k`; handshake signatures are
    /// still checked).
    pub insecure: bool,
    /// Largest body to accept (`--max-filesize`); more is an error.
    pub max_body: Option<u64>,
    /// Fixed addresses for host:port pairs (curl's `--resolve`).
    pub resolve: Vec<Resolve>,
    /// Address family to connect with (curl's `-4`/`-6`).
    pub family: Family,
    /// HTTP version to speak.
    pub version: Version,
}

/// Which addresses a name may resolve to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Family {
    /// Any (IPv6 and IPv4 in the resolver's order).
    #[default]
    Any,
    /// IPv4 only (`-4`).
    V4,
    /// IPv6 only (`-6`).
    V6,
}

/// The HTTP version a client speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.1 only.
    #[default]
    Http1,
    /// HTTP/2 when TLS's ALPN agrees, HTTP/1.1 otherwise (curl's `--http2`;
    /// `http://` stays HTTP/1.1, as curl's does without the Upgrade dance).
    Http2,
    /// HTTP/2 from the first byte, also on `http://` (h2c,
    /// `--http2-prior-knowledge`).
    Http2PriorKnowledge,
}

/// `HOST:PORT:ADDR[,ADDR...]`: connect to ADDR for HOST:PORT (curl's
/// `--resolve`; an IPv6 ADDR may be bracketed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolve {
    /// The name as in the URL.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Where to connect.
    pub addrs: Vec<IpAddr>,
}

/// A `--resolve` entry that is not `HOST:PORT:ADDRESS[,ADDRESS...]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not HOST:PORT:ADDRESS[,ADDRESS...]")]
pub struct BadResolve(pub String);

impl std::str::FromStr for Resolve {
    type Err = BadResolve;

    fn from_str(s: &str) -> Result<Resolve, BadResolve> {
        let bad = || BadResolve(s.to_string());
        let (host, rest) = s.split_once(':').ok_or_else(bad)?;
        let (port, addrs) = rest.split_once(':').ok_or_else(bad)?;
        let port = port.parse().map_err(|_| bad())?;
        let addrs = addrs
            .split(',')
            .map(|a| a.trim_start_matches('[').trim_end_matches(']').parse())
            .collect::<Result<Vec<IpAddr>, _>>()
            .map_err(|_| bad())?;
        if host.is_empty() || addrs.is_empty() {
            return Err(bad());
        }
        Ok(Resolve {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            addrs,
        })
    }
}

/// An HTTP proxy: plain `http://` requests go to it in absolute form,
/// `https://` ones through a CONNECT tunnel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Proxy {
    /// Proxy host.
    pub host: String,
    /// Proxy port (curl's default 1080).
    pub port: u16,
    /// `Proxy-Authorization` value (`Basic ...`), from `user:pw@` in its URL.
    pub auth: Option<String>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            policy: Policy::MaxBurst,
            limits: Limits::default(),
            max_conns_per_origin: 6,
            read_sizing: ReadSizer::default(),
            buffers: BufferPolicy::Auto,
            connect_timeout: Duration::from_secs(10),
            extra_ca: Vec::new(),
            insecure: false,
            max_body: None,
            resolve: Vec::new(),
            family: Family::Any,
            version: Version::Http1,
        }
    }
}

/// What can go wrong; messages name the host, the cause is kept as the
/// error's source (print with `{:#}` to see the whole chain).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Not a usable URL.
    #[error("bad URL '{url}': {why}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// Name resolution failed.
    #[error("cannot resolve {host}")]
    Dns {
        /// The host name.
        host: String,
        /// The resolver's error.
        #[source]
        source: std::io::Error,
    },
    /// TCP connect failed (the last address tried).
    #[error("cannot connect to {target}")]
    Connect {
        /// host:port.
        target: String,
        /// Why (refused, unreachable, timed out).
        #[source]
        source: std::io::Error,
    },
    /// TLS could not be configured (`--cacert`).
    #[error("TLS set-up failed")]
    TlsSetup(#[from] crate::tls::TlsSetupError),
    /// The TLS handshake failed.
    #[error("TLS with {target} failed")]
    Tls {
        /// host:port.
        target: String,
        /// The handshake's error.
        #[source]
        source: std::io::Error,
    },
    /// The server's response was not valid HTTP/1.1, or the connection failed before it.
    #[error("bad response from {target}")]
    Protocol {
        /// host:port.
        target: String,
        /// hyper's error.
        #[source]
        source: hyper::Error,
    },
    /// The body ended early or the connection broke while reading it.
    #[error("response body from {target} failed after {after} bytes")]
    Body {
        /// host:port.
        target: String,
        /// Bytes received before it failed.
        after: u64,
        /// hyper's error.
        #[source]
        source: hyper::Error,
    },
    /// The proxy refused the CONNECT tunnel (curl's 56).
    #[error("the proxy {proxy} refused CONNECT to {target}: {status}")]
    Tunnel {
        /// The proxy, host:port.
        proxy: String,
        /// The tunnel's end.
        target: String,
        /// The proxy's status line.
        status: String,
    },
    /// Redirects went on past the limit.
    #[error("more than {max} redirects, the last to {url}")]
    TooManyRedirects {
        /// The limit.
        max: usize,
        /// Where the last one pointed.
        url: String,
    },
    /// Writing the body to its destination failed.
    #[error("cannot write the response body")]
    Sink(#[source] std::io::Error),
    /// The server's certificate is not trusted (expired, another name,
    /// self-signed, unknown issuer): curl's 60.
    #[error(
        "the certificate of {target} is not trusted: {why} (--cacert FILE trusts its issuer; -k skips the check)"
    )]
    Certificate {
        /// host:port.
        target: String,
        /// rustls's reason.
        why: String,
    },
    /// The body grew past `--max-filesize` (curl's 63).
    #[error("the body of {target} is larger than --max-filesize {max} bytes")]
    TooLarge {
        /// host:port.
        target: String,
        /// The limit.
        max: u64,
    },
    /// Socket buffers.
    #[error(transparent)]
    Buffer(#[from] tcpwise_tcp::BufferError),
}

impl HttpError {
    /// The body ended before its `Content-Length` or its last chunk: the
    /// connection closed early (curl's 18, a partial file).
    pub fn is_partial(&self) -> bool {
        let HttpError::Body { source, .. } = self else {
            return false;
        };
        if source.is_incomplete_message() {
            return true;
        }
        let mut cause = std::error::Error::source(source);
        while let Some(c) = cause {
            if let Some(io) = c.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::UnexpectedEof
            {
                return true;
            }
            cause = c.source();
        }
        false
    }

    fn url(url: impl ToString, why: impl ToString) -> HttpError {
        HttpError::Url {
            url: url.to_string(),
            why: why.to_string(),
        }
    }

    fn connect(target: &str, source: std::io::Error) -> HttpError {
        HttpError::Connect {
            target: target.to_string(),
            source,
        }
    }
}

/// How [`Client::fetch`] treats redirects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redirects {
    /// Follow 301, 302, 303, 307 and 308 (curl's `-L`).
    pub follow: bool,
    /// At most this many (curl's default is 50; we stop at 20 like browsers).
    pub max: usize,
}

impl Default for Redirects {
    fn default() -> Self {
        Redirects {
            follow: false,
            max: 20,
        }
    }
}

/// A failed fetch: the error and the responses received before it.
#[derive(Debug)]
pub struct FetchError {
    /// What went wrong.
    pub error: HttpError,
    /// Responses of the redirect chain before the failure.
    pub chain: Vec<Response>,
}

/// A request.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method.
    pub method: hyper::Method,
    /// Absolute http or https URL.
    pub url: Url,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body (empty for none).
    pub body: Bytes,
    /// Go through this proxy.
    pub proxy: Option<Proxy>,
}

impl Request {
    /// A GET of `url`.
    pub fn get(url: Url) -> Request {
        Request {
            method: hyper::Method::GET,
            url,
            headers: Vec::new(),
            body: Bytes::new(),
            proxy: None,
        }
    }
}

/// Timings of one response, ms since the request started.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    /// Name resolution (new connections).
    pub dns_ms: Option<f64>,
    /// TCP connect done (new connections).
    pub connect_ms: Option<f64>,
    /// TLS handshake done (https, new connections).
    pub tls_ms: Option<f64>,
    /// Request handed to the connection.
    pub request_written_ms: f64,
    /// Response head received.
    pub first_byte_ms: f64,
    /// Last body byte received.
    pub body_done_ms: f64,
    /// Everything, retries included.
    pub total_ms: f64,
}

impl Timings {
    /// Request written to last byte: the load time of the object itself.
    pub fn load_ms(&self) -> f64 {
        self.body_done_ms - self.request_written_ms
    }
}

/// A response head, as [`Client::request_streaming`] shows it before the
/// body.
#[derive(Debug)]
pub struct Head<'a> {
    /// The URL asked for.
    pub url: &'a Url,
    /// Status code.
    pub status: u16,
    /// `HTTP/1.0`, `HTTP/1.1` or `HTTP/2`.
    pub version: &'a str,
    /// Reason phrase as received.
    pub reason: &'a str,
    /// Headers as received.
    pub headers: &'a [(String, String)],
    /// The request head as sent.
    pub request_head: &'a str,
    /// The connection.
    pub conn: &'a ConnReport,
}

impl Head<'_> {
    /// First value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The status line and headers as curl's `-i` prints them.
    pub fn text(&self) -> String {
        head_text(self.version, self.status, self.reason, self.headers)
    }
}

/// What to do with a body after its head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadAction {
    /// Read it into the sink.
    Read,
    /// Do not read it (curl's `-f` on an error status).
    Discard,
}

/// A status line and headers as received, with the blank line that ends
/// them (CRLF, as on the wire and as curl's `-i` prints them). A missing
/// reason phrase on HTTP/1.x is the standard one; HTTP/2 has none.
pub fn head_text(version: &str, status: u16, reason: &str, headers: &[(String, String)]) -> String {
    let standard = hyper::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let reason = if reason.is_empty() && version != "HTTP/2" {
        standard
    } else {
        reason
    };
    // HTTP/2 has no reason phrase; curl still writes the space before it.
    let mut out = format!("{version} {status}");
    if !reason.is_empty() || version == "HTTP/2" {
        out.push(' ');
        out.push_str(reason);
    }
    out.push_str("\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out
}

/// Which connection served a response and why.
#[derive(Debug, Clone, Serialize)]
pub struct ConnReport {
    /// Connection id (per client, from 1).
    pub id: u64,
    /// Taken from the idle pool.
    pub reused: bool,
    /// Pool policy.
    pub policy: String,
    /// Why this connection, when reused.
    pub reason: Option<String>,
    /// Idle candidates and their scores, when reused.
    pub candidates: Vec<(u64, f64)>,
    /// History after this response.
    pub history: History,
    /// Largest per-activation burst seen, bytes.
    #[serde(rename = "max_burst_bytes")]
    pub max_burst: u64,
    /// Largest burst the connection had moved before this request (what
    /// the pool judged it by), bytes.
    #[serde(rename = "burst_before_bytes")]
    pub burst_before: u64,
    /// TCP_INFO when the request started.
    pub tcp_info_start: Option<TcpInfo>,
    /// TCP_INFO when the body ended.
    pub tcp_info_end: Option<TcpInfo>,
    /// Local address.
    pub local: Option<SocketAddr>,
    /// Server address.
    pub peer: Option<SocketAddr>,
    /// Largest read size the connection asked for: its read buffer, bytes.
    #[serde(rename = "max_read_bytes")]
    pub max_read: usize,
    /// Socket buffers the kernel held after the policy (and its warnings:
    /// a pinned size above `net.core.rmem_max` is silently capped).
    pub buffers: tcpwise_tcp::AppliedBuffers,
}

/// A response whose body went to the caller's sink.
#[derive(Debug, Clone, Serialize)]
pub struct Response {
    /// The URL asked for.
    pub url: String,
    /// Status code.
    pub status: u16,
    /// Protocol as the server wrote it: `HTTP/1.0`, `HTTP/1.1`, `HTTP/2`.
    pub version: String,
    /// Reason phrase as the server wrote it (empty for HTTP/2).
    pub reason: String,
    /// Headers, in order, names in the server's case (HTTP/2: lower case).
    pub headers: Vec<(String, String)>,
    /// Bytes of the response head (status line, headers, blank line).
    pub head_bytes: u64,
    /// The request head as sent (HTTP/1.1 text; for HTTP/2 its pseudo-
    /// headers written as curl's `-v` shows them).
    pub request_head: String,
    /// Request body bytes sent.
    pub upload_bytes: u64,
    /// Body bytes delivered.
    pub body_bytes: u64,
    /// Timings.
    pub timings: Timings,
    /// The connection.
    pub conn: ConnReport,
    /// Whether the request was retried on a fresh connection.
    pub retried: bool,
}

/// A request header as people write it: `Name: value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header(pub String, pub String);

/// A header argument that is not `Name: value`.
#[derive(Debug, thiserror::Error)]
#[error("'{0}' is not a header 'Name: value' with a valid name")]
pub struct BadHeader(String);

impl std::str::FromStr for Header {
    type Err = BadHeader;

    fn from_str(s: &str) -> Result<Header, BadHeader> {
        let (k, v) = s.split_once(':').ok_or_else(|| BadHeader(s.to_string()))?;
        let k = k.trim();
        let token = |b: u8| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b);
        if k.is_empty() || !k.bytes().all(token) {
            return Err(BadHeader(s.to_string()));
        }
        Ok(Header(k.to_string(), v.trim().to_string()))
    }
}

impl Response {
    /// The status line and headers, as curl's `-i` prints them, with the
    /// blank line that ends them.
    pub fn head_text(&self) -> String {
        head_text(&self.version, self.status, &self.reason, &self.headers)
    }

    /// Two lines for `--timing`: status, size, connection and every time;
    /// then which connection the pool chose and why, with its history.
    pub fn timing_report(&self) -> String {
        let t = &self.timings;
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
        let c = &self.conn;
        format!(
            "{}  {} B  conn #{} {}  dns {}  connect {}  tls {}  written {:.1}  first byte {:.1}  done {:.1}  total {:.1} ms\n    pool {}: {}; history: {} requests, {} B read, largest burst {} B, up to {} B per RTT; rtt {}",
            self.status,
            self.body_bytes,
            c.id,
            if c.reused { "reused" } else { "new" },
            ms(t.dns_ms),
            ms(t.connect_ms),
            ms(t.tls_ms),
            t.request_written_ms,
            t.first_byte_ms,
            t.body_done_ms,
            t.total_ms,
            c.policy,
            c.reason.as_deref().unwrap_or("new connection"),
            c.history.requests,
            c.history.bytes_read,
            c.max_burst,
            c.history.max_per_rtt,
            c.tcp_info_end.as_ref().map_or("-".to_string(), |i| format!(
                "{:.1} ms, cwnd {}",
                f64::from(i.rtt_us) / 1e3,
                i.snd_cwnd
            )),
        )
    }

    /// The static-receive-buffer diagnosis of this response (the one
    /// `tcpwise perf` gives, from [`tcpwise_tcp::path::diagnose_rcvbuf`]):
    /// `Some` only when a pinned `SO_RCVBUF` held the transfer at its cap.
    pub fn rcvbuf_diagnosis(&self) -> Option<String> {
        let asked = self.conn.buffers.rcv_asked?;
        let rtt_ms = f64::from(self.conn.tcp_info_end.as_ref()?.rtt_us) / 1e3;
        let secs = (self.timings.body_done_ms - self.timings.first_byte_ms) / 1e3;
        let window = tcpwise_tcp::path::advertised_window(
            self.conn.buffers.rcv_held,
            tcpwise_tcp::path::LINUX_WINDOW_FRACTION,
        );
        // Too short to say: a transfer of a few windows never reaches its cap.
        if self.body_bytes as f64 <= 4.0 * window || secs <= 0.0 {
            return None;
        }
        tcpwise_tcp::path::diagnose_rcvbuf(&tcpwise_tcp::path::RcvbufCase {
            asked,
            held: self.conn.buffers.rcv_held,
            rtt_ms,
            goodput_mbit: self.body_bytes as f64 * 8.0 / secs / 1e6,
            steady_mbit: None,
            // A window's worth arrived per RTT: the window was the limit.
            window_bound: self.conn.history.max_per_rtt as f64 >= 0.8 * window,
            path_rate_bps: None,
        })
        .map(|d| d.text)
    }

    /// First value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Plain or TLS transport.
enum Transport {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
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
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The response head as it came off the wire (HTTP/1.x): armed before a
/// request is sent, it keeps the bytes read until a final (non-1xx) head
/// is complete. At most [`TAP_MAX`] bytes.
#[derive(Default)]
struct TapState {
    armed: bool,
    buf: Vec<u8>,
}

const TAP_MAX: usize = 64 * 1024;

/// A transport with a [`TapState`] on its reads.
struct Tapped<T> {
    inner: T,
    tap: Arc<Mutex<TapState>>,
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

/// How requests reach a connection.
#[derive(Clone)]
enum Sender {
    H1(Arc<tokio::sync::Mutex<http1::SendRequest<Full<Bytes>>>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

impl Sender {
    fn is_closed(&self) -> bool {
        match self {
            Sender::H1(s) => s.try_lock().map(|s| s.is_closed()).unwrap_or(false),
            Sender::H2(s) => s.is_closed(),
        }
    }
    fn h2(&self) -> bool {
        matches!(self, Sender::H2(_))
    }
    async fn send(
        &self,
        req: hyper::Request<Full<Bytes>>,
    ) -> hyper::Result<hyper::Response<hyper::body::Incoming>> {
        match self {
            Sender::H1(s) => {
                // An idle connection whose last body just ended may not be
                // marked ready yet: wait for it (an error if it closed).
                let mut s = s.lock().await;
                s.ready().await?;
                s.send_request(req).await
            }
            Sender::H2(s) => {
                let mut s = s.clone();
                s.ready().await?;
                s.send_request(req).await
            }
        }
    }
}

/// A live connection.
#[derive(Clone)]
struct Conn {
    sender: Sender,
    /// A duplicate of the socket's fd, for TCP_INFO.
    fd: Arc<OwnedFd>,
    history: History,
    burst: BurstMeter,
    local: Option<SocketAddr>,
    peer: Option<SocketAddr>,
    peak_read: Arc<std::sync::atomic::AtomicUsize>,
    /// What the kernel held after the buffer policy, and its warnings.
    buffers: tcpwise_tcp::AppliedBuffers,
    /// The raw response head, HTTP/1.x.
    tap: Arc<Mutex<TapState>>,
}

/// Where a connection goes: scheme, host, port, and the proxy it goes
/// through.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
    via: Option<Proxy>,
}

impl Origin {
    fn target(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

struct Inner {
    cfg: ClientConfig,
    epoch: Instant,
    pool: Mutex<IdlePool<Origin, Conn>>,
    limits: Mutex<HashMap<Origin, Arc<Semaphore>>>,
    /// The one HTTP/2 connection of each origin.
    h2: Mutex<HashMap<Origin, Conn>>,
    /// Held while an origin's connection is being opened with HTTP/2 on
    /// offer, so parallel requests wait for it rather than open their own.
    opening: Mutex<HashMap<Origin, Arc<tokio::sync::Mutex<()>>>>,
    next_id: std::sync::atomic::AtomicU64,
    tls: Mutex<Option<Arc<rustls::ClientConfig>>>,
}

/// The client. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

/// RFC 9110's idempotent methods: the ones a client may send again
/// (a stale pooled connection, `--retry`) without doing a thing twice.
pub fn idempotent(m: &hyper::Method) -> bool {
    matches!(
        *m,
        hyper::Method::GET
            | hyper::Method::HEAD
            | hyper::Method::PUT
            | hyper::Method::DELETE
            | hyper::Method::OPTIONS
            | hyper::Method::TRACE
    )
}

/// Header names as curl and hyper's `title_case_headers` write them.
fn title_case(name: &str) -> String {
    let mut up = true;
    name.chars()
        .map(|c| {
            let o = if up { c.to_ascii_uppercase() } else { c };
            up = c == '-';
            o
        })
        .collect()
}

/// The request head as it goes out, for `-v` and `%{size_request}`:
/// HTTP/1.1 text with hyper's title case; HTTP/2 written as curl shows it.
fn request_head(r: &hyper::Request<Full<Bytes>>, h2: bool) -> String {
    let mut out = if h2 {
        let uri = r.uri();
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let mut s = format!("{} {path} HTTP/2\r\n", r.method());
        if let Some(a) = uri.authority() {
            s.push_str(&format!("Host: {a}\r\n"));
        }
        s
    } else {
        format!("{} {} HTTP/1.1\r\n", r.method(), r.uri())
    };
    for (k, v) in r.headers() {
        let name = if h2 {
            k.as_str().to_string()
        } else {
            title_case(k.as_str())
        };
        out.push_str(&format!(
            "{name}: {}\r\n",
            String::from_utf8_lossy(v.as_bytes())
        ));
    }
    out.push_str("\r\n");
    out
}

/// Opens a CONNECT tunnel to `target` through the proxy on `stream`.
async fn tunnel(
    stream: &mut TcpStream,
    target: &str,
    dial: &str,
    p: &Proxy,
) -> Result<(), HttpError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut head = format!(
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nUser-Agent: tcpwise/{}\r\n",
        env!("CARGO_PKG_VERSION")
    );
    if let Some(a) = &p.auth {
        head.push_str(&format!("Proxy-Authorization: {a}\r\n"));
    }
    head.push_str("Proxy-Connection: Keep-Alive\r\n\r\n");
    let io = |e| HttpError::connect(dial, e);
    stream.write_all(head.as_bytes()).await.map_err(io)?;
    // The server speaks only after our TLS hello, so whatever arrives now
    // is the proxy's answer.
    let mut buf = Vec::new();
    let answer = loop {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.map_err(io)?;
        if n == 0 {
            break None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(h) = final_head(&buf) {
            break Some(h);
        }
        if buf.len() > TAP_MAX {
            break None;
        }
    };
    match answer {
        Some(h) if (200..300).contains(&h.status) => Ok(()),
        other => Err(HttpError::Tunnel {
            proxy: dial.to_string(),
            target: target.to_string(),
            status: other.map_or("no answer".into(), |h| {
                format!("{} {} {}", h.version, h.status, h.reason)
            }),
        }),
    }
}

/// Most payload delivered within any window of one RTT (the receiver's
/// view of a congestion window's worth).
struct PerRtt {
    window: u64,
    /// (arrival time, bytes before this frame) of frames within one window.
    samples: VecDeque<(u64, u64)>,
    max: u64,
}

impl PerRtt {
    fn record(&mut self, now: u64, before: u64, after: u64) {
        self.samples.push_back((now, before));
        while let Some(&(t, _)) = self.samples.front() {
            if now.saturating_sub(t) > self.window {
                self.samples.pop_front();
            } else {
                break;
            }
        }
        let base = self.samples.front().map_or(before, |s| s.1);
        self.max = self.max.max(after - base);
    }
}

impl Client {
    /// A client with `cfg`.
    pub fn new(cfg: ClientConfig) -> Client {
        Client {
            inner: Arc::new(Inner {
                pool: Mutex::new(IdlePool::new(cfg.policy, cfg.limits)),
                cfg,
                epoch: Instant::now(),
                limits: Mutex::new(HashMap::new()),
                h2: Mutex::new(HashMap::new()),
                opening: Mutex::new(HashMap::new()),
                next_id: std::sync::atomic::AtomicU64::new(0),
                tls: Mutex::new(None),
            }),
        }
    }

    fn now(&self) -> u64 {
        self.inner.epoch.elapsed().as_nanos() as u64
    }

    fn origin(req: &Request) -> Result<Origin, HttpError> {
        let url = &req.url;
        let scheme = url.scheme().to_string();
        if scheme != "http" && scheme != "https" {
            return Err(HttpError::url(
                url,
                "only http:// and https:// are supported",
            ));
        }
        // An IPv6 literal without its brackets, so it resolves and connects.
        let host = match url.host() {
            Some(url::Host::Ipv6(a)) => a.to_string(),
            Some(h) => h.to_string(),
            None => return Err(HttpError::url(url, "no host")),
        };
        let port = url.port_or_known_default().unwrap_or(80);
        Ok(Origin {
            scheme,
            host,
            port,
            via: req.proxy.clone(),
        })
    }

    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, HttpError> {
        let mut g = self.inner.tls.lock().expect("lock");
        if let Some(c) = g.as_ref() {
            return Ok(c.clone());
        }
        let mut c = if self.inner.cfg.insecure {
            crate::tls::insecure_client_config()?
        } else {
            crate::tls::client_config(&self.inner.cfg.extra_ca)?
        };
        if self.inner.cfg.version != Version::Http1 {
            let mut h2 = (*c).clone();
            h2.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            c = Arc::new(h2);
        }
        *g = Some(c.clone());
        Ok(c)
    }

    /// The addresses of `host:port`: `--resolve` first, then the system's
    /// resolver, filtered by `-4`/`-6`.
    async fn addresses(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, HttpError> {
        let fixed = self
            .inner
            .cfg
            .resolve
            .iter()
            .find(|r| r.port == port && r.host.eq_ignore_ascii_case(host));
        let local = host.eq_ignore_ascii_case("localhost")
            || host.to_ascii_lowercase().ends_with(".localhost");
        let all: Vec<SocketAddr> = match fixed {
            Some(r) => r.addrs.iter().map(|a| SocketAddr::new(*a, port)).collect(),
            // RFC 6761: localhost is the loopback, both families, whatever
            // /etc/hosts says (curl resolves it the same way).
            None if local => vec![
                SocketAddr::new(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST), port),
                SocketAddr::new(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), port),
            ],
            None => {
                let lookup = if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                };
                tokio::net::lookup_host(lookup)
                    .await
                    .map_err(|source| HttpError::Dns {
                        host: host.to_string(),
                        source,
                    })?
                    .collect()
            }
        };
        let family = self.inner.cfg.family;
        let kept: Vec<SocketAddr> = all
            .into_iter()
            .filter(|a| match family {
                Family::Any => true,
                Family::V4 => a.is_ipv4(),
                Family::V6 => a.is_ipv6(),
            })
            .collect();
        if kept.is_empty() {
            let which = if family == Family::V4 { "IPv4" } else { "IPv6" };
            return Err(HttpError::Dns {
                host: host.to_string(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("no {which} address"),
                ),
            });
        }
        Ok(kept)
    }

    async fn connect(
        &self,
        origin: &Origin,
        start: Instant,
        t: &mut Timings,
    ) -> Result<Conn, HttpError> {
        let target = origin.target();
        let (dial_host, dial_port) = match &origin.via {
            Some(p) => (p.host.clone(), p.port),
            None => (origin.host.clone(), origin.port),
        };
        let dial = if dial_host.contains(':') {
            format!("[{dial_host}]:{dial_port}")
        } else {
            format!("{dial_host}:{dial_port}")
        };
        let addrs = self.addresses(&dial_host, dial_port).await?;
        t.dns_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        let mut stream = None;
        for addr in addrs {
            let raw = socket2::Socket::new(
                socket2::Domain::for_address(addr),
                socket2::Type::STREAM,
                Some(socket2::Protocol::TCP),
            )
            .map_err(|e| HttpError::connect(&dial, e))?;
            let applied = self.inner.cfg.buffers.apply(&raw)?;
            raw.set_nonblocking(true)
                .map_err(|e| HttpError::connect(&dial, e))?;
            let sock = TcpSocket::from_std_stream(std::net::TcpStream::from(raw));
            match tokio::time::timeout(self.inner.cfg.connect_timeout, sock.connect(addr)).await {
                Ok(Ok(s)) => {
                    stream = Some((s, applied));
                    break;
                }
                Ok(Err(e)) => last = std::io::Error::new(e.kind(), format!("{addr}: {e}")),
                Err(_) => {
                    last = std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "{addr}: no answer within {:.1} s (--connect-timeout)",
                            self.inner.cfg.connect_timeout.as_secs_f64()
                        ),
                    )
                }
            }
        }
        let (mut stream, buffers) = stream.ok_or_else(|| HttpError::connect(&dial, last))?;
        t.connect_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        let _ = stream.set_nodelay(true);
        let fd = stream
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| HttpError::connect(&dial, e))?;
        let (local, peer) = (stream.local_addr().ok(), stream.peer_addr().ok());
        if let Some(p) = &origin.via
            && origin.scheme == "https"
        {
            tunnel(&mut stream, &target, &dial, p).await?;
        }
        let mut h2 = origin.scheme == "http"
            && origin.via.is_none()
            && self.inner.cfg.version == Version::Http2PriorKnowledge;
        let transport = if origin.scheme == "https" {
            let name =
                rustls_pki_types::ServerName::try_from(origin.host.clone()).map_err(|e| {
                    HttpError::Tls {
                        target: target.clone(),
                        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
                    }
                })?;
            let tls = tokio_rustls::TlsConnector::from(self.tls_config()?)
                .connect(name, stream)
                .await
                .map_err(|source| {
                    let cert = source
                        .get_ref()
                        .and_then(|e| e.downcast_ref::<rustls::Error>())
                        .and_then(|e| match e {
                            rustls::Error::InvalidCertificate(c) => Some(format!("{c:?}")),
                            _ => None,
                        });
                    match cert {
                        Some(why) => HttpError::Certificate {
                            target: target.clone(),
                            why,
                        },
                        None => HttpError::Tls {
                            target: target.clone(),
                            source,
                        },
                    }
                })?;
            t.tls_ms = Some(start.elapsed().as_secs_f64() * 1e3);
            h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            Transport::Tls(Box::new(tls))
        } else {
            Transport::Plain(stream)
        };
        let tap = Arc::new(Mutex::new(TapState::default()));
        let tapped = Tapped {
            inner: transport,
            tap: tap.clone(),
        };
        let sized = SizedRead::new(tapped, self.inner.cfg.read_sizing);
        let peak_read = sized.peak_handle();
        let io = TokioIo::new(sized);
        let protocol = |source| HttpError::Protocol {
            target: target.clone(),
            source,
        };
        let sender = if h2 {
            let (sender, conn) = http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                .handshake::<_, Full<Bytes>>(io)
                .await
                .map_err(protocol)?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Sender::H2(sender)
        } else {
            let (sender, conn) = http1::Builder::new()
                .title_case_headers(true)
                .handshake::<_, Full<Bytes>>(io)
                .await
                .map_err(protocol)?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Sender::H1(Arc::new(tokio::sync::Mutex::new(sender)))
        };
        let id = self
            .inner
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        Ok(Conn {
            sender,
            fd: Arc::new(fd),
            history: History {
                id,
                created_at: self.now(),
                ..History::default()
            },
            burst: BurstMeter::default(),
            local,
            peer,
            peak_read,
            buffers,
            tap,
        })
    }

    fn semaphore(&self, origin: &Origin) -> Arc<Semaphore> {
        self.inner
            .limits
            .lock()
            .expect("lock")
            .entry(origin.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(self.inner.cfg.max_conns_per_origin.max(1))))
            .clone()
    }

    /// Sends `req`, handing body bytes to `sink` as they arrive.
    pub async fn request(
        &self,
        req: &Request,
        sink: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> Result<Response, HttpError> {
        self.request_streaming(req, |_| Ok(HeadAction::Read), sink)
            .await
    }

    /// [`Client::request`], showing the response head to `on_head` before
    /// any body byte: it may stop the body from being read
    /// ([`HeadAction::Discard`]: the connection is then closed, not
    /// pooled), or fail the request with an I/O error of its own (a head
    /// it cannot write, `HttpError::Sink`).
    pub async fn request_streaming(
        &self,
        req: &Request,
        mut on_head: impl FnMut(&Head) -> std::io::Result<HeadAction>,
        mut sink: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> Result<Response, HttpError> {
        let origin = Self::origin(req)?;
        let sem = self.semaphore(&origin);
        let _permit = sem.acquire_owned().await.expect("never closed");
        let start = Instant::now();
        let mut timings = Timings::default();
        let (mut conn, mut report) = self.take(&origin, start, &mut timings).await?;
        let mut retried = false;
        let target = origin.target();
        let (resp, request_head) = loop {
            let hreq = self.build(req, &origin, conn.sender.h2())?;
            let head = request_head(&hreq, conn.sender.h2());
            timings.request_written_ms = start.elapsed().as_secs_f64() * 1e3;
            report.tcp_info_start = TcpInfo::of(&conn.fd);
            conn.burst.begin();
            {
                let mut tap = conn.tap.lock().expect("lock");
                tap.armed = !conn.sender.h2();
                tap.buf.clear();
            }
            match conn.sender.send(hreq).await {
                Ok(r) => break (r, head),
                Err(e) if report.reused && !retried && idempotent(&req.method) => {
                    // The server may have closed the idle connection as we
                    // sent: retry once on a fresh one.
                    let _ = e;
                    retried = true;
                    timings = Timings::default();
                    conn = self.connect(&origin, start, &mut timings).await?;
                    if conn.sender.h2() {
                        self.inner
                            .h2
                            .lock()
                            .expect("lock")
                            .insert(origin.clone(), conn.clone());
                    }
                    report = self.report(&conn, None);
                }
                Err(source) => return Err(HttpError::Protocol { target, source }),
            }
        };
        timings.first_byte_ms = start.elapsed().as_secs_f64() * 1e3;
        let status = resp.status().as_u16();
        let version = match resp.version() {
            hyper::Version::HTTP_10 => "HTTP/1.0",
            hyper::Version::HTTP_2 => "HTTP/2",
            _ => "HTTP/1.1",
        }
        .to_string();
        let raw = {
            let mut tap = conn.tap.lock().expect("lock");
            tap.armed = false;
            final_head(&tap.buf).filter(|h| h.status == status)
        };
        let (headers, reason, head_bytes) = match raw {
            Some(h) => (h.headers, h.reason, h.len as u64),
            None => {
                let headers: Vec<(String, String)> = resp
                    .headers()
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().to_string(),
                            String::from_utf8_lossy(v.as_bytes()).to_string(),
                        )
                    })
                    .collect();
                let len = headers
                    .iter()
                    .map(|(k, v)| k.len() + v.len() + 4)
                    .sum::<usize>();
                (headers, String::new(), (len + 15) as u64)
            }
        };
        let action = on_head(&Head {
            url: &req.url,
            status,
            version: &version,
            reason: &reason,
            headers: &headers,
            request_head: &request_head,
            conn: &report,
        })
        .map_err(HttpError::Sink)?;
        // Discarded: the body is not read, and an HTTP/1.1 connection with
        // a body left in it cannot be reused.
        let discard = action == HeadAction::Discard;
        let rtt_ns = report
            .tcp_info_start
            .as_ref()
            .map_or(0, |i| u64::from(i.rtt_us) * 1000);
        let mut per_rtt = PerRtt {
            window: rtt_ns.max(1),
            samples: VecDeque::new(),
            max: 0,
        };
        let mut body = resp.into_body();
        let mut got = 0u64;
        while !discard && let Some(frame) = body.frame().await {
            let frame = frame.map_err(|source| HttpError::Body {
                target: target.clone(),
                after: got,
                source,
            })?;
            if let Some(d) = frame.data_ref() {
                let now = self.now();
                let before = got;
                got += d.len() as u64;
                conn.burst.record(now, d.len() as u64, rtt_ns);
                per_rtt.record(now, before, got);
                if let Some(max) = self.inner.cfg.max_body
                    && got > max
                {
                    return Err(HttpError::TooLarge {
                        target: target.clone(),
                        max,
                    });
                }
                sink(d).map_err(HttpError::Sink)?;
            }
        }
        timings.body_done_ms = start.elapsed().as_secs_f64() * 1e3;
        timings.total_ms = timings.body_done_ms;
        conn.burst.end();
        let end_info = TcpInfo::of(&conn.fd);
        conn.history.requests += 1;
        conn.history.bytes_read += got;
        conn.history.max_burst = conn.burst.max_activation;
        conn.history.max_per_rtt = conn.history.max_per_rtt.max(per_rtt.max);
        if let Some(i) = &end_info {
            conn.history.srtt = u64::from(i.rtt_us) * 1000;
            conn.history.rto = u64::from(i.rto_us) * 1000;
        }
        report.tcp_info_end = end_info;
        report.history = conn.history.clone();
        report.max_burst = conn.burst.max_activation;
        report.max_read = conn.peak_read.load(std::sync::atomic::Ordering::Relaxed);
        if !discard || conn.sender.h2() {
            self.give_back(origin, conn, got, per_rtt.max);
        }
        Ok(Response {
            url: req.url.to_string(),
            status,
            version,
            reason,
            headers,
            head_bytes,
            request_head,
            upload_bytes: req.body.len() as u64,
            body_bytes: got,
            timings,
            conn: report,
            retried,
        })
    }

    fn report(&self, conn: &Conn, choice: Option<tcpwise_pool::Choice>) -> ConnReport {
        ConnReport {
            id: conn.history.id,
            reused: choice.is_some(),
            policy: self.inner.cfg.policy.name().to_string(),
            reason: choice.as_ref().map(|c| c.reason.clone()),
            candidates: choice.map(|c| c.candidates).unwrap_or_default(),
            history: conn.history.clone(),
            max_burst: conn.burst.max_activation,
            burst_before: conn.history.max_burst,
            tcp_info_start: None,
            tcp_info_end: None,
            local: conn.local,
            peer: conn.peer,
            max_read: conn.peak_read.load(std::sync::atomic::Ordering::Relaxed),
            buffers: conn.buffers.clone(),
        }
    }

    /// The origin's HTTP/2 connection, when it is open, reported as reused.
    fn h2_conn(&self, origin: &Origin) -> Option<(Conn, ConnReport)> {
        let mut map = self.inner.h2.lock().expect("lock");
        let conn = map.get(origin)?.clone();
        if conn.sender.is_closed() {
            map.remove(origin);
            return None;
        }
        let mut report = self.report(&conn, None);
        report.reused = true;
        report.reason = Some(
            "HTTP/2: the origin's one connection, shared by every stream (the pool policy applies to HTTP/1.1 connections)"
                .into(),
        );
        Some((conn, report))
    }

    async fn take(
        &self,
        origin: &Origin,
        start: Instant,
        t: &mut Timings,
    ) -> Result<(Conn, ConnReport), HttpError> {
        // With HTTP/2 on offer, one connection per origin: whoever comes
        // first opens it, the others wait and share it.
        let _opening = if self.inner.cfg.version != Version::Http1 {
            if let Some(c) = self.h2_conn(origin) {
                return Ok(c);
            }
            let lock = self
                .inner
                .opening
                .lock()
                .expect("lock")
                .entry(origin.clone())
                .or_default()
                .clone();
            let g = lock.lock_owned().await;
            if let Some(c) = self.h2_conn(origin) {
                return Ok(c);
            }
            Some(g)
        } else {
            None
        };
        let now = self.now();
        let (got, closed) =
            self.inner
                .pool
                .lock()
                .expect("lock")
                .checkout(now, origin, |c: &Conn| !c.sender.is_closed());
        drop(closed);
        if let Some((mut conn, history, choice)) = got {
            conn.history = history;
            let report = self.report(&conn, Some(choice));
            return Ok((conn, report));
        }
        let conn = self.connect(origin, start, t).await?;
        if conn.sender.h2() {
            self.inner
                .h2
                .lock()
                .expect("lock")
                .insert(origin.clone(), conn.clone());
        }
        let report = self.report(&conn, None);
        Ok((conn, report))
    }

    fn give_back(&self, origin: Origin, conn: Conn, got: u64, per_rtt: u64) {
        if conn.sender.h2() {
            // Streams run at once: add this one's share to the shared record.
            if let Some(c) = self.inner.h2.lock().expect("lock").get_mut(&origin) {
                c.history.requests += 1;
                c.history.bytes_read += got;
                c.history.max_burst = c.history.max_burst.max(conn.history.max_burst);
                c.history.max_per_rtt = c.history.max_per_rtt.max(per_rtt);
                c.history.srtt = conn.history.srtt;
                c.history.rto = conn.history.rto;
            }
            return;
        }
        if conn.sender.is_closed() {
            return;
        }
        let history = conn.history.clone();
        let closed =
            self.inner
                .pool
                .lock()
                .expect("lock")
                .checkin(self.now(), origin, conn, history);
        drop(closed);
    }

    fn build(
        &self,
        req: &Request,
        origin: &Origin,
        h2: bool,
    ) -> Result<hyper::Request<Full<Bytes>>, HttpError> {
        let path = match req.url.query() {
            Some(q) => format!("{}?{q}", req.url.path()),
            None => req.url.path().to_string(),
        };
        let default_port = if origin.scheme == "https" { 443 } else { 80 };
        let host = if origin.port == default_port {
            req.url.host_str().unwrap_or_default().to_string()
        } else {
            format!("{}:{}", req.url.host_str().unwrap_or_default(), origin.port)
        };
        let proxied = origin.via.is_some() && origin.scheme == "http";
        let uri = if h2 {
            format!("{}://{host}{path}", origin.scheme)
        } else if proxied {
            format!("http://{host}{path}")
        } else {
            path
        };
        let mut b = hyper::Request::builder()
            .method(req.method.clone())
            .uri(uri);
        if h2 {
            b = b.version(hyper::Version::HTTP_2);
        }
        let has = |n: &str| req.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        if !has("host") && !h2 {
            b = b.header("host", host);
        }
        if proxied && let Some(auth) = origin.via.as_ref().and_then(|p| p.auth.as_deref()) {
            b = b.header("proxy-authorization", auth);
        }
        if !has("user-agent") {
            b = b.header("user-agent", concat!("tcpwise/", env!("CARGO_PKG_VERSION")));
        }
        if !has("accept") {
            b = b.header("accept", "*/*");
        }
        for (k, v) in &req.headers {
            // An empty value removes the header, as curl's `-H 'Name:'`.
            if !v.is_empty() {
                b = b.header(k.as_str(), v.as_str());
            }
        }
        let sends_body = !req.body.is_empty()
            || matches!(
                req.method,
                hyper::Method::POST | hyper::Method::PUT | hyper::Method::PATCH
            );
        if sends_body && !has("content-length") {
            b = b.header("content-length", req.body.len());
        }
        b.body(Full::new(req.body.clone()))
            .map_err(|e| HttpError::url(&req.url, format!("bad request header: {e}")))
    }

    /// Sends `req` and, with `redirects.follow`, the requests its redirects
    /// ask for (a 303, or a 301/302 after a POST, becomes a GET without a
    /// body, as browsers and curl do). `sink(hop, bytes)` gets every body
    /// byte with the number of the response in the chain it belongs to, so
    /// a caller can keep only the last one.
    pub async fn fetch(
        &self,
        req: Request,
        redirects: Redirects,
        mut sink: impl FnMut(usize, &[u8]) -> std::io::Result<()>,
    ) -> Result<Vec<Response>, FetchError> {
        let mut req = req;
        let mut chain: Vec<Response> = Vec::new();
        loop {
            let hop = chain.len();
            let resp = match self.request(&req, |d| sink(hop, d)).await {
                Ok(r) => r,
                Err(error) => return Err(FetchError { error, chain }),
            };
            let status = resp.status;
            let location = resp.header("location").map(str::to_string);
            chain.push(resp);
            let redirect = redirects.follow && matches!(status, 301 | 302 | 303 | 307 | 308);
            let (true, Some(loc)) = (redirect, location) else {
                return Ok(chain);
            };
            let next = match req.url.join(&loc) {
                Ok(u) => u,
                Err(e) => {
                    return Err(FetchError {
                        error: HttpError::url(&loc, e),
                        chain,
                    });
                }
            };
            if chain.len() > redirects.max {
                return Err(FetchError {
                    error: HttpError::TooManyRedirects {
                        max: redirects.max,
                        url: next.to_string(),
                    },
                    chain,
                });
            }
            if status == 303 || (matches!(status, 301 | 302) && req.method == hyper::Method::POST) {
                req.method = hyper::Method::GET;
                req.body = Bytes::new();
            }
            req.url = next;
        }
    }

    /// [`Client::fetch`], keeping only the last response's body: written to
    /// `to_file` (created, and truncated at every redirect) or returned.
    pub async fn fetch_last_body(
        &self,
        req: Request,
        redirects: Redirects,
        to_file: Option<&std::path::Path>,
    ) -> Result<(Vec<Response>, Vec<u8>), FetchError> {
        use std::io::{Seek, Write};
        let mut file = to_file
            .map(std::fs::File::create)
            .transpose()
            .map_err(|e| FetchError {
                error: HttpError::Sink(e),
                chain: Vec::new(),
            })?;
        let (mut body, mut hop) = (Vec::new(), 0);
        let chain = self
            .fetch(req, redirects, |h, d| {
                if h != hop {
                    hop = h;
                    body.clear();
                    if let Some(f) = file.as_mut() {
                        f.set_len(0)?;
                        f.rewind()?;
                    }
                }
                match file.as_mut() {
                    Some(f) => f.write_all(d),
                    None => {
                        body.extend_from_slice(d);
                        Ok(())
                    }
                }
            })
            .await?;
        Ok((chain, body))
    }

    /// Idle connections held for `url`'s origin.
    pub fn idle_count(&self, url: &Url) -> usize {
        Self::origin(&Request::get(url.clone()))
            .map_or(0, |o| self.inner.pool.lock().expect("lock").idle_count(&o))
    }
}
