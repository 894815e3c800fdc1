//! The tests: one testbed per path and queue, one `tcpwise serve --tls`
//! per server setting in it (side by side, each its own port), and
//! rounds of `tcpwise rpm --direction down` against each setting in
//! turn, so drift hits every setting alike: first the decisive cells
//! until the sequential decision is made, then the rest of the matrix
//! with what the budget leaves.

use super::{Arm, Plan};
use crate::common::ServedTestbed;
use crate::sequential::driver::{Budget, drive};
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use tcpwise_client::Version;
use tcpwise_rpm::command::{Options, client_config, measure as rpm};
use tcpwise_rpm::load::Dir;
use tcpwise_rpm::report::Report;
use tcpwise_rpm::stats::Round;
use tcpwise_server::ServeOptions;

/// One second of a test: its end (s into the loaded phase), the median
/// foreign round trip and the median self probe that began in it (ms).
pub type Second = (f64, Option<f64>, Option<f64>);

/// One test, in the units the report reads.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Details {
    /// Every test, in the order they ran.
    pub runs: Vec<Run>,
    /// Each path as the emulator describes it, with its queue.
    pub paths: Vec<String>,
    /// The longest loaded phase a test had, s (the plan's, kept because
    /// it follows the share; absent in a record from before).
    #[serde(default)]
    pub max_secs: Option<u64>,
}

/// What [`measure`] returns.
pub type Measured = crate::stages::Measured<Details>;

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

/// One testbed: a path with one queue, a server per arm on it.
struct QueueBed {
    bed: ServedTestbed,
    ports: Vec<u16>,
    desc: String,
    path: String,
    queue: &'static str,
}

impl QueueBed {
    fn start(
        plan: &Plan,
        path: &super::PathPlan,
        queue: &super::Queue,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<QueueBed, LabError> {
        opts.check()?;
        let id = progress.step(
            &format!("responsiveness: starting {}, {}", path.name, queue.label),
            0,
        );
        let mut spec = path.spec.clone();
        spec.queue =
            Some(queue.spec.parse().map_err(|e| {
                LabError::Usage(format!("responsiveness: queue {}: {e}", queue.spec))
            })?);
        let stem = format!(
            "{}-{}",
            path.stem,
            queue.spec.split(':').next().unwrap_or("")
        );
        let mut bed = ServedTestbed::start_path(opts, &spec, &stem, Vec::new())?;
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
        Ok(QueueBed {
            bed,
            ports,
            desc,
            path: path.name.clone(),
            queue: queue.label,
        })
    }

    /// One test of arm `a` (its index in the plan).
    fn test(
        &self,
        plan: &Plan,
        a: usize,
        round: usize,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<Run, LabError> {
        opts.check()?;
        let arm = &plan.arms[a];
        let what = format!(
            "responsiveness: {}, {}, {} (round {round})",
            self.path,
            self.queue,
            arm.label()
        );
        let id = progress.step(&what, plan.max_duration.as_secs() + 2);
        let o = Options {
            config_url: format!("https://{}/.well-known/nq", self.bed.peer(self.ports[a]))
                .parse()
                .expect("a valid URL"),
            params: tcpwise_rpm::Params {
                max_duration: plan.max_duration,
                ..tcpwise_rpm::Params::default()
            },
            client: tcpwise_client::ClientConfig {
                insecure: true,
                ..client_config(Version::Http2)
            },
            phases: vec![vec![Dir::Down]],
            config_timeout: std::time::Duration::from_secs(10),
        };
        let steal0 = tcpwise_sys::steal_ticks();
        let report = self.bed.in_client(true, || async {
            rpm(&o, |_| progress.inc(id, 1))
                .await
                .map_err(|source| LabError::Rpm {
                    what: what.clone(),
                    source: Box::new(source),
                })
        })?;
        let steal = steal0.zip(tcpwise_sys::steal_ticks()).map(|(a, b)| b - a);
        let r = run_of(&report, &self.path, self.queue, arm, round, steal);
        progress.done(
            id,
            &format!(
                "{what}: RPM {:.0}, foreign {:.1} ms, self {:.1} ms, {:.2} Mbit/s",
                r.rpm, r.foreign_ms, r.self_ms, r.goodput_mbit
            ),
        );
        Ok(r)
    }

    /// Tears it down; its error, from the smallest handshake its tests saw.
    fn finish(self, runs: &[Run]) -> Result<(PathError, String), LabError> {
        let min_rtt = runs
            .iter()
            .filter(|r| r.path == self.path && r.queue == self.queue)
            .map(|r| r.idle_tcp_min_ms)
            .filter(|x| x.is_finite())
            .reduce(f64::min);
        Ok((self.bed.finish(min_rtt)?, self.desc))
    }
}

/// Whether `q` on `p` is one of the decisive testbeds (on the first path,
/// the bloated drop-tail and FQ-CoDel), already up for the decision.
fn decisive(first: &super::PathPlan, p: &super::PathPlan, q: &super::Queue) -> bool {
    p.name == first.name
        && [super::BLOATED, super::FQ_CODEL]
            .iter()
            .any(|&i| q.label == super::QUEUES[i].label)
}

/// A decisive round's values come from `values` (the analysis's, given
/// the round's three tests: drop-tail off, FQ-CoDel auto, FQ-CoDel off).
/// The decisive rounds (on the first path: the bloated drop-tail with
/// the mark off, FQ-CoDel with it auto and off, CUBIC, in a rotating
/// order) until decided; then the rest of the matrix, each testbed's
/// rounds fitted to the time left.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    values: &dyn Fn(&[Run]) -> Vec<f64>,
) -> Result<Measured, LabError> {
    let (off, auto) = plan.decisive_arms();
    let first = &plan.paths[0];
    let bloated = QueueBed::start(plan, first, &super::QUEUES[super::BLOATED], opts, progress)?;
    let fq = QueueBed::start(plan, first, &super::QUEUES[super::FQ_CODEL], opts, progress)?;
    let budget = Budget::of(opts, super::min_rounds(), super::MAX_ROUNDS);
    let cells = [(&bloated, off), (&fq, auto), (&fq, off)];
    let done = drive(
        "responsiveness",
        super::parts(),
        &budget,
        opts,
        progress,
        |i| {
            let mut got: Vec<Option<Run>> = vec![None, None, None];
            for k in 0..cells.len() {
                let c = (k + i) % cells.len();
                let (bed, arm) = cells[c];
                got[c] = Some(bed.test(plan, arm, i + 1, opts, progress)?);
            }
            let got: Vec<Run> = got.into_iter().flatten().collect();
            let v = values(&got);
            Ok((got, v))
        },
    )?;
    let mut runs: Vec<Run> = done.rounds.into_iter().flatten().collect();
    // The extras: every testbed of the matrix, its arms (less the cells
    // the decisive rounds measured), as many rounds as the time left
    // holds, the decisive testbeds first while they are up.
    let mut beds: Vec<(PathError, String)> = Vec::new();
    type Cell<'a> = (
        Option<QueueBed>,
        Option<(&'a super::PathPlan, &'a super::Queue)>,
        Vec<usize>,
    );
    let mut up: Vec<Cell<'_>> = vec![
        (Some(bloated), None, vec![off]),
        (Some(fq), None, vec![off, auto]),
    ];
    for p in &plan.paths {
        for q in plan.queues.iter().filter(|q| !decisive(first, p, q)) {
            up.push((None, Some((p, q)), Vec::new()));
        }
    }
    // The first path's cells come first and share the time left with
    // the other paths' as one: its table is the field report's comparison, and a
    // cell without a run leaves its ratios empty.
    let firsts = up
        .iter()
        .filter(|c| c.1.is_none_or(|(p, _)| p.name == first.name))
        .count();
    let mut left = up.len();
    let all: Vec<usize> = (0..plan.arms.len()).collect();
    for (k, (bed, cell, skip)) in up.into_iter().enumerate() {
        let arms: Vec<usize> = all.iter().copied().filter(|a| !skip.contains(a)).collect();
        let parts = if k < firsts {
            firsts - k + usize::from(left > firsts - k)
        } else {
            left
        };
        let rounds = plan.fitted_rounds(opts, parts, arms.len());
        left -= 1;
        let bed = match (bed, cell) {
            (Some(b), _) => b,
            (None, Some((p, q))) if rounds > 0 && opts.check().is_ok() => {
                QueueBed::start(plan, p, q, opts, progress)?
            }
            _ => continue,
        };
        for round in 1..=rounds {
            for &a in &arms {
                if opts.check().is_err() {
                    break;
                }
                runs.push(bed.test(plan, a, round, opts, progress)?);
            }
        }
        beds.push(bed.finish(&runs)?);
    }
    let (paths, descs): (Vec<PathError>, Vec<String>) = beds.into_iter().unzip();
    let max_secs = Some(plan.max_duration.as_secs());
    let details = Details {
        runs,
        paths: descs,
        max_secs,
    };
    Ok(Measured {
        details,
        paths,
        decision: done.record,
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
