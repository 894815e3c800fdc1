//! The figures the report and `results.json` carry, from the downloads
//! alone (no I/O).

use super::measure::Measured;
use crate::Summary;
use crate::verdict::{Outcome, Verdict};

/// What the downloads show.
pub struct Analysis {
    /// Named figures for `results.json`.
    pub summary: Summary,
    /// The path's payload ceiling, Mbit/s (1448 of every 1500 bytes).
    pub ceiling: f64,
    /// The cap the static buffer predicts, Mbit/s (NaN when unknown).
    pub predicted: f64,
}

/// The figures of `m`.
pub fn analyse(m: &Measured) -> Analysis {
    let d = &m.details;
    let ceiling = payload_ceiling(m.rate_mbit);
    let (st, au, ad) = (&d.pinned.summary, &d.auto.summary, &d.auto_default.summary);
    let predicted = st.predicted_cap_mbit.unwrap_or(f64::NAN);
    let mut summary = Summary::new();
    summary.insert("static_mbit".into(), st.goodput_mbit.into());
    summary.insert("static_predicted_mbit".into(), predicted.into());
    summary.insert("auto_mbit".into(), au.goodput_mbit.into());
    summary.insert("auto_default_mbit".into(), ad.goodput_mbit.into());
    summary.insert("ceiling_mbit".into(), ceiling.into());
    summary.insert("rtt_ms".into(), m.rtt_ms.into());
    summary.insert("rate_mbit".into(), m.rate_mbit.into());
    Analysis {
        summary,
        ceiling,
        predicted,
    }
}

/// The seed's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "autotuned goodput at least 5 times the static buffer's over the run, and the autotuned flow's steady rate (the median second of the run's second half, after slow start) at least 80 % of the path's payload ceiling";

/// The median per-second goodput of the second half of `intervals`
/// (Mbit/s): the rate after slow start, which a short run's average
/// understates on a long path.
pub fn steady_mbit(intervals: &[f64]) -> f64 {
    let mut v: Vec<f64> = intervals[intervals.len() / 2..].to_vec();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The verdict on the seed's claim from the two arms' goodput over the
/// run and the autotuned flow's steady rate (one run each), against the
/// path's ceiling.
pub fn verdict(static_mbit: f64, auto_mbit: f64, auto_steady: f64, ceiling: f64) -> Verdict {
    let (times, share) = (auto_mbit / static_mbit.max(1e-9), auto_steady / ceiling);
    let outcome = if times >= 5.0 && share >= 0.8 {
        Outcome::Reproduced
    } else {
        Outcome::NotReproduced
    };
    Verdict {
        outcome,
        criterion: CRITERION.into(),
        measured: format!(
            "static {static_mbit:.1} Mbit/s, autotuned {auto_mbit:.1} Mbit/s over the run ({times:.1} times), steady {auto_steady:.1} Mbit/s = {:.0} % of the {ceiling:.1} Mbit/s ceiling (one run each)",
            100.0 * share
        ),
    }
}

/// TCP payload a path of `rate_mbit` can carry: 1448 bytes of every
/// 1500-byte packet (IP, TCP and timestamp headers).
pub fn payload_ceiling(rate_mbit: f64) -> f64 {
    rate_mbit * 1448.0 / 1500.0
}

#[cfg(test)]
mod tests {
    use crate::verdict::Outcome;

    #[test]
    fn the_ceiling_is_the_payload_share_of_the_rate() {
        assert!((super::payload_ceiling(151.0) - 145.77).abs() < 0.01);
    }

    #[test]
    fn a_static_buffer_as_fast_as_autotuning_flips_the_verdict() {
        let ceiling = super::payload_ceiling(151.0);
        let held = super::verdict(14.54, 126.4, 144.0, ceiling);
        assert_eq!(held.outcome, Outcome::Reproduced, "{held:?}");
        // Corrupted: the static run as fast as the autotuned one.
        let flipped = super::verdict(126.4, 126.4, 144.0, ceiling);
        assert_eq!(flipped.outcome, Outcome::NotReproduced, "{flipped:?}");
        // Autotuned far below the ceiling: not the seed's line rate.
        assert_eq!(
            super::verdict(14.0, 80.0, 90.0, ceiling).outcome,
            Outcome::NotReproduced
        );
        // The steady rate is the second half's median second.
        assert_eq!(
            super::steady_mbit(&[10.0, 60.0, 140.0, 144.0, 143.0]),
            143.0
        );
    }
}
