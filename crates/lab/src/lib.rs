//! # tcpwise-lab: the seed experiments, reproduced on emulated links
//!
//! Each experiment is one module with one entry point ([`Experiment`]);
//! adding an experiment is adding a file and a line in [`all`]. The lab
//! runs them on testbeds from `tcpwise-emu` (real kernel TCP on both ends),
//! runs our own binary (`tcpwise perf`, `tcpwise serve`) as the servers
//! inside the server namespace, and writes `results.json` and `report.md`
//! after every experiment, so an interrupted run keeps what it measured.
//! Every path used reports the emulator's own error (forwarder lateness).

#![deny(missing_docs)]

pub mod buffers;
pub mod common;
pub mod completion;
pub mod html;
pub mod idle_selection;
pub mod read_slow_start;
pub mod report;

use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tcpwise_link::Nanos;

/// What went wrong; the lab stops and keeps what it had.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The emulator failed.
    #[error(transparent)]
    Emu(#[from] tcpwise_emu::EmuError),
    /// A step failed.
    #[error("{0}")]
    Step(String),
    /// The request makes no sense (unknown experiment, too few runs).
    #[error("{0}")]
    Usage(String),
    /// Ctrl-C or SIGTERM.
    #[error("interrupted")]
    Interrupted,
    /// Writing the report failed.
    #[error("cannot write the report: {0}")]
    Io(#[from] std::io::Error),
}

/// How the lab runs.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// Where results go.
    pub out: PathBuf,
    /// Shorter runs and fewer repetitions.
    pub quick: bool,
    /// Seed of every random choice.
    pub seed: u64,
    /// Repetitions per arm (default per experiment).
    pub runs: Option<usize>,
    /// Override the experiments' RTT.
    pub rtt: Option<Nanos>,
    /// Override the experiments' rate, bit/s.
    pub rate: Option<u64>,
    /// The tcpwise binary, run as the servers.
    pub exe: PathBuf,
    /// Set by a signal handler.
    pub cancel: Arc<AtomicBool>,
}

impl LabOptions {
    /// Fails with [`LabError::Interrupted`] once cancelled.
    pub fn check(&self) -> Result<(), LabError> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(LabError::Interrupted)
        } else {
            Ok(())
        }
    }
}

/// The emulator's own error on one path of an experiment.
#[derive(Debug, Clone, Serialize)]
pub struct PathError {
    /// The path.
    pub path: String,
    /// Smallest RTT TCP measured minus the configured RTT, ms.
    pub rtt_error_ms: Option<f64>,
    /// Forwarder lateness up (p50, p99, max), µs.
    pub up_lateness_us: (f64, f64, f64),
    /// Forwarder lateness down (p50, p99, max), µs.
    pub down_lateness_us: (f64, f64, f64),
}

/// The seed's figure beside ours.
#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    /// What the field report measured.
    pub seed: String,
    /// What this run measured.
    pub ours: String,
}

/// One experiment's results.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentResult {
    /// Name (`buffers`, `idle-selection`, ...).
    pub name: String,
    /// Named figures.
    pub summary: serde_json::Map<String, serde_json::Value>,
    /// Everything measured.
    pub details: serde_json::Value,
    /// The emulator's error on each path used.
    pub paths: Vec<PathError>,
    /// One line each, for the report's first table: what the seed reported
    /// and what this run measured.
    pub headline: Headline,
    /// The experiment's section of report.md.
    #[serde(skip)]
    pub markdown: String,
}

/// Where an experiment reports how far it got. The command line draws
/// progress bars on a terminal and prints plain lines otherwise; the lab
/// only says what it is doing and how many units (runs, trials, seconds)
/// are done. Steps of one experiment may run at once, on several threads.
pub trait Progress: Sync {
    /// A new step of `total` units (0: unknown), described by `msg`;
    /// returns its id for [`Progress::inc`].
    fn step(&self, msg: &str, total: u64) -> usize;
    /// `n` more units of step `id` done.
    fn inc(&self, id: usize, n: u64);
    /// Step `id` ended; `msg` says what it found.
    fn done(&self, id: usize, msg: &str);
}

/// An experiment.
pub trait Experiment {
    /// Its name on the command line.
    fn name(&self) -> &'static str;
    /// Refuses options it cannot run with, before anything is set up.
    fn validate(&self, _opts: &LabOptions) -> Result<(), String> {
        Ok(())
    }
    /// Runs it, reporting its steps to `progress`.
    fn run(&self, opts: &LabOptions, progress: &dyn Progress)
    -> Result<ExperimentResult, LabError>;
}

/// Every experiment, in report order.
pub fn all() -> Vec<Box<dyn Experiment>> {
    vec![
        Box::new(buffers::Buffers),
        Box::new(idle_selection::IdleSelection),
        Box::new(read_slow_start::ReadSlowStart),
        Box::new(completion::Completion),
    ]
}

/// The experiments `names` asks for (all when empty), checked against
/// `opts` before anything is set up.
pub fn select(opts: &LabOptions, names: &[String]) -> Result<Vec<Box<dyn Experiment>>, LabError> {
    let chosen: Vec<Box<dyn Experiment>> = if names.is_empty() {
        all()
    } else {
        let mut v = Vec::new();
        for n in names {
            match all().into_iter().find(|e| e.name() == n) {
                Some(e) => v.push(e),
                None => {
                    let known: Vec<&str> = all().iter().map(|e| e.name()).collect();
                    return Err(LabError::Usage(format!(
                        "unknown experiment '{n}': known are {}",
                        known.join(", ")
                    )));
                }
            }
        }
        v
    };
    for e in &chosen {
        e.validate(opts)
            .map_err(|m| LabError::Usage(format!("{}: {m}", e.name())))?;
    }
    Ok(chosen)
}

/// Runs `names` (all when empty), writing the report after each.
pub fn run(
    opts: &LabOptions,
    names: &[String],
    progress: &dyn Progress,
) -> Result<Vec<ExperimentResult>, LabError> {
    let chosen = select(opts, names)?;
    std::fs::create_dir_all(&opts.out)?;
    let mut done = Vec::new();
    for e in chosen {
        opts.check()?;
        let r = e.run(opts, progress)?;
        done.push(r);
        report::write(opts, &done)?;
    }
    Ok(done)
}
