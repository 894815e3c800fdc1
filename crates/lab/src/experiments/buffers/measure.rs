//! The three downloads: static receive buffer, autotuned (the testbed's
//! raised ceilings), autotuned with the kernel's own ceilings.

use super::{Plan, SEED_BUFFER};
use crate::common::Bed;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use std::time::Duration;
use tcpwise_emu::Role;
use tcpwise_emu::testbed::KERNEL_TCP_MEM;
use tcpwise_perf::{ClientOptions, PerfReport};

/// Everything measured: the three downloads, interval by interval.
#[derive(Debug, Clone, Serialize)]
pub struct Details {
    /// The download with the seed's static receive buffer.
    #[serde(rename = "static")]
    pub pinned: PerfReport,
    /// The download with an autotuned buffer (the testbed's raised ceilings).
    pub auto: PerfReport,
    /// The same with the kernel's default autotuning ceilings
    /// (`tcp_rmem` 6 MiB, `tcp_wmem` 4 MiB).
    pub auto_default: PerfReport,
}

/// What [`measure`] returns: the downloads and the path they ran on.
pub struct Measured {
    /// The downloads.
    pub details: Details,
    /// The emulator's error on the path.
    pub path: PathError,
    /// The path's RTT, ms (after `--rtt`).
    pub rtt_ms: f64,
    /// The path's rate, Mbit/s (after `--rate`).
    pub rate_mbit: f64,
}

/// Runs the three downloads on one testbed.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let secs = plan.secs;
    let id = progress.step("buffers: starting the 177 ms / 151 Mbit/s path", 0);
    let mut bed = Bed::start(opts, 177_000_000, 151_000_000, Vec::new())?;
    let port = bed.serve_perf()?;
    let peer = bed.peer(port);
    let rate_bps = bed.rate_mbit * 1e6;
    progress.done(id, &format!("buffers: path {}", bed.desc));
    let run = |what: &str, rcvbuf: Option<u64>| -> Result<PerfReport, LabError> {
        opts.check()?;
        let id = progress.step(&format!("buffers: {what}, {secs} s download"), 2 + secs);
        let o = ClientOptions {
            host: peer.ip().to_string(),
            port: peer.port(),
            reverse: true,
            duration: Duration::from_secs(secs),
            rcvbuf,
            path_rate_bps: Some(rate_bps),
            ..ClientOptions::default()
        };
        let report = bed.in_client(true, || async {
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
    };
    let pinned = run(
        &format!("static {SEED_BUFFER}-byte receive buffer"),
        Some(SEED_BUFFER),
    )?;
    let auto = run("autotuned receive buffer", None)?;
    // The kernel's own ceilings, set on the live namespaces: on Linux
    // autotuning stops at tcp_wmem[2]/tcp_rmem[2], and the default send
    // ceiling (4 MiB) is close to this path's BDP (3.3 MB).
    for role in [Role::Client, Role::Server] {
        let ns = bed.tb.netns(role).expect("pair");
        for (k, v) in KERNEL_TCP_MEM {
            ns.sysctl(k, v)?;
        }
    }
    let auto_default = run("autotuned, kernel's default ceilings", None)?;
    let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
    let path = bed.finish(auto.summary.min_rtt_ms)?;
    Ok(Measured {
        details: Details {
            pinned,
            auto,
            auto_default,
        },
        path,
        rtt_ms,
        rate_mbit,
    })
}
