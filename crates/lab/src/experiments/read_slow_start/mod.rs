//! Chromium's read slow start as a paired trial: fresh connections in
//! pairs of one response size, one of each arm in a random order, arm
//! `off` (fixed 32 KiB reads, Chromium's usual size) and `on` (first
//! read 1 KiB, doubling after every read that fills its request, up to
//! 32 KiB), each timing its first byte (from the
//! request's start, connect included, like Chromium's
//! `Net.Transaction_Connected_New`) and its total time, over paths of
//! several RTTs and a spread of response sizes, in rounds until the
//! sequential decision on the pairs' saving is made. The table has the
//! field report's shape; Linux has no Windows completion delay, so we report
//! whatever the intervals say.
//!
//! [`Plan`] (every round's trials, drawn from the seed) → [`measure`] →
//! [`analysis`] → [`render`].

pub mod analysis;
pub mod measure;
pub mod reader;
pub mod render;

pub use analysis::{ArmRow, CUTOFFS, CutoffRow};
pub use measure::{Arm, Cause, Trial};

use crate::stages::{Analysed, Stages};
use crate::{LabError, LabOptions, Progress, Render};
use serde::Serialize;
use tcpwise_units::SplitMix64 as Rng;

/// The experiment.
pub struct ReadSlowStart;

/// Everything measured.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Details {
    /// The field report's table (the analysis's, kept beside the trials).
    #[serde(default)]
    pub table: Vec<CutoffRow>,
    /// Every trial.
    pub trials: Vec<Trial>,
}

/// What a run does: the paths, and every round's trials, drawn from the
/// seed (the same seed, the same trials).
#[derive(Debug, Clone)]
pub struct Plan {
    /// The seed the draws come from.
    pub seed: u64,
    /// The paths' RTTs, ns (`--rtt`, or 20, 50, 100 and 200 ms).
    pub rtts: Vec<u64>,
}

/// Pairs a path runs each round.
pub const PAIRS: usize = 4;

/// Rounds before a decision may stop the run (the sequence's first
/// bound).
pub fn min_rounds() -> usize {
    crate::sequential::cs::first_bounded_round(crate::sequential::ALPHA)
}

/// Rounds at most.
pub const MAX_ROUNDS: usize = 40;

/// Seconds a round takes: [`PAIRS`] pairs a condition on the 200 ms path,
/// the paths' bound (27 Nov: 500 trials a path in 440 s, 0.88 s a trial;
/// a held trial's reads add 40-50 ms each where they wait).
pub const ROUND_SECS: f64 = 4.0 * PAIRS as f64 * 0.95;

/// Seconds to start the four testbeds and their origins.
pub const SETUP_SECS: f64 = 10.0;

impl Plan {
    /// The paths; the trials are drawn round by round ([`Plan::round`]).
    pub fn new(opts: &LabOptions) -> Plan {
        Plan {
            seed: opts.seed,
            rtts: match opts.rtt {
                Some(r) => vec![r],
                None => vec![20_000_000, 50_000_000, 100_000_000, 200_000_000],
            },
        }
    }

    /// Round `round`'s trials on path `path`: [`PAIRS`] pairs under each
    /// condition (Linux, and the report's cause modelled), both trials of
    /// a pair of one size (log-uniform from 500 B to 500 KB, like a page's
    /// resources) and one condition, its arms in a random order, so the
    /// pair's difference is read slow start's effect on that response
    /// alone and the order cannot favour an arm.
    pub fn round(&self, path: usize, round: usize) -> Vec<Draw> {
        let mut rng = Rng(self.seed ^ 0x5EED ^ ((path as u64) << 32) ^ round as u64);
        (0..2 * PAIRS)
            .flat_map(|i| {
                let cause = Cause::ALL[i % 2];
                let size = (500.0 * 1000f64.powf(rng.unit())) as u64;
                let arms = if rng.next_u64().is_multiple_of(2) {
                    [Arm::On, Arm::Off]
                } else {
                    [Arm::Off, Arm::On]
                };
                let seeds = [rng.next_u64(), rng.next_u64()];
                [0, 1].map(|k| Draw {
                    arm: arms[k],
                    size,
                    cause,
                    hold_seed: seeds[k],
                })
            })
            .collect()
    }
}

/// One trial as drawn: its arm, response size, condition, and the seed of
/// its held reads' delays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draw {
    /// The arm.
    pub arm: Arm,
    /// Response size, bytes.
    pub size: u64,
    /// The condition.
    pub cause: Cause,
    /// Seeds the 40-50 ms delays of a held trial.
    pub hold_seed: u64,
}

impl Stages for ReadSlowStart {
    type Plan = Plan;
    type Details = Details;

    fn name(&self) -> &'static str {
        "read-slow-start"
    }

    fn criterion(&self) -> Vec<crate::sequential::PartSpec> {
        parts()
    }

    fn cost(&self, _opts: &LabOptions) -> crate::Cost {
        crate::Cost {
            need: SETUP_SECS + ROUND_SECS * (min_rounds() + 1) as f64,
            planned: SETUP_SECS + ROUND_SECS * (min_rounds() + 3) as f64,
            first_round: SETUP_SECS + ROUND_SECS,
        }
    }

    fn plan(&self, opts: &LabOptions) -> Result<Plan, LabError> {
        Ok(Plan::new(opts))
    }

    fn measure(
        &self,
        plan: &Plan,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<measure::Measured, LabError> {
        let mut m = measure::measure(plan, opts, progress, &analysis::round_value)?;
        let arm = |a: Arm| {
            let mut v: Vec<f64> = m
                .details
                .trials
                .iter()
                .filter(|t| t.arm == a)
                .map(|t| t.ttfb_ms)
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (on, off) = (arm(Arm::On), arm(Arm::Off));
        if !on.is_empty() && !off.is_empty() {
            m.details.table = analysis::cutoffs(&on, &off);
        }
        Ok(m)
    }

    fn analyse(&self, plan: &Plan, m: &measure::Measured) -> Result<Analysed, LabError> {
        let a = analysis::analyse(&m.details.trials, m.decision.clone())?;
        let rendered = render::Section {
            plan,
            trials: &m.details.trials,
            analysis: &a,
        }
        .render();
        Ok(Analysed {
            summary: a.summary,
            rendered,
        })
    }
}

/// The field report's smallest saving, ms ("a savings of 3-20 ms per request").
pub const REPORTED_SAVING_MS: f64 = 3.0;

/// The criterion's parts, in [`Cause::ALL`]'s order: the saving under the
/// report's cause (the claim) and on Linux (a detail). Planning figures:
/// on Linux 27 Nov's 2,000 trials (the arms' median TTFBs within 0.3 ms);
/// under the cause a guess made before its first run: a fixed read is
/// held wherever a flight is under 32 KiB, by 40-50 ms, whose uniform
/// spread is 2.9 ms.
pub fn parts() -> Vec<crate::sequential::PartSpec> {
    Cause::ALL
        .iter()
        .map(|&c| crate::sequential::PartSpec {
            name: format!(
                "time to first byte saved, off minus on, the round's median pair, {}",
                c.label()
            ),
            // Confirmed at the report's smallest saving (3 ms), refuted at
            // a third of it.
            target: crate::sequential::Target::at_least(
                REPORTED_SAVING_MS,
                REPORTED_SAVING_MS / 3.0,
            ),
            unit: " ms",
            prec: 2,
            planning: match c {
                Cause::Held => (30.0, 2.9),
                Cause::Linux => (0.0, 0.5),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_replays_and_pairs_the_arms() {
        let opts = LabOptions {
            seed: 7,
            ..LabOptions::for_tests(true, Some(40))
        };
        let (a, b) = (Plan::new(&opts), Plan::new(&opts));
        assert_eq!(a.rtts.len(), 4);
        for p in 0..a.rtts.len() {
            assert_eq!(a.round(p, 3), b.round(p, 3), "replayable");
            assert_ne!(a.round(p, 3), a.round(p, 4), "each round drawn anew");
            let r = a.round(p, 0);
            assert_eq!(r.len(), 4 * PAIRS);
            for pair in r.chunks(2) {
                assert_ne!(pair[0].arm, pair[1].arm, "one of each arm");
                assert_eq!(pair[0].size, pair[1].size, "of one size");
                assert_eq!(pair[0].cause, pair[1].cause, "under one condition");
                assert!((500..=500_000).contains(&pair[0].size));
            }
            let held = r.iter().filter(|d| d.cause == Cause::Held).count();
            assert_eq!(held, 2 * PAIRS, "as many pairs under each condition");
        }
    }
}
