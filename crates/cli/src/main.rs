//! `tcpwise`: thin command-line front end. Flags are parsed once into the
//! crates' config structs; all the work happens in the library crates.

mod dispatch_cmd;
mod emu_cmd;
mod http_cmd;
mod lab_cmd;
mod link_args;
mod perf_cmd;

use clap::{Parser, Subcommand};

/// Exit codes, documented in `--help`.
pub mod exit {
    /// Bad flags or input (clap uses 2 as well).
    pub const USAGE: i32 = 2;
    /// Missing privileges or system support.
    pub const PRIVILEGES: i32 = 3;
    /// The emulator could not be set up, or failed while running.
    pub const EMULATOR: i32 = 4;
    /// A measurement failed.
    pub const FAILURE: i32 = 1;
}

const EXIT_CODES: &str = "\
Exit status:
  0    success (for `emu shell` and `emu pair`: the command's own status)
  1    a measurement or transfer failed
  2    bad flags or input (unknown unit, unreadable trace, ...)
  3    missing privileges or system support (root, /dev/net/tun, iproute2)
  4    the emulator could not be set up or stopped working
  128+N  interrupted by signal N (130 for Ctrl-C); everything is torn down first";

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
    /// Completion dispatch models (MariaDB): a request/response server and its closed-loop load.
    #[command(subcommand)]
    Dispatch(dispatch_cmd::DispatchCommand),
    /// Fetch URLs, curl-like, through tcpwise's warm-connection pool.
    #[command(after_help = http_cmd::GET_EXIT_CODES)]
    Get(http_cmd::GetArgs),
    /// Run the seed experiments on emulated links and write a report (needs root).
    #[command(after_help = lab_cmd::LAB_HELP)]
    Lab(lab_cmd::LabArgs),
    /// Serve /bytes/N, /delay/MS/bytes/N, /echo and /health over HTTP/1.1 (keep-alive, optional TLS).
    Serve(http_cmd::ServeArgs),
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Emu(cmd) => emu_cmd::run(cmd),
        Command::Perf(cmd) => perf_cmd::run(cmd),
        Command::Dispatch(cmd) => dispatch_cmd::run(cmd),
        Command::Get(a) => http_cmd::get(a),
        Command::Serve(a) => http_cmd::serve(a),
        Command::Lab(a) => lab_cmd::run(a),
    };
    std::process::exit(code);
}
