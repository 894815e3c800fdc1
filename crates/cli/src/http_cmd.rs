//! `tcpwise get` (curl-like) and `tcpwise serve`.

use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use tcpwise_http::{Client, ClientConfig, HttpError, Request, Response};
use tcpwise_link::units::{parse_duration, parse_size};
use tcpwise_pool::{Limits, Policy};
use tcpwise_tcp::{BufferPolicy, ReadSizer};

pub const GET_EXIT_CODES: &str = "\
Exit status (curl's numbers where curl has one):
  0   every transfer completed (any HTTP status, unless --fail)
  2   bad flags or URL
  6   could not resolve the host
  7   could not connect
  8   the server's response was not valid HTTP
  22  HTTP status 400 or above with --fail
  23  could not write the body (disk, pipe)
  28  --max-time elapsed
  35  TLS failed
  47  too many redirects
  56  the connection failed while receiving the body";

fn policy(s: &str) -> Result<Policy, String> {
    Policy::parse(s)
}
fn read_sizing(s: &str) -> Result<ReadSizer, String> {
    ReadSizer::parse(s, |x| parse_size(x).map_err(|e| e.to_string()))
}
fn size(s: &str) -> Result<u64, String> {
    match parse_size(s).map_err(|e| e.to_string())? {
        0 => Err(format!("'{s}': a size must be positive")),
        n => Ok(n),
    }
}
fn secs(s: &str) -> Result<Duration, String> {
    if let Ok(v) = s.parse::<f64>() {
        return if v.is_finite() && v > 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(format!("'{s}' must be positive"))
        };
    }
    parse_duration(s)
        .map(Duration::from_nanos)
        .map_err(|e| e.to_string())
}
fn header(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| format!("'{s}' is not 'Name: value'"))?;
    let k = k.trim();
    if k.is_empty()
        || !k
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b))
    {
        return Err(format!("'{k}' is not a header name"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// URLs to fetch; they share one connection pool.
    #[arg(required = true, value_name = "URL")]
    pub urls: Vec<String>,
    /// Write the body of the URL in the same position to FILE (repeatable).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Vec<PathBuf>,
    /// Write each body to a file named like the URL's last path segment.
    #[arg(short = 'O', long = "remote-name")]
    pub remote_name: bool,
    /// Extra request header 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_parser = header, value_name = "HEADER")]
    pub headers: Vec<(String, String)>,
    /// Request method.
    #[arg(short = 'X', long = "request", value_name = "METHOD")]
    pub method: Option<String>,
    /// Request body (POST unless -X says otherwise); @FILE reads a file.
    #[arg(short = 'd', long = "data", value_name = "DATA")]
    pub data: Option<String>,
    /// Print response headers before the body.
    #[arg(short = 'i', long = "include")]
    pub include: bool,
    /// HEAD request; print the headers.
    #[arg(short = 'I', long = "head")]
    pub head: bool,
    /// No warnings (buffer diagnosis, capped buffers); errors still print.
    #[arg(short = 's', long = "silent")]
    pub silent: bool,
    /// Follow redirects (at most 20).
    #[arg(short = 'L', long = "location")]
    pub location: bool,
    /// Exit 22 on HTTP status 400 or above.
    #[arg(short = 'f', long = "fail")]
    pub fail: bool,
    /// Give up after this long (whole run): 10, 2.5, 500ms.
    #[arg(short = 'm', long = "max-time", value_parser = secs, value_name = "SECONDS")]
    pub max_time: Option<Duration>,
    /// Print the timings and the connection report of every response to stderr.
    #[arg(long)]
    pub timing: bool,
    /// Print one JSON array of responses (status, headers, timings, connection report) instead of bodies.
    #[arg(long)]
    pub json: bool,
    /// Fetch up to N URLs at once.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub parallel: usize,
    /// Which idle connection to reuse: fifo, lifo, max-burst, warmest[:EXP], kernel[:no-restart].
    #[arg(long, default_value = "max-burst", value_parser = policy, value_name = "POLICY")]
    pub pool_policy: Policy,
    /// Connections per origin at once.
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub max_conns: usize,
    /// Read sizes: slow-start[:MAX], fixed:N, adaptive[:MAX].
    #[arg(long, default_value = "slow-start", value_parser = read_sizing, value_name = "POLICY")]
    pub read_sizing: ReadSizer,
    /// Pin SO_RCVBUF (default: autotuned; see `tcpwise perf` for why not).
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub rcvbuf: Option<u64>,
    /// Pin SO_SNDBUF (default: autotuned).
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub sndbuf: Option<u64>,
    /// Also trust the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
}

fn exit_code(e: &HttpError) -> i32 {
    match e {
        HttpError::Url(..) => 2,
        HttpError::Dns(..) => 6,
        HttpError::Connect(..) => 7,
        HttpError::Protocol(..) => 8,
        HttpError::Sink(_) => 23,
        HttpError::Tls(..) => 35,
        HttpError::Body(..) => 56,
        HttpError::Buffer(_) => 2,
    }
}

fn usage(msg: String) -> i32 {
    eprintln!("tcpwise: error: {msg}");
    2
}

/// One URL's outcome: every response of its redirect chain, the body of the last.
struct Fetched {
    chain: Vec<Response>,
    body: Vec<u8>,
}

async fn fetch(
    client: &Client,
    first: Request,
    follow: bool,
    to_file: Option<&PathBuf>,
) -> Result<Fetched, (HttpError, Vec<Response>)> {
    let mut req = first;
    let mut chain = Vec::new();
    for _ in 0..=20 {
        let mut body = Vec::new();
        let mut file = match to_file {
            Some(p) => {
                Some(std::fs::File::create(p).map_err(|e| (HttpError::Sink(e), Vec::new()))?)
            }
            None => None,
        };
        let resp = client
            .request(&req, |d| match file.as_mut() {
                Some(f) => f.write_all(d),
                None => {
                    body.extend_from_slice(d);
                    Ok(())
                }
            })
            .await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) => return Err((e, chain)),
        };
        let redirect = follow && matches!(resp.status, 301 | 302 | 303 | 307 | 308);
        let location = resp.header("location").map(str::to_string);
        chain.push(resp);
        match (redirect, location) {
            (true, Some(loc)) => {
                let next = req
                    .url
                    .join(&loc)
                    .map_err(|e| (HttpError::Url(loc.clone(), e.to_string()), Vec::new()))?;
                let status = chain.last().map_or(0, |r| r.status);
                if status == 303
                    || (matches!(status, 301 | 302) && req.method == hyper::Method::POST)
                {
                    req.method = hyper::Method::GET;
                    req.body = bytes::Bytes::new();
                }
                req.url = next;
            }
            _ => return Ok(Fetched { chain, body }),
        }
    }
    Err((
        HttpError::Protocol(req.url.to_string(), "more than 20 redirects".into()),
        chain,
    ))
}

fn print_timing(url: &str, r: &Response) {
    let t = &r.timings;
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
    eprintln!(
        "{url}  {}  {} B  conn #{} {}  dns {}  connect {}  tls {}  written {:.1}  first byte {:.1}  done {:.1}  total {:.1} ms",
        r.status,
        r.body_bytes,
        r.conn.id,
        if r.conn.reused { "reused" } else { "new" },
        ms(t.dns_ms),
        ms(t.connect_ms),
        ms(t.tls_ms),
        t.request_written_ms,
        t.first_byte_ms,
        t.body_done_ms,
        t.total_ms
    );
    let c = &r.conn;
    eprintln!(
        "    pool {}: {}; history: {} requests, {} B read, largest burst {} B, up to {} B per RTT; rtt {}",
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
    );
}

/// The `tcp` crate's buffer diagnosis for one response fetched with a
/// pinned receive buffer: a warning when the transfer ran at the cap.
fn rcvbuf_warning(rcv: u64, r: &Response) -> Option<String> {
    use tcpwise_tcp::path;
    let max = tcpwise_tcp::buffer::core_max("rmem_max").unwrap_or(u64::MAX / 4);
    let held = 2 * rcv.min(max);
    let window = path::advertised_window(held, path::LINUX_WINDOW_FRACTION);
    let rtt_s = f64::from(r.conn.tcp_info_end.as_ref()?.rtt_us) / 1e6;
    let secs = (r.timings.body_done_ms - r.timings.first_byte_ms) / 1e3;
    if r.body_bytes as f64 <= 4.0 * window || secs <= 0.0 {
        return None;
    }
    let cap = path::window_cap_bps(window, rtt_s) / 1e6;
    let got = r.body_bytes as f64 * 8.0 / secs / 1e6;
    // The window was the limit if a window's worth arrived per RTT, or the
    // transfer ran at the window's cap.
    let full = r.conn.history.max_per_rtt as f64 >= 0.8 * window;
    (full || got >= 0.8 * cap).then(|| {
        format!(
            "limited by the static receive buffer: --rcvbuf {rcv} makes the kernel hold {held} bytes and advertise about {window:.0}; at the measured RTT of {:.1} ms that caps this transfer at {cap:.2} Mbit/s (measured {got:.2}). Drop --rcvbuf and let autotuning size the buffer.",
            rtt_s * 1e3
        )
    })
}

pub fn get(a: GetArgs) -> i32 {
    if a.parallel == 0 || a.max_conns == 0 {
        return usage("--parallel and --max-conns must be at least 1".into());
    }
    if a.output.len() > a.urls.len() {
        return usage(format!(
            "{} -o files for {} URLs",
            a.output.len(),
            a.urls.len()
        ));
    }
    let body = match a.data.as_deref() {
        None => bytes::Bytes::new(),
        Some(d) => match d.strip_prefix('@') {
            Some(path) => match std::fs::read(path) {
                Ok(b) => b.into(),
                Err(e) => return usage(format!("cannot read {path}: {e}")),
            },
            None => bytes::Bytes::copy_from_slice(d.as_bytes()),
        },
    };
    let method = match (&a.method, a.head, a.data.is_some()) {
        (Some(m), _, _) => match hyper::Method::from_bytes(m.as_bytes()) {
            Ok(m) => m,
            Err(_) => return usage(format!("'{m}' is not an HTTP method")),
        },
        (None, true, _) => hyper::Method::HEAD,
        (None, false, true) => hyper::Method::POST,
        (None, false, false) => hyper::Method::GET,
    };
    let mut reqs = Vec::new();
    for (i, u) in a.urls.iter().enumerate() {
        let url = match url::Url::parse(u) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => u,
            Ok(_) => return usage(format!("'{u}' is not an http:// or https:// URL")),
            Err(e) => return usage(format!("'{u}' is not a URL: {e}")),
        };
        let out = a.output.get(i).cloned().or_else(|| {
            a.remote_name.then(|| {
                let name = url
                    .path_segments()
                    .and_then(|mut s| s.next_back())
                    .filter(|s| !s.is_empty())
                    .unwrap_or("index.html");
                PathBuf::from(name)
            })
        });
        let mut headers = a.headers.clone();
        if a.data.is_some()
            && !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            headers.push((
                "content-type".into(),
                "application/x-www-form-urlencoded".into(),
            ));
        }
        reqs.push((
            Request {
                method: method.clone(),
                url,
                headers,
                body: body.clone(),
            },
            out,
        ));
    }
    let extra_ca = match &a.cacert {
        Some(p) => match std::fs::read(p) {
            Ok(b) => vec![b],
            Err(e) => return usage(format!("cannot read --cacert {}: {e}", p.display())),
        },
        None => Vec::new(),
    };
    if let (Some(n), Some(max)) = (a.rcvbuf, tcpwise_tcp::buffer::core_max("rmem_max"))
        && n > max
        && !a.silent
    {
        eprintln!(
            "tcpwise: warning: --rcvbuf {n} is above net.core.rmem_max ({max}): Linux silently caps it, so sockets hold {}",
            2 * max
        );
    }
    let buffers = if a.rcvbuf.is_some() || a.sndbuf.is_some() {
        BufferPolicy::Static {
            rcv: a.rcvbuf,
            snd: a.sndbuf,
        }
    } else {
        BufferPolicy::Auto
    };
    let client = Client::new(ClientConfig {
        policy: a.pool_policy,
        limits: Limits {
            max_idle: a.max_conns,
            ..Limits::default()
        },
        max_conns_per_origin: a.max_conns,
        read_sizing: a.read_sizing,
        buffers,
        extra_ca,
        ..ClientConfig::default()
    });
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return usage(format!("cannot start the runtime: {e}")),
    };
    let follow = a.location;
    let run = async {
        let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(a.parallel));
        let mut tasks = Vec::new();
        for (req, out) in reqs {
            let client = client.clone();
            // Taken here, in URL order, so --parallel 1 fetches in order.
            let permit = sem.clone().acquire_owned().await.expect("open");
            tasks.push(tokio::spawn(async move {
                let _p = permit;
                let r = fetch(&client, req.clone(), follow, out.as_ref()).await;
                (req.url.to_string(), r)
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.expect("task"));
        }
        out
    };
    let results = match a.max_time {
        Some(d) => match rt.block_on(async { tokio::time::timeout(d, run).await }) {
            Ok(r) => r,
            Err(_) => {
                eprintln!(
                    "tcpwise: error: --max-time {:.1} s elapsed",
                    d.as_secs_f64()
                );
                return 28;
            }
        },
        None => rt.block_on(run),
    };
    let mut code = 0;
    let mut json = Vec::new();
    let stdout = std::io::stdout();
    let mut so = stdout.lock();
    for (url, r) in results {
        match r {
            Ok(f) => {
                for resp in &f.chain {
                    if a.timing {
                        print_timing(&url, resp);
                    }
                    if (a.include || a.head) && !a.json {
                        let reason = hyper::StatusCode::from_u16(resp.status)
                            .ok()
                            .and_then(|s| s.canonical_reason())
                            .unwrap_or("");
                        let _ = writeln!(so, "HTTP/1.1 {} {reason}", resp.status);
                        for (k, v) in &resp.headers {
                            let _ = writeln!(so, "{k}: {v}");
                        }
                        let _ = writeln!(so);
                    }
                }
                if let (Some(rcv), Some(last)) = (a.rcvbuf, f.chain.last())
                    && !a.silent
                    && let Some(w) = rcvbuf_warning(rcv, last)
                {
                    eprintln!("tcpwise: warning: {url}: {w}");
                }
                if !a.json && so.write_all(&f.body).is_err() {
                    code = 23;
                }
                let last = f.chain.last().map_or(0, |r| r.status);
                if a.fail && last >= 400 {
                    eprintln!("tcpwise: error: {url}: HTTP {last}");
                    code = code.max(22);
                }
                json.extend(f.chain);
            }
            Err((e, chain)) => {
                eprintln!("tcpwise: error: {url}: {e}");
                json.extend(chain);
                code = code.max(exit_code(&e));
            }
        }
    }
    if a.json {
        let _ = writeln!(
            so,
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
    }
    let _ = so.flush();
    code
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "[::]:8080")]
    pub bind: SocketAddr,
    /// Serve HTTPS with a fresh self-signed certificate.
    #[arg(long)]
    pub tls: bool,
    /// With --tls: write the certificate (PEM) here, for curl --cacert / tcpwise get --cacert.
    #[arg(long, value_name = "FILE")]
    pub cert_out: Option<PathBuf>,
    /// With --tls: extra names for the certificate (localhost and the bind address are always in).
    #[arg(long = "tls-name", value_name = "NAME")]
    pub tls_names: Vec<String>,
    /// Log one line per request to stderr, with connection ids.
    #[arg(long)]
    pub access_log: bool,
}

pub fn serve(a: ServeArgs) -> i32 {
    let tls = if a.tls {
        let mut names = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ];
        if !a.bind.ip().is_unspecified() {
            names.push(a.bind.ip().to_string());
        }
        names.extend(a.tls_names.iter().cloned());
        match tcpwise_http::tls::self_signed(&names) {
            Ok((cfg, pem)) => {
                if let Some(p) = &a.cert_out
                    && let Err(e) = std::fs::write(p, pem)
                {
                    return usage(format!("cannot write {}: {e}", p.display()));
                }
                Some(cfg)
            }
            Err(e) => return usage(format!("cannot make a certificate: {e}")),
        }
    } else {
        if a.cert_out.is_some() {
            return usage("--cert-out needs --tls".into());
        }
        None
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return usage(format!("cannot start the runtime: {e}")),
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let opts = tcpwise_http::ServeOptions {
        bind: a.bind,
        tls,
        access_log: a.access_log,
    };
    let r = rt.block_on(async {
        let (tx, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(t) => t,
                    Err(_) => return,
                };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            let _ = tx.send(true);
        });
        tcpwise_http::serve(opts, rx, |addr| {
            eprintln!("tcpwise serve: listening on {scheme}://{addr}")
        })
        .await
    });
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tcpwise: error: cannot serve on {}: {e}", a.bind);
            1
        }
    }
}
