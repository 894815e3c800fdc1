//! The network half's figures: per model and client count the median
//! requests per second (with its interval) and p99 latency over rounds,
//! flatness (the last count over the best, round by round), and the
//! ratios the report quotes (no I/O).

use super::Details as Measured;
use super::files::FileRun;
use super::measure::Run;
use super::{Decision, Plan};
use crate::Summary;
use crate::common::{median_p90, ratio_by_round};
use crate::sequential::{Combine, Record};
use crate::verdict::{Estimate, Verdict};
use tcpwise_dispatch::load::LoadReport;

/// What the runs show.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The client counts of the tables, in order (`tps`' columns).
    pub counts: Vec<usize>,
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

/// A decision round's values: `shared`'s requests/s at the top count
/// over its best count; then, on file I/O, shared's and innodb's
/// transactions/s at the top file count over their best file count (NaN,
/// counted for nothing, where the file runs are missing).
pub fn round_values(d: &Decision, net: &[Run], files: &[FileRun]) -> Vec<f64> {
    let at = |c: usize| {
        net.iter()
            .find(|r| r.report.clients == c)
            .map_or(f64::NAN, |r| r.report.tps)
    };
    let peak = d.counts.iter().map(|&c| at(c)).fold(0.0f64, f64::max);
    let mut v = vec![at(d.top()) / peak];
    v.extend(d.file_models.iter().map(|m| file_flatness(d, files, *m)));
    v
}

/// `model`'s file transactions/s at the top file count over its best
/// file count, in one round's runs (NaN where they are missing).
pub fn file_flatness(d: &Decision, files: &[FileRun], model: tcpwise_aio::Model) -> f64 {
    let name = model.to_string();
    let at = |c: u32| {
        files
            .iter()
            .find(|r| r.report.model == name && r.report.clients == c)
            .map_or(f64::NAN, |r| r.report.tps)
    };
    let peak = d.file_counts.iter().map(|&c| at(c)).fold(0.0f64, f64::max);
    at(d.file_top()) / peak
}

/// Each leave-one-out variant of innodb at the top file count over
/// innodb there, round by round, over the decision's rounds: above 1,
/// the semantic left out costs throughput.
pub fn semantics(
    d: &Decision,
    rounds: &[super::measure::DecisionRound],
) -> Vec<(String, Estimate)> {
    let top = d.file_top();
    let tps_of = |files: &[FileRun], name: &str| {
        files
            .iter()
            .find(|r| r.report.model == name && r.report.clients == top)
            .map(|r| r.report.tps)
    };
    let innodb = d.file_models[1].to_string();
    d.ablations
        .iter()
        .map(|m| {
            let name = m.to_string();
            let v: Vec<f64> = rounds
                .iter()
                .filter_map(|(_, f)| Some(tps_of(f, &name)? / tps_of(f, &innodb)?))
                .collect();
            (name, Estimate::of(&v))
        })
        .collect()
}

/// The field report's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "the shared completion queue keeps at least 0.9 of its peak requests per second at 1,024 clients over the network (each round: shared at 4, 64 and 1,024 clients, the top count over the best) and of its peak transactions per second at 1,024 clients on the report's own workload, file I/O (each round: 64 and 1,024 clients, uniform keys), while segments with InnoDB's semantics (32 slots a segment, a reaper a segment taking the lowest slot first, preferred segment then the whole array, one not_full event that wakes every waiter) keep at most 0.75 of theirs; the median of the rounds' values, each part decided by its indifference zone (the decision table)";

/// The verdict on the field report's claim: the sequential decision (the file
/// part left out where file I/O was skipped), with the tables' figures
/// beside it.
pub fn verdict(a: &Analysis, models: &[String], record: &Record) -> Verdict {
    let shared = models.iter().position(|m| m == "shared");
    let flat = shared.and_then(|i| a.flatness.get(i).copied());
    // The counts the tables really ran for shared (a short run has only
    // some), and whether its top count was its best in every round: then
    // "keeps all of its peak" holds by construction and says nothing of
    // a fall beyond.
    let ran: Vec<String> = shared
        .and_then(|i| a.tps.get(i))
        .map(|t| {
            a.counts
                .iter()
                .zip(t)
                .filter(|(_, v)| v.is_finite())
                .map(|(c, _)| c.to_string())
                .collect()
        })
        .unwrap_or_default();
    // A run decided by other parts is not judged by today's rule.
    let names: Vec<String> = super::parts().into_iter().map(|p| p.name).collect();
    if let Some(old) = record.parts.iter().find(|p| !names.contains(&p.name)) {
        return Verdict {
            outcome: crate::verdict::Outcome::Undecided,
            criterion: CRITERION.into(),
            measured: format!(
                "recorded with a criterion this version does not have (its part \"{}\"), so not decided by today's; run `tcpwise lab completion` anew",
                old.name
            ),
        };
    }
    Verdict {
        outcome: crate::sequential::outcome(&record.parts, Combine::All),
        criterion: CRITERION.into(),
        measured: format!(
            "{}{}",
            record.line(),
            flat.map_or(String::new(), |f| {
                let top = f.interval.map_or(f.median >= 1.0, |i| i.lo >= 1.0);
                if top {
                    format!(
                        "; the tables ({} clients, {} round(s)): shared was fastest at its top count in every round, so it kept its peak there by construction; they do not say whether it falls beyond",
                        ran.join(", "),
                        a.rounds
                    )
                } else {
                    format!(
                        "; the tables ({} clients): shared keeps {} of its peak ({} round(s))",
                        ran.join(", "),
                        f.text(2),
                        a.rounds
                    )
                }
            })
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
        counts: counts.clone(),
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
    use crate::sequential::Stop;
    use crate::verdict::Outcome;

    fn record(rounds: &[[f64; 3]]) -> Record {
        let v: Vec<Vec<f64>> = rounds.iter().map(|r| r.to_vec()).collect();
        Record::of_rounds(super::super::parts(), &v, Stop::Decided)
    }

    #[test]
    fn the_shared_queue_losing_ground_flips_the_verdict() {
        let a = Analysis {
            counts: vec![4, 1024],
            tps: vec![vec![3000.0, 5000.0]],
            tps_spread: Vec::new(),
            p99_ms: Vec::new(),
            flatness: vec![Estimate::of(&[0.97])],
            segments_over_shared: (1.0, 1.0),
            tokio_over_shared: (1.0, 1.0),
            ratios_at_top: (Estimate::of(&[1.0]), Estimate::of(&[1.0])),
            rounds: 1,
            headline: String::new(),
            summary: Summary::new(),
        };
        let models = ["shared".to_string()];
        let held = verdict(&a, &models, &record(&[[0.97, 0.95, 0.4]; 7]));
        assert_eq!(held.outcome, Outcome::Reproduced, "{held:?}");
        assert!(held.measured.contains("keeps 0.97"), "{held:?}");
        assert!(
            held.measured.contains("the tables (4, 1024 clients)"),
            "{held:?}"
        );
        // Fastest at its top count in every round: said to hold by
        // construction, not as a flat curve.
        let rising = Analysis {
            flatness: vec![Estimate::of(&[1.0, 1.0, 1.0])],
            ..a.clone()
        };
        let v = verdict(&rising, &models, &record(&[[0.97, 0.95, 0.4]; 7]));
        assert!(v.measured.contains("by construction"), "{v:?}");
        // InnoDB's segments keep their peak: no collapse, not reproduced.
        let flat = verdict(&a, &models, &record(&[[0.97, 0.95, 0.97]; 7]));
        assert_eq!(flat.outcome, Outcome::NotReproduced);
        // Shared falls on file I/O: not reproduced either.
        let file_fell = verdict(&a, &models, &record(&[[0.97, 0.5, 0.4]; 7]));
        assert_eq!(file_fell.outcome, Outcome::NotReproduced);
        // Corrupted: shared falls to half its peak at the top count.
        let fell = verdict(&a, &models, &record(&[[0.5, 0.95, 0.4]; 7]));
        assert_eq!(fell.outcome, Outcome::NotReproduced);
        // Three rounds bound nothing.
        let few = verdict(&a, &models, &record(&[[0.97, 0.95, 0.4]; 3]));
        assert_eq!(few.outcome, Outcome::Undecided);
        // Recorded under another criterion: not judged by today's.
        let mut specs = super::super::parts();
        specs[1].name = "file I/O, skewed keys, 1,024 clients: shared over segments".into();
        let v: Vec<Vec<f64>> = vec![vec![0.97, 0.95, 0.4]; 7];
        let old = verdict(&a, &models, &Record::of_rounds(specs, &v, Stop::Decided));
        assert_eq!(old.outcome, Outcome::Undecided, "{old:?}");
        assert!(old.measured.contains("skewed keys"), "{old:?}");
        // File I/O skipped: the claim alone decides.
        let mut alone = record(&[[0.97, 0.95, 0.4]; 7]);
        alone.parts.truncate(1);
        assert_eq!(verdict(&a, &models, &alone).outcome, Outcome::Reproduced);
    }

    #[test]
    fn a_round_reads_the_top_count_over_the_best() {
        use tcpwise_dispatch::load::LoadReport;
        let d = Decision::new();
        let run = |clients: usize, tps: f64| Run {
            model: "shared".into(),
            round: 0,
            report: LoadReport {
                clients,
                tps,
                ..LoadReport::default()
            },
        };
        let net = [run(4, 10.0), run(64, 20.0), run(1024, 18.0)];
        let v = round_values(&d, &net, &[]);
        assert_eq!(v[0], 0.9);
        assert!(
            v[1].is_nan() && v[2].is_nan(),
            "no file runs: nothing for the file parts"
        );
        assert_eq!(v.len(), 3);
    }
}
