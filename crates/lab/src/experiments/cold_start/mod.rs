//! The cold start the Firefox field report's warm connection is compared against:
//! time to first byte of a small object over HTTPS on a fresh connection,
//! in round trips, for each way the stack has to shorten it. A cold
//! request costs three (TCP, TLS 1.3, the request); a resumed session
//! still three (it saves the certificate, not a round trip); with 0-RTT
//! the request rides the ClientHello (two); with TCP Fast Open too, the
//! ClientHello rides the SYN (one); a warm pooled connection one. The
//! same fetches with curl (7.88: resumption and TFO, no early data) run on
//! the same testbed in the same run. And Happy Eyeballs: a name whose
//! IPv6 address is blackholed, with and without racing.
//!
//! [`Plan`] → [`measure`] → [`analysis`] → [`render`].

pub mod analysis;
pub mod measure;
pub mod render;

pub use measure::Details;

use crate::stages::{Analysed, Stages};
use crate::{LabError, LabOptions, Progress, Render};
use serde::Serialize;
use tcpwise_emu::path::PathSpec;

/// The experiment.
pub struct ColdStart;

/// One way of fetching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    /// TCP and a full TLS 1.3 handshake.
    Cold,
    /// The TLS session resumed from a ticket, no early data.
    Resumed,
    /// Resumed, the request as early data.
    ZeroRtt,
    /// TCP Fast Open (a cookie held) and 0-RTT: the request in the SYN.
    TfoZeroRtt,
    /// A request on an open pooled connection.
    Warm,
}

impl Arm {
    /// Every arm, in table order.
    pub const ALL: [Arm; 5] = [
        Arm::Cold,
        Arm::Resumed,
        Arm::ZeroRtt,
        Arm::TfoZeroRtt,
        Arm::Warm,
    ];

    /// Its name in the report.
    pub fn label(self) -> &'static str {
        match self {
            Arm::Cold => "cold (TCP + TLS 1.3)",
            Arm::Resumed => "TLS resumed",
            Arm::ZeroRtt => "TLS resumed + 0-RTT",
            Arm::TfoZeroRtt => "TFO + TLS 0-RTT",
            Arm::Warm => "warm pooled connection",
        }
    }

    /// The fewest round trips it can take to the first byte.
    pub fn floor_rtts(self) -> f64 {
        match self {
            Arm::Cold | Arm::Resumed => 3.0,
            Arm::ZeroRtt => 2.0,
            Arm::TfoZeroRtt | Arm::Warm => 1.0,
        }
    }
}

/// One emulated path.
#[derive(Debug, Clone)]
pub struct PathPlan {
    /// Its name in the report.
    pub name: String,
    /// The path.
    pub spec: PathSpec,
    /// Its record directory's stem.
    pub stem: String,
    /// Its round trip, ms (the unit of the table; for the trace, the
    /// propagation RTT).
    pub rtt_ms: f64,
}

/// What a run does, decided before anything is set up.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The paths, by RTT, the cellular trace last.
    pub paths: Vec<PathPlan>,
    /// Fetches per arm and client on each path (arms interleaved).
    pub trials: usize,
    /// The Happy Eyeballs path: its RTT, ms.
    pub eyeballs_rtt_ms: f64,
    /// The `--connect-timeout` of the row without racing, s.
    pub sequential_timeout_s: f64,
    /// What was left out and why.
    pub left_out: Vec<String>,
}

/// The object fetched: 1 KB.
pub const OBJECT: u64 = 1000;

/// Fetches per cell in the full run (the medians of 20).
pub const TRIALS: usize = 20;

/// The address the Happy Eyeballs row's name also resolves to, dropped
/// silently at the server's end.
pub const BLACKHOLE_V6: &str = "2001:2::99";

impl Plan {
    /// The full run: 1, 20, 100 and 600 ms RTT (100 Mbit/s) and the LTE
    /// trace (40 ms), 20 fetches a cell; Happy Eyeballs at 40 ms, 20
    /// fetches a row. `--quick`: the 100 ms path, 3 fetches a cell, 3 a
    /// Happy Eyeballs row. `--rtt` replaces the paths by one of that RTT.
    pub fn new(opts: &LabOptions) -> Result<Plan, LabError> {
        let rate = opts.rate.unwrap_or(100_000_000);
        let rtts: Vec<u64> = match opts.rtt {
            Some(r) => vec![r],
            None => vec![1_000_000, 20_000_000, 100_000_000, 600_000_000],
        };
        let mut paths: Vec<PathPlan> = rtts
            .iter()
            .map(|&rtt| PathPlan {
                name: format!("{} ms, {} Mbit/s", rtt as f64 / 1e6, rate as f64 / 1e6),
                spec: PathSpec {
                    rtt: Some(rtt),
                    rate: Some(rate),
                    seed: opts.seed,
                    ..PathSpec::default()
                },
                stem: format!("cold-{}ms", rtt as f64 / 1e6),
                rtt_ms: rtt as f64 / 1e6,
            })
            .collect();
        let mut left_out = Vec::new();
        if opts.rtt.is_none() {
            match super::responsiveness::lte_path(opts) {
                Ok(spec) => paths.push(PathPlan {
                    name: format!("LTE trace ({}), 40 ms", super::responsiveness::TRACE),
                    spec,
                    stem: "cold-lte".into(),
                    rtt_ms: 40.0,
                }),
                Err(why) => left_out.push(why),
            }
        }
        let trials = opts.runs.unwrap_or(TRIALS);
        Ok(Plan {
            paths,
            trials,
            eyeballs_rtt_ms: 40.0,
            sequential_timeout_s: 2.0,
            left_out,
        })
    }

    /// The path the verdict is decided on: 100 ms, or the only one.
    pub fn decisive(&self) -> usize {
        self.paths
            .iter()
            .position(|p| p.rtt_ms == 100.0 && p.spec.up_trace.is_none())
            .unwrap_or(0)
    }

    /// Trials for path `i` of the extras: what its part of the time left
    /// holds (`paths_left` paths share it), at most the plan's.
    pub fn fitted_trials(&self, i: usize, opts: &LabOptions, paths_left: usize) -> usize {
        let per = trial_secs(self.paths[i].rtt_ms);
        crate::budget::fit_part(opts, paths_left, per, SETUP_SECS, self.trials)
    }
}

/// The raced Happy Eyeballs row's name.
pub fn raced_row() -> String {
    format!(
        "tcpwise, attempts {} ms apart (RFC 8305)",
        tcpwise_client::ATTEMPT_DELAY.as_millis()
    )
}

/// Seconds to set a path up and tear it down.
pub const SETUP_SECS: f64 = 3.0;

/// Seconds a trial takes on an `rtt_ms` path: five arms, three clients,
/// each about 2.5 round trips and 50 ms of process and handshake CPU
/// (27 Nov's full run: 901 s for 20 trials of every path).
pub fn trial_secs(rtt_ms: f64) -> f64 {
    15.0 * (0.05 + 2.5 * rtt_ms / 1e3)
}

/// Seconds a Happy Eyeballs trial takes: the raced row, the row that
/// waits out its 2 s connect timeout, curl's.
pub const EYEBALLS_SECS: f64 = 3.0;

/// Rounds before a decision may stop the run.
pub fn min_rounds() -> usize {
    crate::sequential::cs::first_bounded_round(crate::sequential::ALPHA)
}

/// Rounds at most.
pub const MAX_ROUNDS: usize = 40;

/// The criterion's parts on the decisive path of `rtt_ms`: each tcpwise
/// arm's time to first byte minus its floor within the tolerance, and
/// the raced Happy Eyeballs row within its bound on the `eyeballs_rtt_ms`
/// path. Planning figures: 24 Nov at 100 ms, 3.03, 3.03, 2.03, 1.02 and
/// 1.01 round trips (+1 to +3 ms), Happy Eyeballs 334 ms.
pub fn parts(rtt_ms: f64, eyeballs_rtt_ms: f64) -> Vec<crate::sequential::PartSpec> {
    use crate::sequential::{PartSpec, Target};
    let t = analysis::TOLERANCE_MS;
    let mut v: Vec<PartSpec> = Arm::ALL
        .iter()
        .map(|a| PartSpec {
            name: format!("{} minus {} RTT of {rtt_ms} ms", a.label(), a.floor_rtts()),
            // Within the tolerance; refuted beyond twice it.
            target: Target::within((-t, t), (-2.0 * t, 2.0 * t)),
            unit: " ms",
            prec: 1,
            planning: (2.5, 1.5),
        })
        .collect();
    v.push(PartSpec {
        name: "Happy Eyeballs past a blackholed IPv6 address".into(),
        // Within its bound; refuted a round trip past it (a step more).
        target: Target::at_most(
            analysis::eyeballs_bound(eyeballs_rtt_ms),
            analysis::eyeballs_bound(eyeballs_rtt_ms) + eyeballs_rtt_ms,
        ),
        unit: " ms",
        prec: 0,
        planning: (334.0, 5.0),
    });
    v
}

impl Stages for ColdStart {
    type Plan = Plan;
    type Details = Details;

    fn name(&self) -> &'static str {
        "cold-start"
    }

    fn criterion(&self) -> Vec<crate::sequential::PartSpec> {
        parts(100.0, 40.0)
    }

    fn cost(&self, opts: &LabOptions) -> crate::Cost {
        let rtt = opts.rtt.map_or(100.0, |r| r as f64 / 1e6);
        let round = trial_secs(rtt) + EYEBALLS_SECS;
        let need = 2.0 * SETUP_SECS + round * (min_rounds() + 1) as f64;
        crate::Cost {
            need,
            // Then about three trials of every other path.
            planned: need + 90.0,
            first_round: 2.0 * SETUP_SECS + round,
        }
    }

    /// Alone: its figures are milliseconds of CPU as much as of path (TLS
    /// handshakes, curl's and openssl's process starts, on a 1 ms path), so
    /// other experiments beside it move them (docs/lab.md has the runs).
    /// Its paths run one after the other.
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
        let rtt = plan.paths[plan.decisive()].rtt_ms;
        let values =
            |f: &[measure::Fetch], e: &[measure::Eyeball]| analysis::round_values(f, e, rtt);
        measure::measure(plan, opts, progress, &values)
    }

    fn analyse(&self, plan: &Plan, m: &measure::Measured) -> Result<Analysed, LabError> {
        let a = analysis::analyse(plan, &m.details, &m.decision);
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

    #[test]
    fn every_run_plans_four_rtts_and_the_trace_deciding_on_100_ms() {
        let f = Plan::new(&LabOptions {
            traces: Some("/nonexistent".into()),
            ..LabOptions::for_tests(false, None)
        })
        .unwrap();
        let rtts: Vec<f64> = f.paths.iter().map(|p| p.rtt_ms).collect();
        assert_eq!(rtts, [1.0, 20.0, 100.0, 600.0]);
        assert_eq!((f.decisive(), f.trials), (2, TRIALS));
        assert_eq!(f.left_out.len(), 1, "{:?}", f.left_out);
        let floors: Vec<f64> = Arm::ALL.iter().map(|a| a.floor_rtts()).collect();
        assert_eq!(floors, [3.0, 3.0, 2.0, 1.0, 1.0]);
        // --rtt: one path, decided on it.
        let one = Plan::new(&LabOptions {
            rtt: Some(40_000_000),
            ..LabOptions::for_tests(false, None)
        })
        .unwrap();
        assert_eq!((one.paths.len(), one.decisive()), (1, 0));
    }

    #[test]
    fn the_extras_take_what_the_time_left_holds() {
        let deadline = Some(std::time::Instant::now() + std::time::Duration::from_secs(100));
        // --runs: the plan's trials whatever the deadline.
        let fixed = LabOptions {
            deadline,
            ..LabOptions::for_tests(false, Some(5))
        };
        assert_eq!(Plan::new(&fixed).unwrap().fitted_trials(3, &fixed, 2), 5);
        let opts = LabOptions {
            deadline,
            ..LabOptions::for_tests(false, None)
        };
        let f = Plan::new(&opts).unwrap();
        // 600 ms: 50 s each of two paths, 3 s of set-up, 23.25 s a trial.
        assert_eq!(f.fitted_trials(3, &opts, 2), 2);
        // 1 ms: 47 s / 0.825 s, capped at the plan's.
        assert_eq!(f.fitted_trials(0, &opts, 2), TRIALS);
    }
}
