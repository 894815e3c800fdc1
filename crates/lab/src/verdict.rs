//! Whether a field report's claim held on this machine. Each experiment states
//! its criterion in its code, before anything runs, and decides from
//! the figures it measured; the report shows the outcome, the criterion
//! and the figures (with their intervals where the samples give one)
//! in its first table and at the top of the experiment's section, and
//! `results.json` keeps them for scripts.

use serde::{Deserialize, Serialize};

/// What the figures say of the field report's claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The claim held by its criterion.
    Reproduced,
    /// The main claim held; a part of it did not (said in `measured`).
    Differs,
    /// The claim did not hold.
    NotReproduced,
    /// The run has too few samples to decide (a `--quick` run of an
    /// experiment with fixed repetitions).
    TooFewSamples,
    /// The budget ended before the intervals decided (a sequential
    /// experiment; the intervals reached are in the report).
    Undecided,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Reproduced => "reproduced",
            Outcome::Differs => "reproduced, with a difference",
            Outcome::NotReproduced => "not reproduced",
            Outcome::TooFewSamples => "too few samples",
            Outcome::Undecided => "undecided at budget",
        })
    }
}

/// A verdict: the outcome, the criterion it was decided by, and what was
/// measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The outcome.
    pub outcome: Outcome,
    /// The criterion, as the experiment states it.
    pub criterion: String,
    /// The figures it was decided from.
    pub measured: String,
}

impl Verdict {
    /// The line at the top of the experiment's section.
    pub fn line(&self) -> String {
        format!(
            "**Verdict: {}.** Criterion: {}. Measured: {}.\n",
            self.outcome, self.criterion, self.measured
        )
    }

    /// The first table's cell.
    pub fn cell(&self) -> String {
        format!("**{}**: {}", self.outcome, self.measured)
    }
}

/// The 95 % interval of a median from the order statistics of an
/// ascending sample, or `None` under 6 samples, where no such interval
/// exists (see [`median_interval`]).
pub fn median_ci(sorted: &[f64]) -> Option<(f64, f64)> {
    median_interval(sorted)
        .filter(|i| i.level >= 0.95)
        .map(|i| (i.lo, i.hi))
}

/// An interval around a median and the confidence it has: at least 95 %
/// from 6 samples on; below that the widest one there is (the smallest
/// and largest value), at the confidence so few samples give.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The median.
    pub median: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// The probability that it holds the true median (0.75 for the range
    /// of 3 runs, at least 0.95 from 6 on).
    pub level: f64,
    /// Samples it comes from.
    pub n: usize,
}

impl Interval {
    /// `[lo, hi]` with `prec` decimals, and the confidence when it is
    /// under 95 % (`[1.0, 3.0] (75 %, 3 runs)`).
    pub fn text(&self, prec: usize) -> String {
        let mut s = format!("[{:.prec$}, {:.prec$}]", self.lo, self.hi);
        if self.level < 0.95 {
            s.push_str(&format!(
                " ({:.0} %, {} runs)",
                (self.level * 100.0).floor(),
                self.n
            ));
        }
        s
    }

    /// `median [lo, hi]`.
    pub fn with_median(&self, prec: usize) -> String {
        format!("{:.prec$} {}", self.median, self.text(prec))
    }

    /// Whether the two intervals share no value.
    pub fn apart(&self, other: &Interval) -> bool {
        self.lo > other.hi || other.lo > self.hi
    }
}

/// The median of `v` (any order) and its interval from the order
/// statistics: the ranks k and n + 1 - k with the largest k whose
/// binomial coverage, 1 - 2 P(Bin(n, 1/2) < k), is at least 95 %; under 6
/// samples, where no k reaches it, the smallest and largest value with
/// the coverage they have (75 % for 3). `None` for fewer than 2 samples
/// or any NaN.
pub fn median_interval(v: &[f64]) -> Option<Interval> {
    let n = v.len();
    if n < 2 || v.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    // P(Bin(n, 1/2) = j) in log space, summed while the ranks j + 1 and
    // n - j still cover 95 %.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let (mut ln_pmf, mut below, mut k) = (ln_half_n, 0.0, 0);
    for j in 0..n / 2 {
        let b = below + ln_pmf.exp();
        if 1.0 - 2.0 * b < 0.95 {
            break;
        }
        (below, k) = (b, j + 1);
        ln_pmf += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    let level = if k == 0 {
        k = 1;
        1.0 - 2.0 * ln_half_n.exp()
    } else {
        1.0 - 2.0 * below
    };
    Some(Interval {
        median,
        lo: s[k - 1],
        hi: s[n - k],
        level,
        n,
    })
}

/// A figure over repeated runs: its median, and the interval when there
/// are two runs or more.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The median (the one value of a single run).
    pub median: f64,
    /// Its interval.
    pub interval: Option<Interval>,
}

impl Estimate {
    /// Over the runs' values `v`.
    pub fn of(v: &[f64]) -> Estimate {
        let interval = median_interval(v);
        let median = interval.map_or_else(|| v.first().copied().unwrap_or(f64::NAN), |i| i.median);
        Estimate { median, interval }
    }

    /// `median [lo, hi]`, or the median alone from one run; "not
    /// measured" when nothing ran (never "NaN" in a sentence).
    pub fn text(&self, prec: usize) -> String {
        match &self.interval {
            _ if !self.median.is_finite() => "not measured".into(),
            Some(i) => i.with_median(prec),
            None => format!("{:.prec$}", self.median),
        }
    }

    /// A ratio as `x1.14 [1.10, 1.20]`, or "not measured".
    pub fn times(&self, prec: usize) -> String {
        if self.median.is_finite() {
            format!("x{}", self.text(prec))
        } else {
            "not measured".into()
        }
    }

    /// `median [lo, hi]` without the confidence (for table cells whose
    /// heading says it), or the median alone.
    pub fn cell(&self, prec: usize) -> String {
        match &self.interval {
            _ if !self.median.is_finite() => "not measured".into(),
            Some(i) => format!("{:.prec$} [{:.prec$}, {:.prec$}]", i.median, i.lo, i.hi),
            None => format!("{:.prec$}", self.median),
        }
    }

    /// The interval's width (0 without one).
    pub fn spread(&self) -> f64 {
        self.interval.map_or(0.0, |i| i.hi - i.lo)
    }

    /// Whether the interval holds `x`.
    pub fn holds(&self, x: f64) -> bool {
        self.interval.is_some_and(|i| i.lo <= x && x <= i.hi)
    }
}

/// The line a ratio gets when its runs' interval holds 1 (no difference)
/// though its median does not: `what` (a ratio over repeated runs) is
/// within its own spread. `None` when the interval leaves 1 out.
pub fn ratio_note(what: &str, e: &Estimate) -> Option<String> {
    (e.holds(1.0) && e.median != 1.0).then(|| {
        format!(
            "**Spread larger than the effect**: {what} is {:.2} at the median, but its runs' interval {} holds 1; read it as no difference.",
            e.median,
            e.interval.map_or(String::new(), |i| i.text(2))
        )
    })
}

/// What the intervals of a table of `n`-run medians are, in words.
pub fn intervals_in_words(n: usize) -> String {
    match n {
        0 | 1 => "no interval from a single run".into(),
        2..=5 => format!(
            "in brackets the smallest and largest of the {n} runs, which hold the median with {:.0} % confidence",
            ((1.0 - 2.0 * 0.5f64.powi(n as i32)) * 100.0).floor()
        ),
        _ => "in brackets the median's 95 % interval (order statistics)".into(),
    }
}

/// How many runs the cells that ran had, and what their intervals are,
/// in words, from the counts themselves (never from what a plan meant
/// to run): "3 fetches a cell; in brackets the smallest and largest...",
/// "1 to 20 fetches a cell; ...", or "no cell ran".
pub fn cells_in_words(counts: &[usize], what: &str) -> String {
    let ran: Vec<usize> = counts.iter().copied().filter(|&n| n > 0).collect();
    let (Some(&lo), Some(&hi)) = (ran.iter().min(), ran.iter().max()) else {
        return format!("no cell ran any {what}");
    };
    if lo == hi {
        format!("{lo} {what} a cell; {}", intervals_in_words(lo))
    } else if intervals_in_words(lo) == intervals_in_words(hi) {
        format!(
            "{lo} to {hi} {what} a cell (each cell's count in its table); {}",
            intervals_in_words(lo)
        )
    } else {
        format!(
            "{lo} to {hi} {what} a cell (each cell's count in its table); for the smallest, {}; for the largest, {}",
            intervals_in_words(lo),
            intervals_in_words(hi)
        )
    }
}

/// The line two medians get when their runs' intervals overlap though
/// the medians differ: `what` (a difference of the medians) is within the
/// runs' own spread. `None` when the intervals are apart (or missing).
pub fn overlap_note(what: &str, a: &Estimate, b: &Estimate, unit: &str) -> Option<String> {
    let (Some(x), Some(y)) = (a.interval, b.interval) else {
        return None;
    };
    (!x.apart(&y) && a.median != b.median).then(|| {
        format!(
            "**Spread larger than the effect**: {what} differ by {:.2}{unit} at the median, but their runs' intervals ({} and {}) overlap; read it as no difference.",
            (a.median - b.median).abs(),
            x.text(1),
            y.text(1)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_of_nothing_says_so_in_words() {
        let none = Estimate::of(&[]);
        assert_eq!(none.text(2), "not measured");
        assert_eq!(none.cell(2), "not measured");
        assert_eq!(Estimate::of(&[1.5]).text(1), "1.5");
    }

    #[test]
    fn a_medians_interval_needs_six_samples_and_narrows_with_more() {
        assert_eq!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]), None);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        // n = 100: ranks 40 and 61 (1-based), the usual table's.
        assert_eq!(median_ci(&v), Some((40.0, 61.0)));
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let (lo, hi) = median_ci(&v).unwrap();
        assert!(lo <= 5.0 && hi >= 6.0 && lo >= 1.0 && hi <= 10.0);
    }

    #[test]
    fn the_interval_has_the_binomial_coverage_it_claims() {
        let i = median_interval(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((i.median, i.lo, i.hi, i.n), (2.0, 1.0, 3.0, 3));
        assert!((i.level - 0.75).abs() < 1e-12, "{i:?}");
        assert_eq!(i.text(0), "[1, 3] (75 %, 3 runs)");
        let i = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!((i.level - 0.9375).abs() < 1e-12);
        // n = 10: ranks 2 and 9 cover 97.9 %, ranks 3 and 8 only 89 %.
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let i = median_interval(&v).unwrap();
        assert_eq!((i.lo, i.hi, i.median), (2.0, 9.0, 5.5));
        assert!((i.level - (1.0 - 22.0 / 1024.0)).abs() < 1e-12, "{i:?}");
        assert_eq!(i.text(0), "[2, 9]");
        assert!(median_interval(&[1.0]).is_none());
        assert!(median_interval(&[1.0, f64::NAN, 2.0]).is_none());
        // Large samples: the usual table (n = 1000: ranks 469 and 532).
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        let i = median_interval(&v).unwrap();
        assert_eq!((i.lo, i.hi), (469.0, 532.0));
        assert!(i.level >= 0.95 && i.level < 0.96);
    }

    #[test]
    fn a_ratio_whose_interval_holds_one_is_no_difference() {
        assert!(ratio_note("a/b", &Estimate::of(&[0.9, 1.04, 1.1])).is_some());
        assert!(ratio_note("a/b", &Estimate::of(&[0.75, 0.88, 0.91])).is_none());
    }

    #[test]
    fn medians_whose_intervals_overlap_are_no_difference() {
        let (a, b) = (
            Estimate::of(&[1.0, 2.0, 3.0]),
            Estimate::of(&[2.5, 3.0, 4.0]),
        );
        assert!(overlap_note("a and b", &a, &b, " ms").is_some());
        let c = Estimate::of(&[5.0, 6.0, 7.0]);
        assert!(overlap_note("a and c", &a, &c, " ms").is_none());
        assert!(overlap_note("one run", &Estimate::of(&[1.0]), &c, " ms").is_none());
    }

    #[test]
    fn cells_are_counted_from_what_ran() {
        assert!(
            cells_in_words(&[3, 3, 0], "fetches").starts_with(
                "3 fetches a cell; in brackets the smallest and largest of the 3 runs"
            )
        );
        assert!(cells_in_words(&[1, 20], "fetches").starts_with("1 to 20 fetches a cell"));
        assert_eq!(cells_in_words(&[0], "tests"), "no cell ran any tests");
        assert!(cells_in_words(&[1], "tests").contains("no interval from a single run"));
    }

    #[test]
    fn outcomes_read_as_words() {
        let v = Verdict {
            outcome: Outcome::Differs,
            criterion: "c".into(),
            measured: "m".into(),
        };
        assert_eq!(v.cell(), "**reproduced, with a difference**: m");
        assert!(
            v.line()
                .starts_with("**Verdict: reproduced, with a difference.** Criterion: c.")
        );
    }
}
