//! The Windows TCP team's experiment: a 10 s download over 177 ms /
//! 151 Mbit/s with a static 278,775-byte receive buffer, then autotuned,
//! three times each (alternating), then three with the kernel's own
//! autotuning ceilings. All with the `tcpwise-perf` library (server and client in-process, in
//! their namespaces) on real kernel TCP.
//!
//! Plan ([`Plan`]: how long each download runs, how many) → [`measure`]
//! (the downloads, typed) → [`analysis`] (figures, pure) → [`render`] (the
//! report's section, plot and headline, pure).

pub mod analysis;
pub mod measure;
pub mod render;

pub use measure::Details;

use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Render};

/// The experiment.
pub struct Buffers;

/// The seed's static receive buffer, bytes.
pub const SEED_BUFFER: u64 = 278_775;

/// What a run does, decided before anything is measured.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Seconds of each download.
    pub secs: u64,
    /// Downloads of each arm (static and autotuned alternate).
    pub rounds: usize,
}

/// Downloads an arm needs before the verdict decides.
pub const MIN_ROUNDS: usize = 3;

impl Plan {
    /// `--quick`: one 5 s download an arm; a full run: 3 of 10 s (the
    /// seed's length); `--runs` sets the downloads an arm.
    pub fn new(opts: &LabOptions) -> Plan {
        Plan {
            secs: if opts.quick { 5 } else { 10 },
            rounds: opts.runs.unwrap_or(if opts.quick { 1 } else { MIN_ROUNDS }),
        }
    }
}

impl Experiment for Buffers {
    fn name(&self) -> &'static str {
        "buffers"
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let plan = Plan::new(opts);
        let m = measure::measure(&plan, opts, progress)?;
        let a = analysis::analyse(&m);
        let r = render::Section {
            plan: &plan,
            measured: &m,
            analysis: &a,
        }
        .render();
        let details = crate::Details::Buffers(Box::new(m.details));
        Ok(ExperimentResult::of(
            "buffers",
            a.summary,
            details,
            vec![m.path],
            r,
        ))
    }
}
