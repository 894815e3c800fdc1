//! Sequential decisions: an experiment runs in rounds and stops as soon
//! as every part of its criterion is decided, with intervals valid at
//! every look ([`cs`]), or when its budget ends (*undecided*, with the
//! intervals reached). One mechanism for every experiment: a criterion
//! is a list of [`PartSpec`]s, each an effect against a threshold or a
//! band; a round gives one value per part (paired: the arms of a round
//! ran back to back on the same path); [`Tracker`] keeps each part's
//! interval and decision; [`driver`] is the loop (rounds, budget, the
//! rule that discards a starved round, progress, Ctrl-C).

pub mod cs;
pub mod driver;
#[cfg(test)]
mod sim_tests;

pub use cs::{ALPHA, METHOD};
use serde::{Deserialize, Serialize};

/// What a part claims of its effect (the median of its per-round value).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Target {
    /// At least `threshold` (one-sided).
    AtLeast {
        /// The threshold.
        threshold: f64,
    },
    /// At most `threshold` (one-sided).
    AtMost {
        /// The threshold.
        threshold: f64,
    },
    /// Within `[lo, hi]` (two-sided).
    Within {
        /// Lower edge.
        lo: f64,
        /// Upper edge.
        hi: f64,
    },
}

impl Target {
    /// What an interval `[lo, hi]` decides.
    pub fn decide(&self, lo: f64, hi: f64) -> State {
        match *self {
            Target::AtLeast { threshold } if lo > threshold => State::Holds,
            Target::AtLeast { threshold } if hi < threshold => State::Fails,
            Target::AtMost { threshold } if hi < threshold => State::Holds,
            Target::AtMost { threshold } if lo > threshold => State::Fails,
            Target::Within { lo: a, hi: b } if a < lo && hi < b => State::Holds,
            Target::Within { lo: a, hi: b } if lo > b || hi < a => State::Fails,
            _ => State::Undecided,
        }
    }

    /// The edges a wrong decision is likeliest at (the simulation's
    /// true medians).
    pub fn edges(&self) -> Vec<f64> {
        match *self {
            Target::AtLeast { threshold } | Target::AtMost { threshold } => vec![threshold],
            Target::Within { lo, hi } => vec![lo, hi],
        }
    }

    /// In words: "at least 5", "within [-0.3, 0.3]".
    pub fn text(&self, prec: usize) -> String {
        match *self {
            Target::AtLeast { threshold } => format!("at least {threshold:.prec$}"),
            Target::AtMost { threshold } => format!("at most {threshold:.prec$}"),
            Target::Within { lo, hi } => format!("within [{lo:.prec$}, {hi:.prec$}]"),
        }
    }
}

/// A part's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// The interval clears the threshold (or lies inside the band).
    Holds,
    /// The interval lies on the wrong side (or outside the band).
    Fails,
    /// Neither yet.
    Undecided,
}

/// One part of a criterion, fixed before the run.
#[derive(Debug, Clone, PartialEq)]
pub struct PartSpec {
    /// What the per-round value is ("autotuned over static goodput").
    pub name: String,
    /// What it claims.
    pub target: Target,
    /// Its unit as printed after a figure ("", " ms", " RTT").
    pub unit: &'static str,
    /// Decimals it is printed with.
    pub prec: usize,
    /// The planning figure: a typical round's value and the spread
    /// between rounds (a standard deviation) that earlier runs measured.
    /// The simulation test draws its clear effect from it; it never
    /// enters a decision.
    pub planning: (f64, f64),
}

/// One look at a part: the round and the interval after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// Rounds counted so far.
    pub round: usize,
    /// Lower end (`None`: not bounded yet).
    pub low: Option<f64>,
    /// Upper end.
    pub high: Option<f64>,
}

/// A part's effect and interval as `results.json` keeps them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartResult {
    /// What the per-round value is.
    pub name: String,
    /// What it claims.
    pub target: Target,
    /// The unit printed after a figure.
    pub unit: String,
    /// Decimals.
    #[serde(default)]
    pub prec: usize,
    /// The median of the counted rounds' values.
    pub estimate: f64,
    /// The interval's lower end (`None`: not bounded yet).
    pub low: Option<f64>,
    /// Its upper end.
    pub high: Option<f64>,
    /// Its level: 1 - 2 alpha for both ends together, `1 - alpha` each.
    pub level: f64,
    /// How the interval is made.
    pub method: String,
    /// The decision.
    pub state: State,
    /// Rounds it was decided after (`None`: undecided).
    pub decided_after: Option<usize>,
    /// The interval after every round, for the narrowing plot.
    pub looks: Vec<Look>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl PartResult {
    /// `4.1 [3.8, 4.4]` (an open end as `-inf`/`inf`).
    pub fn interval_text(&self) -> String {
        let p = self.prec;
        let end = |x: Option<f64>, inf: &str| x.map_or(inf.to_string(), |v| format!("{v:.p$}"));
        format!(
            "{:.p$}{} [{}, {}]",
            self.estimate,
            self.unit,
            end(self.low, "-inf"),
            end(self.high, "inf")
        )
    }
}

/// A part's running state: its rounds' values, the interval (the running
/// intersection of every look's, valid since each look's is) and the
/// decision, which never changes once made.
#[derive(Debug, Clone)]
pub struct Tracker {
    spec: PartSpec,
    cs: cs::MedianCs,
    lo: f64,
    hi: f64,
    state: State,
    decided_after: Option<usize>,
    looks: Vec<Look>,
}

impl Tracker {
    /// A part with no rounds yet.
    pub fn new(spec: PartSpec) -> Tracker {
        Tracker {
            spec,
            cs: cs::MedianCs::default(),
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            state: State::Undecided,
            decided_after: None,
            looks: Vec::new(),
        }
    }

    /// Takes a round's value (a NaN, a round the part could not use, is
    /// left out) and looks again.
    pub fn push(&mut self, x: f64) {
        if x.is_nan() {
            return;
        }
        self.cs.push(x);
        let (lo, hi) = self.cs.interval(ALPHA);
        // The intersection of valid intervals is valid; should drift
        // empty it, the newest interval stands.
        let (l, h) = (self.lo.max(lo), self.hi.min(hi));
        (self.lo, self.hi) = if l <= h { (l, h) } else { (lo, hi) };
        let n = self.cs.len();
        if self.state == State::Undecided {
            self.state = self.spec.target.decide(self.lo, self.hi);
            if self.state != State::Undecided {
                self.decided_after = Some(n);
            }
        }
        self.looks.push(Look {
            round: n,
            low: finite(self.lo),
            high: finite(self.hi),
        });
    }

    /// The decision so far.
    pub fn state(&self) -> State {
        self.state
    }

    /// What `results.json` keeps.
    pub fn result(&self) -> PartResult {
        PartResult {
            name: self.spec.name.clone(),
            target: self.spec.target,
            unit: self.spec.unit.into(),
            prec: self.spec.prec,
            estimate: self.cs.median(),
            low: finite(self.lo),
            high: finite(self.hi),
            level: 1.0 - 2.0 * ALPHA,
            method: METHOD.into(),
            state: self.state,
            decided_after: self.decided_after,
            looks: self.looks.clone(),
        }
    }
}

/// Why a run of rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// Every part decided.
    Decided,
    /// The budget could not hold another round.
    Budget,
    /// `--runs N`: a fixed number of rounds, no stopping.
    Fixed,
    /// The round limit (a budget's ceiling on rounds) was reached.
    MaxRounds,
    /// Ctrl-C or SIGTERM; the intervals reached stay valid.
    Interrupted,
}

/// What a run of rounds decided, as `results.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Each part.
    pub parts: Vec<PartResult>,
    /// Rounds counted.
    pub rounds: usize,
    /// Rounds run but discarded by the starvation rule (their figures
    /// are in the details; they count for nothing).
    pub discarded: usize,
    /// Seconds the rounds took.
    pub secs: f64,
    /// Why it stopped.
    pub stopped: Stop,
    /// The time it was given, seconds (`None`: fixed rounds).
    pub budget_secs: Option<f64>,
}

/// How a criterion's parts make its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Every part is the claim: all hold, reproduced; any fails, not
    /// reproduced.
    All,
    /// The first `k` parts are the claim, the others its details: the
    /// claim holds and a detail fails, reproduced with a difference.
    Main(usize),
}

/// The outcome the parts give, combined as `how` says; undecided while a
/// part that could change it is.
pub fn outcome(parts: &[PartResult], how: Combine) -> crate::verdict::Outcome {
    use crate::verdict::Outcome;
    if parts.is_empty() {
        return Outcome::Undecided;
    }
    let any = |v: &[PartResult], s: State| v.iter().any(|p| p.state == s);
    let k = match how {
        Combine::All => parts.len(),
        Combine::Main(k) => k.clamp(1, parts.len()),
    };
    let (claim, rest) = parts.split_at(k);
    if any(claim, State::Fails) {
        Outcome::NotReproduced
    } else if any(parts, State::Undecided) {
        Outcome::Undecided
    } else if any(rest, State::Fails) {
        Outcome::Differs
    } else {
        Outcome::Reproduced
    }
}

impl Record {
    /// The decision `rounds` (one value per part each, all counted) make
    /// of `specs`, as a run that stopped `stopped` after them would
    /// record it: the analyses' tests and fixtures build theirs so.
    pub fn of_rounds(specs: Vec<PartSpec>, rounds: &[Vec<f64>], stopped: Stop) -> Record {
        let mut parts: Vec<Tracker> = specs.into_iter().map(Tracker::new).collect();
        for r in rounds {
            for (p, v) in parts.iter_mut().zip(r) {
                p.push(*v);
            }
        }
        Record {
            parts: parts.iter().map(Tracker::result).collect(),
            rounds: rounds.len(),
            discarded: 0,
            secs: 0.0,
            stopped,
            budget_secs: None,
        }
    }

    /// The section's lines under the verdict: how the run stopped, and
    /// each part's effect and interval.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "\n**Decision**: {}.\n\n| part | claim | median [interval] | decision | after rounds |\n|---|---|---|---|---|\n",
            self.stop_text()
        );
        for p in &self.parts {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                p.name,
                p.target.text(p.prec),
                p.interval_text(),
                match p.state {
                    State::Holds => "holds",
                    State::Fails => "fails",
                    State::Undecided => "undecided",
                },
                p.decided_after.map_or("-".into(), |n| n.to_string())
            ));
        }
        md.push_str(&format!(
            "\nIntervals: {}, {:.0} % each (each end wrong with at most {:.0} % probability, however often it was looked at); rounds whose machine had more than {:.0} % of its CPU stolen are discarded before their figures are read.\n",
            METHOD,
            100.0 * (1.0 - 2.0 * ALPHA),
            100.0 * ALPHA,
            100.0 * driver::STARVED
        ));
        md
    }

    fn stop_text(&self) -> String {
        let secs = self.secs.round() as u64;
        let time = if secs >= 60 {
            format!("{} min {} s", secs / 60, secs % 60)
        } else {
            format!("{secs} s")
        };
        let mut s = match self.stopped {
            Stop::Decided => format!("decided after {} rounds, {time}", self.rounds),
            Stop::Budget => format!(
                "undecided at budget after {} rounds, {time} of {:.0} s",
                self.rounds,
                self.budget_secs.unwrap_or(0.0)
            ),
            Stop::Fixed => format!("{} fixed rounds (--runs), {time}", self.rounds),
            Stop::MaxRounds => {
                format!("stopped at the round limit, {} rounds, {time}", self.rounds)
            }
            Stop::Interrupted => format!("interrupted after {} rounds, {time}", self.rounds),
        };
        if self.discarded > 0 {
            s.push_str(&format!(" ({} starved round(s) discarded)", self.discarded));
        }
        s
    }

    /// The report's line: "decided after 8 rounds, 3 min 10 s: ...".
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| {
                let verb = match p.state {
                    State::Holds => "clears",
                    State::Fails => "misses",
                    State::Undecided => "does not yet decide",
                };
                format!(
                    "{} {} {verb} {}",
                    p.name,
                    p.interval_text(),
                    p.target.text(p.prec)
                )
            })
            .collect();
        format!("{}: {}", self.stop_text(), parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(target: Target) -> PartSpec {
        PartSpec {
            name: "x".into(),
            target,
            unit: "",
            prec: 1,
            planning: (0.0, 1.0),
        }
    }

    #[test]
    fn a_part_is_decided_once_and_stays_decided() {
        let mut t = Tracker::new(spec(Target::AtLeast { threshold: 5.0 }));
        for x in [8.0, 9.0, 8.5, 7.9, 8.8, 9.1] {
            t.push(x);
            assert_eq!(t.state(), State::Undecided);
        }
        t.push(8.2);
        assert_eq!(t.state(), State::Holds);
        let r = t.result();
        assert_eq!(
            (r.decided_after, r.low, r.high),
            (Some(7), Some(7.9), Some(9.1))
        );
        // Later values cannot take it back.
        for _ in 0..10 {
            t.push(1.0);
        }
        assert_eq!(t.state(), State::Holds);
        assert_eq!(r.looks.len(), 7);
        assert!(
            r.interval_text().starts_with("8.5 [7.9, 9.1]"),
            "{}",
            r.interval_text()
        );
    }

    #[test]
    fn bands_and_upper_bounds_decide_both_ways() {
        let b = Target::Within { lo: -0.3, hi: 0.3 };
        assert_eq!(b.decide(-0.1, 0.2), State::Holds);
        assert_eq!(b.decide(0.4, 0.9), State::Fails);
        assert_eq!(b.decide(0.1, 0.5), State::Undecided);
        let m = Target::AtMost { threshold: 1.0 };
        assert_eq!(m.decide(0.2, 0.9), State::Holds);
        assert_eq!(m.decide(1.1, 2.0), State::Fails);
        assert_eq!(b.edges(), vec![-0.3, 0.3]);
    }

    #[test]
    fn the_main_part_decides_the_outcome() {
        use crate::verdict::Outcome;
        let r = |state| PartResult {
            name: "p".into(),
            target: Target::AtLeast { threshold: 0.0 },
            unit: String::new(),
            prec: 0,
            estimate: 0.0,
            low: None,
            high: None,
            level: 0.9,
            method: METHOD.into(),
            state,
            decided_after: None,
            looks: vec![],
        };
        use State::*;
        let m = Combine::Main(1);
        assert_eq!(outcome(&[r(Holds), r(Holds)], m), Outcome::Reproduced);
        assert_eq!(outcome(&[r(Holds), r(Fails)], m), Outcome::Differs);
        assert_eq!(outcome(&[r(Fails), r(Holds)], m), Outcome::NotReproduced);
        assert_eq!(outcome(&[r(Undecided), r(Holds)], m), Outcome::Undecided);
        assert_eq!(outcome(&[r(Holds), r(Undecided)], m), Outcome::Undecided);
        let a = Combine::All;
        assert_eq!(outcome(&[r(Holds), r(Fails)], a), Outcome::NotReproduced);
        assert_eq!(
            outcome(&[r(Undecided), r(Fails)], a),
            Outcome::NotReproduced
        );
        assert_eq!(outcome(&[r(Holds), r(Undecided)], a), Outcome::Undecided);
        assert_eq!(outcome(&[r(Holds), r(Holds)], a), Outcome::Reproduced);
    }
}
