//! The stages every experiment goes through, as one trait: a plan from
//! the options (before anything is set up), the measurement (the
//! decision's rounds through [`crate::sequential::driver::drive`], each
//! round's values from the experiment's statistic, then its descriptive
//! extras with what the budget leaves), and the analysis with its render
//! (figures, verdict and report section from what was measured, no I/O).
//! [`Experiment`] is implemented once, for every [`Stages`]: adding an
//! experiment is a folder that implements this trait and a line in
//! [`crate::all`].
//!
//! Why the analysis reads only [`Measured`]: what it reads is what
//! `results.json` keeps (`details`, `paths`, `decision`), so a recorded
//! run replays through the analysis (the fixtures test does, for every
//! experiment) and a figure in the report can always be traced to the
//! measurements kept beside it.

use crate::sequential::{PartSpec, Record};
use crate::{
    Cost, Experiment, ExperimentResult, LabError, LabOptions, PathError, Progress, Rendered,
    Summary,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a measurement hands to the analysis, and what `results.json`
/// keeps of it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Measured<D> {
    /// Everything measured (`results.json`'s `details`).
    pub details: D,
    /// The emulator's error on each path used.
    pub paths: Vec<PathError>,
    /// The sequential decision (`decision`).
    pub decision: Record,
}

/// What the analysis and the render make of a measurement.
#[derive(Debug, Clone)]
pub struct Analysed {
    /// Named figures (`results.json`'s `summary`).
    pub summary: Summary,
    /// The report's section, plots and headline (with the verdict).
    pub rendered: Rendered,
}

/// An experiment's stages.
pub trait Stages: Sync {
    /// What a run does, decided from the options alone.
    type Plan;
    /// Everything it measures, as `results.json` keeps it.
    type Details: Serialize + DeserializeOwned + Clone;

    /// Its name on the command line.
    fn name(&self) -> &'static str;
    /// The parts of its criterion, fixed before the run.
    fn criterion(&self) -> Vec<PartSpec>;
    /// Its claim on a `--budget` (see [`Cost`]).
    fn cost(&self, opts: &LabOptions) -> Cost;
    /// Whether it needs the machine to itself (see [`Experiment::alone`]).
    fn alone(&self) -> bool {
        false
    }
    /// Refuses options it cannot run with, before anything is set up:
    /// by default, those its plan refuses.
    fn validate(&self, opts: &LabOptions) -> Result<(), LabError> {
        self.plan(opts).map(|_| ())
    }
    /// The plan.
    fn plan(&self, opts: &LabOptions) -> Result<Self::Plan, LabError>;
    /// The decision's rounds, then the extras.
    fn measure(
        &self,
        plan: &Self::Plan,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<Measured<Self::Details>, LabError>;
    /// Figures, verdict and section from `m` (no I/O).
    fn analyse(&self, plan: &Self::Plan, m: &Measured<Self::Details>)
    -> Result<Analysed, LabError>;
}

impl<S: Stages> Experiment for S {
    fn name(&self) -> &'static str {
        Stages::name(self)
    }

    fn validate(&self, opts: &LabOptions) -> Result<(), LabError> {
        Stages::validate(self, opts)
    }

    fn alone(&self) -> bool {
        Stages::alone(self)
    }

    fn criterion(&self) -> Vec<PartSpec> {
        Stages::criterion(self)
    }

    fn cost(&self, opts: &LabOptions) -> Cost {
        Stages::cost(self, opts)
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let plan = self.plan(opts)?;
        let m = self.measure(&plan, opts, progress)?;
        let a = self.analyse(&plan, &m)?;
        // Kept as JSON: `results.json` is where a recorded run is read
        // back from ([`Experiment::replay`]).
        let details = serde_json::to_value(&m.details).map_err(|e| {
            LabError::Io(std::io::Error::other(format!(
                "{}: its measurements do not serialize: {e}",
                Stages::name(self)
            )))
        })?;
        Ok(
            ExperimentResult::of(Stages::name(self), a.summary, details, m.paths, a.rendered)
                .decided(m.decision),
        )
    }

    fn replay(
        &self,
        opts: &LabOptions,
        recorded: &serde_json::Value,
    ) -> Result<Analysed, LabError> {
        let field = |k: &str| recorded.get(k).cloned().unwrap_or(serde_json::Value::Null);
        let m: Measured<S::Details> = serde_json::from_value(serde_json::json!({
            "details": field("details"),
            "paths": field("paths"),
            "decision": field("decision"),
        }))
        .map_err(|e| {
            LabError::Usage(format!(
                "{}: the recorded result does not read back: {e}",
                Stages::name(self)
            ))
        })?;
        self.analyse(&self.plan(opts)?, &m)
    }
}
