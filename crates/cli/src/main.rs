//! `tcpwise`: thin command-line front end. Flags are parsed once (clap,
//! with the crates' own `FromStr` types); all the work happens in the
//! library crates; errors come back here and are mapped to exit codes in
//! one place, [`exit_code`].

mod bench_cmd;
mod dispatch_cmd;
mod emu_cmd;
mod http_cmd;
mod lab_cmd;
mod perf_cmd;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use tcpwise_dispatch::load::LoadError;
use tcpwise_emu::EmuError;
use tcpwise_http::HttpError;
use tcpwise_lab::LabError;
use tcpwise_perf::PerfError;

const EXIT_CODES: &str = "\
Units, in every flag: durations need a unit (100ms, 1.5s, 250us, 2min, 1h; a bare 0
is fine), except -t of perf and -m of get, where a bare number is seconds as in iperf3
and curl; sizes are bytes (278775, 64KB = 64000, 256KiB = 262144); rates are bits per
second (20mbit, 1.5gbit) or bytes per second (2.5MB/s); 'mbps' is refused as ambiguous.

Exit status:
  0    success (for `emu shell` and `emu pair`: the command's own status)
  1    a measurement or transfer failed, or a server cannot listen (address in use)
  2    bad flags or input (unknown unit, unreadable trace, ...)
  3    missing privileges or system support (root, /dev/net/tun, iproute2)
  4    the emulator could not be set up or stopped working
  126  `emu shell/pair`: the command could not be executed; 127: not found
  128+N  interrupted by signal N (130 for Ctrl-C); everything is torn down first
  `tcpwise get` uses curl's numbers (see `tcpwise get --help`).";

/// tcpwise: network I/O that cooperates with TCP, and the lab that proves it.
#[derive(Debug, Parser)]
#[command(name = "tcpwise", version, about, after_help = EXIT_CODES, propagate_version = true)]
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
    #[command(after_help = http_cmd::GET_EXIT_CODES)]
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
    /// Serve /bytes/N, /delay/MS/bytes/N, /echo and /health over HTTP/1.1 (keep-alive, optional TLS).
    Serve(http_cmd::ServeArgs),
}

/// Bad input found after parsing (a file that cannot be read, flags that
/// do not go together): exit 2, like clap's own refusals.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// The exit status an error stands for: the one mapping of the binary.
/// It looks through the whole chain, so context added on the way up does
/// not change the code.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    for cause in e.chain() {
        if let Some(e) = cause.downcast_ref::<EmuError>() {
            return match e {
                EmuError::Privileges(_) | EmuError::Missing(_) => 3,
                EmuError::Config(_) => 2,
                EmuError::Setup(_) | EmuError::Os { .. } => 4,
                EmuError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    127
                }
                EmuError::Spawn { .. } => 126,
                EmuError::Interrupted => 130,
                EmuError::Io(_) => 1,
            };
        }
        if let Some(e) = cause.downcast_ref::<LabError>() {
            return match e {
                LabError::Usage(_) => 2,
                LabError::Interrupted => 130,
                LabError::Emu(_) | LabError::Io(_) => 4,
                _ => 1,
            };
        }
        if let Some(e) = cause.downcast_ref::<HttpError>() {
            return http_exit_code(e);
        }
        if let Some(e) = cause.downcast_ref::<tcpwise_http::curl::transfer::TransferError>() {
            use tcpwise_http::curl::transfer::TransferError as T;
            return match e {
                T::Http(h) => http_exit_code(h),
                other => other.curl_code().unwrap_or(1),
            };
        }
        if cause.is::<http_cmd::MaxTime>() {
            return 28;
        }
        if let Some(e) = cause.downcast_ref::<tcpwise_bench::BenchError>() {
            use tcpwise_bench::BenchError as B;
            return match e {
                B::Usage(_) => 2,
                B::FdLimit { .. } => 3,
                _ => 1,
            };
        }
        if cause.is::<tcpwise_aio::UringError>() {
            return 3;
        }
        if let Some(e) = cause.downcast_ref::<tcpwise_aio::AioError>() {
            use tcpwise_aio::AioError as A;
            return match e {
                A::Config(_) | A::NoDirect(_) | A::Size { .. } | A::NotOurs(..) => 2,
                A::Uring(_) => 3,
                _ => 1,
            };
        }
        if matches!(cause.downcast_ref(), Some(PerfError::Config(_)))
            || matches!(cause.downcast_ref(), Some(LoadError::Config(_)))
        {
            return 2;
        }
        if cause.is::<Usage>()
            || cause.is::<tcpwise_http::tls::TlsSetupError>()
            || cause.is::<tcpwise_http::curl::CurlError>()
        {
            return 2;
        }
    }
    1
}

/// curl's exit code for a client error.
pub fn http_exit_code(e: &HttpError) -> i32 {
    match e {
        HttpError::Url { .. } | HttpError::Buffer(_) | HttpError::TlsSetup(_) => 2,
        HttpError::Dns { .. } => 6,
        HttpError::Connect { source, .. } if source.kind() == std::io::ErrorKind::TimedOut => 28,
        HttpError::Connect { .. } => 7,
        HttpError::Protocol { .. } => 8,
        HttpError::Sink(_) => 23,
        HttpError::Tls { .. } => 35,
        HttpError::Certificate { .. } => 60,
        HttpError::TooLarge { .. } => 63,
        HttpError::TooManyRedirects { .. } => 47,
        // curl's 18: the body ended before its length said it would.
        HttpError::Body { .. } if e.is_partial() => 18,
        HttpError::Body { .. } | HttpError::Tunnel { .. } => 56,
    }
}

/// What `--json` prints when a command fails (iperf3 -J prints an
/// `"error"` object too): the message and the exit code.
pub fn print_json_error(e: &anyhow::Error) {
    let v =
        serde_json::json!({ "error": { "message": format!("{e:#}"), "exit_code": exit_code(e) } });
    println!("{v}");
}

/// The multi-thread runtime every command's async work runs on.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

/// Resolves on Ctrl-C or SIGTERM: how servers are told to finish.
pub async fn stop_signal() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

fn main() {
    tcpwise_emu::sys::default_sigpipe();
    // `emu ... --config FILE`: the file's flags go in before the user's.
    let argv = match tcpwise_emu::config::expand(std::env::args_os().collect()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tcpwise: error: {e}");
            std::process::exit(2);
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
        Command::Get(a) => http_cmd::get(a, matches.subcommand_matches("get")),
        Command::Serve(a) => http_cmd::serve(a),
        Command::Bench(a) => bench_cmd::run(a),
        Command::Lab(a) => lab_cmd::run(a),
    };
    let code = r.unwrap_or_else(|e| {
        eprintln!("tcpwise: error: {e:#}");
        exit_code(&e)
    });
    std::process::exit(code);
}
