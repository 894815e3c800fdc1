//! Whether a seed's claim held on this machine. Each experiment states
//! its criterion in its code, before anything runs, and decides from
//! the figures it measured; the report shows the outcome, the criterion
//! and the figures (with their intervals where the samples give one)
//! in its first table and at the top of the experiment's section, and
//! `results.json` keeps them for scripts.

use serde::{Deserialize, Serialize};

/// What the figures say of the seed's claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The claim held by its criterion.
    Reproduced,
    /// The main claim held; a part of it did not (said in `measured`).
    Differs,
    /// The claim did not hold.
    NotReproduced,
    /// The run has too few samples to decide (a `--quick` run).
    TooFewSamples,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Reproduced => "reproduced",
            Outcome::Differs => "reproduced, with a difference",
            Outcome::NotReproduced => "not reproduced",
            Outcome::TooFewSamples => "too few samples",
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
/// ascending sample (the binomial ranks, normal approximation), or
/// `None` under 6 samples, where no such interval exists.
pub fn median_ci(sorted: &[f64]) -> Option<(f64, f64)> {
    let n = sorted.len();
    if n < 6 {
        return None;
    }
    let half = 0.98 * (n as f64).sqrt();
    let lo = ((n as f64 / 2.0 - half).floor() as usize).clamp(1, n) - 1;
    let hi = ((n as f64 / 2.0 + 1.0 + half).ceil() as usize).clamp(1, n) - 1;
    Some((sorted[lo], sorted[hi]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_medians_interval_needs_six_samples_and_narrows_with_more() {
        assert_eq!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]), None);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        // n = 100: ranks 40 and 61 (1-based).
        assert_eq!(median_ci(&v), Some((40.0, 61.0)));
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let (lo, hi) = median_ci(&v).unwrap();
        assert!(lo <= 5.0 && hi >= 6.0 && lo >= 1.0 && hi <= 10.0);
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
