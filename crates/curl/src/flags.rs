//! `tcpwise get`'s flags as curl spells them, parsed once by clap. They
//! live beside curl's rules, not in the binary, for the reason ripgrep
//! keeps its flag definitions beside `HiArgs`: the spelling is the
//! contract, and [`super::run::Run::new`] turns it into one typed,
//! validated object the transfer reads. The binary only parses and
//! calls [`super::run::run`].
//!
//! (The clap dependency of this crate is confined to this module; the
//! architecture test checks that.)

use super::Data;
use clap::Args;
use std::path::PathBuf;
use tcpwise_pool::Policy;
use tcpwise_tcp::ReadSizer;
use tcpwise_units::{Bytes, Seconds};

/// `tcpwise get --help`'s closing text: examples, curl's exit codes, and
/// where tcpwise differs from curl on purpose.
pub const GET_HELP: &str = "\
Examples:
  tcpwise serve --bind 127.0.0.1:8080 & sleep 0.5
  tcpwise get -sS -o b.bin -w '%{http_code} %{pool_reason}\\n' 127.0.0.1:8080/bytes/9
  tcpwise get -Z --timing 127.0.0.1:8080/bytes/10 127.0.0.1:8080/bytes/20
  tcpwise get -v --http2-prior-knowledge 127.0.0.1:8080/health

Exit status (curl's numbers; of several URLs, the last one's, as curl;
with -Z, a failure's):
  0   every transfer completed (any HTTP status, unless -f)
  2   bad flags or URL
  3   a malformed [..] or {..} URL pattern (-g sends it as it is)
  6   could not resolve the host
  7   could not connect
  8   the server's response was not valid HTTP
  18  the body ended before its Content-Length or last chunk
  22  HTTP status 400 or above with -f or --fail-with-body
  23  could not write the body or the headers (disk, pipe)
  26  the -T file cannot be opened
  28  --max-time or --connect-timeout elapsed
  33  -C: the server ignored the range (cannot resume)
  35  the TLS handshake failed
  47  more redirects than --max-redirs
  52  the server closed the connection without answering
  56  the connection failed while receiving the body, or a proxy refused CONNECT
  60  the server's certificate is not trusted (expired, another name, unknown issuer)
  61  --compressed: the body does not decode
  63  the body grew past --max-filesize
  65  -T -: a retry or redirect would send standard input a second time

-:, --next starts the next group of URLs and flags, as in curl. curl's
options that tcpwise get does not take are refused in one line; every one,
with why, is in docs/options-curl.md.

Where tcpwise differs from curl 7.88 on purpose: error messages name the URL
and the cause chain (`tcpwise: error: URL: ...`); -O on a URL without a file
name writes index.html (curl refuses); -Z prints bodies in URL order; -w
knows %{tcp_rtt_ms} %{tcp_cwnd} %{pool_reason} %{conn_id} %{conn_reused}
%{tls_resumed} (and curl 8.12's %{tls_earlydata}),
--happy-eyeballs-timeout-ms defaults to RFC 8305's 250 (curl's is 200),
and its %{ssl_verify_result} is 0 or 1 (curl gives OpenSSL's reason code);
--retry never retries a non-idempotent request (a POST may have taken
effect); --unix-socket carries http:// only (https:// over it is refused,
exit 7); ~/.curlrc is not read (use -K).";

/// `tcpwise get`'s flags, as curl spells them.
#[derive(Debug, Clone, Args)]
pub struct GetArgs {
    /// URLs to fetch; they share one connection pool.
    #[arg(value_name = "URL", required_unless_present = "url")]
    pub urls: Vec<String>,
    /// Send [ ] { } in URLs as they are (no globbing: by default
    /// [1-3], [a-z], [01-10:2] and {a,b} expand into several URLs, and
    /// #N in an -o name is the Nth pattern's value).
    #[arg(short = 'g', long = "globoff")]
    pub globoff: bool,
    /// Read more flags from FILE (curl's config syntax: 'url = "http://h/"',
    /// 'silent', '-o out'; '-' is standard input), where -K stands.
    #[arg(short = 'K', long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Another URL (curl's --url), after the positional ones.
    #[arg(long = "url", value_name = "URL")]
    pub url: Vec<String>,
    /// Write the body of the URL in the same position to FILE ('-' is
    /// standard output; repeatable).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Vec<PathBuf>,
    /// Write the body of the URL in the same position to a file named
    /// like its last path segment (as -o, one URL each: give it once per
    /// URL, or --remote-name-all).
    #[arg(short = 'O', long = "remote-name", action = clap::ArgAction::Count)]
    pub remote_name: u8,
    /// -O for every URL that has no -o or -O of its own.
    #[arg(long = "remote-name-all")]
    pub remote_name_all: bool,
    /// Extra request header 'Name: value' (repeatable; 'Name:' removes a
    /// default one); @FILE reads one header a line.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Send cookies: 'NAME=VALUE; N2=V2' as it is, or read FILE (curl's
    /// Netscape format, or Set-Cookie lines) and keep the cookies the
    /// responses set for the rest of the command line (repeatable).
    #[arg(short = 'b', long = "cookie", value_name = "DATA|FILE")]
    pub cookie: Vec<String>,
    /// Write every cookie to FILE at the end, in curl's Netscape format ('-': standard output).
    #[arg(short = 'c', long = "cookie-jar", value_name = "FILE")]
    pub cookie_jar: Option<PathBuf>,
    /// With -b FILE: leave out its session cookies (a new session).
    #[arg(short = 'j', long = "junk-session-cookies")]
    pub junk_session_cookies: bool,
    /// With -O: name the file as the server's Content-Disposition says
    /// (its directories stripped; an existing file is not overwritten).
    #[arg(short = 'J', long = "remote-header-name")]
    pub remote_header_name: bool,
    /// Credentials for the host from ~/.netrc (when -u and the URL give none).
    #[arg(short = 'n', long = "netrc")]
    pub netrc: bool,
    /// As -n, but from FILE.
    #[arg(long = "netrc-file", value_name = "FILE")]
    pub netrc_file: Option<PathBuf>,
    /// As -n, where a missing file is fine (it always is here, as in curl).
    #[arg(long = "netrc-optional")]
    pub netrc_optional: bool,
    /// Connect to this Unix domain socket instead of the URL's host
    /// (http:// only; the host still names the Host header).
    #[arg(long = "unix-socket", value_name = "PATH")]
    pub unix_socket: Option<PathBuf>,
    /// Send the URL's path as given: no squashing of /../ and /./.
    #[arg(long = "path-as-is")]
    pub path_as_is: bool,
    /// Write what goes over the wire to FILE in curl's hex dump ('-': standard output).
    #[arg(long = "trace", value_name = "FILE", conflicts_with = "trace_ascii")]
    pub trace: Option<PathBuf>,
    /// As --trace, as text.
    #[arg(long = "trace-ascii", value_name = "FILE")]
    pub trace_ascii: Option<PathBuf>,
    /// Put the -o and -O files in DIR.
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Create the directories an -o path names.
    #[arg(long = "create-dirs")]
    pub create_dirs: bool,
    /// Stop at the first URL that fails (the rest are not tried).
    #[arg(long = "fail-early")]
    pub fail_early: bool,
    /// Write what goes to standard error to FILE instead ('-': standard output).
    #[arg(long = "stderr", value_name = "FILE")]
    pub stderr: Option<PathBuf>,
    /// Give the -o file the server's Last-Modified time.
    #[arg(short = 'R', long = "remote-time")]
    pub remote_time: bool,
    /// Write the response's ETag to FILE (empty when there is none).
    #[arg(long = "etag-save", value_name = "FILE")]
    pub etag_save: Option<PathBuf>,
    /// Send If-None-Match with the ETag FILE holds (a 304 if unchanged).
    #[arg(long = "etag-compare", value_name = "FILE")]
    pub etag_compare: Option<PathBuf>,
    /// Only if modified since DATE or FILE's time (-DATE: unmodified since).
    #[arg(
        short = 'z',
        long = "time-cond",
        value_name = "TIME",
        allow_hyphen_values = true
    )]
    pub time_cond: Option<String>,
    /// At most RATE bytes/s per transfer, both ways (1000, 100K, 2M, 1G: powers of 1024).
    #[arg(long = "limit-rate", value_name = "RATE")]
    pub limit_rate: Option<String>,
    /// HTTP/1.0 requests.
    #[arg(short = '0', long = "http1.0", conflicts_with_all = ["http2", "http2_prior_knowledge", "http1_1"])]
    pub http1_0: bool,
    /// No TCP keepalive probes on idle connections (curl sends them after 60 s).
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,
    /// Seconds of idle before TCP keepalive probes, and between them (curl's default 60).
    #[arg(long = "keepalive-time", value_name = "SECONDS")]
    pub keepalive_time: Option<u32>,
    /// TCP_NODELAY (always on, as in curl since 7.50.2; accepted).
    #[arg(long = "tcp-nodelay")]
    pub tcp_nodelay: bool,
    /// A progress bar of #s instead of the meter (terminals only).
    #[arg(short = '#', long = "progress-bar")]
    pub progress_bar: bool,
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
    /// POST JSON (curl 7.82's --json): as --data-binary, with
    /// Content-Type and Accept application/json; @FILE, @- read it;
    /// several are joined with nothing between them.
    #[arg(long = "json", value_name = "DATA")]
    pub json: Vec<String>,
    /// As -d, without the @ meaning.
    #[arg(long = "data-raw", value_name = "DATA")]
    pub data_raw: Vec<String>,
    /// As -d, percent-encoded: content, =content, name=content, @file, name@file.
    #[arg(long = "data-urlencode", value_name = "DATA")]
    pub data_urlencode: Vec<String>,
    /// Send the -d data in the URL's query with a GET.
    #[arg(short = 'G', long = "get")]
    pub get: bool,
    /// Multipart form part: name=value, name=@file (an upload, @- from
    /// standard input), name=<file (its content as the value); then
    /// ;type=T, ;filename=F, ;headers=H; "quoted" words may hold ;.
    #[arg(short = 'F', long = "form", value_name = "NAME=CONTENT")]
    pub form: Vec<String>,
    /// As -F, CONTENT taken as it is (no @, < or ; meanings).
    #[arg(long = "form-string", value_name = "NAME=STRING")]
    pub form_string: Vec<String>,
    /// PUT FILE ('-' for standard input, sent chunked), streamed: memory
    /// stays bounded whatever its size; a URL ending in / gets the file's name.
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
    /// Byte range(s): 0-499, 500-, -500 (the last 500), 0-0,-1.
    #[arg(
        short = 'r',
        long = "range",
        value_name = "RANGE",
        allow_hyphen_values = true
    )]
    pub range: Option<String>,
    /// Send PATH as the request target instead of the URL's path and
    /// query (`*` for OPTIONS *).
    #[arg(long = "request-target", value_name = "PATH")]
    pub request_target: Option<String>,
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
    /// Follow redirects. A -X method is kept on every hop, as curl keeps
    /// it; a POST's body is dropped after 301 and 302 (unless --post301,
    /// --post302), any body after 303 (unless a POST with --post303).
    #[arg(short = 'L', long = "location")]
    pub location: bool,
    /// With -L: a POST stays a POST after a 301.
    #[arg(long = "post301")]
    pub post301: bool,
    /// With -L: a POST stays a POST after a 302.
    #[arg(long = "post302")]
    pub post302: bool,
    /// With -L: a POST stays a POST after a 303.
    #[arg(long = "post303")]
    pub post303: bool,
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
    /// Send GET and HEAD requests without a body as TLS 1.3 early data
    /// (0-RTT) when a session with the origin can be resumed (curl 8.11+):
    /// the request leaves with the handshake, saving a round trip. Sessions
    /// live in this process (later URLs and reconnects resume); early data
    /// may be replayed by an attacker, so nothing else is ever sent early.
    #[arg(long)]
    pub tls_earlydata: bool,
    /// TCP Fast Open (curl's --tcp-fastopen): the first bytes (the TLS
    /// ClientHello, or the request) go in the SYN when the kernel holds a
    /// cookie from an earlier connection to the server, saving a round
    /// trip; otherwise a normal handshake (-v says which).
    #[arg(long)]
    pub tcp_fastopen: bool,
    /// Happy Eyeballs (RFC 8305): connection attempts to a name's addresses,
    /// alternating IPv6 and IPv4, start this many milliseconds apart (or at
    /// once when one fails); the first to connect wins. 0 starts them all
    /// at once, as in curl. Default 250, the RFC's (curl's is 200).
    #[arg(long, value_name = "MS", default_value = "250")]
    pub happy_eyeballs_timeout_ms: u64,
    /// Try a name's addresses one after the other, each until it fails or
    /// --connect-timeout passes (no racing; how a broken IPv6 path stalls
    /// a client without Happy Eyeballs).
    #[arg(long, conflicts_with = "happy_eyeballs_timeout_ms")]
    pub no_happy_eyeballs: bool,
    /// Fail (curl's exit 63) when a body is larger than SIZE: bytes, or
    /// K, M, G as curl reads them (powers of 1024: 10K is 10240). A body
    /// whose length says so is not written at all; one that grows past
    /// it (chunked) stops there.
    #[arg(long, value_name = "SIZE")]
    pub max_filesize: Option<String>,
    /// Give up after this long (whole run): 10, 2.5, 500ms.
    #[arg(short = 'm', long = "max-time", value_name = "SECONDS")]
    pub max_time: Option<Seconds>,
    /// IPv4 addresses only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 addresses only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Connect to ADDRESS for HOST:PORT (repeatable; HOST * for any).
    #[arg(long, value_name = "HOST:PORT:ADDRESS")]
    pub resolve: Vec<tcpwise_client::Resolve>,
    /// For requests to HOST1:PORT1, connect to HOST2:PORT2 instead (the
    /// Host header and TLS name stay the URL's); an empty part matches
    /// any, or keeps the URL's (repeatable; the first match wins).
    #[arg(long = "connect-to", value_name = "HOST1:PORT1:HOST2:PORT2")]
    pub connect_to: Vec<tcpwise_client::ConnectTo>,
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
    /// HTTP/3 over QUIC to the URL's host and port (https:// only), with
    /// a TCP attempt (HTTP/2 or 1.1) joining after the Happy Eyeballs
    /// delay: the first to connect is used, and -v says why TCP was.
    #[arg(long = "http3", conflicts_with_all = ["http1_0", "http1_1", "http2", "http2_prior_knowledge"])]
    pub http3: bool,
    /// Alt-Svc cache in curl's format: read at the start (a missing file
    /// is empty), h3 alternatives that responses advertise used for the
    /// next request to their origin, and the cache written at the end.
    #[arg(long = "alt-svc", value_name = "FILE")]
    pub alt_svc: Option<PathBuf>,
    /// HTTP/3 over QUIC only, no TCP attempt (https:// only): a QUIC
    /// failure is the transfer's error (curl's 96, or 28 on a timeout).
    #[arg(long = "http3-only", conflicts_with_all = ["http1_0", "http1_1", "http2", "http2_prior_knowledge", "http3"])]
    pub http3_only: bool,
    /// Print the timings and the connection report of every response to stderr.
    #[arg(long)]
    pub timing: bool,
    /// Print one JSON array of responses (status, headers, timings,
    /// connection report) instead of bodies (curl's --json is a JSON POST;
    /// -w '%{json}' prints curl's own per-transfer object).
    #[arg(long = "report-json")]
    pub report_json: bool,
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
    /// TLS 1.0 or later (rustls speaks 1.2 and 1.3, so: the default).
    #[arg(short = '1', long = "tlsv1")]
    pub tlsv1: bool,
    /// TLS 1.0 or later (as --tlsv1).
    #[arg(long = "tlsv1.0")]
    pub tlsv1_0: bool,
    /// TLS 1.1 or later (as --tlsv1).
    #[arg(long = "tlsv1.1")]
    pub tlsv1_1: bool,
    /// TLS 1.2 or later.
    #[arg(long = "tlsv1.2")]
    pub tlsv1_2: bool,
    /// TLS 1.3 only.
    #[arg(long = "tlsv1.3")]
    pub tlsv1_3: bool,
    /// The newest TLS version to use: 1.2, 1.3 or default (1.0 and 1.1
    /// are refused: rustls does not speak them).
    #[arg(long = "tls-max", value_name = "VERSION")]
    pub tls_max: Option<String>,
}

/// What goes where, in the order curl takes it: each URL's -o or -O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputArg {
    /// `-o FILE`.
    File(PathBuf),
    /// `-O`: the URL's file name.
    Remote,
}

/// The flags whose order matters, in command-line order.
#[derive(Debug, Clone, Default)]
pub struct InOrder {
    /// The `-d` family.
    pub data: Vec<Data>,
    /// `-o` and `-O`: the Nth goes with the Nth URL.
    pub outputs: Vec<OutputArg>,
    /// `-F` and `--form-string`.
    pub form: Vec<super::form::FormArg>,
}

impl GetArgs {
    /// The `-d` family, `-o`/`-O` and `-F`/`--form-string` in
    /// command-line order (clap keeps each flag apart; `m`, the `get`
    /// subcommand's matches, gives their positions; without it they
    /// join flag by flag).
    pub fn data_in_order(&self, m: Option<&clap::ArgMatches>) -> InOrder {
        let a = self;
        let idx = |id: &str| -> Vec<usize> {
            m.and_then(|m| m.indices_of(id))
                .map(|i| i.collect())
                .unwrap_or_default()
        };
        fn sorted<T>(mut all: Vec<(usize, T)>) -> Vec<T> {
            all.sort_by_key(|(i, _)| *i);
            all.into_iter().map(|(_, d)| d).collect()
        }
        let mut data: Vec<(usize, Data)> = Vec::new();
        let mut add = |id: &str, vals: &[String], f: fn(String) -> Data| {
            let at = idx(id);
            for (n, v) in vals.iter().enumerate() {
                data.push((at.get(n).copied().unwrap_or(usize::MAX), f(v.clone())));
            }
        };
        add("data", &a.data, Data::Ascii);
        add("data_binary", &a.data_binary, Data::Binary);
        add("data_raw", &a.data_raw, Data::Raw);
        add("data_urlencode", &a.data_urlencode, Data::UrlEncode);
        add("json", &a.json, Data::Json);
        let mut outputs: Vec<(usize, OutputArg)> = Vec::new();
        let (o_at, r_at) = (idx("output"), idx("remote_name"));
        for (n, f) in a.output.iter().enumerate() {
            outputs.push((
                o_at.get(n).copied().unwrap_or(n),
                OutputArg::File(f.clone()),
            ));
        }
        for n in 0..usize::from(a.remote_name) {
            outputs.push((
                r_at.get(n).copied().unwrap_or(usize::MAX),
                OutputArg::Remote,
            ));
        }
        let mut form = Vec::new();
        for (id, vals, literal) in [
            ("form", &a.form, false),
            ("form_string", &a.form_string, true),
        ] {
            let at = idx(id);
            for (n, text) in vals.iter().enumerate() {
                let arg = super::form::FormArg {
                    text: text.clone(),
                    literal,
                };
                form.push((at.get(n).copied().unwrap_or(usize::MAX), arg));
            }
        }
        InOrder {
            data: sorted(data),
            outputs: sorted(outputs),
            form: sorted(form),
        }
    }
}

/// `get`'s flags as a clap command (for reading a config file and the
/// groups `--next` separates).
fn get_command() -> clap::Command {
    <GetArgs as Args>::augment_args(clap::Command::new("get").no_binary_name(true))
}

/// Whether `-X`/`--long` is a `get` flag that takes a value; `None` for
/// no such flag.
fn takes_value(cmd: &clap::Command, option: &str) -> Option<bool> {
    let arg = match option.strip_prefix("--") {
        Some(long) => cmd.get_arguments().find(|a| a.get_long() == Some(long)),
        None => {
            let c = option.strip_prefix('-')?.chars().next()?;
            cmd.get_arguments().find(|a| a.get_short() == Some(c))
        }
    }?;
    Some(arg.get_action().takes_values())
}

/// curl's quoted parameter: up to the closing quote, `\t \n \r \v` and
/// `\X` for any other X.
fn unquote(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match c {
            '"' => break,
            '\\' => match it.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('v') => out.push('\u{b}'),
                Some(o) => out.push(o),
                None => break,
            },
            o => out.push(o),
        }
    }
    out
}

/// A curl config file (`-K`) as command-line words, curl's syntax: one
/// option a line, with or without its dashes (`url = "http://h/"`,
/// `--silent`, `-o out`), the value after whitespace, `=` or `:` (only
/// for a name without dashes), in double quotes with backslash escapes
/// or up to the next whitespace; `#` lines are comments. An unknown
/// option, or a value given to a flag that takes none, is a warning (the
/// second list), as in curl, which goes on.
pub fn config_words(
    text: &str,
    source: &str,
) -> Result<(Vec<String>, Vec<String>), super::CurlError> {
    let cmd = get_command();
    let mut words = Vec::new();
    let mut warnings = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let dashed = line.starts_with('-');
        let is_sep = |c: char| c.is_whitespace() || (!dashed && (c == '=' || c == ':'));
        let end = line.find(is_sep).unwrap_or(line.len());
        let (name, rest) = line.split_at(end);
        let rest = rest.trim_start_matches(is_sep);
        let param = if let Some(q) = rest.strip_prefix('"') {
            Some(unquote(q))
        } else {
            let p = rest.split(char::is_whitespace).next().unwrap_or("");
            (!p.is_empty()).then(|| p.to_string())
        };
        let option = if dashed {
            name.to_string()
        } else {
            format!("--{name}")
        };
        let bad = |why: &str| super::CurlError::Usage(format!("{source}:{}: {why}", n + 1));
        let warn = |why: String| format!("{source}:{}: warning: {why}", n + 1);
        match takes_value(&cmd, &option) {
            None => warnings.push(warn(format!("'{name}' is unknown"))),
            Some(true) => {
                let v = param.ok_or_else(|| bad(&format!("{option} needs a value")))?;
                words.push(option);
                words.push(v);
            }
            Some(false) => {
                if let Some(p) = param {
                    warnings.push(warn(format!("{option} takes no value; '{p}' ignored")));
                }
                words.push(option);
            }
        }
    }
    Ok((words, warnings))
}

/// curl 7.88's options, each with what `tcpwise get` does with it: the
/// table in `docs/options-curl.md` (a test keeps it true).
const OPTIONS_TABLE: &str = include_str!("../../../docs/options-curl.md");

/// The first of curl's options that `tcpwise get` refuses, as the one
/// line that says so (values of options that take one are skipped; a
/// bare `--` ends the options).
pub fn refusal(words: &[String]) -> Option<String> {
    use tcpwise_outcome::peer_options;
    let cmd = get_command();
    peer_options::refusal(
        words,
        &peer_options::refused(OPTIONS_TABLE),
        &|o| takes_value(&cmd, o) == Some(true),
        ("curl", "tcpwise get", "docs/options-curl.md"),
    )
}

/// `tcpwise get`'s command line with every `-K FILE`/`--config FILE`
/// replaced by the file's words where it stood (`-` is standard input;
/// a config file may name another, up to 10 deep). Other commands'
/// lines pass through.
pub fn expand_config(
    argv: Vec<std::ffi::OsString>,
) -> Result<Vec<std::ffi::OsString>, super::CurlError> {
    if argv.get(1).is_none_or(|a| a != "get") {
        return Ok(argv);
    }
    fn expand(words: Vec<String>, depth: usize) -> Result<Vec<String>, super::CurlError> {
        let mut out = Vec::new();
        let mut it = words.into_iter();
        while let Some(w) = it.next() {
            let file = match w.as_str() {
                "-K" | "--config" => Some(
                    it.next()
                        .ok_or_else(|| super::CurlError::Usage(format!("{w} needs a file")))?,
                ),
                _ => w
                    .strip_prefix("--config=")
                    .or_else(|| w.strip_prefix("-K").filter(|f| !f.is_empty()))
                    .map(str::to_string),
            };
            let Some(file) = file else {
                out.push(w);
                continue;
            };
            if depth >= 10 {
                return Err(super::CurlError::Usage(format!(
                    "-K {file}: config files nest more than 10 deep"
                )));
            }
            let text = if file == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map(|_| s)
            } else {
                std::fs::read_to_string(&file)
            }
            .map_err(|source| super::CurlError::Config {
                path: file.clone(),
                source,
            })?;
            let (words, warnings) = config_words(&text, &file)?;
            for w in warnings {
                eprintln!("tcpwise: {w}");
            }
            out.extend(expand(words, depth + 1)?);
        }
        Ok(out)
    }
    let mut it = argv.into_iter();
    let head: Vec<std::ffi::OsString> = it.by_ref().take(2).collect();
    let rest: Vec<String> = it.map(|a| a.to_string_lossy().into_owned()).collect();
    let words = expand(rest, 0)?;
    // One line for an option of curl's that is not built, not clap's
    // "unexpected argument" and usage.
    if let Some(line) = refusal(&words) {
        return Err(super::CurlError::Usage(line));
    }
    Ok(head
        .into_iter()
        .chain(words.into_iter().map(Into::into))
        .collect())
}

/// Splits `tcpwise get`'s command line at curl's `-:`/`--next`: the line
/// up to the first one, and each later group's words (each group is a
/// command line of its own: flags and URLs).
pub fn split_next(
    argv: Vec<std::ffi::OsString>,
) -> (Vec<std::ffi::OsString>, Vec<Vec<std::ffi::OsString>>) {
    if argv.get(1).is_none_or(|a| a != "get") {
        return (argv, Vec::new());
    }
    let mut groups: Vec<Vec<std::ffi::OsString>> = vec![Vec::new()];
    for a in argv {
        if a == "-:" || a == "--next" {
            groups.push(Vec::new());
        } else if let Some(g) = groups.last_mut() {
            g.push(a);
        }
    }
    let first = groups.remove(0);
    (first, groups)
}

/// One `--next` group's words as flags (clap's error, as for the first
/// group, when they do not parse) and its `-d` family in order.
pub fn parse_group(words: &[std::ffi::OsString]) -> Result<(GetArgs, InOrder), clap::Error> {
    let m = get_command().try_get_matches_from(words)?;
    let a = <GetArgs as clap::FromArgMatches>::from_arg_matches(&m)?;
    let data = a.data_in_order(Some(&m));
    Ok((a, data))
}
