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

/// What a part claims of its effect (the median of its per-round value),
/// with its indifference zone: a confirming edge, where the claim is
/// what the field report (or the paper) says, and a refuting edge, where
/// it is plainly false; between them either answer is acceptable. Both
/// are fixed in code before any run. A part is confirmed once its
/// interval excludes the refuting edge and refuted once it excludes the
/// confirming one, so an interval narrower than the zone always decides
/// (fishtest's [elo0, elo1] for Elo, Wald's indifference zone). Each
/// wrong decision is bounded by [`ALPHA`] at its edge: confirming when
/// the truth is at the refuting edge, refuting when it is at the
/// confirming one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", from = "Wire")]
pub enum Target {
    /// At least `confirm`; refuted at `refute` or below (`refute <=
    /// confirm`): confirmed once the lower end is above `refute`, refuted
    /// once the upper end is below `confirm`.
    AtLeast {
        /// The confirming edge (the claim's figure).
        confirm: f64,
        /// The refuting edge.
        refute: f64,
    },
    /// At most `confirm`; refuted at `refute` or above (`confirm <=
    /// refute`).
    AtMost {
        /// The confirming edge.
        confirm: f64,
        /// The refuting edge.
        refute: f64,
    },
    /// Within the inner band `[lo, hi]` (the claim); refuted outside the
    /// outer band `[outer_lo, outer_hi]`: confirmed once the interval
    /// lies inside the outer band, refuted once it misses the inner one.
    Within {
        /// The inner band's lower edge.
        lo: f64,
        /// The inner band's upper edge.
        hi: f64,
        /// The outer band's lower edge.
        outer_lo: f64,
        /// The outer band's upper edge.
        outer_hi: f64,
    },
}

/// How a target reads back: a `results.json` written before zones had one
/// edge (`threshold`, or the band alone), read as a zone of no width,
/// which decides exactly as that run's rule did.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum Wire {
    AtLeast {
        #[serde(alias = "threshold")]
        confirm: f64,
        refute: Option<f64>,
    },
    AtMost {
        #[serde(alias = "threshold")]
        confirm: f64,
        refute: Option<f64>,
    },
    Within {
        lo: f64,
        hi: f64,
        outer_lo: Option<f64>,
        outer_hi: Option<f64>,
    },
}

impl From<Wire> for Target {
    fn from(w: Wire) -> Target {
        match w {
            Wire::AtLeast { confirm, refute } => Target::AtLeast {
                confirm,
                refute: refute.unwrap_or(confirm),
            },
            Wire::AtMost { confirm, refute } => Target::AtMost {
                confirm,
                refute: refute.unwrap_or(confirm),
            },
            Wire::Within {
                lo,
                hi,
                outer_lo,
                outer_hi,
            } => Target::Within {
                lo,
                hi,
                outer_lo: outer_lo.unwrap_or(lo),
                outer_hi: outer_hi.unwrap_or(hi),
            },
        }
    }
}

impl Target {
    /// At least `confirm`, refuted at `refute`.
    pub const fn at_least(confirm: f64, refute: f64) -> Target {
        Target::AtLeast { confirm, refute }
    }

    /// At most `confirm`, refuted at `refute`.
    pub const fn at_most(confirm: f64, refute: f64) -> Target {
        Target::AtMost { confirm, refute }
    }

    /// Within `inner`, refuted outside `outer`.
    pub const fn within(inner: (f64, f64), outer: (f64, f64)) -> Target {
        Target::Within {
            lo: inner.0,
            hi: inner.1,
            outer_lo: outer.0,
            outer_hi: outer.1,
        }
    }

    /// What an interval `[lo, hi]` decides. An interval inside the zone
    /// excludes both edges; it confirms (either answer is acceptable
    /// there, and the text says the interval is inside the zone).
    pub fn decide(&self, lo: f64, hi: f64) -> State {
        match *self {
            Target::AtLeast { refute, .. } if lo > refute => State::Holds,
            Target::AtLeast { confirm, .. } if hi < confirm => State::Fails,
            Target::AtMost { refute, .. } if hi < refute => State::Holds,
            Target::AtMost { confirm, .. } if lo > confirm => State::Fails,
            Target::Within {
                outer_lo, outer_hi, ..
            } if outer_lo < lo && hi < outer_hi => State::Holds,
            Target::Within { lo: a, hi: b, .. } if lo > b || hi < a => State::Fails,
            _ => State::Undecided,
        }
    }

    /// Whether `[lo, hi]` lies between the zone's edges (the effect is
    /// in the zone, where either answer is acceptable).
    pub fn in_zone(&self, lo: f64, hi: f64) -> bool {
        match *self {
            Target::AtLeast { confirm, refute } => refute < lo && hi < confirm,
            Target::AtMost { confirm, refute } => confirm < lo && hi < refute,
            Target::Within {
                lo: a,
                hi: b,
                outer_lo,
                outer_hi,
            } => (outer_lo < lo && hi < a) || (b < lo && hi < outer_hi),
        }
    }

    /// The edges a wrong decision is likeliest at (the simulation's true
    /// medians), each with the decision that is wrong there.
    pub fn edges(&self) -> Vec<(f64, State)> {
        match *self {
            Target::AtLeast { confirm, refute } | Target::AtMost { confirm, refute } => {
                vec![(refute, State::Holds), (confirm, State::Fails)]
            }
            Target::Within {
                lo,
                hi,
                outer_lo,
                outer_hi,
            } => vec![
                (outer_lo, State::Holds),
                (lo, State::Fails),
                (hi, State::Fails),
                (outer_hi, State::Holds),
            ],
        }
    }

    /// The zone's width (the narrowest of a band's two margins): an
    /// interval narrower than it always decides.
    pub fn zone_width(&self) -> f64 {
        match *self {
            Target::AtLeast { confirm, refute } | Target::AtMost { confirm, refute } => {
                (confirm - refute).abs()
            }
            Target::Within {
                lo,
                hi,
                outer_lo,
                outer_hi,
            } => (lo - outer_lo).min(outer_hi - hi),
        }
    }

    /// In words: "at least 5 (zone 3 to 5)", "within [-10, 10] (zone out
    /// to [-20, 20])"; a zone of no width (a recording from before zones)
    /// as its one edge.
    pub fn text(&self, prec: usize) -> String {
        // One edge, or the claim's edge with its zone.
        let edge = |word: &str, confirm: f64, refute: f64| {
            let (a, b) = (refute.min(confirm), refute.max(confirm));
            let zone = if refute == confirm {
                String::new()
            } else {
                format!(" (zone {a:.prec$} to {b:.prec$})")
            };
            format!("{word} {confirm:.prec$}{zone}")
        };
        match *self {
            Target::AtLeast { confirm, refute } => edge("at least", confirm, refute),
            Target::AtMost { confirm, refute } => edge("at most", confirm, refute),
            Target::Within {
                lo,
                hi,
                outer_lo,
                outer_hi,
            } if (outer_lo, outer_hi) == (lo, hi) => format!("within [{lo:.prec$}, {hi:.prec$}]"),
            Target::Within {
                lo,
                hi,
                outer_lo,
                outer_hi,
            } => format!(
                "within [{lo:.prec$}, {hi:.prec$}] (zone out to [{outer_lo:.prec$}, {outer_hi:.prec$}])"
            ),
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
    /// The median of the rounds so far (absent in results written
    /// before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<f64>,
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
    /// The median of the counted rounds' values (NaN, written as null,
    /// when no round counted).
    #[serde(deserialize_with = "null_is_nan")]
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
    /// The counted rounds' values, smallest first (absent in results
    /// written before 3 Dec): what "needs about N more rounds" projects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sorted_values: Vec<f64>,
}

/// serde_json writes a NaN as null: read it back as NaN.
fn null_is_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl PartResult {
    /// `4.1 [3.8, 4.4]`, or `4.1 (no interval yet after 3 rounds)` while
    /// the rounds cannot bound it (never "[-inf, inf]" in text).
    pub fn interval_text(&self) -> String {
        let p = self.prec;
        match (self.low, self.high) {
            _ if !self.estimate.is_finite() => "not measured".into(),
            (Some(lo), Some(hi)) => {
                format!("{:.p$}{} [{lo:.p$}, {hi:.p$}]", self.estimate, self.unit)
            }
            (lo, hi) => {
                let side = match (lo, hi) {
                    (Some(lo), None) => format!(", above {lo:.p$}"),
                    (None, Some(hi)) => format!(", below {hi:.p$}"),
                    _ => String::new(),
                };
                let n = self.looks.last().map_or(0, |l| l.round);
                format!(
                    "{:.p$}{} (no interval yet after {n} round{}{side})",
                    self.estimate,
                    self.unit,
                    if n == 1 { "" } else { "s" }
                )
            }
        }
    }

    /// About how many more rounds an undecided part needs before its
    /// interval is narrower than its zone, where it must decide (`None`
    /// once decided): an interval of the median narrows about as one over
    /// the square root of the rounds, so from width `w` after `n` rounds
    /// it takes about `n (w / zone)^2`; before its first bound, the rounds
    /// to that bound at least.
    pub fn rounds_to_decide(&self) -> Option<usize> {
        self.projected().map(|(more, _)| more)
    }

    /// [`rounds_to_decide`](Self::rounds_to_decide), and whether the
    /// projection reached its ceiling of rounds without deciding.
    ///
    /// With the rounds' values kept, it projects: later rounds drawn as
    /// the ones so far (their empirical quantiles), the interval at `t`
    /// rounds is the quantiles at the ranks the sequence uses, and the
    /// answer is the first `t` whose interval decides. One far value
    /// among nine then costs the rounds an order statistic needs to pass
    /// it (a width rule read it as a spread and asked for 125); values
    /// spread across the zone ask for many. Older records, without
    /// values, get the width rule: an interval narrows about as one over
    /// the square root of the rounds, so from width `w` after `n` rounds
    /// it takes about `n (w / zone)^2`.
    pub fn projected(&self) -> Option<(usize, bool)> {
        // A zone of no width (a recording from before zones) may never
        // decide: no estimate.
        let z = self.target.zone_width();
        if self.state != State::Undecided || z <= 0.0 {
            return None;
        }
        let n = self.looks.last().map_or(0, |l| l.round);
        if self.sorted_values.len() == n && n > 0 {
            return Some(self.project(n));
        }
        let first = cs::first_bounded_round_of(&self.method);
        Some(match (self.low, self.high) {
            (Some(lo), Some(hi)) => {
                let need = (n as f64 * ((hi - lo) / z).powi(2)).ceil() as usize;
                (need.saturating_sub(n).max(1), false)
            }
            _ => (first.saturating_sub(n).max(1), false),
        })
    }

    fn project(&self, n: usize) -> (usize, bool) {
        const CEILING: usize = 2_000;
        let v = &self.sorted_values;
        // The empirical quantile at rank k of t (type 1).
        let q = |k: usize, t: usize| {
            let i = (k as f64 / t as f64 * n as f64).ceil() as usize;
            v[i.clamp(1, n) - 1]
        };
        let mut t = n + 1;
        while t <= CEILING {
            if let Some(s) = cs::reject_count(t, ALPHA) {
                let (mut lo, mut hi) = (q(t - s + 1, t), q(s, t));
                // The running intersection stands.
                lo = lo.max(self.low.unwrap_or(f64::NEG_INFINITY));
                hi = hi.min(self.high.unwrap_or(f64::INFINITY));
                if lo <= hi && self.target.decide(lo, hi) != State::Undecided {
                    return (t - n, false);
                }
            }
            // Every round near the present, then 5 % steps.
            t = if t < n + 40 { t + 1 } else { t + t / 20 };
        }
        (CEILING - n, true)
    }

    /// The decision in a word: confirmed, refuted, undecided.
    pub fn decision_word(&self) -> &'static str {
        match self.state {
            State::Holds => "confirmed",
            State::Fails => "refuted",
            State::Undecided => "undecided",
        }
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
            estimate: finite(self.cs.median()),
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
            sorted_values: self.cs.sorted().to_vec(),
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
            let zone = match (p.low, p.high) {
                (Some(lo), Some(hi)) if p.target.in_zone(lo, hi) => " (inside the zone)",
                _ => "",
            };
            md.push_str(&format!(
                "| {} | {} | {} | {}{zone} | {} |\n",
                p.name,
                p.target.text(p.prec),
                p.interval_text(),
                p.decision_word(),
                p.decided_after.map_or("-".into(), |n| n.to_string())
            ));
        }
        md.push_str(&format!(
            "\nIntervals: {}, {:.0} % each (each end wrong with at most {:.0} % probability, however often it was looked at); rounds whose machine had more than {:.0} % of its CPU stolen are discarded before their figures are read. {}\n",
            // The method the record was made with (a record from before
            // a change of method still reads as what ran).
            self.parts.first().map_or(METHOD, |p| p.method.as_str()),
            100.0 * (1.0 - 2.0 * ALPHA),
            100.0 * ALPHA,
            100.0 * driver::STARVED,
            family_text(self.decided(), "here")
        ));
        md
    }

    /// Parts decided (confirmed or refuted).
    pub fn decided(&self) -> usize {
        self.parts
            .iter()
            .filter(|p| p.state != State::Undecided)
            .count()
    }

    fn stop_text(&self) -> String {
        let secs = self.secs.round() as u64;
        let time = if secs >= 60 {
            format!("{} min {} s", secs / 60, secs % 60)
        } else {
            format!("{secs} s")
        };
        let n = rounds(self.rounds);
        let mut s = match self.stopped {
            Stop::Decided => format!("decided after {n}, {time}"),
            Stop::Budget => format!(
                "undecided at budget after {n}, {time} of {:.0} s",
                self.budget_secs.unwrap_or(0.0)
            ),
            Stop::Fixed => format!("{} fixed rounds (--runs), {time}", self.rounds),
            Stop::MaxRounds => format!("stopped at the round limit, {n}, {time}"),
            Stop::Interrupted => format!("interrupted after {n}, {time}"),
        };
        if self.discarded > 0 {
            s.push_str(&format!(" ({} starved round(s) discarded)", self.discarded));
        }
        if let Some(more) = self.more_text() {
            s.push_str(&format!("; {more}"));
        }
        s
    }

    /// "needs about 12 more rounds (3 min) to decide" for a run that
    /// stopped undecided, at its own rounds' pace.
    pub fn more_text(&self) -> Option<String> {
        if !matches!(
            self.stopped,
            Stop::Budget | Stop::MaxRounds | Stop::Interrupted
        ) {
            return None;
        }
        let (more, ceiling) = self.parts.iter().filter_map(PartResult::projected).max()?;
        let ran = (self.rounds + self.discarded).max(1);
        let secs = self.secs / ran as f64 * more as f64;
        let time = if secs >= 7200.0 {
            format!("{:.1} h", secs / 3600.0)
        } else if secs >= 90.0 {
            format!("{:.0} min", secs / 60.0)
        } else {
            format!("{secs:.0} s")
        };
        let rounds = if more == 1 { "round" } else { "rounds" };
        let about = if ceiling { "more than" } else { "about" };
        Some(format!(
            "needs {about} {more} more {rounds} ({time}) to decide"
        ))
    }

    /// The report's line: "decided after 8 rounds, 3 min 10 s: ...".
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| {
                let verb = match p.state {
                    State::Holds => "confirms",
                    State::Fails => "refutes",
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

/// A decision's error rate and what it implies for `decided` of them
/// (`where_`: "here", "in this run"): each part wrong with at most
/// [`ALPHA`] at its zone's edge, so any of them wrong with at most their
/// sum (Bonferroni), a bound that says nothing once it reaches 1.
pub fn family_text(decided: usize, where_: &str) -> String {
    let sum = decided as f64 * ALPHA;
    let each = format!(
        "Each decision is wrong with at most {:.0} % probability (at its zone's edge; less inside or beyond the zone)",
        100.0 * ALPHA
    );
    match decided {
        0 => format!("{each}; no part was decided {where_}."),
        1 => format!("{each}; one part was decided {where_}."),
        _ if sum < 1.0 => format!(
            "{each}; {decided} parts were decided {where_}, so at most {:.0} % that any of them is wrong (Bonferroni: their sum).",
            100.0 * sum
        ),
        _ => format!(
            "{each}; {decided} parts were decided {where_}, whose sum of rates ({:.2}) bounds nothing: read each decision at its own rate.",
            sum
        ),
    }
}

/// "1 round", "N rounds".
pub(crate) fn rounds(n: usize) -> String {
    match n {
        1 => "1 round".to_string(),
        n => format!("{n} rounds"),
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
        let mut t = Tracker::new(spec(Target::at_least(5.0, 5.0)));
        for x in [8.0, 9.0, 8.5, 7.9] {
            t.push(x);
            assert_eq!(t.state(), State::Undecided);
        }
        t.push(9.1);
        assert_eq!(t.state(), State::Holds);
        let r = t.result();
        assert_eq!(
            (r.decided_after, r.low, r.high),
            (Some(5), Some(7.9), Some(9.1))
        );
        // Later values cannot take it back.
        for _ in 0..10 {
            t.push(1.0);
        }
        assert_eq!(t.state(), State::Holds);
        assert_eq!(r.looks.len(), 5);
        assert!(
            r.interval_text().starts_with("8.5 [7.9, 9.1]"),
            "{}",
            r.interval_text()
        );
    }

    #[test]
    fn bands_and_upper_bounds_decide_both_ways() {
        let b = Target::within((-0.3, 0.3), (-0.3, 0.3));
        assert_eq!(b.decide(-0.1, 0.2), State::Holds);
        assert_eq!(b.decide(0.4, 0.9), State::Fails);
        assert_eq!(b.decide(0.1, 0.5), State::Undecided);
        let m = Target::at_most(1.0, 1.0);
        assert_eq!(m.decide(0.2, 0.9), State::Holds);
        assert_eq!(m.decide(1.1, 2.0), State::Fails);
        assert_eq!(b.text(1), "within [-0.3, 0.3]");
    }

    #[test]
    fn a_zone_decides_once_the_interval_is_narrower_than_it() {
        // At least 5, refuted at 3: every interval narrower than 2
        // decides, wherever it sits; one straddling the whole zone does not.
        let t = Target::at_least(5.0, 3.0);
        for i in 0..=80 {
            let lo = i as f64 * 0.1;
            assert_ne!(t.decide(lo, lo + 1.99), State::Undecided, "{lo}");
        }
        assert_eq!(t.decide(2.9, 5.1), State::Undecided);
        assert_eq!(t.decide(3.1, 4.0), State::Holds);
        assert!(t.in_zone(3.1, 4.0));
        assert_eq!(t.decide(2.0, 4.9), State::Fails);
        assert_eq!(t.text(0), "at least 5 (zone 3 to 5)");
        let m = Target::at_most(1.0, 1.2);
        assert_eq!(m.decide(0.5, 1.19), State::Holds);
        assert_eq!(m.decide(1.01, 1.5), State::Fails);
        assert_eq!(m.text(1), "at most 1.0 (zone 1.0 to 1.2)");
        // A band: confirmed inside the outer band, refuted off the inner.
        let b = Target::within((-10.0, 10.0), (-20.0, 20.0));
        assert_eq!(b.decide(12.0, 19.0), State::Holds);
        assert_eq!(b.decide(11.0, 25.0), State::Fails);
        assert_eq!(b.decide(-25.0, 9.0), State::Undecided);
        assert_eq!(b.zone_width(), 10.0);
        for i in 0..=60 {
            let lo = -30.0 + i as f64;
            assert_ne!(b.decide(lo, lo + 9.9), State::Undecided, "{lo}");
        }
        assert_eq!(
            b.edges(),
            vec![
                (-20.0, State::Holds),
                (-10.0, State::Fails),
                (10.0, State::Fails),
                (20.0, State::Holds)
            ]
        );
    }

    #[test]
    fn a_target_from_before_zones_reads_as_a_zone_of_no_width() {
        let t: Target = serde_json::from_str(r#"{"kind":"at-least","threshold":5.0}"#).unwrap();
        assert_eq!(t, Target::at_least(5.0, 5.0));
        let b: Target = serde_json::from_str(r#"{"kind":"within","lo":-1.0,"hi":1.0}"#).unwrap();
        assert_eq!(b, Target::within((-1.0, 1.0), (-1.0, 1.0)));
        // And a zone survives its own round trip.
        let z = Target::within((0.4, 0.6), (0.3, 0.7));
        let back: Target = serde_json::from_str(&serde_json::to_string(&z).unwrap()).unwrap();
        assert_eq!(back, z);
    }

    #[test]
    fn an_undecided_run_says_how_many_more_rounds_it_needs() {
        // Eight rounds spread over 4 with a zone of 1: about 8 (4/1)^2.
        let rounds: Vec<Vec<f64>> = [1.0, 5.0, 2.0, 4.0, 3.0, 1.5, 4.5, 3.0]
            .iter()
            .map(|v| vec![*v])
            .collect();
        let mut r = Record::of_rounds(
            vec![spec(Target::at_least(3.5, 2.5))],
            &rounds,
            Stop::Budget,
        );
        r.secs = 80.0;
        let more = r.parts[0].rounds_to_decide().expect("undecided");
        assert!(more > 50 && more < 200, "{more}");
        let t = r.more_text().expect("a budget stop");
        assert!(
            t.starts_with(&format!("needs about {more} more rounds (")),
            "{t}"
        );
        // Three rounds: at least to the first bound (round 5).
        let r3 = Record::of_rounds(
            vec![spec(Target::at_least(3.5, 2.5))],
            &rounds[..3],
            Stop::Budget,
        );
        assert!(r3.parts[0].rounds_to_decide() >= Some(2));
        // One far value among nine (cold-start's 41.5 ms beside 3 ms,
        // 3 Dec) in a band out to 20: the rounds an order statistic
        // needs to pass it, not the width rule's hundred and more.
        let far: Vec<Vec<f64>> = [3.0, 2.9, 3.1, 41.5, 3.0, 2.8, 3.2, 3.0, 3.1]
            .iter()
            .map(|v| vec![*v])
            .collect();
        let band = Target::within((-10.0, 10.0), (-20.0, 20.0));
        let mut rf = Record::of_rounds(vec![spec(band)], &far, Stop::Budget);
        let more = rf.parts[0].rounds_to_decide().expect("undecided");
        assert!((1..=10).contains(&more), "{more}");
        rf.parts[0].sorted_values.clear();
        let width_rule = rf.parts[0].rounds_to_decide().expect("undecided");
        assert!(width_rule > 50, "{width_rule}");
        // Values that straddle a threshold forever: more than the ceiling.
        let even: Vec<Vec<f64>> = (0..10).map(|i| vec![(i % 2) as f64]).collect();
        let re = Record::of_rounds(vec![spec(Target::at_least(0.6, 0.4))], &even, Stop::Budget);
        assert!(re.more_text().unwrap().starts_with("needs more than"));
        // Decided: nothing more.
        let done = Record::of_rounds(
            vec![spec(Target::at_least(0.5, 0.4))],
            &rounds,
            Stop::Decided,
        );
        assert_eq!(done.more_text(), None);
    }

    #[test]
    fn the_family_bound_is_the_sum_of_the_decided_parts_rates() {
        assert!(family_text(4, "here").contains("at most 20 % that any"));
        assert!(family_text(0, "here").contains("no part was decided"));
        assert!(family_text(25, "in this run").contains("bounds nothing"));
    }

    #[test]
    fn the_main_part_decides_the_outcome() {
        use crate::verdict::Outcome;
        let r = |state| PartResult {
            name: "p".into(),
            target: Target::at_least(0.0, 0.0),
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
            sorted_values: vec![],
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
