//! Head-of-line blocking: when does HTTP/3 beat HTTP/2 on a lossy path?
//! HTTP/2 multiplexes a page's objects over one TCP connection, so one
//! lost segment holds every stream's bytes behind it until it is
//! retransmitted; QUIC recovers per stream. HTTP/1.1 spreads the page
//! over six connections, as browsers do. Published comparisons disagree
//! on how much it matters (Trevisan et al., "Measuring HTTP/3", 2021:
//! gains under high latency or very poor bandwidth, little under loss
//! alone; others under netem loss of 0 to 12 %: large gains at high
//! loss), so the lab loads the same page the three ways on the same
//! emulated path, at 0, 1, 2 and 5 % random loss and on a cellular
//! trace, with the loss-recovery counters of both transports beside each
//! page-load time.
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
use tcpwise_link::LossModel;

/// The experiment.
pub struct HeadOfLine;

/// One way of loading the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proto {
    /// HTTP/1.1 over TLS, at most six connections (a browser's limit).
    Http1,
    /// HTTP/2 over TLS (ALPN), one connection.
    Http2,
    /// HTTP/3 over QUIC, one connection.
    Http3,
}

impl Proto {
    /// Every way, in table order.
    pub const ALL: [Proto; 3] = [Proto::Http1, Proto::Http2, Proto::Http3];

    /// Its name in the report.
    pub fn label(self) -> &'static str {
        match self {
            Proto::Http1 => "HTTP/1.1, 6 connections",
            Proto::Http2 => "HTTP/2",
            Proto::Http3 => "HTTP/3",
        }
    }

    /// Its key in `results.json`'s summary.
    pub fn key(self) -> &'static str {
        match self {
            Proto::Http1 => "h1",
            Proto::Http2 => "h2",
            Proto::Http3 => "h3",
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
    /// Its round trip, ms (the trace's: its propagation RTT).
    pub rtt_ms: f64,
    /// Random loss in each direction, percent (0 on the trace).
    pub loss_pct: f64,
    /// Whether it is the cellular trace.
    pub trace: bool,
}

/// What a run does, decided before anything is set up.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The paths: the loss rates in order, the cellular trace last.
    pub paths: Vec<PathPlan>,
    /// The tables' page loads per way and path after the decision (the
    /// ways interleaved), at most: the budget may fit fewer.
    pub trials: usize,
    /// The page: the HTML's size first, then each object's, bytes.
    pub page: Vec<u64>,
    /// What was left out and why.
    pub left_out: Vec<String>,
}

/// Page loads per cell in the full run: enough for a 95 % interval of
/// each median (ranks 2 and 9 of 10 hold it with 97.9 %). Not 20: one
/// TCP or QUIC connection under 5 % random loss at 100 ms moves about
/// 0.6 Mbit/s (Mathis et al.: MSS / RTT x 1.22 / sqrt(p)), so an HTTP/2
/// or HTTP/3 load of the page takes about 25 s there, and 10 loads a
/// cell keep the full experiment near 25 minutes.
pub const TRIALS: usize = 10;
/// Objects the HTML refers to.
pub const OBJECTS: usize = 30;
/// The HTML's size, bytes.
pub const HTML: u64 = 15_000;
/// The objects' sizes are drawn uniformly from this range, bytes.
pub const OBJECT_RANGE: (u64, u64) = (10_000, 100_000);
/// Random loss rates of the full run, percent, in each direction.
pub const LOSSES: [f64; 4] = [0.0, 1.0, 2.0, 5.0];
/// Connections HTTP/1.1 may open to the origin (browsers' six).
pub const H1_CONNECTIONS: usize = 6;
/// The server's TCP congestion control: CUBIC, as quinn's QUIC (its
/// default), so the comparison is of the transports' loss recovery and
/// multiplexing, not of two congestion controls (BBR, the host's
/// default, ignores random loss).
pub const CONGESTION: &str = "cubic";

/// The page's sizes, drawn from `seed`: the same page in every run with
/// the same seed.
pub fn page(seed: u64) -> Vec<u64> {
    let mut rng = tcpwise_units::SplitMix64(seed ^ 0x68_6f6c_2d70_6167); // "hol-pag"
    let (lo, hi) = OBJECT_RANGE;
    let mut v = vec![HTML];
    v.extend((0..OBJECTS).map(|_| lo + (rng.unit() * (hi - lo + 1) as f64) as u64));
    v
}

impl Plan {
    /// The full run: 100 ms / 20 Mbit/s at 0, 1, 2 and 5 % random loss
    /// each way, and 40 ms over the LTE trace pair; 10 loads a cell.
    /// `--quick`: 0 and 1 % loss, one load a cell (about 30 s: an HTTP/2
    /// load at 1 % takes 3 to 11 s, at 2 % about 17). `--rtt`/`--rate`
    /// replace the path's (the trace is then left out); `--runs` the loads.
    pub fn new(opts: &LabOptions) -> Result<Plan, LabError> {
        let rtt = opts.rtt.unwrap_or(100_000_000);
        let rate = opts.rate.unwrap_or(20_000_000);
        let losses: &[f64] = if opts.quick && opts.deadline.is_none() {
            &[0.0, 1.0]
        } else {
            &LOSSES
        };
        let mut paths: Vec<PathPlan> = losses
            .iter()
            .map(|&loss| PathPlan {
                name: format!(
                    "{} ms, {} Mbit/s, {loss} % loss",
                    rtt as f64 / 1e6,
                    rate as f64 / 1e6
                ),
                spec: PathSpec {
                    rtt: Some(rtt),
                    rate: Some(rate),
                    loss: (loss > 0.0).then_some(LossModel::Bernoulli { p: loss / 100.0 }),
                    seed: opts.seed,
                    ..PathSpec::default()
                },
                stem: format!("hol-loss{loss}"),
                rtt_ms: rtt as f64 / 1e6,
                loss_pct: loss,
                trace: false,
            })
            .collect();
        let mut left_out = Vec::new();
        if (!opts.quick || opts.deadline.is_some()) && opts.rtt.is_none() && opts.rate.is_none() {
            match super::responsiveness::lte_path(opts) {
                Ok(spec) => paths.push(PathPlan {
                    name: format!("LTE trace ({}), 40 ms", super::responsiveness::TRACE),
                    spec,
                    stem: "hol-lte".into(),
                    rtt_ms: 40.0,
                    loss_pct: 0.0,
                    trace: true,
                }),
                Err(why) => left_out.push(why),
            }
        }
        let trials = opts
            .runs
            .unwrap_or(if opts.quick && opts.deadline.is_none() {
                1
            } else {
                TRIALS
            });
        if trials == 0 {
            return Err(LabError::Usage("--runs must be at least 1".into()));
        }
        Ok(Plan {
            paths,
            trials,
            page: page(opts.seed),
            left_out,
        })
    }

    /// The decision's two paths, as indices into `paths`: the one
    /// without loss and the highest random loss (`None`: the run has no
    /// such pair, as with `--rtt` alone it always has).
    pub fn decisive(&self) -> Option<(usize, usize)> {
        let lossy = |i: &usize| !self.paths[*i].trace;
        let all = 0..self.paths.len();
        let zero = all
            .clone()
            .filter(lossy)
            .find(|&i| self.paths[i].loss_pct == 0.0)?;
        let worst = all
            .filter(lossy)
            .filter(|&i| self.paths[i].loss_pct > 0.0)
            .max_by(|&a, &b| self.paths[a].loss_pct.total_cmp(&self.paths[b].loss_pct))?;
        Some((zero, worst))
    }

    /// The tables' loads a way and path that the share left holds.
    pub fn fitted_trials(&self, opts: &LabOptions) -> usize {
        crate::budget::fit_part(opts, 1, TRIAL_SECS, 5.0, self.trials)
    }

    /// The page's bytes (HTML and objects).
    pub fn page_bytes(&self) -> u64 {
        self.page.iter().sum()
    }
}

/// The highest-loss path's `r`th replica for the decision's rounds: the
/// same path with its own loss draws (`r` 0 is the path itself).
pub fn replica(path: &PathPlan, r: usize) -> PathPlan {
    let mut p = path.clone();
    if r > 0 {
        p.spec.seed ^= (r as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        p.stem = format!("{}-r{r}", path.stem);
    }
    p
}

/// Seconds of one load of each protocol on the slowest path (5 % loss;
/// 27 Nov: 6.9 + 33.9 + 27.2 s).
pub const TRIAL_SECS: f64 = 70.0;

/// Testbeds of the highest-loss path in a decision round, each loading
/// the page over HTTP/2 and HTTP/3 at once; the round's value there is
/// the median of their three ratios.
///
/// Why: one ratio a round spread so widely (3 Dec, `--budget 30m`: 0.79
/// [0.58, 1.16] after 8 rounds) that the claim stayed undecided in every
/// budget. The median of three independent draws has the same median as
/// one draw (at least two of three fall below the median with
/// probability 3/8 + 1/8 = 1/2), so the part's median is unchanged while
/// each round's value lands on the effect's side more often (of three
/// draws each below 1 with probability 0.74, the median is with 0.84).
/// Three, not more: with the lossless path's testbed they are four of
/// the lab's eight slots, beside the experiments that share the phase.
pub const REPLICAS: usize = 3;

/// Seconds of a decision round: the slowest of the replicas' loads at 5 %
/// loss (HTTP/2 and HTTP/3 at once on each: 27 Nov's 33.9 and 27.2 s
/// apart, the slowest of six draws longer), the paths' bound.
pub const ROUND_SECS: f64 = 45.0;

/// Rounds the budget plans for: a decision with one round of ten on the
/// other side (the sequence's first bound then comes at round 10).
pub const PLANNED_ROUNDS: usize = 10;

/// Rounds before a decision may stop the run (the sequence's first
/// bound).
pub fn min_rounds() -> usize {
    crate::sequential::cs::first_bounded_round(crate::sequential::ALPHA)
}

/// Rounds at most.
pub const MAX_ROUNDS: usize = 30;

impl Stages for HeadOfLine {
    type Plan = Plan;
    type Details = Details;

    fn name(&self) -> &'static str {
        "head-of-line"
    }

    fn criterion(&self) -> Vec<crate::sequential::PartSpec> {
        parts()
    }

    // Its decision needs minutes of 5 % loss, more than the default
    // budget gives the phase it shares: its `need` is one round, so it
    // never takes the cheaper verdicts' time; a larger budget's extra
    // time reaches it through `planned`.
    fn cost(&self, _opts: &LabOptions) -> crate::Cost {
        crate::Cost {
            need: 10.0 + ROUND_SECS,
            planned: 10.0 + ROUND_SECS * PLANNED_ROUNDS.max(min_rounds() + 1) as f64 + TRIAL_SECS,
            first_round: 10.0 + ROUND_SECS,
        }
    }

    fn validate(&self, opts: &LabOptions) -> Result<(), LabError> {
        match self.plan(opts)?.decisive() {
            Some(_) => Ok(()),
            None => Err(LabError::Usage(
                "the decision needs a path without loss and one with loss".into(),
            )),
        }
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
        measure::measure(plan, opts, progress, &analysis::round_values)
    }

    fn analyse(&self, plan: &Plan, m: &measure::Measured) -> Result<Analysed, LabError> {
        let a = analysis::analyse(plan, &m.details, &m.decision);
        let rendered = render::Section {
            plan,
            details: &m.details,
            analysis: &a,
            record: &m.decision,
        }
        .render();
        Ok(Analysed {
            summary: a.summary,
            rendered,
        })
    }
}

/// How close HTTP/3 and HTTP/2 must be without loss (the issue's 10 %).
pub const NO_LOSS_TOLERANCE: f64 = 0.10;

/// The criterion's parts: the claim (HTTP/3 faster than HTTP/2 at the
/// highest loss) and its detail (the two within 10 % without loss), each
/// a paired ratio of page-load times, with their planning figures (27
/// Nov's fixed run: x0.81 at 5 % loss, x0.97 [0.94, 1.04] without).
pub fn parts() -> Vec<crate::sequential::PartSpec> {
    vec![
        crate::sequential::PartSpec {
            name: "HTTP/3 over HTTP/2 page-load time at the highest loss, paired".into(),
            // A fifth faster, 27 Nov's figure (0.8), is the confirming
            // edge; no faster at all (1) the refuting one: confirmed once
            // HTTP/3 is faster beyond doubt, as the criterion was before.
            target: crate::sequential::Target::at_most(0.8, 1.0),
            unit: "x",
            prec: 2,
            // The median of three ratios spreads about two thirds as
            // widely as one (0.3 for one ratio).
            planning: (0.81, 0.2),
        },
        crate::sequential::PartSpec {
            name: "HTTP/3 over HTTP/2 page-load time without loss, paired".into(),
            // Within 10 % (the issue's); refuted beyond 20 %.
            target: crate::sequential::Target::within(
                (1.0 - NO_LOSS_TOLERANCE, 1.0 + NO_LOSS_TOLERANCE),
                (1.0 - 2.0 * NO_LOSS_TOLERANCE, 1.0 + 2.0 * NO_LOSS_TOLERANCE),
            ),
            unit: "x",
            prec: 2,
            planning: (0.97, 0.05),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_follows_the_seed_and_the_plans_the_issue() {
        let p = page(1);
        assert_eq!(p.len(), 1 + OBJECTS);
        assert_eq!(p[0], HTML);
        assert!(
            p[1..]
                .iter()
                .all(|&n| (OBJECT_RANGE.0..=OBJECT_RANGE.1).contains(&n))
        );
        assert_eq!(p, page(1), "the same seed, the same page");
        assert_ne!(p, page(2));
        let q = Plan::new(&LabOptions::for_tests(true, None)).unwrap();
        let losses: Vec<f64> = q.paths.iter().map(|p| p.loss_pct).collect();
        assert_eq!((losses, q.trials), (vec![0.0, 1.0], 1));
        let f = Plan::new(&LabOptions {
            traces: Some("/nonexistent".into()),
            ..LabOptions::for_tests(false, None)
        })
        .unwrap();
        let losses: Vec<f64> = f.paths.iter().map(|p| p.loss_pct).collect();
        assert_eq!(losses, LOSSES);
        assert!(f.paths.iter().all(|p| p.rtt_ms == 100.0));
        assert_eq!((f.trials, f.left_out.len()), (TRIALS, 1));
        assert!(Plan::new(&LabOptions::for_tests(true, Some(0))).is_err());
    }
}
