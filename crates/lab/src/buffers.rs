//! The Windows TCP team's experiment: a 10 s download over 177 ms /
//! 151 Mbit/s with a static 278,775-byte receive buffer, then autotuned.
//! Both with the `tcpwise-perf` library (server and client in-process, in
//! their namespaces) on real kernel TCP.

use crate::common::Bed;
use crate::html::{Series, lines};
use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Summary};
use plotters::style::{BLUE, RED, RGBColor};
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;
use tcpwise_emu::Role;
use tcpwise_emu::testbed::{DEFAULT_SYSCTLS, KERNEL_TCP_MEM, sysctls_text};
use tcpwise_perf::{ClientOptions, PerfReport};

/// The experiment.
pub struct Buffers;

const SEED_BUFFER: u64 = 278_775;

/// Everything measured: both downloads, interval by interval.
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

impl Experiment for Buffers {
    fn name(&self) -> &'static str {
        "buffers"
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let secs: u64 = if opts.quick { 5 } else { 10 };
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
        let ceiling = bed.rate_mbit * 1448.0 / 1500.0;
        let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
        let path = bed.finish(auto.summary.min_rtt_ms)?;
        let (st, au) = (&pinned.summary, &auto.summary);
        let predicted = st.predicted_cap_mbit.unwrap_or(f64::NAN);
        let mut summary = Summary::new();
        summary.insert("static_mbit".into(), st.goodput_mbit.into());
        summary.insert("static_predicted_mbit".into(), predicted.into());
        summary.insert("auto_mbit".into(), au.goodput_mbit.into());
        let ad = &auto_default.summary;
        summary.insert("auto_default_mbit".into(), ad.goodput_mbit.into());
        summary.insert("ceiling_mbit".into(), ceiling.into());
        summary.insert("rtt_ms".into(), rtt_ms.into());
        summary.insert("rate_mbit".into(), rate_mbit.into());
        let mut md = String::new();
        let _ = writeln!(
            md,
            "## buffers (Windows TCP team: no static socket buffers)\n"
        );
        let _ = writeln!(
            md,
            "Path: {}. A {secs} s download with `tcpwise perf -R`, receiver in the client namespace. The testbed raises the autotuning ceilings in both namespaces ({}); the third column sets them back to the kernel's own ({}) on the same path.\n",
            path.path,
            sysctls_text(DEFAULT_SYSCTLS),
            sysctls_text(KERNEL_TCP_MEM)
        );
        let _ = writeln!(
            md,
            "| | static {SEED_BUFFER} B | autotuned (32 MiB ceilings) | autotuned (kernel's ceilings) | path ceiling |\n|---|---|---|---|---|"
        );
        let _ = writeln!(
            md,
            "| this run | {:.2} Mbit/s (cap predicted {predicted:.2}) | {:.2} Mbit/s | {:.2} Mbit/s (send-buffer-limited {}) | {ceiling:.2} Mbit/s |",
            st.goodput_mbit,
            au.goodput_mbit,
            ad.goodput_mbit,
            ad.sndbuf_limited_pct
                .map_or("-".into(), |p| format!("{p:.0}% of the time"))
        );
        let _ = writeln!(
            md,
            "| seed (Windows, over the Internet) | 11.3 avg, 12.6 max | 126 avg, 151 max | | 151 |\n"
        );
        let _ = writeln!(
            md,
            "Per second, Mbit/s:\n\n| second | static | autotuned | autotuned, kernel's ceilings |\n|---|---|---|---|"
        );
        let runs = [&pinned.intervals, &auto.intervals, &auto_default.intervals];
        let rows = runs.iter().map(|r| r.len()).max().unwrap_or(0);
        for i in 0..rows {
            let start = runs
                .iter()
                .find_map(|r| r.get(i))
                .map_or(i as f64, |x| x.start_s);
            let cells: Vec<String> = runs
                .iter()
                .map(|r| r.get(i).map_or("-".into(), |x| format!("{:.1}", x.mbit)))
                .collect();
            let _ = writeln!(md, "| {start:.0} | {} |", cells.join(" | "));
        }
        if let Some(d) = &st.diagnosis {
            let _ = writeln!(md, "\nDiagnosis of the static run: {d}");
        }
        if let Some(d) = &ad.diagnosis {
            let _ = writeln!(md, "\nDiagnosis with the kernel's ceilings: {d}");
        }
        let _ = writeln!(
            md,
            "\nLinux doubles SO_RCVBUF and advertises 160/256 of it for full-sized segments, so the seed's request caps at about 15.7 Mbit/s here rather than Windows' 12.6."
        );
        let pts = |r: &PerfReport| -> Vec<(f64, f64)> {
            r.intervals.iter().map(|i| (i.end_s, i.mbit)).collect()
        };
        let end = auto.intervals.last().map_or(10.0, |i| i.end_s);
        let series: [Series; 4] = [
            ("autotuned".into(), BLUE, pts(&auto)),
            (
                "autotuned, kernel's ceilings".into(),
                RGBColor(0, 140, 0),
                pts(&auto_default),
            ),
            ("static SO_RCVBUF".into(), RED, pts(&pinned)),
            (
                "payload ceiling".into(),
                RGBColor(120, 120, 120),
                vec![(0.0, ceiling), (end, ceiling)],
            ),
        ];
        let plot = lines(
            "Per-second goodput: static 278,775-byte buffer vs autotuned",
            "seconds",
            "Mbit/s",
            &series,
        );
        let headline = crate::Headline {
            seed: "278,775-byte static buffer: 11.3 Mbit/s avg (12.6 max); autotuned 126 avg, 151 max, on 151 Mbit/s / 177 ms".into(),
            ours: format!(
                "static {:.1} Mbit/s (predicted cap {predicted:.1}); autotuned {:.1} Mbit/s = {:.0} % of the {ceiling:.1} ceiling ({secs} s; {:.1} with the kernel's default autotuning ceilings)",
                st.goodput_mbit,
                au.goodput_mbit,
                100.0 * au.goodput_mbit / ceiling,
                ad.goodput_mbit,
            ),
        };
        Ok(ExperimentResult {
            name: "buffers".into(),
            summary,
            details: crate::Details::Buffers(Box::new(Details {
                pinned,
                auto,
                auto_default,
            })),
            paths: vec![path],
            headline,
            markdown: md,
            plots: vec![plot],
        })
    }
}
