//! What a client is configured with: pool policy and limits, buffers,
//! TLS trust, `--resolve`, the address family, the HTTP version, proxies.

use super::*;

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
    /// `--tls-earlydata`: send a safe request (GET or HEAD without a body)
    /// as TLS 1.3 early data (0-RTT) on a resumed session, when the server
    /// allows it.
    pub early_data: bool,
    /// `--tcp-fastopen`: connect with TCP Fast Open (the first write, the
    /// TLS ClientHello or the request, goes in the SYN when the kernel
    /// holds the server's cookie).
    pub fastopen: bool,
    /// Happy Eyeballs: the delay between connection attempts to a name's
    /// addresses (`None`: one after the other, each until it fails).
    pub happy_eyeballs: Option<Duration>,
    /// Where TLS sessions are kept: clients given the same one resume each
    /// other's sessions (a browser's page loads; the lab's cold and warm
    /// trials). Default: the client's own.
    pub sessions: TlsSessions,
    /// Alt-Svc (curl's `--alt-svc FILE`): `Some` learns the HTTP/3
    /// alternatives responses advertise and uses them for the next request
    /// to the origin, starting from these entries (the file's); `None`
    /// ignores the header, as curl does without the flag.
    pub alt_svc: Option<Vec<AltEntry>>,
    /// Largest body to accept (`--max-filesize`); more is an error.
    pub max_body: Option<u64>,
    /// Fixed addresses for host:port pairs (curl's `--resolve`).
    pub resolve: Vec<Resolve>,
    /// The TLS versions offered (curl's `--tlsv1.x`, `--tls-max`).
    pub tls_versions: TlsVersions,
    /// Other hosts to connect to for host:port pairs (curl's
    /// `--connect-to`), the first match winning.
    pub connect_to: Vec<ConnectTo>,
    /// Address family to connect with (curl's `-4`/`-6`).
    pub family: Family,
    /// HTTP version to speak.
    pub version: Version,
    /// TCP keepalive probes after this long idle, and between them
    /// (curl's default 60 s; `None`: none, `--no-keepalive`).
    pub tcp_keepalive: Option<Duration>,
    /// `--unix-socket PATH`: every connection goes to this Unix domain
    /// socket (http:// only), the URL's host naming the `Host` header.
    pub unix_socket: Option<std::path::PathBuf>,
    /// `TCP_NOTSENT_LOWAT` of every connection (what an upload keeps
    /// queued unsent in its socket); an adaptive mark is set from the
    /// connection's state when it opens.
    pub notsent_lowat: tcpwise_tcp::Lowat,
    /// Congestion control of every connection (`TCP_CONGESTION`; `None`:
    /// the namespace's default).
    pub congestion: Option<String>,
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
    /// HTTP/1.0 requests (`--http1.0`).
    Http10,
    /// HTTP/2 when TLS's ALPN agrees, HTTP/1.1 otherwise (curl's `--http2`;
    /// `http://` stays HTTP/1.1, as curl's does without the Upgrade dance).
    Http2,
    /// HTTP/2 from the first byte, also on `http://` (h2c,
    /// `--http2-prior-knowledge`).
    Http2PriorKnowledge,
    /// HTTP/3 over QUIC on `https://`, with a TCP attempt (HTTP/2 or 1.1
    /// by ALPN) racing it after the Happy Eyeballs delay (curl's
    /// `--http3`); `http://` stays on TCP.
    Http3,
    /// HTTP/3 only: no TCP attempt (curl's `--http3-only`).
    Http3Only,
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

pub use tcpwise_http::tls::TlsVersions;

/// `HOST1:PORT1:HOST2:PORT2`: for a request to HOST1:PORT1, connect to
/// HOST2:PORT2 (curl's `--connect-to`). An empty HOST1 or PORT1 matches
/// any; an empty HOST2 or PORT2 keeps the request's; IPv6 in brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTo {
    /// The request's host it applies to; `None` for any.
    pub host: Option<String>,
    /// The request's port it applies to; `None` for any.
    pub port: Option<u16>,
    /// The host to connect to; `None` keeps the request's.
    pub to_host: Option<String>,
    /// The port to connect to; `None` keeps the request's.
    pub to_port: Option<u16>,
}

impl ConnectTo {
    /// Where a request to `host:port` connects: `Some` when this applies.
    pub fn apply(&self, host: &str, port: u16) -> Option<(String, u16)> {
        let host_ok = self
            .host
            .as_ref()
            .is_none_or(|h| h.eq_ignore_ascii_case(host));
        let port_ok = self.port.is_none_or(|p| p == port);
        (host_ok && port_ok).then(|| {
            (
                self.to_host.clone().unwrap_or_else(|| host.to_string()),
                self.to_port.unwrap_or(port),
            )
        })
    }
}

/// Splits `s` at its next `:` outside brackets: (field, rest).
fn field(s: &str) -> (&str, Option<&str>) {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ':' if depth == 0 => return (&s[..i], Some(&s[i + 1..])),
            _ => {}
        }
    }
    (s, None)
}

/// A `--connect-to` entry that is not `HOST1:PORT1:HOST2:PORT2`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not HOST1:PORT1:HOST2:PORT2 (an empty part: any, or the URL's)")]
pub struct BadConnectTo(pub String);

impl std::str::FromStr for ConnectTo {
    type Err = BadConnectTo;

    fn from_str(s: &str) -> Result<ConnectTo, BadConnectTo> {
        let bad = || BadConnectTo(s.to_string());
        let (h1, rest) = field(s);
        let (p1, rest) = field(rest.ok_or_else(bad)?);
        let (h2, rest) = field(rest.ok_or_else(bad)?);
        let (p2, extra) = field(rest.ok_or_else(bad)?);
        if extra.is_some() {
            return Err(bad());
        }
        let host = |h: &str| {
            (!h.is_empty()).then(|| h.trim_start_matches('[').trim_end_matches(']').to_string())
        };
        let port = |p: &str| -> Result<Option<u16>, BadConnectTo> {
            if p.is_empty() {
                Ok(None)
            } else {
                p.parse().map(Some).map_err(|_| bad())
            }
        };
        Ok(ConnectTo {
            host: host(h1),
            port: port(p1)?,
            to_host: host(h2),
            to_port: port(p2)?,
        })
    }
}

/// A TLS session cache (tickets, per server name) and the protocol each
/// origin chose at its last full handshake, the one its tickets are bound
/// to and so the one early data is written in. Cheap to clone; clones
/// share it.
///
/// It also holds the TLS configs its clients build, one per trust setting:
/// rustls resumes a session only under the certificate verifier that
/// accepted it (the same object), so clients sharing sessions share their
/// verifier too.
#[derive(Clone)]
pub struct TlsSessions {
    store: Arc<rustls::client::ClientSessionMemoryCache>,
    pub(super) alpn: Arc<Mutex<HashMap<Origin, Option<Vec<u8>>>>>,
    configs: Arc<Mutex<HashMap<TrustKey, Arc<rustls::ClientConfig>>>>,
}

/// A trust setting: `-k`, and the `--cacert` certificates.
type TrustKey = (bool, Vec<Vec<u8>>, TlsVersions);

impl TlsSessions {
    /// The config for `-k` (`insecure`) or these extra CAs, keeping its
    /// sessions here.
    pub(super) fn base(
        &self,
        insecure: bool,
        extra_ca: &[Vec<u8>],
        versions: TlsVersions,
    ) -> Result<Arc<rustls::ClientConfig>, HttpError> {
        let mut g = self.configs.lock().expect("lock");
        let key = (insecure, extra_ca.to_vec(), versions);
        if let Some(c) = g.get(&key) {
            return Ok(c.clone());
        }
        let c = if insecure {
            tcpwise_http::tls::insecure_client_config_with(versions)?
        } else {
            tcpwise_http::tls::client_config_with(extra_ca, versions)?
        };
        let mut c = (*c).clone();
        c.resumption = rustls::client::Resumption::store(self.store.clone());
        let c = Arc::new(c);
        g.insert(key, c.clone());
        Ok(c)
    }
}

/// Sessions kept per cache (rustls's default).
const SESSIONS: usize = 256;

impl Default for TlsSessions {
    fn default() -> Self {
        TlsSessions {
            store: Arc::new(rustls::client::ClientSessionMemoryCache::new(SESSIONS)),
            alpn: Arc::default(),
            configs: Arc::default(),
        }
    }
}

impl std::fmt::Debug for TlsSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsSessions")
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
            early_data: false,
            fastopen: false,
            happy_eyeballs: Some(ATTEMPT_DELAY),
            sessions: TlsSessions::default(),
            alt_svc: None,
            max_body: None,
            resolve: Vec::new(),
            connect_to: Vec::new(),
            tls_versions: TlsVersions::Both,
            family: Family::Any,
            version: Version::Http1,
            tcp_keepalive: Some(Duration::from_secs(60)),
            unix_socket: None,
            notsent_lowat: tcpwise_tcp::Lowat::Off,
            congestion: None,
        }
    }
}
