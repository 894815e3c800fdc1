//! The figures the report and `results.json` carry, from the downloads
//! alone (no I/O): each arm's median over its downloads with the
//! interval the order statistics give.

use super::MIN_ROUNDS;
use super::measure::Measured;
use crate::Summary;
use crate::verdict::{Estimate, Outcome, Verdict};
use tcpwise_perf::PerfReport;

/// What the downloads show.
pub struct Analysis {
    /// Named figures for `results.json`.
    pub summary: Summary,
    /// The path's payload ceiling, Mbit/s (1448 of every 1500 bytes).
    pub ceiling: f64,
    /// The cap the static buffer predicts, Mbit/s (NaN when unknown).
    pub predicted: f64,
    /// Goodput over the run, static arm: median and interval over its
    /// downloads (`None` from a single one).
    pub pinned: Estimate,
    /// The same, autotuned.
    pub auto: Estimate,
    /// The same, autotuned under the kernel's ceilings.
    pub auto_default: Estimate,
    /// The autotuned flow's steady rate ([`steady_mbit`]) over its
    /// downloads.
    pub steady: Estimate,
    /// Autotuned over static, download by download (each pair ran back
    /// to back).
    pub times: Estimate,
    /// Downloads an arm.
    pub rounds: usize,
}

fn goodput(v: &[PerfReport]) -> Vec<f64> {
    v.iter().map(|r| r.summary.goodput_mbit).collect()
}

/// The figures of `m`.
pub fn analyse(m: &Measured) -> Analysis {
    let d = &m.details;
    let ceiling = payload_ceiling(m.rate_mbit);
    let predicted = d
        .pinned
        .iter()
        .find_map(|r| r.summary.predicted_cap_mbit)
        .unwrap_or(f64::NAN);
    let (st, au, ad) = (
        goodput(&d.pinned),
        goodput(&d.auto),
        goodput(&d.auto_default),
    );
    let steady: Vec<f64> = d
        .auto
        .iter()
        .map(|r| steady_mbit(&r.intervals.iter().map(|i| i.mbit).collect::<Vec<_>>()))
        .collect();
    let times: Vec<f64> = au.iter().zip(&st).map(|(a, s)| a / s.max(1e-9)).collect();
    let a = Analysis {
        summary: Summary::new(),
        ceiling,
        predicted,
        pinned: Estimate::of(&st),
        auto: Estimate::of(&au),
        auto_default: Estimate::of(&ad),
        steady: Estimate::of(&steady),
        times: Estimate::of(&times),
        rounds: d.pinned.len().min(d.auto.len()),
    };
    let mut summary = Summary::new();
    for (k, f) in [
        ("static_mbit", &a.pinned),
        ("auto_mbit", &a.auto),
        ("auto_default_mbit", &a.auto_default),
        ("auto_steady_mbit", &a.steady),
        ("auto_over_static", &a.times),
    ] {
        summary.insert(k.into(), f.median.into());
        if let Some(i) = f.interval {
            summary.insert(format!("{k}_lo"), i.lo.into());
            summary.insert(format!("{k}_hi"), i.hi.into());
        }
    }
    summary.insert("static_predicted_mbit".into(), predicted.into());
    summary.insert("ceiling_mbit".into(), ceiling.into());
    summary.insert("rtt_ms".into(), m.rtt_ms.into());
    summary.insert("rate_mbit".into(), m.rate_mbit.into());
    summary.insert("rounds".into(), (a.rounds as u64).into());
    Analysis { summary, ..a }
}

/// The seed's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "over 3 downloads an arm or more (static and autotuned alternating), the median of autotuned over static goodput at least 5, and the median steady rate of the autotuned flow (the median second of each run's second half, after slow start) at least 80 % of the path's payload ceiling";

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

/// The verdict on the seed's claim from the figures: autotuned over
/// static per pair of downloads, and the autotuned flow's steady rate,
/// against the path's ceiling; under [`MIN_ROUNDS`] downloads an arm it
/// does not decide.
pub fn verdict(a: &Analysis) -> Verdict {
    let (times, steady, ceiling) = (a.times.median, a.steady.median, a.ceiling);
    let share = steady / ceiling;
    let outcome = if a.rounds < MIN_ROUNDS {
        Outcome::TooFewSamples
    } else if times >= 5.0 && share >= 0.8 {
        Outcome::Reproduced
    } else {
        Outcome::NotReproduced
    };
    let runs = match a.rounds {
        1 => "one download an arm; the verdict needs 3".to_string(),
        n if n < MIN_ROUNDS => format!("{n} downloads an arm; the verdict needs 3"),
        n => format!("medians of {n} downloads an arm, with their intervals"),
    };
    Verdict {
        outcome,
        criterion: CRITERION.into(),
        measured: format!(
            "static {} Mbit/s, autotuned {} Mbit/s over the run, {} times; steady {} Mbit/s = {:.0} % of the {ceiling:.1} Mbit/s ceiling ({runs})",
            a.pinned.text(1),
            a.auto.text(1),
            a.times.text(1),
            a.steady.text(1),
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

    fn figures(pinned: &[f64], auto: &[f64], steady: &[f64]) -> super::Analysis {
        use crate::verdict::Estimate;
        let times: Vec<f64> = auto.iter().zip(pinned).map(|(a, s)| a / s).collect();
        super::Analysis {
            summary: Default::default(),
            ceiling: super::payload_ceiling(151.0),
            predicted: 15.7,
            pinned: Estimate::of(pinned),
            auto: Estimate::of(auto),
            auto_default: Estimate::of(auto),
            steady: Estimate::of(steady),
            times: Estimate::of(&times),
            rounds: pinned.len(),
        }
    }

    #[test]
    fn a_static_buffer_as_fast_as_autotuning_flips_the_verdict() {
        let held = super::verdict(&figures(
            &[14.5, 14.4, 14.6],
            &[126.4, 124.0, 127.0],
            &[144.0, 140.0, 142.0],
        ));
        assert_eq!(held.outcome, Outcome::Reproduced, "{held:?}");
        assert!(
            held.measured.contains("[124.0, 127.0] (75 %, 3 runs)"),
            "{held:?}"
        );
        // Corrupted: the static runs as fast as the autotuned ones.
        let flipped = super::verdict(&figures(
            &[126.4, 124.0, 127.0],
            &[126.4, 124.0, 127.0],
            &[144.0, 140.0, 142.0],
        ));
        assert_eq!(flipped.outcome, Outcome::NotReproduced, "{flipped:?}");
        // Autotuned far below the ceiling: not the seed's line rate.
        assert_eq!(
            super::verdict(&figures(&[14.0; 3], &[80.0; 3], &[90.0; 3])).outcome,
            Outcome::NotReproduced
        );
        // One download an arm (--quick) decides nothing.
        let quick = super::verdict(&figures(&[14.5], &[126.4], &[144.0]));
        assert_eq!(quick.outcome, Outcome::TooFewSamples, "{quick:?}");
        // The steady rate is the second half's median second.
        assert_eq!(
            super::steady_mbit(&[10.0, 60.0, 140.0, 144.0, 143.0]),
            143.0
        );
    }
}
