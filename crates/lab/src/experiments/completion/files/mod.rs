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
use serde::{Deserialize, Serialize};
use std::time::Duration;
pub use tcpwise_aio::DataFile;
use tcpwise_aio::{AioError, AioReport, Keys, Model, Options};

/// I/O threads of every model (InnoDB's default: 4 read + 4 write
/// threads; here 4 that do both).
pub const THREADS: u32 = 4;
/// The data file's size.
pub const FILE_BYTES: u64 = tcpwise_aio::DEFAULT_FILE_BYTES;
/// The skewed key distribution.
pub const SKEW: Keys = Keys::Zipf(0.99);

/// One run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRun {
    /// Which round.
    pub round: usize,
    /// What it measured (model, keys, clients inside).
    #[serde(flatten)]
    pub report: AioReport,
}

/// Everything the file-I/O half measured, with the plan it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileTable {
    /// Every run, in the order they ran.
    pub runs: Vec<FileRun>,
    /// Client counts, in table order.
    pub counts: Vec<u32>,
    /// Why the table is missing, when it is.
    pub skipped: Option<String>,
    /// Each key set with its models, in table order.
    #[serde(default)]
    pub sets: Vec<(String, Vec<String>)>,
    /// Rounds.
    #[serde(default)]
    pub rounds: usize,
    /// Length of each run.
    #[serde(default)]
    pub secs: Duration,
    /// The data file.
    #[serde(default)]
    pub file: Option<std::path::PathBuf>,
    /// Its pages.
    #[serde(default)]
    pub pages: u32,
}

impl FileTable {
    /// The plan it ran (from the names it keeps; a name no model has
    /// any more is left out).
    pub fn plan(&self) -> Plan {
        Plan {
            counts: self.counts.clone(),
            sets: self
                .sets
                .iter()
                .filter_map(|(k, ms)| {
                    let models = ms.iter().filter_map(|m| m.parse().ok()).collect();
                    k.parse().ok().map(|k| (k, models))
                })
                .collect(),
            rounds: self.rounds,
            secs: self.secs,
        }
    }

    fn of(plan: &Plan, runs: Vec<FileRun>, skipped: Option<String>) -> FileTable {
        FileTable {
            runs,
            counts: plan.counts.clone(),
            skipped,
            sets: plan
                .sets
                .iter()
                .map(|(k, ms)| (k.to_string(), ms.iter().map(|m| m.to_string()).collect()))
                .collect(),
            rounds: plan.rounds,
            secs: plan.secs,
            file: None,
            pages: 0,
        }
    }
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
    /// `segments:8` shows the slot binding at every count; `innodb` is
    /// segments with InnoDB's semantics. The quick run leaves the first two out (one round of 1.5 s runs at 3 counts) to stay short.
    pub fn new(opts: &LabOptions) -> Plan {
        let quick = opts.quick || crate::budget::left(opts).is_some();
        let (uniform, skew): (&[&str], &[&str]) = if quick {
            (
                &["shared", "segments", "innodb", "sync"],
                &["shared", "segments", "innodb", "sync"],
            )
        } else {
            (
                &[
                    "shared",
                    "shared:256",
                    "segments",
                    "segments:8",
                    "innodb",
                    "sync",
                ],
                &["shared", "shared:256", "segments", "innodb", "sync"],
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
                Some(_) => crate::budget::fit(opts, super::SHORT_ROUND_SECS, 0.0, 1, 3),
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

/// What [`measure`] returns: the table, and its progress step (ended
/// by the caller with the headline).
pub type Measured = (FileTable, usize);

/// io_uring or the data file's filesystem not there: the reason to skip
/// (the network table still runs), unless io_uring is required.
fn skippable(e: &AioError, opts: &LabOptions) -> bool {
    matches!(
        e,
        AioError::Uring(_) | AioError::NoDirect(_) | AioError::NoSpace(_)
    ) && !opts.require_io_uring
}

/// The data file, or why the file-I/O half is skipped (io_uring or the
/// file's filesystem not there, unless io_uring is required).
pub type Opened = Result<DataFile, String>;

/// Opens the data file (creating it once), or says why the half is
/// skipped.
pub fn open(opts: &LabOptions, progress: &dyn Progress) -> Result<Opened, LabError> {
    let path = tcpwise_aio::default_file(FILE_BYTES);
    let aio_err = |what: &str| {
        let what = what.to_string();
        move |source| LabError::Aio { what, source }
    };
    if let Err(e) = tcpwise_aio::probe() {
        if skippable(&e, opts) {
            return Ok(Err(e.to_string()));
        }
        return Err(aio_err("completion: io_uring")(e));
    }
    match DataFile::open(&path, FILE_BYTES, || {
        let id = progress.step(
            &format!(
                "completion: creating the data file {} (1 GiB, once)",
                path.display()
            ),
            0,
        );
        progress.done(id, "completion: data file created");
    }) {
        Ok(f) => Ok(Ok(f)),
        Err(e) if skippable(&e, opts) => Ok(Err(e.to_string())),
        Err(e) => Err(aio_err("completion: the data file")(e)),
    }
}

/// One run of `model` on `file`.
pub fn run_one(file: &DataFile, o: &Options, round: usize) -> Result<FileRun, LabError> {
    let report = tcpwise_aio::run(o, file).map_err(|source| LabError::Aio {
        what: format!("completion: {} file I/O, {} clients", o.model, o.clients),
        source,
    })?;
    Ok(FileRun { round, report })
}

/// The options of a run: [`THREADS`] threads, the round's seed.
pub fn options(model: Model, keys: Keys, clients: u32, secs: Duration, seed: u64) -> Options {
    Options {
        model,
        clients,
        threads: THREADS,
        duration: secs,
        keys,
        seed,
    }
}

/// Runs the file-I/O table on the data file `opened` (or says why it
/// is skipped).
pub fn measure(
    plan: &Plan,
    opened: &Opened,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let file = match opened {
        Ok(f) => f,
        Err(reason) => {
            let id = progress.step("completion (file I/O)", 0);
            progress.done(id, &format!("completion (file I/O): skipped: {reason}"));
            return Ok((FileTable::of(plan, Vec::new(), Some(reason.clone())), id));
        }
    };
    let (rounds, secs, per_round) = (plan.rounds, plan.secs, plan.per_round());
    let id = progress.step(
        &format!(
            "completion (file I/O): {rounds} round(s) x {per_round} runs of {secs:?}, {THREADS} threads, {}",
            file.path.display()
        ),
        (rounds * per_round) as u64,
    );
    let mut runs = Vec::new();
    for round in 0..rounds {
        for &c in &plan.counts {
            for (keys, models) in &plan.sets {
                for &model in models {
                    opts.check()?;
                    let o = options(model, *keys, c, secs, opts.seed + round as u64);
                    runs.push(run_one(file, &o, round)?);
                    progress.inc(id, 1);
                }
            }
        }
    }
    let table = FileTable {
        file: Some(file.path.clone()),
        pages: file.pages,
        ..FileTable::of(plan, runs, None)
    };
    Ok((table, id))
}
