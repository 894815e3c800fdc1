//! `tcpwise bench`'s flags, as wrk, wrk2 and h2load spell them (the
//! clap dependency of this crate is confined to this module; the
//! architecture test checks that), and wrk's options that it refuses, in
//! one line read from `docs/options-wrk.md`.

use clap::Args;
use tcpwise_client::Header;
use tcpwise_units::Seconds;

/// `tcpwise bench`'s flags.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// URLs to load (http:// or https://; without a scheme, http); several
    /// share one origin and are taken in turn, as h2load takes its URIs.
    #[arg(required = true)]
    pub urls: Vec<String>,
    /// Open connections (wrk's default, 10; at least -t).
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    /// Threads, each with its own connections and event loop (wrk's
    /// default, 2).
    #[arg(short = 't', long, default_value_t = 2)]
    pub threads: usize,
    /// How long to load (wrk's -d: 10, 10s, 2m, 500ms). Default 10 s
    /// unless -n is given. Ctrl-C or SIGTERM ends the run early and prints
    /// the report of the time so far (exit 0, as wrk).
    #[arg(short = 'd', long, conflicts_with = "requests")]
    pub duration: Option<Seconds>,
    /// Stop after this many responses instead (hey's -n).
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// Open loop at R requests/s in total, latency measured from when each
    /// request was due (wrk2's -R: coordinated-omission correction).
    #[arg(short = 'R', long, value_name = "R")]
    pub rate: Option<f64>,
    /// Extra header, 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<Header>,
    /// Method (default GET, POST with --data).
    #[arg(short = 'X', long)]
    pub method: Option<String>,
    /// Request body, or @FILE (no short form: -d is the duration, as in wrk).
    #[arg(long, value_name = "DATA")]
    pub data: Option<String>,
    /// A request with no complete response after this long counts as a
    /// timeout error (wrk's default, 2s).
    #[arg(long, default_value = "2s")]
    pub timeout: Seconds,
    /// Also print wrk's "Latency Distribution" table (50, 75, 90, 99 %),
    /// as wrk lays it out (the p50 to p99.99 line is always printed).
    #[arg(long)]
    pub latency: bool,
    /// https: accept any server certificate.
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// https: trust the PEM certificates in FILE too.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<std::path::PathBuf>,
    /// HTTP/2, as h2load loads: h2c with prior knowledge on http://, ALPN
    /// h2 on https://.
    #[arg(long)]
    pub http2: bool,
    /// HTTP/3 over QUIC (https:// only, ALPN h3): each connection a QUIC
    /// connection with its own UDP socket.
    #[arg(long, conflicts_with = "http2")]
    pub http3: bool,
    /// HTTP/2 or HTTP/3 streams in flight per connection (h2load's -m; needs --http2 or --http3).
    #[arg(short = 'm', long = "max-concurrent-streams", default_value_t = 1)]
    pub streams: usize,
    /// Print the report as JSON ({"summary": ...}).
    #[arg(long)]
    pub json: bool,
}

/// wrk's options, each with what `tcpwise bench` does with it: the table
/// in `docs/options-wrk.md` (a test keeps it true).
const OPTIONS_TABLE: &str = include_str!("../../../docs/options-wrk.md");

/// The first of wrk's options that `tcpwise bench` refuses in `argv`
/// (the whole command line), as the one line that says so.
pub fn refusal(argv: &[std::ffi::OsString]) -> Option<String> {
    use tcpwise_outcome::peer_options;
    if argv.get(1)? != "bench" {
        return None;
    }
    let cmd = BenchArgs::augment_args(clap::Command::new("bench"));
    let takes = |o: &str| {
        cmd.get_arguments().any(|a| {
            let named = match o.strip_prefix("--") {
                Some(l) => a.get_long() == Some(l),
                None => o.len() == 2 && a.get_short() == o.chars().nth(1),
            };
            named && a.get_action().takes_values()
        })
    };
    let words: Vec<String> = argv[2..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    peer_options::refusal(
        &words,
        &peer_options::refused(OPTIONS_TABLE),
        &takes,
        ("wrk", "tcpwise bench", "docs/options-wrk.md"),
    )
}
