//! What goes in and comes out: [`Request`], the [`Head`] shown before the
//! body, [`Response`] with its [`Timings`] and [`ConnReport`], and the
//! [`Header`] argument as people write it.

use super::*;

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
    pub body: Payload,
    /// Go through this proxy.
    pub proxy: Option<Proxy>,
    /// The request target to send instead of the URL's normalised path
    /// and query (`--path-as-is`: `/a/../b` goes out as typed).
    pub target: Option<String>,
}

impl Request {
    /// A GET of `url`.
    pub fn get(url: Url) -> Request {
        Request {
            method: hyper::Method::GET,
            url,
            headers: Vec::new(),
            body: Payload::default(),
            proxy: None,
            target: None,
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
    let reason = if reason.is_empty() && version != "HTTP/2" && version != "HTTP/3" {
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
    /// TLS: resumption and early data (`None`: not TLS).
    pub tls: Option<TlsReport>,
    /// With `--tcp-fastopen`: whether the server took the data in the SYN
    /// (`false`: a normal handshake, no cookie yet or refused).
    pub fastopen: Option<bool>,
    /// Which address won, when it was not the first (Happy Eyeballs), or
    /// why HTTP/3 was not used.
    pub connect_note: Option<String>,
    /// HTTP/3: the QUIC path's RTT, window and losses (quinn's
    /// statistics, where TCP has `TCP_INFO`).
    pub quic: Option<QuicReport>,
}

/// How a connection's TLS handshake went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TlsReport {
    /// The session was resumed from a ticket (TLS 1.3 PSK, or a TLS 1.2
    /// session): no certificate was sent.
    pub resumed: bool,
    /// curl's `%{tls_earlydata}`: bytes sent as early data (0-RTT), 0 when
    /// none, negative when the server refused them (they were sent again
    /// after the handshake).
    pub early_data: i64,
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

/// A header value that removes the header instead of sending it (curl's
/// `-H 'Name:'`); an empty value is sent empty (curl's `-H 'Name;'`).
pub const REMOVE: &str = "\u{0}";

/// A header argument that is not `Name: value`.
#[derive(Debug, thiserror::Error)]
#[error("'{0}' is not a header 'Name: value' with a valid name")]
pub struct BadHeader(String);

impl std::str::FromStr for Header {
    type Err = BadHeader;

    /// `Name: value`; curl's `Name:` (no value: removes the header, a
    /// default one included) and `Name;` (sends it empty).
    fn from_str(s: &str) -> Result<Header, BadHeader> {
        let token = |b: u8| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b);
        let name_ok = |k: &str| !k.is_empty() && k.bytes().all(token);
        if let Some(k) = s.trim_end().strip_suffix(';')
            && !k.contains(':')
            && name_ok(k.trim())
        {
            return Ok(Header(k.trim().to_string(), String::new()));
        }
        let (k, v) = s.split_once(':').ok_or_else(|| BadHeader(s.to_string()))?;
        let k = k.trim();
        if !name_ok(k) {
            return Err(BadHeader(s.to_string()));
        }
        let v = v.trim();
        let v = if v.is_empty() { REMOVE } else { v };
        Ok(Header(k.to_string(), v.to_string()))
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
            match (&c.tcp_info_end, &c.quic) {
                (Some(i), _) => format!("{:.1} ms, cwnd {}", f64::from(i.rtt_us) / 1e3, i.snd_cwnd),
                // QUIC's window is in bytes (TCP's in segments).
                (None, Some(q)) => format!(
                    "{:.1} ms, cwnd {} B, {} of {} packets lost (QUIC)",
                    q.rtt_ms, q.cwnd, q.lost_packets, q.sent_packets
                ),
                (None, None) => "-".to_string(),
            },
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
            flag: "--rcvbuf",
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
