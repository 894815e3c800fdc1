//! The network half's figures: per model and client count the median
//! requests per second and p99 latency over rounds, flatness (the last
//! count over the best), and the ratios the report quotes (no I/O).

use super::Plan;
use super::measure::Measured;
use crate::Summary;
use crate::common::median_p90;
use crate::verdict::{Outcome, Verdict};
use tcpwise_dispatch::load::LoadReport;

/// What the runs show.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Per model (in `Measured::models` order), per count: median req/s.
    pub tps: Vec<Vec<f64>>,
    /// Per model, per count: median p99 latency, ms.
    pub p99_ms: Vec<Vec<f64>>,
    /// Per model: req/s at the last count over its best.
    pub flatness: Vec<f64>,
    /// At the last count: segments over shared, throughput and p99.
    pub segments_over_shared: (f64, f64),
    /// At the last count: tokio over shared, throughput and p99.
    pub tokio_over_shared: (f64, f64),
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

fn tps(r: &LoadReport) -> f64 {
    r.tps
}

fn p99(r: &LoadReport) -> f64 {
    r.p99_us as f64
}

/// The seed's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "the shared completion queue keeps at least 0.9 of its peak requests per second at the largest client count (network, medians of 2 rounds or more), and is at least as fast as fixed segments under skewed file I/O (shared/segments at least 1 at the top count, judged from 3 rounds or more)";

/// The verdict on the seed's claim: the network half's `shared` model
/// decides it; the file half's skewed ratio (`files_skew`, with its
/// rounds) adds "with a difference" when it goes the other way.
pub fn verdict(
    a: &Analysis,
    models: &[String],
    rounds: usize,
    files_skew: Option<(f64, usize)>,
) -> Verdict {
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
        Some((r, rounds)) if rounds < 3 => {
            format!(
                "file I/O skewed shared/segments {r:.2} from {rounds} round(s): too few to judge"
            )
        }
        Some((r, rounds)) => format!("file I/O skewed shared/segments {r:.2} ({rounds} rounds)"),
    };
    let files_lost = matches!(files_skew, Some((r, rounds)) if rounds >= 3 && r < 1.0);
    let outcome = match (rounds >= 2, flat >= 0.9, files_lost) {
        (false, _, _) => Outcome::TooFewSamples,
        (true, true, false) => Outcome::Reproduced,
        (true, true, true) => Outcome::Differs,
        (true, false, _) => Outcome::NotReproduced,
    };
    Verdict {
        outcome,
        criterion: CRITERION.into(),
        measured: format!(
            "network: shared keeps {flat:.2} of its peak at the top count ({rounds} round(s)); {files}"
        ),
    }
}

/// The figures of `m`.
pub fn analyse(plan: &Plan, m: &Measured) -> Analysis {
    let counts = &plan.counts;
    let (lo, hi) = (counts[0], counts[counts.len() - 1]);
    let mut summary = Summary::new();
    let mut all_tps = Vec::new();
    let mut flatness = Vec::new();
    for model in &m.models {
        let v: Vec<f64> = counts
            .iter()
            .map(|&c| median_of(m, model, c, tps))
            .collect();
        let peak = v.iter().copied().fold(0.0f64, f64::max);
        let flat = v[v.len() - 1] / peak;
        for (c, t) in counts.iter().zip(&v) {
            summary.insert(format!("{model}_{c}_tps"), (*t).into());
        }
        summary.insert(format!("{model}_flatness"), flat.into());
        all_tps.push(v);
        flatness.push(flat);
    }
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
    Analysis {
        tps: all_tps,
        p99_ms: all_p99,
        flatness,
        segments_over_shared: over("segments", "shared"),
        tokio_over_shared: over("tokio", "shared"),
        headline,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_flatness(shared: f64) -> Analysis {
        Analysis {
            tps: Vec::new(),
            p99_ms: Vec::new(),
            flatness: vec![0.4, shared],
            segments_over_shared: (1.0, 1.0),
            tokio_over_shared: (1.0, 1.0),
            headline: String::new(),
            summary: Summary::new(),
        }
    }

    #[test]
    fn the_shared_queue_losing_ground_flips_the_verdict() {
        let models = ["segments".to_string(), "shared".to_string()];
        let held = verdict(&with_flatness(0.97), &models, 2, Some((1.05, 3)));
        assert_eq!(held.outcome, Outcome::Reproduced, "{held:?}");
        // Corrupted: shared falls to half its peak at the top count.
        let fell = verdict(&with_flatness(0.5), &models, 2, Some((1.05, 3)));
        assert_eq!(fell.outcome, Outcome::NotReproduced);
        // Segments ahead under skew over 3 rounds: a difference; over one
        // round it is not judged.
        assert_eq!(
            verdict(&with_flatness(0.97), &models, 2, Some((0.88, 3))).outcome,
            Outcome::Differs
        );
        let files_quick = verdict(&with_flatness(0.97), &models, 2, Some((0.36, 1)));
        assert_eq!(files_quick.outcome, Outcome::Reproduced);
        assert!(
            files_quick.measured.contains("too few to judge"),
            "{files_quick:?}"
        );
        // One network round (--quick) decides nothing.
        assert_eq!(
            verdict(&with_flatness(0.5), &models, 1, None).outcome,
            Outcome::TooFewSamples
        );
    }
}
