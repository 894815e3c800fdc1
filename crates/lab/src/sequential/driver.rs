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
    // A bar only for a known count (--runs): rounds until decided have no
    // length to extrapolate an eta from (a bar of max_rounds said "eta
    // 14m" for a run that ended in 17 s); each round says where it stands.
    let id = match budget.fixed {
        Some(k) => progress.step(&format!("{what}: {k} fixed rounds"), k as u64),
        None => progress.step(&format!("{what}: rounds until decided"), 0),
    };
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
        if budget.fixed.is_none() {
            progress.note(
                id,
                &round_note(&parts, budget, rounds.len(), discarded, start),
            );
        }
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
/// Where a run of rounds stands, in true words: rounds counted, parts
/// decided, when the first bound can come, the budget left.
fn round_note(
    parts: &[Tracker],
    budget: &Budget,
    ran: usize,
    discarded: usize,
    start: Instant,
) -> String {
    let n = ran - discarded;
    let decided = parts
        .iter()
        .filter(|p| p.state() != State::Undecided)
        .count();
    let first = super::cs::first_bounded_round(super::ALPHA);
    let mut s = format!(
        "round {n} counted, {decided} of {} parts decided",
        parts.len()
    );
    if discarded > 0 {
        s.push_str(&format!(" ({discarded} starved discarded)"));
    }
    if n < first {
        s.push_str(&format!("; no interval before round {first}"));
    }
    if let Some(d) = budget.deadline {
        let left = d.saturating_duration_since(Instant::now()).as_secs();
        let per = start.elapsed().as_secs_f64() / ran.max(1) as f64;
        s.push_str(&format!(
            "; {left} s of its budget left, {per:.0} s a round"
        ));
    }
    s
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequential::Target;
    use std::sync::Mutex;

    /// What a run told its progress: each step's total, and every note.
    #[derive(Default)]
    struct Log(Mutex<(Vec<u64>, Vec<String>)>);
    impl Progress for Log {
        fn step(&self, _: &str, total: u64) -> usize {
            self.0.lock().unwrap().0.push(total);
            0
        }
        fn inc(&self, _: usize, _: u64) {}
        fn done(&self, _: usize, _: &str) {}
        fn note(&self, _: usize, msg: &str) {
            self.0.lock().unwrap().1.push(msg.to_string());
        }
    }

    #[test]
    fn rounds_until_decided_show_no_false_eta_and_say_where_they_stand() {
        let spec = PartSpec {
            name: "x".into(),
            target: Target::at_least(1.0, 0.5),
            unit: "",
            prec: 1,
            planning: (5.0, 0.1),
        };
        let budget = Budget {
            deadline: Some(Instant::now() + Duration::from_secs(600)),
            given: None,
            fixed: None,
            min_rounds: 5,
            max_rounds: 40,
        };
        let log = Log::default();
        let opts = LabOptions::for_tests(true, None);
        let r = drive("t", vec![spec], &budget, &opts, &log, |_| {
            Ok(((), vec![5.0]))
        })
        .unwrap();
        assert_eq!(r.record.rounds, 5);
        let (totals, notes) = log.0.into_inner().unwrap();
        // No bar of max_rounds to extrapolate an eta from.
        assert_eq!(totals, vec![0]);
        assert_eq!(notes.len(), 5);
        assert!(
            notes[0]
                .starts_with("round 1 counted, 0 of 1 parts decided; no interval before round 5"),
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("s of its budget left"), "{}", notes[0]);
        assert!(
            notes[4].starts_with("round 5 counted, 1 of 1 parts decided"),
            "{}",
            notes[4]
        );
    }
}
