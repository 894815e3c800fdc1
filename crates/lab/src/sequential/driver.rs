//! The loop every sequential experiment runs: a round, its values into
//! each part's [`Tracker`], then stop or go on. It stops when every part
//! is decided (after the design's least rounds), when the budget cannot
//! hold another round of the mean length so far, at the round limit, or
//! on Ctrl-C, keeping every interval reached (they are valid at any
//! stop). `--runs N` fixes the rounds and turns stopping off.
//!
//! The rule that discards a round is fixed before the run and reads no
//! figure of the round: a round during which the hypervisor stole more
//! than [`STARVED`] of the machine's CPU time (`/proc/stat`) is kept in
//! the details but counts for nothing.

use super::{PartSpec, Record, State, Stop, Tracker};
use crate::{LabError, LabOptions, Progress};
use std::time::{Duration, Instant};

/// The share of the machine's CPU time stolen during a round above
/// which the round is discarded.
pub const STARVED: f64 = 0.10;

/// How long a run of rounds may go.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// No round starts that would end, at the mean length so far, after
    /// this instant (`None`: no time limit).
    pub deadline: Option<Instant>,
    /// The time given, for the report.
    pub given: Option<Duration>,
    /// `--runs N`: exactly N rounds.
    pub fixed: Option<usize>,
    /// Rounds before a decision may stop the run.
    pub min_rounds: usize,
    /// Rounds at most.
    pub max_rounds: usize,
}

impl Budget {
    /// An experiment's budget from the run's options: `--runs`, or its
    /// share of `--budget` (its deadline), between `min_rounds` and
    /// `max_rounds`.
    pub fn of(opts: &LabOptions, min_rounds: usize, max_rounds: usize) -> Budget {
        let given = opts
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()));
        Budget {
            deadline: opts.deadline,
            given,
            fixed: opts.runs,
            min_rounds,
            max_rounds,
        }
    }
}

/// Every round run (a starved one too: its figures are kept, its
/// values counted for nothing) and what they decided.
#[derive(Debug)]
pub struct Rounds<R> {
    /// The rounds in the order they ran.
    pub rounds: Vec<R>,
    /// The decision.
    pub record: Record,
}

/// The machine's stolen share of CPU time between two readings.
struct StealMeter {
    ticks: Option<u64>,
    at: Instant,
}

impl StealMeter {
    fn start() -> StealMeter {
        StealMeter {
            ticks: tcpwise_sys::steal_ticks(),
            at: Instant::now(),
        }
    }

    /// Stolen share since `start` (0 where `/proc/stat` has no steal).
    fn share(&self) -> f64 {
        let (Some(a), Some(b)) = (self.ticks, tcpwise_sys::steal_ticks()) else {
            return 0.0;
        };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let ticks = self.at.elapsed().as_secs_f64() * 100.0 * cpus;
        (b.saturating_sub(a)) as f64 / ticks.max(1.0)
    }
}

/// Runs `round` (round index in, its typed result and one value per
/// part out) until the parts in `specs` are decided or `budget` ends.
pub fn drive<R>(
    what: &str,
    specs: Vec<PartSpec>,
    budget: &Budget,
    opts: &LabOptions,
    progress: &dyn Progress,
    mut round: impl FnMut(usize) -> Result<(R, Vec<f64>), LabError>,
) -> Result<Rounds<R>, LabError> {
    let mut parts: Vec<Tracker> = specs.into_iter().map(Tracker::new).collect();
    let total = budget.fixed.unwrap_or(budget.max_rounds);
    let id = progress.step(&format!("{what}: rounds until decided"), total as u64);
    let start = Instant::now();
    let (mut rounds, mut discarded) = (Vec::new(), 0);
    let stopped = loop {
        let n = rounds.len() - discarded;
        if let Some(s) = stop_before(&parts, budget, n, rounds.len(), start) {
            break s;
        }
        if opts.check().is_err() {
            break Stop::Interrupted;
        }
        let steal = StealMeter::start();
        let (r, values) = match round(rounds.len()) {
            Ok(x) => x,
            Err(LabError::Interrupted) => break Stop::Interrupted,
            Err(e) => return Err(e),
        };
        if steal.share() <= STARVED {
            for (p, v) in parts.iter_mut().zip(&values) {
                p.push(*v);
            }
        } else {
            discarded += 1;
        }
        rounds.push(r);
        progress.inc(id, 1);
    };
    // Stopped before any round counted: there is no interval to keep.
    if stopped == Stop::Interrupted && rounds.is_empty() {
        progress.done(
            id,
            &format!("{what}: interrupted before its first round ended"),
        );
        return Err(LabError::Interrupted);
    }
    let record = Record {
        parts: parts.iter().map(Tracker::result).collect(),
        rounds: rounds.len() - discarded,
        discarded,
        secs: start.elapsed().as_secs_f64(),
        stopped,
        budget_secs: budget.given.map(|d| d.as_secs_f64()),
    };
    progress.done(id, &format!("{what}: {}", record.line()));
    Ok(Rounds { rounds, record })
}

/// Why the loop stops before round `ran` (of which `n` counted), if it
/// does.
fn stop_before(
    parts: &[Tracker],
    budget: &Budget,
    n: usize,
    ran: usize,
    start: Instant,
) -> Option<Stop> {
    if let Some(k) = budget.fixed {
        return (n >= k).then_some(Stop::Fixed);
    }
    if n >= budget.min_rounds && parts.iter().all(|p| p.state() != State::Undecided) {
        return Some(Stop::Decided);
    }
    if n >= budget.max_rounds {
        return Some(Stop::MaxRounds);
    }
    let deadline = budget.deadline?;
    // The first round always runs: the plan refused a budget too small
    // for it.
    if ran == 0 {
        return None;
    }
    let mean = start.elapsed() / ran as u32;
    (Instant::now() + mean > deadline).then_some(Stop::Budget)
}
