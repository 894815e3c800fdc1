//! # tcpwise-bench: a load generator that tells the truth about latency
//!
//! `tcpwise bench` loads an HTTP/1.1 server the way wrk and wrk2 do, with
//! a lean client path: the request is serialised once, responses are
//! framed with `httparse` and a byte-level chunked decoder ([`response`]),
//! bodies are counted, never copied, and each thread runs its own
//! single-threaded tokio runtime with its own connections (no work
//! stealing, no cross-thread wake-ups), as wrk runs one event loop a thread.
//!
//! Two disciplines:
//! - **closed loop** (default, wrk): each connection sends its next
//!   request when the last response ended. A stalled server slows the
//!   senders down, so the stall hides from the percentiles (coordinated
//!   omission).
//! - **open loop** (`--rate R`, wrk2): request k of connection i is due at
//!   `start + i/R + k*C/R` ([`timetable`]), sent then or, when the
//!   connection was still busy, as soon as it is free; its latency is
//!   measured **from the time it was due**, so a 1 s stall shows up as up
//!   to 1 s of latency for every request that should have been sent
//!   during it, as a user arriving then would have seen.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod flags;
mod h2;
mod h3;
pub mod response;
mod run;
mod shared;
pub mod timetable;

pub use run::run;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// One load run.
#[derive(Clone)]
pub struct Options {
    /// Target (http or https).
    pub url: url::Url,
    /// More targets on the same origin: each connection (each HTTP/2
    /// stream) takes the URLs in turn, as h2load does with several URIs.
    pub more_urls: Vec<url::Url>,
    /// Open connections.
    pub connections: usize,
    /// Threads, each with its own share of the connections.
    pub threads: usize,
    /// Stop after this long (one of `duration` and `requests` is set).
    pub duration: Option<Duration>,
    /// Stop after this many requests.
    pub requests: Option<u64>,
    /// Open loop at this many requests per second (all connections together).
    pub rate: Option<f64>,
    /// Method.
    pub method: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Request body.
    pub body: Option<Vec<u8>>,
    /// A request with no complete response after this long is an error.
    pub timeout: Duration,
    /// TLS configuration for https.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// HTTP/2 (h2c with prior knowledge on http://, ALPN h2 on https://),
    /// as h2load loads.
    pub http2: bool,
    /// HTTP/3 over QUIC (https:// only, ALPN h3), streams as HTTP/2's.
    pub http3: bool,
    /// HTTP/2 or HTTP/3 streams in flight per connection (h2load's -m).
    pub streams: usize,
}

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Options that cannot run.
    #[error("{0}")]
    Usage(String),
    /// The target's name does not resolve.
    #[error("cannot resolve {0}")]
    Resolve(String, #[source] std::io::Error),
    /// Not enough file descriptors for the connections.
    #[error(
        "-c {conns} needs about {need} file descriptors, but the hard limit is {hard} (raise it: ulimit -Hn, or LimitNOFILE= for a service)"
    )]
    FdLimit {
        /// Connections asked for.
        conns: usize,
        /// Descriptors needed.
        need: u64,
        /// The hard limit.
        hard: u64,
    },
    /// No request got a response: the first error, as the run saw it.
    #[error("no request got a response from {url}: {first}")]
    NothingAnswered {
        /// The target.
        url: String,
        /// The first error.
        first: String,
    },
    /// More than half the responses were errors (4xx and 5xx): the run's
    /// rate is not the server's throughput (wrk exits 0 here; the
    /// difference is on purpose, `docs/options-wrk.md`).
    #[error(
        "{errors} of {responses} responses were 4xx or 5xx (statuses {statuses}): the rate above is of error pages, not the server's throughput"
    )]
    MostlyErrors {
        /// Responses with a status of 400 or more.
        errors: u64,
        /// Every response.
        responses: u64,
        /// The error statuses and their counts, `400: 12`.
        statuses: String,
    },
    /// Starting the threads or runtimes failed.
    #[error("cannot start the load threads")]
    Io(#[from] std::io::Error),
    /// `--cacert` holds no usable certificate.
    #[error("--cacert: cannot set up TLS")]
    Tls(#[from] tcpwise_http::tls::TlsSetupError),
}

/// The request a run sends, built by curl's rules (`-X`, `--data` as
/// curl's `-d` with `@FILE`, `-H`), straight to the server whatever the
/// proxy variables say, and the other URLs, parsed as curl parses them.
pub fn request(
    urls: &[String],
    method: Option<String>,
    data: Option<String>,
    headers: Vec<tcpwise_client::Header>,
) -> Result<(tcpwise_client::Request, Vec<url::Url>), BenchError> {
    let bad = |e: tcpwise_curl::CurlError| BenchError::Usage(tcpwise_outcome::chain_text(&e));
    let more = urls
        .iter()
        .skip(1)
        .map(|u| tcpwise_curl::parse_url(u).map_err(bad))
        .collect::<Result<_, _>>()?;
    let first = urls.first().map_or("", String::as_str);
    let curl = tcpwise_curl::CurlArgs {
        method,
        data: data.into_iter().map(tcpwise_curl::Data::Ascii).collect(),
        headers,
        proxy: Some(String::new()),
        ..Default::default()
    };
    let req = curl
        .request(first, &mut || {
            Err(std::io::Error::other("standard input is not read by bench"))
        })
        .map_err(bad)?;
    Ok((req, more))
}

/// The TLS configuration for `url`: none for http://; for https://, the
/// web's roots plus `cacert`'s certificates, or any certificate at all
/// (`insecure`, for self-signed test origins).
pub fn tls_config(
    url: &url::Url,
    insecure: bool,
    cacert: Option<&std::path::Path>,
) -> Result<Option<Arc<rustls::ClientConfig>>, BenchError> {
    if url.scheme() != "https" {
        return Ok(None);
    }
    if insecure {
        return Ok(Some(tcpwise_http::tls::insecure_client_config()?));
    }
    let extra = match cacert {
        Some(p) => vec![
            std::fs::read(p)
                .map_err(|e| BenchError::Usage(format!("--cacert {}: {e}", p.display())))?,
        ],
        None => Vec::new(),
    };
    Ok(Some(tcpwise_http::tls::client_config(&extra)?))
}

impl Options {
    /// Refuses a run that cannot be made.
    pub fn validate(&self) -> Result<(), BenchError> {
        let u = |m: &str| Err(BenchError::Usage(m.to_string()));
        if !matches!(self.url.scheme(), "http" | "https") {
            return u("only http:// and https:// URLs can be loaded");
        }
        if self.url.host_str().is_none() {
            return u("the URL has no host");
        }
        if self.connections == 0 || self.connections > 1_000_000 {
            return u("-c must be from 1 to 1000000");
        }
        if self.threads == 0 || self.threads > 1024 {
            return u("-t must be from 1 to 1024");
        }
        if self.connections < self.threads {
            return u(
                "-c must be at least -t: each thread needs a connection (wrk: \"number of connections must be >= threads\")",
            );
        }
        if self.duration.is_some() == self.requests.is_some() {
            return u("give one of -d DURATION and -n REQUESTS");
        }
        if self
            .duration
            .is_some_and(|d| d.is_zero() || d > Duration::from_secs(86400))
        {
            return u("-d must be longer than 0 and at most 24h");
        }
        if self.requests == Some(0) {
            return u("-n must be at least 1");
        }
        if let Some(r) = self.rate
            && !(r.is_finite() && r > 0.0 && r <= 10_000_000.0)
        {
            return u("--rate must be a number of requests per second above 0 (at most 10000000)");
        }
        if self.streams == 0 || self.streams > 1024 {
            return u("-m must be from 1 to 1024");
        }
        if self.streams > 1 && !self.http2 && !self.http3 {
            return u(
                "-m (streams per connection) needs --http2 or --http3: HTTP/1.1 carries one request at a time",
            );
        }
        if (self.http2 || self.http3) && self.rate.is_some() {
            return u(
                "--rate (open loop) is HTTP/1.1 only for now; drop --http2/--http3 or --rate",
            );
        }
        if self.http2 && self.http3 {
            return u("--http2 and --http3: give one");
        }
        if self.http3 && self.url.scheme() != "https" {
            return u("--http3 needs an https:// URL (HTTP/3 is QUIC, TLS inside)");
        }
        if self.timeout.is_zero() {
            return u("--timeout must be longer than 0");
        }
        let origin = |u: &url::Url| {
            (
                u.scheme().to_string(),
                u.host_str().map(str::to_string),
                u.port_or_known_default(),
            )
        };
        if self
            .more_urls
            .iter()
            .any(|u| origin(u) != origin(&self.url))
        {
            return u(
                "every URL must have the first one's scheme, host and port (they share the connections)",
            );
        }
        if self.url.scheme() == "https" && self.tls.is_none() {
            return u("https needs a TLS configuration");
        }
        Ok(())
    }

    /// Every URL's request, serialised once.
    pub fn requests_bytes(&self) -> Vec<Vec<u8>> {
        std::iter::once(&self.url)
            .chain(&self.more_urls)
            .map(|u| self.request_bytes(u))
            .collect()
    }

    /// The request for `url`, serialised.
    pub fn request_bytes(&self, url: &url::Url) -> Vec<u8> {
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        let host = match (self.url.host_str(), self.url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => String::new(),
        };
        // As wrk's `wrk.format`: a `-H Host:` replaces the URL's host (wrk
        // matches the name exactly; we match it in any case, so
        // `-H 'host: x'` does not send two, which servers answer with
        // 400), no User-Agent unless `-H` gives one, and Content-Length
        // is the body's (a `-H` one is replaced, or dropped without a
        // body, as wrk sets it from the body).
        let named = |name: &'static str| move |k: &String| k.eq_ignore_ascii_case(name);
        let mut r = format!("{} {path} HTTP/1.1\r\n", self.method);
        if !self.headers.iter().any(|(k, _)| named("host")(k)) {
            r.push_str(&format!("Host: {host}\r\n"));
        }
        // `-H 'Name:'` removes a header (curl's spelling): not written.
        for (k, v) in self
            .headers
            .iter()
            .filter(|(k, v)| v != tcpwise_client::REMOVE && !named("content-length")(k))
        {
            r.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some(b) = &self.body {
            r.push_str(&format!("Content-Length: {}\r\n", b.len()));
        }
        r.push_str("\r\n");
        let mut bytes = r.into_bytes();
        if let Some(b) = &self.body {
            bytes.extend_from_slice(b);
        }
        bytes
    }
}

/// Percentiles of one distribution, ms.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50_ms: f64,
    /// 75th.
    pub p75_ms: f64,
    /// 90th.
    pub p90_ms: f64,
    /// 99th.
    pub p99_ms: f64,
    /// 99.9th.
    pub p999_ms: f64,
    /// 99.99th.
    pub p9999_ms: f64,
    /// Largest.
    pub max_ms: f64,
    /// Mean.
    pub mean_ms: f64,
}

/// Socket and protocol errors, by kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Errors {
    /// Connections that could not be made (refused, unreachable, TLS).
    pub connect: u64,
    /// Reads that failed (reset) or ended early (closed mid-response).
    pub read: u64,
    /// Writes that failed.
    pub write: u64,
    /// Responses not complete within `--timeout`.
    pub timeout: u64,
    /// Responses that were not HTTP.
    pub parse: u64,
}

impl Errors {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout + self.parse
    }

    fn add(&mut self, o: &Errors) {
        self.connect += o.connect;
        self.read += o.read;
        self.write += o.write;
        self.timeout += o.timeout;
        self.parse += o.parse;
    }
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The target.
    pub url: String,
    /// Connections.
    pub connections: usize,
    /// Threads.
    pub threads: usize,
    /// `closed` or `open`.
    pub mode: &'static str,
    /// `HTTP/1.1`, `HTTP/2` or `HTTP/3`.
    pub protocol: &'static str,
    /// Streams in flight per connection (1 for HTTP/1.1).
    pub streams: usize,
    /// The open loop's target rate, requests/s.
    pub target_rate: Option<f64>,
    /// Measured time, s.
    pub duration_s: f64,
    /// Responses completed.
    pub requests: u64,
    /// Requests sent (open loop: on or behind schedule).
    pub sent: u64,
    /// Responses per second.
    pub requests_per_s: f64,
    /// Requests sent per second (open loop: how close to `--rate`).
    pub achieved_rate: Option<f64>,
    /// Latency (open loop: from the time each request was due).
    pub latency: Percentiles,
    /// Time to the first byte of the response (same origin).
    pub ttfb: Percentiles,
    /// Shortcuts for the JSON summary.
    pub p50_ms: f64,
    /// 99th percentile latency.
    pub p99_ms: f64,
    /// 99.9th percentile latency.
    pub p999_ms: f64,
    /// Largest latency.
    pub max_ms: f64,
    /// Responses by status code.
    pub status: BTreeMap<u16, u64>,
    /// Responses outside 2xx.
    pub non_2xx: u64,
    /// Responses with a status of 400 or more: what wrk prints as
    /// "Non-2xx or 3xx responses" (wrk counts `status > 399`).
    pub error_responses: u64,
    /// Errors, all kinds.
    pub errors: u64,
    /// Errors by kind.
    pub errors_by_kind: Errors,
    /// The first error seen, for the message.
    pub first_error: Option<String>,
    /// Connections opened (reconnects included).
    pub connects: u64,
    /// Of the `connections`, how many got at least one response.
    pub connections_served: u64,
    /// Response bytes read (heads and bodies).
    pub bytes_read: u64,
    /// Request bytes written.
    pub bytes_written: u64,
    /// Soft RLIMIT_NOFILE during the run.
    pub fd_limit: u64,
    /// Stopped early by SIGINT or SIGTERM: the figures cover the time
    /// until then.
    pub interrupted: bool,
}

impl Report {
    /// The run's answer after its report: an error when more than half
    /// of its responses were 4xx or 5xx (a load test must not present
    /// error pages as throughput).
    pub fn outcome(&self) -> Result<(), BenchError> {
        if self.error_responses * 2 <= self.requests {
            return Ok(());
        }
        let statuses: Vec<String> = self
            .status
            .iter()
            .filter(|(c, _)| **c > 399)
            .map(|(c, n)| format!("{c}: {n}"))
            .collect();
        Err(BenchError::MostlyErrors {
            errors: self.error_responses,
            responses: self.requests,
            statuses: statuses.join(", "),
        })
    }

    /// The report as text; with `wrk_latency` (`--latency`) followed by
    /// wrk's own "Latency Distribution" table, laid out as wrk lays it.
    pub fn text(&self, wrk_latency: bool) -> String {
        if !wrk_latency {
            return self.to_string();
        }
        let l = &self.latency;
        let mut t = format!("{self}\n  Latency Distribution");
        for (p, ms) in [
            (50, l.p50_ms),
            (75, l.p75_ms),
            (90, l.p90_ms),
            (99, l.p99_ms),
        ] {
            t.push_str(&format!("\n{p:>7}%{}", wrk_units(ms * 1000.0)));
        }
        t
    }
}

/// A time in microseconds as wrk prints it in a column of 10: two
/// decimals and its unit (`85.00us`, `1.00ms`, `2.09s`), right-aligned,
/// a one-letter unit followed by a space.
fn wrk_units(us: f64) -> String {
    let us = us.round();
    let (v, unit) = if us < 1e3 {
        (us, "us")
    } else if us < 1e6 {
        (us / 1e3, "ms")
    } else if us < 60e6 {
        (us / 1e6, "s")
    } else if us < 3600e6 {
        (us / 60e6, "m")
    } else {
        (us / 3600e6, "h")
    };
    let text = format!("{v:.2}{unit}");
    if unit.len() == 2 {
        format!("{text:>10}")
    } else {
        format!("{text:>9} ")
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} {} {}: {} connections{}, {} threads, {:.2} s{}{}",
            self.mode,
            self.protocol,
            self.url,
            self.connections,
            if self.streams > 1 {
                format!(" x {} streams", self.streams)
            } else {
                String::new()
            },
            self.threads,
            self.duration_s,
            self.target_rate
                .map(|r| format!(", target {r:.0} req/s"))
                .unwrap_or_default(),
            if self.interrupted {
                " (interrupted: the figures cover the time until the signal)"
            } else {
                ""
            }
        )?;
        writeln!(
            f,
            "{} requests, {:.0} req/s{}; {:.2} MB read",
            self.requests,
            self.requests_per_s,
            self.achieved_rate
                .map(|r| format!(" (sent {r:.0}/s)"))
                .unwrap_or_default(),
            self.bytes_read as f64 / 1e6
        )?;
        for (name, p) in [("latency", &self.latency), ("ttfb", &self.ttfb)] {
            writeln!(
                f,
                "{name:8} p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  p99.99 {:.3}  max {:.3} ms",
                p.p50_ms, p.p90_ms, p.p99_ms, p.p999_ms, p.p9999_ms, p.max_ms
            )?;
        }
        writeln!(
            f,
            "{} of {} connections served, {} connects",
            self.connections_served, self.connections, self.connects
        )?;
        let codes: Vec<String> = self
            .status
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect();
        let e = &self.errors_by_kind;
        write!(
            f,
            "status {}; non-2xx {}; errors {} (connect {}, read {}, write {}, timeout {}, parse {})",
            codes.join(", "),
            self.non_2xx,
            self.errors,
            e.connect,
            e.read,
            e.write,
            e.timeout,
            e.parse
        )?;
        // wrk's own line, printed as wrk prints it: only when there are any.
        if self.error_responses > 0 {
            write!(f, "\n  Non-2xx or 3xx responses: {}", self.error_responses)?;
        }
        Ok(())
    }
}

impl tcpwise_outcome::Classify for BenchError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        use tcpwise_outcome::Class;
        Some(match self {
            BenchError::Usage(_) => Class::Usage,
            BenchError::FdLimit { .. } => Class::Privileges,
            BenchError::Tls(_) => Class::Usage,
            _ => Class::Failed,
        })
    }
}

#[cfg(test)]
mod wrk_tests {
    /// wrk's column: `%.2f` and a unit, right-aligned in 10 (one-letter
    /// units leave a space after them).
    #[test]
    fn times_as_wrk_prints_them() {
        assert_eq!(super::wrk_units(85.0), "   85.00us");
        assert_eq!(super::wrk_units(1000.0), "    1.00ms");
        assert_eq!(super::wrk_units(511.4), "  511.00us");
        assert_eq!(super::wrk_units(2_090_000.0), "    2.09s ");
        assert_eq!(super::wrk_units(90e6), "    1.50m ");
    }
}
