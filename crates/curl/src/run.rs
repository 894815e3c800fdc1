//! `tcpwise get` as one call, as curl's tool runs a command line: every
//! URL, one after another (each URL's `-w`, errors and timing printed as
//! it ends, curl's order) or at once with `-Z` (bodies and reports in URL
//! order), each through [`transfer`](super::transfer::transfer) with
//! `--retry` around it, one exit code at the end (the last transfer's, as
//! curl's; with `-Z` a failure's).
//!
//! [`Run::new`] turns the flags into one typed object before anything is
//! sent (ripgrep's `HiArgs`): the request of every URL, the `-o` file,
//! the `-C -` offset read from it, the `-w` format read from its file,
//! the client's configuration. [`run`] does the rest. The binary only
//! parses and calls them.

use super::exit;
use super::flags::{GetArgs, InOrder, OutputArg};
use super::glob;
use super::retry::{Outcome, RetryPolicy};
use super::sink::Sink;
use super::transfer::{self, Fail, Output, TransferError};
use super::write_out;
use super::{CurlArgs, CurlError, remote_name};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tcpwise_client::idempotent;
use tcpwise_client::{Client, ClientConfig, Family, Request, Version};
use tcpwise_pool::Limits;
use tcpwise_tcp::BufferPolicy;

/// Why a run could not start or finish (a failed transfer is not one:
/// it is reported and counted in the exit code, and the run goes on).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The flags or a URL make no request (curl's exit 2).
    #[error(transparent)]
    Words(#[from] CurlError),
    /// Standard input or the output could not be read or written.
    #[error("{what}")]
    Io {
        /// What was being read or written.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The `--cacert` file cannot be read for an https:// URL (curl's 77).
    #[error("cannot read --cacert {path}")]
    CaFile {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `--max-time` ran out (curl's exit 28).
    #[error("--max-time {0:.1} s elapsed")]
    MaxTime(f64),
}

impl RunError {
    /// curl's exit code for it.
    pub fn curl_code(&self) -> i32 {
        match self {
            RunError::Words(e) => exit::words(e),
            RunError::Io { .. } => 1,
            RunError::CaFile { .. } => 77,
            RunError::MaxTime(_) => exit::MAX_TIME,
        }
    }
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

/// One URL of the command line, its request built.
struct Planned {
    index: usize,
    /// The request, or why its URL cannot be sent (curl goes on to the
    /// next URL, and `-w` reports on the failed one).
    request: Result<Request, (String, CurlError)>,
    /// The URL as given (globs expanded): curl's `%{url}`.
    given: String,
    out: Option<PathBuf>,
    resume_from: Option<u64>,
}

/// A command line turned into what to do: built once, before anything
/// is sent.
pub struct Run {
    flags: GetArgs,
    planned: Vec<Planned>,
    client: ClientConfig,
    format: Option<String>,
    retry: RetryPolicy,
    parallel: usize,
    progress_ok: bool,
    body_to_terminal: bool,
    sink: Sink,
    /// Printed when the run starts (unless -s).
    warnings: Vec<String>,
    jar: Option<Arc<Mutex<super::cookies::Jar>>>,
    cookie: Option<String>,
    limit_rate: Option<u64>,
    /// `-d`-family data sent as a POST body (not `-G`'s query).
    posts: bool,
    /// `.netrc`, when -u gives no credentials.
    netrc: Option<super::netrc::Netrc>,
    trace: Option<super::trace::Trace>,
    /// `-z`: the condition the response is checked against too.
    time_cond: Option<transfer::TimeCond>,
}

/// `-z`: its header (or its warning) added; the condition, which is
/// checked on the response too, as curl does (not with a range: RFC 9110
/// leaves that to the server).
fn time_cond_of(
    a: &GetArgs,
    headers: &mut Vec<tcpwise_client::Header>,
    warnings: &mut Vec<String>,
) -> Option<transfer::TimeCond> {
    let (h, w) = super::extra::time_condition(a.time_cond.as_deref()?);
    let cond = h
        .as_ref()
        .filter(|_| a.range.is_none())
        .and_then(transfer::TimeCond::of);
    headers.extend(h);
    warnings.extend(w);
    cond
}

/// The `.netrc` the flags name: `--netrc-file`, or `$HOME/.netrc` for
/// `-n`/`--netrc-optional`.
fn netrc_of(a: &GetArgs) -> Option<super::netrc::Netrc> {
    let path = match &a.netrc_file {
        Some(p) => p.clone(),
        None if a.netrc || a.netrc_optional => {
            PathBuf::from(std::env::var_os("HOME")?).join(".netrc")
        }
        None => return None,
    };
    Some(super::netrc::Netrc::read(&path))
}

/// One URL argument's URLs and their pattern values: itself when `-g`
/// is given or it has no pattern.
fn expand(given: &str, globoff: bool) -> Result<Vec<(String, Vec<String>)>, RunError> {
    if globoff {
        return Ok(vec![(given.to_string(), Vec::new())]);
    }
    Ok(glob::Glob::parse(given)?
        .expand()
        .into_iter()
        .map(|e| (e.url, e.values))
        .collect())
}

/// `--trace` or `--trace-ascii`'s file, created.
fn trace_of(a: &GetArgs) -> Result<Option<super::trace::Trace>, RunError> {
    match (&a.trace, &a.trace_ascii) {
        (Some(p), _) => Some((p, false)),
        (None, Some(p)) => Some((p, true)),
        (None, None) => None,
    }
    .map(|(p, ascii)| super::trace::Trace::create(p, ascii))
    .transpose()
    .map_err(|e| RunError::Io {
        what: "cannot create the --trace file",
        source: e,
    })
}

/// `-w`'s format: as given, or read from `@FILE` or `@-`.
fn write_out_format(a: &GetArgs, stdin: &mut Stdin) -> Result<Option<String>, RunError> {
    let read_stdin = |e| RunError::Io {
        what: "cannot read standard input",
        source: e,
    };
    Ok(match a.write_out.as_deref() {
        Some(f) => Some(match f.strip_prefix('@') {
            Some("-") => String::from_utf8_lossy(&stdin.read().map_err(read_stdin)?).to_string(),
            Some(p) => std::fs::read_to_string(p)
                .map_err(|e| usage(format!("cannot read -w @{p}: {e}")))?,
            None => f.to_string(),
        }),
        None => None,
    })
}

/// `-b` and `-c`: the literal cookie string, and the cookie engine's jar
/// when a file or `-c` turns it on.
fn cookies(
    a: &GetArgs,
    stdin: &mut Stdin,
) -> (Option<String>, Option<Arc<Mutex<super::cookies::Jar>>>) {
    // -b: a string that starts with a letter and has a '=' is sent as
    // it is; anything else names a file (curl's rule); files and -c
    // turn the cookie engine on.
    let (literal, files): (Vec<&String>, Vec<&String>) = a
        .cookie
        .iter()
        .partition(|c| c.starts_with(|ch: char| ch.is_ascii_alphabetic()) && c.contains('='));
    let cookie = (!literal.is_empty()).then(|| {
        literal
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(";") // curl joins several -b strings without a space
    });
    let jar = (!files.is_empty() || a.cookie_jar.is_some()).then(|| {
        let mut text = String::new();
        for f in &files {
            // A missing file is no cookies, as in curl.
            let got = if f.as_str() == "-" {
                stdin.read().ok()
            } else {
                std::fs::read(f.as_str()).ok()
            };
            text.push_str(&String::from_utf8_lossy(&got.unwrap_or_default()));
            text.push('\n');
        }
        Arc::new(Mutex::new(super::cookies::Jar::load(
            &text,
            a.junk_session_cookies,
        )))
    });
    (cookie, jar)
}

/// Every URL's request (globs expanded) with its output file and resume
/// offset.
fn plan(
    a: &GetArgs,
    outputs: &[OutputArg],
    urls: &[String],
    words: &mut CurlArgs,
    stdin: &mut Stdin,
) -> Result<Vec<Planned>, RunError> {
    let mut planned = Vec::new();
    // `index` is the URL argument's (curl's %{urlnum}: a glob's URLs share it).
    for (index, given) in urls.iter().enumerate() {
        for (u, values) in expand(given, a.globoff)? {
            let url = match super::parse_url(&u) {
                Ok(url) => url,
                Err(e) => {
                    planned.push(Planned {
                        index,
                        given: u.clone(),
                        request: Err((u, e)),
                        out: None,
                        resume_from: None,
                    });
                    continue;
                }
            };
            // The Nth -o or -O is the Nth URL's (curl's rule); the rest
            // go to standard output, or get -O with --remote-name-all.
            let out = match outputs.get(index) {
                Some(OutputArg::File(t)) => Some(match t.to_str() {
                    Some(t) if !values.is_empty() => PathBuf::from(glob::output_name(t, &values)),
                    _ => t.clone(),
                }),
                Some(OutputArg::Remote) => Some(remote_name(&url)),
                None => a.remote_name_all.then(|| remote_name(&url)),
            };
            let out = out.filter(|p| p.as_os_str() != "-");
            let out = match (&a.output_dir, out) {
                (Some(d), Some(o)) => Some(d.join(o)),
                (_, o) => o,
            };
            words.resume_from = match a.continue_at.as_deref() {
                None => None,
                Some("-") => Some(
                    out.as_ref()
                        .and_then(|p| std::fs::metadata(p).ok())
                        .map_or(0, |m| m.len()),
                ),
                Some(n) => Some(
                    n.parse()
                        .map_err(|_| usage(format!("-C '{n}' is not an offset or '-'")))?,
                ),
            };
            let request = words.request(&u, &mut || stdin.read())?;
            planned.push(Planned {
                index,
                given: u,
                request: Ok(request),
                out,
                resume_from: words.resume_from,
            });
        }
    }
    Ok(planned)
}

/// The client's configuration with `--cacert`'s certificates and
/// `--alt-svc`'s cache.
fn client_of(a: &GetArgs, planned: &[Planned]) -> Result<ClientConfig, RunError> {
    // curl reads --cacert when a TLS connection needs it: an unreadable
    // file fails an https:// transfer (its 77) and is no matter otherwise.
    let https = planned
        .iter()
        .any(|p| p.request.as_ref().is_ok_and(|r| r.url.scheme() == "https"));
    let extra_ca = match &a.cacert {
        Some(p) => match std::fs::read(p) {
            Ok(pem) => vec![pem],
            Err(source) if https => {
                return Err(RunError::CaFile {
                    path: p.display().to_string(),
                    source,
                });
            }
            Err(_) => Vec::new(),
        },
        None => Vec::new(),
    };
    let mut client = client_config(a, extra_ca);
    // curl's --alt-svc FILE: a missing file is an empty cache.
    if let Some(p) = &a.alt_svc {
        let text = match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(usage(format!("cannot read --alt-svc {}: {e}", p.display()))),
        };
        let entries = tcpwise_client::alt_svc::parse_file(&text)
            .map_err(|e| usage(format!("--alt-svc {}: {e}", p.display())))?;
        client.alt_svc = Some(entries);
    }
    Ok(client)
}

fn usage(msg: String) -> RunError {
    RunError::Words(CurlError::Usage(msg))
}

/// The URLs, after the flags' counts and sizes are checked.
fn check_counts(a: &GetArgs) -> Result<Vec<String>, RunError> {
    if a.parallel_max == 0 || a.max_conns == 0 {
        return Err(usage(
            "--parallel-max and --max-conns must be at least 1".into(),
        ));
    }
    let urls: Vec<String> = a.urls.iter().chain(a.url.iter()).cloned().collect();
    if a.output.len() > urls.len() {
        let msg = format!("{} -o files for {} URLs", a.output.len(), urls.len());
        return Err(usage(msg));
    }
    if a.rcvbuf.is_some_and(|b| b.0 == 0) || a.sndbuf.is_some_and(|b| b.0 == 0) {
        return Err(usage("--rcvbuf and --sndbuf must be positive".into()));
    }
    if let Some(m) = &a.max_filesize {
        super::extra::size("--max-filesize", m)?;
    }
    Ok(urls)
}

impl Run {
    /// Checks the flags and builds every URL's request; `data` is the
    /// `-d` family in command-line order ([`GetArgs::data_in_order`]).
    pub fn new(a: GetArgs, ordered: InOrder) -> Result<Run, RunError> {
        let InOrder {
            data,
            outputs,
            form,
        } = ordered;
        let urls = check_counts(&a)?;
        let posts = !data.is_empty() && !a.get;
        let mut warnings = super::form::warnings(&form);
        tls_versions(&a)?;
        let mut stdin = Stdin::default();
        let format = write_out_format(&a, &mut stdin)?;
        // Read once: the first request's credentials and each redirect's.
        let netrc_file = netrc_of(&a);
        let netrc = netrc_file.clone().filter(|_| a.user.is_none());
        let trace = trace_of(&a)?;
        let mut headers = super::extra::headers(&a.headers, &mut || stdin.read())?;
        let time_cond = time_cond_of(&a, &mut headers, &mut warnings);
        if let Some(f) = &a.etag_compare {
            headers.push(super::extra::etag_compare(f, a.etag_save.is_some())?);
        }
        let limit_rate = a
            .limit_rate
            .as_deref()
            .map(super::extra::rate)
            .transpose()?;
        let (cookie, jar) = cookies(&a, &mut stdin);
        let mut words = CurlArgs {
            method: a.method.clone(),
            head: a.head,
            data,
            get: a.get,
            form,
            upload: a.upload.clone(),
            headers,
            user: a.user.clone(),
            user_agent: a.user_agent.clone(),
            // `-e 'URL;auto'`: URL for the first request, and each
            // redirect's Referer the URL it came from.
            referer: a
                .referer
                .as_deref()
                .map(|r| r.strip_suffix(";auto").unwrap_or(r).to_string())
                .filter(|r| !r.is_empty()),
            range: a.range.clone(),
            resume_from: None,
            compressed: a.compressed,
            proxy: a.proxy.clone(),
            noproxy: a.noproxy.clone(),
            netrc: netrc_file,
            path_as_is: a.path_as_is,
            request_target: a.request_target.clone(),
        };
        words.check()?;
        let planned = plan(&a, &outputs, &urls, &mut words, &mut stdin)?;
        let client = client_of(&a, &planned)?;
        let retry = RetryPolicy {
            max: a.retry,
            delay: a.retry_delay.map(|d| d.std()),
            max_time: a.retry_max_time.map(|d| d.std()),
            connrefused: a.retry_connrefused,
            all_errors: a.retry_all_errors,
        };
        let parallel = if a.parallel { a.parallel_max } else { 1 };
        let progress_ok = std::io::stderr().is_terminal()
            && !a.silent
            && !a.verbose
            && !a.no_progress_meter
            && !a.report_json;
        Ok(Run {
            planned,
            client,
            format,
            retry,
            parallel,
            progress_ok,
            body_to_terminal: std::io::stdout().is_terminal(),
            sink: match &a.stderr {
                Some(p) => Sink::std_with_err(p).map_err(|e| RunError::Io {
                    what: "cannot open the --stderr file",
                    source: e,
                })?,
                None => Sink::std(),
            },
            flags: a,
            warnings,
            limit_rate,
            posts,
            jar,
            cookie,
            netrc,
            trace,
            time_cond,
        })
    }

    /// Sends the run's output to `sink` instead of standard output and
    /// error (no terminal there: no progress meter).
    pub fn with_sink(mut self, sink: Sink) -> Run {
        self.sink = sink;
        self.progress_ok = false;
        self.body_to_terminal = false;
        self
    }

    /// A transfer's settings for one URL.
    fn transfer_options(&self, to_stdout: bool, resume_from: Option<u64>) -> transfer::Options {
        let a = &self.flags;
        transfer::Options {
            follow: a.location,
            max_redirs: usize::try_from(a.max_redirs).unwrap_or(usize::MAX),
            fail: if a.fail {
                Fail::Fail
            } else if a.fail_with_body {
                Fail::WithBody
            } else {
                Fail::Never
            },
            include: (a.include || a.head) && !a.report_json,
            dump_header: a.dump_header.clone(),
            compressed: a.compressed,
            resume_from,
            verbose: a.verbose.then(|| {
                let sink = self.sink.clone();
                Box::new(move |s: &str| sink.err(s)) as transfer::Log
            }),
            progress: self.progress_ok && !(to_stdout && self.body_to_terminal),
            sink: self.sink.clone(),
            create_dirs: a.create_dirs,
            remote_time: a.remote_time,
            etag_save: a.etag_save.clone(),
            limit_rate: self.limit_rate,
            progress_bar: a.progress_bar,
            remote_header_name: a.remote_header_name && (a.remote_name > 0 || a.remote_name_all),
            netrc: self.netrc.clone(),
            trace: self.trace.clone(),
            jar: self.jar.clone(),
            cookie: self.cookie.clone(),
            max_filesize: self.client.max_body,
            time_cond: self.time_cond,
            redirect: transfer::Redirects {
                kind: if a.head {
                    transfer::Kind::Head
                } else if a.upload.is_some() {
                    transfer::Kind::Put
                } else if !a.form.is_empty() || !a.form_string.is_empty() || self.posts {
                    transfer::Kind::Post
                } else {
                    transfer::Kind::Get
                },
                custom: a
                    .method
                    .as_deref()
                    .and_then(|m| hyper::Method::from_bytes(m.as_bytes()).ok()),
                keep_post: [a.post301, a.post302, a.post303],
                auto_referer: a.referer.as_deref().is_some_and(|r| r.ends_with(";auto")),
            },
        }
    }
}

/// The TLS versions `--tlsv1.x` and `--tls-max` leave (rustls speaks
/// 1.2 and 1.3: a minimum of 1.0 or 1.1 is 1.2, a maximum below 1.2 or
/// above the minimum's reach is refused).
fn tls_versions(a: &GetArgs) -> Result<tcpwise_client::TlsVersions, RunError> {
    use tcpwise_client::TlsVersions as V;
    let max13 = match a.tls_max.as_deref() {
        None | Some("default") | Some("1.3") => true,
        Some("1.2") => false,
        Some("1.0" | "1.1") => {
            return Err(usage(
                "--tls-max 1.0 and 1.1: rustls speaks TLS 1.2 and 1.3 only".into(),
            ));
        }
        Some(v) => {
            return Err(usage(format!(
                "--tls-max '{v}' is not a TLS version (1.2, 1.3, default)"
            )));
        }
    };
    Ok(match (a.tlsv1_3, max13) {
        (true, true) => V::Only13,
        (true, false) => {
            return Err(usage(
                "--tlsv1.3 with --tls-max 1.2 leaves no TLS version to use".into(),
            ));
        }
        (false, true) => V::Both,
        (false, false) => V::Only12,
    })
}

/// The client the flags describe.
fn client_config(a: &GetArgs, extra_ca: Vec<Vec<u8>>) -> ClientConfig {
    let buffers = if a.rcvbuf.is_some() || a.sndbuf.is_some() {
        BufferPolicy::Static {
            rcv: a.rcvbuf.map(|b| b.0),
            snd: a.sndbuf.map(|b| b.0),
        }
    } else {
        BufferPolicy::Auto
    };
    ClientConfig {
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
        early_data: a.tls_earlydata,
        fastopen: a.tcp_fastopen,
        happy_eyeballs: (!a.no_happy_eyeballs)
            .then(|| std::time::Duration::from_millis(a.happy_eyeballs_timeout_ms)),
        sessions: tcpwise_client::TlsSessions::default(),
        alt_svc: None,
        max_body: a
            .max_filesize
            .as_deref()
            .and_then(|m| super::extra::size("--max-filesize", m).ok()),
        resolve: a.resolve.clone(),
        connect_to: a.connect_to.clone(),
        tls_versions: tls_versions(a).unwrap_or_default(),
        family: if a.ipv4 {
            Family::V4
        } else if a.ipv6 {
            Family::V6
        } else {
            Family::Any
        },
        // curl's default: HTTP/2 when TLS's ALPN agrees, HTTP/1.1 on http://.
        unix_socket: a.unix_socket.clone(),
        notsent_lowat: tcpwise_tcp::Lowat::Off,
        congestion: None,
        tcp_keepalive: (!a.no_keepalive)
            .then(|| std::time::Duration::from_secs(a.keepalive_time.unwrap_or(60).max(1).into())),
        version: if a.http3_only {
            Version::Http3Only
        } else if a.http3 {
            Version::Http3
        } else if a.http2_prior_knowledge {
            Version::Http2PriorKnowledge
        } else if a.http1_0 {
            Version::Http10
        } else if a.http1_1 {
            Version::Http1
        } else {
            Version::Http2
        },
    }
}

/// How a run ended: curl's exit code for each URL, and the run's (the
/// last one's, as curl's; with `-Z`, a failure's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finished {
    /// The run's exit code.
    pub code: i32,
    /// Each URL's, in command-line order.
    pub per_url: Vec<i32>,
}

/// Runs every URL of `r`: bodies to their outputs, `-w`, `--timing`,
/// warnings and errors to standard output and error as curl prints
/// them, `--report-json`'s array at the end.
pub async fn run(r: Run) -> Result<Finished, RunError> {
    // curl's -m 0: no limit.
    let max_time = r.flags.max_time.map(|d| d.std()).filter(|d| !d.is_zero());
    if !r.flags.silent {
        for w in &r.warnings {
            r.sink.err(&format!("tcpwise: warning: {w}\n"));
        }
    }
    let mut report = Report::default();
    let client = Client::new(r.client.clone());
    let all = run_all(&r, &client, &mut report);
    match max_time {
        Some(d) => tokio::time::timeout(d, all)
            .await
            .map_err(|_| RunError::MaxTime(d.as_secs_f64()))?,
        None => all.await,
    }
    if let (Some(path), Some(jar)) = (&r.flags.cookie_jar, &r.jar) {
        let text = jar.lock().map(|j| j.netscape()).unwrap_or_default();
        let written = if path.as_os_str() == "-" {
            r.sink.write_out(text.as_bytes())
        } else {
            std::fs::write(path, text)
        };
        if let Err(e) = written {
            r.sink.err(&format!(
                "tcpwise: warning: cannot write the cookie jar {}: {e}\n",
                path.display()
            ));
        }
    }
    // curl's --alt-svc FILE: what is known now, written back.
    if let Some(path) = &r.flags.alt_svc {
        let text = tcpwise_client::alt_svc::format_file(&client.alt_svc_entries());
        if let Err(e) = std::fs::write(path, text) {
            r.sink.err(&format!(
                "tcpwise: warning: cannot write the alt-svc cache {}: {e}\n",
                path.display()
            ));
        }
    }
    if r.flags.report_json {
        let text = serde_json::to_string_pretty(&report.json).unwrap_or_default();
        let _ = r.sink.write_out(format!("{text}\n").as_bytes());
    }
    let _ = r.sink.flush_out();
    Ok(Finished {
        // curl's: one after another, the last transfer's code (a failure
        // before it does not show); with -Z, a failure wins.
        code: if r.parallel > 1 {
            report
                .per_url
                .iter()
                .rev()
                .copied()
                .find(|&c| c != 0)
                .unwrap_or(0)
        } else {
            report.per_url.last().copied().unwrap_or(0)
        },
        per_url: report.per_url,
    })
}

/// The URLs one at a time, or with `-Z` up to `--parallel-max` at once
/// (started in URL order, reported in URL order).
async fn run_all(r: &Run, client: &Client, report: &mut Report) {
    let mut tasks = Vec::new();
    let sem = Arc::new(tokio::sync::Semaphore::new(r.parallel));
    for p in &r.planned {
        let opts = r.transfer_options(p.out.is_none(), p.resume_from);
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let output = match (&p.out, r.flags.report_json, r.parallel > 1) {
            (_, true, _) => Output::Null,
            (Some(f), _, _) => Output::File(f.clone()),
            (None, _, true) => Output::Buffer(buffer.clone()),
            (None, _, false) => Output::Stdout,
        };
        let request = match &p.request {
            Ok(req) => req.clone(),
            Err((url, e)) => {
                let job = Job {
                    index: p.index,
                    url: url.clone(),
                    given: url.clone(),
                    method: "GET".into(),
                    out: None,
                    buffer,
                };
                let failed = transfer::Transferred {
                    chain: Vec::new(),
                    error: Some(TransferError::BadUrl {
                        message: e.to_string(),
                        code: exit::words(e),
                    }),
                    renamed: None,
                };
                report.add(r, job, failed);
                if r.flags.fail_early {
                    break;
                }
                continue;
            }
        };
        let job = Job {
            index: p.index,
            url: request.url.to_string(),
            given: p.given.clone(),
            method: request.method.to_string(),
            out: p.out.clone(),
            buffer,
        };
        let attempt = with_retries(
            client.clone(),
            request,
            output,
            opts,
            r.retry,
            r.flags.silent,
            r.sink.clone(),
        );
        if r.parallel == 1 {
            let t = attempt.await;
            report.add(r, job, t);
            if r.flags.fail_early && report.per_url.last().is_some_and(|&c| c != 0) {
                break;
            }
        } else {
            // Taken here, in URL order.
            let Ok(permit) = sem.clone().acquire_owned().await else {
                break; // never closed
            };
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
        let t = t.await.unwrap_or_else(|e| transfer::Transferred {
            chain: Vec::new(),
            error: Some(TransferError::Http(tcpwise_client::HttpError::Sink(
                std::io::Error::other(e),
            ))),
            renamed: None,
        });
        report.add(r, job, t);
    }
}

/// One URL of the command line, as reported.
struct Job {
    index: usize,
    url: String,
    /// The URL as given: `-w`'s `%{url}`.
    given: String,
    method: String,
    out: Option<PathBuf>,
    buffer: Arc<Mutex<Vec<u8>>>,
}

/// A transfer with curl's `--retry` around it.
async fn with_retries(
    client: Client,
    req: Request,
    output: Output,
    mut opts: transfer::Options,
    retry: RetryPolicy,
    quiet: bool,
    sink: Sink,
) -> transfer::Transferred {
    let idempotent = idempotent(&req.method);
    let first = Instant::now();
    let mut done = 0;
    loop {
        // A retry writes its body again, to the same place (curl does).
        let o = output.clone();
        let t = transfer::transfer(&client, req.clone(), o, &mut opts).await;
        let outcome = match (&t.error, t.chain.last()) {
            (Some(e), _) => Outcome::Error {
                code: exit::transfer(e),
                refused: exit::refused(e),
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
            sink.err(&format!(
                "tcpwise: warning: problem: {}. Will retry in {} seconds. {} retries left.\n",
                outcome.describe(),
                wait.as_secs(),
                retry.max - done + 1
            ));
        }
        tokio::time::sleep(wait).await;
    }
}

/// What is printed after each URL, and each URL's exit code.
#[derive(Default)]
struct Report {
    per_url: Vec<i32>,
    json: Vec<serde_json::Value>,
    warned: HashSet<String>,
}

impl Report {
    fn add(&mut self, r: &Run, job: Job, t: transfer::Transferred) {
        let (a, sink) = (&r.flags, &r.sink);
        if let Ok(b) = job.buffer.lock() {
            let _ = sink.write_out(&b);
        }
        let url = &job.url;
        let chain = t.chain;
        for resp in &chain {
            if a.timing {
                sink.err(&format!("{url}  {}\n", resp.timing_report()));
            }
            for w in &resp.conn.buffers.warnings {
                if !a.silent && self.warned.insert(w.clone()) {
                    sink.err(&format!("tcpwise: warning: {w}\n"));
                }
            }
        }
        if t.error.is_none()
            && !a.silent
            && let Some(d) = chain.last().and_then(|l| l.rcvbuf_diagnosis())
        {
            sink.err(&format!("tcpwise: warning: {url}: {d}\n"));
        }
        let mut error = serde_json::Value::Null;
        let mut code = 0;
        let mut message = None;
        if let Some(e) = t.error {
            code = exit::transfer(&e);
            let m = tcpwise_outcome::chain_text(&e);
            if !a.silent || a.show_error {
                sink.err(&format!("tcpwise: error: {url}: {m}\n"));
            }
            error = serde_json::json!({ "message": m, "exit_code": code });
            message = Some(m);
        }
        self.per_url.push(code);
        if let Some(f) = &r.format {
            let filename = t
                .renamed
                .as_ref()
                .or(job.out.as_ref())
                .map(|p| p.display().to_string());
            let w = write_out::render(
                f,
                &write_out::Done {
                    url: &job.given,
                    chain: &chain,
                    exit_code: code,
                    error: message.as_deref(),
                    filename: filename.as_deref(),
                    method: &job.method,
                    urlnum: job.index,
                },
            );
            let _ = sink.write_out(w.stdout.as_bytes());
            sink.err(&w.stderr);
            for w in w.warnings {
                if self.warned.insert(w.clone()) {
                    sink.err(&format!("tcpwise: warning: {w}\n"));
                }
            }
        }
        let _ = sink.flush_out();
        // One entry per URL, in order: its responses (redirects first) or its error.
        self.json
            .push(serde_json::json!({ "url": url, "responses": chain, "error": error, "tcpwise_version": tcpwise_outcome::version() }));
    }
}

// A whole command line ends with curl's number for it (the exit table
// is `exit`'s; the run knows which failure counts).
impl tcpwise_outcome::Classify for RunError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        Some(tcpwise_outcome::Class::Tool(self.curl_code()))
    }
}
