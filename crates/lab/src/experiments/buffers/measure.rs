//! The downloads: a round is a static-buffer and an autotuned download
//! back to back on the same path (the testbed's raised ceilings; which
//! goes first alternates), run until the sequential decision is made;
//! then autotuned with Linux's default ceilings, with what the budget
//! leaves.

use super::{MAX_ROUNDS, Plan, SEED_BUFFER};
use crate::common::ServedTestbed;
use crate::sequential::driver::{Budget, drive};
use crate::{LabError, LabOptions, Progress};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tcpwise_emu::Role;
use tcpwise_emu::testbed::LINUX_DEFAULT_TCP_MEM;
use tcpwise_perf::{ClientOptions, PerfReport};

/// Everything measured: every download of each arm, in the order they
/// ran, interval by interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Details {
    /// The downloads with the field report's static receive buffer.
    #[serde(rename = "static")]
    pub pinned: Vec<PerfReport>,
    /// The downloads with an autotuned buffer (the testbed's raised
    /// ceilings).
    pub auto: Vec<PerfReport>,
    /// The same with Linux's default (boot-time) autotuning ceilings
    /// (`tcp_rmem` 6 MiB, `tcp_wmem` 4 MiB).
    pub auto_default: Vec<PerfReport>,
    /// The path's RTT, ms (after `--rtt`).
    #[serde(default)]
    pub rtt_ms: f64,
    /// The path's rate, Mbit/s (after `--rate`).
    #[serde(default)]
    pub rate_mbit: f64,
    /// Seconds of each download (the plan's: 10, or 5 in a short share).
    #[serde(default)]
    pub secs: u64,
    /// `tcp_rmem` and `tcp_wmem` as a new namespace had them when the run
    /// started (the host's values it inherits; empty in a record from
    /// before they were kept).
    #[serde(default)]
    pub inherited: Vec<(String, String)>,
}

/// What [`measure`] returns: the downloads and the path they ran on.
pub type Measured = crate::stages::Measured<Details>;

/// A round's values, one per part of the criterion: from the static and
/// the autotuned download and the path's rate (Mbit/s). The analysis
/// gives it, so the measurement runs rounds without reading figures.
pub type Values<'a> = &'a dyn Fn(&PerfReport, &PerfReport, f64) -> Vec<f64>;

/// The path with `perf server` on it, and how long each download runs.
struct Downloads<'a> {
    bed: ServedTestbed,
    peer: std::net::SocketAddr,
    secs: u64,
    opts: &'a LabOptions,
    progress: &'a dyn Progress,
}

impl Downloads<'_> {
    /// One download from the server, `rcvbuf` pinned or autotuned.
    fn run(&self, what: &str, rcvbuf: Option<u64>) -> Result<PerfReport, LabError> {
        self.opts.check()?;
        let (secs, progress) = (self.secs, self.progress);
        let id = progress.step(&format!("buffers: {what}, {secs} s download"), 2 + secs);
        let o = ClientOptions {
            host: self.peer.ip().to_string(),
            port: self.peer.port(),
            reverse: true,
            duration: Duration::from_secs(secs),
            rcvbuf,
            path_rate_bps: Some(self.bed.rate_mbit * 1e6),
            ..ClientOptions::default()
        };
        let report = self.bed.in_client(true, || async {
            tcpwise_perf::run_client(&o, |_| progress.inc(id, 1))
                .await
                .map_err(|source| LabError::Perf {
                    what: format!("buffers: {what}"),
                    source,
                })
        })?;
        progress.done(
            id,
            &format!("buffers: {what}: {:.2} Mbit/s", report.summary.goodput_mbit),
        );
        Ok(report)
    }

    /// Round `i`: static and autotuned back to back, the first of the
    /// pair alternating, so drift and order hit both alike.
    fn pair(&self, i: usize) -> Result<(PerfReport, PerfReport), LabError> {
        let n = i + 1;
        let st = format!("static {SEED_BUFFER}-byte receive buffer (round {n})");
        let au = format!("autotuned receive buffer (round {n})");
        Ok(if i.is_multiple_of(2) {
            let s = self.run(&st, Some(SEED_BUFFER))?;
            (s, self.run(&au, None)?)
        } else {
            let a = self.run(&au, None)?;
            (self.run(&st, Some(SEED_BUFFER))?, a)
        })
    }

    /// The descriptive extra: Linux's default (boot-time) ceilings, set on the live
    /// namespaces (on Linux autotuning stops at tcp_wmem[2]/tcp_rmem[2],
    /// and the default send ceiling, 4 MiB, is close to this path's BDP,
    /// 3.3 MB), then as many downloads as the decision's rounds (`n`),
    /// fewer where the share ends first.
    fn kernel_ceilings(&self, n: usize) -> Result<Vec<PerfReport>, LabError> {
        for role in [Role::Client, Role::Server] {
            let ns = self.bed.tb.netns(role).expect("pair");
            for (k, v) in LINUX_DEFAULT_TCP_MEM {
                ns.sysctl(k, v)?;
            }
        }
        let per = (self.secs + 2) as f64;
        let mut v = Vec::new();
        for i in 1..=n {
            let late = crate::budget::left(self.opts).is_some_and(|l| l < per);
            if late || self.opts.check().is_err() {
                break;
            }
            let what = format!("autotuned, Linux's default ceilings ({i}/{n})");
            v.push(self.run(&what, None)?);
        }
        Ok(v)
    }
}

/// Runs the downloads on one testbed, rounds until `parts` are decided.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    (parts, values): (Vec<crate::sequential::PartSpec>, Values<'_>),
) -> Result<Measured, LabError> {
    let inherited = tcpwise_emu::testbed::fresh_namespace_tcp_mem()?;
    let id = progress.step("buffers: starting the 177 ms / 151 Mbit/s path", 0);
    let mut bed = ServedTestbed::start(opts, 177_000_000, 151_000_000, Vec::new())?;
    let port = bed.serve_perf()?;
    progress.done(id, &format!("buffers: path {}", bed.desc));
    let d = Downloads {
        peer: bed.peer(port),
        bed,
        secs: plan.secs,
        opts,
        progress,
    };
    let budget = Budget::of(opts, super::min_rounds(), MAX_ROUNDS);
    let done = drive("buffers", parts, &budget, opts, progress, |i| {
        let (s, a) = d.pair(i)?;
        let v = values(&s, &a, d.bed.rate_mbit);
        Ok(((s, a), v))
    })?;
    let (pinned, auto): (Vec<_>, Vec<_>) = done.rounds.into_iter().unzip();
    let auto_default = d.kernel_ceilings(pinned.len())?;
    let (rtt_ms, rate_mbit) = (d.bed.rtt_ms, d.bed.rate_mbit);
    let min_rtt = auto
        .iter()
        .filter_map(|r| r.summary.min_rtt_ms)
        .reduce(f64::min);
    let path = d.bed.finish(min_rtt)?;
    Ok(Measured {
        details: Details {
            pinned,
            auto,
            auto_default,
            rtt_ms,
            rate_mbit,
            secs: plan.secs,
            inherited,
        },
        paths: vec![path],
        decision: done.record,
    })
}
