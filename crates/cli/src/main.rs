//! `tcpwise`: thin command-line front end. Flags are parsed once (clap,
//! with the crates' own `FromStr` types); all the work happens in the
//! library crates; errors come back here and are mapped to exit codes in
//! one place, [`exit_code`].

mod bench_cmd;
mod dispatch_cmd;
mod emu_cmd;
mod gen_cmd;
mod http_cmd;
mod lab_cmd;
mod perf_cmd;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use tcpwise_curl as curl;
use tcpwise_outcome::{Class, Classify, Shutdown};

use tcpwise_outcome::EXIT_HELP as EXIT_CODES;

/// tcpwise: network I/O that cooperates with TCP, and the lab that proves it.
#[derive(Debug, Parser)]
#[command(name = "tcpwise", version = env!("TCPWISE_VERSION"), about, after_help = EXIT_CODES, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at start-up: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Emulated links between network namespaces, with real kernel TCP on both ends (no netem needed).
    #[command(subcommand)]
    Emu(emu_cmd::EmuCommand),
    /// Bulk TCP test with TCP_INFO per interval and a diagnosis of buffer limits (iperf3-like).
    #[command(subcommand)]
    Perf(perf_cmd::PerfCommand),
    /// Completion dispatch models (MariaDB): a request/response server, its closed-loop load, and asynchronous file I/O on io_uring.
    #[command(subcommand)]
    Dispatch(dispatch_cmd::DispatchCommand),
    /// Fetch URLs, curl-like, through tcpwise's warm-connection pool.
    #[command(after_help = http_cmd::GET_HELP)]
    Get(http_cmd::GetArgs),
    /// Run the seed experiments on emulated links and write a report (needs root).
    #[command(after_help = lab_cmd::LAB_HELP)]
    Lab(lab_cmd::LabArgs),
    /// Load an HTTP server: closed loop like wrk, or open loop at --rate R with
    /// coordinated-omission correction like wrk2.
    ///
    /// Flags as wrk spells them (-c connections, -t threads, -d duration),
    /// wrk2's -R/--rate, hey's -n, curl's -H/-X/-k/--cacert (the body is
    /// --data, since -d is the duration).
    ///
    /// Examples:
    ///   tcpwise serve --bind 127.0.0.1:8080 & sleep 0.5
    ///   tcpwise bench http://127.0.0.1:8080/bytes/100 -c 64 -d 2s
    ///   tcpwise bench http://127.0.0.1:8080/bytes/100 -c 16 --rate 2000 -d 2s --json
    #[command(verbatim_doc_comment)]
    Bench(bench_cmd::BenchArgs),
    /// Serve /bytes/N, /delay/MS/bytes/N, /echo, /health and the responsiveness test's
    /// /.well-known/nq over HTTP/1.1 and HTTP/2 (keep-alive, optional TLS).
    Serve(http_cmd::ServeArgs),
    /// Responsiveness under working conditions: round trips per minute while the path is
    /// loaded (draft-ietf-ippm-responsiveness, as Apple's networkQuality measures it).
    ///
    /// Loads the path with HTTP/2 connections, one more each interval until goodput is
    /// stable, and probes it meanwhile: foreign probes on new connections (TCP, TLS and
    /// HTTP timed apart) and self probes on the loaded ones. Any server keeping the
    /// network-quality server spec works; `tcpwise serve` does, at /.well-known/nq.
    ///
    /// Examples (a bloated 400 KB drop-tail queue and the server's TCP_NOTSENT_LOWAT off,
    /// then FQ-CoDel with it at its default, auto, down then up):
    ///   tcpwise emu pair --rtt 40ms --rate 20mbit --queue 400KB \
    ///     --server 'tcpwise serve -p 8443 --tls -C cubic --notsent-lowat off' \
    ///     -- sh -c 'tcpwise rpm -k https://$TCPWISE_PEER:8443 --direction down'
    ///   tcpwise emu pair --rtt 40ms --rate 20mbit --queue fq-codel \
    ///     --server 'tcpwise serve -p 8443 --tls' \
    ///     -- sh -c 'tcpwise rpm -k -s https://$TCPWISE_PEER:8443 --json > rpm.json'
    #[command(verbatim_doc_comment)]
    Rpm(tcpwise_rpm::flags::RpmArgs),
    /// Write man pages and shell completions from these definitions (for packagers).
    #[command(hide = true)]
    Generate(gen_cmd::GenArgs),
}

/// Bad input found after parsing (a file that cannot be read, flags that
/// do not go together): exit 2, like clap's own refusals.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// The class of one error of the chain, if its type says one: every
/// library error type classifies itself ([`Classify`]); this list only
/// names the types, never a variant.
fn class_of(e: &(dyn std::error::Error + 'static)) -> Option<Class> {
    macro_rules! classify {
        ($($t:ty),* $(,)?) => {
            $(if let Some(x) = e.downcast_ref::<$t>() {
                return x.class();
            })*
        };
    }
    classify!(
        tcpwise_emu::EmuError,
        tcpwise_lab::LabError,
        tcpwise_client::HttpError,
        curl::transfer::TransferError,
        curl::run::RunError,
        curl::CurlError,
        tcpwise_http::tls::TlsSetupError,
        tcpwise_bench::BenchError,
        tcpwise_rpm::RpmError,
        tcpwise_server::command::ServeError,
        tcpwise_aio::UringError,
        tcpwise_aio::AioError,
        tcpwise_perf::PerfError,
        tcpwise_dispatch::load::LoadError,
    );
    e.is::<Usage>().then_some(Class::Usage)
}

/// The exit status an error stands for: the one mapping of the binary.
/// It looks through the whole chain (the first error that decides a
/// class wins), so context added on the way up does not change the code.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    e.chain()
        .find_map(class_of)
        .unwrap_or(Class::Failed)
        .exit_code()
}

/// What `--json` prints when a command fails (iperf3 -J prints an
/// `"error"` object too): the message and the exit code.
pub fn print_json_error(e: &anyhow::Error) {
    let v = versioned(
        serde_json::json!({ "error": { "message": format!("{e:#}"), "exit_code": exit_code(e) } }),
    );
    println!("{v}");
}

pub use tcpwise_tcp::runtime;

/// A JSON report with the version string (`--version`'s) added at its
/// top level, so a figure can be traced to the commit that measured it.
pub fn versioned(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(mut m) => {
            m.insert("tcpwise_version".into(), tcpwise_outcome::version().into());
            serde_json::Value::Object(m)
        }
        other => other,
    }
}

/// [`versioned`] of `r`, pretty-printed.
pub fn versioned_pretty(r: &impl serde::Serialize) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&versioned(serde_json::to_value(r)?))
}

/// A [`Shutdown`] triggered by the first SIGINT or SIGTERM: how servers
/// are told to finish.
pub fn shutdown_on_signals() -> std::io::Result<Shutdown> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Shutdown::new();
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    let s = stop.clone();
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            s.trigger();
        }
    });
    Ok(stop)
}

fn main() {
    tcpwise_outcome::set_version(env!("TCPWISE_VERSION"));
    tcpwise_emu::sys::default_sigpipe();
    // Config files (`emu --config`, `get -K`) in, `get --next` groups apart.
    use tcpwise_curl::{exit::words, flags};
    let argv = tcpwise_emu::config::expand(std::env::args_os().collect())
        .map_err(|e| (e.to_string(), 2))
        .and_then(|a| flags::expand_config(a).map_err(|e| (e.to_string(), words(&e))))
        .and_then(|a| tcpwise_perf::flags::refusal(&a).map_or(Ok(a), |e| Err((e, 2))))
        .and_then(|a| tcpwise_bench::flags::refusal(&a).map_or(Ok(a), |e| Err((e, 2))));
    let (argv, next) = match argv {
        Ok(a) => flags::split_next(a),
        Err((e, code)) => {
            eprintln!("tcpwise: error: {e}");
            std::process::exit(code);
        }
    };
    let matches = Cli::command().get_matches_from(argv);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Servers (and get, as curl) write to sockets of peers that may go
    // away mid-write and must not die of SIGPIPE; `emu` and `perf client`
    // keep the default, so `| head` ends them quietly.
    let servers = !matches!(
        cli.command,
        Command::Emu(_) | Command::Perf(perf_cmd::PerfCommand::Client(_))
    );
    if servers {
        tcpwise_emu::sys::ignore_sigpipe();
    }
    let r = match cli.command {
        Command::Emu(cmd) => emu_cmd::run(cmd, matches.subcommand_matches("emu")),
        Command::Perf(cmd) => perf_cmd::run(cmd),
        Command::Dispatch(cmd) => dispatch_cmd::run(cmd),
        Command::Get(a) => http_cmd::get(a, matches.subcommand_matches("get"), next),
        Command::Serve(a) => http_cmd::serve(a),
        Command::Bench(a) => bench_cmd::run(a),
        Command::Rpm(a) => bench_cmd::rpm(a),
        Command::Lab(a) => lab_cmd::run(a),
        Command::Generate(a) => gen_cmd::run(a),
    };
    let code = r.unwrap_or_else(|e| {
        eprintln!("tcpwise: error: {e:#}");
        exit_code(&e)
    });
    std::process::exit(code);
}
