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
    /// Largest body to accept (`--max-filesize`); more is an error.
    pub max_body: Option<u64>,
    /// Fixed addresses for host:port pairs (curl's `--resolve`).
    pub resolve: Vec<Resolve>,
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
            tcp_keepalive: Some(Duration::from_secs(60)),
            unix_socket: None,
            notsent_lowat: tcpwise_tcp::Lowat::Off,
            congestion: None,
        }
    }
}
