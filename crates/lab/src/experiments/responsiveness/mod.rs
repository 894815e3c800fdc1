//! The other half of the Windows field report: autotuned buffers reach line rate,
//! and big buffers cost latency under load. Measured as the field does
//! now, as responsiveness (round trips per minute under working
//! conditions, draft-ietf-ippm-responsiveness, Apple's networkQuality):
//! `tcpwise-rpm`'s test, in-process in the client namespace, against
//! `tcpwise serve --tls` in the server namespace, on emulated paths whose
//! queue is a bloated drop-tail (4 BDP), a BDP-sized drop-tail, CoDel or
//! FQ-CoDel, with the server's `TCP_NOTSENT_LOWAT` off or auto and its
//! congestion control CUBIC or BBR. Foreign probes (new connections) see
//! the network's queue; self probes (requests on a loaded connection)
//! see the network's queue of that flow plus the sender's own socket and
//! HTTP/2 buffers: the two figures beside each RPM say which queue holds
//! the latency.
//!
//! [`Plan`] → [`measure`] → [`analysis`] → [`render`].

pub mod analysis;
pub mod measure;
pub mod render;

pub use measure::{Details, Run};

use crate::stages::{Analysed, Stages};
use crate::{LabError, LabOptions, Progress, Render};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tcpwise_emu::path::PathSpec;
use tcpwise_tcp::Lowat;

/// The experiment.
pub struct Responsiveness;

/// One queue of a path: its name in the report and its `--queue`
/// spelling.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    /// Name in the report.
    pub label: &'static str,
    /// `--queue` as a user types it.
    pub spec: &'static str,
}

/// The queues every path is run with, in table order.
pub const QUEUES: [Queue; 4] = [
    Queue {
        label: "drop-tail 4 BDP (bloated)",
        spec: "droptail:limit=4bdp",
    },
    Queue {
        label: "drop-tail 1 BDP",
        spec: "droptail:limit=1bdp",
    },
    Queue {
        label: "CoDel",
        spec: "codel:limit=4bdp",
    },
    Queue {
        label: "FQ-CoDel",
        spec: "fq-codel:limit=4bdp",
    },
];

/// Index in [`QUEUES`] of the bloated drop-tail and of FQ-CoDel: the
/// verdict's two ends.
pub const BLOATED: usize = 0;
/// See [`BLOATED`].
pub const FQ_CODEL: usize = 3;

/// One server setting: `tcpwise serve --tls --notsent-lowat L -C CC`.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// The server's `TCP_NOTSENT_LOWAT` policy.
    pub lowat: Lowat,
    /// The server's congestion control.
    pub cc: &'static str,
}

impl Arm {
    /// `lowat off, cubic`.
    pub fn label(&self) -> String {
        format!("lowat {}, {}", self.lowat, self.cc)
    }
}

/// One emulated path.
#[derive(Debug, Clone)]
pub struct PathPlan {
    /// Its name in the report.
    pub name: String,
    /// The path without its queue (each queue is a testbed of its own).
    pub spec: PathSpec,
    /// Its record directory's stem.
    pub stem: String,
}

/// What a run does, decided before anything is set up.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The paths, the 20 Mbit/s one first (the verdict's).
    pub paths: Vec<PathPlan>,
    /// The queues run on every path.
    pub queues: Vec<Queue>,
    /// The server settings, each its own server in every testbed.
    pub arms: Vec<Arm>,
    /// Tests per cell (path, queue, arm), interleaved across arms.
    pub runs: usize,
    /// Each test's longest phase (the draft's 20 s).
    pub max_duration: Duration,
    /// What was left out and why (the cellular path without its trace, a
    /// congestion control the kernel does not have).
    pub left_out: Vec<String>,
}

/// Tests per cell of the extras, at most (`--runs` sets it).
pub const MIN_RUNS: usize = 3;

/// A test's longest loaded phase in a budget, s.
pub const TEST_SECS: u64 = 10;

/// The same in a share too small for a decision, s.
pub const TINY_TEST_SECS: u64 = 5;

/// Seconds a round takes with tests of `secs`: three tests, each with its
/// idle probes and the server's configuration.
pub fn round_secs(secs: u64) -> f64 {
    3.0 * (secs as f64 + 3.0)
}

/// Seconds a decision round of [`TINY_TEST_SECS`] tests takes as
/// measured (the default run of 3 Dec: 7 rounds in 2 min 14 s, where
/// [`round_secs`] plans 24 s).
pub const DECISION_ROUND_SECS: f64 = 20.0;

/// Seconds the decision needs, what the budget plans for: both testbeds,
/// the least rounds and one spare, of 5 s tests.
pub fn need() -> f64 {
    2.0 * SETUP_SECS + DECISION_ROUND_SECS * (min_rounds() + 1) as f64
}

/// Seconds the decision takes with [`TEST_SECS`] tests: a share this
/// long gets them.
pub fn long_need() -> f64 {
    2.0 * SETUP_SECS + round_secs(TEST_SECS) * (min_rounds() + 1) as f64
}

/// Seconds to start a testbed with its four servers and tear it down.
pub const SETUP_SECS: f64 = 4.0;

/// Rounds before a decision may stop the run.
pub fn min_rounds() -> usize {
    crate::sequential::cs::first_bounded_round(crate::sequential::ALPHA)
}

/// Rounds at most.
pub const MAX_ROUNDS: usize = 30;

/// The criterion's parts: on the first path with CUBIC, FQ-CoDel with the
/// mark auto over the bloated drop-tail with it off, in RPM (at least 3)
/// and goodput (at least 0.9), and the mark's self probe over none under
/// FQ-CoDel (under 1). Planning figures: 27 Nov, x4.08 [4.06, 4.19], the
/// same goodput; the self-probe ratio about 0.6.
pub fn parts() -> Vec<crate::sequential::PartSpec> {
    use crate::sequential::{PartSpec, Target};
    vec![
        PartSpec {
            name: "RPM, FQ-CoDel with the mark over bloated drop-tail without".into(),
            // Confirmed at 3x; refuted at 2x, where the queue's delay
            // would still be half the bloated one's.
            target: Target::at_least(3.0, 2.0),
            unit: "x",
            prec: 2,
            planning: (4.08, 0.3),
        },
        PartSpec {
            name: "self probe under FQ-CoDel, the mark over none".into(),
            // No longer self probes (1); refuted at a fifth longer.
            target: Target::at_most(1.0, 1.2),
            unit: "x",
            prec: 2,
            planning: (0.6, 0.15),
        },
        PartSpec {
            name: "goodput, FQ-CoDel with the mark over bloated drop-tail without".into(),
            // Confirmed at 0.9 of the goodput, refuted at 0.8.
            target: Target::at_least(0.9, 0.8),
            unit: "x",
            prec: 2,
            planning: (1.0, 0.03),
        },
    ]
}

/// The LTE trace pair, in `--traces` (Mahimahi's, 5.0 / 5.9 Mbit/s mean).
pub const TRACE: &str = "Verizon-LTE-short";

/// Where the traces are looked for without `--traces`.
pub const DEFAULT_TRACES: &str = "../shared/traces";

impl Plan {
    /// The full run: both paths, four queues, lowat off/auto x CUBIC/BBR,
    /// 3 tests a cell of at most 20 s. `--quick`: the 20 Mbit/s path,
    /// the bloated drop-tail and FQ-CoDel, CUBIC, one test of at most
    /// 7 s a cell (about 35 s). A `--traces` directory without the trace
    /// is refused; without `--traces` a missing one leaves the cellular
    /// path out, said in the report.
    pub fn new(opts: &LabOptions) -> Result<Plan, LabError> {
        let rtt = opts.rtt.unwrap_or(40_000_000);
        let mut paths = vec![PathPlan {
            name: format!(
                "{} Mbit/s, {} ms",
                opts.rate.unwrap_or(20_000_000) as f64 / 1e6,
                rtt as f64 / 1e6
            ),
            spec: PathSpec {
                rtt: Some(rtt),
                rate: Some(opts.rate.unwrap_or(20_000_000)),
                seed: opts.seed,
                ..PathSpec::default()
            },
            stem: "rpm-rate".into(),
        }];
        let (dir, given) = match &opts.traces {
            Some(d) => (d.clone(), true),
            None => (PathBuf::from(DEFAULT_TRACES), false),
        };
        let found = trace_pair(&dir);
        if given && found.is_none() {
            return Err(LabError::Usage(format!(
                "--traces {}: no {TRACE}.up and {TRACE}.down there",
                dir.display()
            )));
        }
        let mut left_out = Vec::new();
        if opts.rtt.is_none() || opts.traces.is_some() {
            match found {
                Some((up, down)) => paths.push(PathPlan {
                    name: format!("LTE trace ({TRACE}), {} ms", rtt as f64 / 1e6),
                    spec: PathSpec {
                        rtt: Some(rtt),
                        up_trace: Some(up),
                        down_trace: Some(down),
                        seed: opts.seed,
                        ..PathSpec::default()
                    },
                    stem: "rpm-lte".into(),
                }),
                None => left_out.push(format!(
                    "the cellular path is left out: no {TRACE}.up/.down in {} (give the directory with --traces)",
                    dir.display()
                )),
            }
        }
        let mut arms = Vec::new();
        for cc in ["cubic", "bbr"] {
            // An arm the kernel cannot run would run its default
            // congestion control under the other's name: left out.
            if let Err(e) = tcpwise_tcp::check_congestion(cc) {
                left_out.push(format!("the {cc} servers are left out: {e}"));
                continue;
            }
            for lowat in [Lowat::Off, Lowat::Adaptive] {
                arms.push(Arm { lowat, cc });
            }
        }
        if arms.len() < 2 {
            return Err(LabError::Usage(
                "responsiveness: neither CUBIC nor BBR is available in this kernel".into(),
            ));
        }
        Ok(Plan {
            paths,
            queues: QUEUES.to_vec(),
            arms,
            runs: opts.runs.unwrap_or(MIN_RUNS),
            // The draft's 20 s with fixed rounds (--runs, the long run);
            // 10 s in a share that holds the decision's rounds of them;
            // 5 s in a shorter one (the default run's).
            max_duration: Duration::from_secs(match crate::budget::share_left(opts) {
                _ if opts.runs.is_some() => 20,
                Some(l) if l < long_need() => TINY_TEST_SECS,
                _ => TEST_SECS,
            }),
            left_out,
        })
    }

    /// The decisive arms' indices: the mark off and auto, with CUBIC (or
    /// the first congestion control there is).
    pub fn decisive_arms(&self) -> (usize, usize) {
        let find = |l: Lowat| {
            self.arms
                .iter()
                .position(|a| a.lowat == l && a.cc == "cubic")
                .or_else(|| self.arms.iter().position(|a| a.lowat == l))
                .unwrap_or(0)
        };
        (find(Lowat::Off), find(Lowat::Adaptive))
    }

    /// Seconds one test takes: its loaded phase at most, the idle probes
    /// and the server's configuration before it.
    pub fn test_secs(&self) -> f64 {
        self.max_duration.as_secs_f64() + 3.0
    }

    /// Rounds of `arms` tests for an extra testbed when `left` testbeds
    /// share the time left, at most the plan's.
    pub fn fitted_rounds(&self, opts: &LabOptions, left: usize, arms: usize) -> usize {
        let per = arms.max(1) as f64 * self.test_secs();
        crate::budget::fit_part(opts, left, per, SETUP_SECS, self.runs)
    }
}

/// The cellular path cold-start and head-of-line add to a full run: 40
/// ms over the LTE trace pair in `--traces` (or [`DEFAULT_TRACES`]), or
/// the line that says why it is left out.
pub(crate) fn lte_path(opts: &crate::LabOptions) -> Result<PathSpec, String> {
    let dir = opts
        .traces
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_TRACES));
    match trace_pair(&dir) {
        Some((up, down)) => Ok(PathSpec {
            rtt: Some(40_000_000),
            up_trace: Some(up),
            down_trace: Some(down),
            seed: opts.seed,
            ..PathSpec::default()
        }),
        None => Err(format!(
            "the cellular path is left out: no {TRACE}.up/.down in {}",
            dir.display()
        )),
    }
}

/// The trace pair in `dir`, if both files are there.
pub(crate) fn trace_pair(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let up = dir.join(format!("{TRACE}.up"));
    let down = dir.join(format!("{TRACE}.down"));
    (up.is_file() && down.is_file()).then_some((up, down))
}

impl Stages for Responsiveness {
    type Plan = Plan;
    type Details = Details;

    fn name(&self) -> &'static str {
        "responsiveness"
    }

    fn criterion(&self) -> Vec<crate::sequential::PartSpec> {
        parts()
    }

    fn cost(&self, _opts: &LabOptions) -> crate::Cost {
        crate::Cost {
            need: need(),
            // Then a round of the other arms on the decisive testbeds.
            planned: need() + 2.0 * (TEST_SECS as f64 + 3.0) + 10.0,
            first_round: 2.0 * SETUP_SECS + round_secs(TINY_TEST_SECS),
        }
    }

    /// Alone: responsiveness is latency under load, and a core shared with
    /// other testbeds is latency (a sweep's `rpm` cells: 803 RPM alone,
    /// 596 to 651 beside three other testbeds; docs/sweep.md).
    fn alone(&self) -> bool {
        true
    }

    fn validate(&self, opts: &LabOptions) -> Result<(), LabError> {
        Plan::new(opts).map(|_| ())
    }

    fn plan(&self, opts: &LabOptions) -> Result<Plan, LabError> {
        Plan::new(opts)
    }

    fn measure(
        &self,
        plan: &Plan,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<measure::Measured, LabError> {
        let values = |r: &[Run]| analysis::round_values(&r[0], &r[1], &r[2]);
        measure::measure(plan, opts, progress, &values)
    }

    fn analyse(&self, plan: &Plan, m: &measure::Measured) -> Result<Analysed, LabError> {
        let a = analysis::analyse(plan, &m.details.runs, &m.decision);
        let rendered = render::Section {
            plan,
            details: &m.details,
            analysis: &a,
        }
        .render();
        Ok(Analysed {
            summary: a.summary,
            rendered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(quick: bool, traces: Option<PathBuf>) -> LabOptions {
        LabOptions {
            traces,
            ..LabOptions::for_tests(quick, None)
        }
    }

    #[test]
    fn every_run_plans_the_matrix_and_decides_on_cubic_off_and_auto() {
        let q = Plan::new(&opts(true, None)).unwrap();
        assert_eq!(q.queues.len(), 4);
        // In a budget a test's loaded phase is at most 10 s.
        assert_eq!(q.max_duration, Duration::from_secs(TEST_SECS));
        let (off, auto) = q.decisive_arms();
        assert_eq!(
            (q.arms[off].lowat, q.arms[auto].lowat),
            (Lowat::Off, Lowat::Adaptive)
        );
        assert_eq!(q.fitted_rounds(&opts(true, None), 3, 4), MIN_RUNS);
        let f = Plan::new(&opts(false, Some("/nonexistent".into())));
        assert!(matches!(f, Err(LabError::Usage(m)) if m.contains("--traces /nonexistent")));
        let dir = std::env::temp_dir().join(format!("tw-rpm-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for ext in ["up", "down"] {
            std::fs::write(dir.join(format!("{TRACE}.{ext}")), "1\n").unwrap();
        }
        let f = Plan::new(&LabOptions {
            runs: Some(MIN_RUNS),
            ..opts(false, Some(dir.clone()))
        })
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        // Two arms a congestion control this kernel has (both, here).
        let ccs = ["cubic", "bbr"]
            .iter()
            .filter(|cc| tcpwise_tcp::check_congestion(cc).is_ok())
            .count();
        assert_eq!(
            (f.paths.len(), f.queues.len(), f.arms.len()),
            (2, 4, 2 * ccs)
        );
        assert_eq!(f.runs, MIN_RUNS);
        assert_eq!(f.max_duration, Duration::from_secs(20));
        assert_eq!(f.left_out.len(), 2 - ccs, "{:?}", f.left_out);
        for q in &f.queues {
            q.spec.parse::<tcpwise_link::QueueSpec>().unwrap();
        }
    }
}
