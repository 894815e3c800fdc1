//! `tcpwise lab`: flags in, `tcpwise_lab` runs the experiments in-process.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
pub use tcpwise_lab::HELP as LAB_HELP;
use tcpwise_lab::progress::Bars;
use tcpwise_lab::{LabError, LabOptions};
use tcpwise_units::{Dur, Rate};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct LabArgs {
    #[command(subcommand)]
    pub sub: Option<LabSub>,
    /// Experiments to run (default: all): buffers, idle-selection, read-slow-start, completion,
    /// responsiveness, cold-start, head-of-line, sharing. Idle-selection, read-slow-start and
    /// head-of-line run at once; buffers, completion, responsiveness, cold-start and sharing
    /// alone, after.
    #[arg(value_name = "EXPERIMENT")]
    pub experiments: Vec<String>,
    /// A short run: --budget 5m, without completion, head-of-line and sharing (their decisions
    /// take longer) unless named, the cheapest decisions first; a part that does not fit says
    /// how many more rounds it needs.
    #[arg(long, conflicts_with = "budget")]
    pub quick: bool,
    /// Time for the whole run, shared among the experiments, each running rounds until decided
    /// or its share ends [default: 14m, the run in 15 minutes on 2 cores].
    #[arg(long, value_name = "DURATION", conflicts_with = "runs")]
    pub budget: Option<Dur>,
    /// Directory for results.json and report.md.
    #[arg(long, default_value = "lab-results", value_name = "DIR")]
    pub out: PathBuf,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Fixed rounds (repetitions per arm): no stopping when decided, no budget.
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub runs: Option<usize>,
    /// Override every experiment's RTT.
    #[arg(long, value_name = "TIME")]
    pub rtt: Option<Dur>,
    /// Override every experiment's rate.
    #[arg(long, value_name = "RATE")]
    pub rate: Option<Rate>,
    /// Cellular traces (Mahimahi's format) for responsiveness's LTE path
    /// [default: ../shared/traces, left out where absent].
    #[arg(long, value_name = "DIR")]
    pub traces: Option<PathBuf>,
    /// Link logs and packet captures of every testbed, one numbered
    /// subdirectory each (captures of a full lab run take gigabytes).
    #[command(flatten)]
    pub record: tcpwise_emu::record::RecordArgs,
}

#[derive(Debug, clap::Subcommand)]
pub enum LabSub {
    /// Rebuild DIR/report.md and DIR/index.html from DIR/results.json alone.
    Report {
        /// A lab run's output directory.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Run a matrix of paths x workloads x repetitions as cells in parallel testbeds.
    #[command(after_help = tcpwise_lab::sweep::flags::SWEEP_HELP)]
    Sweep(tcpwise_lab::sweep::flags::SweepArgs),
    /// Join `lab sweep` directories (shards) of one matrix into one report.
    Merge(tcpwise_lab::sweep::flags::MergeArgs),
}

fn at_least_one(s: &str) -> Result<usize, crate::Usage> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(crate::Usage(format!("'{s}': --runs must be at least 1"))),
    }
}

pub fn run(a: LabArgs) -> Result<i32> {
    // Both signals cancel; the exit status says which (130 or 143).
    let cancel = Arc::new(AtomicBool::new(false));
    let term = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, term.clone());
    let signalled = || 130 + 13 * i32::from(term.load(Ordering::Relaxed));
    match &a.sub {
        Some(LabSub::Report { dir }) => {
            tcpwise_lab::rebuild_report(dir)?;
            println!("report: {0}/report.md, {0}/index.html", dir.display());
            return Ok(0);
        }
        Some(LabSub::Merge(m)) => {
            let merged = tcpwise_lab::sweep::command::merge(m)?;
            println!("{}", merged.merged_line(&m.out));
            return Ok(merged.merge_exit_code());
        }
        Some(LabSub::Sweep(s)) => {
            let exe = std::env::current_exe()?;
            let done = tcpwise_lab::sweep::command::sweep(s, exe, cancel.clone())?;
            println!("{}", done.line(&s.out));
            return Ok(done.exit_code(signalled()));
        }
        None => {}
    }
    let opts = LabOptions {
        out: a.out.clone(),
        quick: a.quick,
        seed: a.seed,
        runs: a.runs,
        rtt: a.rtt.map(|d| d.0),
        rate: a.rate.map(|r| r.0),
        record: a.record.options(),
        cancel,
        traces: a.traces.clone(),
        // The edge reads the environment; the library takes it in code.
        require_io_uring: std::env::var_os("TCPWISE_REQUIRE_IO_URING").is_some(),
        slots: Some(tcpwise_lab::sweep::slots::Slots::for_this_machine()),
        budget: tcpwise_lab::budget::of_flags(a.budget.map(|d| d.0), a.quick, a.runs),
        deadline: None,
        extras_until: None,
        first: None,
    };
    // Bad requests are refused before anything is set up or written.
    let plan = tcpwise_lab::plan(&opts, &a.experiments)?;
    eprintln!("{}", plan.start_text(&opts));
    let progress = Bars::new();
    let result = plan.run(&opts, &progress);
    progress.clear();
    match result {
        Ok(done) => {
            // The verdicts and the tally; every named figure is in
            // results.json's summaries.
            print!("{}", tcpwise_lab::report::Glance::of_results(&done).text());
            println!("report: {0}/report.md, {0}/results.json", a.out.display());
            Ok(0)
        }
        // A step that failed after the signal was interrupted, not broken.
        Err(_) if opts.cancel.load(Ordering::Relaxed) => {
            eprintln!("tcpwise: interrupted; {}", tcpwise_lab::kept(&a.out));
            Ok(signalled())
        }
        Err(e @ LabError::Usage(_)) => Err(e.into()),
        Err(e) => {
            let kept = format!("the lab stopped; {}", tcpwise_lab::kept(&a.out));
            Err(anyhow::Error::new(e).context(kept))
        }
    }
}
