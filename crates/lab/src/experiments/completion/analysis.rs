//! The network half's figures: per model and client count the median
//! requests per second (with its interval) and p99 latency over rounds,
//! flatness (the last count over the best, round by round), and the
//! ratios the report quotes (no I/O).

use super::Plan;
use super::measure::Measured;
use crate::Summary;
use crate::common::{median_p90, ratio_by_round};
use crate::verdict::{Estimate, Outcome, Verdict};
use tcpwise_dispatch::load::LoadReport;

/// What the runs show.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Per model (in `Measured::models` order), per count: median req/s.
    pub tps: Vec<Vec<f64>>,
    /// Per model, per count: median p99 latency, ms.
    pub p99_ms: Vec<Vec<f64>>,
    /// Per model, per count: req/s over the rounds, with its interval.
    pub tps_spread: Vec<Vec<Estimate>>,
    /// Per model: req/s at the last count over its best count, round by
    /// round, over the rounds.
    pub flatness: Vec<Estimate>,
    /// At the last count: segments over shared, throughput and p99.
    pub segments_over_shared: (f64, f64),
    /// At the last count: tokio over shared, throughput and p99.
    pub tokio_over_shared: (f64, f64),
    /// At the last count, round by round: segments over shared and tokio
    /// over shared throughput, over the rounds.
    pub ratios_at_top: (Estimate, Estimate),
    /// Rounds that ran.
    pub rounds: usize,
    /// The experiment's line, network half.
    pub headline: String,
    /// Named figures for `results.json`.
    pub summary: Summary,
}

/// The median of `k` over the runs of `model` at `clients`.
pub fn median_of(m: &Measured, model: &str, clients: usize, k: fn(&LoadReport) -> f64) -> f64 {
    let v: Vec<f64> = m
        .runs
        .iter()
        .filter(|r| r.model == model && r.report.clients == clients)
        .map(|r| k(&r.report))
        .collect();
    median_p90(&v).0
}

/// `k` of each round's run of `model` at `clients`, in round order.
pub fn by_round(
    m: &Measured,
    model: &str,
    clients: usize,
    k: fn(&LoadReport) -> f64,
) -> Vec<(usize, f64)> {
    let mut v: Vec<(usize, f64)> = m
        .runs
        .iter()
        .filter(|r| r.model == model && r.report.clients == clients)
        .map(|r| (r.round, k(&r.report)))
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

fn tps(r: &LoadReport) -> f64 {
    r.tps
}

fn p99(r: &LoadReport) -> f64 {
    r.p99_us as f64
}

/// Network rounds the verdict needs.
pub const MIN_ROUNDS: usize = 3;

/// The seed's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "the shared completion queue keeps at least 0.9 of its peak requests per second at the largest client count (network: the median over 3 rounds or more of each round's top count over its best), and is at least as fast as fixed segments under skewed file I/O (shared/segments at least 1 at the top count, the median of 3 rounds or more)";

/// The verdict on the seed's claim: the network half's `shared` model
/// decides it; the file half's skewed ratio (`files_skew`, over its
/// rounds) adds "with a difference" when it goes the other way.
pub fn verdict(a: &Analysis, models: &[String], files_skew: Option<(Estimate, usize)>) -> Verdict {
    let rounds = a.rounds;
    let flat = models
        .iter()
        .position(|m| m == "shared")
        .and_then(|i| a.flatness.get(i).copied());
    let Some(flat) = flat else {
        return Verdict {
            outcome: Outcome::TooFewSamples,
            criterion: CRITERION.into(),
            measured: "no runs of the shared model".into(),
        };
    };
    let files = match files_skew {
        None => "file I/O not run".to_string(),
        Some((r, rounds)) if rounds < 3 => format!(
            "file I/O skewed shared/segments {} from {rounds} round(s): too few to judge",
            r.text(2)
        ),
        Some((r, rounds)) => format!(
            "file I/O skewed shared/segments {} ({rounds} rounds){}",
            r.text(2),
            if r.median < 1.0 && r.holds(1.0) {
                ", below 1 at the median but within its rounds' spread"
            } else {
                ""
            }
        ),
    };
    let files_lost = matches!(files_skew, Some((r, rounds)) if rounds >= 3 && r.median < 1.0);
    let outcome = match (rounds >= MIN_ROUNDS, flat.median >= 0.9, files_lost) {
        (false, _, _) => Outcome::TooFewSamples,
        (true, true, false) => Outcome::Reproduced,
        (true, true, true) => Outcome::Differs,
        (true, false, _) => Outcome::NotReproduced,
    };
    Verdict {
        outcome,
        criterion: CRITERION.into(),
        measured: format!(
            "network: shared keeps {} of its peak at the top count ({rounds} round(s){}{}); {files}",
            flat.text(2),
            if rounds < MIN_ROUNDS {
                ", the verdict needs 3"
            } else {
                ""
            },
            if rounds >= MIN_ROUNDS && flat.holds(0.9) {
                "; its interval holds 0.9, so the network verdict sits within the rounds' spread and another run may fall on the other side"
            } else {
                ""
            }
        ),
    }
}

/// The figures of `m`.
pub fn analyse(plan: &Plan, m: &Measured) -> Analysis {
    let counts = &plan.counts;
    let (lo, hi) = (counts[0], counts[counts.len() - 1]);
    let mut summary = Summary::new();
    let mut all_tps = Vec::new();
    let mut spreads = Vec::new();
    let mut flatness = Vec::new();
    let rounds = m.runs.iter().map(|r| r.round + 1).max().unwrap_or(0);
    for model in &m.models {
        let v: Vec<f64> = counts
            .iter()
            .map(|&c| median_of(m, model, c, tps))
            .collect();
        let per_count: Vec<Vec<(usize, f64)>> =
            counts.iter().map(|&c| by_round(m, model, c, tps)).collect();
        // Each round's top count over that round's best count.
        let flat_by_round: Vec<f64> = (0..rounds)
            .filter_map(|r| {
                let at = |i: usize| per_count[i].iter().find(|x| x.0 == r).map(|x| x.1);
                let peak = (0..counts.len()).filter_map(at).fold(0.0f64, f64::max);
                at(counts.len() - 1).map(|t| t / peak)
            })
            .collect();
        let flat = Estimate::of(&flat_by_round);
        for (c, t) in counts.iter().zip(&v) {
            summary.insert(format!("{model}_{c}_tps"), (*t).into());
        }
        summary.insert(format!("{model}_flatness"), flat.median.into());
        if let Some(i) = flat.interval {
            summary.insert(format!("{model}_flatness_lo"), i.lo.into());
            summary.insert(format!("{model}_flatness_hi"), i.hi.into());
        }
        all_tps.push(v);
        spreads.push(
            per_count
                .iter()
                .map(|v| Estimate::of(&v.iter().map(|x| x.1).collect::<Vec<_>>()))
                .collect(),
        );
        flatness.push(flat);
    }
    summary.insert("rounds".into(), (rounds as u64).into());
    let mut all_p99 = Vec::new();
    for model in &m.models {
        let v: Vec<f64> = counts
            .iter()
            .map(|&c| {
                let p = median_of(m, model, c, p99) / 1e3;
                summary.insert(format!("{model}_{c}_p99_ms"), p.into());
                p
            })
            .collect();
        all_p99.push(v);
    }
    let over = |a: &str, b: &str| {
        (
            median_of(m, a, hi, tps) / median_of(m, b, hi, tps),
            median_of(m, a, hi, p99) / median_of(m, b, hi, p99),
        )
    };
    let headline = m
        .models
        .iter()
        .map(|model| {
            format!(
                "{model} {:.0} -> {:.0}/s (p99 {:.0} ms at {hi})",
                median_of(m, model, lo, tps),
                median_of(m, model, hi, tps),
                median_of(m, model, hi, p99) / 1e3
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let top = |model: &str| by_round(m, model, hi, tps);
    Analysis {
        tps: all_tps,
        tps_spread: spreads,
        p99_ms: all_p99,
        flatness,
        segments_over_shared: over("segments", "shared"),
        tokio_over_shared: over("tokio", "shared"),
        ratios_at_top: (
            Estimate::of(&ratio_by_round(&top("segments"), &top("shared"))),
            Estimate::of(&ratio_by_round(&top("tokio"), &top("shared"))),
        ),
        rounds,
        headline,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_flatness(shared: &[f64]) -> Analysis {
        Analysis {
            tps: Vec::new(),
            tps_spread: Vec::new(),
            p99_ms: Vec::new(),
            flatness: vec![Estimate::of(&[0.4, 0.4, 0.4]), Estimate::of(shared)],
            segments_over_shared: (1.0, 1.0),
            tokio_over_shared: (1.0, 1.0),
            ratios_at_top: (Estimate::of(&[1.0]), Estimate::of(&[1.0])),
            rounds: shared.len(),
            headline: String::new(),
            summary: Summary::new(),
        }
    }

    #[test]
    fn the_shared_queue_losing_ground_flips_the_verdict() {
        let models = ["segments".to_string(), "shared".to_string()];
        let skew = |v: &[f64]| Some((Estimate::of(v), v.len()));
        let held = verdict(
            &with_flatness(&[0.97, 0.99, 0.95]),
            &models,
            skew(&[1.05, 1.02, 1.1]),
        );
        assert_eq!(held.outcome, Outcome::Reproduced, "{held:?}");
        assert!(
            held.measured.contains("0.97 [0.95, 0.99] (75 %, 3 runs)"),
            "{held:?}"
        );
        assert!(
            !held.measured.contains("within the rounds' spread"),
            "{held:?}"
        );
        // A flatness whose interval straddles 0.9 is decided by its
        // median and says it could go either way.
        let close = verdict(
            &with_flatness(&[0.93, 0.77, 0.96]),
            &models,
            skew(&[1.05, 1.02, 1.1]),
        );
        assert_eq!(close.outcome, Outcome::Reproduced, "{close:?}");
        assert!(
            close.measured.contains("within the rounds' spread"),
            "{close:?}"
        );
        // Corrupted: shared falls to half its peak at the top count.
        let fell = verdict(
            &with_flatness(&[0.5, 0.55, 0.45]),
            &models,
            skew(&[1.05, 1.02, 1.1]),
        );
        assert_eq!(fell.outcome, Outcome::NotReproduced);
        // Segments ahead under skew over 3 rounds: a difference, said to
        // be within the spread when the rounds straddle 1; over one round
        // it is not judged.
        let behind = verdict(
            &with_flatness(&[0.97, 0.99, 0.95]),
            &models,
            skew(&[0.88, 0.94, 1.02]),
        );
        assert_eq!(behind.outcome, Outcome::Differs);
        assert!(
            behind.measured.contains("within its rounds' spread"),
            "{behind:?}"
        );
        let files_quick = verdict(&with_flatness(&[0.97, 0.99, 0.95]), &models, skew(&[0.36]));
        assert_eq!(files_quick.outcome, Outcome::Reproduced);
        assert!(
            files_quick.measured.contains("too few to judge"),
            "{files_quick:?}"
        );
        // Fewer than 3 network rounds (--quick has one) decide nothing.
        assert_eq!(
            verdict(&with_flatness(&[0.5, 0.6]), &models, None).outcome,
            Outcome::TooFewSamples
        );
    }
}
