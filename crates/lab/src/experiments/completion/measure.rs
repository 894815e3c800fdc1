//! One pair testbed, the four dispatch servers side by side in its
//! server namespace, the closed-loop load from the client namespace:
//! the decision's rounds, then every model at every count in each of
//! the tables' rounds, then the file-I/O table.

use super::files::{self, FileRun};
use super::{Decision, Plan};
use crate::common::ServedTestbed;
use crate::sequential::driver::{Budget, Rounds, drive};
use crate::{LabError, LabOptions, Progress};
use serde::Serialize;
use std::time::Duration;
use tcpwise_dispatch::Model;
use tcpwise_dispatch::Workload;
use tcpwise_dispatch::load::{LoadOptions, LoadReport};

/// One load run against one model.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Run {
    /// Which model served it.
    pub model: String,
    /// Which round.
    pub round: usize,
    /// What the load measured.
    #[serde(flatten)]
    pub report: LoadReport,
}

/// What [`measure`] returns (with the progress steps of the network and
/// the file tables, ended by the caller with their headlines).
pub type Measured = crate::stages::Measured<super::Details>;

/// A decision round's runs in, one value per part of the criterion out.
pub type Values<'a> = &'a (dyn Fn(&Decision, &[Run], &[FileRun]) -> Vec<f64> + Sync);

/// The models of every run, `io-uring` only where io_uring is there.
pub const MODELS: [Model; 4] = [
    Model::Shared,
    Model::Segments { slots: 64 },
    Model::Tokio,
    Model::IoUring,
];

/// The decision's rounds until it is made, then the tables with the
/// share left ([`Plan::new`] reads it then).
pub fn measure(
    decision: &Decision,
    opts: &LabOptions,
    progress: &dyn Progress,
    values: Values<'_>,
) -> Result<(Measured, (usize, usize)), LabError> {
    let mut bed = ServedTestbed::start(opts, 1_000_000, 1_000_000_000, Vec::new())?;
    let mut ports = Vec::new();
    let mut left_out = None;
    for m in MODELS {
        if let Err(e) = tcpwise_dispatch::probe(m) {
            if opts.require_io_uring {
                return Err(LabError::Usage(format!(
                    "io_uring is required here, but {e}"
                )));
            }
            left_out = Some(format!("{} left out: {e}", m.name()));
            continue;
        }
        ports.push((m.name(), bed.serve_dispatch(m, 2)?));
    }
    let models: Vec<String> = ports.iter().map(|p| p.0.clone()).collect();
    let opened = files::open(opts, progress)?;
    let done = decide(decision, &bed, &ports, &opened, opts, progress, values)?;
    let plan = Plan::new(opts);
    let (rounds, secs) = (plan.rounds, plan.secs);
    let id = progress.step(
        &format!(
            "completion: {rounds} round(s) x {} client counts x {} models, {secs:?} each, on {}",
            plan.counts.len(),
            models.len(),
            bed.desc
        ),
        (rounds * plan.counts.len() * models.len()) as u64,
    );
    let mut runs: Vec<Run> = Vec::new();
    for round in 0..rounds {
        for &c in &plan.counts {
            for (model, port) in &ports {
                opts.check()?;
                let l = (c, plan.secs, plan.warm, opts.seed + round as u64);
                runs.push(load(&bed, model, *port, l, round)?);
                progress.inc(id, 1);
            }
        }
    }
    let (files, files_id) = files::measure(&plan.files, &opened, opts, progress)?;
    let min_rtt = runs
        .iter()
        .chain(done.rounds.iter().flat_map(|r| &r.0))
        .filter_map(|r| r.report.min_rtt_us.map(f64::from))
        .fold(f64::INFINITY, f64::min);
    let (desc, rtt_ms) = (bed.desc.clone(), bed.rtt_ms);
    let path = bed.finish(min_rtt.is_finite().then_some(min_rtt / 1e3))?;
    let details = super::Details {
        decision: done.rounds,
        runs,
        counts: plan.counts.clone(),
        rounds: plan.rounds,
        secs: plan.secs,
        warm: plan.warm,
        models,
        left_out,
        desc,
        rtt_ms,
        files,
    };
    let m = Measured {
        details,
        paths: vec![path],
        decision: done.record,
    };
    Ok((m, (id, files_id)))
}

/// A decision round's runs: the network's, then the file I/O's.
pub type DecisionRound = (Vec<Run>, Vec<FileRun>);

/// The decision's rounds: `shared` at each count, then the file I/O of
/// shared and innodb at each file count and innodb's leave-one-out
/// variants at the top, back to back.
fn decide(
    d: &Decision,
    bed: &ServedTestbed,
    ports: &[(String, u16)],
    opened: &files::Opened,
    opts: &LabOptions,
    progress: &dyn Progress,
    values: Values<'_>,
) -> Result<Rounds<DecisionRound>, LabError> {
    let shared = ports
        .iter()
        .find(|p| p.0 == Model::Shared.name())
        .map(|p| p.1)
        .expect("the shared model always serves");
    let mut specs = super::parts();
    if opened.is_err() {
        specs.truncate(1);
    }
    // The tables' least round (a tiny one) runs after the decision,
    // inside the same share.
    let mut budget = Budget::of(opts, super::min_rounds(), super::MAX_ROUNDS);
    let tables = Duration::from_secs_f64(super::TINY_ROUND_SECS);
    budget.deadline = budget.deadline.map(|d| d.checked_sub(tables).unwrap_or(d));
    budget.given = budget.given.map(|g| g.saturating_sub(tables));
    drive("completion", specs, &budget, opts, progress, |round| {
        let seed = opts.seed + round as u64;
        let mut net = Vec::new();
        for &c in &d.counts {
            opts.check()?;
            let l = (c, d.secs, d.warm, seed);
            net.push(load(bed, &Model::Shared.name(), shared, l, round)?);
        }
        let mut fr = Vec::new();
        if let Ok(file) = opened {
            fr = file_round(d, file, opts, seed, round)?;
        }
        let v = values(d, &net, &fr);
        Ok(((net, fr), v))
    })
}

/// A decision round's file runs (uniform keys, the report's workload):
/// the two models at each file count, then the variants at the top.
fn file_round(
    d: &Decision,
    file: &files::DataFile,
    opts: &LabOptions,
    seed: u64,
    round: usize,
) -> Result<Vec<FileRun>, LabError> {
    let runs = d
        .file_counts
        .iter()
        .flat_map(|&c| d.file_models.iter().map(move |&m| (m, c)))
        .chain(d.ablations.iter().map(|&m| (m, d.file_top())));
    let mut out = Vec::new();
    for (model, clients) in runs {
        opts.check()?;
        let o = files::options(
            model,
            tcpwise_aio::Keys::Uniform,
            clients,
            d.file_secs,
            seed,
        );
        out.push(files::run_one(file, &o, round)?);
    }
    Ok(out)
}

/// One load run: `(clients, measured time, warm-up, seed)` against the
/// model serving on `port`.
fn load(
    bed: &ServedTestbed,
    model: &str,
    port: u16,
    (clients, duration, warmup, seed): (usize, Duration, Duration, u64),
    round: usize,
) -> Result<Run, LabError> {
    let o = LoadOptions {
        target: bed.peer(port),
        clients,
        duration,
        warmup,
        workload: Workload::default(),
        seed,
    };
    let report = bed.in_client(false, || async {
        tcpwise_dispatch::load::run(&o)
            .await
            .map_err(|source| LabError::Load {
                what: format!("completion: {model} with {clients} clients"),
                source,
            })
    })?;
    Ok(Run {
        model: model.into(),
        round,
        report,
    })
}
