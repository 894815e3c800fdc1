//! `tcpwise dispatch server|load|aio`: the completion-dispatch models,
//! their closed-loop load, and the file-I/O workload of MariaDB's
//! completion-port report.

use anyhow::Result;
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use tcpwise_dispatch::load::LoadOptions;
use tcpwise_dispatch::server::ServerOptions;
use tcpwise_dispatch::{Model, Workload};
use tcpwise_units::{Bytes, Dur, Fraction};

#[derive(Debug, Subcommand)]
pub enum DispatchCommand {
    /// Serve the request/response protocol with one dispatch model until stopped.
    ///
    /// Models: `shared` (one epoll set drained by any worker: a completion
    /// port), `segments[:SLOTS]` (each connection bound to one worker, which
    /// waits on at most SLOTS = 64 of its connections at once, like
    /// WaitForMultipleObjects), `tokio` (tokio's work-stealing runtime),
    /// `io-uring` (multishot accept and receive into provided buffers on one
    /// ring; whole requests go to one queue any worker drains; exit 3 when
    /// io_uring is unavailable).
    /// On SIGINT/SIGTERM it prints requests served per worker as JSON and exits 0.
    #[command(verbatim_doc_comment)]
    Server(ServerArgs),
    /// Closed-loop load: N connections, each sending its next request when
    /// the last reply arrived (sysbench-like); prints throughput and latency.
    ///
    /// Example (the lab's completion experiment, by hand):
    ///   tcpwise emu pair --rtt 0.5ms --rate 1gbit --server 'tcpwise dispatch server --model segments' \
    ///     --wait-port 7001 -- sh -c 'tcpwise dispatch load $TCPWISE_PEER:7001 --clients 256 -t 5s'
    #[command(verbatim_doc_comment)]
    Load(LoadArgs),
    /// Asynchronous file I/O on io_uring, the report's own workload:
    /// C closed-loop clients, each transaction reads one 16 KiB page at a
    /// random key with O_DIRECT, updates a row and writes it back (no fsync:
    /// durability off, as in the report), under one of three disciplines:
    ///
    ///   shared          one ring; a reaper hands completions to one queue any
    ///                   of the T workers drains (an I/O completion port)
    ///   segments[:N]    T rings, each I/O bound to ring hash(page) mod T with at
    ///                   most N (64) in flight; only the owner reaps it
    ///   sync            T threads doing pread/pwrite
    ///   innodb          segments as InnoDB built them on Windows: 32 slots a
    ///                   segment, one reaper each taking one completion a wait,
    ///                   smallest slot first; a request takes the first free
    ///                   slot from its segment over the whole array, and when
    ///                   all are taken waits on one event that wakes every
    ///                   waiter; a thread a client
    ///   innodb:without=S[+S]  the same without slots32, lowest-first, spill
    ///                   or wake-all (each falls back to what segments does)
    ///
    /// The data file (default 1 GiB under /var/tmp/tcpwise) is written once and
    /// reused; after the run every page is read back and checked against its
    /// last write. Exit 3 when io_uring is unavailable.
    ///
    /// Examples:
    ///   tcpwise dispatch aio --model shared --clients 256 -t 5s
    ///   tcpwise dispatch aio --model segments:8 --clients 256 --skew zipf:0.99 --json
    ///   tcpwise dispatch aio --model innodb:without=wake-all --clients 1024
    #[command(verbatim_doc_comment)]
    Aio(AioArgs),
}

#[derive(Debug, Args)]
pub struct AioArgs {
    /// Discipline: shared, segments[:N], innodb[:without=S+S] or sync.
    #[arg(long, default_value = "shared")]
    pub model: tcpwise_aio::Model,
    /// Closed-loop clients (transactions in progress at once).
    #[arg(short, long, default_value_t = 64)]
    pub clients: u32,
    /// I/O threads (segments: rings; shared: workers beside the reaper; sync: threads).
    #[arg(long, default_value_t = 4)]
    pub threads: u32,
    /// How long transactions start.
    #[arg(short = 't', long, default_value = "5s")]
    pub time: Dur,
    /// Key distribution: uniform or zipf:S (sysbench's skew: zipf:0.99).
    #[arg(long, default_value = "uniform", value_name = "KEYS")]
    pub skew: tcpwise_aio::Keys,
    /// Data file (created once if missing; must be on a filesystem that allows O_DIRECT).
    #[arg(long, value_name = "PATH")]
    pub file: Option<std::path::PathBuf>,
    /// Data file size (a multiple of 16 KiB).
    #[arg(long, default_value = "1GiB")]
    pub size: Bytes,
    /// Seed of the key stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON ({"summary": ...}).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Dispatch model: shared, segments[:SLOTS], tokio or io-uring.
    #[arg(long, default_value = "shared")]
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
    #[arg(short = 't', long, default_value = "5s")]
    pub time: Dur,
    /// Warm-up before measuring.
    #[arg(long, default_value = "1s")]
    pub warmup: Dur,
    /// Server work of an ordinary request (50us, 1ms; at most 1s).
    #[arg(long, alias = "work-us", default_value = "50us", value_name = "TIME")]
    pub work: Dur,
    /// Fraction of long requests (1%, 0.01).
    #[arg(long, default_value = "0.01")]
    pub long_fraction: Fraction,
    /// Server work of a long request (at most 1s).
    #[arg(long, alias = "long-us", default_value = "5ms", value_name = "TIME")]
    pub long_work: Dur,
    /// Reply size (512, 10KB; 4 B to 1 MiB).
    #[arg(long, default_value = "512", value_name = "SIZE")]
    pub reply_bytes: Bytes,
    /// Seed of the request stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: DispatchCommand) -> Result<i32> {
    match cmd {
        DispatchCommand::Server(a) => server(a),
        DispatchCommand::Load(a) => load(a),
        DispatchCommand::Aio(a) => {
            let json = a.json;
            aio(a).inspect_err(|e| {
                if json {
                    crate::print_json_error(e);
                }
            })
        }
    }
}

fn aio(a: AioArgs) -> Result<i32> {
    let opts = tcpwise_aio::Options {
        model: a.model,
        clients: a.clients,
        threads: a.threads,
        duration: a.time.std(),
        keys: a.skew,
        seed: a.seed,
    };
    opts.validate()?;
    let say = |s: String| eprintln!("tcpwise dispatch aio: {s}");
    let file = tcpwise_aio::DataFile::open_for_run(a.file, a.size.0, &say)?;
    let r = tcpwise_aio::run(&opts, &file)?;
    if a.json {
        println!("{}", crate::versioned(serde_json::json!({ "summary": r })));
    } else {
        println!("{r}");
    }
    Ok(0)
}

fn server(a: ServerArgs) -> Result<i32> {
    let stop = crate::shutdown_on_signals()?;
    let opts = ServerOptions {
        bind: a.bind,
        model: a.model,
        workers: usize::from(a.workers),
    };
    tcpwise_dispatch::probe(a.model)?;
    let name = a.model.name();
    let stats = tcpwise_dispatch::server::serve(&opts, stop, |addr| {
        eprintln!(
            "tcpwise dispatch: {name} model, {} workers, listening on {addr}",
            a.workers
        )
    })
    .map_err(|e| anyhow::Error::new(e).context(format!("cannot serve on {}", a.bind)))?;
    println!(
        "{}",
        serde_json::json!({ "model": name, "per_worker": stats.per_worker })
    );
    Ok(0)
}

/// Nothing was answered: the report still prints (zero replies is a result).
#[derive(Debug, thiserror::Error)]
#[error("no request was answered within -t {0} (is a tcpwise dispatch server listening at {1}?)")]
struct NoReplies(Dur, SocketAddr);

fn load(a: LoadArgs) -> Result<i32> {
    let json = a.json;
    load_run(a).inspect_err(|e| {
        if json && !e.is::<NoReplies>() {
            crate::print_json_error(e);
        }
    })
}

fn load_run(a: LoadArgs) -> Result<i32> {
    let opts = LoadOptions {
        target: a.target,
        clients: a.clients as usize,
        duration: a.time.std(),
        warmup: a.warmup.std(),
        workload: Workload {
            base_us: (a.work.0 / 1000).min(u64::from(u32::MAX)) as u32,
            long_fraction: a.long_fraction.0,
            long_us: (a.long_work.0 / 1000).min(u64::from(u32::MAX)) as u32,
            reply_bytes: a.reply_bytes.0.min(u64::from(u32::MAX)) as u32,
        },
        seed: a.seed,
    };
    opts.validate()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let r = rt.block_on(tcpwise_dispatch::load::run(&opts))?;
    let none = (r.requests == 0).then_some(NoReplies(a.time, a.target));
    if a.json {
        let mut v = serde_json::to_value(&r)?;
        if let Some(e) = &none {
            v["error"] = serde_json::json!({ "message": e.to_string(), "exit_code": 1 });
        }
        println!("{}", crate::versioned(v));
    } else {
        println!("{r}");
    }
    match none {
        Some(e) => Err(e.into()),
        None => Ok(0),
    }
}
