//! The field report's table from the trials: per cutoff percentile, each arm's
//! value there and the mean below it with its 95 % confidence interval;
//! whether the arms differ at the median (no I/O).

use super::measure::{Arm, Trial};
use crate::sequential::Record;
use crate::verdict::Verdict;
use crate::{LabError, Summary};
use serde::{Deserialize, Serialize};

/// One row of the field report's table for one arm.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// One cutoff of the field report's table.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// Cutoff percentiles of the field report's table.
pub const CUTOFFS: [f64; 9] = [50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.5];

/// What the trials show.
pub struct Analysis {
    /// The field report's table.
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
    /// The sequential decision on the pairs' saving.
    pub record: Record,
}

/// Index of an arm in the `[on, off]` pairs of [`Analysis`].
pub fn ix(a: Arm) -> usize {
    match a {
        Arm::On => 0,
        Arm::Off => 1,
    }
}

/// A round's value: the median over its pairs (every path's) of the
/// pair's off minus on time to first byte, ms. The plan puts a pair's
/// two trials back to back on one path ([`super::Plan::round`]).
pub fn round_value(trials: &[Trial]) -> Vec<f64> {
    let mut d: Vec<f64> = trials
        .chunks(2)
        .filter(|p| p.len() == 2 && p[0].arm != p[1].arm)
        .map(|p| {
            let (on, off) = if p[0].arm == Arm::On {
                (&p[0], &p[1])
            } else {
                (&p[1], &p[0])
            };
            off.ttfb_ms - on.ttfb_ms
        })
        .collect();
    d.sort_by(f64::total_cmp);
    vec![if d.is_empty() {
        f64::NAN
    } else {
        crate::common::median_p90(&d).0
    }]
}

/// The field report's table from each arm's ascending times to first byte.
pub fn cutoffs(on_t: &[f64], off_t: &[f64]) -> Vec<CutoffRow> {
    CUTOFFS
        .iter()
        .map(|&c| {
            let (off, on) = (row(off_t, c), row(on_t, c));
            CutoffRow {
                cutoff: c,
                delta_value_ms: off.value - on.value,
                savings_avg_ms: off.avg - on.avg,
                off,
                on,
            }
        })
        .collect()
}

/// The table and figures of `trials`; too few trials per arm is an error.
pub fn analyse(trials: &[Trial], record: Record) -> Result<Analysis, LabError> {
    let arm = |a: Arm, f: fn(&Trial) -> f64| {
        let mut v: Vec<f64> = trials.iter().filter(|t| t.arm == a).map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (on_t, off_t) = (arm(Arm::On, |t| t.ttfb_ms), arm(Arm::Off, |t| t.ttfb_ms));
    let (on_total, off_total) = (arm(Arm::On, |t| t.total_ms), arm(Arm::Off, |t| t.total_ms));
    if on_t.len() < 2 || off_t.len() < 2 {
        return Err(LabError::TooFew(
            "too few trials per arm: a round has 16, so the run stopped before its first ended"
                .into(),
        ));
    }
    let table = cutoffs(&on_t, &off_t);
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
        record,
    })
}

/// The field report's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "read slow start saves time to first byte: each round runs pairs of fresh connections, one of each arm, of one response size, back to back on one path; the median of the rounds' median off-minus-on saving is at least the field report's smallest, 3 ms, decided by its indifference zone (the decision table)";

/// The verdict on the field report's claim: the sequential decision, with the
/// arms' medians beside it.
pub fn verdict(a: &Analysis) -> Verdict {
    let (on, off) = (&a.table[0].on, &a.table[0].off);
    let n = a.ttfb[0].len().min(a.ttfb[1].len());
    // The medians' own intervals (order statistics), beside the decision.
    let ci = |arm: Arm| {
        crate::verdict::median_interval(&a.ttfb[ix(arm)])
            .map_or(String::new(), |i| format!(" {}", i.text(1)))
    };
    Verdict {
        outcome: crate::sequential::outcome(&a.record.parts, crate::sequential::Combine::All),
        criterion: CRITERION.into(),
        measured: format!(
            "median TTFB off {:.1}{} ms, on {:.1}{} ms ({n} trials per arm); {}",
            off.value,
            ci(Arm::Off),
            on.value,
            ci(Arm::On),
            a.record.line()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Outcome;

    #[test]
    fn rows_follow_the_field_reports_definition() {
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

    /// Pairs of one size, on first: `saving` ms faster than off.
    fn pairs(n: usize, saving: f64) -> Vec<Trial> {
        (0..n)
            .flat_map(|i| {
                let t = 20.0 + (i % 5) as f64;
                [trial(Arm::On, t), trial(Arm::Off, t + saving)]
            })
            .collect()
    }

    fn analysed(rounds: usize, saving: f64) -> Analysis {
        let per_round: Vec<Vec<Trial>> = (0..rounds).map(|_| pairs(16, saving)).collect();
        let values: Vec<Vec<f64>> = per_round.iter().map(|r| round_value(r)).collect();
        let record = Record::of_rounds(
            super::super::parts(),
            &values,
            crate::sequential::Stop::Decided,
        );
        analyse(&per_round.concat(), record).expect("enough trials")
    }

    #[test]
    fn the_decision_reads_the_pairs_saving() {
        assert_eq!(round_value(&pairs(16, 5.0)), vec![5.0]);
        // Either order within a pair.
        let swapped: Vec<Trial> = pairs(4, -2.0)
            .chunks(2)
            .flat_map(|p| [p[1].clone(), p[0].clone()])
            .collect();
        assert_eq!(round_value(&swapped), vec![-2.0]);
        let a = analysed(7, 10.0);
        assert_eq!(a.read_buffer, [4096.0, 32768.0]);
        assert_eq!(a.table.len(), CUTOFFS.len());
        assert!(a.table[0].delta_value_ms > 9.0);
        // A 10 ms saving is the field report's claim; none is not; three rounds
        // bound nothing yet.
        assert_eq!(
            verdict(&a).outcome,
            Outcome::Reproduced,
            "{}",
            verdict(&a).measured
        );
        assert_eq!(verdict(&analysed(7, 0.0)).outcome, Outcome::NotReproduced);
        assert_eq!(verdict(&analysed(3, 10.0)).outcome, Outcome::Undecided);
        assert!(
            analyse(&pairs(1, 0.0), analysed(1, 0.0).record).is_err(),
            "one trial per arm is too few"
        );
    }
}
