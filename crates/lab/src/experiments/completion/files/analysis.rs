//! The file-I/O half's figures: medians over rounds per key set, model
//! and client count, flatness, shared over segments at the top count,
//! and the hypervisor's steal over all runs (no I/O).

use super::{FileTable, Plan, SKEW};
use crate::Summary;
use crate::common::median_p90;
use crate::verdict::Estimate;
use tcpwise_aio::{AioReport, Keys, Model};

/// The runs, asked for medians.
pub struct Medians<'a> {
    runs: Vec<&'a AioReport>,
    rounds: Vec<usize>,
}

impl<'a> Medians<'a> {
    /// Over `m`'s runs.
    pub fn of(m: &'a FileTable) -> Medians<'a> {
        Medians {
            runs: m.runs.iter().map(|r| &r.report).collect(),
            rounds: m.runs.iter().map(|r| r.round).collect(),
        }
    }

    /// The runs of one key set, model and count.
    pub fn runs(&self, keys: Keys, model: Model, clients: u32) -> Vec<&'a AioReport> {
        let (keys, model) = (keys.to_string(), model.to_string());
        self.runs
            .iter()
            .copied()
            .filter(|r| r.keys == keys && r.model == model && r.clients == clients)
            .collect()
    }

    /// `k` of each round's run of one key set, model and count, by round.
    pub fn by_round(
        &self,
        keys: Keys,
        model: Model,
        clients: u32,
        k: fn(&AioReport) -> f64,
    ) -> Vec<(usize, f64)> {
        let (keys, model) = (keys.to_string(), model.to_string());
        let mut v: Vec<(usize, f64)> = self
            .rounds
            .iter()
            .zip(&self.runs)
            .filter(|(_, r)| r.keys == keys && r.model == model && r.clients == clients)
            .map(|(round, r)| (*round, k(r)))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }

    /// The median of `k` over them (NaN when none ran).
    pub fn median(&self, keys: Keys, model: Model, clients: u32, k: fn(&AioReport) -> f64) -> f64 {
        let v: Vec<f64> = self.runs(keys, model, clients).into_iter().map(k).collect();
        if v.is_empty() {
            f64::NAN
        } else {
            median_p90(&v).0
        }
    }
}

/// Transactions per second of a run.
pub fn tps(r: &AioReport) -> f64 {
    r.tps
}

/// The summary key of a key set.
pub fn key_prefix(keys: Keys) -> &'static str {
    match keys {
        Keys::Uniform => "aio",
        Keys::Zipf(_) => "aio_skew",
    }
}

/// `segments:8` as a summary key: `segments8`.
pub fn model_key(m: Model) -> String {
    m.to_string().replace(':', "")
}

/// innodb's uniform-key tx/s from the lowest to the top count, or that
/// the table did not run it (a table recorded before the model).
fn innodb_span(med: &Medians<'_>, lo: u32, hi: u32) -> String {
    let innodb: Model = "innodb".parse().expect("model");
    let (l, h) = (
        med.median(Keys::Uniform, innodb, lo, tps),
        med.median(Keys::Uniform, innodb, hi, tps),
    );
    if l.is_finite() && h.is_finite() {
        format!("{l:.0} -> {h:.0}")
    } else {
        "not in this table".into()
    }
}

/// What the half's runs show.
pub struct Analysis {
    /// Per key set, per model: median tx/s per count, and flatness.
    pub tps: Vec<Vec<(Vec<f64>, f64)>>,
    /// Per key set, per model, per count: tx/s over the rounds.
    pub spread: Vec<Vec<Vec<Estimate>>>,
    /// Per key set: shared over segments at the top count (medians).
    pub shared_over_segments: Vec<f64>,
    /// Per key set: shared over segments at the top count, round by
    /// round, over the rounds.
    pub ratio_by_round: Vec<Estimate>,
    /// Hypervisor steal over all runs, ticks.
    pub steal: u64,
    /// The half's line for the first table, when it ran.
    pub headline: Option<String>,
    /// Named figures for `results.json`.
    pub summary: Summary,
}

impl Analysis {
    /// Nothing ran (io_uring or the file's filesystem not there).
    fn skipped() -> Analysis {
        Analysis {
            tps: Vec::new(),
            spread: Vec::new(),
            shared_over_segments: Vec::new(),
            ratio_by_round: Vec::new(),
            steal: 0,
            headline: None,
            summary: Summary::new(),
        }
    }
}

/// The figures of `m`.
pub fn analyse(plan: &Plan, m: &FileTable) -> Analysis {
    let mut summary = Summary::new();
    if m.skipped.is_some() {
        return Analysis::skipped();
    }
    let med = Medians::of(m);
    let counts = &plan.counts;
    let (lo, hi) = (counts[0], counts[counts.len() - 1]);
    let shared: Model = "shared".parse().expect("model");
    let segments: Model = "segments".parse().expect("model");
    let mut all = Vec::new();
    let mut ratios = Vec::new();
    let mut spread = Vec::new();
    let mut by_round = Vec::new();
    for (keys, models) in &plan.sets {
        let prefix = key_prefix(*keys);
        let mut per_model = Vec::new();
        spread.push(
            models
                .iter()
                .map(|&model| {
                    counts
                        .iter()
                        .map(|&c| {
                            let v = med.by_round(*keys, model, c, tps);
                            Estimate::of(&v.iter().map(|x| x.1).collect::<Vec<_>>())
                        })
                        .collect()
                })
                .collect(),
        );
        let (sh, sg) = (
            med.by_round(*keys, shared, hi, tps),
            med.by_round(*keys, segments, hi, tps),
        );
        let r = Estimate::of(&crate::common::ratio_by_round(&sh, &sg));
        if let Some(i) = r.interval {
            summary.insert(
                format!("{prefix}_shared_over_segments_{hi}_lo"),
                i.lo.into(),
            );
            summary.insert(
                format!("{prefix}_shared_over_segments_{hi}_hi"),
                i.hi.into(),
            );
        }
        by_round.push(r);
        for &model in models {
            let v: Vec<f64> = counts
                .iter()
                .map(|&c| med.median(*keys, model, c, tps))
                .collect();
            let peak = v.iter().copied().fold(0.0f64, f64::max);
            let flat = v[v.len() - 1] / peak;
            for (c, t) in counts.iter().zip(&v) {
                summary.insert(
                    format!("{prefix}_{}_{c}_tps", model_key(model)),
                    (*t).into(),
                );
            }
            summary.insert(
                format!("{prefix}_{}_flatness", model_key(model)),
                flat.into(),
            );
            per_model.push((v, flat));
        }
        let ratio = med.median(*keys, shared, hi, tps) / med.median(*keys, segments, hi, tps);
        summary.insert(format!("{prefix}_shared_over_segments_{hi}"), ratio.into());
        all.push(per_model);
        ratios.push(ratio);
    }
    let skew = plan.sets.iter().position(|(k, _)| *k == SKEW);
    let headline = format!(
        "file I/O (uniform): shared {:.0} -> {:.0} tx/s, segments {:.0} -> {:.0}, innodb {}; skewed at {hi}: shared/segments {} (per round, {} round(s))",
        med.median(Keys::Uniform, shared, lo, tps),
        med.median(Keys::Uniform, shared, hi, tps),
        med.median(Keys::Uniform, segments, lo, tps),
        med.median(Keys::Uniform, segments, hi, tps),
        innodb_span(&med, lo, hi),
        skew.and_then(|i| by_round.get(i))
            .map_or("-".into(), |r| r.text(2)),
        plan.rounds,
    );
    Analysis {
        tps: all,
        spread,
        shared_over_segments: ratios,
        ratio_by_round: by_round,
        steal: m.runs.iter().filter_map(|r| r.report.steal_ticks).sum(),
        headline: Some(headline),
        summary,
    }
}
