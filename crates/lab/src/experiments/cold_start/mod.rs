//! The cold start the Firefox seed's warm connection is compared against:
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

use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Render};
use serde::Serialize;
use tcpwise_emu::path::PathSpec;

/// The experiment.
pub struct ColdStart;

/// One way of fetching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
    /// Fetches per Happy Eyeballs row.
    pub eyeballs_trials: usize,
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
        let rtts: Vec<u64> = match (opts.rtt, opts.quick) {
            (Some(r), _) => vec![r],
            (None, true) => vec![100_000_000],
            (None, false) => vec![1_000_000, 20_000_000, 100_000_000, 600_000_000],
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
        if !opts.quick && opts.rtt.is_none() {
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
        let trials = opts.runs.unwrap_or(if opts.quick { 3 } else { TRIALS });
        Ok(Plan {
            paths,
            trials,
            eyeballs_rtt_ms: 40.0,
            eyeballs_trials: if opts.quick { 3 } else { trials },
            sequential_timeout_s: if opts.quick { 1.0 } else { 2.0 },
            left_out,
        })
    }
}

impl Experiment for ColdStart {
    fn name(&self) -> &'static str {
        "cold-start"
    }

    /// Alone: its figures are milliseconds of CPU as much as of path (TLS
    /// handshakes, curl's and openssl's process starts, on a 1 ms path).
    /// Run beside the other experiments (two full runs, 26 Nov 2026) its
    /// 1 ms path's tcpwise figures moved by -38 to +8 % and openssl's by up
    /// to +36 %, where a serial rerun stays within its intervals
    /// (docs/lab.md). Its paths run one after the other, as before.
    fn alone(&self) -> bool {
        true
    }

    fn validate(&self, opts: &LabOptions) -> Result<(), LabError> {
        Plan::new(opts).map(|_| ())
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let plan = Plan::new(opts)?;
        let m = measure::measure(&plan, opts, progress)?;
        let a = analysis::analyse(&plan, &m.details);
        let r = render::Section {
            plan: &plan,
            details: &m.details,
            analysis: &a,
        }
        .render();
        Ok(ExperimentResult::of(
            "cold-start",
            a.summary.clone(),
            crate::Details::ColdStart(m.details),
            m.paths,
            r,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_is_one_path_and_the_full_run_four_rtts_and_the_trace() {
        let q = Plan::new(&LabOptions::for_tests(true, None)).unwrap();
        assert_eq!((q.paths.len(), q.trials, q.eyeballs_trials), (1, 3, 3));
        assert_eq!(q.paths[0].rtt_ms, 100.0);
        let f = Plan::new(&LabOptions {
            traces: Some("/nonexistent".into()),
            ..LabOptions::for_tests(false, None)
        })
        .unwrap();
        let rtts: Vec<f64> = f.paths.iter().map(|p| p.rtt_ms).collect();
        assert_eq!(rtts, [1.0, 20.0, 100.0, 600.0]);
        assert_eq!(f.trials, TRIALS);
        assert_eq!(f.left_out.len(), 1, "{:?}", f.left_out);
        let floors: Vec<f64> = Arm::ALL.iter().map(|a| a.floor_rtts()).collect();
        assert_eq!(floors, [3.0, 3.0, 2.0, 1.0, 1.0]);
    }
}
