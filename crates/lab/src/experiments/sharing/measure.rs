//! A trial: one dumbbell per case, `perf server` in-process in its
//! receiver, one `perf` sender in each host with its congestion control
//! set on its socket (`TCP_CONGESTION`), started at its offset; each
//! flow's goodput counted at the bottleneck by 5-tuple.

use super::{Case, MAX_ROUNDS, Plan};
use crate::sequential::driver::{Budget, drive};
use crate::{LabError, LabOptions, PathError, Progress};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tcpwise_emu::dumbbell::{Dumbbell, DumbbellConfig, TopologyReport};
use tcpwise_emu::topology::{Side, TopologySpec};
use tcpwise_outcome::Shutdown;
use tcpwise_perf::ClientOptions;

/// One host's flow in a trial.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostFlow {
    /// Its congestion control.
    pub cc: String,
    /// Its access link's RTT, ms.
    pub rtt_ms: f64,
    /// When it started, s.
    pub start_s: f64,
    /// Goodput each second at the bottleneck, Mbit/s (its data flow).
    pub per_s_mbit: Vec<f64>,
    /// Retransmitted segments (`TCP_INFO`, the sender's).
    pub retransmits: Option<u64>,
    /// Smoothed RTT at the end (`TCP_INFO`), ms.
    pub srtt_ms: Option<f64>,
}

/// One trial of a case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Trial {
    /// The case.
    pub case: Case,
    /// Each host's flow, in the case's order.
    pub hosts: Vec<HostFlow>,
    /// Seconds of the run the shares are read over, `[from, to)`.
    pub window: (usize, usize),
    /// The bottleneck's queue sojourn, µs: p50, p99.
    pub sojourn_us: (u64, u64),
    /// Packets the bottleneck dropped (queue and AQM).
    pub drops: u64,
    /// The links' lateness, µs: the largest p50, p99 and maximum of any.
    pub lateness_us: (f64, f64, f64),
    /// Hypervisor steal over the trial, ticks.
    pub steal: u64,
}

/// Everything measured: each round's trials.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Details {
    /// Rounds, each a trial of every case in the plan's order.
    pub rounds: Vec<Vec<Trial>>,
}

/// What [`measure`] returns.
pub type Measured = crate::stages::Measured<Details>;

/// The case as a topology: its bottleneck and hosts, one receiver.
pub fn topology(case: Case) -> Result<TopologySpec, LabError> {
    let (rate, queue) = case.bottleneck();
    let mut text = format!("[bottleneck]\nup-rate = \"{rate}bit\"\nup-queue = \"{queue}\"\n");
    for (i, (cc, rtt, start)) in case.hosts().into_iter().enumerate() {
        text += &format!("[[host]]\nname = \"{cc}{i}\"\nrtt = \"{rtt}ms\"\nstart = \"{start}s\"\n");
    }
    text += "[[receiver]]\nname = \"sink\"\n";
    Ok(tcpwise_emu::topology::parse(
        &text,
        std::path::Path::new("sharing"),
    )?)
}

/// `perf server` in the receiver, until `stop`; its port.
fn serve(
    d: &Dumbbell,
    stop: Shutdown,
) -> Result<(u16, tcpwise_emu::netns::SpawnedIn<Result<(), LabError>>), LabError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let thread = d.spawn_in(Side::Receiver, 0, "tw-lab-sink", move || {
        let rt = tcpwise_tcp::runtime().map_err(|source| LabError::Server {
            what: "perf",
            source,
        })?;
        rt.block_on(tcpwise_perf::run_server(
            tcpwise_perf::ServerOptions {
                bind: "[::]:0".parse().expect("valid"),
                one_off: false,
                verbose: false,
            },
            stop,
            move |a| {
                let _ = tx.send(a);
            },
        ))
        .map_err(|source| LabError::Perf {
            what: "sharing: the perf server".into(),
            source,
        })
    })?;
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(a) => Ok((a.port(), thread)),
        // It ended before listening: its own error says why.
        Err(_) => Err(match thread.join() {
            Ok(Err(e)) => e,
            Err(e) => e.into(),
            Ok(Ok(())) => LabError::Server {
                what: "perf",
                source: std::io::Error::other("stopped before listening"),
            },
        }),
    }
}

/// Each host's sender, started at its offset, run to `secs`.
fn senders(
    d: &Dumbbell,
    case: Case,
    port: u16,
    secs: u64,
) -> Result<Vec<tcpwise_perf::PerfReport>, LabError> {
    let peer = d.topology().receivers[0].v4.to_string();
    let mut threads = Vec::new();
    for (i, (cc, _, start)) in case.hosts().into_iter().enumerate() {
        let o = ClientOptions {
            host: peer.clone(),
            port,
            duration: Duration::from_secs(secs - start),
            congestion: Some(cc.to_string()),
            ..ClientOptions::default()
        };
        threads.push(d.spawn_in(Side::Host, i, "tw-lab-sender", move || {
            std::thread::sleep(Duration::from_secs(start));
            let rt = tcpwise_tcp::runtime().map_err(|source| LabError::Server {
                what: "perf",
                source,
            })?;
            rt.block_on(tcpwise_perf::run_client(&o, |_| {}))
                .map_err(|source| LabError::Perf {
                    what: format!("sharing: the {cc} sender"),
                    source,
                })
        })?);
    }
    threads.into_iter().map(|t| t.join()?).collect()
}

/// One trial of `case`.
fn trial(case: Case, opts: &LabOptions, progress: &dyn Progress) -> Result<Trial, LabError> {
    opts.check()?;
    let (secs, warm) = case.secs();
    let id = progress.step(&format!("sharing: {}, {secs} s", case.label()), secs);
    let spec = topology(case)?;
    let (rate, _) = case.bottleneck();
    let slot = match &opts.slots {
        Some(s) => Some(
            s.take(Some(rate), &opts.cancel)
                .ok_or(LabError::Interrupted)?,
        ),
        None => None,
    };
    let s0 = tcpwise_sys::steal_ticks().unwrap_or(0);
    let cfg = DumbbellConfig {
        topology: spec.resolve()?,
        forwarder: Default::default(),
        record: opts.record.for_testbed(&format!("sharing-{case:?}")),
    };
    let d = Dumbbell::start(&cfg)?;
    let stop = Shutdown::new();
    let (port, server) = serve(&d, stop.clone())?;
    let reports = senders(&d, case, port, secs);
    stop.trigger();
    let served = server.join().map_err(LabError::from).and_then(|r| r);
    let report = d.shutdown()?;
    drop(slot);
    let (reports, ()) = (reports?, served?);
    progress.done(id, &format!("sharing: {}", case.label()));
    Ok(of_report(
        case,
        &report,
        &reports,
        (warm as usize, secs as usize),
        tcpwise_sys::steal_ticks().unwrap_or(0).saturating_sub(s0),
    ))
}

/// The trial's figures from the topology's report and the senders'.
fn of_report(
    case: Case,
    report: &TopologyReport,
    senders: &[tcpwise_perf::PerfReport],
    window: (usize, usize),
    steal: u64,
) -> Trial {
    let flows = report.flows_of("up");
    let hosts = case
        .hosts()
        .into_iter()
        .enumerate()
        .map(|(i, (cc, rtt, start))| {
            let name = format!("{cc}{i}");
            // A host's data flow: the one of its flows that carried most.
            let f = flows
                .iter()
                .filter(|f| f.from == name)
                .max_by_key(|f| f.flow.goodput_bytes);
            let s = senders.get(i).map(|r| &r.summary);
            HostFlow {
                cc: cc.into(),
                rtt_ms: rtt as f64,
                start_s: start as f64,
                per_s_mbit: f.map_or_else(Vec::new, |f| {
                    f.flow
                        .goodput_bytes_per_s
                        .iter()
                        .map(|b| *b as f64 * 8e-6)
                        .collect()
                }),
                retransmits: s.and_then(|s| s.retransmits),
                srtt_ms: s.and_then(|s| s.rtt_ms),
            }
        })
        .collect();
    let b = report.bottleneck("up");
    Trial {
        case,
        hosts,
        window,
        sojourn_us: b.map_or((0, 0), |b| (b.link.sojourn.p50_us, b.link.sojourn.p99_us)),
        drops: b.map_or(0, |b| b.link.dropped_queue + b.link.dropped_aqm),
        lateness_us: report.links.iter().fold((0.0, 0.0, 0.0), |m, l| {
            let l = &l.lateness;
            (m.0.max(l.p50_us), m.1.max(l.p99_us), m.2.max(l.max_us))
        }),
        steal,
    }
}

/// A round's values, one per part of the criterion, from its trials: the
/// analysis gives it, so the measurement runs rounds without reading
/// figures.
pub type Values<'a> = &'a dyn Fn(&[Trial]) -> Vec<f64>;

/// Rounds of every case until `parts` are decided.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    (parts, values): (Vec<crate::sequential::PartSpec>, Values<'_>),
) -> Result<Measured, LabError> {
    let budget = Budget::of(opts, super::min_rounds(), MAX_ROUNDS);
    let done = drive("sharing", parts, &budget, opts, progress, |_| {
        let mut trials = Vec::new();
        // Cases of one length run at once, each on a topology of its own
        // (a few Mbit/s each: the forwarders take a few % of a core).
        for group in plan.groups() {
            let parts: Vec<crate::together::Part<'_, Trial>> = group
                .into_iter()
                .map(|c| -> crate::together::Part<'_, Trial> {
                    Box::new(move |o: &LabOptions| trial(c, o, progress))
                })
                .collect();
            trials.extend(crate::together::at_once(opts, "sharing", parts)?);
        }
        let v = values(&trials);
        Ok((trials, v))
    })?;
    let paths = plan
        .cases
        .iter()
        .map(|&c| path_error(c, &done.rounds))
        .collect();
    Ok(Measured {
        details: Details {
            rounds: done.rounds,
        },
        paths,
        decision: done.record,
    })
}

/// The emulator's error on a case's topology: the largest p99 lateness of
/// its links over the rounds.
fn path_error(case: Case, rounds: &[Vec<Trial>]) -> PathError {
    let late = rounds.iter().flatten().filter(|t| t.case == case).fold(
        (0.0, 0.0, 0.0),
        |m: (f64, f64, f64), t| {
            let l = t.lateness_us;
            (m.0.max(l.0), m.1.max(l.1), m.2.max(l.2))
        },
    );
    let (rate, queue) = case.bottleneck();
    let rtt = case.hosts().iter().map(|h| h.1).max().unwrap_or(0);
    PathError {
        path: format!(
            "dumbbell: {} hosts, bottleneck {} Mbit/s {queue}",
            case.hosts().len(),
            rate / 1_000_000
        ),
        rtt_error_ms: None,
        // Every link's worst: the topology has no one up and down.
        up_lateness_us: late,
        down_lateness_us: late,
        rtt_ms: rtt as f64,
        offload: String::new(),
        threads: 1,
    }
}
