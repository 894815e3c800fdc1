//! `tcpwise lab`.

use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use tcpwise_lab::{LabError, LabOptions, Progress};
use tcpwise_link::Nanos;
use tcpwise_link::units::{parse_duration, parse_rate};

pub const LAB_HELP: &str = "\
Experiments (each a field report, reproduced with real kernel TCP on both ends):
  buffers          177 ms / 151 Mbit/s: 10 s download, static 278,775-byte SO_RCVBUF vs autotuned
  idle-selection   250 ms / 8 Mbit/s: six objects, 1 s idle, a 25 KB object on the idle
                   connection each pool policy picks; server tcp_slow_start_after_idle=0 and =1;
                   the full run also sweeps 100 KB and 400 KB objects
  read-slow-start  A/B trial of read sizing over 20/50/100/200 ms paths, 2000 fresh connections
  completion       1 ms / 1 Gbit/s: closed-loop load, 4 to 1024 clients, against three dispatch
                   models of one server (shared epoll queue, fixed 64-slot segments, tokio)

--runs N sets runs per policy (idle-selection) or the total number of trials
(read-slow-start) or rounds (completion); --quick: 5 s downloads, 3 runs
per policy, 120 trials, 3 client counts of 2 s.
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
    // Both signals cancel; the exit status says which (130 or 143).
    let term = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, term.clone());
    let interrupted = move || {
        if term.load(std::sync::atomic::Ordering::Relaxed) {
            143
        } else {
            130
        }
    };
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
    // Bad requests are refused before anything is set up or written.
    if let Err(e) = tcpwise_lab::select(&opts, &a.experiments) {
        eprintln!("tcpwise: error: {e}");
        return crate::exit::USAGE;
    }
    if let Err(e) = tcpwise_emu::testbed::check_privileges() {
        eprintln!("tcpwise: error: {e}");
        return crate::exit::PRIVILEGES;
    }
    let progress = Bars::new();
    let result = tcpwise_lab::run(&opts, &a.experiments, &progress);
    progress.clear();
    match result {
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
            interrupted()
        }
        Err(LabError::Interrupted) => {
            eprintln!(
                "tcpwise: interrupted; finished experiments are in {}",
                a.out.display()
            );
            interrupted()
        }
        Err(e) => {
            eprintln!(
                "tcpwise: error: {e} (finished experiments are in {})",
                a.out.display()
            );
            match e {
                LabError::Step(_) => crate::exit::FAILURE,
                LabError::Usage(_) => crate::exit::USAGE,
                _ => crate::exit::EMULATOR,
            }
        }
    }
}

/// Progress bars on a terminal; on a pipe or in CI, one timestamped line
/// when a step starts, at each quarter of it, and when it ends.
struct Bars {
    start: Instant,
    multi: Option<MultiProgress>,
    steps: Mutex<Vec<Step>>,
}

struct Step {
    bar: ProgressBar,
    msg: String,
    total: u64,
    pos: u64,
}

impl Bars {
    fn new() -> Bars {
        let multi = std::io::stderr()
            .is_terminal()
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Bars {
            start: Instant::now(),
            multi,
            steps: Mutex::new(Vec::new()),
        }
    }

    fn line(&self, msg: &str) {
        let line = format!("[{:6.1} s] {msg}", self.start.elapsed().as_secs_f64());
        match &self.multi {
            Some(m) => {
                let _ = m.println(line);
            }
            None => eprintln!("{line}"),
        }
    }

    /// Removes the bars of steps that never ended (an error or Ctrl-C).
    fn clear(&self) {
        let steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        for s in steps.iter() {
            s.bar.finish_and_clear();
        }
    }
}

impl Progress for Bars {
    fn step(&self, msg: &str, total: u64) -> usize {
        let bar = match &self.multi {
            Some(m) => {
                let bar = m.add(if total == 0 {
                    ProgressBar::new_spinner()
                } else {
                    ProgressBar::new(total)
                });
                let template = if total == 0 {
                    "{spinner} {elapsed:>4} {msg}"
                } else {
                    "{spinner} {elapsed:>4} [{bar:24}] {pos}/{len} eta {eta:>4} {msg}"
                };
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_message(msg.to_string());
                bar.enable_steady_tick(Duration::from_millis(200));
                bar
            }
            None => {
                self.line(msg);
                ProgressBar::hidden()
            }
        };
        let mut steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        steps.push(Step {
            bar,
            msg: msg.to_string(),
            total,
            pos: 0,
        });
        steps.len() - 1
    }

    fn inc(&self, id: usize, n: u64) {
        let mut steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = steps.get_mut(id) else { return };
        s.bar.inc(n);
        let before = s.pos * 4 / s.total.max(1);
        s.pos += n;
        let after = s.pos * 4 / s.total.max(1);
        if self.multi.is_none() && s.total > 3 && after > before && s.pos < s.total {
            let line = format!("{}: {}/{}", s.msg, s.pos, s.total);
            drop(steps);
            self.line(&line);
        }
    }

    fn done(&self, id: usize, msg: &str) {
        let steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = steps.get(id) {
            s.bar.finish_and_clear();
        }
        drop(steps);
        self.line(msg);
    }
}
