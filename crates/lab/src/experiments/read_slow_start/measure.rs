//! The trials: a pair testbed per path, an HTTP origin in it, and every
//! planned trial on a fresh connection, timed.

use super::{PathPlan, Plan};
use crate::common::Bed;
use crate::together::Part;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use std::sync::atomic::Ordering;
use tcpwise_http::{Client, ClientConfig, Request};
use tcpwise_pool::{Limits, Policy};
use tcpwise_tcp::ReadSizer;

/// The trial's two arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// One trial.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// Its arm.
    pub arm: Arm,
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
    /// The connection's smallest RTT sample (TCP_INFO), ms.
    pub min_rtt_ms: Option<f64>,
}

/// What [`measure`] returns.
pub struct Measured {
    /// Every trial, path by path.
    pub trials: Vec<Trial>,
    /// The emulator's error on each path.
    pub paths: Vec<PathError>,
}

/// Runs every planned trial: the paths at once, each on its own testbed
/// (20 Mbit/s each, a light load for the emulator; every path's
/// forwarder lateness is reported and flagged when it could move a
/// figure), the trials of one path one after another, so no two
/// connections of a path share its link. Both arms are interleaved
/// within each path, so whatever one path does to another hits them
/// alike. A failing path stops the others ([`crate::together`]).
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let parts = plan
        .paths
        .iter()
        .map(|p| Box::new(move |o: &LabOptions| one_path(p, o, progress)) as Part<'_, _>)
        .collect();
    let mut trials: Vec<Trial> = Vec::new();
    let mut paths = Vec::new();
    for (t, p) in crate::together::at_once(opts, "read-slow-start", parts)? {
        trials.extend(t);
        paths.push(p);
    }
    Ok(Measured { trials, paths })
}

/// One path's trials on its own testbed.
fn one_path(
    p: &PathPlan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<(Vec<Trial>, PathError), LabError> {
    opts.check()?;
    let n = p.trials.len();
    let mut bed = Bed::start(opts, p.rtt, 20_000_000, Vec::new())?;
    let port = bed.serve_http()?;
    let id = progress.step(
        &format!("read-slow-start: {n} trials on {}", bed.desc),
        n as u64,
    );
    let base = format!("http://{}", bed.peer(port));
    let rtt_ms = bed.rtt_ms;
    let cancel = opts.cancel.clone();
    let got: Vec<Trial> = bed.in_client(false, || async {
        let mut out = Vec::new();
        for &(arm, size) in &p.trials {
            if cancel.load(Ordering::Relaxed) {
                return Err(LabError::Interrupted);
            }
            // A fresh client: every trial is a new connection.
            let client = Client::new(ClientConfig {
                policy: Policy::Lifo,
                limits: Limits {
                    max_idle: 0,
                    ..Limits::default()
                },
                read_sizing: arm.sizer(),
                ..ClientConfig::default()
            });
            let url = url::Url::parse(&format!("{base}/bytes/{size}")).expect("valid");
            let r = client
                .request(&Request::get(url), |_| Ok(()))
                .await
                .map_err(|source| LabError::Http {
                    what: format!("read-slow-start: GET /bytes/{size}"),
                    source,
                })?;
            out.push(Trial {
                arm,
                rtt_ms,
                size,
                ttfb_ms: r.timings.first_byte_ms,
                total_ms: r.timings.body_done_ms,
                max_read: r.conn.max_read,
                min_rtt_ms: r
                    .conn
                    .tcp_info_end
                    .as_ref()
                    .and_then(|i| i.min_rtt_us)
                    .map(|us| f64::from(us) / 1e3),
            });
            progress.inc(id, 1);
        }
        Ok::<_, LabError>(out)
    })?;
    let min_rtt = got
        .iter()
        .filter_map(|t| t.min_rtt_ms)
        .fold(f64::INFINITY, f64::min);
    let med = |a: Arm| {
        let v: Vec<f64> = got
            .iter()
            .filter(|t| t.arm == a)
            .map(|t| t.ttfb_ms)
            .collect();
        crate::common::median_p90(&v).0
    };
    progress.done(
        id,
        &format!(
            "read-slow-start: {} ms path: median TTFB off {:.1} ms, on {:.1} ms",
            rtt_ms,
            med(Arm::Off),
            med(Arm::On)
        ),
    );
    let path = bed.finish(min_rtt.is_finite().then_some(min_rtt))?;
    Ok((got, path))
}
