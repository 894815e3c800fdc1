//! The Windows TCP team's experiment: a 10 s download over 177 ms /
//! 151 Mbit/s with a static 278,775-byte receive buffer, then autotuned.
//! Both with `tcpwise perf` (our binary) on real kernel TCP.

use crate::common::Bed;
use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress};
use serde_json::{Value, json};
use std::fmt::Write;

/// The experiment.
pub struct Buffers;

const SEED_BUFFER: &str = "278775";

impl Experiment for Buffers {
    fn name(&self) -> &'static str {
        "buffers"
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let secs = if opts.quick { "5" } else { "10" };
        let id = progress.step("buffers: starting the 177 ms / 151 Mbit/s path", 0);
        let bed = Bed::start(
            opts,
            177_000_000,
            151_000_000,
            Vec::new(),
            &["perf", "server", "--bind", "[::]:5301"],
            5301,
        )?;
        let peer = bed.tb.peer_v4().to_string();
        let rate = format!("{}bit", (bed.rate_mbit * 1e6) as u64);
        progress.done(id, &format!("buffers: path {}", bed.desc));
        let run = |what: &str, extra: &[&str]| -> Result<Value, LabError> {
            opts.check()?;
            let id = progress.step(
                &format!("buffers: {what}, {secs} s download"),
                2 + secs.parse::<u64>().unwrap_or(0),
            );
            let mut args = vec![
                "perf",
                "client",
                &peer,
                "-R",
                "-t",
                secs,
                "--path-rate",
                &rate,
                "--json",
            ];
            args.extend_from_slice(extra);
            // The client is one process; tick the bar once a second while it runs.
            let running = std::sync::atomic::AtomicBool::new(true);
            let out = std::thread::scope(|s| {
                s.spawn(|| {
                    while running.load(std::sync::atomic::Ordering::Relaxed) {
                        std::thread::sleep(std::time::Duration::from_secs(1));
                        progress.inc(id, 1);
                    }
                });
                let out = bed.client(opts, &args);
                running.store(false, std::sync::atomic::Ordering::Relaxed);
                out
            })?;
            let v: Value = serde_json::from_str(&out)
                .map_err(|e| LabError::Step(format!("tcpwise perf printed no JSON: {e}")))?;
            progress.done(
                id,
                &format!(
                    "buffers: {what}: {:.2} Mbit/s",
                    v["summary"]["goodput_mbit"].as_f64().unwrap_or(f64::NAN)
                ),
            );
            Ok(v)
        };
        let stat = run(
            &format!("static {SEED_BUFFER}-byte receive buffer"),
            &["--rcvbuf", SEED_BUFFER],
        )?;
        let auto = run("autotuned receive buffer", &[])?;
        let ceiling = bed.rate_mbit * 1448.0 / 1500.0;
        let min_rtt = auto["summary"]["min_rtt_ms"].as_f64();
        let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
        let path = bed.finish(min_rtt)?;
        let f = |v: &Value, k: &str| v["summary"][k].as_f64().unwrap_or(f64::NAN);
        let mut summary = serde_json::Map::new();
        summary.insert("static_mbit".into(), json!(f(&stat, "goodput_mbit")));
        summary.insert(
            "static_predicted_mbit".into(),
            json!(f(&stat, "predicted_cap_mbit")),
        );
        summary.insert("auto_mbit".into(), json!(f(&auto, "goodput_mbit")));
        summary.insert("ceiling_mbit".into(), json!(ceiling));
        summary.insert("rtt_ms".into(), json!(rtt_ms));
        summary.insert("rate_mbit".into(), json!(rate_mbit));
        let mut md = String::new();
        let _ = writeln!(
            md,
            "## buffers (Windows TCP team: no static socket buffers)\n"
        );
        let _ = writeln!(
            md,
            "Path: {}. A {secs} s download with `tcpwise perf -R`, receiver in the client namespace.\n",
            path.path
        );
        let _ = writeln!(
            md,
            "| | static {SEED_BUFFER} B | autotuned | path ceiling |\n|---|---|---|---|"
        );
        let _ = writeln!(
            md,
            "| this run | {:.2} Mbit/s (cap predicted {:.2}) | {:.2} Mbit/s | {ceiling:.2} Mbit/s |",
            f(&stat, "goodput_mbit"),
            f(&stat, "predicted_cap_mbit"),
            f(&auto, "goodput_mbit")
        );
        let _ = writeln!(
            md,
            "| seed (Windows, over the Internet) | 11.3 avg, 12.6 max | 126 avg, 151 max | 151 |\n"
        );
        let _ = writeln!(
            md,
            "Per second, Mbit/s:\n\n| second | static | autotuned |\n|---|---|---|"
        );
        let (si, ai) = (
            stat["intervals"].as_array().cloned().unwrap_or_default(),
            auto["intervals"].as_array().cloned().unwrap_or_default(),
        );
        for i in 0..si.len().max(ai.len()) {
            let g = |v: &[Value]| {
                v.get(i)
                    .and_then(|x| x["mbit"].as_f64())
                    .map_or("-".into(), |m| format!("{m:.1}"))
            };
            let start = si
                .get(i)
                .or(ai.get(i))
                .and_then(|x| x["start_s"].as_f64())
                .unwrap_or(i as f64);
            let _ = writeln!(md, "| {start:.0} | {} | {} |", g(&si), g(&ai));
        }
        if let Some(d) = stat["summary"]["diagnosis"].as_str() {
            let _ = writeln!(md, "\nDiagnosis of the static run: {d}");
        }
        let _ = writeln!(
            md,
            "\nLinux doubles SO_RCVBUF and advertises 160/256 of it for full-sized segments, so the seed's request caps at about 15.7 Mbit/s here rather than Windows' 12.6."
        );
        Ok(ExperimentResult {
            name: "buffers".into(),
            summary,
            details: json!({ "static": stat, "auto": auto }),
            paths: vec![path],
            headline: crate::Headline {
                seed: "278,775-byte static buffer: 11.3 Mbit/s avg (12.6 max); autotuned 126 avg, 151 max, on 151 Mbit/s / 177 ms".into(),
                ours: format!(
                    "static {:.1} Mbit/s (predicted cap {:.1}); autotuned {:.1} Mbit/s = {:.0} % of the {:.1} ceiling ({secs} s)",
                    f(&stat, "goodput_mbit"),
                    f(&stat, "predicted_cap_mbit"),
                    f(&auto, "goodput_mbit"),
                    100.0 * f(&auto, "goodput_mbit") / ceiling,
                    ceiling
                ),
            },
            markdown: md,
        })
    }
}
