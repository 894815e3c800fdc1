//! `tcpwise dispatch server|load`: the completion-dispatch models and
//! their closed-loop load (MariaDB's completion-port report).

use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tcpwise_dispatch::load::{LoadOptions, LoadReport};
use tcpwise_dispatch::server::ServerOptions;
use tcpwise_dispatch::{Model, Workload};
use tcpwise_link::units::parse_duration;

#[derive(Debug, Subcommand)]
pub enum DispatchCommand {
    /// Serve the request/response protocol with one dispatch model until stopped.
    ///
    /// Models: `shared` (one epoll set drained by any worker: a completion
    /// port), `segments[:SLOTS]` (each connection bound to one worker, which
    /// waits on at most SLOTS = 64 of its connections at once, like
    /// WaitForMultipleObjects), `tokio` (tokio's work-stealing runtime).
    /// On SIGINT/SIGTERM it prints requests served per worker as JSON and exits 0.
    #[command(verbatim_doc_comment)]
    Server(ServerArgs),
    /// Closed-loop load: N connections, each sending its next request when
    /// the last reply arrived (sysbench-like); prints throughput and latency.
    ///
    /// Example (the lab's completion experiment, by hand):
    ///   tcpwise emu pair --rtt 0.5ms --rate 1gbit --server 'tcpwise dispatch server --model segments' \
    ///     --wait-port 7001 -- tcpwise dispatch load '$TCPWISE_PEER:7001' --clients 256 -t 5s
    #[command(verbatim_doc_comment)]
    Load(LoadArgs),
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Dispatch model: shared, segments[:SLOTS] or tokio.
    #[arg(long, value_parser = Model::parse, default_value = "shared")]
    pub model: Model,
    /// Worker threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,
    /// Address to listen on.
    #[arg(long, default_value = "[::]:7001")]
    pub bind: SocketAddr,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Server address (host:port).
    pub target: SocketAddr,
    /// Concurrent connections.
    #[arg(short, long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=20000))]
    pub clients: u32,
    /// Measured time (after the warm-up).
    #[arg(short = 't', long, default_value = "5s", value_parser = dur)]
    pub time: Duration,
    /// Warm-up before measuring.
    #[arg(long, default_value = "1s", value_parser = dur)]
    pub warmup: Duration,
    /// Server work of an ordinary request, µs.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub work_us: u32,
    /// Fraction of long requests (0 to 1).
    #[arg(long, default_value_t = 0.01)]
    pub long_fraction: f64,
    /// Server work of a long request, µs.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub long_us: u32,
    /// Reply size, bytes.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(4..=1_048_576))]
    pub reply_bytes: u32,
    /// Seed of the request stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

fn dur(s: &str) -> Result<Duration, String> {
    let ns = parse_duration(s).map_err(|e| e.to_string())?;
    if ns > 3_600_000_000_000 {
        return Err(format!("'{s}': at most one hour"));
    }
    Ok(Duration::from_nanos(ns))
}

pub fn run(cmd: DispatchCommand) -> i32 {
    match cmd {
        DispatchCommand::Server(a) => server(a),
        DispatchCommand::Load(a) => load(a),
    }
}

fn server(a: ServerArgs) -> i32 {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    let opts = ServerOptions {
        bind: a.bind,
        model: a.model,
        workers: usize::from(a.workers),
    };
    let name = a.model.name();
    match tcpwise_dispatch::server::serve(&opts, stop, |addr| {
        eprintln!(
            "tcpwise dispatch: {name} model, {} workers, listening on {addr}",
            a.workers
        )
    }) {
        Ok(stats) => {
            println!(
                "{}",
                serde_json::json!({ "model": name, "per_worker": stats.per_worker })
            );
            0
        }
        Err(e) => {
            eprintln!("tcpwise: error: cannot serve on {}: {e}", a.bind);
            crate::exit::FAILURE
        }
    }
}

fn load(a: LoadArgs) -> i32 {
    if !(0.0..=1.0).contains(&a.long_fraction) {
        eprintln!("tcpwise: error: --long-fraction must be between 0 and 1");
        return crate::exit::USAGE;
    }
    if a.time.is_zero() {
        eprintln!("tcpwise: error: -t must be longer than 0");
        return crate::exit::USAGE;
    }
    let opts = LoadOptions {
        target: a.target,
        clients: a.clients as usize,
        duration: a.time,
        warmup: a.warmup,
        workload: Workload {
            base_us: a.work_us,
            long_fraction: a.long_fraction,
            long_us: a.long_us,
            reply_bytes: a.reply_bytes,
        },
        seed: a.seed,
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tcpwise: error: cannot start the runtime: {e}");
            return crate::exit::FAILURE;
        }
    };
    // A bounded run: the load stops by itself; this is a backstop.
    let limit = a.warmup + a.time + Duration::from_secs(60);
    let r = rt
        .block_on(async { tokio::time::timeout(limit, tcpwise_dispatch::load::run(&opts)).await });
    match r {
        Ok(Ok(rep)) => {
            print_report(&rep, a.json);
            0
        }
        Ok(Err(e)) => {
            eprintln!("tcpwise: error: {e}");
            crate::exit::FAILURE
        }
        Err(_) => {
            eprintln!("tcpwise: error: the load did not finish within {limit:?}");
            crate::exit::FAILURE
        }
    }
}

fn print_report(r: &LoadReport, json: bool) {
    if json {
        println!("{}", serde_json::to_string(r).unwrap_or_default());
    } else {
        println!(
            "{} clients: {:.0} requests/s ({} in the measured time); latency p50 {} µs, p90 {} µs, p99 {} µs, max {} µs; {} broken",
            r.clients, r.tps, r.requests, r.p50_us, r.p90_us, r.p99_us, r.max_us, r.errors
        );
    }
}
