//! `tcpwise lab`.

use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tcpwise_lab::{LabError, LabOptions};
use tcpwise_link::Nanos;
use tcpwise_link::units::{parse_duration, parse_rate};

#[derive(Debug, Args)]
pub struct LabArgs {
    /// Experiments to run (default: all): buffers, idle-selection, read-slow-start.
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
    #[arg(long, value_name = "N")]
    pub runs: Option<usize>,
    /// Override every experiment's RTT.
    #[arg(long, value_parser = |s: &str| parse_duration(s).map_err(|e| e.to_string()), value_name = "TIME")]
    pub rtt: Option<Nanos>,
    /// Override every experiment's rate.
    #[arg(long, value_parser = |s: &str| parse_rate(s).map_err(|e| e.to_string()), value_name = "RATE")]
    pub rate: Option<u64>,
}

pub fn run(a: LabArgs) -> i32 {
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    if let Err(e) = tcpwise_emu::testbed::check_privileges() {
        eprintln!("tcpwise: error: {e}");
        return crate::exit::PRIVILEGES;
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("tcpwise: error: cannot find my own binary: {e}");
            return crate::exit::FAILURE;
        }
    };
    if a.runs == Some(0) {
        eprintln!("tcpwise: error: --runs must be at least 1");
        return crate::exit::USAGE;
    }
    let opts = LabOptions {
        out: a.out.clone(),
        quick: a.quick,
        seed: a.seed,
        runs: a.runs,
        rtt: a.rtt,
        rate: a.rate,
        exe,
        cancel,
    };
    let start = std::time::Instant::now();
    let progress = |s: &str| eprintln!("[{:6.1} s] lab: {s}", start.elapsed().as_secs_f64());
    match tcpwise_lab::run(&opts, &a.experiments, &progress) {
        Ok(done) => {
            for e in &done {
                println!("{}:", e.name);
                for (k, v) in &e.summary {
                    match v.as_f64() {
                        Some(f) => println!("  {k:<32} {f:10.2}"),
                        None => println!("  {k:<32} {v}"),
                    }
                }
            }
            println!(
                "report: {}/report.md, {}/results.json",
                a.out.display(),
                a.out.display()
            );
            0
        }
        // A Ctrl-C also reaches our children (same process group), so a
        // step that failed after the signal was interrupted, not broken.
        Err(_) if opts.cancel.load(std::sync::atomic::Ordering::Relaxed) => {
            eprintln!(
                "tcpwise: interrupted; finished experiments are in {}",
                a.out.display()
            );
            130
        }
        Err(LabError::Interrupted) => {
            eprintln!(
                "tcpwise: interrupted; finished experiments are in {}",
                a.out.display()
            );
            130
        }
        Err(e) => {
            eprintln!(
                "tcpwise: error: {e} (finished experiments are in {})",
                a.out.display()
            );
            match e {
                LabError::Step(_) => crate::exit::FAILURE,
                _ => crate::exit::EMULATOR,
            }
        }
    }
}
