//! The tests: one testbed per path and queue, one `tcpwise serve --tls`
//! per server setting in it (side by side, each its own port), and
//! `Plan::runs` rounds of `tcpwise rpm --direction down` against each
//! setting in turn, so drift hits every setting alike.

use super::{Arm, Plan};
use crate::common::Bed;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use tcpwise_http::{ServeOptions, Version};
use tcpwise_rpm::command::{Options, client_config, measure as rpm};
use tcpwise_rpm::load::Dir;
use tcpwise_rpm::report::Report;
use tcpwise_rpm::stats::Round;

/// One second of a test: its end (s into the loaded phase), the median
/// foreign round trip and the median self probe that began in it (ms).
pub type Second = (f64, Option<f64>, Option<f64>);

/// One test, in the units the report reads.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// The path's name.
    pub path: String,
    /// The queue's name.
    pub queue: String,
    /// The server's setting.
    pub arm: String,
    /// Which round (1-based).
    pub round: usize,
    /// RPM, the draft's figure (trimmed means).
    pub rpm: f64,
    /// RPM from the 90th percentiles.
    pub rpm_p90: f64,
    /// The foreign probes' round trip (trimmed mean), ms.
    pub foreign_ms: f64,
    /// The self probes' (trimmed mean), ms.
    pub self_ms: f64,
    /// The foreign round trip before the load, ms.
    pub idle_ms: f64,
    /// The quickest TCP handshake before the load: the path's RTT as TCP
    /// saw it, ms.
    pub idle_tcp_min_ms: f64,
    /// Goodput at the phase's end (moving average), Mbit/s.
    pub goodput_mbit: f64,
    /// Load-generating connections.
    pub flows: usize,
    /// Goodput and responsiveness were declared stable.
    pub stable: bool,
    /// How long the loaded phase ran, s.
    pub duration_s: f64,
    /// Probe rounds in the phase.
    pub rounds: usize,
    /// Hypervisor steal during the test, ticks (`None` without
    /// `/proc/stat`).
    pub steal_ticks: Option<u64>,
    /// Per second of the phase: (end of the second, median foreign round
    /// trip, median self probe), ms.
    pub per_second: Vec<Second>,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Details {
    /// Every test, in the order they ran.
    pub runs: Vec<Run>,
    /// Each path as the emulator describes it, with its queue.
    pub paths: Vec<String>,
}

/// What [`measure`] returns.
pub struct Measured {
    /// The tests.
    pub details: Details,
    /// The emulator's error on each testbed.
    pub paths: Vec<PathError>,
}

/// A round's foreign round trip: the mean of its parts (each one round
/// trip), ms.
fn foreign(r: &Round) -> Option<f64> {
    let parts: Vec<f64> = [r.tcp_ms, r.tls_ms, r.http_ms]
        .into_iter()
        .flatten()
        .collect();
    (!parts.is_empty()).then(|| parts.iter().sum::<f64>() / parts.len() as f64)
}

/// Rounds binned by the second they began in: medians per second.
pub fn per_second(rounds: &[Round]) -> Vec<Second> {
    let secs = rounds
        .iter()
        .map(|r| r.at_s.floor() as usize + 1)
        .max()
        .unwrap_or(0);
    (0..secs)
        .map(|s| {
            let of = |f: &dyn Fn(&Round) -> Option<f64>| {
                let mut v: Vec<f64> = rounds
                    .iter()
                    .filter(|r| r.at_s.floor() as usize == s)
                    .filter_map(f)
                    .collect();
                v.sort_by(f64::total_cmp);
                (!v.is_empty()).then(|| tcpwise_units::nearest_rank(&v, 0.5))
            };
            ((s + 1) as f64, of(&foreign), of(&|r: &Round| r.self_ms))
        })
        .collect()
}

/// The report's figures of one test.
fn run_of(r: &Report, path: &str, queue: &str, arm: &Arm, round: usize, steal: Option<u64>) -> Run {
    let nan = f64::NAN;
    let phase = r.phases.first();
    let score = phase.and_then(|p| p.score);
    let cap = phase.and_then(|p| p.capacity.first());
    Run {
        path: path.into(),
        queue: queue.into(),
        arm: arm.label(),
        round,
        rpm: score.map_or(nan, |s| s.rpm),
        rpm_p90: phase
            .and_then(|p| p.score_percentile)
            .map_or(nan, |s| s.rpm),
        foreign_ms: score.and_then(|s| s.foreign_ms).unwrap_or(nan),
        self_ms: score.and_then(|s| s.self_ms).unwrap_or(nan),
        idle_ms: r.idle.score.and_then(|s| s.foreign_ms).unwrap_or(nan),
        idle_tcp_min_ms: r
            .idle
            .rounds
            .iter()
            .filter_map(|x| x.tcp_ms)
            .fold(nan, f64::min),
        goodput_mbit: cap.map_or(nan, |c| c.bps / 1e6),
        flows: cap.map_or(0, |c| c.flows),
        stable: phase.is_some_and(|p| p.goodput_stable && p.responsiveness_stable),
        duration_s: phase.map_or(0.0, |p| p.duration_s),
        rounds: phase.map_or(0, |p| p.rounds.len()),
        steal_ticks: steal,
        per_second: phase.map_or_else(Vec::new, |p| per_second(&p.rounds)),
    }
}

/// Runs every test of the plan.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let (mut runs, mut paths, mut descs) = (Vec::new(), Vec::new(), Vec::new());
    let secs = plan.max_duration.as_secs() + 2;
    for path in &plan.paths {
        for queue in &plan.queues {
            opts.check()?;
            let id = progress.step(
                &format!("responsiveness: starting {}, {}", path.name, queue.label),
                0,
            );
            let mut spec = path.spec.clone();
            spec.queue = Some(queue.spec.parse().map_err(|e| {
                LabError::Usage(format!("responsiveness: queue {}: {e}", queue.spec))
            })?);
            let stem = format!(
                "{}-{}",
                path.stem,
                queue.spec.split(':').next().unwrap_or("")
            );
            let mut bed = Bed::start_path(opts, &spec, &stem, Vec::new())?;
            let tls = crate::common::self_signed()?;
            let mut ports = Vec::new();
            for arm in &plan.arms {
                ports.push(bed.serve_with(ServeOptions {
                    tls: Some(tls.clone()),
                    notsent_lowat: arm.lowat,
                    congestion: Some(arm.cc.into()),
                    // serve_with listens on every address, an ephemeral port.
                    ..ServeOptions::new("[::]:0".parse().expect("valid"))
                })?);
            }
            let desc = bed.desc.clone();
            progress.done(id, &format!("responsiveness: path {desc}"));
            for round in 1..=plan.runs {
                for (arm, port) in plan.arms.iter().zip(&ports) {
                    opts.check()?;
                    let what = format!(
                        "responsiveness: {}, {}, {} ({round}/{})",
                        path.name,
                        queue.label,
                        arm.label(),
                        plan.runs
                    );
                    let id = progress.step(&what, secs);
                    let o = Options {
                        config_url: format!("https://{}/.well-known/nq", bed.peer(*port))
                            .parse()
                            .expect("a valid URL"),
                        params: tcpwise_rpm::Params {
                            max_duration: plan.max_duration,
                            ..tcpwise_rpm::Params::default()
                        },
                        client: tcpwise_http::ClientConfig {
                            insecure: true,
                            ..client_config(Version::Http2)
                        },
                        phases: vec![vec![Dir::Down]],
                        config_timeout: std::time::Duration::from_secs(10),
                    };
                    let steal0 = tcpwise_sys::steal_ticks();
                    let report = bed.in_client(true, || async {
                        rpm(&o, |_| progress.inc(id, 1))
                            .await
                            .map_err(|source| LabError::Rpm {
                                what: what.clone(),
                                source: Box::new(source),
                            })
                    })?;
                    let steal = steal0.zip(tcpwise_sys::steal_ticks()).map(|(a, b)| b - a);
                    let r = run_of(&report, &path.name, queue.label, arm, round, steal);
                    progress.done(
                        id,
                        &format!(
                            "{what}: RPM {:.0}, foreign {:.1} ms, self {:.1} ms, {:.2} Mbit/s",
                            r.rpm, r.foreign_ms, r.self_ms, r.goodput_mbit
                        ),
                    );
                    runs.push(r);
                }
            }
            let min_rtt = runs
                .iter()
                .filter(|r| r.path == path.name && r.queue == queue.label)
                .map(|r| r.idle_tcp_min_ms)
                .filter(|x| x.is_finite())
                .reduce(f64::min);
            paths.push(bed.finish(min_rtt)?);
            descs.push(desc);
        }
    }
    Ok(Measured {
        details: Details { runs, paths: descs },
        paths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_binned_by_the_second_they_began_in() {
        let r = |at_s, tcp, self_ms| Round {
            at_s,
            tcp_ms: Some(tcp),
            tls_ms: Some(tcp + 2.0),
            http_ms: Some(tcp + 4.0),
            self_ms,
        };
        let v = per_second(&[
            r(0.1, 40.0, Some(100.0)),
            r(0.5, 50.0, Some(300.0)),
            r(0.9, 60.0, Some(200.0)),
            r(2.2, 10.0, None),
        ]);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0], (1.0, Some(52.0), Some(200.0)));
        assert_eq!(v[1], (2.0, None, None));
        assert_eq!(v[2], (3.0, Some(12.0), None));
    }
}
