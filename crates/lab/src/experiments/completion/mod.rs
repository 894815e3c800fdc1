//! MariaDB's completion-port report, on Linux: the same closed-loop
//! request/response load (sysbench-like: every client sends its next
//! request when the last reply arrives; 1 % of requests are 100 times
//! longer, a slow query) against four dispatch models of one server,
//! for 4 to 1024 clients over a LAN-like emulated path. Models are
//! interleaved within each round so drift hits them alike; the figure per
//! model and client count is the median over rounds. Then the report's
//! own workload, file I/O on io_uring ([`files`]).
//!
//! [`Plan`] → [`measure`] → [`analysis`] → [`render`], for each half.

pub mod analysis;
pub mod files;
pub mod measure;
pub mod render;

pub use files::{FileRun, FileTable};
pub use measure::Run;

use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Render};
use serde::Serialize;
use std::time::Duration;
use tcpwise_dispatch::Model;

/// The experiment.
pub struct Completion;

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Details {
    /// Every run, in the order they ran.
    pub runs: Vec<Run>,
    /// Client counts, in table order.
    pub counts: Vec<usize>,
    /// The file-I/O table (the report's own workload).
    pub files: FileTable,
}

/// The seed's sysbench table (transactions/s at 4, 16, 64, 256, 1024 clients).
pub const SEED: [(&str, [u32; 5]); 3] = [
    ("mariadb-5.2 (segments)", [17812, 22378, 23436, 7882, 6043]),
    (
        "mariadb-5.2-fix (completion port)",
        [19217, 24302, 25499, 25986, 25925],
    ),
    ("mysql-5.5.13", [12961, 20445, 16393, 14407, 5343]),
];

/// The network half's plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Client counts, in table order.
    pub counts: Vec<usize>,
    /// Rounds (each runs every model at every count).
    pub rounds: usize,
    /// Measured time of each run.
    pub secs: Duration,
    /// Warm-up before it.
    pub warm: Duration,
    /// The models compared, all serving side by side in the server
    /// namespace (`io-uring` only where io_uring is available).
    pub models: Vec<Model>,
    /// The file-I/O half's plan.
    pub files: files::Plan,
}

impl Plan {
    /// The full run: 4 to 1024 clients, 3 rounds (the verdict needs 3)
    /// of 4 s; `--quick`: 3 counts, 1 round of 2 s; `--runs` sets the
    /// rounds.
    pub fn new(opts: &LabOptions) -> Plan {
        // A budget never holds full rounds: short ones, as many as fit
        // (half the share each for the network and the file halves).
        let quick = opts.quick || crate::budget::left(opts).is_some();
        Plan {
            counts: if tiny(opts) {
                vec![4, 1024]
            } else if quick {
                vec![4, 64, 1024]
            } else {
                vec![4, 16, 64, 256, 1024]
            },
            rounds: opts.runs.unwrap_or(match crate::budget::left(opts) {
                Some(_) => crate::budget::fit(opts, SHORT_ROUND_SECS, 10.0, 1, 3),
                None if quick => 1,
                None => 3,
            }),
            secs: Duration::from_secs(match (tiny(opts), quick) {
                (true, _) => 1,
                (false, true) => 2,
                (false, false) => 4,
            }),
            warm: if quick {
                Duration::from_millis(500)
            } else {
                Duration::from_secs(1)
            },
            models: vec![
                Model::Shared,
                Model::Segments { slots: 64 },
                Model::Tokio,
                Model::IoUring,
            ],
            files: files::Plan::new(opts),
        }
    }
}

/// Seconds of a short round, both halves (27 Nov, `tcpwise lab`: network
/// 37 s, file I/O 43 s, with their set-ups).
pub const SHORT_ROUND_SECS: f64 = 80.0;

/// Seconds of a tiny round: 2 client counts of 1 s runs, both halves.
pub const TINY_ROUND_SECS: f64 = 45.0;

/// Whether the share is below a short round: then one tiny round (4 and
/// 1,024 clients, 1 s runs), so a short budget still runs every
/// experiment once (its verdict: too few samples).
pub fn tiny(opts: &LabOptions) -> bool {
    crate::budget::left(opts).is_some_and(|l| l < SHORT_ROUND_SECS + 10.0)
}

impl Experiment for Completion {
    fn name(&self) -> &'static str {
        "completion"
    }

    // Still fixed rounds, fitted to its share: a full round took about
    // 330 s (27 Nov: 987 s for 3), a short one (3 client counts of 2 s,
    // file I/O of 1.5 s) about 70 s.
    fn cost(&self, _opts: &LabOptions) -> crate::Cost {
        crate::Cost {
            need: 10.0 + SHORT_ROUND_SECS,
            planned: 10.0 + 3.0 * SHORT_ROUND_SECS,
            first_round: 5.0 + TINY_ROUND_SECS,
        }
    }

    /// Alone: its load saturates both cores (the server's workers against
    /// up to 1,024 clients, then the file engine), which is what it
    /// measures; another testbed beside it would be measured instead.
    fn alone(&self) -> bool {
        true
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let plan = Plan::new(opts);
        let m = measure::measure(&plan, opts, progress)?;
        let a = analysis::analyse(&plan, &m);
        progress.done(m.progress_id, &format!("completion: {}", a.headline));
        let files = files::measure(&plan.files, opts, progress)?;
        let fa = files::analysis::analyse(&plan.files, &files);
        if let Some(h) = &fa.headline {
            progress.done(files.progress_id, &format!("completion: {h}"));
        }
        let mut summary = a.summary.clone();
        summary.extend(fa.summary.clone());
        summary.insert("rtt_ms".into(), m.rtt_ms.into());
        let r = render::Section {
            plan: &plan,
            measured: &m,
            analysis: &a,
            files: files::render::Section {
                plan: &plan.files,
                measured: &files,
                analysis: &fa,
            },
        }
        .render();
        let details = crate::Details::Completion(Details {
            runs: m.runs,
            counts: plan.counts.clone(),
            files: files.table,
        });
        Ok(ExperimentResult::of(
            "completion",
            summary,
            details,
            vec![m.path],
            r,
        ))
    }
}
