//! An interval on a median that stays valid however often it is looked
//! at: a confidence sequence (Howard and Ramdas, *Sequential estimation
//! of quantiles with applications to A/B-testing and best-arm
//! identification*, Bernoulli 28(3), 2022, section 3: a mixture of
//! sign-test likelihood ratios), one side at a time.
//!
//! Why it holds. Let `m` be the true median of a round's value and
//! `S_t(m)` the number of the first `t` values below `m`. Each value is
//! below `m` with probability at most 1/2, whatever the distribution
//! (ties included), so for every `p > 1/2` the likelihood ratio of
//! Bernoulli(`p`) against Bernoulli(1/2), `(2p)^s (2(1-p))^(t-s)`, is a
//! nonnegative supermartingale starting at 1, and so is any mixture of
//! them over `p` (Robbins' method of mixtures). Ours weighs two:
//!
//! ```text
//! M_t(s) = W (2q)^s (2(1-q))^(t-s)                                (q = 0.95)
//!        + (1-W) 2^(t+1) P(Bin(t+1, 1/2) <= s) / ((t+1) C(t, s))  (p uniform on (1/2, 1])
//! ```
//!
//! with `W` = 0.7. Ville's inequality bounds the chance that it *ever*
//! reaches `1/alpha` by `alpha`. A candidate `c` whose count `S_t(c)`
//! makes `M_t` reach `1/alpha` is above the median with that guarantee;
//! `M_t` grows with `s`, so the candidates left form the order
//! statistics' interval `[X_(t-s*+1), X_(s*)]`, `s*` the smallest count
//! that reaches the bar. The mirror argument (values above `m`) bounds
//! the other side. Each side misses with probability at most `alpha`
//! over the whole run, at every round it is looked at, whenever the run
//! stops.
//!
//! Why this mixture (fixed in code before any run, from its profile
//! alone, never from a run's figures). An obvious effect puts every
//! round on one side; no interval built from signs can bound a side
//! before 5 such rounds at 5 %, since 4 of 4 on one side happens by
//! chance with 1/16 > 1/20. The uniform mixture alone first bounds after
//! 7 (`M_7(7)` = 32 > 20): the weight near `p` = 1 brings that to the
//! least possible, 5 (`M_5(5)` = 20.5), and one contrary round to 10
//! (11 with the uniform alone), for an interval two ranks wider a
//! side at 100 rounds (ranks 34 to 67 against 36 to 65), where the
//! uniform part carries the evidence.

/// One side's error rate, the same for every experiment: 5 % that an
/// interval's lower end ever rises above the true median, 5 % that its
/// upper end ever falls below it.
pub const ALPHA: f64 = 0.05;

/// The method, as `results.json` names it.
pub const METHOD: &str = "median confidence sequence (Howard & Ramdas 2022, sign-test mixture: 70 % Bernoulli(0.95), 30 % uniform, one side at a time)";

/// The method of records made before 3 Dec: the uniform mixture alone.
pub const UNIFORM_METHOD: &str =
    "median confidence sequence (Howard & Ramdas 2022, beta-binomial mixture, one side at a time)";

/// The rounds a side of `method`'s intervals needs before it can be
/// bounded at all: a record says how many more rounds it needs by the
/// method it was made with.
pub fn first_bounded_round_of(method: &str) -> usize {
    if method == UNIFORM_METHOD {
        let bar = (1.0 / ALPHA).ln();
        (1..200)
            .find(|&t| ln_uniform_evidence(t, t) >= bar)
            .unwrap_or(1)
    } else {
        first_bounded_round(ALPHA)
    }
}

/// The weight of the point near 1 and that point (see the module's
/// text: the least rounds for an obvious effect).
const POINT_WEIGHT: f64 = 0.7;
/// See [`POINT_WEIGHT`].
const POINT_P: f64 = 0.95;

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
    let point = POINT_WEIGHT.ln()
        + s as f64 * (2.0 * POINT_P).ln()
        + (t - s) as f64 * (2.0 * (1.0 - POINT_P)).ln();
    let uniform = (1.0 - POINT_WEIGHT).ln() + ln_uniform_evidence(s, t);
    let top = point.max(uniform);
    top + ((point - top).exp() + (uniform - top).exp()).ln()
}

/// `ln` of the uniform mixture's evidence alone.
fn ln_uniform_evidence(s: usize, t: usize) -> f64 {
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

    /// The values so far, smallest first.
    pub fn sorted(&self) -> &[f64] {
        &self.sorted
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
    fn the_evidence_is_the_mixture_of_its_two_parts() {
        // The uniform part at t = 3, s = 2: 2 * 2^3 * integral over
        // (1/2, 1] of p^2 (1-p) dp = 16 * (1/3 - 1/4 - (1/24 - 1/64)).
        let uniform: f64 = 16.0 * (1.0 / 12.0 - (1.0 / 24.0 - 1.0 / 64.0));
        assert!((ln_uniform_evidence(2, 3) - uniform.ln()).abs() < 1e-12);
        let point = 1.9f64.powi(2) * 0.1;
        let mixed = 0.7 * point + 0.3 * uniform;
        assert!((ln_evidence(2, 3) - mixed.ln()).abs() < 1e-12);
        // All of 5 on one side: 0.7 * 1.9^5 + 0.3 * (2^6 - 1) / 6.
        let five = 0.7 * 1.9f64.powi(5) + 0.3 * 63.0 / 6.0;
        assert!((ln_evidence(5, 5).exp() - five).abs() < 1e-9);
        assert!(five > 20.0 && five < 20.6, "{five}");
    }

    /// The profile the module's text states, and why the mixture was
    /// chosen: first bound at the least possible round, one contrary
    /// round costs no more than with the uniform part alone.
    #[test]
    fn five_rounds_bound_a_side_at_five_percent() {
        assert_eq!(first_bounded_round(ALPHA), 5);
        assert_eq!(reject_count(4, ALPHA), None);
        assert_eq!(reject_count(5, ALPHA), Some(5));
        // No sign-based interval can do better: 4 of 4 by chance is 1/16.
        assert!(0.5f64.powi(4) > ALPHA);
        let bar = (1.0 / ALPHA).ln();
        let first_with = |k: usize, ev: &dyn Fn(usize, usize) -> f64| {
            (k + 1..100).find(|&t| ev(t - k, t) >= bar).unwrap()
        };
        let uniform_only = |s, t| ln_uniform_evidence(s, t);
        assert_eq!(first_with(0, &uniform_only), 7);
        assert_eq!(first_with(1, &uniform_only), 11);
        assert_eq!(first_with(1, &ln_evidence), 10);
        assert_eq!(first_bounded_round_of(UNIFORM_METHOD), 7);
        assert_eq!(first_bounded_round_of(METHOD), 5);
        // Wider than the fixed-sample 95 % interval at the same count
        // (ranks 40 and 61 of 100): the price of looking at every round;
        // two ranks a side wider than the uniform part alone.
        assert_eq!(reject_count(100, ALPHA), Some(67));
    }

    #[test]
    fn the_interval_is_made_of_order_statistics() {
        let mut cs = MedianCs::default();
        for x in [5.0, 1.0, 3.0, 2.0] {
            cs.push(x);
        }
        assert_eq!(cs.interval(ALPHA), (f64::NEG_INFINITY, f64::INFINITY));
        cs.push(4.0);
        assert_eq!(cs.interval(ALPHA), (1.0, 5.0));
        assert_eq!(cs.median(), 3.0);
    }
}
