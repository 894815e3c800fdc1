//! The seed's table from the trials: per cutoff percentile, each arm's
//! value there and the mean below it with its 95 % confidence interval;
//! whether the arms differ at the median (no I/O).

use super::measure::{Arm, Trial};
use crate::verdict::{Outcome, Verdict};
use crate::{LabError, Summary};
use serde::Serialize;

/// One row of the seed's table for one arm.
#[derive(Debug, Clone, Serialize)]
pub struct ArmRow {
    /// Value at the cutoff percentile, ms.
    pub value: f64,
    /// Lower end of the 95 % CI of the mean below the cutoff.
    pub min_avg: f64,
    /// Mean of the samples at or below the cutoff.
    pub avg: f64,
    /// Upper end of the 95 % CI.
    pub max_avg: f64,
}

/// The row of an ascending sample at `cutoff` (percent).
pub fn row(sorted: &[f64], cutoff: f64) -> ArmRow {
    let i = tcpwise_units::nearest_rank_index(sorted.len(), cutoff / 100.0);
    let below = &sorted[..=i];
    let n = below.len() as f64;
    let mean = below.iter().sum::<f64>() / n;
    let var = below.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let half = 1.96 * (var / n).sqrt();
    ArmRow {
        value: sorted[i],
        min_avg: mean - half,
        avg: mean,
        max_avg: mean + half,
    }
}

/// One cutoff of the seed's table.
#[derive(Debug, Clone, Serialize)]
pub struct CutoffRow {
    /// Percentile.
    pub cutoff: f64,
    /// Arm `off`.
    pub off: ArmRow,
    /// Arm `on`.
    pub on: ArmRow,
    /// off - on at the cutoff, ms.
    pub delta_value_ms: f64,
    /// off - on of the means below the cutoff, ms.
    pub savings_avg_ms: f64,
}

/// Cutoff percentiles of the seed's table.
pub const CUTOFFS: [f64; 9] = [50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.5];

/// What the trials show.
pub struct Analysis {
    /// The seed's table.
    pub table: Vec<CutoffRow>,
    /// Times to first byte per arm, ascending, ms.
    pub ttfb: [Vec<f64>; 2],
    /// Median total time per arm, ms.
    pub median_total: [f64; 2],
    /// Mean of the largest read asked per connection, per arm, bytes.
    pub read_buffer: [f64; 2],
    /// The 95 % intervals of the means below the median do not overlap.
    pub significant: bool,
    /// Named figures for `results.json`.
    pub summary: Summary,
}

/// Index of an arm in the `[on, off]` pairs of [`Analysis`].
pub fn ix(a: Arm) -> usize {
    match a {
        Arm::On => 0,
        Arm::Off => 1,
    }
}

/// The table and figures of `trials`; too few trials per arm is an error.
pub fn analyse(trials: &[Trial]) -> Result<Analysis, LabError> {
    let arm = |a: Arm, f: fn(&Trial) -> f64| {
        let mut v: Vec<f64> = trials.iter().filter(|t| t.arm == a).map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (on_t, off_t) = (arm(Arm::On, |t| t.ttfb_ms), arm(Arm::Off, |t| t.ttfb_ms));
    let (on_total, off_total) = (arm(Arm::On, |t| t.total_ms), arm(Arm::Off, |t| t.total_ms));
    if on_t.len() < 2 || off_t.len() < 2 {
        return Err(LabError::TooFew(
            "too few trials per arm: use --runs 20 or more".into(),
        ));
    }
    let table: Vec<CutoffRow> = CUTOFFS
        .iter()
        .map(|&c| {
            let (off, on) = (row(&off_t, c), row(&on_t, c));
            CutoffRow {
                cutoff: c,
                delta_value_ms: off.value - on.value,
                savings_avg_ms: off.avg - on.avg,
                off,
                on,
            }
        })
        .collect();
    let (off50, on50) = (row(&off_t, 50.0), row(&on_t, 50.0));
    let significant = off50.min_avg > on50.max_avg || on50.min_avg > off50.max_avg;
    let mem = |a: Arm| {
        let v: Vec<f64> = trials
            .iter()
            .filter(|t| t.arm == a)
            .map(|t| t.max_read as f64)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let mut summary = Summary::new();
    summary.insert("on_median_ttfb_ms".into(), on50.value.into());
    summary.insert("off_median_ttfb_ms".into(), off50.value.into());
    summary.insert("significant".into(), significant.into());
    summary.insert("trials".into(), (trials.len() as u64).into());
    summary.insert("on_read_buffer_bytes".into(), mem(Arm::On).into());
    summary.insert("off_read_buffer_bytes".into(), mem(Arm::Off).into());
    Ok(Analysis {
        table,
        median_total: [row(&on_total, 50.0).value, row(&off_total, 50.0).value],
        read_buffer: [mem(Arm::On), mem(Arm::Off)],
        ttfb: [on_t, off_t],
        significant,
        summary,
    })
}

/// The seed's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "read slow start lowers the median time to first byte: the 95 % intervals of the two arms' means below their medians do not overlap, the on arm's lower (the seed's own test); under 30 trials per arm an overlap says too few samples";

/// Trials per arm below which no overlap decides anything.
pub const ENOUGH: usize = 30;

/// The verdict on the seed's claim from the analysis.
pub fn verdict(a: &Analysis) -> Verdict {
    let (on, off) = (&a.table[0].on, &a.table[0].off);
    let n = a.ttfb[0].len().min(a.ttfb[1].len());
    let outcome = match (a.significant, on.avg < off.avg) {
        (true, true) => Outcome::Reproduced,
        (true, false) => Outcome::NotReproduced,
        (false, _) if n < ENOUGH => Outcome::TooFewSamples,
        (false, _) => Outcome::NotReproduced,
    };
    // The medians' own intervals (order statistics), beside the seed's test.
    let ci = |arm: Arm| {
        crate::verdict::median_interval(&a.ttfb[ix(arm)])
            .map_or(String::new(), |i| format!(" {}", i.text(1)))
    };
    Verdict {
        outcome,
        criterion: CRITERION.into(),
        measured: format!(
            "median TTFB off {:.1}{} ms, on {:.1}{} ms; means below the median off {:.1} [{:.1}, {:.1}], on {:.1} [{:.1}, {:.1}] ms ({n} trials per arm)",
            off.value,
            ci(Arm::Off),
            on.value,
            ci(Arm::On),
            off.avg,
            off.min_avg,
            off.max_avg,
            on.avg,
            on.min_avg,
            on.max_avg
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_seed_definition() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let r = row(&v, 50.0);
        assert_eq!(r.value, 50.0);
        assert_eq!(r.avg, 25.5);
        assert!(r.min_avg < 25.5 && r.max_avg > 25.5);
    }

    fn trial(arm: Arm, ttfb_ms: f64) -> Trial {
        Trial {
            arm,
            rtt_ms: 20.0,
            size: 1000,
            ttfb_ms,
            total_ms: ttfb_ms + 1.0,
            max_read: if arm == Arm::On { 4096 } else { 32768 },
            min_rtt_ms: Some(20.0),
        }
    }

    #[test]
    fn arms_far_apart_are_significant_and_alike_are_not() {
        let apart: Vec<Trial> = (0..40)
            .map(|i| {
                trial(
                    if i % 2 == 0 { Arm::On } else { Arm::Off },
                    if i % 2 == 0 { 20.0 } else { 40.0 } + f64::from(i % 5),
                )
            })
            .collect();
        let a = analyse(&apart).expect("enough trials");
        assert!(a.significant);
        assert_eq!(a.read_buffer, [4096.0, 32768.0]);
        assert_eq!(a.table.len(), CUTOFFS.len());
        assert!(a.table[0].delta_value_ms > 15.0);
        let alike: Vec<Trial> = (0..40)
            .map(|i| {
                trial(
                    if i % 2 == 0 { Arm::On } else { Arm::Off },
                    20.0 + f64::from(i % 7),
                )
            })
            .collect();
        assert!(!analyse(&alike).expect("enough").significant);
        // The verdicts: on faster and apart is the seed's claim; alike
        // with 20 trials an arm is too few to say; the arms swapped
        // (a corrupted run, on slower) is not the claim.
        assert_eq!(verdict(&a).outcome, Outcome::Reproduced);
        assert_eq!(
            verdict(&analyse(&alike).unwrap()).outcome,
            Outcome::TooFewSamples
        );
        let swapped: Vec<Trial> = apart
            .iter()
            .map(|t| trial(if t.arm == Arm::On { Arm::Off } else { Arm::On }, t.ttfb_ms))
            .collect();
        assert_eq!(
            verdict(&analyse(&swapped).unwrap()).outcome,
            Outcome::NotReproduced
        );
        assert!(
            analyse(&alike[..2]).is_err(),
            "one trial per arm is too few"
        );
    }
}
