//! The draft's test parameters, with its defaults
//! (draft-ietf-ippm-responsiveness-08, "Test Parameters"; goresponsiveness
//! uses the same numbers and spells its flags `-rpm.mad` ... `-rpm.ptc`).

use std::time::Duration;

/// What a test is run with. Every field is a flag of `tcpwise rpm`.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// MAD, the moving-average distance: how many intervals a moving
    /// average spans, and how many of them must agree for stability (4).
    pub mad: usize,
    /// ID, the interval duration: how often the test re-evaluates, adding
    /// a load-generating connection while goodput is not stable (1 s).
    pub interval: Duration,
    /// TMP, the trimmed-mean percentage: the share of the lowest probe
    /// times kept when averaging them (95: the slowest 5 % are dropped).
    pub trimmed_mean_pct: f64,
    /// SDT, the standard-deviation tolerance: stable when the standard
    /// deviation of the last MAD moving averages is at most this share of
    /// the current one (5 %).
    pub sdt_pct: f64,
    /// MNP, the most load-generating connections a direction opens (16).
    pub max_connections: usize,
    /// MPS, the most probe rounds a second (100).
    pub max_probes_per_s: f64,
    /// PTC, the share of the capacity probes may take (5 %): probe rounds
    /// are spaced so their measured bytes stay under it.
    pub probe_capacity_pct: f64,
    /// The longest a phase (a direction, or both at once) may run before
    /// it reports what it has, marked as not stable (20 s).
    pub max_duration: Duration,
    /// The percentile reported beside the trimmed mean (90: the figure
    /// goresponsiveness prints first).
    pub percentile: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            mad: 4,
            interval: Duration::from_secs(1),
            trimmed_mean_pct: 95.0,
            sdt_pct: 5.0,
            max_connections: 16,
            max_probes_per_s: 100.0,
            probe_capacity_pct: 5.0,
            max_duration: Duration::from_secs(20),
            percentile: 90.0,
        }
    }
}

impl Params {
    /// Refuses values the method cannot run with, naming the flag.
    pub fn check(&self) -> Result<(), crate::RpmError> {
        let usage = |m: &str| Err(crate::RpmError::Usage(m.into()));
        let pct = |v: f64| v > 0.0 && v <= 100.0;
        if self.mad == 0 {
            return usage("--mad must be at least 1");
        }
        if self.interval.is_zero() {
            return usage("--interval must be longer than 0");
        }
        if !pct(self.trimmed_mean_pct) {
            return usage("--trimmed-mean must be over 0 and at most 100 (%)");
        }
        if !(self.sdt_pct >= 0.0 && self.sdt_pct.is_finite()) {
            return usage("--sdt must be a percentage of 0 or more");
        }
        if self.max_connections == 0 {
            return usage("--max-connections must be at least 1");
        }
        if !(self.max_probes_per_s > 0.0 && self.max_probes_per_s.is_finite()) {
            return usage("--max-probes must be over 0 (probe rounds a second)");
        }
        if !pct(self.probe_capacity_pct) {
            return usage("--probe-capacity must be over 0 and at most 100 (%)");
        }
        if self.max_duration < self.interval {
            return usage("--max-duration must be at least one --interval");
        }
        if !(self.percentile > 0.0 && self.percentile < 100.0) {
            return usage("--percentile must be between 0 and 100");
        }
        Ok(())
    }
}
