//! # tcpwise-lab: the field reports' experiments, reproduced on emulated links
//!
//! Each experiment is one folder implementing [`stages::Stages`] (plan,
//! measure, analyse); adding one is the folder and a line in [`all`]. The
//! lab runs them on testbeds from `tcpwise-emu` (real kernel TCP on both
//! ends) and drives the libraries in-process: servers (`tcpwise-perf`,
//! `tcpwise-http`, `tcpwise-dispatch`) on threads inside the server
//! namespace, clients on threads inside the client namespace. The
//! processes it starts: cold-start's peers (`curl`, `openssl s_client`)
//! and `ip` inside its namespaces, and [`sweep`]'s cells, `tcpwise emu
//! pair` processes so that a killed sweep loses only the cells in
//! flight. Each experiment runs rounds until its criterion is decided
//! ([`sequential`]) within its share of the budget ([`budget`]);
//! `results.json` and `report.md` are rewritten after every experiment,
//! so an interrupted run keeps what it measured. Every path used reports
//! the emulator's own error.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod budget;
pub mod common;
pub mod experiments;
pub mod first;

pub use experiments::{
    buffers, cold_start, completion, head_of_line, idle_selection, read_slow_start, responsiveness,
    sharing,
};
pub mod help;
pub mod html;
pub mod progress;
pub mod report;
pub mod section;
pub mod sequential;
pub mod stages;
pub mod sweep;
pub mod together;
pub mod verdict;

use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tcpwise_link::Nanos;

/// What went wrong; the lab stops and keeps what it had. The cause is
/// kept as the source (print with `{:#}`).
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The emulator failed.
    #[error(transparent)]
    Emu(#[from] tcpwise_emu::EmuError),
    /// A `tcpwise perf` transfer failed.
    #[error("{what}")]
    Perf {
        /// Which step.
        what: String,
        /// Why.
        #[source]
        source: tcpwise_perf::PerfError,
    },
    /// An HTTP request failed.
    #[error("{what}")]
    Http {
        /// Which step.
        what: String,
        /// Why.
        #[source]
        source: tcpwise_client::HttpError,
    },
    /// A responsiveness test failed.
    #[error("{what}")]
    Rpm {
        /// Which step.
        what: String,
        /// Why.
        #[source]
        source: Box<tcpwise_rpm::RpmError>,
    },
    /// The dispatch load failed.
    #[error("{what}")]
    Load {
        /// Which step.
        what: String,
        /// Why.
        #[source]
        source: tcpwise_dispatch::load::LoadError,
    },
    /// The file-I/O workload failed.
    #[error("{what}")]
    Aio {
        /// Which step.
        what: String,
        /// Why.
        #[source]
        source: tcpwise_aio::AioError,
    },
    /// A server inside the testbed failed.
    #[error("the {what} server failed")]
    Server {
        /// Which server.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A step produced too little to report (too few trials).
    #[error("{0}")]
    TooFew(String),
    /// The request makes no sense (unknown experiment, too few runs).
    #[error("{0}")]
    Usage(String),
    /// Ctrl-C or SIGTERM.
    #[error("interrupted")]
    Interrupted,
    /// Writing the report failed.
    #[error("cannot write the report")]
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
    /// `--log DIR` / `--pcap DIR`: each testbed records into its own
    /// subdirectory (`NNN-rttXms-Ymbit`).
    pub record: tcpwise_emu::record::RecordOptions,
    /// Set by a signal handler.
    pub cancel: Arc<AtomicBool>,
    /// Where the cellular traces are (`--traces`; `None`: look in
    /// `../shared/traces` and leave the cellular path out if they are not
    /// there).
    pub traces: Option<PathBuf>,
    /// Fail, rather than leave out, the io_uring rows where io_uring is
    /// not there (CI sets it where the kernel has io_uring).
    pub require_io_uring: bool,
    /// Testbeds at once: each takes a slot before it starts (`None`: no
    /// limit, the unit tests' plans).
    pub slots: Option<Arc<sweep::slots::Slots>>,
    /// `--budget`: the whole run's time (`None`: fixed rounds, `--runs`
    /// or each experiment's own).
    pub budget: Option<std::time::Duration>,
    /// This experiment's share of the budget ends here: no round starts
    /// that would end after it (set by [`LabPlan::run`] per phase).
    pub deadline: Option<std::time::Instant>,
    /// Its descriptive extras end here when the phases after it would
    /// otherwise get less than their decisions need ([`budget::Shares`]):
    /// then time its decision saves goes to them, not to its extras.
    pub extras_until: Option<std::time::Instant>,
    /// A field report's key to the gate the other experiments of its
    /// phase wait at ([`first`]); `None` outside that phase and for the
    /// others.
    pub first: Option<Arc<first::Key>>,
}

impl LabOptions {
    /// Options for the unit tests of a plan: nothing is written or run.
    #[cfg(test)]
    pub(crate) fn for_tests(quick: bool, runs: Option<usize>) -> LabOptions {
        LabOptions {
            out: "unused".into(),
            quick,
            seed: 1,
            runs,
            rtt: None,
            rate: None,
            record: Default::default(),
            cancel: Default::default(),
            traces: None,
            require_io_uring: false,
            slots: None,
            budget: None,
            deadline: None,
            extras_until: None,
            first: None,
        }
    }

    /// A field report says its decision's testbeds are up: the other
    /// experiments of its phase may ask for slots now ([`first`]).
    pub fn decision_beds_up(&self) {
        if let Some(k) = &self.first {
            k.turn();
        }
    }

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
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PathError {
    /// The path.
    pub path: String,
    /// Smallest RTT TCP measured minus the configured RTT, ms.
    pub rtt_error_ms: Option<f64>,
    /// Forwarder lateness up (p50, p99, max), µs.
    pub up_lateness_us: (f64, f64, f64),
    /// Forwarder lateness down (p50, p99, max), µs.
    pub down_lateness_us: (f64, f64, f64),
    /// The path's configured RTT, ms (0 in results written before it was
    /// kept).
    #[serde(default)]
    pub rtt_ms: f64,
    /// The TUN offload mode the forwarders ran ("tso+uso", "tso", "off";
    /// empty in results written before offloads).
    #[serde(default)]
    pub offload: String,
    /// Forwarder threads the path ran: 1 for both directions, or 2 (0 in
    /// results written before a thread could carry both).
    #[serde(default)]
    pub threads: u8,
}

impl PathError {
    /// Whether the forwarders' p99 lateness exceeds 1 % of the RTT: late
    /// enough to move a figure measured on the path by about a percent.
    pub fn late(&self) -> bool {
        self.rtt_ms > 0.0 && self.up_lateness_us.1.max(self.down_lateness_us.1) > self.rtt_ms * 10.0
    }
}

/// The field report's figure beside ours, and whether its claim held.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Headline {
    /// What the field report measured (`seed` in `results.json`, as
    /// written before the glossary named field reports).
    #[serde(rename = "seed")]
    pub field_report: String,
    /// What this run measured.
    pub ours: String,
    /// Whether the field report's claim held here, by the experiment's criterion
    /// (absent in results written before verdicts).
    #[serde(default)]
    pub verdict: Option<verdict::Verdict>,
    /// A field report decided under more than one condition (read slow
    /// start: under the report's cause, and on Linux): a row each in the
    /// first table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// One condition's row of a field report in the first table.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Condition {
    /// The condition, in words ("on Linux").
    pub name: String,
    /// What this run measured under it.
    pub measured: String,
    /// Its part's decision in a word.
    pub verdict: String,
}

/// What an experiment's renderer makes of its typed results: its
/// section of the report, its plots and its line of the first table.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The section of `report.md` (and, rendered, of `index.html`).
    pub markdown: String,
    /// Plots (SVG).
    pub plots: Vec<String>,
    /// The first table's line.
    pub headline: Headline,
}

/// The last stage of an experiment (plan → measure → analysis → render):
/// typed results in, the report's parts out, no I/O.
pub trait Render {
    /// The section, plots and headline.
    fn render(&self) -> Rendered;
}

/// One named figure of `results.json`'s `summary`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Figure {
    /// A measurement.
    Num(f64),
    /// A count.
    Count(u64),
    /// A verdict.
    Flag(bool),
}

impl From<f64> for Figure {
    fn from(v: f64) -> Figure {
        Figure::Num(v)
    }
}
impl From<u64> for Figure {
    fn from(v: u64) -> Figure {
        Figure::Count(v)
    }
}
impl From<bool> for Figure {
    fn from(v: bool) -> Figure {
        Figure::Flag(v)
    }
}

impl Figure {
    /// As a number (flags as 0/1), for plots.
    pub fn as_f64(&self) -> f64 {
        match *self {
            Figure::Num(v) => v,
            Figure::Count(v) => v as f64,
            Figure::Flag(b) => f64::from(u8::from(b)),
        }
    }
}

// Read back as written: a JSON integer is a count, any other number a
// measurement (serde_json writes every f64 with a fraction or an
// exponent), `null` a measurement that was not a number (JSON has no NaN).
impl<'de> serde::Deserialize<'de> for Figure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Figure, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::Bool(b) => Ok(Figure::Flag(b)),
            serde_json::Value::Number(n) if n.is_u64() => {
                Ok(Figure::Count(n.as_u64().unwrap_or(0)))
            }
            serde_json::Value::Number(n) => Ok(Figure::Num(n.as_f64().unwrap_or(f64::NAN))),
            serde_json::Value::Null => Ok(Figure::Num(f64::NAN)),
            other => Err(serde::de::Error::custom(format!("not a figure: {other}"))),
        }
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // A figure that did not run says so in words (stdout, the
            // page's table), never "NaN"; results.json keeps it null.
            Figure::Num(v) if !v.is_finite() => f.write_str("not measured"),
            Figure::Num(v) => write!(f, "{v:.2}"),
            Figure::Count(v) => write!(f, "{v}"),
            Figure::Flag(b) => write!(f, "{b}"),
        }
    }
}

/// Named figures, in name order (the keys scripts read from `results.json`).
pub type Summary = std::collections::BTreeMap<String, Figure>;

/// One experiment's results.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentResult {
    /// Name (`buffers`, `idle-selection`, ...).
    pub name: String,
    /// Named figures.
    pub summary: Summary,
    /// Everything measured, as its experiment's `Details` serialize.
    pub details: serde_json::Value,
    /// The emulator's error on each path used.
    pub paths: Vec<PathError>,
    /// One line each, for the report's first table: what the field report reported
    /// and what this run measured.
    pub headline: Headline,
    /// The experiment's section of report.md.
    pub markdown: String,
    /// Its plots (SVG), drawn by the experiment itself.
    pub plots: Vec<String>,
    /// The sequential decision: each part's effect and interval, the
    /// rounds, the time and why it stopped (`None`: fixed repetitions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<sequential::Record>,
}

impl ExperimentResult {
    /// An experiment's result: its figures, measurements and paths, and
    /// what its renderer made of them.
    pub fn of(
        name: &str,
        summary: Summary,
        details: serde_json::Value,
        paths: Vec<PathError>,
        r: Rendered,
    ) -> ExperimentResult {
        ExperimentResult {
            name: name.into(),
            summary,
            details,
            paths,
            headline: r.headline,
            markdown: r.markdown,
            plots: r.plots,
            decision: None,
        }
    }

    /// The same, with the sequential decision it was made from.
    pub fn decided(self, record: sequential::Record) -> ExperimentResult {
        ExperimentResult {
            decision: Some(record),
            ..self
        }
    }
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
    /// Where step `id` stands now, in words (a step whose length is not
    /// known: rounds until decided).
    fn note(&self, _id: usize, _msg: &str) {}
}

/// An experiment.
pub trait Experiment: Sync {
    /// Its name on the command line.
    fn name(&self) -> &'static str;
    /// Refuses options it cannot run with, before anything is set up.
    fn validate(&self, _opts: &LabOptions) -> Result<(), LabError> {
        Ok(())
    }
    /// Whether it needs the machine to itself: its figures move when
    /// other testbeds share the cores (a saturating load, or latency under
    /// load). The others run at once, their testbeds within the slots'
    /// limit; these run after them, one at a time.
    fn alone(&self) -> bool {
        false
    }
    /// The parts of its criterion, fixed before the run, when it runs in
    /// rounds until they are decided ([`sequential`]); empty for an
    /// experiment that still runs fixed repetitions.
    fn criterion(&self) -> Vec<sequential::PartSpec> {
        Vec::new()
    }
    /// Its claim on a `--budget`: the seconds its decisive comparison
    /// plans for on this machine (its least rounds at their measured
    /// length, then its descriptive extras), and the seconds of set-up
    /// and one round, below which it cannot run at all.
    fn cost(&self, opts: &LabOptions) -> Cost;
    /// Runs it, reporting its steps to `progress`.
    fn run(&self, opts: &LabOptions, progress: &dyn Progress)
    -> Result<ExperimentResult, LabError>;
    /// Its analysis and render replayed on a recorded result (its
    /// entry of `results.json`: `details`, `paths`, `decision`), planned
    /// with `opts`: what it would have reported (no I/O).
    fn replay(
        &self,
        opts: &LabOptions,
        recorded: &serde_json::Value,
    ) -> Result<stages::Analysed, LabError>;
}

/// What an experiment asks of a budget, seconds on this 2-core machine
/// (measured: each experiment's page in `docs/` gives the run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Its decisive comparison: set-up and the least rounds a decision
    /// takes.
    pub need: f64,
    /// That and its descriptive extras: what a full share holds.
    pub planned: f64,
    /// Set-up and one round: a budget without this for every phase is
    /// refused.
    pub first_round: f64,
}

/// Every experiment, in report order.
pub fn all() -> Vec<Box<dyn Experiment>> {
    vec![
        Box::new(buffers::Buffers),
        Box::new(idle_selection::IdleSelection),
        Box::new(read_slow_start::ReadSlowStart),
        Box::new(completion::Completion),
        Box::new(responsiveness::Responsiveness),
        Box::new(cold_start::ColdStart),
        Box::new(head_of_line::HeadOfLine),
        Box::new(sharing::Sharing { full: false }),
    ]
}

/// An experiment named on the command line: as in [`all`], except that
/// `sharing` named runs every case (its deep-buffer and RTT trials take
/// minutes, so a whole run leaves them out).
fn named(name: &str) -> Option<Box<dyn Experiment>> {
    if name == "sharing" {
        return Some(Box::new(sharing::Sharing { full: true }));
    }
    all().into_iter().find(|e| e.name() == name)
}

/// What `--quick` leaves out unless named: experiments whose decision
/// does not fit its 5 minutes beside the others here (completion's takes
/// about 6 min, head-of-line's about 7, sharing's 2; docs/lab.md has the
/// runs). Their one round each would take the time the others decide in.
pub const NOT_QUICK: &[&str] = &["completion", "head-of-line", "sharing"];

/// The experiments `names` asks for (all when empty; with `--quick`, all
/// but [`NOT_QUICK`], the cheapest decisions first), checked against
/// `opts` before anything is set up.
pub fn select(opts: &LabOptions, names: &[String]) -> Result<Vec<Box<dyn Experiment>>, LabError> {
    let chosen: Vec<Box<dyn Experiment>> = if names.is_empty() && opts.quick {
        let mut v: Vec<_> = all()
            .into_iter()
            .filter(|e| !NOT_QUICK.contains(&e.name()))
            .collect();
        // A short budget starves the phases that come last: the cheap
        // decisions go first, so they are the ones that end.
        v.sort_by(|a, b| {
            (a.alone().cmp(&b.alone())).then(a.cost(opts).need.total_cmp(&b.cost(opts).need))
        });
        v
    } else if names.is_empty() {
        all()
    } else {
        let mut v = Vec::new();
        for n in names {
            match named(n) {
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
        e.validate(opts).map_err(|m| match m {
            LabError::Usage(m) => LabError::Usage(format!("{}: {m}", e.name())),
            other => other,
        })?;
    }
    Ok(chosen)
}

/// Makes the output directory and checks it can be written, so a bad
/// `--out` is refused as bad input before any testbed is set up.
pub fn prepare_out(opts: &LabOptions) -> Result<(), LabError> {
    let probe = opts.out.join(".tcpwise-write-test");
    std::fs::create_dir_all(&opts.out)
        .and_then(|()| std::fs::write(&probe, b""))
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| {
            LabError::Usage(format!(
                "--out {}: cannot write results there ({e})",
                opts.out.display()
            ))
        })
}

pub use help::HELP;

/// Writes `report.md` and `index.html` from the entries.
fn write_pages(
    out: &std::path::Path,
    header: &str,
    entries: &[report::Entry],
) -> std::io::Result<()> {
    report::write_md(out, header, entries)?;
    html::write(out, entries, header)
}

/// `tcpwise lab report DIR`: rebuilds `DIR/report.md` and `DIR/index.html`
/// from `DIR/results.json` alone (the same bytes the run wrote).
pub fn rebuild_report(dir: &std::path::Path) -> Result<(), LabError> {
    let saved = report::Saved::load(dir)?;
    let header = saved.header.clone();
    write_pages(dir, &header, &saved.entries()?)?;
    Ok(())
}

/// A lab run that was checked before anything is set up: the experiments
/// chosen and valid, the record directories writable, the privileges
/// there, the output directory made.
pub struct LabPlan {
    chosen: Vec<Box<dyn Experiment>>,
}

/// Checks a run of `names` (all when empty), in the order that refuses
/// bad input first: unknown experiments and bad flags (exit 2), an
/// unwritable `--log`/`--pcap` (2), missing privileges (3), an
/// unwritable `--out` (2).
pub fn plan(opts: &LabOptions, names: &[String]) -> Result<LabPlan, LabError> {
    let chosen = select(opts, names)?;
    if let Some(b) = opts.budget {
        budget::check(&budget::phases(&chosen, opts), b)?;
    }
    opts.record.probe()?;
    tcpwise_emu::testbed::check_privileges()?;
    prepare_out(opts)?;
    Ok(LabPlan { chosen })
}

impl LabPlan {
    /// The experiments in the order they start: those that share the
    /// machine first (at once), then those that need it alone.
    pub fn order(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let (alone, shared): (Vec<_>, Vec<_>) = self.chosen.iter().partition(|e| e.alone());
        let names = |v: Vec<&Box<dyn Experiment>>| v.iter().map(|e| e.name()).collect();
        (names(shared), names(alone))
    }

    /// The line that opens a run: its budget and each phase's share, or
    /// the fixed rounds.
    pub fn budget_line(&self, opts: &LabOptions) -> String {
        let Some(b) = opts.budget else {
            return format!(
                "no budget: {} fixed rounds an experiment (--runs), no stopping when decided",
                opts.runs.unwrap_or(0)
            );
        };
        let phases = budget::phases(&self.chosen, opts);
        let costs: Vec<Cost> = phases.iter().map(|p| p.cost).collect();
        // The shares as planned now: each phase spending its share.
        let mut left = b.as_secs_f64();
        let shares: Vec<String> = phases
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let s = budget::share(left, &costs[i..]).clamp(0.0, left);
                left -= s;
                format!(
                    "{} {}",
                    p.names.join(" + "),
                    budget::text(std::time::Duration::from_secs_f64(s))
                )
            })
            .collect();
        format!(
            "budget {}{} (build excluded; --budget to change), shared as {}; each experiment stops when its criterion is decided, time saved goes to the next",
            budget::text(b),
            if b == budget::DEFAULT {
                ", the default: what holds the run in 15 minutes on 2 cores"
            } else {
                ""
            },
            shares.join(", ")
        )
    }

    /// What a run says before it starts: its budget with each phase's
    /// share, then its schedule, a line each.
    pub fn start_text(&self, opts: &LabOptions) -> String {
        format!(
            "tcpwise lab: {}\ntcpwise lab: {}",
            self.budget_line(opts),
            self.schedule(opts)
        )
    }

    /// One line on how the run is scheduled, printed before it starts.
    pub fn schedule(&self, opts: &LabOptions) -> String {
        let (shared, alone) = self.order();
        let limit = opts.slots.as_ref().map_or("no limit".to_string(), |s| {
            let l = s.limit();
            format!(
                "at most {} testbeds and {} Mbit/s of link rate at once ({})",
                l.testbeds,
                l.rate_bps / 1_000_000,
                l.why
            )
        });
        let mut parts = Vec::new();
        if !shared.is_empty() {
            parts.push(format!("at once: {} ({limit})", shared.join(", ")));
        }
        if !alone.is_empty() {
            parts.push(format!("then alone: {}", alone.join(", ")));
        }
        let out: Vec<&str> = NOT_QUICK
            .iter()
            .copied()
            .filter(|n| opts.quick && !self.chosen.iter().any(|e| e.name() == *n))
            .collect();
        if !out.is_empty() {
            parts.push(format!(
                "--quick leaves out {} (their decisions take longer than its 5 minutes here: name them to run them, or run without --quick)",
                out.join(", ")
            ));
        }
        parts.join("; ")
    }

    /// Runs the experiments, writing the report after each: those that
    /// share the machine at once (each testbed within `opts.slots`), then
    /// each that needs it alone. The report keeps [`all`]'s order
    /// whichever finishes first. A failure stops the others and is what
    /// the run returns.
    pub fn run(
        self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<Vec<ExperimentResult>, LabError> {
        // An earlier run's pages would pass for this run's when it stops
        // before its first experiment ends: they go first.
        for f in ["results.json", "report.md", "index.html"] {
            let _ = std::fs::remove_file(opts.out.join(f));
        }
        let n = self.chosen.len();
        let done: std::sync::Mutex<Vec<Option<ExperimentResult>>> =
            std::sync::Mutex::new((0..n).map(|_| None).collect());
        // Each result is written as it ends, in report order.
        // The report keeps `all()`'s order, whatever order they ran in
        // (`--quick` runs the cheapest decisions first).
        let rank = |name: &str| all().iter().position(|e| e.name() == name);
        let mut by_report: Vec<usize> = (0..n).collect();
        by_report.sort_by_key(|&i| rank(self.chosen[i].name()));
        let mut slot = vec![0; n];
        for (k, &i) in by_report.iter().enumerate() {
            slot[i] = k;
        }
        let finished = |i: usize, r: ExperimentResult| -> Result<(), LabError> {
            let mut d = done.lock().unwrap_or_else(|p| p.into_inner());
            d[slot[i]] = Some(r);
            let sofar: Vec<ExperimentResult> = d.iter().flatten().cloned().collect();
            let header = report::write_json(opts, &sofar)?;
            let entries: Vec<report::Entry> = sofar.iter().map(Into::into).collect();
            write_pages(&opts.out, &header, &entries)?;
            Ok(())
        };
        let (shared, alone): (Vec<_>, Vec<_>) = self
            .chosen
            .iter()
            .enumerate()
            .partition(|(_, e)| !e.alone());
        // Each phase's share of the budget is set when it starts, from
        // what is left: time one phase saves goes to the next.
        let mut shares = budget::Shares::new(opts, &budget::phases(&self.chosen, opts));
        let (deadline, extras_until) = if shared.is_empty() {
            (None, None)
        } else {
            shares.next_deadline()
        };
        let phase = LabOptions {
            deadline,
            extras_until,
            ..opts.clone()
        };
        // Field reports first for the testbed slots ([`first`]).
        let is_report = |e: &dyn Experiment| report::FIELD_REPORTS.contains(&e.name());
        let gate = first::Gate::new(shared.iter().filter(|(_, e)| is_report(e.as_ref())).count());
        let parts = shared
            .into_iter()
            .map(|(i, e)| {
                let finished = &finished;
                let key = is_report(e.as_ref()).then(|| Arc::new(gate.key()));
                let gate = gate.clone();
                Box::new(move |o: &LabOptions| {
                    o.check()?;
                    let r = match key {
                        Some(k) => {
                            let mine = LabOptions {
                                first: Some(k.clone()),
                                ..o.clone()
                            };
                            let r = e.run(&mine, progress);
                            k.turn();
                            r
                        }
                        None => gate.wait(&o.cancel).and_then(|()| e.run(o, progress)),
                    };
                    finished(i, r?)
                }) as together::Part<'_, ()>
            })
            .collect();
        together::at_once(&phase, "lab", parts)?;
        for (i, e) in alone {
            opts.check()?;
            let (deadline, extras_until) = shares.next_deadline();
            let phase = LabOptions {
                deadline,
                extras_until,
                ..opts.clone()
            };
            finished(i, e.run(&phase, progress)?)?;
        }
        // A signal during the last experiments is an interruption even
        // when they finished: the run did not do all it was asked.
        opts.check()?;
        Ok(done
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .flatten()
            .collect())
    }
}

/// The report header's sentence on what ran at once (empty without
/// slots).
pub(crate) fn at_once_sentence(opts: &LabOptions) -> String {
    match &opts.slots {
        Some(s) => {
            let l = s.limit();
            format!(
                " Testbeds at once: at most {} within {} Mbit/s of link rate ({}), {} at most so far; {} run alone, after the others.",
                l.testbeds,
                l.rate_bps / 1_000_000,
                l.why,
                s.most(),
                all()
                    .iter()
                    .filter(|e| e.alone())
                    .map(|e| e.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        None => String::new(),
    }
}

/// What a stopped run left in `out`, in words: its finished experiments,
/// or that none finished.
pub fn kept(out: &std::path::Path) -> String {
    if out.join("results.json").is_file() {
        format!("finished experiments are in {}", out.display())
    } else {
        format!(
            "no experiment finished, so {} holds no results",
            out.display()
        )
    }
}

impl tcpwise_outcome::Classify for LabError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        use tcpwise_outcome::Class;
        Some(match self {
            LabError::Usage(_) => Class::Usage,
            LabError::Interrupted => Class::Interrupted(tcpwise_outcome::SIGINT),
            // Missing privileges and bad record flags stay what they are
            // (found before anything is set up); any other emulator
            // failure under an experiment is the emulator's.
            LabError::Emu(e) => match tcpwise_outcome::Classify::class(e) {
                Some(c @ (Class::Privileges | Class::Usage)) => c,
                _ => Class::Emulator,
            },
            LabError::Io(_) => Class::Emulator,
            _ => Class::Failed,
        })
    }
}

#[cfg(test)]
mod fixtures_tests;
#[cfg(test)]
mod schedule_tests;

#[cfg(test)]
mod figure_tests {
    use super::Figure;

    #[test]
    fn a_figure_that_did_not_run_reads_in_words() {
        assert_eq!(Figure::Num(f64::NAN).to_string(), "not measured");
        assert_eq!(Figure::Num(1.234).to_string(), "1.23");
    }
}
