//! The trials: a pair testbed per path, an HTTP origin in it, and each
//! round's trials on fresh connections, timed, until the decision.

use super::Plan;
use crate::common::ServedTestbed;
use crate::sequential::driver::{Budget, drive};
use crate::together::Part;
use crate::{LabError, LabOptions, Progress};
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;
use tcpwise_tcp::ReadSizer;

/// The trial's two arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    /// Read slow start: first read 1 KiB, doubling up to 32 KiB.
    On,
    /// Fixed 32 KiB reads (Chromium's usual size).
    Off,
}

impl Arm {
    /// Its name in the report and in `results.json`.
    pub fn name(self) -> &'static str {
        match self {
            Arm::On => "on",
            Arm::Off => "off",
        }
    }

    /// The read sizing of its connections.
    pub fn sizer(self) -> ReadSizer {
        match self {
            Arm::On => ReadSizer::slow_start(32 * 1024),
            Arm::Off => ReadSizer::fixed(32 * 1024),
        }
    }
}

/// The condition a trial ran under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// Linux as it is: a read returns what is there.
    #[default]
    Linux,
    /// The field report's cause, modelled ([`super::reader::Hold`]): a read
    /// that got less than it asked completes 40-50 ms later unless filled.
    Held,
}

impl Cause {
    /// Both, in the report's order.
    pub const ALL: [Cause; 2] = [Cause::Held, Cause::Linux];

    /// In words.
    pub fn label(self) -> &'static str {
        match self {
            Cause::Linux => "on Linux",
            Cause::Held => "under the report's cause (reads partly filled held 40-50 ms)",
        }
    }
}

/// One trial.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    /// Its arm.
    pub arm: Arm,
    /// Its condition (absent in results written before the model: Linux).
    #[serde(default)]
    pub cause: Cause,
    /// Path RTT, ms.
    pub rtt_ms: f64,
    /// Response size, bytes.
    pub size: u64,
    /// Time to first byte from the request's start, ms.
    pub ttfb_ms: f64,
    /// Time to the last byte, ms.
    pub total_ms: f64,
    /// Largest read the connection asked for, bytes.
    pub max_read: usize,
    /// Every read, as (asked, returned) bytes (absent before 2 Dec).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<(u32, u32)>,
    /// The connection's smallest RTT sample (TCP_INFO), ms.
    pub min_rtt_ms: Option<f64>,
}

/// What [`measure`] returns: every trial, round by round, path by path
/// (the field report's table is the analysis's, added by the caller).
pub type Measured = crate::stages::Measured<super::Details>;

/// A round's trials in, one value per part of the criterion out.
pub type Values<'a> = &'a (dyn Fn(&[Trial]) -> Vec<f64> + Sync);

/// Runs rounds until the decision is made: the paths at once, each on
/// its own testbed (20 Mbit/s each, a light load for the emulator; every
/// path's forwarder lateness is reported and flagged when it could move
/// a figure), each round's trials of one path one after another, so no
/// two connections of a path share its link. A failing path stops the
/// others ([`crate::together`]).
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    values: Values<'_>,
) -> Result<Measured, LabError> {
    let starts = plan
        .rtts
        .iter()
        .map(|&rtt| Box::new(move |o: &LabOptions| start(rtt, o)) as Part<'_, _>)
        .collect();
    let beds: Vec<(ServedTestbed, u16)> =
        crate::together::at_once(opts, "read-slow-start", starts)?;
    // The others of the phase may take the slots left ([`crate::first`]).
    opts.decision_beds_up();
    let id = progress.step(
        &format!(
            "read-slow-start: {} pairs a round on each of {}",
            super::PAIRS,
            beds.iter()
                .map(|b| b.0.desc.clone())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        0,
    );
    let budget = Budget::of(opts, super::min_rounds(), super::MAX_ROUNDS);
    let done = drive(
        "read-slow-start",
        super::parts(),
        &budget,
        opts,
        progress,
        |round| {
            let parts = beds
                .iter()
                .enumerate()
                .map(|(i, (bed, port))| {
                    let trials = plan.round(i, round);
                    Box::new(move |o: &LabOptions| one_round(bed, *port, &trials, o)) as Part<'_, _>
                })
                .collect();
            let got: Vec<Trial> = crate::together::at_once(opts, "read-slow-start", parts)?
                .into_iter()
                .flatten()
                .collect();
            let v = values(&got);
            Ok((got, v))
        },
    );
    // A failed run drops the testbeds (they tear down on drop).
    let done = done?;
    let trials: Vec<Trial> = done.rounds.iter().flatten().cloned().collect();
    let mut paths = Vec::new();
    for (bed, _) in beds {
        let rtt = bed.rtt_ms;
        let min_rtt = trials
            .iter()
            .filter(|t| t.rtt_ms == rtt)
            .filter_map(|t| t.min_rtt_ms)
            .fold(f64::INFINITY, f64::min);
        paths.push(bed.finish(min_rtt.is_finite().then_some(min_rtt))?);
    }
    let record = done.record;
    progress.done(id, &format!("read-slow-start: {} trials", trials.len()));
    Ok(Measured {
        details: super::Details {
            table: Vec::new(),
            trials,
        },
        paths,
        decision: record,
    })
}

/// A path's testbed and its origin.
fn start(rtt: u64, opts: &LabOptions) -> Result<(ServedTestbed, u16), LabError> {
    opts.check()?;
    let mut bed = ServedTestbed::start(opts, rtt, 20_000_000, Vec::new())?;
    let port = bed.serve_http()?;
    Ok((bed, port))
}

/// One round's trials on one path, each on a fresh connection.
fn one_round(
    bed: &ServedTestbed,
    port: u16,
    trials: &[super::Draw],
    opts: &LabOptions,
) -> Result<Vec<Trial>, LabError> {
    let addr = bed.peer(port);
    let rtt_ms = bed.rtt_ms;
    let cancel = opts.cancel.clone();
    bed.in_client(false, || async {
        let mut out = Vec::new();
        for d in trials {
            if cancel.load(Ordering::Relaxed) {
                return Err(LabError::Interrupted);
            }
            out.push(trial(addr, rtt_ms, d).await?);
        }
        Ok::<_, LabError>(out)
    })
}

/// One GET on a fresh connection, read as its arm says.
async fn trial(
    addr: std::net::SocketAddr,
    rtt_ms: f64,
    d: &super::Draw,
) -> Result<Trial, LabError> {
    let hold = (d.cause == Cause::Held).then(|| super::reader::Hold::new(d.hold_seed));
    let f = super::reader::fetch(addr, d.size, d.arm.sizer(), hold)
        .await
        .map_err(|e| {
            LabError::Io(std::io::Error::other(format!(
                "read-slow-start: GET /bytes/{}: {e}",
                d.size
            )))
        })?;
    Ok(Trial {
        arm: d.arm,
        cause: d.cause,
        rtt_ms,
        size: d.size,
        ttfb_ms: f.ttfb_ms,
        total_ms: f.total_ms,
        max_read: f.reads.iter().map(|r| r.0 as usize).max().unwrap_or(0),
        reads: f.reads,
        min_rtt_ms: f.min_rtt_ms,
    })
}
