//! Flows that compete: BBR (v1) and CUBIC senders, each in a host of its
//! own behind its own access link, meeting at one bottleneck of an
//! `emu dumbbell` topology, real kernel TCP everywhere. Each flow's
//! goodput is counted by 5-tuple at the bottleneck after a warm-up, and
//! its share decides the published results: Cao et al. (IMC 2019) and
//! Ware et al. (IMC 2019) on BBR against CUBIC in shallow and deep
//! buffers, RFC 8290's flow isolation under FQ-CoDel, and the RTT
//! unfairness of each (RFC 9438; Hock et al., ICNP 2017).
//!
//! The shallow and FQ-CoDel cases run in every `tcpwise lab`; the deep
//! buffer and RTT cases, whose trials take a minute (a CUBIC cycle in an
//! 8-BDP queue lasts seconds, BBR probes its RTT every 10 s), run when the
//! experiment is named: `tcpwise lab sharing`.
//!
//! Plan ([`Plan`]) → [`measure`] (a round is one trial of every case) →
//! [`analysis`] (shares, pure) → [`render`] (section, plot, headline).

pub mod analysis;
pub mod measure;
pub mod render;

pub use measure::Details;

use crate::stages::{Analysed, Stages};
use crate::{LabError, LabOptions, Progress, Render};
use serde::{Deserialize, Serialize};

/// The experiment: `full` adds the deep-buffer and RTT cases.
pub struct Sharing {
    /// Every case (named on the command line), or the default two.
    pub full: bool,
}

/// One competition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// 20 Mbit/s, 40 ms, drop-tail of 0.5 BDP: CUBIC, then BBR.
    Shallow,
    /// The same path with FQ-CoDel.
    FqCodel,
    /// 10 Mbit/s, 40 ms, drop-tail of 8 BDP: CUBIC, then BBR.
    Deep,
    /// The same with four CUBIC flows.
    DeepFour,
    /// CUBIC at 10 ms against CUBIC at 50 ms, 20 Mbit/s, drop-tail of 2
    /// BDP of the 50 ms path.
    RttCubic,
    /// CUBIC at 10 ms against BBR at 50 ms, the same path.
    RttBbr,
}

/// A host of a case: its congestion control, access RTT (ms) and start
/// offset (s).
pub type HostPlan = (&'static str, u64, u64);

impl Case {
    /// Its name in the report.
    pub fn label(self) -> &'static str {
        match self {
            Case::Shallow => "shallow drop-tail (0.5 BDP), BBR vs CUBIC",
            Case::FqCodel => "FQ-CoDel, BBR vs CUBIC",
            Case::Deep => "deep drop-tail (8 BDP), BBR vs CUBIC",
            Case::DeepFour => "deep drop-tail (8 BDP), BBR vs 4 CUBIC",
            Case::RttCubic => "CUBIC 10 ms vs CUBIC 50 ms (2 BDP)",
            Case::RttBbr => "CUBIC 10 ms vs BBR 50 ms (2 BDP)",
        }
    }

    /// The bottleneck: rate (bit/s) and queue, as `emu`'s flags say them.
    pub fn bottleneck(self) -> (u64, &'static str) {
        match self {
            Case::Shallow => (20_000_000, "droptail:limit=0.5bdp"),
            Case::FqCodel => (20_000_000, "fq-codel:limit=0.5bdp"),
            Case::Deep | Case::DeepFour => (10_000_000, "droptail:limit=8bdp"),
            Case::RttCubic | Case::RttBbr => (20_000_000, "droptail:limit=2bdp"),
        }
    }

    /// Its hosts, in order; the flow the criterion is about is the last
    /// BBR host, or in `RttCubic` the first (the short RTT).
    pub fn hosts(self) -> Vec<HostPlan> {
        match self {
            Case::Shallow | Case::FqCodel | Case::Deep => vec![("cubic", 40, 0), ("bbr", 40, 2)],
            Case::DeepFour => {
                let mut v = vec![("cubic", 40, 0); 4];
                v.push(("bbr", 40, 2));
                v
            }
            Case::RttCubic => vec![("cubic", 10, 0), ("cubic", 50, 0)],
            Case::RttBbr => vec![("cubic", 10, 0), ("bbr", 50, 0)],
        }
    }

    /// Which host's share the criterion reads.
    pub fn subject(self) -> usize {
        match self {
            Case::RttCubic => 0,
            c => c.hosts().len() - 1,
        }
    }

    /// Seconds of a trial and of its warm-up (the share is read after it).
    pub fn secs(self) -> (u64, u64) {
        match self {
            // Short enough for the least rounds in the default run's share
            // (docs/lab-sharing.md has 30 s trials' shares beside); BBR's
            // startup is over within a second of its start.
            Case::Shallow | Case::FqCodel => (15, 5),
            // A CUBIC epoch in an 8-BDP queue lasts seconds; BBR's
            // ProbeRTT comes every 10 s.
            Case::Deep | Case::DeepFour => (60, 20),
            Case::RttCubic | Case::RttBbr => (40, 15),
        }
    }
}

/// What a run does.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The cases, each once a round.
    pub cases: Vec<Case>,
}

/// Rounds before a decision may stop the run.
pub fn min_rounds() -> usize {
    crate::sequential::cs::first_bounded_round(crate::sequential::ALPHA)
}

/// Rounds at most.
pub const MAX_ROUNDS: usize = 20;

/// Seconds to build a dumbbell and start its server.
pub const SETUP_SECS: f64 = 3.0;

impl Plan {
    /// The default two cases, or every one.
    pub fn new(full: bool) -> Plan {
        let mut cases = vec![Case::Shallow, Case::FqCodel];
        if full {
            cases.extend([Case::Deep, Case::DeepFour, Case::RttCubic, Case::RttBbr]);
        }
        Plan { cases }
    }

    /// The cases in groups of one trial length, which run at once.
    pub fn groups(&self) -> Vec<Vec<Case>> {
        let mut out: Vec<Vec<Case>> = Vec::new();
        for &c in &self.cases {
            match out.iter_mut().find(|g| g[0].secs() == c.secs()) {
                Some(g) => g.push(c),
                None => out.push(vec![c]),
            }
        }
        out
    }

    /// Seconds a round takes: its groups one after another.
    pub fn round_secs(&self) -> f64 {
        self.groups()
            .iter()
            .map(|g| g[0].secs().0 as f64 + SETUP_SECS)
            .sum()
    }
}

impl Stages for Sharing {
    type Plan = Plan;
    type Details = Details;

    fn name(&self) -> &'static str {
        "sharing"
    }

    fn criterion(&self) -> Vec<crate::sequential::PartSpec> {
        analysis::parts(&Plan::new(self.full).cases)
    }

    /// Alone: a share is a race between two kernels' TCP, and another
    /// experiment's CPU on this 2-core machine would pick the winner.
    fn alone(&self) -> bool {
        true
    }

    fn cost(&self, _opts: &LabOptions) -> crate::Cost {
        let p = Plan::new(self.full);
        crate::Cost {
            need: p.round_secs() * min_rounds() as f64,
            planned: p.round_secs() * (min_rounds() + 1) as f64,
            first_round: p.round_secs(),
        }
    }

    fn plan(&self, _opts: &LabOptions) -> Result<Plan, LabError> {
        Ok(Plan::new(self.full))
    }

    fn measure(
        &self,
        plan: &Plan,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<measure::Measured, LabError> {
        let values = |t: &[measure::Trial]| analysis::round_values(&plan.cases, t);
        let parts = analysis::parts(&plan.cases);
        measure::measure(plan, opts, progress, (parts, &values))
    }

    fn analyse(&self, plan: &Plan, m: &measure::Measured) -> Result<Analysed, LabError> {
        let a = analysis::analyse(plan, m);
        let rendered = render::Section {
            plan,
            measured: m,
            analysis: &a,
        }
        .render();
        Ok(Analysed {
            summary: a.summary.clone(),
            rendered,
        })
    }
}
