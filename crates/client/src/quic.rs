//! HTTP/3 over QUIC (`--http3`, `--http3-only`): quinn and the `h3`
//! crate, one QUIC connection per origin shared by every request to it
//! (as the one HTTP/2 connection is), and the race with TCP curl runs.
//!
//! curl's `--http3` starts QUIC first and a TCP attempt (HTTP/2 or 1.1
//! by ALPN) a little later, and takes whichever connects first; an origin
//! whose QUIC attempt lost or failed is not tried over QUIC again by the
//! same client. `--http3-only` has no TCP attempt: a failure is the
//! request's error. The connection's RTT and congestion window come from
//! quinn's statistics, where TCP's come from `TCP_INFO`.

use super::*;
use bytes::{Buf, Bytes};
use tcpwise_http::quic::Datapath;

/// An open HTTP/3 connection.
#[derive(Clone)]
pub(super) struct H3Conn {
    send: h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>,
    quic: quinn::Connection,
    id: u64,
    history: History,
    /// The endpoint's UDP buffers, for `-v`.
    datapath: Datapath,
}

/// What quinn knows of a QUIC connection's path, where TCP has `TCP_INFO`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QuicReport {
    /// Smoothed RTT, ms.
    pub rtt_ms: f64,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Packets sent and declared lost on the path.
    pub sent_packets: u64,
    /// Packets declared lost.
    pub lost_packets: u64,
    /// Congestion events (loss or ECN marks that shrank the window).
    pub congestion_events: u64,
    /// UDP datagrams received.
    pub udp_rx_datagrams: u64,
    /// The UDP socket's receive buffer, as the kernel books it.
    pub udp_receive_buffer: usize,
    /// Its send buffer.
    pub udp_send_buffer: usize,
}

impl QuicReport {
    /// The datapath its endpoint ran with, to print beside its figures.
    pub fn datapath(&self) -> Datapath {
        Datapath {
            receive_buffer: self.udp_receive_buffer,
            send_buffer: self.udp_send_buffer,
        }
    }

    fn of(c: &H3Conn) -> QuicReport {
        let s = c.quic.stats();
        QuicReport {
            rtt_ms: s.path.rtt.as_secs_f64() * 1e3,
            cwnd: s.path.cwnd,
            sent_packets: s.path.sent_packets,
            lost_packets: s.path.lost_packets,
            congestion_events: s.path.congestion_events,
            udp_rx_datagrams: s.udp_rx.datagrams,
            udp_receive_buffer: c.datapath.receive_buffer,
            udp_send_buffer: c.datapath.send_buffer,
        }
    }
}

/// How a request goes when HTTP/3 is asked for.
pub(super) enum H3Way {
    /// On this HTTP/3 connection (`true`: it was open already).
    Quic(H3Conn, bool),
    /// Over TCP, with what `-v` says about why.
    Tcp(Option<Box<(Conn, ConnReport)>>, String),
}

impl Client {
    /// Whether `origin` is to be tried over HTTP/3, whether TCP may
    /// take over, and the UDP port: `Some((only, port))`. `--http3` and
    /// `--http3-only` try the origin's own port unless Alt-Svc named
    /// another; otherwise a fresh Alt-Svc `h3` alternative is used when
    /// Alt-Svc is on.
    pub(super) fn wants_h3(&self, origin: &Origin) -> Option<(bool, u16)> {
        let alt = self.inner.cfg.alt_svc.as_ref().and_then(|_| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            (origin.scheme == "https")
                .then(|| {
                    self.inner
                        .alt
                        .lock()
                        .expect("lock")
                        .h3_port(&origin.host, origin.port, now)
                })
                .flatten()
        });
        let only = match (self.inner.cfg.version, alt) {
            (Version::Http3, _) => false,
            (Version::Http3Only, _) => true,
            (_, Some(_)) => false,
            _ => return None,
        };
        let port = alt.unwrap_or(origin.port);
        if only && origin.scheme != "https" {
            return Some((only, port));
        }
        let usable = origin.scheme == "https"
            && origin.via.is_none()
            && self.inner.cfg.unix_socket.is_none();
        if !usable {
            return None;
        }
        if !only && self.inner.h3_lost.lock().expect("lock").contains(origin) {
            return None;
        }
        Some((only, port))
    }

    /// Learns what `Alt-Svc` in a response from `origin` says (with
    /// Alt-Svc on).
    pub(super) fn learn_alt_svc(&self, origin: &Origin, headers: &[(String, String)]) {
        if self.inner.cfg.alt_svc.is_none() || origin.scheme != "https" {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut alt = self.inner.alt.lock().expect("lock");
        for (_, v) in headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("alt-svc"))
        {
            alt.learn(&origin.host, origin.port, v, now);
        }
    }

    /// The Alt-Svc entries known now (for `--alt-svc FILE` to keep).
    pub fn alt_svc_entries(&self) -> Vec<AltEntry> {
        self.inner.alt.lock().expect("lock").entries()
    }

    /// The way a request to `origin` goes: its open HTTP/3 connection, a
    /// new one, or (unless `only`) TCP when QUIC fails or is slower.
    pub(super) async fn h3_way(
        &self,
        origin: &Origin,
        (only, port): (bool, u16),
        start: Instant,
        t: &mut Timings,
        early: bool,
    ) -> Result<H3Way, HttpError> {
        // One opening at a time per origin, so parallel requests share it.
        let lock = self.opening_lock(origin);
        let _g = lock.lock().await;
        if let Some(c) = self.inner.h3.lock().expect("lock").get(origin)
            && c.quic.close_reason().is_none()
        {
            return Ok(H3Way::Quic(c.clone(), true));
        }
        if origin.scheme != "https" || origin.via.is_some() {
            return Err(HttpError::url(
                origin.target(),
                "--http3-only needs an https:// URL and no proxy (HTTP/3 is QUIC, TLS inside)",
            ));
        }
        let (mut qt, mut tt) = (Timings::default(), Timings::default());
        if only {
            let c = self.connect_quic(origin, port, start, &mut qt).await;
            *t = qt;
            return Ok(H3Way::Quic(c?, false));
        }
        let delay = self.inner.cfg.happy_eyeballs.unwrap_or(race::ATTEMPT_DELAY);
        let failed = |e: &HttpError| {
            format!(
                "HTTP/3 failed ({}); using TCP",
                tcpwise_outcome::chain_text(e)
            )
        };
        // QUIC first; after the delay TCP joins the race, the first to
        // connect wins (the loser is dropped, which cancels it).
        let won = {
            let quic = self.connect_quic(origin, port, start, &mut qt);
            tokio::pin!(quic);
            let first = tokio::select! {
                q = &mut quic => Some(q),
                _ = tokio::time::sleep(delay) => None,
            };
            match first {
                Some(Ok(c)) => Ok(c),
                Some(Err(e)) => Err((None, failed(&e))),
                None => {
                    let tcp = self.take(origin, start, &mut tt, early);
                    tokio::pin!(tcp);
                    tokio::select! {
                        q = &mut quic => q.map_err(|e| (None, failed(&e))),
                        c = &mut tcp => Err((Some(Box::new(c?)), format!(
                            "HTTP/3: no QUIC handshake within {} ms, TCP connected first; using TCP",
                            delay.as_millis()
                        ))),
                    }
                }
            }
        };
        match won {
            Ok(c) => {
                *t = qt;
                Ok(H3Way::Quic(c, false))
            }
            Err((c, why)) => {
                if c.is_some() {
                    *t = tt;
                }
                self.inner
                    .h3_lost
                    .lock()
                    .expect("lock")
                    .insert(origin.clone());
                Ok(H3Way::Tcp(c, why))
            }
        }
    }

    /// The origin's HTTP/3 opening lock (not TCP's: the TCP attempt in the
    /// race takes that one).
    fn opening_lock(&self, origin: &Origin) -> Arc<tokio::sync::Mutex<()>> {
        self.inner
            .h3_opening
            .lock()
            .expect("lock")
            .entry(origin.clone())
            .or_default()
            .clone()
    }

    /// The client's QUIC endpoint for one address family (one UDP socket
    /// each, opened when first needed).
    fn endpoint(&self, v6: bool) -> Result<(quinn::Endpoint, Datapath), std::io::Error> {
        let mut g = self.inner.quic.lock().expect("lock");
        if let Some(e) = g.get(&v6) {
            return Ok(e.clone());
        }
        let any: SocketAddr = if v6 {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        } else {
            (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
        };
        let sock = socket2::Socket::new(
            socket2::Domain::for_address(any),
            socket2::Type::DGRAM,
            Some(socket2::Protocol::UDP),
        )?;
        if v6 {
            // Dual-stack, as quinn's own client endpoint: an IPv4 peer
            // reached through a mapped address still works.
            let _ = sock.set_only_v6(false);
        }
        sock.bind(&any.into())?;
        let e = tcpwise_http::quic::endpoint(sock.into(), None)?;
        g.insert(v6, e.clone());
        Ok(e)
    }

    /// A new QUIC connection to `origin` and HTTP/3 on it.
    async fn connect_quic(
        &self,
        origin: &Origin,
        port: u16,
        start: Instant,
        t: &mut Timings,
    ) -> Result<H3Conn, HttpError> {
        let target = origin.target();
        let addrs = self.addresses(&origin.host, origin.port).await?;
        // The alternative's port (Alt-Svc), on the origin's addresses.
        let addrs: Vec<SocketAddr> = addrs
            .into_iter()
            .map(|a| SocketAddr::new(a.ip(), port))
            .collect();
        t.dns_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        let addr = addrs[0];
        let io = |e: std::io::Error| HttpError::connect(&target, e);
        let mut tls = (*self.inner.cfg.sessions.base(
            self.inner.cfg.insecure,
            &self.inner.cfg.extra_ca,
            TlsVersions::Both,
        )?)
        .clone();
        tls.alpn_protocols = vec![b"h3".to_vec()];
        tls.enable_early_data = false;
        let crypto =
            quinn::crypto::rustls::QuicClientConfig::try_from(Arc::new(tls)).map_err(|e| {
                io(std::io::Error::other(format!(
                    "TLS config cannot do QUIC: {e}"
                )))
            })?;
        let mut cfg = quinn::ClientConfig::new(Arc::new(crypto));
        cfg.transport_config(tcpwise_http::quic::transport(addr));
        let (endpoint, datapath) = self.endpoint(addr.is_ipv6()).map_err(io)?;
        let connecting = endpoint
            .connect_with(cfg, addr, &origin.host)
            .map_err(|e| io(std::io::Error::other(e.to_string())))?;
        let timeout = self.inner.cfg.connect_timeout;
        let quic = match tokio::time::timeout(timeout, connecting).await {
            Err(_) => {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no QUIC handshake within {} ms (UDP to {addr} blocked or nothing listening)",
                        timeout.as_millis()
                    ),
                )));
            }
            Ok(Err(e)) => return Err(quic_error(&target, e)),
            Ok(Ok(c)) => c,
        };
        let now = start.elapsed().as_secs_f64() * 1e3;
        t.connect_ms = Some(now);
        t.tls_ms = Some(now);
        let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(quic.clone()))
            .await
            .map_err(|e| HttpError::Quic {
                target: target.clone(),
                why: e.to_string(),
                connecting: false,
            })?;
        tokio::spawn(async move {
            let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
        });
        let id = self
            .inner
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let c = H3Conn {
            send,
            quic,
            id,
            datapath,
            history: History {
                id,
                ..History::default()
            },
        };
        self.inner
            .h3
            .lock()
            .expect("lock")
            .insert(origin.clone(), c.clone());
        Ok(c)
    }

    /// Sends `req` on the HTTP/3 connection `c`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn request_h3(
        &self,
        req: &Request,
        origin: &Origin,
        (mut c, reused): (H3Conn, bool),
        start: Instant,
        mut timings: Timings,
        on_head: &mut impl FnMut(&Head) -> std::io::Result<HeadAction>,
        sink: &mut impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> Result<Response, HttpError> {
        let target = origin.target();
        let quic_err = |e: &dyn std::fmt::Display| HttpError::Quic {
            target: target.clone(),
            why: e.to_string(),
            connecting: false,
        };
        let hreq = self.build(req, origin, true)?;
        let request_head = request_head(&hreq, true).replacen(" HTTP/2\r\n", " HTTP/3\r\n", 1);
        let (mut parts, mut body) = hreq.into_parts();
        parts.version = hyper::Version::HTTP_3;
        timings.request_written_ms = start.elapsed().as_secs_f64() * 1e3;
        let mut stream = c
            .send
            .send_request(hyper::Request::from_parts(parts, ()))
            .await
            .map_err(|e| quic_err(&e))?;
        let mut sent = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| quic_err(&e))?;
            if let Ok(d) = frame.into_data() {
                sent += d.len() as u64;
                stream.send_data(d).await.map_err(|e| quic_err(&e))?;
            }
        }
        stream.finish().await.map_err(|e| quic_err(&e))?;
        let resp = stream.recv_response().await.map_err(|e| quic_err(&e))?;
        timings.first_byte_ms = start.elapsed().as_secs_f64() * 1e3;
        let status = resp.status().as_u16();
        let (headers, head_bytes) = response_headers(resp.headers());
        let mut report = self.h3_report(&c, reused);
        let version = "HTTP/3".to_string();
        let action = on_head(&Head {
            url: &req.url,
            status,
            version: &version,
            reason: "",
            headers: &headers,
            request_head: &request_head,
            conn: &report,
        })
        .map_err(HttpError::Sink)?;
        let mut got = 0u64;
        if action == HeadAction::Read {
            while let Some(mut d) = stream.recv_data().await.map_err(|e| HttpError::Quic {
                target: target.clone(),
                why: format!("the body failed after {got} bytes: {e}"),
                connecting: false,
            })? {
                while d.has_remaining() {
                    let chunk = d.chunk();
                    let n = chunk.len();
                    got += n as u64;
                    if let Some(max) = self.inner.cfg.max_body
                        && got > max
                    {
                        return Err(HttpError::TooLarge {
                            target: target.clone(),
                            max,
                        });
                    }
                    sink(chunk).map_err(HttpError::Sink)?;
                    d.advance(n);
                }
            }
        } else {
            stream.stop_sending(h3::error::Code::H3_REQUEST_CANCELLED);
        }
        timings.body_done_ms = start.elapsed().as_secs_f64() * 1e3;
        timings.total_ms = timings.body_done_ms;
        c.history.requests += 1;
        c.history.bytes_read += got;
        report.quic = Some(QuicReport::of(&c));
        report.history = c.history.clone();
        self.keep_history(origin, &c);
        Ok(Response {
            url: req.url.to_string(),
            status,
            version,
            reason: String::new(),
            headers,
            head_bytes,
            request_head,
            upload_bytes: sent,
            body_bytes: got,
            timings,
            conn: report,
            retried: false,
        })
    }

    /// The origin's pooled HTTP/3 connection learns what `c` moved (when
    /// it is still that connection).
    fn keep_history(&self, origin: &Origin, c: &H3Conn) {
        if let Some(open) = self.inner.h3.lock().expect("lock").get_mut(origin)
            && open.id == c.id
        {
            open.history = c.history.clone();
        }
    }

    fn h3_report(&self, c: &H3Conn, reused: bool) -> ConnReport {
        ConnReport {
            id: c.id,
            reused,
            policy: self.inner.cfg.policy.name().to_string(),
            reason: reused.then(|| "the origin's HTTP/3 connection".to_string()),
            candidates: Vec::new(),
            history: c.history.clone(),
            max_burst: 0,
            burst_before: 0,
            tcp_info_start: None,
            tcp_info_end: None,
            local: None,
            peer: Some(c.quic.remote_address()),
            max_read: 0,
            buffers: tcpwise_tcp::AppliedBuffers::default(),
            tls: None,
            fastopen: None,
            connect_note: None,
            quic: Some(QuicReport::of(c)),
        }
    }
}

/// A response's header fields as text, and the bytes an HTTP/1.1 head of
/// them would take (the `-w %{size_header}` figure curl gives).
fn response_headers(h: &hyper::HeaderMap) -> (Vec<(String, String)>, u64) {
    let headers: Vec<(String, String)> = h
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).to_string(),
            )
        })
        .collect();
    let bytes = headers
        .iter()
        .map(|(k, v)| k.len() + v.len() + 4)
        .sum::<usize>() as u64
        + 15;
    (headers, bytes)
}

/// A failed QUIC handshake as the error TCP's would be: a timeout or an
/// unreachable peer is a connect error (curl's 28 or 7), an untrusted
/// certificate curl's 60, another TLS failure (no `h3` in ALPN) its 35.
fn quic_error(target: &str, e: quinn::ConnectionError) -> HttpError {
    use quinn::ConnectionError as E;
    let text = e.to_string();
    match &e {
        E::TimedOut => HttpError::connect(
            target,
            std::io::Error::new(std::io::ErrorKind::TimedOut, "QUIC handshake timed out"),
        ),
        E::TransportError(t) if text.contains("certificate") => HttpError::Certificate {
            target: target.to_string(),
            why: t.reason.clone(),
        },
        E::TransportError(_) | E::ConnectionClosed(_)
            if text.contains("crypto") || text.contains("TLS") || text.contains("alert") =>
        {
            HttpError::Tls {
                target: target.to_string(),
                source: std::io::Error::other(text),
            }
        }
        E::VersionMismatch => HttpError::Quic {
            target: target.to_string(),
            why: "the server speaks no QUIC version we do (we speak QUIC v1)".into(),
            connecting: true,
        },
        _ => HttpError::Quic {
            target: target.to_string(),
            why: text,
            connecting: true,
        },
    }
}
