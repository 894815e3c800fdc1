//! First the decisive comparison, in rounds until the sequential
//! decision is made: FIFO and the largest burst back to back (which goes
//! first alternates) on the testbed with the server's
//! `tcp_slow_start_after_idle=0`. Then the descriptive extras, with what
//! the budget leaves, on testbeds at once: every other contender there,
//! the field report's table with `=1`, and the object-size sweep. Each is its own pair of namespaces and its own forwarders, and
//! at 8 Mbit/s they use a few percent of a CPU, so they do not disturb
//! each other; every path's forwarder lateness is in the report to show
//! it. One after another the experiment would take twice as long.

use super::scenario::{IdleRun, IdleSelection as Scenario, run_idle_selection};
use super::{Contender, Plan, SWEEP, contenders, sweep_contenders};
use crate::common::ServedTestbed;
use crate::sequential::driver::{Budget, drive};
use crate::together::Part;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::{Deserialize, Serialize};
use tcpwise_client::ClientConfig;

/// One testbed's runs and its path.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Table<R> {
    /// The server's `tcp_slow_start_after_idle`.
    pub ssai: String,
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

/// Everything measured: the main tables, `=0` then `=1` (`=1` absent
/// when the budget left no time for it), and the size sweep (each run
/// with its object size).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Details {
    /// The main tables.
    pub tables: Vec<Table<IdleRun>>,
    /// The size sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Table<(u64, IdleRun)>>,
}

/// What [`measure`] returns.
pub type Measured = crate::stages::Measured<Details>;

/// What one testbed measured.
enum Done {
    Main(Table<IdleRun>),
    Sweep(Table<(u64, IdleRun)>),
    Extra(Vec<IdleRun>),
}

/// The seconds one run of one contender takes (six objects, 1 s idle,
/// the object, the pause between runs), measured: 7 rounds of FIFO and
/// the largest burst in 77 s (27 Nov, `lab idle-selection --budget 100s`).
pub const RUN_SECS: f64 = 5.5;

/// The `=0` testbed: its origin, and the same on `serve --tls --http3`.
struct Origin {
    bed: ServedTestbed,
    scenario: Scenario,
    h3: Scenario,
}

/// The decisive rounds on the `=0` testbed, then the extras at once; a
/// failing testbed stops the others ([`crate::together`]).
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let (mut bed, base) = idle_bed(opts, "0")?;
    // Its decision runs on this one: the others of the phase may take
    // the slots left ([`crate::first`]).
    opts.decision_beds_up();
    let h3 = Scenario::seed(h3_origin(&mut bed)?);
    let o = Origin {
        bed,
        scenario: Scenario::seed(base),
        h3,
    };
    let record = decide(&o, opts, progress)?;
    let mut runs0 = record.1;
    let mut m = Details::default();
    for d in extras(plan, &o, opts, progress)? {
        match d {
            Done::Main(t) => m.tables.push(t),
            Done::Sweep(t) => m.sweep = Some(t),
            Done::Extra(v) => runs0.extend(v),
        }
    }
    let (rtt_ms, rate_mbit, target) = (o.bed.rtt_ms, o.bed.rate_mbit, o.scenario.target);
    let path = o.bed.finish(min_rtt(runs0.iter()))?;
    m.tables.insert(
        0,
        Table {
            ssai: "0".into(),
            runs: runs0,
            path,
            rtt_ms,
            rate_mbit,
            target,
        },
    );
    let mut paths: Vec<PathError> = m.tables.iter().map(|t| t.path.clone()).collect();
    paths.extend(m.sweep.as_ref().map(|s| s.path.clone()));
    Ok(Measured {
        details: m,
        paths,
        decision: record.0,
    })
}

/// FIFO and the largest burst back to back (which goes first
/// alternates) until the sequential decision is made; the decision and
/// the runs.
fn decide(
    o: &Origin,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<(crate::sequential::Record, Vec<IdleRun>), LabError> {
    let budget = Budget::of(opts, super::min_rounds(), super::MAX_ROUNDS);
    let (fifo, burst) = (super::pool("fifo"), super::pool("max-burst"));
    let rtt_ms = o.bed.rtt_ms;
    let done = drive(
        "idle-selection",
        super::parts(),
        &budget,
        opts,
        progress,
        |i| {
            let order = if i.is_multiple_of(2) {
                [fifo, burst]
            } else {
                [burst, fifo]
            };
            let runs = o.bed.in_client(false, || {
                rounds([&o.scenario, &o.h3], 1, &order, &opts.cancel, &|| ())
            })?;
            let ms = |c: Contender| {
                runs.iter()
                    .find(|r| r.policy == c.name())
                    .map_or(f64::NAN, |r| r.load_ms)
            };
            let value = (ms(fifo) - ms(burst)) / rtt_ms;
            Ok((runs, vec![value]))
        },
    )?;
    Ok((done.record, done.rounds.into_iter().flatten().collect()))
}

/// The descriptive extras at once, with what the share leaves (each as
/// many runs a contender as the time left holds, at most the plan's;
/// with --runs, the plan's): every other contender on the `=0` testbed,
/// the `=1` table and the size sweep. Ctrl-C keeps the decision: the
/// extras it stops are left out.
fn extras(
    plan: &Plan,
    o: &Origin,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Vec<Done>, LabError> {
    if opts.check().is_err() {
        return Ok(Vec::new());
    }
    let fits = |n: usize| crate::budget::fit_part(opts, 1, RUN_SECS * n as f64, 0.0, plan.runs);
    let (fifo, burst) = (super::pool("fifo"), super::pool("max-burst"));
    let others: Vec<Contender> = contenders()
        .into_iter()
        .filter(|c| *c != fifo && *c != burst)
        .collect();
    let extra_runs = fits(contenders().len());
    let sweep_runs = plan
        .sweep_runs
        .map(|r| r.min(fits(SWEEP.len() * sweep_contenders().len())));
    let mut parts: Vec<Part<'_, Done>> = Vec::new();
    let others = &others;
    if extra_runs > 0 {
        parts.push(Box::new(move |x: &LabOptions| {
            let id = progress.step(
                &format!(
                    "idle-selection: =0, {extra_runs} runs x {} other policies",
                    others.len()
                ),
                (extra_runs * others.len()) as u64,
            );
            let tick = || progress.inc(id, 1);
            let v = o.bed.in_client(false, || {
                rounds([&o.scenario, &o.h3], extra_runs, others, &x.cancel, &tick)
            })?;
            progress.done(id, "idle-selection: =0, other policies done");
            Ok(Done::Extra(v))
        }));
        parts.push(Box::new(move |x: &LabOptions| {
            main_table(x, progress, "1", extra_runs).map(Done::Main)
        }));
    }
    if let Some(runs) = sweep_runs.filter(|r| *r > 0) {
        parts.push(Box::new(move |x: &LabOptions| {
            sweep(x, progress, runs).map(Done::Sweep)
        }));
    }
    match crate::together::at_once(opts, "idle-selection", parts) {
        Err(LabError::Interrupted) => Ok(Vec::new()),
        other => other,
    }
}

/// A 250 ms / 8 Mbit/s testbed whose server runs `tcpwise serve` with
/// `tcp_slow_start_after_idle=ssai`, and the origin's URL.
fn idle_bed(opts: &LabOptions, ssai: &str) -> Result<(ServedTestbed, url::Url), LabError> {
    let sysctl = vec![(
        "net.ipv4.tcp_slow_start_after_idle".to_string(),
        ssai.to_string(),
    )];
    let mut bed = ServedTestbed::start(opts, 250_000_000, 8_000_000, sysctl)?;
    let port = bed.serve_http()?;
    let base = url::Url::parse(&format!("http://{}", bed.peer(port))).expect("valid");
    Ok((bed, base))
}

/// Beside the plain origin, `tcpwise serve --tls --http3` on the same
/// testbed for the HTTP/3 row; its origin's URL.
fn h3_origin(bed: &mut ServedTestbed) -> Result<url::Url, LabError> {
    let tls = crate::common::self_signed()?;
    let port = bed.serve_with(tcpwise_server::ServeOptions {
        tls: Some(tls),
        http3: true,
        ..tcpwise_server::ServeOptions::new("[::]:0".parse().expect("valid"))
    })?;
    Ok(url::Url::parse(&format!("https://{}", bed.peer(port))).expect("valid"))
}

/// The smallest RTT TCP measured over `runs`, if any.
fn min_rtt<'a>(runs: impl Iterator<Item = &'a IdleRun>) -> Option<f64> {
    let m = runs.filter_map(|r| r.rtt_ms).fold(f64::INFINITY, f64::min);
    m.is_finite().then_some(m)
}

/// The field report's table: every contender, `runs` times, server `=ssai`.
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
    let tick = || progress.inc(id, 1);
    let results: Vec<IdleRun> = bed.in_client(false, || {
        rounds([&scenario, &h3], runs, &all, &cancel, &tick)
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
        ssai: ssai.into(),
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
            let got = rounds([&scenario, &scenario], runs, &all, &cancel, &|| {
                progress.inc(id, 1)
            })
            .await?;
            v.extend(got.into_iter().map(|x| (size, x)));
        }
        Ok::<_, LabError>(v)
    })?;
    let (rtt_ms, rate_mbit) = (bed.rtt_ms, bed.rate_mbit);
    let mut path = bed.finish(min_rtt(results.iter().map(|(_, r)| r)))?;
    path.path.push_str(" (object-size sweep)");
    progress.done(id, "idle-selection: object-size sweep done");
    Ok(Table {
        ssai: "0".into(),
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
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<IdleRun>, LabError> {
    let mut v = Vec::new();
    for r in 0..runs {
        for c in contenders {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(LabError::Interrupted);
            }
            let cfg = match *c {
                Contender::Http2 => ClientConfig {
                    version: tcpwise_client::Version::Http2PriorKnowledge,
                    ..ClientConfig::default()
                },
                Contender::Http3 => ClientConfig {
                    version: tcpwise_client::Version::Http3Only,
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
            tick();
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
    Ok(v)
}
