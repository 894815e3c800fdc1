//! What the connections of a run share: the target and its request,
//! the end of the run, `-n`'s budget, the stop signal ([`Shared`]), and
//! each thread's statistics ([`Stats`]), for HTTP/1.1 ([`crate::run`])
//! HTTP/2 ([`crate::h2`]) and HTTP/3 ([`crate::h3`]) alike, so both report the same way.

use crate::{BenchError, Errors, Options};
use bytes::Bytes;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tcpwise_outcome::Shutdown;
use tokio::io::{AsyncRead, AsyncWrite};

pub(crate) trait Io: AsyncRead + AsyncWrite + Unpin {}
impl<T: AsyncRead + AsyncWrite + Unpin> Io for T {}

/// What every connection of a run needs to know.
pub(crate) struct Shared {
    pub(crate) addr: SocketAddr,
    pub(crate) host: String,
    pub(crate) tls: Option<tokio_rustls::TlsConnector>,
    /// Every URL's request, serialised; the run takes them in turn.
    pub(crate) requests: Vec<Vec<u8>>,
    /// Requests started so far: which URL is next ([`Shared::next_url`]).
    pub(crate) turn: std::sync::atomic::AtomicUsize,
    pub(crate) head_only: bool,
    pub(crate) start: Instant,
    pub(crate) end: Option<Instant>,
    /// Requests left to send (`-n`); negative once exhausted.
    pub(crate) budget: Option<AtomicI64>,
    pub(crate) rate: Option<f64>,
    pub(crate) connections: usize,
    pub(crate) timeout: Duration,
    pub(crate) done: Arc<AtomicU64>,
    /// HTTP/2 with this many streams per connection (h2load's -m).
    pub(crate) h2: Option<StreamRequests>,
    /// HTTP/3: the QUIC client config (the streams' plan is `h2`'s).
    pub(crate) h3: Option<quinn::ClientConfig>,
    /// SIGINT or SIGTERM: every connection stops, the report covers the
    /// time so far (wrk prints its report on Ctrl-C).
    pub(crate) stop: Shutdown,
}

impl Shared {
    /// The index of the URL the next request goes to (the URLs in turn,
    /// across every connection of the run, so `-n` splits evenly).
    pub(crate) fn next_url(&self) -> usize {
        self.turn.fetch_add(1, Ordering::Relaxed)
    }

    /// Takes one request from `-n`'s budget; false once it is spent.
    pub(crate) fn take_one(&self) -> bool {
        self.budget
            .as_ref()
            .is_none_or(|b| b.fetch_sub(1, Ordering::Relaxed) > 0)
    }
}

/// One thread's statistics.
pub(crate) struct Stats {
    pub(crate) latency: Histogram<u64>,
    pub(crate) ttfb: Histogram<u64>,
    pub(crate) status: BTreeMap<u16, u64>,
    pub(crate) errors: Errors,
    pub(crate) first_error: Option<String>,
    pub(crate) requests: u64,
    pub(crate) sent: u64,
    pub(crate) connects: u64,
    pub(crate) served: u64,
    pub(crate) bytes_read: u64,
    pub(crate) bytes_written: u64,
}

pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 3_600_000_000_000, 3).expect("bounds")
}

impl Stats {
    pub(crate) fn new() -> Stats {
        Stats {
            latency: histogram(),
            ttfb: histogram(),
            status: BTreeMap::new(),
            errors: Errors::default(),
            first_error: None,
            requests: 0,
            sent: 0,
            connects: 0,
            served: 0,
            bytes_read: 0,
            bytes_written: 0,
        }
    }

    /// A response that completed: `due` is when it was due (sent, in a
    /// closed loop), `first_byte` when its head began to arrive.
    pub(crate) fn done(
        &mut self,
        shared: &Shared,
        due: Instant,
        first_byte: Instant,
        status: u16,
        read: u64,
    ) {
        let now = Instant::now();
        self.requests += 1;
        self.bytes_read += read;
        let _ = self
            .latency
            .record(((now - due).as_nanos() as u64).max(1_000));
        let _ = self
            .ttfb
            .record(((first_byte.max(due) - due).as_nanos() as u64).max(1_000));
        *self.status.entry(status).or_default() += 1;
        shared.done.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn error(&mut self, kind: fn(&mut Errors) -> &mut u64, what: String) {
        *kind(&mut self.errors) += 1;
        self.first_error.get_or_insert(what);
    }

    pub(crate) fn merge(&mut self, o: Stats) {
        let _ = self.latency.add(&o.latency);
        let _ = self.ttfb.add(&o.ttfb);
        for (k, v) in o.status {
            *self.status.entry(k).or_default() += v;
        }
        self.errors.add(&o.errors);
        if self.first_error.is_none() {
            self.first_error = o.first_error;
        }
        self.requests += o.requests;
        self.sent += o.sent;
        self.connects += o.connects;
        self.served += o.served;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
    }
}

pub(crate) async fn connect(shared: &Shared) -> std::io::Result<Box<dyn Io>> {
    let s = tokio::net::TcpStream::connect(shared.addr).await?;
    s.set_nodelay(true)?;
    match &shared.tls {
        None => Ok(Box::new(s)),
        Some(tls) => {
            let name = rustls_pki_types::ServerName::try_from(shared.host.clone())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            Ok(Box::new(tls.connect(name, s).await?))
        }
    }
}

/// What every HTTP/2 stream sends, built once.
pub(crate) struct StreamRequests {
    /// Streams per connection.
    pub(crate) streams: usize,
    pub(crate) method: http::Method,
    pub(crate) uris: Vec<http::Uri>,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Option<Bytes>,
}

impl StreamRequests {
    pub(crate) fn new(o: &Options) -> Result<StreamRequests, BenchError> {
        let bad = |m: String| BenchError::Usage(m);
        let method = http::Method::from_bytes(o.method.as_bytes())
            .map_err(|_| bad(format!("'{}' is not an HTTP method", o.method)))?;
        let uris = std::iter::once(&o.url)
            .chain(&o.more_urls)
            .map(|u| {
                u.as_str()
                    .parse::<http::Uri>()
                    .map_err(|e| bad(format!("{u}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut headers = http::HeaderMap::new();
        for (k, v) in o
            .headers
            .iter()
            .filter(|(_, v)| v != tcpwise_client::REMOVE)
        {
            // Connection-specific headers are not HTTP/2's (RFC 9113 8.2.2).
            if [
                "host",
                "connection",
                "keep-alive",
                "transfer-encoding",
                "upgrade",
            ]
            .iter()
            .any(|h| k.eq_ignore_ascii_case(h))
            {
                continue;
            }
            let name = http::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| bad(format!("'{k}' is not a header name")))?;
            let value = http::HeaderValue::from_str(v)
                .map_err(|_| bad(format!("'{v}' is not a header value")))?;
            headers.append(name, value);
        }
        Ok(StreamRequests {
            streams: o.streams,
            method,
            uris,
            headers,
            body: o.body.clone().map(Bytes::from),
        })
    }

    /// The `k`-th request of a stream (the URLs in turn).
    pub(crate) fn request(&self, k: usize) -> http::Request<()> {
        let mut r = http::Request::new(());
        *r.method_mut() = self.method.clone();
        *r.uri_mut() = self.uris[k % self.uris.len()].clone();
        *r.headers_mut() = self.headers.clone();
        r
    }
}

/// What one attempt to open a connection came to.
pub(crate) enum Opened<T> {
    /// Open (and counted).
    Ready(T),
    /// Failed (and counted): try again.
    Retry,
    /// The signal came: stop.
    Stop,
}

/// Runs `attempt` (a connect, and for HTTP/2 its handshake) within the
/// run's end and `--timeout`: a failure counts as a connect error (then a
/// 10 ms pause, so a refused port is no busy loop), running out of time
/// as a timeout; HTTP/1.1 and HTTP/2 connections are opened alike.
pub(crate) async fn open<T, E: std::fmt::Display>(
    shared: &Shared,
    stats: &std::cell::RefCell<Stats>,
    end: Instant,
    attempt: impl std::future::Future<Output = Result<T, E>>,
) -> Opened<T> {
    let stop = &shared.stop;
    let r = tokio::select! {
        r = tokio::time::timeout_at(end.min(Instant::now() + shared.timeout).into(), attempt) => r,
        _ = stop.wait() => return Opened::Stop,
    };
    match r {
        Ok(Ok(t)) => {
            stats.borrow_mut().connects += 1;
            Opened::Ready(t)
        }
        Ok(Err(e)) => {
            stats.borrow_mut().error(
                |e| &mut e.connect,
                format!("connect to {}: {e}", shared.addr),
            );
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(10)) => Opened::Retry,
                _ = stop.wait() => Opened::Stop,
            }
        }
        Err(_) => {
            if Instant::now() < end {
                stats.borrow_mut().error(
                    |e| &mut e.timeout,
                    format!("connect to {}: timed out", shared.addr),
                );
            }
            Opened::Retry
        }
    }
}
