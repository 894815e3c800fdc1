//! [`HttpError`]: what can go wrong, with the cause kept as `source`.

/// What can go wrong; messages name the host, the cause is kept as the
/// error's source (print with `{:#}` to see the whole chain).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The request body cannot be sent (curl's 26, or 65 for standard
    /// input sent a second time).
    #[error(transparent)]
    Upload(#[from] super::PayloadError),
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
    TlsSetup(#[from] tcpwise_http::tls::TlsSetupError),
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
    /// The server closed the connection without a byte of response
    /// (curl's 52, "Empty reply from server").
    #[error("empty reply from {target}: it closed the connection without answering")]
    EmptyReply {
        /// host:port.
        target: String,
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
    /// QUIC or HTTP/3 failed: in the handshake (`connecting`, curl's 96)
    /// or on a request's stream (curl's 95).
    #[error("HTTP/3 with {target} failed: {why}")]
    Quic {
        /// host:port.
        target: String,
        /// What quinn or h3 said.
        why: String,
        /// During the QUIC handshake.
        connecting: bool,
    },
    /// The server sent more 1xx response heads than `get` reads before
    /// a final response (curl 8.3's 300 KiB of response headers; curl
    /// 7.88 read them until `-m`): curl 8.3's 56.
    #[error(
        "{target} sent {informational} informational (1xx) responses, {bytes} bytes of heads, and no final response: more than the {limit} bytes read before one"
    )]
    HeadersTooLarge {
        /// host:port.
        target: String,
        /// The 1xx heads' bytes.
        bytes: usize,
        /// Their number.
        informational: usize,
        /// The limit.
        limit: usize,
    },
    /// The server sent HTTP/2 frames that carry nothing of a response
    /// (PING, SETTINGS, empty DATA, ...) past nghttp2's flood limit:
    /// curl 7.88's 56 ("Flooding was detected in this HTTP/2 session").
    #[error(
        "{target} sent {frames} HTTP/2 frames in a row that carry nothing of a response (PING, SETTINGS, WINDOW_UPDATE, empty DATA): more than the {limit} read before one (nghttp2's flood limit)"
    )]
    Flood {
        /// host:port.
        target: String,
        /// Frames counted.
        frames: u32,
        /// The limit.
        limit: u32,
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

    pub(super) fn url(url: impl ToString, why: impl ToString) -> HttpError {
        HttpError::Url {
            url: url.to_string(),
            why: why.to_string(),
        }
    }

    pub(super) fn connect(target: &str, source: std::io::Error) -> HttpError {
        HttpError::Connect {
            target: target.to_string(),
            source,
        }
    }
}

// Bad input (a URL, a CA file, a buffer size, an upload that cannot be
// opened) is usage; anything met on the network is a failed operation.
// `tcpwise get` wraps these errors in its own, which carry curl's numbers.
impl tcpwise_outcome::Classify for HttpError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        use tcpwise_outcome::Class;
        Some(match self {
            HttpError::Url { .. }
            | HttpError::TlsSetup(_)
            | HttpError::Buffer(_)
            | HttpError::Upload(super::PayloadError::Open { .. }) => Class::Usage,
            _ => Class::Failed,
        })
    }
}
