//! `tcpwise lab`: flags in, `tcpwise_lab` runs the experiments in-process.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tcpwise_lab::progress::Bars;
use tcpwise_lab::{LabError, LabOptions};
use tcpwise_units::{Dur, Rate};

pub const LAB_HELP: &str = "\
Experiments (each a field report, reproduced with real kernel TCP on both ends):
  buffers          177 ms / 151 Mbit/s: 10 s download, static 278,775-byte SO_RCVBUF vs autotuned
                   (testbed ceilings tcp_rmem/tcp_wmem 32 MiB) vs autotuned with the kernel's ceilings
  idle-selection   250 ms / 8 Mbit/s: six objects, 1 s idle, a 25 KB object on the idle
                   connection each pool policy picks; server tcp_slow_start_after_idle=0 and =1;
                   the full run also sweeps 100 KB and 400 KB objects
  read-slow-start  A/B trial of read sizing over 20/50/100/200 ms paths, 2000 fresh connections
  completion       1 ms / 1 Gbit/s: closed-loop load, 4 to 1024 clients, against four dispatch
                   models of one server (shared epoll queue, fixed 64-slot segments, tokio,
                   io_uring); then the report's own workload, file I/O on io_uring (16 KiB
                   O_DIRECT read-modify-write, no fsync, 1 GiB file in /var/tmp/tcpwise):
                   shared completion queue vs fixed segments vs pread/pwrite, uniform and
                   Zipf 0.99 keys

--runs N sets runs per policy (idle-selection) or the total number of trials
(read-slow-start) or rounds (completion); --quick: 5 s downloads, 3 runs
per policy, 120 trials, 3 client counts of 2 s (file I/O: 1.5 s, one round).
Results go to DIR/results.json, DIR/report.md and DIR/index.html, rewritten
after every experiment. Progress bars on a terminal, plain lines otherwise.

Examples:
  tcpwise lab                               every experiment (about 19 min on 2 cores)
  tcpwise lab --quick --out /tmp/lab        the short run CI does (about 3 min)
  tcpwise lab idle-selection --rtt 100ms    one experiment on your own path

Exit codes: 0 done, 1 a step failed, 2 bad flags, 3 missing privileges,
4 emulator failure, 130 Ctrl-C / 143 SIGTERM (finished experiments are kept).";

#[derive(Debug, Args)]
pub struct LabArgs {
    /// Experiments to run (default: all): buffers, idle-selection, read-slow-start, completion.
    #[arg(value_name = "EXPERIMENT")]
    pub experiments: Vec<String>,
    /// Shorter runs, fewer repetitions.
    #[arg(long)]
    pub quick: bool,
    /// Directory for results.json and report.md.
    #[arg(long, default_value = "lab-results", value_name = "DIR")]
    pub out: PathBuf,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Repetitions per arm.
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub runs: Option<usize>,
    /// Override every experiment's RTT.
    #[arg(long, value_name = "TIME")]
    pub rtt: Option<Dur>,
    /// Override every experiment's rate.
    #[arg(long, value_name = "RATE")]
    pub rate: Option<Rate>,
    /// Link logs and packet captures of every testbed, one numbered
    /// subdirectory each (captures of a full lab run take gigabytes).
    #[command(flatten)]
    pub record: tcpwise_emu::record::RecordArgs,
}

fn at_least_one(s: &str) -> Result<usize, crate::Usage> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(crate::Usage(format!("'{s}': --runs must be at least 1"))),
    }
}

pub fn run(a: LabArgs) -> Result<i32> {
    let cancel = Arc::new(AtomicBool::new(false));
    // Both signals cancel; the exit status says which (130 or 143).
    let term = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, term.clone());
    let opts = LabOptions {
        out: a.out.clone(),
        quick: a.quick,
        seed: a.seed,
        runs: a.runs,
        rtt: a.rtt.map(|d| d.0),
        rate: a.rate.map(|r| r.0),
        record: a.record.options(),
        cancel,
    };
    // Bad requests are refused before anything is set up or written.
    tcpwise_lab::select(&opts, &a.experiments)?;
    if opts.record.any() {
        opts.record.open()?; // an unwritable DIR: one line, exit 2
        for d in [&opts.record.log_dir, &opts.record.pcap_dir]
            .into_iter()
            .flatten()
        {
            for f in ["up.log", "down.log", "up.pcap", "down.pcap"] {
                let _ = std::fs::remove_file(d.join(f)); // the probe's files
            }
        }
    }
    tcpwise_emu::testbed::check_privileges()?;
    tcpwise_lab::prepare_out(&opts)?;
    let progress = Bars::new();
    let result = tcpwise_lab::run(&opts, &a.experiments, &progress);
    progress.clear();
    let out = a.out.display();
    match result {
        Ok(done) => {
            for e in &done {
                println!("{}:", e.name);
                for (k, v) in &e.summary {
                    println!("  {k:<32} {v:>10}");
                }
            }
            println!("report: {out}/report.md, {out}/results.json");
            Ok(0)
        }
        // A step that failed after the signal was interrupted, not broken.
        Err(_) if opts.cancel.load(Ordering::Relaxed) => {
            eprintln!("tcpwise: interrupted; finished experiments are in {out}");
            Ok(if term.load(Ordering::Relaxed) {
                143
            } else {
                130
            })
        }
        Err(e @ LabError::Usage(_)) => Err(e.into()),
        Err(e) => {
            let kept = format!("the lab stopped; finished experiments are in {out}");
            Err(anyhow::Error::new(e).context(kept))
        }
    }
}
