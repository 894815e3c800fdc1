//! Opening a connection: resolve (`--resolve`, `-4`/`-6`), connect with
//! the socket policy (buffers, read sizing), a CONNECT tunnel through a
//! proxy, TLS with ALPN, then hyper's HTTP/1.1 or HTTP/2 handshake.

use super::*;

/// Opens a CONNECT tunnel to `target` through the proxy on `stream`.
pub(super) async fn tunnel(
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

impl Client {
    pub(super) fn origin(req: &Request) -> Result<Origin, HttpError> {
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

    pub(super) fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, HttpError> {
        let mut g = self.inner.tls.lock().expect("lock");
        if let Some(c) = g.as_ref() {
            return Ok(c.clone());
        }
        let cfg = &self.inner.cfg;
        let base = cfg
            .sessions
            .base(cfg.insecure, &cfg.extra_ca, cfg.tls_versions)?;
        let mut own = (*base).clone();
        if cfg.version != Version::Http1 {
            own.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        }
        let c = Arc::new(own);
        *g = Some(c.clone());
        Ok(c)
    }

    /// The config for a connection that sends its request as early data:
    /// the common one (its session cache included) offering only the
    /// protocol the origin chose last time, the one its ticket is bound
    /// to, so the request written before the answer can be in it. `None`
    /// until a full handshake with the origin taught that protocol.
    fn early_config(
        &self,
        origin: &Origin,
    ) -> Result<Option<Arc<rustls::ClientConfig>>, HttpError> {
        let Some(alpn) = self
            .inner
            .cfg
            .sessions
            .alpn
            .lock()
            .expect("lock")
            .get(origin)
            .cloned()
        else {
            return Ok(None);
        };
        let mut c = (*self.tls_config()?).clone();
        c.enable_early_data = true;
        c.alpn_protocols = alpn.into_iter().collect();
        Ok(Some(Arc::new(c)))
    }

    /// The addresses of `host:port`: `--resolve` first, then the system's
    /// resolver, filtered by `-4`/`-6`.
    pub(super) async fn addresses(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, HttpError> {
        let fixed = self
            .inner
            .cfg
            .resolve
            .iter()
            .find(|r| r.port == port && (r.host == "*" || r.host.eq_ignore_ascii_case(host)));
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
            // An address of the other family in the URL: nothing to
            // connect to (curl's 7), not a name that did not resolve.
            if host.parse::<IpAddr>().is_ok() {
                return Err(HttpError::Connect {
                    target: format!("{host}:{port}"),
                    source: std::io::Error::new(
                        std::io::ErrorKind::AddrNotAvailable,
                        format!(
                            "{}: the URL's address is not {which}",
                            if family == Family::V4 { "-4" } else { "-6" }
                        ),
                    ),
                });
            }
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

    /// A new connection to `origin`; `early`: the request it is opened
    /// for may go as TLS early data (safe, no body).
    pub(super) async fn connect(
        &self,
        origin: &Origin,
        start: Instant,
        t: &mut Timings,
        early: bool,
    ) -> Result<Conn, HttpError> {
        let target = origin.target();
        if let Some(path) = self.inner.cfg.unix_socket.clone() {
            return self.connect_unix(origin, &path, start, t).await;
        }
        let (dial_host, dial_port, dial) = dial_of(origin, &self.inner.cfg.connect_to);
        let addrs = self.addresses(&dial_host, dial_port).await?;
        t.dns_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        let race::Won {
            mut stream,
            buffers,
            addr,
            note,
            at,
        } = self
            .race(&addrs, &dial, self.inner.cfg.happy_eyeballs)
            .await?;
        t.connect_ms = Some(at.saturating_duration_since(start).as_secs_f64() * 1e3);
        let _ = stream.set_nodelay(true);
        let _ = self.inner.cfg.notsent_lowat.apply(&stream);
        let fd = stream
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| HttpError::connect(&dial, e))?;
        // Under TCP Fast Open the connection is not made yet (its SYN
        // leaves with the first write): the peer is the address dialled.
        let (local, peer) = (
            stream.local_addr().ok(),
            Some(stream.peer_addr().unwrap_or(addr)),
        );
        if let Some(p) = &origin.via
            && origin.scheme == "https"
        {
            tunnel(&mut stream, &target, &dial, p).await?;
        }
        let mut h2 = origin.scheme == "http"
            && origin.via.is_none()
            && self.inner.cfg.version == Version::Http2PriorKnowledge;
        let mut facts = TlsFacts::default();
        let transport = if origin.scheme == "https" {
            let name =
                rustls_pki_types::ServerName::try_from(origin.host.clone()).map_err(|e| {
                    HttpError::Tls {
                        target: target.clone(),
                        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
                    }
                })?;
            let early = match early && self.inner.cfg.early_data {
                true => self.early_config(origin)?,
                false => None,
            };
            let connector = match &early {
                Some(c) => tokio_rustls::TlsConnector::from(c.clone()).early_data(true),
                None => tokio_rustls::TlsConnector::from(self.tls_config()?),
            };
            let limit = self.inner.cfg.connect_timeout;
            let tls = tls_within(connector.connect(name, stream), (start, limit), &target).await?;
            t.tls_ms = Some(start.elapsed().as_secs_f64() * 1e3);
            let c = tls.get_ref().1;
            facts = TlsFacts::of(c);
            h2 = if c.is_handshaking() {
                // In early data: the protocol is the one offered alone.
                early.is_some_and(|e| e.alpn_protocols == [b"h2".to_vec()])
            } else {
                self.inner
                    .cfg
                    .sessions
                    .alpn
                    .lock()
                    .expect("lock")
                    .insert(origin.clone(), c.alpn_protocol().map(<[u8]>::to_vec));
                c.alpn_protocol() == Some(b"h2")
            };
            Transport::Tls(Box::new(tls))
        } else {
            Transport::Plain(stream)
        };
        self.handshake(
            transport,
            (h2, facts, note),
            &target,
            fd,
            local,
            peer,
            buffers,
        )
        .await
    }

    /// `--unix-socket`: the connection is a Unix domain socket; no DNS, no
    /// proxy, no TLS (curl's `https` over one is not offered here).
    async fn connect_unix(
        &self,
        origin: &Origin,
        path: &std::path::Path,
        start: Instant,
        t: &mut Timings,
    ) -> Result<Conn, HttpError> {
        let target = origin.target();
        let dial = format!("unix:{}", path.display());
        if origin.scheme == "https" {
            return Err(HttpError::connect(
                &dial,
                std::io::Error::other("--unix-socket carries http:// only here"),
            ));
        }
        t.dns_ms = Some(0.0);
        let s = tokio::time::timeout(
            self.inner.cfg.connect_timeout,
            tokio::net::UnixStream::connect(path),
        )
        .await
        .map_err(|_| {
            HttpError::connect(
                &dial,
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no answer (--connect-timeout)",
                ),
            )
        })?
        .map_err(|e| HttpError::connect(&dial, e))?;
        t.connect_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        let fd = s
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| HttpError::connect(&dial, e))?;
        let h2 = self.inner.cfg.version == Version::Http2PriorKnowledge;
        self.handshake(
            Transport::Unix(s),
            (h2, TlsFacts::default(), None),
            &target,
            fd,
            None,
            None,
            Default::default(),
        )
        .await
    }

    /// The HTTP/1.1 or HTTP/2 handshake over a connected transport.
    #[allow(clippy::too_many_arguments)]
    async fn handshake(
        &self,
        transport: Transport,
        (h2, tls, note): (bool, TlsFacts, Option<String>),
        target: &str,
        fd: OwnedFd,
        local: Option<SocketAddr>,
        peer: Option<SocketAddr>,
        buffers: tcpwise_tcp::AppliedBuffers,
    ) -> Result<Conn, HttpError> {
        let target = target.to_string();
        let tap = Arc::new(Mutex::new(TapState {
            tls,
            h2: h2.then(crate::h2frames::Frames::default),
            ..TapState::default()
        }));
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
            let mut b = http2::Builder::new(hyper_util::rt::TokioExecutor::new());
            // The same bound one layer up: a stream's send buffer.
            if let Some(n) = self.inner.cfg.notsent_lowat.stream_buffer() {
                b.max_send_buf_size(n);
            }
            let (sender, conn) = b.handshake::<_, ReqBody>(io).await.map_err(protocol)?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Sender::H2(sender)
        } else {
            let (sender, conn) = http1::Builder::new()
                .title_case_headers(true)
                .handshake::<_, ReqBody>(io)
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
            note,
        })
    }
}

/// Why a certificate was refused, as one sentence a user can act on
/// (rustls's `Debug` form names internal structures).
pub fn certificate_reason(c: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    let date = |t: &rustls_pki_types::UnixTime| {
        httpdate::fmt_http_date(std::time::UNIX_EPOCH + Duration::from_secs(t.as_secs()))
    };
    match c {
        C::Expired => "it has expired".into(),
        C::ExpiredContext { not_after, .. } => format!("it expired on {}", date(not_after)),
        C::NotValidYet => "it is not valid yet".into(),
        C::NotValidYetContext { not_before, .. } => {
            format!("it is not valid before {}", date(not_before))
        }
        C::UnknownIssuer => "it was issued by an authority this client does not know".into(),
        C::NotValidForName => "it is for another name".into(),
        C::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "it is for {}, not {}",
            if presented.is_empty() {
                "no name".to_string()
            } else {
                // webpki shows them as `DnsName("x")`: the name is x.
                presented
                    .iter()
                    .map(|p| {
                        p.split_once('(')
                            .and_then(|(_, r)| r.strip_suffix(')'))
                            .map_or(p.as_str(), |r| r.trim_matches('"'))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            expected.to_str()
        ),
        C::BadSignature => "its signature does not verify".into(),
        C::Revoked => "it has been revoked".into(),
        C::BadEncoding => "it cannot be decoded".into(),
        C::UnhandledCriticalExtension => {
            "it has a critical extension this client does not handle".into()
        }
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            "it is not meant for a TLS server".into()
        }
        other => format!("{other:?}"),
    }
}

/// Where the TCP connection goes: the proxy's host and port when there is
/// one, else the origin's; with `host:port` (an IPv6 host bracketed) for
/// messages.
fn dial_of(origin: &Origin, connect_to: &[crate::ConnectTo]) -> (String, u16, String) {
    let (host, port) = match &origin.via {
        Some(p) => (p.host.clone(), p.port),
        None => connect_to
            .iter()
            .find_map(|c| c.apply(&origin.host, origin.port))
            .unwrap_or_else(|| (origin.host.clone(), origin.port)),
    };
    let dial = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    (host, port, dial)
}

/// A failed TLS handshake: an untrusted certificate (curl's 60, with
/// rustls's reason) or any other failure (35).
fn handshake_error(target: &str, source: std::io::Error) -> HttpError {
    let cert = source
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
        .and_then(|e| match e {
            rustls::Error::InvalidCertificate(c) => Some(certificate_reason(c)),
            _ => None,
        });
    match cert {
        Some(why) => HttpError::Certificate {
            target: target.to_string(),
            why,
        },
        None => HttpError::Tls {
            target: target.to_string(),
            source,
        },
    }
}

/// A TLS handshake within what is left of `--connect-timeout` since
/// `start`: curl's limit covers the handshake too, so a server that accepts
/// and never answers ends with 28 in time.
async fn tls_within<S>(
    handshake: impl std::future::Future<Output = std::io::Result<S>>,
    (start, limit): (Instant, std::time::Duration),
    target: &str,
) -> Result<S, HttpError> {
    let left = limit.saturating_sub(start.elapsed());
    tokio::time::timeout(left, handshake)
        .await
        .map_err(|_| {
            let why = format!(
                "the TLS handshake did not end within {:.1} s (--connect-timeout)",
                limit.as_secs_f64()
            );
            HttpError::connect(
                target,
                std::io::Error::new(std::io::ErrorKind::TimedOut, why),
            )
        })?
        .map_err(|source| handshake_error(target, source))
}

#[cfg(test)]
mod tests {
    use super::certificate_reason;
    use rustls::CertificateError as C;
    use rustls_pki_types::UnixTime;

    #[test]
    fn certificate_reasons_are_sentences() {
        let t = |s| UnixTime::since_unix_epoch(std::time::Duration::from_secs(s));
        let e = C::ExpiredContext {
            time: t(1_800_000_000),
            not_after: t(1_700_000_000),
        };
        assert_eq!(
            certificate_reason(&e),
            "it expired on Tue, 14 Nov 2023 22:13:20 GMT"
        );
        let n = C::NotValidForNameContext {
            expected: "example.test".try_into().expect("name"),
            presented: vec!["DnsName(\"other.test\")".into()],
        };
        assert_eq!(
            certificate_reason(&n),
            "it is for other.test, not example.test"
        );
        assert!(!certificate_reason(&C::UnknownIssuer).contains('{'));
    }
}
