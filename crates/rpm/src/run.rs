//! The test: an idle-latency measurement, then one phase per loaded
//! direction (or one with both at once), each run by the draft's
//! algorithm. Every interval (ID): close the interval's goodput and probe
//! rounds; while goodput is not stable, add a load-generating connection
//! (up to MNP); once it is, judge responsiveness over the last MAD
//! intervals' probes, and end when that is stable too (or at the phase's
//! longest duration, marked as not stable). Probe rounds run from the
//! start, paced at most MPS a second and within PTC of the goodput by
//! their measured bytes.

use crate::RpmError;
use crate::config::Endpoints;
use crate::load::{Dir, Lgc};
use crate::params::Params;
use crate::probe::{self, Probed};
use crate::stats::{self, Round, Score, Stability, Window};
use serde::Serialize;
use std::time::{Duration, Instant};
use tcpwise_client::ClientConfig;
use tcpwise_units::SplitMix64;

/// One interval as `-v` and `--json` show it.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    /// Seconds since the phase began, at the interval's end.
    pub t_s: f64,
    /// Goodput in this interval per direction, bits per second.
    pub goodput_bps: Vec<(Dir, f64)>,
    /// The moving average of the last MAD intervals per direction.
    pub moving_bps: Vec<(Dir, f64)>,
    /// The largest of the directions' spread (sd over mean of the moving
    /// averages).
    pub goodput_spread: Option<f64>,
    /// Load-generating connections open.
    pub flows: usize,
    /// Goodput was declared stable (it stays so).
    pub goodput_stable: bool,
    /// Probe rounds finished in this interval.
    pub rounds: usize,
    /// RPM over the last MAD intervals' rounds (once goodput is stable).
    pub rpm: Option<f64>,
    /// The spread of that moving RPM.
    pub rpm_spread: Option<f64>,
    /// Responsiveness was declared stable.
    pub responsiveness_stable: bool,
}

/// The goodput a direction reached.
#[derive(Debug, Clone, Serialize)]
pub struct Capacity {
    /// Which way.
    pub dir: Dir,
    /// The moving average at the phase's end, bits per second.
    pub bps: f64,
    /// Its load-generating connections.
    pub flows: usize,
    /// Bytes it moved in the phase.
    pub bytes: u64,
}

/// One phase's result.
#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    /// The directions loaded at once.
    pub dirs: Vec<Dir>,
    /// What each reached.
    pub capacity: Vec<Capacity>,
    /// Goodput became stable.
    pub goodput_stable: bool,
    /// Responsiveness became stable.
    pub responsiveness_stable: bool,
    /// The draft's figure: trimmed means over the last MAD intervals.
    pub score: Option<Score>,
    /// goresponsiveness's first figure (`stats::percentile_score`), over
    /// the rounds it would count: the scored ones once responsiveness is
    /// stable, every round of the phase when it never was.
    pub score_percentile: Option<Score>,
    /// Every interval.
    pub intervals: Vec<Interval>,
    /// Every probe round, in the order they finished.
    pub rounds: Vec<Round>,
    /// Rounds with a part that failed (its time left out).
    pub probe_failures: usize,
    /// How long the phase ran, s.
    pub duration_s: f64,
}

/// Idle latency: foreign probes one after another before any load.
#[derive(Debug, Clone, Serialize)]
pub struct Idle {
    /// The figure (foreign round trips only).
    pub score: Option<Score>,
    /// The rounds.
    pub rounds: Vec<Round>,
}

/// What a test needs besides its parameters.
pub struct Test {
    /// The draft's parameters.
    pub params: Params,
    /// The server's objects.
    pub endpoints: Endpoints,
    /// Every connection's client configuration (version, TLS, socket policy).
    pub client: ClientConfig,
    /// Self probes are possible (HTTP/2 loads).
    pub self_probes: bool,
}

impl Test {
    fn tm(&self) -> impl Fn(&[f64]) -> Option<f64> + '_ {
        |v| stats::trimmed_mean(v, self.params.trimmed_mean_pct)
    }

    /// Idle latency: up to 10 foreign rounds in turn, at most 2 s.
    pub async fn idle(&self) -> Idle {
        let start = Instant::now();
        let mut rounds = Vec::new();
        while rounds.len() < 10 && start.elapsed() < Duration::from_secs(2) {
            let p = probe::round(&self.client, None, &self.endpoints.small, start).await;
            if !p.failed {
                rounds.push(p.round);
            }
        }
        Idle {
            score: stats::score(&rounds, self.tm()),
            rounds,
        }
    }

    /// A probe round, its foreign and (when asked) self probes: the
    /// self probe rides a load connection drawn at random.
    fn probe_round(
        &self,
        lgcs: &[Lgc],
        rng: &mut SplitMix64,
        start: Instant,
    ) -> impl Future<Output = Probed> + Send + 'static {
        let loads: Vec<_> = if self.self_probes {
            lgcs.iter().map(|l| l.client.clone()).collect()
        } else {
            Vec::new()
        };
        let lgc = (!loads.is_empty())
            .then(|| loads[(rng.next_u64() % loads.len() as u64) as usize].clone());
        let (cfg, small) = (self.client.clone(), self.endpoints.small.clone());
        async move { probe::round(&cfg, lgc, &small, start).await }
    }

    /// The wait before the next round: rounds spaced so their bytes stay
    /// within the probe capacity's share of the goodput, at most
    /// `--max-probes` a second and at least one an interval.
    fn probe_gap(&self, goodput_bytes_s: f64, last_round_bytes: u64) -> Duration {
        let p = &self.params;
        let min_gap = Duration::from_secs_f64(1.0 / p.max_probes_per_s);
        let share = p.probe_capacity_pct / 100.0 * goodput_bytes_s;
        let gap = if share > 0.0 && last_round_bytes > 0 {
            min_gap.max(Duration::from_secs_f64(last_round_bytes as f64 / share))
        } else {
            min_gap
        };
        gap.min(p.interval)
    }

    /// A flow more in each direction at every interval, up to
    /// `--max-connections` (MNP): the draft's final algorithm (-03 to -09,
    /// "At each interval: Create INC additional load-generating
    /// connections") adds them whether or not goodput has saturated, as
    /// networkQuality and goresponsiveness do. Until 28 Nov 2026 we stopped
    /// at goodput saturation (5 to 7 connections on a 20 Mbit/s path where
    /// they run to 16), which left less data queued and read 1.4 to 2 times
    /// their RPM (docs/rpm.md).
    fn add_flows(&self, dirs: &[Dir], lgcs: &mut Vec<Lgc>) {
        for d in dirs {
            let open = lgcs.iter().filter(|l| l.dir == *d).count();
            if open < self.params.max_connections {
                lgcs.push(Lgc::open(&self.client, *d, &self.endpoints));
            }
        }
    }

    /// Each direction's capacity at the phase's end; a direction that
    /// moved nothing fails the phase.
    fn capacity(
        &self,
        dirs: &[Dir],
        t: &Tally,
        lgcs: &[Lgc],
        start: Instant,
    ) -> Result<Vec<Capacity>, RpmError> {
        let capacity: Vec<Capacity> = dirs
            .iter()
            .enumerate()
            .map(|(i, d)| Capacity {
                dir: *d,
                bps: t.gp_stab[i].current().unwrap_or(0.0),
                flows: lgcs.iter().filter(|l| l.dir == *d).count(),
                bytes: lgcs.iter().filter(|l| l.dir == *d).map(Lgc::moved).sum(),
            })
            .collect();
        if let Some(c) = capacity.iter().find(|c| c.bytes == 0) {
            return Err(RpmError::NoLoad(format!(
                "no {} bytes moved in {:.1} s: the server accepted the load but sent or took nothing ({})",
                c.dir.word(),
                start.elapsed().as_secs_f64(),
                match c.dir {
                    Dir::Down => self.endpoints.large.as_str(),
                    Dir::Up => self.endpoints.upload.as_str(),
                }
            )));
        }
        Ok(capacity)
    }

    /// Runs one phase loading `dirs` at once; `each` sees every interval.
    pub async fn phase(
        &self,
        dirs: &[Dir],
        mut each: impl FnMut(&Interval),
    ) -> Result<Phase, RpmError> {
        let p = &self.params;
        let start = Instant::now();
        let mut lgcs: Vec<Lgc> = dirs
            .iter()
            .map(|d| Lgc::open(&self.client, *d, &self.endpoints))
            .collect();
        let mut rng = SplitMix64(start.elapsed().as_nanos() as u64 ^ 0x9e37_79b9_7f4a_7c15);
        // Rounds in flight; dropped (aborted) when the phase ends.
        let mut probes: tokio::task::JoinSet<Probed> = tokio::task::JoinSet::new();
        let mut ticker =
            tokio::time::interval_at(tokio::time::Instant::now() + p.interval, p.interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut next_probe = tokio::time::Instant::now();
        let max_in_flight = (p.max_probes_per_s as usize).max(8);
        let mut last_round_bytes = 0u64;
        let mut t = Tally::new(p, dirs.len());
        let mut interval_rounds: Vec<Round> = Vec::new();
        let (mut rounds, mut failures, mut intervals) = (Vec::new(), 0usize, Vec::new());
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(next_probe), if probes.len() < max_in_flight => {
                    probes.spawn(self.probe_round(&lgcs, &mut rng, start));
                    let gap = self.probe_gap(t.goodput_bytes_s, last_round_bytes);
                    next_probe = tokio::time::Instant::now() + gap;
                }
                Some(Ok(done)) = probes.join_next() => {
                    last_round_bytes = done.bytes;
                    if done.failed {
                        failures += 1;
                    }
                    rounds.push(done.round);
                    interval_rounds.push(done.round);
                }
                _ = ticker.tick() => {
                    for l in lgcs.iter_mut() {
                        if let Some(e) = l.failure().await {
                            return Err(e);
                        }
                    }
                    let (inst, moving, spread) = t.goodput(dirs, &lgcs, p.interval.as_secs_f64());
                    if !t.gp_stable {
                        t.gp_stable = t.gp_stab.iter().all(Stability::stable);
                    }
                    self.add_flows(dirs, &mut lgcs);
                    let this = std::mem::take(&mut interval_rounds);
                    let n = this.len();
                    let (rpm, rpm_spread) = t.responsiveness(this, self.tm(), p.mad);
                    let iv = Interval {
                        t_s: start.elapsed().as_secs_f64(),
                        goodput_bps: inst,
                        moving_bps: moving,
                        goodput_spread: spread,
                        flows: lgcs.len(),
                        goodput_stable: t.gp_stable,
                        rounds: n,
                        rpm,
                        rpm_spread,
                        responsiveness_stable: t.rpm_stable,
                    };
                    each(&iv);
                    intervals.push(iv);
                    if t.rpm_stable || start.elapsed() + p.interval / 2 >= p.max_duration {
                        break;
                    }
                }
            }
        }
        for l in &lgcs {
            l.stop();
        }
        let capacity = self.capacity(dirs, &t, &lgcs, start)?;
        // The figure is the last MAD intervals' rounds: those it was
        // declared stable over, or, when it never was, the latest ones.
        let scored = if t.gp_stable && !t.rpm_win.is_empty() {
            t.rpm_win.samples()
        } else {
            t.all_win.samples()
        };
        let pct = p.percentile;
        Ok(Phase {
            dirs: dirs.to_vec(),
            capacity,
            goodput_stable: t.gp_stable,
            responsiveness_stable: t.rpm_stable,
            score: stats::score(&scored, self.tm()),
            score_percentile: stats::percentile_score(
                if t.rpm_stable { &scored } else { &rounds },
                pct,
            ),
            intervals,
            rounds,
            probe_failures: failures,
            duration_s: start.elapsed().as_secs_f64(),
        })
    }
}

/// A figure for each direction.
type PerDir = Vec<(Dir, f64)>;

/// What a phase's intervals add up: each direction's goodput windows and
/// their stability, then the probe rounds' windows and theirs.
struct Tally {
    last: Vec<u64>,
    goodput_bytes_s: f64,
    gp_win: Vec<Window<f64>>,
    gp_stab: Vec<Stability>,
    gp_stable: bool,
    rpm_win: Window<Round>,
    all_win: Window<Round>,
    rpm_stab: Stability,
    rpm_stable: bool,
}

impl Tally {
    fn new(p: &Params, dirs: usize) -> Tally {
        Tally {
            last: vec![0; dirs],
            goodput_bytes_s: 0.0,
            gp_win: (0..dirs).map(|_| Window::new(p.mad)).collect(),
            gp_stab: (0..dirs)
                .map(|_| Stability::new(p.mad, p.sdt_pct))
                .collect(),
            gp_stable: false,
            rpm_win: Window::new(p.mad),
            all_win: Window::new(p.mad),
            rpm_stab: Stability::new(p.mad, p.sdt_pct),
            rpm_stable: false,
        }
    }

    /// One interval's goodput per direction: this interval's, the moving
    /// average's, and the widest relative spread of the averages.
    fn goodput(&mut self, dirs: &[Dir], lgcs: &[Lgc], secs: f64) -> (PerDir, PerDir, Option<f64>) {
        let (mut inst, mut moving) = (Vec::new(), Vec::new());
        let mut spread: Option<f64> = None;
        self.goodput_bytes_s = 0.0;
        for (i, d) in dirs.iter().enumerate() {
            let now: u64 = lgcs.iter().filter(|l| l.dir == *d).map(Lgc::moved).sum();
            let bps = (now - self.last[i]) as f64 * 8.0 / secs;
            self.last[i] = now;
            self.goodput_bytes_s += bps / 8.0;
            self.gp_win[i].push(vec![bps]);
            let w = self.gp_win[i].samples();
            let avg = w.iter().sum::<f64>() / w.len() as f64;
            self.gp_stab[i].push(avg);
            inst.push((*d, bps));
            moving.push((*d, avg));
            if let Some(r) = self.gp_stab[i].relative_spread() {
                spread = Some(spread.map_or(r, |s: f64| s.max(r)));
            }
        }
        (inst, moving, spread)
    }

    /// One interval's probe rounds; once goodput is stable they count
    /// toward the score: (its value, its relative spread).
    fn responsiveness(
        &mut self,
        rounds: Vec<Round>,
        tm: impl Fn(&[f64]) -> Option<f64>,
        mad: usize,
    ) -> (Option<f64>, Option<f64>) {
        self.all_win.push(rounds.clone());
        let (mut rpm, mut spread) = (None, None);
        if self.gp_stable {
            self.rpm_win.push(rounds);
            if let Some(s) = stats::score(&self.rpm_win.samples(), tm) {
                self.rpm_stab.push(s.rpm);
                rpm = Some(s.rpm);
                spread = self.rpm_stab.relative_spread();
            }
            self.rpm_stable = self.rpm_stab.stable() && self.rpm_win.len() == mad;
        }
        (rpm, spread)
    }
}
