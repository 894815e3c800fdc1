//! The field report's table from the trials: per cutoff percentile, each arm's
//! value there and the mean below it with its 95 % confidence interval;
//! whether the arms differ at the median (no I/O).

use super::measure::{Arm, Cause, Trial};
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
    /// A row per path and condition.
    pub paths: Vec<PathRow>,
    /// Each arm's reads, `[on, off]`.
    pub reads: [Reads; 2],
}

/// Index of an arm in the `[on, off]` pairs of [`Analysis`].
pub fn ix(a: Arm) -> usize {
    match a {
        Arm::On => 0,
        Arm::Off => 1,
    }
}

/// A trial's pairs: (on, off) of one size and condition, back to back on
/// one path ([`super::Plan::round`] draws them so).
pub fn pairs(trials: &[Trial]) -> impl Iterator<Item = (&Trial, &Trial)> {
    trials
        .chunks(2)
        .filter(|p| p.len() == 2 && p[0].arm != p[1].arm && p[0].cause == p[1].cause)
        .map(|p| {
            if p[0].arm == Arm::On {
                (&p[0], &p[1])
            } else {
                (&p[1], &p[0])
            }
        })
}

/// The median of the pairs' off-minus-on `f` under `cause` (NaN without
/// a pair).
fn median_saving(trials: &[Trial], cause: Cause, f: fn(&Trial) -> f64) -> f64 {
    let mut d: Vec<f64> = pairs(trials)
        .filter(|(on, _)| on.cause == cause)
        .map(|(on, off)| f(off) - f(on))
        .collect();
    d.sort_by(f64::total_cmp);
    if d.is_empty() {
        f64::NAN
    } else {
        crate::common::median_p90(&d).0
    }
}

/// A round's values, one per part ([`Cause::ALL`]'s order): the median
/// over its pairs (every path's) of the pair's off minus on time to first
/// byte, ms, under each condition.
pub fn round_value(trials: &[Trial]) -> Vec<f64> {
    Cause::ALL
        .iter()
        .map(|&c| median_saving(trials, c, |t| t.ttfb_ms))
        .collect()
}

/// The part of `record` that decided `cause` (a recording from before the
/// model has one part, Linux's).
pub fn part(record: &Record, cause: Cause) -> Option<&crate::sequential::PartResult> {
    let held = |p: &&crate::sequential::PartResult| p.name.contains("report's cause");
    match cause {
        Cause::Held => record.parts.iter().find(held),
        Cause::Linux => record.parts.iter().find(|p| !held(p)),
    }
}

/// One path under one condition.
#[derive(Debug, Clone, Serialize)]
pub struct PathRow {
    /// The path's RTT, ms.
    pub rtt_ms: f64,
    /// The condition.
    pub cause: Cause,
    /// Pairs.
    pub pairs: usize,
    /// Median time to first byte, off and on, ms.
    pub ttfb: [f64; 2],
    /// Median of the pairs' off-minus-on time to first byte, ms.
    pub saved_ms: f64,
    /// Median of the pairs' off-minus-on total time, responses of 100 KB
    /// or more (where small reads cost), ms, and their count.
    pub large_total_saved: (f64, usize),
}

/// Every path under every condition that ran.
pub fn path_rows(trials: &[Trial]) -> Vec<PathRow> {
    let mut rtts: Vec<f64> = trials.iter().map(|t| t.rtt_ms).collect();
    rtts.sort_by(f64::total_cmp);
    rtts.dedup();
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            f64::NAN
        } else {
            crate::common::median_p90(&v).0
        }
    };
    let mut rows = Vec::new();
    for c in Cause::ALL {
        for &rtt in &rtts {
            let here: Vec<(&Trial, &Trial)> = pairs(trials)
                .filter(|(on, _)| on.cause == c && on.rtt_ms == rtt)
                .collect();
            if here.is_empty() {
                continue;
            }
            let large: Vec<f64> = here
                .iter()
                .filter(|(on, _)| on.size >= 100_000)
                .map(|(on, off)| off.total_ms - on.total_ms)
                .collect();
            rows.push(PathRow {
                rtt_ms: rtt,
                cause: c,
                pairs: here.len(),
                ttfb: [
                    med(here.iter().map(|p| p.1.ttfb_ms).collect()),
                    med(here.iter().map(|p| p.0.ttfb_ms).collect()),
                ],
                saved_ms: med(here
                    .iter()
                    .map(|(on, off)| off.ttfb_ms - on.ttfb_ms)
                    .collect()),
                large_total_saved: (med(large.clone()), large.len()),
            });
        }
    }
    rows
}

/// What an arm's reads asked and got.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Reads {
    /// Reads recorded.
    pub n: usize,
    /// Smallest and largest size asked, bytes.
    pub asked: (u32, u32),
    /// Reads that asked 32 KiB.
    pub at_32k: usize,
    /// Reads that returned less than they asked.
    pub partial: usize,
    /// Median bytes a read returned.
    pub returned_median: f64,
}

/// Every read of `arm`'s trials.
pub fn reads(trials: &[Trial], arm: Arm) -> Reads {
    let all: Vec<(u32, u32)> = trials
        .iter()
        .filter(|t| t.arm == arm)
        .flat_map(|t| t.reads.iter().copied())
        .collect();
    if all.is_empty() {
        return Reads::default();
    }
    let mut got: Vec<f64> = all.iter().map(|r| f64::from(r.1)).collect();
    got.sort_by(f64::total_cmp);
    Reads {
        n: all.len(),
        asked: (
            all.iter().map(|r| r.0).min().unwrap_or(0),
            all.iter().map(|r| r.0).max().unwrap_or(0),
        ),
        at_32k: all.iter().filter(|r| r.0 == 32 * 1024).count(),
        partial: all.iter().filter(|r| r.1 < r.0).count(),
        returned_median: crate::common::median_p90(&got).0,
    }
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
pub fn analyse(all: &[Trial], record: Record) -> Result<Analysis, LabError> {
    // The report-shaped table and the arms' medians: Linux's trials (the
    // condition this machine has); the model's are in the path rows.
    let linux: Vec<Trial> = all
        .iter()
        .filter(|t| t.cause == Cause::Linux)
        .cloned()
        .collect();
    let trials = &linux[..];
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
    summary.insert("trials".into(), (all.len() as u64).into());
    let reads_of = |a: Arm| reads(all, a);
    let (on_reads, off_reads) = (reads_of(Arm::On), reads_of(Arm::Off));
    if off_reads.n > 0 {
        summary.insert(
            "off_reads_asked_32k".into(),
            (off_reads.at_32k as u64).into(),
        );
        summary.insert("off_reads".into(), (off_reads.n as u64).into());
    }
    for c in Cause::ALL {
        let key = match c {
            Cause::Linux => "linux",
            Cause::Held => "held",
        };
        let v = median_saving(all, c, |t| t.ttfb_ms);
        if v.is_finite() {
            summary.insert(format!("{key}_saved_ms"), v.into());
        }
    }
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
        paths: path_rows(all),
        reads: [on_reads, off_reads],
    })
}

/// The field report's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "read slow start saves time to first byte under the field report's cause: each round runs pairs of fresh connections, one of each arm, of one response size, back to back on one path, under the report's cause modelled (a read that got less than it asked completes 40-50 ms later unless filled) and on plain Linux; the median of the rounds' median off-minus-on saving under the cause is at least the field report's smallest, 3 ms (the claim), and on Linux the same is a detail; each decided by its indifference zone (the decision table)";

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
        outcome: crate::sequential::outcome(&a.record.parts, crate::sequential::Combine::Main(1)),
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

    fn trial(arm: Arm, cause: Cause, ttfb_ms: f64) -> Trial {
        Trial {
            arm,
            cause,
            rtt_ms: 20.0,
            size: 1000,
            ttfb_ms,
            total_ms: ttfb_ms + 1.0,
            max_read: 32768,
            reads: vec![(if arm == Arm::On { 1024 } else { 32768 }, 1000)],
            min_rtt_ms: Some(20.0),
        }
    }

    /// Pairs of one size under each condition, on first: `held` and
    /// `linux` ms faster than off.
    fn pairs(n: usize, held: f64, linux: f64) -> Vec<Trial> {
        (0..n)
            .flat_map(|i| {
                let t = 20.0 + (i % 5) as f64;
                let (c, d) = if i % 2 == 0 {
                    (Cause::Held, held)
                } else {
                    (Cause::Linux, linux)
                };
                [trial(Arm::On, c, t), trial(Arm::Off, c, t + d)]
            })
            .collect()
    }

    fn analysed(rounds: usize, held: f64, linux: f64) -> Analysis {
        let per_round: Vec<Vec<Trial>> = (0..rounds).map(|_| pairs(16, held, linux)).collect();
        let values: Vec<Vec<f64>> = per_round.iter().map(|r| round_value(r)).collect();
        let record = Record::of_rounds(
            super::super::parts(),
            &values,
            crate::sequential::Stop::Decided,
        );
        analyse(&per_round.concat(), record).expect("enough trials")
    }

    #[test]
    fn the_decision_reads_the_pairs_saving_under_each_condition() {
        assert_eq!(round_value(&pairs(16, 40.0, 5.0)), vec![40.0, 5.0]);
        // Either order within a pair.
        let swapped: Vec<Trial> = pairs(4, -2.0, -2.0)
            .chunks(2)
            .flat_map(|p| [p[1].clone(), p[0].clone()])
            .collect();
        assert_eq!(round_value(&swapped), vec![-2.0, -2.0]);
        let a = analysed(7, 40.0, 0.0);
        assert_eq!(
            a.reads[1].at_32k, a.reads[1].n,
            "every fixed read asked 32 KiB"
        );
        assert_eq!(a.reads[0].asked, (1024, 1024));
        assert_eq!(a.table.len(), CUTOFFS.len());
        assert_eq!(a.paths.len(), 2, "a row per path and condition");
        assert_eq!(a.paths[0].saved_ms, 40.0);
        // Saved under the cause and not on Linux: the claim, with its
        // difference; saved under both: reproduced; under neither: not.
        assert_eq!(
            verdict(&a).outcome,
            Outcome::Differs,
            "{}",
            verdict(&a).measured
        );
        assert_eq!(
            verdict(&analysed(7, 40.0, 10.0)).outcome,
            Outcome::Reproduced
        );
        assert_eq!(
            verdict(&analysed(7, 0.0, 0.0)).outcome,
            Outcome::NotReproduced
        );
        assert_eq!(verdict(&analysed(3, 40.0, 0.0)).outcome, Outcome::Undecided);
        assert!(
            analyse(&pairs(2, 0.0, 0.0), analysed(1, 0.0, 0.0).record).is_err(),
            "one trial per arm is too few"
        );
    }
}
