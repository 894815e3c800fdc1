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

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use http_body_util::BodyExt;
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
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use url::Url;

pub mod alt_svc;
mod checkout;
mod config;
mod connect;
mod error;
mod h2frames;
mod message;
mod payload;
mod quic;
mod race;
mod send;
mod tap;

pub use alt_svc::AltEntry;
use checkout::*;
pub use config::*;
pub use error::*;
pub use message::*;
pub use payload::{Payload, PayloadError, ReqBody};
use quic::H3Way;
pub use quic::QuicReport;
pub use race::{ATTEMPT_DELAY, interleave};
use send::*;
pub use tap::*;

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
    /// The one HTTP/3 connection of each origin.
    h3: Mutex<HashMap<Origin, quic::H3Conn>>,
    /// Origins whose HTTP/3 attempt failed or lost the race to TCP.
    h3_lost: Mutex<std::collections::HashSet<Origin>>,
    /// Held while an origin's HTTP/3 connection is being opened.
    h3_opening: Mutex<HashMap<Origin, Arc<tokio::sync::Mutex<()>>>>,
    /// The Alt-Svc alternatives learned (with `cfg.alt_svc`).
    alt: Mutex<alt_svc::AltCache>,
    /// The QUIC endpoints (UDP sockets), one per address family.
    quic: Mutex<HashMap<bool, (quinn::Endpoint, tcpwise_http::quic::Datapath)>>,
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

/// A response head has come on `conn`: its first byte's time, read as
/// curl times it (the first response byte read; over HTTP/2, which has
/// no tap, the parsed head), and the buffer ceilings, read now rather
/// than before the SYN (two /proc files, 0.1 ms here).
fn head_arrived(conn: &mut Conn, report: &mut ConnReport, start: Instant, timings: &mut Timings) {
    let first = conn.tap.lock().expect("lock").first_read;
    let first = first.unwrap_or_else(Instant::now);
    timings.first_byte_ms = first.saturating_duration_since(start).as_secs_f64() * 1e3;
    if report.buffers.rcv_autotune_max.is_none() {
        report.buffers.read_ceilings();
        conn.buffers = report.buffers.clone();
    }
}

impl Client {
    /// A client with `cfg`.
    pub fn new(cfg: ClientConfig) -> Client {
        let mut alt = alt_svc::AltCache::default();
        for e in cfg.alt_svc.iter().flatten() {
            alt.insert(e.clone());
        }
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
                h3: Mutex::new(HashMap::new()),
                h3_lost: Mutex::new(Default::default()),
                h3_opening: Mutex::new(HashMap::new()),
                alt: Mutex::new(alt),
                quic: Mutex::new(HashMap::new()),
            }),
        }
    }

    fn now(&self) -> u64 {
        self.inner.epoch.elapsed().as_nanos() as u64
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
        // Only a request that is safe to replay may go as early data
        // (curl's rule: GET or HEAD, no body).
        let early =
            matches!(req.method, hyper::Method::GET | hyper::Method::HEAD) && req.body.is_empty();
        let mut taken = None;
        let mut note = None;
        if let Some(only) = self.wants_h3(&origin) {
            match self
                .h3_way(&origin, only, start, &mut timings, early)
                .await?
            {
                H3Way::Quic(c, reused) => {
                    return self
                        .request_h3(
                            req,
                            &origin,
                            (c, reused),
                            start,
                            timings,
                            &mut on_head,
                            &mut sink,
                        )
                        .await;
                }
                H3Way::Tcp(c, why) => (taken, note) = (c, Some(why)),
            }
        }
        let (mut conn, mut report) = match taken {
            Some(c) => *c,
            None => self.take(&origin, start, &mut timings, early).await?,
        };
        if note.is_some() {
            report.connect_note = note;
        }
        let target = origin.target();
        let sent = (&origin, start, early);
        let (resp, request_head, retried) = self
            .send_retrying(req, sent, (&mut conn, &mut report, &mut timings))
            .await?;
        head_arrived(&mut conn, &mut report, start, &mut timings);
        let status = resp.status().as_u16();
        let version = version_text(resp.version());
        let (headers, reason, head_bytes) = response_head(&conn, &resp, status);
        self.learn_alt_svc(&origin, &headers);
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
        let (got, per_rtt_max) = if discard {
            (0, 0)
        } else {
            self.read_body(resp.into_body(), &mut conn, (rtt_ns, &target), &mut sink)
                .await?
        };
        timings.body_done_ms = start.elapsed().as_secs_f64() * 1e3;
        timings.total_ms = timings.body_done_ms;
        record_history(&mut conn, &mut report, got, per_rtt_max);
        if !discard || conn.sender.h2() {
            self.give_back(origin, conn, got, per_rtt_max);
        }
        Ok(Response {
            url: req.url.to_string(),
            status,
            version,
            reason,
            headers,
            head_bytes,
            request_head,
            upload_bytes: req.body.len().unwrap_or(0),
            body_bytes: got,
            timings,
            conn: report,
            retried,
        })
    }

    /// Sends the request on `conn`; a reused connection the server closed
    /// as we sent is replaced once by a fresh one for a request safe to
    /// resend. Returns the response, the request head as sent, and whether
    /// it was resent.
    async fn send_retrying(
        &self,
        req: &Request,
        (origin, start, early): (&Origin, Instant, bool),
        (conn, report, timings): (&mut Conn, &mut ConnReport, &mut Timings),
    ) -> Result<(hyper::Response<hyper::body::Incoming>, String, bool), HttpError> {
        let mut retried = false;
        loop {
            let hreq = self.build(req, origin, conn.sender.h2())?;
            let head = request_head(&hreq, conn.sender.h2());
            timings.request_written_ms = start.elapsed().as_secs_f64() * 1e3;
            report.tcp_info_start = TcpInfo::of(&conn.fd);
            conn.burst.begin();
            {
                let mut tap = conn.tap.lock().expect("lock");
                tap.armed = !conn.sender.h2();
                tap.buf.clear();
                tap.first_read = None;
            }
            match conn.sender.send(hreq).await {
                Ok(r) => {
                    // With early data the handshake completed only now.
                    report.tls = conn.tap.lock().expect("lock").tls.facts();
                    if self.inner.cfg.fastopen {
                        report.fastopen = tcpwise_tcp::fastopen::syn_data_acked(&*conn.fd);
                    }
                    return Ok((r, head, retried));
                }
                Err(_) if let Some(frames) = conn.flood() => {
                    return Err(HttpError::Flood {
                        target: origin.target(),
                        frames,
                        limit: h2frames::FLOOD_MAX,
                    });
                }
                Err(send::SendError::HeadersTooLarge {
                    bytes,
                    informational,
                }) => {
                    return Err(HttpError::HeadersTooLarge {
                        target: origin.target(),
                        bytes,
                        informational,
                        limit: send::MAX_INFORMATIONAL_BYTES,
                    });
                }
                Err(e) if report.reused && !retried && idempotent(&req.method) => {
                    // The server may have closed the idle connection as we
                    // sent: retry once on a fresh one.
                    let _ = e;
                    retried = true;
                    *timings = Timings::default();
                    *conn = self.connect_new(origin, start, timings, early).await?;
                    *report = self.report(conn, None);
                }
                Err(send::SendError::Hyper(source)) => {
                    // curl's 52 is a fresh connection that closed without
                    // a byte; a reused one that did was closed while idle
                    // (curl resends there; we never resend a POST: 8).
                    let silent = source.is_incomplete_message()
                        && !report.reused
                        && !conn.sender.h2()
                        && conn.tap.lock().is_ok_and(|t| t.buf.is_empty());
                    return Err(if silent {
                        HttpError::EmptyReply {
                            target: origin.target(),
                        }
                    } else {
                        HttpError::Protocol {
                            target: origin.target(),
                            source,
                        }
                    });
                }
            }
        }
    }

    /// Reads the body into `sink`, recording the connection's bursts;
    /// returns the bytes read and the most read in one round trip.
    async fn read_body(
        &self,
        mut body: hyper::body::Incoming,
        conn: &mut Conn,
        (rtt_ns, target): (u64, &str),
        sink: &mut impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> Result<(u64, u64), HttpError> {
        let mut per_rtt = PerRtt {
            window: rtt_ns.max(1),
            samples: VecDeque::new(),
            max: 0,
        };
        let mut got = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|source| match conn.flood() {
                Some(frames) => HttpError::Flood {
                    target: target.to_string(),
                    frames,
                    limit: h2frames::FLOOD_MAX,
                },
                None => HttpError::Body {
                    target: target.to_string(),
                    after: got,
                    source,
                },
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
                        target: target.to_string(),
                        max,
                    });
                }
                sink(d).map_err(HttpError::Sink)?;
            }
        }
        Ok((got, per_rtt.max))
    }

    /// Idle connections held for `url`'s origin.
    pub fn idle_count(&self, url: &Url) -> usize {
        Self::origin(&Request::get(url.clone()))
            .map_or(0, |o| self.inner.pool.lock().expect("lock").idle_count(&o))
    }
}

/// The response head as it came off the wire (the tap below hyper), or
/// rebuilt from hyper's where the tap has none (HTTP/2): the fields, the
/// reason phrase and the head's size.
fn response_head(
    conn: &Conn,
    resp: &hyper::Response<hyper::body::Incoming>,
    status: u16,
) -> (Vec<(String, String)>, String, u64) {
    let raw = {
        let mut tap = conn.tap.lock().expect("lock");
        tap.armed = false;
        final_head(&tap.buf).filter(|h| h.status == status)
    };
    match raw {
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
    }
}

/// What the connection did for this request, into its history (which the
/// pool's policy reads) and the request's report: bytes, the largest
/// burst and round trip's worth, the kernel's RTT and RTO at the end.
fn record_history(conn: &mut Conn, report: &mut ConnReport, got: u64, per_rtt_max: u64) {
    conn.burst.end();
    let end_info = TcpInfo::of(&conn.fd);
    conn.history.requests += 1;
    conn.history.bytes_read += got;
    conn.history.max_burst = conn.burst.max_activation;
    conn.history.max_per_rtt = conn.history.max_per_rtt.max(per_rtt_max);
    if let Some(i) = &end_info {
        conn.history.srtt = u64::from(i.rtt_us) * 1000;
        conn.history.rto = u64::from(i.rto_us) * 1000;
    }
    report.tcp_info_end = end_info;
    report.history = conn.history.clone();
    report.max_burst = conn.burst.max_activation;
    report.max_read = conn.peak_read.load(std::sync::atomic::Ordering::Relaxed);
}

/// The response's version as `-w '%{http_version}'` and `-i` show it.
fn version_text(v: hyper::Version) -> String {
    match v {
        hyper::Version::HTTP_10 => "HTTP/1.0",
        hyper::Version::HTTP_2 => "HTTP/2",
        _ => "HTTP/1.1",
    }
    .to_string()
}
