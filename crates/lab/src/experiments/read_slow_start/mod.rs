//! Chromium's read slow start as an A/B trial: many fresh connections, each
//! assigned at random (seeded) to arm `off` (fixed 32 KiB reads, Chromium's
//! usual size) or `on` (first read 1 KiB, doubling after every read that
//! fills its request, up to 32 KiB), each timing its first byte (from the
//! request's start, connect included, like Chromium's
//! `Net.Transaction_Connected_New`) and its total time, over paths of
//! several RTTs and a spread of response sizes. The table has the seed's
//! shape; Linux has no Windows completion delay, so we report whatever the
//! confidence intervals say, "no significant difference" included.
//!
//! [`Plan`] (every trial's arm and size, drawn from the seed before
//! anything runs) → [`measure`] → [`analysis`] → [`render`].

pub mod analysis;
pub mod measure;
pub mod render;

pub use analysis::{ArmRow, CUTOFFS, CutoffRow};
pub use measure::{Arm, Trial};

use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Render};
use serde::Serialize;
use tcpwise_units::SplitMix64 as Rng;

/// The experiment.
pub struct ReadSlowStart;

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Details {
    /// The seed's table.
    pub table: Vec<CutoffRow>,
    /// Every trial.
    pub trials: Vec<Trial>,
}

/// One path's trials, drawn before anything runs.
#[derive(Debug, Clone)]
pub struct PathPlan {
    /// RTT, ns.
    pub rtt: u64,
    /// Each trial's arm and response size, in the order they run.
    pub trials: Vec<(Arm, u64)>,
}

/// What a run does: every trial's arm and size, replayable from the seed.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The seed the draws came from.
    pub seed: u64,
    /// The paths, each with its trials.
    pub paths: Vec<PathPlan>,
}

impl Plan {
    /// `--runs` trials in all (120 with `--quick`, 2000 otherwise) split
    /// over the paths (`--rtt`, or 20, 50, 100 and 200 ms). Arms are
    /// balanced within each path (a randomized block design, so a small
    /// run cannot confound the arms with the RTT mix); sizes are
    /// log-uniform from 500 B to 500 KB, like a page's resources.
    pub fn new(opts: &LabOptions) -> Plan {
        // In a budget: the trials its share holds (paths at once, 0.88 s
        // a trial a path), at least --quick's 120.
        let total = opts.runs.unwrap_or(match crate::budget::left(opts) {
            Some(_) => crate::budget::fit(opts, TRIAL_SECS / 4.0, 10.0, 120, 2000),
            None if opts.quick => 120,
            None => 2000,
        });
        let rtts: Vec<u64> = match opts.rtt {
            Some(r) => vec![r],
            None => vec![20_000_000, 50_000_000, 100_000_000, 200_000_000],
        };
        let mut rng = Rng(opts.seed ^ 0x5EED);
        let paths = rtts
            .iter()
            .enumerate()
            .map(|(pi, &rtt)| {
                let n = total / rtts.len() + usize::from(pi < total % rtts.len());
                let mut trials: Vec<(Arm, u64)> = (0..n)
                    .map(|i| {
                        let size = (500.0 * 1000f64.powf(rng.unit())) as u64;
                        (if i % 2 == 0 { Arm::On } else { Arm::Off }, size)
                    })
                    .collect();
                for i in (1..trials.len()).rev() {
                    let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                    let (a, b) = (trials[i].0, trials[j].0);
                    trials[i].0 = b;
                    trials[j].0 = a;
                }
                PathPlan { rtt, trials }
            })
            .collect();
        Plan {
            seed: opts.seed,
            paths,
        }
    }
}

/// Seconds a trial takes on one path (27 Nov: 500 trials a path in 440 s).
pub const TRIAL_SECS: f64 = 0.88;

impl Experiment for ReadSlowStart {
    fn name(&self) -> &'static str {
        "read-slow-start"
    }

    // Still fixed repetitions, fitted to its share: 2,000 trials over
    // four paths at once took about 440 s (27 Nov), 0.88 s a trial a
    // path.
    fn cost(&self, _opts: &LabOptions) -> crate::Cost {
        crate::Cost {
            need: 30.0,
            planned: 200.0,
            first_round: 30.0,
        }
    }

    fn validate(&self, opts: &LabOptions) -> Result<(), LabError> {
        let paths = if opts.rtt.is_some() { 1 } else { 4 };
        match opts.runs {
            Some(n) if n < 10 * paths => Err(LabError::Usage(format!(
                "--runs {n} is too few: the trial needs at least 10 per path ({} with {paths} path{}) for its confidence intervals",
                10 * paths,
                if paths == 1 { "" } else { "s" }
            ))),
            _ => Ok(()),
        }
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let plan = Plan::new(opts);
        let m = measure::measure(&plan, opts, progress)?;
        let a = analysis::analyse(&m.trials)?;
        let r = render::Section {
            plan: &plan,
            trials: &m.trials,
            analysis: &a,
        }
        .render();
        let details = crate::Details::ReadSlowStart(Details {
            table: a.table,
            trials: m.trials,
        });
        Ok(ExperimentResult::of(
            "read-slow-start",
            a.summary,
            details,
            m.paths,
            r,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_replays_and_balances_the_arms() {
        let opts = LabOptions {
            seed: 7,
            ..LabOptions::for_tests(true, Some(40))
        };
        let (a, b) = (Plan::new(&opts), Plan::new(&opts));
        assert_eq!(a.paths.len(), 4);
        for (p, q) in a.paths.iter().zip(&b.paths) {
            assert_eq!(p.trials, q.trials, "replayable");
            let on = p.trials.iter().filter(|t| t.0 == Arm::On).count();
            assert_eq!(on, p.trials.len().div_ceil(2), "balanced");
            assert!(p.trials.iter().all(|t| (500..=500_000).contains(&t.1)));
        }
    }
}
