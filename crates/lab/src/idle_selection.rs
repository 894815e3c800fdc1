//! Firefox's experiment: six objects in parallel on six connections (one
//! of 2 MB), 1 s idle, then a 25 KB object on an idle connection chosen by
//! each pool policy; servers with `tcp_slow_start_after_idle=0`, then `=1`.

use crate::common::{Bed, median_p90};
use crate::{Experiment, ExperimentResult, LabError, LabOptions};
use serde_json::json;
use std::fmt::Write;
use tcpwise_http::ClientConfig;
use tcpwise_http::scenario::{IdleRun, IdleSelection as Scenario, run_idle_selection};
use tcpwise_pool::Policy;

/// The experiment.
pub struct IdleSelection;

const POLICIES: [&str; 5] = ["fifo", "lifo", "max-burst", "warmest", "kernel"];

impl Experiment for IdleSelection {
    fn name(&self) -> &'static str {
        "idle-selection"
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Fn(&str),
    ) -> Result<ExperimentResult, LabError> {
        let runs = opts.runs.unwrap_or(if opts.quick { 3 } else { 10 });
        let mut summary = serde_json::Map::new();
        let mut details = serde_json::Map::new();
        let mut paths = Vec::new();
        let mut md = String::new();
        let _ = writeln!(
            md,
            "## idle-selection (Firefox: reuse the connection that moved the largest burst)\n"
        );
        for ssai in ["0", "1"] {
            opts.check()?;
            let sysctl = vec![(
                "net.ipv4.tcp_slow_start_after_idle".to_string(),
                ssai.to_string(),
            )];
            let bed = Bed::start(
                opts,
                250_000_000,
                8_000_000,
                sysctl,
                &["serve", "--bind", "198.18.0.2:8080"],
                8080,
            )?;
            let base =
                url::Url::parse(&format!("http://{}:8080", bed.tb.peer_v4())).expect("valid");
            let scenario = Scenario::seed(base);
            progress(&format!(
                "{runs} runs x {} policies on {}",
                POLICIES.len(),
                bed.desc
            ));
            let cancel = opts.cancel.clone();
            let results: Vec<IdleRun> =
                bed.in_client(|| rounds(&scenario, runs, &POLICIES, &cancel))?;
            let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
            let min_rtt = results
                .iter()
                .filter_map(|r| r.rtt_ms)
                .fold(f64::INFINITY, f64::min);
            paths.push(bed.finish(min_rtt.is_finite().then_some(min_rtt))?);
            // One RTT plus serialising the object's packets.
            let ser_ms =
                (scenario.target as f64 / 1448.0).ceil() * 1500.0 * 8.0 / (rate_mbit * 1e3);
            let one_rt = rtt_ms + ser_ms;
            let _ = writeln!(
                md,
                "Server `tcp_slow_start_after_idle={ssai}`, {runs} runs per policy; one round trip plus serialisation = {one_rt:.0} ms.\n"
            );
            let _ = writeln!(
                md,
                "| policy | median ms | p90 ms | round trips | connection it chose (typical) |\n|---|---|---|---|---|"
            );
            for p in POLICIES {
                let v: Vec<f64> = results
                    .iter()
                    .filter(|r| r.policy == p)
                    .map(|r| r.load_ms)
                    .collect();
                let (med, p90) = median_p90(&v);
                let trips = ((med - ser_ms) / rtt_ms).round();
                let burst = results
                    .iter()
                    .find(|r| r.policy == p)
                    .map_or(0, |r| r.chosen_burst);
                let key = p.replace('-', "_");
                let prefix = if ssai == "0" {
                    String::new()
                } else {
                    "restart_".to_string()
                };
                summary.insert(format!("{prefix}{key}_median_ms"), json!(med));
                summary.insert(format!("{prefix}{key}_p90_ms"), json!(p90));
                summary.insert(format!("{prefix}{key}_round_trips"), json!(trips));
                let _ = writeln!(
                    md,
                    "| {p} | {med:.1} | {p90:.1} | {trips:.0} | largest burst {burst} B |"
                );
            }
            let _ = writeln!(md);
            summary.insert("rtt_ms".into(), json!(rtt_ms));
            summary.insert("rate_mbit".into(), json!(rate_mbit));
            details.insert(format!("slow_start_after_idle_{ssai}"), json!(results));
        }
        if !opts.quick {
            sweep(
                opts,
                progress,
                &mut summary,
                &mut details,
                &mut paths,
                &mut md,
            )?;
        }
        let _ = writeln!(
            md,
            "Seed (Firefox 4 beta, 2011, 250 ms): FIFO 793 ms (three round trips), sort by burst 363 ms. Linux servers start at 10 segments, so a cold 25 KB object needs two round trips here.\n\n\
             With `=1` nothing changes on this testbed: Linux skips the idle restart for congestion controls with their own cong_control (BBR, inherited from the host), and for Reno/CUBIC `tcp_cwnd_restart()` halves the window once per RTO of idle rather than resetting it; after 1 s (RTO about 750 ms) that is one halving, and the warm connection still carries 25 KB in one round trip."
        );
        Ok(ExperimentResult {
            name: "idle-selection".into(),
            summary,
            details: serde_json::Value::Object(details),
            paths,
            markdown: md,
        })
    }
}

/// Object sizes of the full run's sweep (25 KB is the main table).
pub const SWEEP: [u64; 2] = [100_000, 400_000];
const SWEEP_POLICIES: [&str; 3] = ["fifo", "max-burst", "kernel"];

/// The full run's object-size sweep, server `tcp_slow_start_after_idle=0`.
fn sweep(
    opts: &LabOptions,
    progress: &dyn Fn(&str),
    summary: &mut serde_json::Map<String, serde_json::Value>,
    details: &mut serde_json::Map<String, serde_json::Value>,
    paths: &mut Vec<crate::PathError>,
    md: &mut String,
) -> Result<(), LabError> {
    let runs = opts.runs.unwrap_or(5).min(5);
    let sysctl = vec![(
        "net.ipv4.tcp_slow_start_after_idle".to_string(),
        "0".to_string(),
    )];
    let bed = Bed::start(
        opts,
        250_000_000,
        8_000_000,
        sysctl,
        &["serve", "--bind", "198.18.0.2:8080"],
        8080,
    )?;
    let base = url::Url::parse(&format!("http://{}:8080", bed.tb.peer_v4())).expect("valid");
    progress(&format!(
        "object-size sweep {SWEEP:?} B, {runs} runs x {} policies",
        SWEEP_POLICIES.len()
    ));
    let cancel = opts.cancel.clone();
    let results: Vec<(u64, IdleRun)> = bed.in_client(|| async {
        let mut v = Vec::new();
        for size in SWEEP {
            let mut scenario = Scenario::seed(base.clone());
            scenario.target = size;
            let got = rounds(&scenario, runs, &SWEEP_POLICIES, &cancel).await?;
            v.extend(got.into_iter().map(|x| (size, x)));
        }
        Ok::<_, LabError>(v)
    })?;
    let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
    paths.push(bed.finish(None)?);
    let _ = writeln!(
        md,
        "Object-size sweep (server `=0`, {runs} runs each), median load time in ms (round trips):\n"
    );
    let _ = writeln!(
        md,
        "| object | {} |\n|---|{}",
        SWEEP_POLICIES.join(" | "),
        "---|".repeat(SWEEP_POLICIES.len())
    );
    for size in SWEEP {
        let ser_ms = (size as f64 / 1448.0).ceil() * 1500.0 * 8.0 / (rate_mbit * 1e3);
        let mut row = format!("| {} KB |", size / 1000);
        for p in SWEEP_POLICIES {
            let v: Vec<f64> = results
                .iter()
                .filter(|(s, r)| *s == size && r.policy == p)
                .map(|(_, r)| r.load_ms)
                .collect();
            let (med, _) = median_p90(&v);
            let trips = ((med - ser_ms) / rtt_ms).round();
            summary.insert(
                format!("sweep_{}kb_{}_median_ms", size / 1000, p.replace('-', "_")),
                json!(med),
            );
            let _ = write!(row, " {med:.0} ({trips:.0}) |");
        }
        let _ = writeln!(md, "{row}");
    }
    let _ = writeln!(md);
    details.insert(
        "size_sweep".into(),
        json!(
            results
                .iter()
                .map(|(s, r)| json!({ "size": s, "run": r }))
                .collect::<Vec<_>>()
        ),
    );
    Ok(())
}

/// `runs` rounds of the scenario, each round trying every policy in turn
/// (interleaved, so drift in the machine hits them alike).
async fn rounds(
    scenario: &Scenario,
    runs: usize,
    policies: &[&str],
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Vec<IdleRun>, LabError> {
    let mut v = Vec::new();
    for r in 0..runs {
        for p in policies {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(LabError::Interrupted);
            }
            let cfg = ClientConfig {
                policy: Policy::parse(p).expect("known"),
                ..ClientConfig::default()
            };
            let x = run_idle_selection(cfg, scenario)
                .await
                .map_err(|e| LabError::Step(format!("run {r} {p}, {} B: {e}", scenario.target)))?;
            v.push(x);
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
    Ok(v)
}
