//! The testbeds, at once: the seed's table with the server's
//! `tcp_slow_start_after_idle=0` and `=1`, and the full run's object-size
//! sweep. Each is its own pair of namespaces and its own forwarders, and
//! at 8 Mbit/s they use a few percent of a CPU, so they do not disturb
//! each other; every path's forwarder lateness is in the report to show
//! it. One after another the experiment would take twice as long.

use super::{Contender, Plan, SWEEP, contenders, sweep_contenders};
use crate::common::Bed;
use crate::together::Part;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use std::collections::BTreeMap;
use tcpwise_http::ClientConfig;
use tcpwise_http::scenario::{IdleRun, IdleSelection as Scenario, run_idle_selection};

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

/// One testbed's runs and its path.
pub struct Table<R> {
    /// The server's `tcp_slow_start_after_idle`.
    pub ssai: &'static str,
    /// The runs.
    pub runs: Vec<R>,
    /// The emulator's error on the path.
    pub path: PathError,
    /// The path's RTT, ms.
    pub rtt_ms: f64,
    /// The path's rate, Mbit/s.
    pub rate_mbit: f64,
    /// The scenario's object, bytes (the main tables').
    pub target: u64,
}

/// What [`measure`] returns.
pub struct Measured {
    /// The main tables, `=0` then `=1`.
    pub tables: Vec<Table<IdleRun>>,
    /// The size sweep (full runs), each run with its object size.
    pub sweep: Option<Table<(u64, IdleRun)>>,
}

impl Measured {
    /// The runs as `results.json` keeps them.
    pub fn details(&self) -> Details {
        let mut d = Details::default();
        for t in &self.tables {
            d.tables
                .insert(format!("slow_start_after_idle_{}", t.ssai), t.runs.clone());
        }
        if let Some(s) = &self.sweep {
            d.size_sweep = s
                .runs
                .iter()
                .map(|(size, run)| SweepRun {
                    size: *size,
                    run: run.clone(),
                })
                .collect();
        }
        d
    }
}

/// What one testbed measured.
enum Done {
    Main(Table<IdleRun>),
    Sweep(Table<(u64, IdleRun)>),
}

/// Runs the testbeds at once; a failing one stops the others
/// ([`crate::together`]).
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let mut parts: Vec<Part<'_, Done>> = ["0", "1"]
        .into_iter()
        .map(|ssai| {
            Box::new(move |o: &LabOptions| main_table(o, progress, ssai, plan.runs).map(Done::Main))
                as Part<'_, Done>
        })
        .collect();
    if let Some(runs) = plan.sweep_runs {
        parts.push(Box::new(move |o: &LabOptions| {
            sweep(o, progress, runs).map(Done::Sweep)
        }));
    }
    let mut m = Measured {
        tables: Vec::new(),
        sweep: None,
    };
    for d in crate::together::at_once(opts, "idle-selection", parts)? {
        match d {
            Done::Main(t) => m.tables.push(t),
            Done::Sweep(t) => m.sweep = Some(t),
        }
    }
    Ok(m)
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

/// Beside the plain origin, `tcpwise serve --tls --http3` on the same
/// testbed for the HTTP/3 row; its origin's URL.
fn h3_origin(bed: &mut Bed) -> Result<url::Url, LabError> {
    let tls = crate::common::self_signed()?;
    let port = bed.serve_with(tcpwise_http::ServeOptions {
        tls: Some(tls),
        http3: true,
        ..tcpwise_http::ServeOptions::new("[::]:0".parse().expect("valid"))
    })?;
    Ok(url::Url::parse(&format!("https://{}", bed.peer(port))).expect("valid"))
}

/// The smallest RTT TCP measured over `runs`, if any.
fn min_rtt<'a>(runs: impl Iterator<Item = &'a IdleRun>) -> Option<f64> {
    let m = runs.filter_map(|r| r.rtt_ms).fold(f64::INFINITY, f64::min);
    m.is_finite().then_some(m)
}

/// The seed's table: every contender, `runs` times, server `=ssai`.
fn main_table(
    opts: &LabOptions,
    progress: &dyn Progress,
    ssai: &'static str,
    runs: usize,
) -> Result<Table<IdleRun>, LabError> {
    opts.check()?;
    let (mut bed, base) = idle_bed(opts, ssai)?;
    let scenario = Scenario::seed(base);
    let h3 = Scenario::seed(h3_origin(&mut bed)?);
    let all = contenders();
    let id = progress.step(
        &format!(
            "idle-selection: tcp_slow_start_after_idle={ssai}, {runs} runs x {} policies",
            all.len()
        ),
        (runs * all.len()) as u64,
    );
    let cancel = opts.cancel.clone();
    let results: Vec<IdleRun> = bed.in_client(false, || {
        rounds([&scenario, &h3], runs, &all, &cancel, progress, id)
    })?;
    let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
    let path = bed.finish(min_rtt(results.iter()))?;
    let line: Vec<String> = all
        .iter()
        .map(|c| {
            let v: Vec<f64> = results
                .iter()
                .filter(|r| r.policy == c.name())
                .map(|r| r.load_ms)
                .collect();
            format!("{} {:.0}", c.name(), crate::common::median_p90(&v).0)
        })
        .collect();
    progress.done(
        id,
        &format!("idle-selection: ={ssai}: median ms {}", line.join(", ")),
    );
    Ok(Table {
        ssai,
        runs: results,
        path,
        rtt_ms,
        rate_mbit,
        target: scenario.target,
    })
}

/// The full run's object-size sweep, server `tcp_slow_start_after_idle=0`.
fn sweep(
    opts: &LabOptions,
    progress: &dyn Progress,
    runs: usize,
) -> Result<Table<(u64, IdleRun)>, LabError> {
    opts.check()?;
    let (bed, base) = idle_bed(opts, "0")?;
    let all = sweep_contenders();
    let id = progress.step(
        &format!(
            "idle-selection: object sizes 100 KB, 400 KB, {runs} runs x {} policies",
            all.len()
        ),
        (SWEEP.len() * runs * all.len()) as u64,
    );
    let cancel = opts.cancel.clone();
    let results: Vec<(u64, IdleRun)> = bed.in_client(false, || async {
        let mut v = Vec::new();
        for size in SWEEP {
            let mut scenario = Scenario::seed(base.clone());
            scenario.target = size;
            let got = rounds([&scenario, &scenario], runs, &all, &cancel, progress, id).await?;
            v.extend(got.into_iter().map(|x| (size, x)));
        }
        Ok::<_, LabError>(v)
    })?;
    let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
    let mut path = bed.finish(min_rtt(results.iter().map(|(_, r)| r)))?;
    path.path.push_str(" (object-size sweep)");
    progress.done(id, "idle-selection: object-size sweep done");
    Ok(Table {
        ssai: "0",
        runs: results,
        path,
        rtt_ms,
        rate_mbit,
        target: 0,
    })
}

/// `runs` rounds of the scenario, each round trying every contender in
/// turn (interleaved, so drift in the machine hits them alike); HTTP/3
/// runs the second scenario (the same on the TLS origin).
async fn rounds(
    [scenario, h3]: [&Scenario; 2],
    runs: usize,
    contenders: &[Contender],
    cancel: &std::sync::atomic::AtomicBool,
    progress: &dyn Progress,
    id: usize,
) -> Result<Vec<IdleRun>, LabError> {
    let mut v = Vec::new();
    for r in 0..runs {
        for c in contenders {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(LabError::Interrupted);
            }
            let cfg = match *c {
                Contender::Http2 => ClientConfig {
                    version: tcpwise_http::Version::Http2PriorKnowledge,
                    ..ClientConfig::default()
                },
                Contender::Http3 => ClientConfig {
                    version: tcpwise_http::Version::Http3Only,
                    insecure: true,
                    ..ClientConfig::default()
                },
                Contender::Pool(policy) => ClientConfig {
                    policy,
                    ..ClientConfig::default()
                },
            };
            let on = if *c == Contender::Http3 { h3 } else { scenario };
            let x = run_idle_selection(cfg, on)
                .await
                .map_err(|source| LabError::Http {
                    what: format!("idle-selection run {r}, {}, {} B", c.name(), on.target),
                    source,
                })?;
            v.push(x);
            progress.inc(id, 1);
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
    Ok(v)
}
