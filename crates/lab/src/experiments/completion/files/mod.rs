//! The file-I/O half of the completion experiment: MariaDB's report on
//! its own workload. sysbench `update_no_key` reduced to its I/O (read a
//! 16 KiB page with `O_DIRECT`, update a row, write it back; no fsync, as
//! the report's author ran it) from 4 to 1024 closed-loop clients, under
//! the three disciplines of `tcpwise-aio` on io_uring: fixed segments,
//! one shared completion queue, and blocking `pread`/`pwrite`. Uniform and
//! Zipf-skewed keys; rounds interleave every model, key set and client
//! count so drift hits them alike, and each figure is the median over
//! rounds. No network is involved, so no testbed either.
//!
//! [`Plan`] → [`measure`] → [`analysis`] → [`render`].

pub mod analysis;
pub mod render;

use crate::{LabError, LabOptions, Progress};
use serde::Serialize;
use std::time::Duration;
use tcpwise_aio::{AioError, AioReport, DataFile, Keys, Model, Options};

/// I/O threads of every model (InnoDB's default: 4 read + 4 write
/// threads; here 4 that do both).
pub const THREADS: u32 = 4;
/// The data file's size.
pub const FILE_BYTES: u64 = tcpwise_aio::DEFAULT_FILE_BYTES;
/// The skewed key distribution.
pub const SKEW: Keys = Keys::Zipf(0.99);

/// One run.
#[derive(Debug, Clone, Serialize)]
pub struct FileRun {
    /// Which round.
    pub round: usize,
    /// What it measured (model, keys, clients inside).
    #[serde(flatten)]
    pub report: AioReport,
}

/// Everything the file-I/O half measured.
#[derive(Debug, Clone, Serialize)]
pub struct FileTable {
    /// Every run, in the order they ran.
    pub runs: Vec<FileRun>,
    /// Client counts, in table order.
    pub counts: Vec<u32>,
    /// Why the table is missing, when it is.
    pub skipped: Option<String>,
}

/// What the half runs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Client counts, in table order.
    pub counts: Vec<u32>,
    /// Each key set with its models, in table order.
    pub sets: Vec<(Keys, Vec<Model>)>,
    /// Rounds.
    pub rounds: usize,
    /// Length of each run.
    pub secs: Duration,
}

fn models(names: &[&str]) -> Vec<Model> {
    names
        .iter()
        .map(|m| m.parse().expect("a known model"))
        .collect()
}

impl Plan {
    /// `shared:256` caps the shared queue at the in-flight total of the
    /// segments (4 x 64), so the two differ only in who may reap what;
    /// `segments:8` shows the slot binding at every count. The quick run
    /// leaves both out (one round of 1.5 s runs at 3 counts) to stay short.
    pub fn new(opts: &LabOptions) -> Plan {
        let quick = opts.quick || crate::budget::left(opts).is_some();
        let (uniform, skew): (&[&str], &[&str]) = if quick {
            (
                &["shared", "segments", "sync"],
                &["shared", "segments", "sync"],
            )
        } else {
            (
                &["shared", "shared:256", "segments", "segments:8", "sync"],
                &["shared", "shared:256", "segments", "sync"],
            )
        };
        Plan {
            counts: if super::tiny(opts) {
                vec![4, 1024]
            } else if quick {
                vec![4, 64, 1024]
            } else {
                vec![4, 16, 64, 256, 1024]
            },
            sets: vec![(Keys::Uniform, models(uniform)), (SKEW, models(skew))],
            rounds: opts.runs.unwrap_or(match crate::budget::left(opts) {
                Some(_) => crate::budget::fit(opts, super::SHORT_ROUND_SECS, 10.0, 1, 3),
                None if quick => 1,
                None => 3,
            }),
            secs: if super::tiny(opts) {
                Duration::from_secs(1)
            } else if quick {
                Duration::from_millis(1500)
            } else {
                Duration::from_secs(3)
            },
        }
    }

    /// Runs in one round.
    pub fn per_round(&self) -> usize {
        self.sets.iter().map(|(_, m)| m.len()).sum::<usize>() * self.counts.len()
    }
}

/// What [`measure`] returns.
pub struct Measured {
    /// The runs, or why there are none.
    pub table: FileTable,
    /// The data file and its pages, when it ran.
    pub file: Option<(std::path::PathBuf, u32)>,
    /// The progress step, ended by the caller with the headline.
    pub progress_id: usize,
}

/// io_uring or the data file's filesystem not there: the reason to skip
/// (the network table still runs), unless io_uring is required.
fn skippable(e: &AioError, opts: &LabOptions) -> bool {
    matches!(
        e,
        AioError::Uring(_) | AioError::NoDirect(_) | AioError::NoSpace(_)
    ) && !opts.require_io_uring
}

/// Runs the file-I/O table (or says why it is skipped).
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let path = tcpwise_aio::default_file(FILE_BYTES);
    let aio_err = |what: String| move |source| LabError::Aio { what, source };
    let skipped = |reason: String| {
        let id = progress.step("completion (file I/O)", 0);
        progress.done(id, &format!("completion (file I/O): skipped: {reason}"));
        Ok(Measured {
            table: FileTable {
                runs: Vec::new(),
                counts: plan.counts.clone(),
                skipped: Some(reason),
            },
            file: None,
            progress_id: id,
        })
    };
    if let Err(e) = tcpwise_aio::probe() {
        if skippable(&e, opts) {
            return skipped(e.to_string());
        }
        return Err(aio_err("completion: io_uring".into())(e));
    }
    let file = match DataFile::open(&path, FILE_BYTES, || {
        let id = progress.step(
            &format!(
                "completion: creating the data file {} (1 GiB, once)",
                path.display()
            ),
            0,
        );
        progress.done(id, "completion: data file created");
    }) {
        Ok(f) => f,
        Err(e) if skippable(&e, opts) => return skipped(e.to_string()),
        Err(e) => return Err(aio_err("completion: the data file".into())(e)),
    };
    let (rounds, secs, per_round) = (plan.rounds, plan.secs, plan.per_round());
    let id = progress.step(
        &format!(
            "completion (file I/O): {rounds} round(s) x {per_round} runs of {secs:?}, {THREADS} threads, {}",
            path.display()
        ),
        (rounds * per_round) as u64,
    );
    let mut runs = Vec::new();
    for round in 0..rounds {
        for &c in &plan.counts {
            for (keys, models) in &plan.sets {
                for &model in models {
                    opts.check()?;
                    let o = Options {
                        model,
                        clients: c,
                        threads: THREADS,
                        duration: secs,
                        keys: *keys,
                        seed: opts.seed + round as u64,
                    };
                    let report = tcpwise_aio::run(&o, &file).map_err(aio_err(format!(
                        "completion: {model} file I/O, {c} clients"
                    )))?;
                    runs.push(FileRun { round, report });
                    progress.inc(id, 1);
                }
            }
        }
    }
    Ok(Measured {
        table: FileTable {
            runs,
            counts: plan.counts.clone(),
            skipped: None,
        },
        file: Some((file.path.clone(), file.pages)),
        progress_id: id,
    })
}
