//! `tcpwise get` (curl-like) and `tcpwise serve`.

use crate::Usage;
use anyhow::Result;
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use tcpwise_http::curl::{CurlArgs, remote_name};
use tcpwise_http::{Client, ClientConfig, Header, Redirects};
use tcpwise_pool::{Limits, Policy};
use tcpwise_tcp::{BufferPolicy, ReadSizer};
use tcpwise_units::{Bytes, Seconds};

pub const GET_EXIT_CODES: &str = "\
Exit status (curl's numbers where curl has one):
  0   every transfer completed (any HTTP status, unless --fail)
  2   bad flags or URL
  6   could not resolve the host
  7   could not connect
  8   the server's response was not valid HTTP
  22  HTTP status 400 or above with --fail
  23  could not write the body (disk, pipe)
  28  --max-time or --connect-timeout elapsed
  35  the TLS handshake failed
  47  too many redirects
  56  the connection failed while receiving the body
  60  the server's certificate is not trusted (expired, another name, unknown issuer)
  63  the body grew past --max-filesize";

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
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<Header>,
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
    /// Show errors even with -s (curl's -S; errors always show here).
    #[arg(short = 'S', long = "show-error")]
    pub show_error: bool,
    /// Follow redirects (at most 20).
    #[arg(short = 'L', long = "location")]
    pub location: bool,
    /// Exit 22 on HTTP status 400 or above.
    #[arg(short = 'f', long = "fail")]
    pub fail: bool,
    /// Give up connecting after this long (per connection, curl's exit 28): 10, 2.5, 500ms.
    #[arg(long, value_name = "SECONDS", default_value = "10")]
    pub connect_timeout: Seconds,
    /// Accept any server certificate (curl's -k): for self-signed test origins only.
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Fail (curl's exit 63) when a body grows past SIZE, e.g. an endless chunked body.
    #[arg(long, value_name = "SIZE")]
    pub max_filesize: Option<Bytes>,
    /// Give up after this long (whole run): 10, 2.5, 500ms.
    #[arg(short = 'm', long = "max-time", value_name = "SECONDS")]
    pub max_time: Option<Seconds>,
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
    #[arg(long, default_value = "max-burst", value_name = "POLICY")]
    pub pool_policy: Policy,
    /// Connections per origin at once.
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub max_conns: usize,
    /// Read sizes: slow-start[:MAX], fixed:N, adaptive[:MAX].
    #[arg(long, default_value = "slow-start", value_name = "POLICY")]
    pub read_sizing: ReadSizer,
    /// Pin SO_RCVBUF (default: autotuned; see `tcpwise perf` for why not).
    #[arg(long, value_name = "SIZE")]
    pub rcvbuf: Option<Bytes>,
    /// Pin SO_SNDBUF (default: autotuned).
    #[arg(long, value_name = "SIZE")]
    pub sndbuf: Option<Bytes>,
    /// Also trust the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
}

pub fn get(a: GetArgs) -> Result<i32> {
    if a.parallel == 0 || a.max_conns == 0 {
        return Err(Usage("--parallel and --max-conns must be at least 1".into()).into());
    }
    if a.output.len() > a.urls.len() {
        let msg = format!("{} -o files for {} URLs", a.output.len(), a.urls.len());
        return Err(Usage(msg).into());
    }
    if matches!(a.rcvbuf, Some(Bytes(0))) || matches!(a.sndbuf, Some(Bytes(0))) {
        return Err(Usage("--rcvbuf and --sndbuf must be positive".into()).into());
    }
    let words = CurlArgs {
        method: a.method.clone(),
        head: a.head,
        data: a.data.clone(),
        headers: a.headers.clone(),
    };
    let mut reqs = Vec::new();
    for (i, u) in a.urls.iter().enumerate() {
        let req = words.request(u)?;
        let out = a.output.get(i).cloned();
        let out = out.or_else(|| a.remote_name.then(|| remote_name(&req.url)));
        reqs.push((req, out));
    }
    let extra_ca = match &a.cacert {
        Some(p) => vec![
            std::fs::read(p)
                .map_err(|e| Usage(format!("cannot read --cacert {}: {e}", p.display())))?,
        ],
        None => Vec::new(),
    };
    let buffers = if a.rcvbuf.is_some() || a.sndbuf.is_some() {
        BufferPolicy::Static {
            rcv: a.rcvbuf.map(|b| b.0),
            snd: a.sndbuf.map(|b| b.0),
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
        connect_timeout: a.connect_timeout.std(),
        insecure: a.insecure,
        max_body: a.max_filesize.map(|b| b.0),
    });
    let redirects = Redirects {
        follow: a.location,
        ..Redirects::default()
    };
    let run = async {
        let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(a.parallel));
        let mut tasks = Vec::new();
        for (req, out) in reqs {
            let client = client.clone();
            // Taken here, in URL order, so --parallel 1 fetches in order.
            let permit = sem.clone().acquire_owned().await.expect("open");
            tasks.push(tokio::spawn(async move {
                let _p = permit;
                let url = req.url.to_string();
                let r = client.fetch_last_body(req, redirects, out.as_deref()).await;
                (url, r)
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.expect("task"));
        }
        out
    };
    let rt = crate::runtime()?;
    let results = match a.max_time {
        Some(d) => rt
            .block_on(async { tokio::time::timeout(d.std(), run).await })
            .map_err(|_| MaxTime(d.std().as_secs_f64()))?,
        None => rt.block_on(run),
    };
    let mut code = 0;
    let mut json: Vec<serde_json::Value> = Vec::new();
    let mut warned = std::collections::HashSet::new();
    let mut so = std::io::stdout().lock();
    for (url, r) in results {
        let (chain, body, err) = match r {
            Ok((chain, body)) => (chain, body, None),
            Err(e) => (e.chain, Vec::new(), Some(e.error)),
        };
        for resp in &chain {
            if a.timing {
                eprintln!("{url}  {}", resp.timing_report());
            }
            if (a.include || a.head) && !a.json {
                let _ = write!(so, "{}", resp.head_text());
            }
            for w in &resp.conn.buffers.warnings {
                if !a.silent && warned.insert(w.clone()) {
                    eprintln!("tcpwise: warning: {w}");
                }
            }
        }
        let failure: Option<anyhow::Error> = match (err, chain.last()) {
            (Some(e), _) => Some(e.into()),
            (None, Some(last)) => {
                if !a.silent
                    && let Some(d) = last.rcvbuf_diagnosis()
                {
                    eprintln!("tcpwise: warning: {url}: {d}");
                }
                // With --json the bodies are not printed.
                let written = if a.json { Ok(()) } else { so.write_all(&body) };
                match written {
                    Err(e) => Some(tcpwise_http::HttpError::Sink(e).into()),
                    Ok(()) if a.fail && last.status >= 400 => Some(HttpStatus(last.status).into()),
                    Ok(()) => None,
                }
            }
            (None, None) => None,
        };
        let mut error = serde_json::Value::Null;
        if let Some(e) = failure {
            eprintln!("tcpwise: error: {url}: {e:#}");
            let c = crate::exit_code(&e);
            code = code.max(c);
            error = serde_json::json!({ "message": format!("{e:#}"), "exit_code": c });
        }
        // One entry per URL, in order: its responses (redirects first) or its error.
        json.push(serde_json::json!({ "url": url, "responses": chain, "error": error }));
    }
    if a.json {
        let _ = writeln!(so, "{}", serde_json::to_string_pretty(&json)?);
    }
    let _ = so.flush();
    Ok(code)
}

/// `--fail` and a status of 400 or above (curl's exit 22).
#[derive(Debug, thiserror::Error)]
#[error("HTTP {0}")]
pub struct HttpStatus(pub u16);

/// `--max-time` ran out (curl's exit 28).
#[derive(Debug, thiserror::Error)]
#[error("--max-time {0:.1} s elapsed")]
pub struct MaxTime(pub f64);

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: PORT (all addresses, IPv4 and IPv6),
    /// HOST:PORT (a name is resolved: localhost:8080), IPv4:PORT or
    /// [IPv6]:PORT.
    #[arg(long, default_value = "[::]:8080", value_parser = parse_bind, value_name = "ADDR")]
    pub bind: SocketAddr,
    /// Port on all addresses: the same as --bind PORT.
    #[arg(short = 'p', long, conflicts_with = "bind", value_name = "PORT")]
    pub port: Option<u16>,
    /// Serve HTTPS with a fresh self-signed certificate.
    #[arg(long)]
    pub tls: bool,
    /// With --tls: write the certificate (PEM) here, for curl --cacert / tcpwise get --cacert.
    #[arg(long, value_name = "FILE")]
    pub cert_out: Option<PathBuf>,
    /// With --tls: extra names for the certificate (localhost and the bind address are always in).
    #[arg(long = "tls-name", value_name = "NAME")]
    pub tls_names: Vec<String>,
    /// Log one line per request to stderr in nginx's combined format,
    /// followed by the request time in seconds ($request_time).
    #[arg(long)]
    pub access_log: bool,
    /// Serve the files and directory listings under DIR (as python3 -m
    /// http.server does) instead of /bytes, /delay, /echo and /health:
    /// Content-Type from the extension, ETag/Last-Modified with 304s,
    /// single and multiple Range requests (206, 416), HEAD. No path leaves
    /// DIR: a `..` segment (however encoded) or a symlink out is a 403.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Compress responses (text, /bytes, files and listings) with gzip for
    /// HTTP/1.1 clients whose Accept-Encoding allows it, streamed in
    /// chunks; ETags become weak, ranges and 304s stay uncompressed.
    #[arg(long)]
    pub gzip: bool,
    /// Worker threads, each with its own event loop and SO_REUSEPORT listener
    /// (nginx's worker model). Default: one per CPU this process may run on.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Limit: time to receive a request head, from its first byte (from the
    /// connection's start for the first request); slowloris connections are
    /// closed after it. TLS handshakes get the same time.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "10",
        help_heading = "Limits"
    )]
    pub header_timeout: Seconds,
    /// Limit: close a keep-alive connection idle this long; also the longest
    /// a request body or a response may make no progress.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "60",
        help_heading = "Limits"
    )]
    pub idle_timeout: Seconds,
    /// Limit: largest request head (larger: 431 and close).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "64KiB",
        help_heading = "Limits"
    )]
    pub max_header_size: Bytes,
    /// Limit: largest /echo request body (larger: 413 and close; a chunked
    /// body that grows past it is cut off).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "1GiB",
        help_heading = "Limits"
    )]
    pub max_body: Bytes,
    /// Limit: largest N of /bytes/N (larger: 400).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "100GB",
        help_heading = "Limits"
    )]
    pub max_bytes: Bytes,
    /// Limit: longest MS of /delay/MS (longer: 400).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "600",
        help_heading = "Limits"
    )]
    pub max_delay: Seconds,
    /// Limit: connections open at once (lowered to fit RLIMIT_NOFILE); more
    /// wait in the listen backlog, and a line on stderr says so.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 16_384,
        help_heading = "Limits"
    )]
    pub max_conns: usize,
}

/// `--bind`: `PORT`, `HOST:PORT` (resolved), `IPv4:PORT` or `[IPv6]:PORT`.
fn parse_bind(s: &str) -> std::result::Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(p) = s.parse::<u16>() {
        return Ok(SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, p)));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if s.parse::<std::net::IpAddr>().is_ok() || !s.contains(':') {
        return Err(format!(
            "'{s}' has no port: give PORT, HOST:PORT, IPv4:PORT or [IPv6]:PORT"
        ));
    }
    match s.to_socket_addrs() {
        Ok(mut it) => it
            .next()
            .ok_or_else(|| format!("'{s}' resolves to no address")),
        Err(e) => Err(format!(
            "cannot resolve '{s}': {e} (give PORT, HOST:PORT, IPv4:PORT or [IPv6]:PORT)"
        )),
    }
}

pub fn serve(mut a: ServeArgs) -> Result<i32> {
    if let Some(p) = a.port {
        a.bind = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, p));
    }
    if a.tls_names.len() + usize::from(a.cert_out.is_some()) > 0 && !a.tls {
        return Err(Usage("--cert-out and --tls-name need --tls".into()).into());
    }
    let tls = if a.tls {
        let mut names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
        if !a.bind.ip().is_unspecified() {
            names.push(a.bind.ip().to_string());
        }
        names.extend(a.tls_names.iter().cloned());
        let (cfg, pem) = tcpwise_http::tls::self_signed(&names)?;
        if let Some(p) = &a.cert_out {
            std::fs::write(p, pem)
                .map_err(|e| Usage(format!("cannot write {}: {e}", p.display())))?;
        }
        Some(cfg)
    } else {
        None
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    for (d, flag) in [
        (a.header_timeout, "--header-timeout"),
        (a.idle_timeout, "--idle-timeout"),
    ] {
        if d.0 == 0 {
            return Err(Usage(format!("{flag} must be more than 0")).into());
        }
    }
    if a.max_conns == 0 || a.max_header_size.0 < 64 {
        return Err(Usage(
            "--max-conns must be at least 1 and --max-header-size at least 64 bytes".into(),
        )
        .into());
    }
    let limits = tcpwise_http::Limits {
        header_timeout: a.header_timeout.std(),
        idle_timeout: a.idle_timeout.std(),
        max_head: usize::try_from(a.max_header_size.0).unwrap_or(usize::MAX),
        max_body: a.max_body.0,
        max_bytes: a.max_bytes.0,
        max_delay: a.max_delay.std(),
        max_conns: a.max_conns,
    }
    .fit_fd_limit();
    let max_conns = limits.max_conns;
    let root = match &a.root {
        None => None,
        Some(d) => Some(std::sync::Arc::new(
            tcpwise_http::server::files::Root::new(d)
                .map_err(|e| Usage(format!("--root {}: {e}", d.display())))?,
        )),
    };
    let opts = tcpwise_http::ServeOptions {
        bind: a.bind,
        tls,
        access_log: a.access_log,
        limits,
        root,
        gzip: a.gzip,
    };
    let (tx, rx) = tokio::sync::watch::channel(false);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Signals are watched on a thread of their own; they end every worker.
    std::thread::spawn(move || {
        rt.block_on(crate::stop_signal());
        let _ = tx.send(true);
    });
    let threads = a.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    tcpwise_http::serve_threads(opts, threads, rx, |addr| {
        eprintln!(
            "tcpwise serve: {threads} thread(s), at most {max_conns} connections, header timeout {}, idle timeout {}; listening on {scheme}://{addr}",
            tcpwise_units::fmt_nanos(a.header_timeout.0),
            tcpwise_units::fmt_nanos(a.idle_timeout.0)
        )
    })
    .map_err(|e| anyhow::Error::new(e).context(format!("cannot serve on {}", a.bind)))?;
    Ok(0)
}
