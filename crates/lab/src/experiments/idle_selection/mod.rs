//! Firefox's experiment: six objects in parallel on six connections (one
//! of 2 MB), 1 s idle, then a 25 KB object on an idle connection chosen by
//! each pool policy; servers with `tcp_slow_start_after_idle=0`, then `=1`.
//! Beside the five HTTP/1.1 policies, an HTTP/2 row (the page and the
//! object on the origin's one h2c connection) and an HTTP/3 row (the same
//! on one QUIC connection, to `serve --tls --http3` on the same testbed).
//!
//! [`Plan`] → [`measure`] (the testbeds at once) → [`analysis`] →
//! [`render`].

pub mod analysis;
pub mod measure;
pub mod render;

pub use measure::{Details, SweepRun};

use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Render};
use tcpwise_pool::Policy;

/// The experiment.
pub struct IdleSelection;

/// What takes the 25 KB object: a pool policy among idle HTTP/1.1
/// connections, or HTTP/2's one connection per origin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Contender {
    /// An HTTP/1.1 pool policy.
    Pool(Policy),
    /// HTTP/2 (h2c, prior knowledge): one connection per origin.
    Http2,
    /// HTTP/3 (QUIC, `--http3-only`): one connection per origin.
    Http3,
}

impl Contender {
    /// Its name in the report, `results.json` and the runs' records.
    pub fn name(self) -> String {
        match self {
            Contender::Pool(p) => p.name().into(),
            Contender::Http2 => "http2".into(),
            Contender::Http3 => "http3".into(),
        }
    }

    /// Its key in `results.json`'s summary (`max-burst` is `max_burst`).
    pub fn key(self) -> String {
        self.name().replace('-', "_")
    }
}

pub(crate) fn pool(name: &str) -> Contender {
    Contender::Pool(name.parse().expect("a known policy"))
}

/// The five HTTP/1.1 pool policies, then HTTP/2 and HTTP/3 on the same
/// path.
pub fn contenders() -> Vec<Contender> {
    let mut v: Vec<Contender> = ["fifo", "lifo", "max-burst", "warmest", "kernel"]
        .into_iter()
        .map(pool)
        .collect();
    v.push(Contender::Http2);
    v.push(Contender::Http3);
    v
}

/// The policies of the full run's object-size sweep.
pub fn sweep_contenders() -> Vec<Contender> {
    ["fifo", "max-burst", "kernel"]
        .into_iter()
        .map(pool)
        .collect()
}

/// Object sizes of the full run's sweep (25 KB is the main table).
pub const SWEEP: [u64; 2] = [100_000, 400_000];

/// What a run does.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Runs per policy in the main tables.
    pub runs: usize,
    /// Runs per policy and size in the sweep (`None`: no sweep, `--quick`).
    pub sweep_runs: Option<usize>,
}

impl Plan {
    /// 10 runs per policy (3 with `--quick`, or `--runs`); the full run
    /// adds the size sweep with at most 5.
    pub fn new(opts: &LabOptions) -> Plan {
        Plan {
            runs: opts.runs.unwrap_or(if opts.quick { 3 } else { 10 }),
            sweep_runs: (!opts.quick).then(|| opts.runs.unwrap_or(5).min(5)),
        }
    }
}

impl Experiment for IdleSelection {
    fn name(&self) -> &'static str {
        "idle-selection"
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let plan = Plan::new(opts);
        let m = measure::measure(&plan, opts, progress)?;
        let a = analysis::analyse(&m);
        let r = render::Section {
            plan: &plan,
            measured: &m,
            analysis: &a,
        }
        .render();
        let mut paths: Vec<crate::PathError> = m.tables.iter().map(|t| t.path.clone()).collect();
        paths.extend(m.sweep.as_ref().map(|s| s.path.clone()));
        let details = crate::Details::IdleSelection(m.details());
        Ok(ExperimentResult::of(
            "idle-selection",
            a.summary,
            details,
            paths,
            r,
        ))
    }
}
