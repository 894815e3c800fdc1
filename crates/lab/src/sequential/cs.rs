//! An interval on a median that stays valid however often it is looked
//! at: a confidence sequence (Howard and Ramdas, *Sequential estimation
//! of quantiles with applications to A/B-testing and best-arm
//! identification*, Bernoulli 28(3), 2022, the beta-binomial
//! construction of their section 3), one side at a time.
//!
//! Why it holds. Let `m` be the true median of a round's value and
//! `S_t(m)` the number of the first `t` values below `m`. Each value is
//! below `m` with probability at most 1/2, whatever the distribution
//! (ties included), so for every `p > 1/2` the likelihood ratio of
//! Bernoulli(`p`) against Bernoulli(1/2) is a nonnegative
//! supermartingale, and so is its mixture over `p` uniform on (1/2, 1]:
//!
//! ```text
//! M_t(s) = 2^(t+1) P(Bin(t+1, 1/2) <= s) / ((t+1) C(t, s)),   s = S_t(m)
//! ```
//!
//! Ville's inequality bounds the chance that it *ever* reaches `1/alpha`
//! by `alpha`. A candidate `c` whose count `S_t(c)` makes `M_t` reach
//! `1/alpha` is above the median with that guarantee; `M_t` grows with
//! `s`, so the candidates left form the order statistics' interval
//! `[X_(t-s*+1), X_(s*)]`, `s*` the smallest count that reaches the bar.
//! The mirror argument (values above `m`) bounds the other side. Each
//! side misses with probability at most `alpha` over the whole run, at
//! every round it is looked at, whenever the run stops.
//!
//! The price of looking every round: with `alpha` = 5 % a side, the
//! first bounded side needs 7 rounds all on one side of a threshold
//! (`M_7(7)` = 32 > 20), where a single look at 5 rounds would do.

/// One side's error rate, the same for every experiment: 5 % that an
/// interval's lower end ever rises above the true median, 5 % that its
/// upper end ever falls below it.
pub const ALPHA: f64 = 0.05;

/// The method, as `results.json` names it.
pub const METHOD: &str =
    "median confidence sequence (Howard & Ramdas 2022, beta-binomial mixture, one side at a time)";

/// `ln C(n, k)`.
fn ln_choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).map(|i| ((n - i) as f64 / (i + 1) as f64).ln()).sum()
}

/// `ln P(Bin(n, 1/2) <= k)`, summed in log space.
fn ln_cdf_half(n: usize, k: usize) -> f64 {
    let mut terms = Vec::with_capacity(k + 1);
    let mut ln_c = 0.0;
    for j in 0..=k.min(n) {
        terms.push(ln_c);
        ln_c += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
    top + sum.ln() - n as f64 * std::f64::consts::LN_2
}

/// `ln M_t(s)`: the evidence, after `t` rounds with `s` of them below a
/// candidate, that the candidate lies above the median.
pub fn ln_evidence(s: usize, t: usize) -> f64 {
    let ln2 = std::f64::consts::LN_2;
    (t + 1) as f64 * ln2 + ln_cdf_half(t + 1, s) - ((t + 1) as f64).ln() - ln_choose(t, s)
}

/// The smallest count `s*` of `t` rounds that rejects at `alpha`, or
/// `None` when even `t` of `t` does not (too few rounds for a bound).
pub fn reject_count(t: usize, alpha: f64) -> Option<usize> {
    let bar = (1.0 / alpha).ln();
    if t == 0 || ln_evidence(t, t) < bar {
        return None;
    }
    // The evidence grows with s: the first s that reaches the bar.
    let (mut lo, mut hi) = (0, t);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if ln_evidence(mid, t) >= bar {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// The rounds a side needs before it can be bounded at all.
pub fn first_bounded_round(alpha: f64) -> usize {
    (1..)
        .find(|&t| reject_count(t, alpha).is_some())
        .unwrap_or(1)
}

/// A round's values, kept sorted, and the interval they give.
#[derive(Debug, Clone, Default)]
pub struct MedianCs {
    sorted: Vec<f64>,
    // s* by round count, computed once per count.
    counts: Vec<Option<usize>>,
}

impl MedianCs {
    /// Adds a round's value (NaN is refused by the caller).
    pub fn push(&mut self, x: f64) {
        let at = self.sorted.partition_point(|v| *v <= x);
        self.sorted.insert(at, x);
    }

    /// Rounds so far.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether no round is in.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The sample median (NaN with no rounds).
    pub fn median(&self) -> f64 {
        let (s, n) = (&self.sorted, self.sorted.len());
        match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => s[n / 2],
            _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    /// The interval at `alpha` a side, `-inf`/`+inf` on a side that the
    /// rounds cannot bound yet.
    pub fn interval(&mut self, alpha: f64) -> (f64, f64) {
        let t = self.sorted.len();
        while self.counts.len() <= t {
            let n = self.counts.len();
            self.counts.push(reject_count(n, alpha));
        }
        match self.counts[t] {
            Some(s) => (self.sorted[t - s], self.sorted[s - 1]),
            None => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_evidence_is_the_mixture_integral() {
        // t = 3, s = 2: 2 * 2^3 * integral over (1/2, 1] of p^2 (1-p) dp
        // = 16 * (1/3 - 1/4 - (1/24 - 1/64)) = 16 * 11/192.
        let exact: f64 = 16.0 * (1.0 / 12.0 - (1.0 / 24.0 - 1.0 / 64.0));
        assert!((ln_evidence(2, 3) - exact.ln()).abs() < 1e-12);
        // All of 7 on one side: 2^8 (1 - 2^-8) / 8, just over 31.
        assert!((ln_evidence(7, 7).exp() - 255.0 / 8.0).abs() < 1e-9);
    }

    #[test]
    fn seven_rounds_bound_a_side_at_five_percent() {
        assert_eq!(first_bounded_round(ALPHA), 7);
        assert_eq!(reject_count(6, ALPHA), None);
        assert_eq!(reject_count(7, ALPHA), Some(7));
        // Wider than the fixed-sample 95 % interval at the same count
        // (ranks 40 and 61 of 100): the price of looking at every round.
        let s = reject_count(100, ALPHA).unwrap();
        assert!(s > 61 && s < 80, "{s}");
    }

    #[test]
    fn the_interval_is_made_of_order_statistics() {
        let mut cs = MedianCs::default();
        for x in [5.0, 1.0, 7.0, 3.0, 2.0, 6.0] {
            cs.push(x);
        }
        assert_eq!(cs.interval(ALPHA), (f64::NEG_INFINITY, f64::INFINITY));
        cs.push(4.0);
        assert_eq!(cs.interval(ALPHA), (1.0, 7.0));
        assert_eq!(cs.median(), 4.0);
    }
}
