//! Chromium's read slow start as an A/B trial: many fresh connections, each
//! assigned at random (seeded) to arm `off` (fixed 32 KiB reads, Chromium's
//! usual size) or `on` (first read 1 KiB, doubling after every read that
//! fills its request, up to 32 KiB), each timing its first byte (from the
//! request's start, connect included, like Chromium's
//! `Net.Transaction_Connected_New`) and its total time, over paths of
//! several RTTs and a spread of response sizes. The table has the seed's
//! shape; Linux has no Windows completion delay, so we report whatever the
//! confidence intervals say, "no significant difference" included.

use crate::common::Bed;
use crate::html::{Series, lines};
use crate::{Experiment, ExperimentResult, LabError, LabOptions, Progress, Summary};
use plotters::style::{BLUE, RED};
use serde::Serialize;
use std::fmt::Write;
use tcpwise_http::{Client, ClientConfig, Request};
use tcpwise_pool::{Limits, Policy};
use tcpwise_tcp::ReadSizer;

/// The experiment.
pub struct ReadSlowStart;

/// One trial.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// "on" or "off".
    pub arm: &'static str,
    /// Path RTT, ms.
    pub rtt_ms: f64,
    /// Response size, bytes.
    pub size: u64,
    /// Time to first byte from the request's start, ms.
    pub ttfb_ms: f64,
    /// Time to the last byte, ms.
    pub total_ms: f64,
    /// Largest read the connection asked for, bytes.
    pub max_read: usize,
    /// The connection's smallest RTT sample (TCP_INFO), ms.
    pub min_rtt_ms: Option<f64>,
}

use tcpwise_units::SplitMix64 as Rng;

/// One row of the seed's table for one arm.
#[derive(Debug, Clone, Serialize)]
pub struct ArmRow {
    /// Value at the cutoff percentile, ms.
    pub value: f64,
    /// Lower end of the 95 % CI of the mean below the cutoff.
    pub min_avg: f64,
    /// Mean of the samples at or below the cutoff.
    pub avg: f64,
    /// Upper end of the 95 % CI.
    pub max_avg: f64,
}

fn row(sorted: &[f64], cutoff: f64) -> ArmRow {
    let i = tcpwise_units::nearest_rank_index(sorted.len(), cutoff / 100.0);
    let below = &sorted[..=i];
    let n = below.len() as f64;
    let mean = below.iter().sum::<f64>() / n;
    let var = below.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let half = 1.96 * (var / n).sqrt();
    ArmRow {
        value: sorted[i],
        min_avg: mean - half,
        avg: mean,
        max_avg: mean + half,
    }
}

/// One cutoff of the seed's table.
#[derive(Debug, Clone, Serialize)]
pub struct CutoffRow {
    /// Percentile.
    pub cutoff: f64,
    /// Arm `off`.
    pub off: ArmRow,
    /// Arm `on`.
    pub on: ArmRow,
    /// off - on at the cutoff, ms.
    pub delta_value_ms: f64,
    /// off - on of the means below the cutoff, ms.
    pub savings_avg_ms: f64,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Details {
    /// The seed's table.
    pub table: Vec<CutoffRow>,
    /// Every trial.
    pub trials: Vec<Trial>,
}

/// Cutoff percentiles of the seed's table.
pub const CUTOFFS: [f64; 9] = [50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.5];

impl Experiment for ReadSlowStart {
    fn name(&self) -> &'static str {
        "read-slow-start"
    }

    fn validate(&self, opts: &LabOptions) -> Result<(), LabError> {
        let paths = if opts.rtt.is_some() { 1 } else { 4 };
        match opts.runs {
            Some(n) if n < 10 * paths => Err(LabError::Usage(format!(
                "--runs {n} is too few: the trial needs at least 10 per path ({} with {paths} path{}) for its confidence intervals",
                10 * paths,
                if paths == 1 { "" } else { "s" }
            ))),
            _ => Ok(()),
        }
    }

    fn run(
        &self,
        opts: &LabOptions,
        progress: &dyn Progress,
    ) -> Result<ExperimentResult, LabError> {
        let total = opts.runs.unwrap_or(if opts.quick { 120 } else { 2000 });
        let rtts: Vec<u64> = match opts.rtt {
            Some(r) => vec![r],
            None => vec![20_000_000, 50_000_000, 100_000_000, 200_000_000],
        };
        let mut rng = Rng(opts.seed ^ 0x5EED);
        let mut trials: Vec<Trial> = Vec::new();
        let mut paths = Vec::new();
        for (pi, rtt) in rtts.iter().enumerate() {
            opts.check()?;
            let n = total / rtts.len() + usize::from(pi < total % rtts.len());
            let mut bed = Bed::start(opts, *rtt, 20_000_000, Vec::new())?;
            let port = bed.serve_http()?;
            let id = progress.step(
                &format!("read-slow-start: {n} trials on {}", bed.desc),
                n as u64,
            );
            // Arms and sizes drawn up front from the seed: the run replays.
            // Balanced within each path (a randomized block design), so a
            // small run cannot confound the arms with the RTT mix.
            let mut plan: Vec<(bool, u64)> = (0..n)
                .map(|i| {
                    // Log-uniform 500 B .. 500 KB, like a page's resources.
                    let size = (500.0 * 1000f64.powf(rng.unit())) as u64;
                    (i % 2 == 0, size)
                })
                .collect();
            for i in (1..plan.len()).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                let (a, b) = (plan[i].0, plan[j].0);
                plan[i].0 = b;
                plan[j].0 = a;
            }
            let base = format!("http://{}", bed.peer(port));
            let rtt_ms = bed.rtt_ms;
            let cancel = opts.cancel.clone();
            let got: Vec<Trial> = bed.in_client(false, || async {
                let mut out = Vec::new();
                for (on, size) in plan {
                    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                        return Err(LabError::Interrupted);
                    }
                    let sizer = if on {
                        ReadSizer::slow_start(32 * 1024)
                    } else {
                        ReadSizer::fixed(32 * 1024)
                    };
                    // A fresh client: every trial is a new connection.
                    let client = Client::new(ClientConfig {
                        policy: Policy::Lifo,
                        limits: Limits {
                            max_idle: 0,
                            ..Limits::default()
                        },
                        read_sizing: sizer,
                        ..ClientConfig::default()
                    });
                    let url = url::Url::parse(&format!("{base}/bytes/{size}")).expect("valid");
                    let r = client
                        .request(&Request::get(url), |_| Ok(()))
                        .await
                        .map_err(|source| LabError::Http {
                            what: format!("read-slow-start: GET /bytes/{size}"),
                            source,
                        })?;
                    out.push(Trial {
                        arm: if on { "on" } else { "off" },
                        rtt_ms,
                        size,
                        ttfb_ms: r.timings.first_byte_ms,
                        total_ms: r.timings.body_done_ms,
                        max_read: r.conn.max_read,
                        min_rtt_ms: r
                            .conn
                            .tcp_info_end
                            .as_ref()
                            .and_then(|i| i.min_rtt_us)
                            .map(|us| f64::from(us) / 1e3),
                    });
                    progress.inc(id, 1);
                }
                Ok::<_, LabError>(out)
            })?;
            let min_rtt = got
                .iter()
                .filter_map(|t| t.min_rtt_ms)
                .fold(f64::INFINITY, f64::min);
            let med = |a: &str| {
                let v: Vec<f64> = got
                    .iter()
                    .filter(|t| t.arm == a)
                    .map(|t| t.ttfb_ms)
                    .collect();
                crate::common::median_p90(&v).0
            };
            progress.done(
                id,
                &format!(
                    "read-slow-start: {} ms path: median TTFB off {:.1} ms, on {:.1} ms",
                    rtt_ms,
                    med("off"),
                    med("on")
                ),
            );
            trials.extend(got);
            paths.push(bed.finish(min_rtt.is_finite().then_some(min_rtt))?);
        }
        let arm = |a: &str, f: fn(&Trial) -> f64| {
            let mut v: Vec<f64> = trials.iter().filter(|t| t.arm == a).map(f).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (on_t, off_t) = (arm("on", |t| t.ttfb_ms), arm("off", |t| t.ttfb_ms));
        let (on_total, off_total) = (arm("on", |t| t.total_ms), arm("off", |t| t.total_ms));
        if on_t.len() < 2 || off_t.len() < 2 {
            return Err(LabError::TooFew(
                "too few trials per arm: use --runs 20 or more".into(),
            ));
        }
        let mut md = String::new();
        let _ = writeln!(
            md,
            "## read-slow-start (Chromium: first read 1 KiB, doubling)\n"
        );
        let _ = writeln!(
            md,
            "{} fresh connections ({} on, {} off), arm chosen at random within each path, half each (seed {}), GET /bytes/N with N log-uniform in 500 B..500 KB, over {} at 20 Mbit/s. Time to first byte from the request's start (connect included), ms; per cutoff: the value at that percentile and the mean of the samples at or below it with its 95 % confidence interval (Min Avg, ~Avg, Max Avg).\n",
            trials.len(),
            on_t.len(),
            off_t.len(),
            opts.seed,
            rtts.iter()
                .map(|r| format!("{} ms", r / 1_000_000))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            md,
            "| cutoff | off value | off min/~avg/max | on value | on min/~avg/max | delta value | % | savings ~avg | % |\n|---|---|---|---|---|---|---|---|---|"
        );
        let mut rows = Vec::new();
        for c in CUTOFFS {
            let (off, on) = (row(&off_t, c), row(&on_t, c));
            let dv = off.value - on.value;
            let da = off.avg - on.avg;
            let _ = writeln!(
                md,
                "| {c}% | {:.1} | {:.1} / {:.1} / {:.1} | {:.1} | {:.1} / {:.1} / {:.1} | {dv:+.2} | {:+.2}% | {da:+.2} | {:+.2}% |",
                off.value,
                off.min_avg,
                off.avg,
                off.max_avg,
                on.value,
                on.min_avg,
                on.avg,
                on.max_avg,
                100.0 * dv / off.value,
                100.0 * da / off.avg
            );
            rows.push(CutoffRow {
                cutoff: c,
                off,
                on,
                delta_value_ms: dv,
                savings_avg_ms: da,
            });
        }
        let (off50, on50) = (row(&off_t, 50.0), row(&on_t, 50.0));
        let significant = off50.min_avg > on50.max_avg || on50.min_avg > off50.max_avg;
        let mem = |a: &str| {
            let v: Vec<f64> = trials
                .iter()
                .filter(|t| t.arm == a)
                .map(|t| t.max_read as f64)
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let _ = writeln!(
            md,
            "\n{}. Median total time: off {:.1} ms, on {:.1} ms. Read buffer per connection (largest read asked, mean): off {:.0} B, on {:.0} B.\n\nThe seed saw 0.8-6.3 % (3-20 ms) saved because Windows delayed completing reads it could only partly fill; Linux completes a read as soon as any data is there, so read sizing should not move the first byte here.",
            if significant {
                "The 95 % confidence intervals of the means below the median do not overlap: the difference is significant"
            } else {
                "The 95 % confidence intervals of the means below the median overlap: no significant difference"
            },
            row(&off_total, 50.0).value,
            row(&on_total, 50.0).value,
            mem("off"),
            mem("on")
        );
        let mut summary = Summary::new();
        summary.insert("on_median_ttfb_ms".into(), on50.value.into());
        summary.insert("off_median_ttfb_ms".into(), off50.value.into());
        summary.insert("significant".into(), significant.into());
        summary.insert("trials".into(), (trials.len() as u64).into());
        summary.insert("on_read_buffer_bytes".into(), mem("on").into());
        summary.insert("off_read_buffer_bytes".into(), mem("off").into());
        let headline = crate::Headline {
            seed:
                "median time to first byte 0.8-6.3 % (3-20 ms) lower with read slow start (Windows)"
                    .into(),
            ours: format!(
                "median TTFB off {:.1} ms, on {:.1} ms over {} trials: {}; read buffer {:.0} B vs {:.0} B",
                off50.value,
                on50.value,
                trials.len(),
                if significant {
                    "significant"
                } else {
                    "no significant difference"
                },
                mem("off"),
                mem("on")
            ),
        };
        let cdf = |v: &[f64]| -> Vec<(f64, f64)> {
            let n = v.len().max(1) as f64;
            v.iter()
                .enumerate()
                .map(|(i, x)| (*x, (i + 1) as f64 / n))
                .collect()
        };
        let series: [Series; 2] = [
            ("on (read slow start)".into(), BLUE, cdf(&on_t)),
            ("off (fixed 32 KiB)".into(), RED, cdf(&off_t)),
        ];
        let plot = lines(
            "Time to first byte, CDF of both arms",
            "ms",
            "fraction of connections",
            &series,
        );
        Ok(ExperimentResult {
            name: "read-slow-start".into(),
            headline,
            summary,
            details: crate::Details::ReadSlowStart(Details {
                table: rows,
                trials,
            }),
            paths,
            markdown: md,
            plots: vec![plot],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_seed_definition() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let r = row(&v, 50.0);
        assert_eq!(r.value, 50.0);
        assert_eq!(r.avg, 25.5);
        assert!(r.min_avg < 25.5 && r.max_avg > 25.5);
        let mut a = Rng(1);
        let mut b = Rng(1);
        assert_eq!(a.next_u64(), b.next_u64(), "replayable");
        assert!((0.0..1.0).contains(&a.unit()));
    }
}
