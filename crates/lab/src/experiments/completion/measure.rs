//! The network half: one pair testbed, the four dispatch servers side by
//! side in its server namespace, the closed-loop load from the client
//! namespace, every model at every count in each round.

use super::Plan;
use crate::common::Bed;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use tcpwise_dispatch::Workload;
use tcpwise_dispatch::load::{LoadOptions, LoadReport};

/// One load run against one model.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// Which model served it.
    pub model: String,
    /// Which round.
    pub round: usize,
    /// What the load measured.
    #[serde(flatten)]
    pub report: LoadReport,
}

/// What [`measure`] returns.
pub struct Measured {
    /// Every run, in the order they ran.
    pub runs: Vec<Run>,
    /// The models that served (io-uring is left out where it is missing).
    pub models: Vec<String>,
    /// Why a model was left out.
    pub left_out: Option<String>,
    /// The path as the report describes it.
    pub desc: String,
    /// Its RTT, ms.
    pub rtt_ms: f64,
    /// The emulator's error on it.
    pub path: PathError,
    /// The progress step, ended by the caller with the headline.
    pub progress_id: usize,
}

/// Runs every round.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let mut bed = Bed::start(opts, 1_000_000, 1_000_000_000, Vec::new())?;
    let mut ports = Vec::new();
    let mut left_out = None;
    for &m in &plan.models {
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
    let (rounds, secs, warm) = (plan.rounds, plan.secs, plan.warm);
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
                let o = LoadOptions {
                    target: bed.peer(*port),
                    clients: c,
                    duration: secs,
                    warmup: warm,
                    workload: Workload::default(),
                    seed: opts.seed + round as u64,
                };
                let report = bed.in_client(false, || async {
                    tcpwise_dispatch::load::run(&o)
                        .await
                        .map_err(|source| LabError::Load {
                            what: format!("completion: {model} with {c} clients"),
                            source,
                        })
                })?;
                runs.push(Run {
                    model: model.clone(),
                    round,
                    report,
                });
                progress.inc(id, 1);
            }
        }
    }
    let min_rtt = runs
        .iter()
        .filter_map(|r| r.report.min_rtt_us.map(f64::from))
        .fold(f64::INFINITY, f64::min);
    let (desc, rtt_ms) = (bed.desc.clone(), bed.rtt_ms);
    let path = bed.finish(min_rtt.is_finite().then_some(min_rtt / 1e3))?;
    Ok(Measured {
        runs,
        models,
        left_out,
        desc,
        rtt_ms,
        path,
        progress_id: id,
    })
}
