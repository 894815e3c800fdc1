//! The Windows TCP team's experiment: a 10 s download over 177 ms /
//! 151 Mbit/s with a static 278,775-byte receive buffer, then autotuned,
//! a pair a round (alternating which goes first) until the sequential
//! decision is made, then, with what the budget leaves, downloads with
//! Linux's default (boot-time) autotuning ceilings. All with the `tcpwise-perf` library (server and client in-process, in
//! their namespaces) on real kernel TCP.
//!
//! Plan ([`Plan`]: how long each download runs, how many) → [`measure`]
//! (the downloads, typed) → [`analysis`] (figures, pure) → [`render`] (the
//! report's section, plot and headline, pure).

pub mod analysis;
pub mod measure;
pub mod render;

pub use measure::Details;

use crate::stages::{Analysed, Stages};
use crate::{LabError, LabOptions, Progress, Render};

/// The experiment.
pub struct Buffers;

/// The field report's static receive buffer, bytes.
pub const SEED_BUFFER: u64 = 278_775;

/// What a run does, decided before anything is measured.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Seconds of each download.
    pub secs: u64,
}

/// Rounds before a decision may stop the run: the first round at which
/// the interval can be bounded (7 at 5 % a side).
pub fn min_rounds() -> usize {
    crate::sequential::cs::first_bounded_round(crate::sequential::ALPHA)
}

/// Rounds at most (about 12 minutes of downloads).
pub const MAX_ROUNDS: usize = 30;

/// Seconds a round takes here with downloads of `secs`: two, each with
/// about 1.5 s of set-up and drain at 177 ms.
pub fn round_secs(secs: u64) -> f64 {
    2.0 * (secs as f64 + 1.5)
}

/// Seconds to start the path and its server.
pub const SETUP_SECS: f64 = 5.0;

impl Plan {
    /// Downloads of 10 s, the field report's length, where the share holds the
    /// decision's rounds of them (or with `--runs`); 5 s in a shorter
    /// share (a 5-minute budget), which still leaves slow start behind
    /// by the second half the steady rate is read from.
    pub fn new(opts: &LabOptions) -> Plan {
        let long = SETUP_SECS + round_secs(10) * (min_rounds() + 1) as f64;
        let fits = crate::budget::share_left(opts).is_none_or(|l| l >= long);
        Plan {
            secs: if fits { 10 } else { 5 },
        }
    }
}

impl Stages for Buffers {
    type Plan = Plan;
    type Details = Details;

    fn name(&self) -> &'static str {
        "buffers"
    }

    fn criterion(&self) -> Vec<crate::sequential::PartSpec> {
        analysis::parts()
    }

    /// Alone: its 151 Mbit/s path takes three quarters of the machine's
    /// link-rate budget (200 Mbit/s on 2 cores), so beside the others it
    /// waited for its slot until they were done (372 s into 27 Nov's full
    /// run), which a budget cannot afford; alone, its forwarders also
    /// have the cores to themselves.
    fn alone(&self) -> bool {
        true
    }

    fn cost(&self, _opts: &LabOptions) -> crate::Cost {
        // The least rounds and one spare of 5 s downloads; a full share
        // has 10 s downloads, two more rounds and Linux's default ceilings.
        crate::Cost {
            need: SETUP_SECS + round_secs(5) * (min_rounds() + 1) as f64,
            planned: SETUP_SECS + round_secs(10) * (min_rounds() + 2) as f64 + 40.0,
            first_round: SETUP_SECS + round_secs(5),
        }
    }

    fn plan(&self, opts: &LabOptions) -> Result<Plan, LabError> {
        Ok(Plan::new(opts))
    }

    fn measure(
        &self,
        plan: &Plan,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<measure::Measured, LabError> {
        let values =
            |s: &_, a: &_, rate| analysis::round_values(s, a, analysis::payload_ceiling(rate));
        measure::measure(plan, opts, progress, (analysis::parts(), &values))
    }

    fn analyse(&self, _plan: &Plan, m: &measure::Measured) -> Result<Analysed, LabError> {
        let a = analysis::analyse(m);
        // The downloads' length the share held when it ran.
        let ran = Plan {
            secs: m.details.secs,
        };
        let rendered = render::Section {
            plan: &ran,
            measured: m,
            analysis: &a,
        }
        .render();
        Ok(Analysed {
            summary: a.summary,
            rendered,
        })
    }
}
