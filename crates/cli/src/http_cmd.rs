//! `tcpwise get` (curl-like) and `tcpwise serve`.

use crate::Usage;
use anyhow::Result;
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use tcpwise_http::curl::retry::{Outcome, RetryPolicy};
use tcpwise_http::curl::transfer::{self, Fail, Output, TransferError};
use tcpwise_http::curl::{CurlArgs, Data, remote_name, write_out};
use tcpwise_http::{Client, ClientConfig, Family, Header, Version};
use tcpwise_pool::{Limits, Policy};
use tcpwise_tcp::{BufferPolicy, ReadSizer};
use tcpwise_units::{Bytes, Seconds};

pub const GET_EXIT_CODES: &str = "\
Examples:
  tcpwise serve --bind 127.0.0.1:8080 & sleep 0.5
  tcpwise get -sS -o b.bin -w '%{http_code} %{pool_reason}\\n' 127.0.0.1:8080/bytes/9
  tcpwise get -Z --timing 127.0.0.1:8080/bytes/10 127.0.0.1:8080/bytes/20
  tcpwise get -v --http2-prior-knowledge 127.0.0.1:8080/health

Exit status (curl's numbers):
  0   every transfer completed (any HTTP status, unless -f)
  2   bad flags or URL
  6   could not resolve the host
  7   could not connect
  8   the server's response was not valid HTTP
  18  the body ended before its Content-Length or last chunk
  22  HTTP status 400 or above with -f or --fail-with-body
  23  could not write the body or the headers (disk, pipe)
  28  --max-time or --connect-timeout elapsed
  33  -C: the server ignored the range (cannot resume)
  35  the TLS handshake failed
  47  more redirects than --max-redirs
  56  the connection failed while receiving the body, or a proxy refused CONNECT
  60  the server's certificate is not trusted (expired, another name, unknown issuer)
  61  --compressed: the body does not decode
  63  the body grew past --max-filesize

Where tcpwise differs from curl 7.88 on purpose: error messages name the URL
and the cause chain (`tcpwise: error: URL: ...`); -O on a URL without a file
name writes index.html (curl refuses); -Z prints bodies in URL order; -w
knows %{tcp_rtt_ms} %{tcp_cwnd} %{pool_reason} %{conn_id} %{conn_reused};
--retry never retries a non-idempotent request (a POST may have taken
effect).";

#[derive(Debug, Args)]
pub struct GetArgs {
    /// URLs to fetch; they share one connection pool.
    #[arg(value_name = "URL", required_unless_present = "url")]
    pub urls: Vec<String>,
    /// Another URL (curl's --url), after the positional ones.
    #[arg(long = "url", value_name = "URL")]
    pub url: Vec<String>,
    /// Write the body of the URL in the same position to FILE ('-' is
    /// standard output; repeatable).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Vec<PathBuf>,
    /// Write each body to a file named like the URL's last path segment.
    #[arg(short = 'O', long = "remote-name")]
    pub remote_name: bool,
    /// Extra request header 'Name: value' (repeatable; 'Name:' removes a default one).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<Header>,
    /// Request method.
    #[arg(short = 'X', long = "request", value_name = "METHOD")]
    pub method: Option<String>,
    /// Request body (POST, form type); @FILE reads a file without its
    /// newlines, @- standard input. Several are joined with '&'.
    #[arg(short = 'd', long = "data", value_name = "DATA")]
    pub data: Vec<String>,
    /// As -d, but @FILE is sent as it is.
    #[arg(long = "data-binary", value_name = "DATA")]
    pub data_binary: Vec<String>,
    /// As -d, without the @ meaning.
    #[arg(long = "data-raw", value_name = "DATA")]
    pub data_raw: Vec<String>,
    /// As -d, percent-encoded: content, =content, name=content, @file, name@file.
    #[arg(long = "data-urlencode", value_name = "DATA")]
    pub data_urlencode: Vec<String>,
    /// Send the -d data in the URL's query with a GET.
    #[arg(short = 'G', long = "get")]
    pub get: bool,
    /// Multipart form part: name=value, name=@file (an upload), name=<file (its content); ;type=T sets the part's type.
    #[arg(short = 'F', long = "form", value_name = "NAME=CONTENT")]
    pub form: Vec<String>,
    /// PUT FILE ('-' for standard input); a URL ending in / gets the file's name.
    #[arg(short = 'T', long = "upload-file", value_name = "FILE")]
    pub upload: Option<PathBuf>,
    /// Basic authentication (credentials in the URL do the same).
    #[arg(short = 'u', long = "user", value_name = "USER:PASSWORD")]
    pub user: Option<String>,
    /// User-Agent header.
    #[arg(short = 'A', long = "user-agent", value_name = "NAME")]
    pub user_agent: Option<String>,
    /// Referer header.
    #[arg(short = 'e', long = "referer", value_name = "URL")]
    pub referer: Option<String>,
    /// Byte range(s): 0-499, 500-, -500, 0-0,-1.
    #[arg(short = 'r', long = "range", value_name = "RANGE")]
    pub range: Option<String>,
    /// Resume at OFFSET, or '-' for the size of the output file so far (appends to it).
    #[arg(short = 'C', long = "continue-at", value_name = "OFFSET")]
    pub continue_at: Option<String>,
    /// Ask for a compressed body (deflate, gzip, br, zstd) and decode it.
    #[arg(long)]
    pub compressed: bool,
    /// Print response headers before the body (into the -o file when there is one).
    #[arg(short = 'i', long = "include")]
    pub include: bool,
    /// HEAD request; print the headers.
    #[arg(short = 'I', long = "head")]
    pub head: bool,
    /// Write the response headers to FILE ('-' for standard output).
    #[arg(short = 'D', long = "dump-header", value_name = "FILE")]
    pub dump_header: Option<PathBuf>,
    /// Request and response headers and the connection choice, on standard error.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Print FORMAT after each transfer: curl's %{variables} (%{http_code},
    /// %{time_total}, %{json}, ...) and ours (%{tcp_rtt_ms}, %{tcp_cwnd},
    /// %{pool_reason}); @FILE reads it from a file.
    #[arg(short = 'w', long = "write-out", value_name = "FORMAT")]
    pub write_out: Option<String>,
    /// No progress meter, warnings or error messages (add -S for errors).
    #[arg(short = 's', long = "silent")]
    pub silent: bool,
    /// With -s, still print error messages.
    #[arg(short = 'S', long = "show-error")]
    pub show_error: bool,
    /// No progress meter.
    #[arg(long = "no-progress-meter")]
    pub no_progress_meter: bool,
    /// Follow redirects.
    #[arg(short = 'L', long = "location")]
    pub location: bool,
    /// At most this many redirects with -L (curl's default 50; -1 for no limit).
    #[arg(
        long = "max-redirs",
        value_name = "N",
        default_value_t = 50,
        allow_negative_numbers = true
    )]
    pub max_redirs: i64,
    /// Exit 22 on HTTP status 400 or above, writing no body.
    #[arg(short = 'f', long = "fail", conflicts_with = "fail_with_body")]
    pub fail: bool,
    /// Exit 22 on HTTP status 400 or above, after writing the body.
    #[arg(long = "fail-with-body")]
    pub fail_with_body: bool,
    /// Retry transient failures (timeouts; HTTP 408, 429, 500, 502, 503, 504) up to N times, waiting 1 s, 2 s, 4 s, ...
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retry: u32,
    /// Wait this long between retries instead.
    #[arg(long, value_name = "SECONDS")]
    pub retry_delay: Option<Seconds>,
    /// Start no retry after this long.
    #[arg(long, value_name = "SECONDS")]
    pub retry_max_time: Option<Seconds>,
    /// Also retry a refused connection.
    #[arg(long)]
    pub retry_connrefused: bool,
    /// Retry any failure.
    #[arg(long)]
    pub retry_all_errors: bool,
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
    /// IPv4 addresses only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 addresses only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Connect to ADDRESS for HOST:PORT (repeatable).
    #[arg(long, value_name = "HOST:PORT:ADDRESS")]
    pub resolve: Vec<tcpwise_http::Resolve>,
    /// HTTP proxy [http://][USER:PASSWORD@]HOST[:PORT] (CONNECT for https); '' for none. Default: http_proxy, https_proxy, all_proxy.
    #[arg(short = 'x', long = "proxy", value_name = "PROXY")]
    pub proxy: Option<String>,
    /// Hosts that skip the proxy (comma list, '*' for all; default: no_proxy).
    #[arg(long, value_name = "LIST")]
    pub noproxy: Option<String>,
    /// Fetch the URLs at once (curl's -Z), up to --parallel-max.
    #[arg(short = 'Z', long = "parallel")]
    pub parallel: bool,
    /// Transfers at once with -Z (curl's default 50).
    #[arg(long = "parallel-max", default_value_t = 50, value_name = "N")]
    pub parallel_max: usize,
    /// HTTP/1.1 only (the default offers HTTP/2 by ALPN on https://, as curl does).
    #[arg(long = "http1.1", conflicts_with_all = ["http2", "http2_prior_knowledge"])]
    pub http1_1: bool,
    /// HTTP/2 when the server agrees by TLS ALPN, else HTTP/1.1 (the default, as in curl).
    #[arg(long = "http2", conflicts_with = "http2_prior_knowledge")]
    pub http2: bool,
    /// HTTP/2 from the first byte, also on http:// (h2c).
    #[arg(long = "http2-prior-knowledge")]
    pub http2_prior_knowledge: bool,
    /// Print the timings and the connection report of every response to stderr.
    #[arg(long)]
    pub timing: bool,
    /// Print one JSON array of responses (status, headers, timings, connection report) instead of bodies.
    #[arg(long)]
    pub json: bool,
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

/// Standard input, read once (for `-d @-`, `-T -`, `-w @-`).
#[derive(Default)]
struct Stdin(Option<Vec<u8>>);

impl Stdin {
    fn read(&mut self) -> std::io::Result<Vec<u8>> {
        if self.0.is_none() {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)?;
            self.0 = Some(v);
        }
        Ok(self.0.clone().unwrap_or_default())
    }
}

/// The -d family in command-line order (clap keeps each flag apart).
fn data_in_order(a: &GetArgs, m: Option<&clap::ArgMatches>) -> Vec<Data> {
    let mut all: Vec<(usize, Data)> = Vec::new();
    let mut add = |id: &str, vals: &[String], f: fn(String) -> Data| {
        let idx: Vec<usize> = m
            .and_then(|m| m.indices_of(id))
            .map(|i| i.collect())
            .unwrap_or_default();
        for (n, v) in vals.iter().enumerate() {
            all.push((idx.get(n).copied().unwrap_or(usize::MAX), f(v.clone())));
        }
    };
    add("data", &a.data, Data::Ascii);
    add("data_binary", &a.data_binary, Data::Binary);
    add("data_raw", &a.data_raw, Data::Raw);
    add("data_urlencode", &a.data_urlencode, Data::UrlEncode);
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, d)| d).collect()
}

/// Whether an error is a refused connection (`--retry-connrefused`).
fn refused(e: &TransferError) -> bool {
    matches!(e, TransferError::Http(tcpwise_http::HttpError::Connect { source, .. })
        if source.kind() == std::io::ErrorKind::ConnectionRefused)
}

pub fn get(a: GetArgs, m: Option<&clap::ArgMatches>) -> Result<i32> {
    use std::io::IsTerminal;
    if a.parallel_max == 0 || a.max_conns == 0 {
        return Err(Usage("--parallel-max and --max-conns must be at least 1".into()).into());
    }
    let urls: Vec<String> = a.urls.iter().chain(a.url.iter()).cloned().collect();
    if a.output.len() > urls.len() {
        let msg = format!("{} -o files for {} URLs", a.output.len(), urls.len());
        return Err(Usage(msg).into());
    }
    if matches!(a.rcvbuf, Some(Bytes(0))) || matches!(a.sndbuf, Some(Bytes(0))) {
        return Err(Usage("--rcvbuf and --sndbuf must be positive".into()).into());
    }
    let mut stdin = Stdin::default();
    let format = match a.write_out.as_deref() {
        Some(f) => Some(match f.strip_prefix('@') {
            Some("-") => String::from_utf8_lossy(&stdin.read()?).to_string(),
            Some(p) => std::fs::read_to_string(p)
                .map_err(|e| Usage(format!("cannot read -w @{p}: {e}")))?,
            None => f.to_string(),
        }),
        None => None,
    };
    let mut words = CurlArgs {
        method: a.method.clone(),
        head: a.head,
        data: data_in_order(&a, m),
        get: a.get,
        form: a.form.clone(),
        upload: a.upload.clone(),
        headers: a.headers.clone(),
        user: a.user.clone(),
        user_agent: a.user_agent.clone(),
        referer: a.referer.clone(),
        range: a.range.clone(),
        resume_from: None,
        compressed: a.compressed,
        proxy: a.proxy.clone(),
        noproxy: a.noproxy.clone(),
    };
    words.check()?;
    let mut reqs = Vec::new();
    for (i, u) in urls.iter().enumerate() {
        let url = tcpwise_http::curl::parse_url(u)?;
        let out = a.output.get(i).cloned();
        let out = out.or_else(|| a.remote_name.then(|| remote_name(&url)));
        let out = out.filter(|p| p.as_os_str() != "-");
        words.resume_from = match a.continue_at.as_deref() {
            None => None,
            Some("-") => Some(
                out.as_ref()
                    .and_then(|p| std::fs::metadata(p).ok())
                    .map_or(0, |m| m.len()),
            ),
            Some(n) => Some(
                n.parse()
                    .map_err(|_| Usage(format!("-C '{n}' is not an offset or '-'")))?,
            ),
        };
        let req = words.request(u, &mut || stdin.read())?;
        reqs.push((i, req, out, words.resume_from));
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
        resolve: a.resolve.clone(),
        family: if a.ipv4 {
            Family::V4
        } else if a.ipv6 {
            Family::V6
        } else {
            Family::Any
        },
        // curl's default: HTTP/2 when TLS's ALPN agrees, HTTP/1.1 on http://.
        version: if a.http2_prior_knowledge {
            Version::Http2PriorKnowledge
        } else if a.http1_1 {
            Version::Http1
        } else {
            Version::Http2
        },
    });
    let retry = RetryPolicy {
        max: a.retry,
        delay: a.retry_delay.map(|d| d.std()),
        max_time: a.retry_max_time.map(|d| d.std()),
        connrefused: a.retry_connrefused,
        all_errors: a.retry_all_errors,
    };
    let parallel = if a.parallel { a.parallel_max } else { 1 };
    let body_to_terminal = std::io::stdout().is_terminal();
    let progress_ok = std::io::stderr().is_terminal()
        && !a.silent
        && !a.verbose
        && !a.no_progress_meter
        && !a.json;
    let make_opts = |to_stdout: bool, resume_from: Option<u64>| transfer::Options {
        follow: a.location,
        max_redirs: usize::try_from(a.max_redirs).unwrap_or(usize::MAX),
        fail: if a.fail {
            Fail::Fail
        } else if a.fail_with_body {
            Fail::WithBody
        } else {
            Fail::Never
        },
        include: (a.include || a.head) && !a.json,
        dump_header: a.dump_header.clone(),
        compressed: a.compressed,
        resume_from,
        verbose: a
            .verbose
            .then(|| Box::new(|s: &str| eprint!("{s}")) as transfer::Log),
        progress: progress_ok && !(to_stdout && body_to_terminal),
    };
    let mut report = Report {
        code: 0,
        json: Vec::new(),
        warned: std::collections::HashSet::new(),
    };
    let run = async {
        // One at a time: each URL's -w, errors and timing print as it ends
        // (curl's order). With -Z: at once, bodies and reports in URL order.
        let mut tasks = Vec::new();
        let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(parallel));
        for (i, req, out, resume_from) in reqs {
            let opts = make_opts(out.is_none(), resume_from);
            let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let output = match (&out, a.json, parallel > 1) {
                (_, true, _) => Output::Null,
                (Some(p), _, _) => Output::File(p.clone()),
                (None, _, true) => Output::Buffer(buffer.clone()),
                (None, _, false) => Output::Stdout,
            };
            let job = Job {
                i,
                url: req.url.to_string(),
                method: req.method.to_string(),
                out,
                buffer,
            };
            let attempt = with_retries(client.clone(), req, output, opts, retry, a.silent);
            if parallel == 1 {
                let t = attempt.await;
                report.add(&a, format.as_deref(), job, t);
            } else {
                // Taken here, in URL order.
                let permit = sem.clone().acquire_owned().await.expect("open");
                tasks.push((
                    job,
                    tokio::spawn(async move {
                        let _p = permit;
                        attempt.await
                    }),
                ));
            }
        }
        for (job, t) in tasks {
            let t = t.await.expect("task");
            report.add(&a, format.as_deref(), job, t);
        }
    };
    let rt = crate::runtime()?;
    if let Some(d) = a.max_time {
        rt.block_on(async { tokio::time::timeout(d.std(), run).await })
            .map_err(|_| MaxTime(d.std().as_secs_f64()))?;
    } else {
        rt.block_on(run);
    }
    let mut so = std::io::stdout().lock();
    if a.json {
        let _ = writeln!(so, "{}", serde_json::to_string_pretty(&report.json)?);
    }
    let _ = so.flush();
    Ok(report.code)
}

/// One URL of the command line.
struct Job {
    i: usize,
    url: String,
    method: String,
    out: Option<PathBuf>,
    buffer: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

/// A transfer with curl's `--retry` around it.
async fn with_retries(
    client: Client,
    req: tcpwise_http::Request,
    output: Output,
    mut opts: transfer::Options,
    retry: RetryPolicy,
    quiet: bool,
) -> transfer::Transferred {
    let idempotent = !matches!(req.method, hyper::Method::POST | hyper::Method::PATCH);
    let first = std::time::Instant::now();
    let mut done = 0;
    loop {
        // A retry writes its body again, to the same place (curl does).
        let o = output.clone();
        let t = transfer::transfer(&client, req.clone(), o, &mut opts).await;
        let outcome = match (&t.error, t.chain.last()) {
            (Some(e), _) => Outcome::Error {
                code: transfer_code(e),
                refused: refused(e),
            },
            (None, Some(r)) => Outcome::Status(
                r.status,
                r.header("retry-after").and_then(|v| v.trim().parse().ok()),
            ),
            (None, None) => return t,
        };
        let Some(wait) = retry.next(done, first.elapsed(), idempotent, outcome) else {
            return t;
        };
        done += 1;
        if !quiet {
            eprintln!(
                "tcpwise: warning: problem: {}. Will retry in {} seconds. {} retries left.",
                outcome.describe(),
                wait.as_secs(),
                retry.max - done + 1
            );
        }
        tokio::time::sleep(wait).await;
    }
}

/// What `get` prints after each URL, and its exit code.
struct Report {
    code: i32,
    json: Vec<serde_json::Value>,
    warned: std::collections::HashSet<String>,
}

impl Report {
    fn add(&mut self, a: &GetArgs, format: Option<&str>, job: Job, t: transfer::Transferred) {
        let mut so = std::io::stdout().lock();
        let _ = so.write_all(&job.buffer.lock().expect("lock"));
        let url = &job.url;
        let chain = t.chain;
        for resp in &chain {
            if a.timing {
                eprintln!("{url}  {}", resp.timing_report());
            }
            for w in &resp.conn.buffers.warnings {
                if !a.silent && self.warned.insert(w.clone()) {
                    eprintln!("tcpwise: warning: {w}");
                }
            }
        }
        if t.error.is_none()
            && !a.silent
            && let Some(d) = chain.last().and_then(|l| l.rcvbuf_diagnosis())
        {
            eprintln!("tcpwise: warning: {url}: {d}");
        }
        let mut error = serde_json::Value::Null;
        let mut c = 0;
        let mut message = None;
        if let Some(e) = t.error {
            c = transfer_code(&e);
            let e: anyhow::Error = e.into();
            let m = format!("{e:#}");
            if !a.silent || a.show_error {
                eprintln!("tcpwise: error: {url}: {m}");
            }
            error = serde_json::json!({ "message": m, "exit_code": c });
            message = Some(m);
            self.code = self.code.max(c);
        }
        if let Some(f) = format {
            let filename = job.out.as_ref().map(|p| p.display().to_string());
            let r = write_out::render(
                f,
                &write_out::Done {
                    url,
                    chain: &chain,
                    exit_code: c,
                    error: message.as_deref(),
                    filename: filename.as_deref(),
                    method: &job.method,
                    urlnum: job.i,
                },
            );
            let _ = so.write_all(r.stdout.as_bytes());
            eprint!("{}", r.stderr);
            for w in r.warnings {
                if self.warned.insert(w.clone()) {
                    eprintln!("tcpwise: warning: {w}");
                }
            }
        }
        let _ = so.flush();
        // One entry per URL, in order: its responses (redirects first) or its error.
        self.json
            .push(serde_json::json!({ "url": url, "responses": chain, "error": error }));
    }
}

/// curl's exit code of a failed transfer.
fn transfer_code(e: &TransferError) -> i32 {
    match e {
        TransferError::Http(h) => crate::http_exit_code(h),
        other => other.curl_code().unwrap_or(1),
    }
}

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
