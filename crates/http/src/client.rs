//! The HTTP/1.1 client: hyper's connection-level API, our pool in front.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
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
}

impl Request {
    /// A GET of `url`.
    pub fn get(url: Url) -> Request {
        Request {
            method: hyper::Method::GET,
            url,
            headers: Vec::new(),
            body: Bytes::new(),
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
    /// Status code.
    pub status: u16,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
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
        let reason = hyper::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let mut out = format!("HTTP/1.1 {} {reason}\n", self.status);
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\n"));
        }
        out.push('\n');
        out
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

/// A live connection.
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    /// A duplicate of the socket's fd, for TCP_INFO.
    fd: OwnedFd,
    history: History,
    burst: BurstMeter,
    local: Option<SocketAddr>,
    peer: Option<SocketAddr>,
    peak_read: Arc<std::sync::atomic::AtomicUsize>,
    /// What the kernel held after the buffer policy, and its warnings.
    buffers: tcpwise_tcp::AppliedBuffers,
}

type Origin = (String, String, u16);

struct Inner {
    cfg: ClientConfig,
    epoch: Instant,
    pool: Mutex<IdlePool<Origin, Conn>>,
    limits: Mutex<HashMap<Origin, Arc<Semaphore>>>,
    next_id: std::sync::atomic::AtomicU64,
    tls: Mutex<Option<Arc<rustls::ClientConfig>>>,
}

/// The client. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

fn idempotent(m: &hyper::Method) -> bool {
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
                next_id: std::sync::atomic::AtomicU64::new(0),
                tls: Mutex::new(None),
            }),
        }
    }

    fn now(&self) -> u64 {
        self.inner.epoch.elapsed().as_nanos() as u64
    }

    fn origin(url: &Url) -> Result<Origin, HttpError> {
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
        Ok((scheme, host, port))
    }

    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, HttpError> {
        let mut g = self.inner.tls.lock().expect("lock");
        if let Some(c) = g.as_ref() {
            return Ok(c.clone());
        }
        let c = if self.inner.cfg.insecure {
            crate::tls::insecure_client_config()?
        } else {
            crate::tls::client_config(&self.inner.cfg.extra_ca)?
        };
        *g = Some(c.clone());
        Ok(c)
    }

    async fn connect(
        &self,
        origin: &Origin,
        start: Instant,
        t: &mut Timings,
    ) -> Result<Conn, HttpError> {
        let (scheme, host, port) = origin;
        let target = format!("{host}:{port}");
        let lookup = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            target.clone()
        };
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host(lookup)
            .await
            .map_err(|source| HttpError::Dns {
                host: host.clone(),
                source,
            })?
            .collect();
        t.dns_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        let mut stream = None;
        for addr in addrs {
            let raw = socket2::Socket::new(
                socket2::Domain::for_address(addr),
                socket2::Type::STREAM,
                Some(socket2::Protocol::TCP),
            )
            .map_err(|e| HttpError::connect(&target, e))?;
            let applied = self.inner.cfg.buffers.apply(&raw)?;
            raw.set_nonblocking(true)
                .map_err(|e| HttpError::connect(&target, e))?;
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
        let (stream, buffers) = stream.ok_or_else(|| HttpError::connect(&target, last))?;
        t.connect_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        let _ = stream.set_nodelay(true);
        let fd = stream
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| HttpError::connect(&target, e))?;
        let (local, peer) = (stream.local_addr().ok(), stream.peer_addr().ok());
        let transport = if scheme == "https" {
            let name = rustls_pki_types::ServerName::try_from(host.clone()).map_err(|e| {
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
            Transport::Tls(Box::new(tls))
        } else {
            Transport::Plain(stream)
        };
        let sized = SizedRead::new(transport, self.inner.cfg.read_sizing);
        let peak_read = sized.peak_handle();
        let io = TokioIo::new(sized);
        let (sender, conn) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(io)
            .await
            .map_err(|source| HttpError::Protocol {
                target: target.clone(),
                source,
            })?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let id = self
            .inner
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        Ok(Conn {
            sender,
            fd,
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
        mut sink: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> Result<Response, HttpError> {
        let origin = Self::origin(&req.url)?;
        let sem = self.semaphore(&origin);
        let _permit = sem.acquire_owned().await.expect("never closed");
        let start = Instant::now();
        let mut timings = Timings::default();
        let (mut conn, mut report) = self.take(&origin, start, &mut timings).await?;
        let mut retried = false;
        let target = format!("{}:{}", origin.1, origin.2);
        let resp = loop {
            let hreq = self.build(req, &origin)?;
            timings.request_written_ms = start.elapsed().as_secs_f64() * 1e3;
            report.tcp_info_start = TcpInfo::of(&conn.fd);
            conn.burst.begin();
            match conn.sender.send_request(hreq).await {
                Ok(r) => break r,
                Err(e) if report.reused && !retried && idempotent(&req.method) => {
                    // The server may have closed the idle connection as we
                    // sent: retry once on a fresh one.
                    let _ = e;
                    retried = true;
                    timings = Timings::default();
                    conn = self.connect(&origin, start, &mut timings).await?;
                    report = self.report(&conn, None);
                }
                Err(source) => return Err(HttpError::Protocol { target, source }),
            }
        };
        timings.first_byte_ms = start.elapsed().as_secs_f64() * 1e3;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).to_string(),
                )
            })
            .collect();
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
        while let Some(frame) = body.frame().await {
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
        self.give_back(origin, conn);
        Ok(Response {
            status,
            headers,
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

    async fn take(
        &self,
        origin: &Origin,
        start: Instant,
        t: &mut Timings,
    ) -> Result<(Conn, ConnReport), HttpError> {
        let now = self.now();
        let (got, closed) =
            self.inner
                .pool
                .lock()
                .expect("lock")
                .checkout(now, origin, |c: &Conn| {
                    !c.sender.is_closed() && c.sender.is_ready()
                });
        drop(closed);
        if let Some((mut conn, history, choice)) = got {
            conn.history = history;
            let report = self.report(&conn, Some(choice));
            return Ok((conn, report));
        }
        let conn = self.connect(origin, start, t).await?;
        let report = self.report(&conn, None);
        Ok((conn, report))
    }

    fn give_back(&self, origin: Origin, conn: Conn) {
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
    ) -> Result<hyper::Request<Full<Bytes>>, HttpError> {
        let path = match req.url.query() {
            Some(q) => format!("{}?{q}", req.url.path()),
            None => req.url.path().to_string(),
        };
        let default_port = if origin.0 == "https" { 443 } else { 80 };
        let host = if origin.2 == default_port {
            req.url.host_str().unwrap_or_default().to_string()
        } else {
            format!("{}:{}", req.url.host_str().unwrap_or_default(), origin.2)
        };
        let mut b = hyper::Request::builder()
            .method(req.method.clone())
            .uri(path);
        let has = |n: &str| req.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        if !has("host") {
            b = b.header("host", host);
        }
        if !has("user-agent") {
            b = b.header("user-agent", concat!("tcpwise/", env!("CARGO_PKG_VERSION")));
        }
        if !has("accept") {
            b = b.header("accept", "*/*");
        }
        for (k, v) in &req.headers {
            b = b.header(k.as_str(), v.as_str());
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
        Self::origin(url).map_or(0, |o| self.inner.pool.lock().expect("lock").idle_count(&o))
    }
}
