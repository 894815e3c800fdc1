//! The figures the report and `results.json` carry, from the downloads
//! alone (no I/O): each arm's median over its downloads with the
//! interval the order statistics give.

use super::measure::Measured;
use crate::Summary;
use crate::sequential::{PartSpec, Record, Target};
use crate::verdict::{Estimate, Verdict};
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
    /// The same, autotuned under Linux's default ceilings.
    pub auto_default: Estimate,
    /// The autotuned flow's steady rate ([`steady_mbit`]) over its
    /// downloads.
    pub steady: Estimate,
    /// Autotuned over static, download by download (each pair ran back
    /// to back).
    pub times: Estimate,
    /// Downloads an arm.
    pub rounds: usize,
    /// The sequential decision.
    pub record: Record,
}

fn goodput(v: &[PerfReport]) -> Vec<f64> {
    v.iter().map(|r| r.summary.goodput_mbit).collect()
}

/// The figures of `m`.
pub fn analyse(m: &Measured) -> Analysis {
    let d = &m.details;
    let ceiling = payload_ceiling(m.details.rate_mbit);
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
        record: m.decision.clone(),
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
    summary.insert("rtt_ms".into(), m.details.rtt_ms.into());
    summary.insert("rate_mbit".into(), m.details.rate_mbit.into());
    summary.insert("rounds".into(), (a.rounds as u64).into());
    Analysis { summary, ..a }
}

/// The field report's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "round by round (a static and an autotuned download back to back), the median of autotuned over static goodput at least 5, and the median steady rate of the autotuned flow (the median second of each download's second half, after slow start) at least 80 % of the path's payload ceiling; each median decided by its indifference zone (the decision table)";

/// The criterion's parts, with their planning figures (24 Nov's run:
/// 8.5 [8.3, 8.6] times, steady 99 % of the ceiling [94, 100+]).
pub fn parts() -> Vec<PartSpec> {
    vec![
        PartSpec {
            name: "autotuned over static goodput".into(),
            // The report's gap was 126 / 11.3 = 11x; confirmed from under
            // half of it (5), refuted where a pinned buffer would cost
            // less than half the goodput (2).
            target: Target::at_least(5.0, 2.0),
            unit: "x",
            prec: 2,
            planning: (8.5, 0.3),
        },
        PartSpec {
            name: "autotuned steady rate over the payload ceiling".into(),
            // The report's autotuned flow averaged 126 of its 151 Mbit/s
            // peak (0.83): confirmed at 0.8, refuted at 0.6.
            target: Target::at_least(0.8, 0.6),
            unit: "",
            prec: 3,
            planning: (0.99, 0.05),
        },
    ]
}

/// A round's values, one per part: autotuned over static goodput, and
/// the autotuned download's steady rate over `ceiling` (Mbit/s).
pub fn round_values(pinned: &PerfReport, auto: &PerfReport, ceiling: f64) -> Vec<f64> {
    let steady = steady_mbit(&auto.intervals.iter().map(|i| i.mbit).collect::<Vec<_>>());
    vec![
        auto.summary.goodput_mbit / pinned.summary.goodput_mbit.max(1e-9),
        steady / ceiling,
    ]
}

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

/// The verdict: the sequential decision's parts as the criterion
/// combines them, with the figures beside.
pub fn verdict(a: &Analysis) -> Verdict {
    let share = a.steady.median / a.ceiling;
    Verdict {
        outcome: crate::sequential::outcome(&a.record.parts, crate::sequential::Combine::All),
        criterion: CRITERION.into(),
        measured: format!(
            "static {} Mbit/s, autotuned {} Mbit/s over the run, {} times; steady {} Mbit/s = {:.0} % of the {:.1} Mbit/s ceiling; {}",
            a.pinned.text(1),
            a.auto.text(1),
            a.times.text(1),
            a.steady.text(1),
            100.0 * share,
            a.ceiling,
            a.record.line()
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
        use crate::sequential::Tracker;
        use crate::verdict::Estimate;
        let times: Vec<f64> = auto.iter().zip(pinned).map(|(a, s)| a / s).collect();
        let ceiling = super::payload_ceiling(151.0);
        let mut parts: Vec<Tracker> = super::parts().into_iter().map(Tracker::new).collect();
        for (t, s) in times.iter().zip(steady) {
            parts[0].push(*t);
            parts[1].push(s / ceiling);
        }
        super::Analysis {
            summary: Default::default(),
            ceiling,
            predicted: 15.7,
            pinned: Estimate::of(pinned),
            auto: Estimate::of(auto),
            auto_default: Estimate::of(auto),
            steady: Estimate::of(steady),
            times: Estimate::of(&times),
            rounds: pinned.len(),
            record: crate::sequential::Record {
                parts: parts.iter().map(Tracker::result).collect(),
                rounds: pinned.len(),
                discarded: 0,
                secs: 1.0,
                stopped: crate::sequential::Stop::Decided,
                budget_secs: None,
            },
        }
    }

    #[test]
    fn a_static_buffer_as_fast_as_autotuning_flips_the_verdict() {
        let held = super::verdict(&figures(
            &[14.5, 14.4, 14.6, 14.5, 14.4, 14.6, 14.5],
            &[126.4, 124.0, 127.0, 125.0, 126.0, 124.5, 126.1],
            &[144.0, 140.0, 142.0, 143.0, 141.0, 144.5, 142.5],
        ));
        assert_eq!(held.outcome, Outcome::Reproduced, "{held:?}");
        assert!(held.measured.contains("decided after 7 rounds"), "{held:?}");
        // Corrupted: the static runs as fast as the autotuned ones.
        let flipped = super::verdict(&figures(&[126.0; 7], &[125.0; 7], &[144.0; 7]));
        assert_eq!(flipped.outcome, Outcome::NotReproduced, "{flipped:?}");
        // Autotuned far below the ceiling: not the field report's line rate.
        assert_eq!(
            super::verdict(&figures(&[14.0; 7], &[70.0; 7], &[80.0; 7])).outcome,
            Outcome::NotReproduced
        );
        // Three rounds decide nothing: undecided, with the intervals.
        let short = super::verdict(&figures(&[14.5; 3], &[126.4; 3], &[144.0; 3]));
        assert_eq!(short.outcome, Outcome::Undecided, "{short:?}");
        // The steady rate is the second half's median second.
        assert_eq!(
            super::steady_mbit(&[10.0, 60.0, 140.0, 144.0, 143.0]),
            143.0
        );
    }
}
