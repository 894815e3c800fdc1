//! `--budget`: the whole run's time, shared among its phases (the
//! experiments that run at once, then each that runs alone) by what each
//! needs ([`crate::Cost`]). A phase's share is set when it starts, from
//! the time left: when every phase left can have what its decisive
//! comparison needs, each gets that and the rest is split by what their
//! descriptive extras plan for; when not, the phase gets its need as far
//! as the time left, less one round of each phase after it, allows (so a
//! short budget decides the cheap verdicts first and leaves the later
//! ones undecided, never unrun). What one phase saves by deciding early
//! goes to the phases after it. Inside its share an experiment runs
//! rounds until decided ([`crate::sequential::driver`]), then its
//! descriptive extras.

use crate::{Experiment, LabError, LabOptions};
use std::time::{Duration, Instant};

/// The default budget: what holds a whole run in 15 minutes on this
/// 2-core machine, build excluded (the rounds in flight at a share's end
/// and the set-ups and tear-downs take the minute left; docs/lab.md has
/// the run).
pub const DEFAULT: Duration = Duration::from_secs(14 * 60);

/// `--quick`: a short budget.
pub const QUICK: Duration = Duration::from_secs(5 * 60);

/// The budget the flags ask for: `--budget`, `--quick`'s short one, none
/// with `--runs` (fixed rounds), else [`DEFAULT`].
pub fn of_flags(
    budget: Option<tcpwise_units::Nanos>,
    quick: bool,
    runs: Option<usize>,
) -> Option<Duration> {
    match (budget, quick, runs) {
        (Some(ns), _, _) => Some(Duration::from_nanos(ns)),
        (None, _, Some(_)) => None,
        (None, true, None) => Some(QUICK),
        (None, false, None) => Some(DEFAULT),
    }
}

/// Seconds left for this experiment's descriptive extras (`None`: no
/// budget, or fixed rounds with `--runs`): its share, or less where the
/// phases after it need the rest for their decisions
/// ([`LabOptions::extras_until`]).
pub fn left(opts: &LabOptions) -> Option<f64> {
    let until = match (opts.deadline, opts.extras_until) {
        (Some(d), Some(e)) => Some(d.min(e)),
        (d, _) => d,
    };
    secs_to(opts, until)
}

/// Seconds left of this experiment's whole share, for plans that size
/// the decision's own rounds by it.
pub fn share_left(opts: &LabOptions) -> Option<f64> {
    secs_to(opts, opts.deadline)
}

fn secs_to(opts: &LabOptions, until: Option<Instant>) -> Option<f64> {
    if opts.runs.is_some() {
        return None;
    }
    until.map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64())
}

/// For descriptive extras that run in whole rounds (completion's
/// tables): how many units of `per` seconds the share left holds after
/// `setup`, between `least` and `most`; `most` without a budget.
pub fn fit(opts: &LabOptions, per: f64, setup: f64, least: usize, most: usize) -> usize {
    fit_part(opts, 1, per, setup, most).max(least)
}

/// The descriptive extras' fit: units of `per` seconds that one of
/// `parts` equal parts of the time left holds after `setup`, at most
/// `most` (`most` without a budget or with `--runs`).
pub fn fit_part(opts: &LabOptions, parts: usize, per: f64, setup: f64, most: usize) -> usize {
    match left(opts) {
        Some(l) => (((l / parts.max(1) as f64 - setup) / per).max(0.0) as usize).min(most),
        None => most,
    }
}

/// One phase of a run: its experiments' names and what it asks of the
/// budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// The experiments in it (several run at once).
    pub names: Vec<&'static str>,
    /// The largest of its experiments' costs, field by field.
    pub cost: crate::Cost,
}

/// The phases of a run of `chosen`: those that share the machine at once
/// (if any), then each that runs alone, in [`crate::Plan::run`]'s order.
pub fn phases(chosen: &[Box<dyn Experiment>], opts: &LabOptions) -> Vec<Phase> {
    let (alone, shared): (Vec<&dyn Experiment>, Vec<&dyn Experiment>) =
        chosen.iter().map(|e| e.as_ref()).partition(|e| e.alone());
    let mut v = Vec::new();
    let phase = |es: &[&dyn Experiment]| {
        let most =
            |f: fn(&crate::Cost) -> f64| es.iter().map(|e| f(&e.cost(opts))).fold(0.0, f64::max);
        Phase {
            names: es.iter().map(|e| e.name()).collect(),
            cost: crate::Cost {
                need: most(|c| c.need),
                planned: most(|c| c.planned),
                first_round: most(|c| c.first_round),
            },
        }
    };
    if !shared.is_empty() {
        v.push(phase(&shared));
    }
    v.extend(alone.iter().map(|e| phase(&[*e])));
    v
}

/// Refuses a budget too small for one round of every phase.
pub fn check(phases: &[Phase], budget: Duration) -> Result<(), LabError> {
    let least: f64 = phases.iter().map(|p| p.cost.first_round).sum();
    if budget.as_secs_f64() >= least {
        return Ok(());
    }
    let rounds: Vec<String> = phases
        .iter()
        .map(|p| format!("{} {:.0} s", p.names.join(" + "), p.cost.first_round))
        .collect();
    Err(LabError::Usage(format!(
        "--budget {}: too small for one round of each experiment ({}); this selection needs --budget {} or more",
        text(budget),
        rounds.join(", "),
        text(Duration::from_secs_f64(least.ceil()))
    )))
}

/// A phase's share of `left` seconds, `costs` being its own and those of
/// the phases after it (see the module's text).
pub fn share(left: f64, costs: &[crate::Cost]) -> f64 {
    let Some((me, rest)) = costs.split_first() else {
        return left;
    };
    let need: f64 = costs.iter().map(|c| c.need).sum();
    if left >= need {
        let extras: f64 = costs.iter().map(|c| (c.planned - c.need).max(0.0)).sum();
        let mine = (me.planned - me.need).max(0.0);
        let part = if extras > 0.0 {
            mine / extras
        } else {
            1.0 / costs.len() as f64
        };
        return me.need + (left - need) * part;
    }
    let floors: f64 = rest.iter().map(|c| c.first_round).sum();
    me.need.min(left - floors).max(me.first_round.min(left))
}

/// `14 min`, `4 min 10 s`, `45 s`.
pub fn text(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 60, s % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

/// The phases' deadlines, handed out as each starts.
pub struct Shares {
    budget: Option<Duration>,
    start: Instant,
    costs: Vec<crate::Cost>,
    next: usize,
}

impl Shares {
    /// For a run of `phases` under `opts.budget` (none: no deadlines).
    pub fn new(opts: &LabOptions, phases: &[Phase]) -> Shares {
        Shares {
            budget: opts.budget,
            start: Instant::now(),
            costs: phases.iter().map(|p| p.cost).collect(),
            next: 0,
        }
    }

    /// The next phase's deadline (now plus its share of the time left),
    /// and where its extras end when the phases after it would get less
    /// than they need (`None`: its whole share).
    pub fn next_deadline(&mut self) -> (Option<Instant>, Option<Instant>) {
        let Some(budget) = self.budget else {
            return (None, None);
        };
        let rest = &self.costs[self.next.min(self.costs.len())..];
        self.next += 1;
        let left = budget.saturating_sub(self.start.elapsed()).as_secs_f64();
        let mine = share(left, rest).clamp(0.0, left);
        let now = Instant::now();
        let after: f64 = rest.iter().skip(1).map(|c| c.need).sum();
        let lack = after - (left - mine);
        let extras = (lack > 0.0).then(|| now + Duration::from_secs_f64((mine - lack).max(0.0)));
        (Some(now + Duration::from_secs_f64(mine)), extras)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cost;

    fn c(need: f64, planned: f64, first_round: f64) -> Cost {
        Cost {
            need,
            planned,
            first_round,
        }
    }

    fn p(name: &'static str, cost: Cost) -> Phase {
        Phase {
            names: vec![name],
            cost,
        }
    }

    #[test]
    fn a_budget_too_small_for_a_round_of_each_is_refused_naming_the_least() {
        let ph = [p("a", c(100.0, 300.0, 60.0)), p("b", c(50.0, 100.0, 50.0))];
        assert!(check(&ph, Duration::from_secs(110)).is_ok());
        let e = check(&ph, Duration::from_secs(100))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a 60 s, b 50 s"), "{e}");
        assert!(e.contains("--budget 1 min 50 s or more"), "{e}");
    }

    #[test]
    fn needs_come_first_and_extras_share_the_rest() {
        let costs = [c(100.0, 200.0, 20.0), c(50.0, 150.0, 10.0)];
        // Both needs fit (150 of 350): 200 left over, split 100:100.
        assert_eq!(share(350.0, &costs), 200.0);
        // Not both: the first gets its need, the second keeps a round.
        assert_eq!(share(120.0, &costs), 100.0);
        assert_eq!(share(100.0, &costs), 90.0);
        // Less than a round: a round, as far as the time goes.
        assert_eq!(share(15.0, &costs), 15.0);
        assert_eq!(share(40.0, &costs[1..]), 40.0);
    }

    #[test]
    fn shares_hand_out_deadlines_in_order() {
        let opts = LabOptions {
            budget: Some(Duration::from_secs(350)),
            ..LabOptions::for_tests(false, None)
        };
        let phases = [p("a", c(100.0, 200.0, 20.0)), p("b", c(50.0, 150.0, 10.0))];
        let mut s = Shares::new(&opts, &phases);
        let secs = |t: Option<Instant>| t.unwrap().duration_since(Instant::now()).as_secs_f64();
        let (first, extras) = s.next_deadline();
        assert!((secs(first) - 200.0).abs() < 1.0, "{first:?}");
        assert_eq!(extras, None, "b keeps its need: a's extras have a's share");
        // Nothing was spent: b gets all that is left.
        let (second, _) = s.next_deadline();
        assert!((secs(second) - 350.0).abs() < 1.0);
        assert_eq!(text(Duration::from_secs(250)), "4 min 10 s");
    }

    #[test]
    fn a_starved_run_gives_what_a_decision_saves_to_the_next_not_to_extras() {
        // 120 s for needs of 100 and 50: a gets its 100 less b's round
        // (90 s), and its extras end where b would lose more of its need:
        // at 90 - (50 - 30) = 70 s.
        let opts = LabOptions {
            budget: Some(Duration::from_secs(120)),
            ..LabOptions::for_tests(false, None)
        };
        let phases = [p("a", c(100.0, 200.0, 20.0)), p("b", c(50.0, 150.0, 30.0))];
        let mut s = Shares::new(&opts, &phases);
        let secs = |t: Option<Instant>| t.unwrap().duration_since(Instant::now()).as_secs_f64();
        let (share, extras) = s.next_deadline();
        assert!((secs(share) - 90.0).abs() < 1.0, "{share:?}");
        assert!((secs(extras) - 70.0).abs() < 1.0, "{extras:?}");
        let a = LabOptions {
            deadline: share,
            extras_until: extras,
            ..opts.clone()
        };
        let (l, whole) = (left(&a).unwrap(), share_left(&a).unwrap());
        assert!(
            (l - 70.0).abs() < 1.0 && (whole - 90.0).abs() < 1.0,
            "{l} {whole}"
        );
    }
}
