//! Firefox's experiment: six objects in parallel on six connections (one
//! of 2 MB), 1 s idle, then a 25 KB object on an idle connection chosen by
//! each pool policy; servers with `tcp_slow_start_after_idle=0`, then `=1`.
//! Beside the five HTTP/1.1 policies, an HTTP/2 row: the page and the
//! object on the origin's one h2c connection.

use crate::common::{Bed, median_p90};
use crate::html::bars;
use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Summary};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use tcpwise_http::ClientConfig;
use tcpwise_http::scenario::{IdleRun, IdleSelection as Scenario, run_idle_selection};
use tcpwise_pool::Policy;

/// The experiment.
pub struct IdleSelection;

/// The five HTTP/1.1 pool policies, then HTTP/2 (h2c, one connection per
/// origin by construction) on the same path.
const POLICIES: [&str; 6] = ["fifo", "lifo", "max-burst", "warmest", "kernel", "http2"];

/// One run of the object-size sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRun {
    /// Object size, bytes.
    pub size: u64,
    /// The run.
    pub run: IdleRun,
}

/// Everything measured: every run of the main tables (keyed
/// `slow_start_after_idle_0`, `..._1`) and of the size sweep.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Details {
    /// Runs per server setting.
    #[serde(flatten)]
    pub tables: BTreeMap<String, Vec<IdleRun>>,
    /// The full run's object-size sweep.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub size_sweep: Vec<SweepRun>,
}

/// What one testbed of the experiment produced.
struct Part {
    summary: Summary,
    details: Details,
    path: crate::PathError,
    md: String,
}

impl Experiment for IdleSelection {
    fn name(&self) -> &'static str {
        "idle-selection"
    }

    /// The `=0` and `=1` testbeds (and the full run's size sweep) run at
    /// once: each is its own pair of namespaces and its own forwarders, and
    /// at 8 Mbit/s they use a few percent of a CPU, so they do not disturb
    /// each other; every path's forwarder lateness is in the report to show
    /// it. Sequentially the experiment takes twice as long.
    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let runs = opts.runs.unwrap_or(if opts.quick { 3 } else { 10 });
        let parts: Vec<Result<Part, LabError>> = std::thread::scope(|s| {
            let mut handles = vec![
                s.spawn(|| main_table(opts, progress, "0", runs)),
                s.spawn(|| main_table(opts, progress, "1", runs)),
            ];
            if !opts.quick {
                handles.push(s.spawn(|| sweep(opts, progress)));
            }
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(LabError::Server {
                            what: "idle-selection",
                            source: std::io::Error::other("a testbed thread panicked"),
                        })
                    })
                })
                .collect()
        });
        let mut summary = Summary::new();
        let mut details = Details::default();
        let mut paths = Vec::new();
        let mut md = String::new();
        let _ = writeln!(
            md,
            "## idle-selection (Firefox: reuse the connection that moved the largest burst)\n"
        );
        for part in parts {
            let part = part?;
            summary.extend(part.summary);
            details.tables.extend(part.details.tables);
            details.size_sweep.extend(part.details.size_sweep);
            paths.push(part.path);
            md.push_str(&part.md);
        }
        let _ = writeln!(
            md,
            "Seed (Firefox 4 beta, 2011, 250 ms): FIFO 793 ms (three round trips), sort by burst 363 ms. Linux servers start at 10 segments, so a cold 25 KB object needs two round trips here.\n\n\
             With `=1` nothing changes on this testbed: Linux skips the idle restart for congestion controls with their own cong_control (BBR, inherited from the host), and for Reno/CUBIC `tcp_cwnd_restart()` halves the window once per RTO of idle rather than resetting it; after 1 s (RTO about 750 ms) that is one halving, and the warm connection still carries 25 KB in one round trip."
        );
        let g = |k: &str| summary.get(k).map_or(f64::NAN, |f| f.as_f64());
        let headline = crate::Headline {
            seed:
                "25 KB on an idle connection, 250 ms RTT: FIFO 793 ms, largest burst first 363 ms"
                    .into(),
            ours: format!(
                "fifo {:.0} ms, max-burst {:.0} ms, kernel {:.0} ms, HTTP/2 {:.0} ms (server ssai=0, median of {runs}); ssai=1: fifo {:.0}, max-burst {:.0}",
                g("fifo_median_ms"),
                g("max_burst_median_ms"),
                g("kernel_median_ms"),
                g("http2_median_ms"),
                g("restart_fifo_median_ms"),
                g("restart_max_burst_median_ms")
            ),
        };
        let mut items = Vec::new();
        for (prefix, label) in [("", "=0"), ("restart_", "=1")] {
            for p in POLICIES {
                if let Some(v) = summary.get(&format!("{prefix}{}_median_ms", p.replace('-', "_")))
                {
                    items.push((format!("{p} (ssai{label})"), v.as_f64()));
                }
            }
        }
        let plot = bars(
            "25 KB object on an idle connection: median load time by policy",
            "ms",
            &items,
        );
        Ok(ExperimentResult {
            name: "idle-selection".into(),
            headline,
            summary,
            details: crate::Details::IdleSelection(details),
            paths,
            markdown: md,
            plots: vec![plot],
        })
    }
}

/// A 250 ms / 8 Mbit/s testbed whose server runs `tcpwise serve` with
/// `tcp_slow_start_after_idle=ssai`, and the origin's URL.
fn idle_bed(opts: &LabOptions, ssai: &str) -> Result<(Bed, url::Url), LabError> {
    let sysctl = vec![(
        "net.ipv4.tcp_slow_start_after_idle".to_string(),
        ssai.to_string(),
    )];
    let mut bed = Bed::start(opts, 250_000_000, 8_000_000, sysctl)?;
    let port = bed.serve_http()?;
    let base = url::Url::parse(&format!("http://{}", bed.peer(port))).expect("valid");
    Ok((bed, base))
}

/// The smallest RTT TCP measured over `runs`, if any.
fn min_rtt<'a>(runs: impl Iterator<Item = &'a IdleRun>) -> Option<f64> {
    let m = runs.filter_map(|r| r.rtt_ms).fold(f64::INFINITY, f64::min);
    m.is_finite().then_some(m)
}

/// The seed's table: every policy, `runs` times, server `=ssai`.
fn main_table(
    opts: &LabOptions,
    progress: &dyn Progress,
    ssai: &str,
    runs: usize,
) -> Result<Part, LabError> {
    opts.check()?;
    let (bed, base) = idle_bed(opts, ssai)?;
    let scenario = Scenario::seed(base);
    let id = progress.step(
        &format!(
            "idle-selection: tcp_slow_start_after_idle={ssai}, {runs} runs x {} policies",
            POLICIES.len()
        ),
        (runs * POLICIES.len()) as u64,
    );
    let cancel = opts.cancel.clone();
    let results: Vec<IdleRun> = bed.in_client(false, || {
        rounds(&scenario, runs, &POLICIES, &cancel, progress, id)
    })?;
    let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
    let path = bed.finish(min_rtt(results.iter()))?;
    let mut summary = Summary::new();
    let mut md = String::new();
    // One RTT plus serialising the object's packets.
    let ser_ms = (scenario.target as f64 / 1448.0).ceil() * 1500.0 * 8.0 / (rate_mbit * 1e3);
    let one_rt = rtt_ms + ser_ms;
    let _ = writeln!(
        md,
        "Server `tcp_slow_start_after_idle={ssai}`, {runs} runs per policy; one round trip plus serialisation = {one_rt:.0} ms.\n"
    );
    let _ = writeln!(
        md,
        "| policy | median ms | p90 ms | round trips | connection it chose (typical) |\n|---|---|---|---|---|"
    );
    let prefix = if ssai == "0" { "" } else { "restart_" };
    let mut line = Vec::new();
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
        summary.insert(format!("{prefix}{key}_median_ms"), med.into());
        summary.insert(format!("{prefix}{key}_p90_ms"), p90.into());
        summary.insert(format!("{prefix}{key}_round_trips"), trips.into());
        let _ = writeln!(
            md,
            "| {p} | {med:.1} | {p90:.1} | {trips:.0} | largest burst {burst} B |"
        );
        line.push(format!("{p} {med:.0}"));
    }
    let _ = writeln!(md);
    summary.insert("rtt_ms".into(), rtt_ms.into());
    summary.insert("rate_mbit".into(), rate_mbit.into());
    progress.done(
        id,
        &format!("idle-selection: ={ssai}: median ms {}", line.join(", ")),
    );
    let mut details = Details::default();
    details
        .tables
        .insert(format!("slow_start_after_idle_{ssai}"), results);
    Ok(Part {
        summary,
        details,
        path,
        md,
    })
}

/// Object sizes of the full run's sweep (25 KB is the main table).
pub const SWEEP: [u64; 2] = [100_000, 400_000];
const SWEEP_POLICIES: [&str; 3] = ["fifo", "max-burst", "kernel"];

/// The full run's object-size sweep, server `tcp_slow_start_after_idle=0`.
fn sweep(opts: &LabOptions, progress: &dyn Progress) -> Result<Part, LabError> {
    opts.check()?;
    let runs = opts.runs.unwrap_or(5).min(5);
    let (bed, base) = idle_bed(opts, "0")?;
    let id = progress.step(
        &format!(
            "idle-selection: object sizes 100 KB, 400 KB, {runs} runs x {} policies",
            SWEEP_POLICIES.len()
        ),
        (SWEEP.len() * runs * SWEEP_POLICIES.len()) as u64,
    );
    let cancel = opts.cancel.clone();
    let mut summary = Summary::new();
    let mut md = String::new();
    let md = &mut md;
    let results: Vec<(u64, IdleRun)> = bed.in_client(false, || async {
        let mut v = Vec::new();
        for size in SWEEP {
            let mut scenario = Scenario::seed(base.clone());
            scenario.target = size;
            let got = rounds(&scenario, runs, &SWEEP_POLICIES, &cancel, progress, id).await?;
            v.extend(got.into_iter().map(|x| (size, x)));
        }
        Ok::<_, LabError>(v)
    })?;
    let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
    let mut path = bed.finish(min_rtt(results.iter().map(|(_, r)| r)))?;
    path.path.push_str(" (object-size sweep)");
    let _ = writeln!(
        md,
        "Object-size sweep (server `=0`, {runs} runs each), median load time in ms (round trips):\n"
    );
    let _ = writeln!(
        md,
        "{}",
        crate::report::table_head(&[&["object"][..], &SWEEP_POLICIES].concat())
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
                med.into(),
            );
            let _ = write!(row, " {med:.0} ({trips:.0}) |");
        }
        let _ = writeln!(md, "{row}");
    }
    let _ = writeln!(md);
    progress.done(id, "idle-selection: object-size sweep done");
    let details = Details {
        size_sweep: results
            .into_iter()
            .map(|(size, run)| SweepRun { size, run })
            .collect(),
        ..Details::default()
    };
    let md = std::mem::take(md);
    Ok(Part {
        summary,
        details,
        path,
        md,
    })
}

/// `runs` rounds of the scenario, each round trying every policy in turn
/// (interleaved, so drift in the machine hits them alike).
async fn rounds(
    scenario: &Scenario,
    runs: usize,
    policies: &[&str],
    cancel: &std::sync::atomic::AtomicBool,
    progress: &dyn Progress,
    id: usize,
) -> Result<Vec<IdleRun>, LabError> {
    let mut v = Vec::new();
    for r in 0..runs {
        for p in policies {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(LabError::Interrupted);
            }
            let cfg = match *p {
                "http2" => ClientConfig {
                    version: tcpwise_http::Version::Http2PriorKnowledge,
                    ..ClientConfig::default()
                },
                p => ClientConfig {
                    policy: p.parse::<Policy>().expect("known"),
                    ..ClientConfig::default()
                },
            };
            let x = run_idle_selection(cfg, scenario)
                .await
                .map_err(|source| LabError::Http {
                    what: format!("idle-selection run {r}, {p}, {} B", scenario.target),
                    source,
                })?;
            v.push(x);
            progress.inc(id, 1);
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
    Ok(v)
}
