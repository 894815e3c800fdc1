//! From what a user says about a path (`--rtt 100ms --rate 50mbit`) to the
//! two [`LinkConfig`]s of a testbed. Shared by `tcpwise emu` and the lab so
//! both resolve defaults the same way.

use crate::{EmuError, Kind};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use tcpwise_link::impair::Impairments;
use tcpwise_link::impair::netem::Params as NetemParams;
use tcpwise_link::impair::onoff::Params as OnOffParams;
use tcpwise_link::impair::police::Params as PoliceParams;
use tcpwise_link::outage::{Outage, Outages};
use tcpwise_link::queue::{LimitSpec, QueueSpec};
use tcpwise_link::schedule::Schedule;
use tcpwise_link::{Capacity, Jitter, LinkConfig, LossModel, Nanos, QueueLimit, Trace};
use tcpwise_units::Percent;

use tcpwise_units::{parse_duration, parse_rate};

/// A path as the user described it; `None` means "not said". It is also
/// the LINK flags of every `tcpwise emu` subcommand (clap flattens it), so
/// the flags and the library can never drift apart.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Link (\"up\" = client to server)")]
pub struct PathSpec {
    /// Round-trip propagation delay, split evenly (100ms, 1.5s, 250us).
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub rtt: Option<Nanos>,
    /// One-way delay in both directions (instead of --rtt).
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub delay: Option<Nanos>,
    /// One-way delay client to server.
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub up_delay: Option<Nanos>,
    /// One-way delay server to client.
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub down_delay: Option<Nanos>,
    /// Rate of IP bytes in both directions (20mbit, 1gbit, 2.5MB/s); default unlimited.
    #[arg(long, value_parser = parse_rate, value_name = "RATE")]
    pub rate: Option<u64>,
    /// Rate client to server.
    #[arg(long, value_parser = parse_rate, value_name = "RATE")]
    pub up_rate: Option<u64>,
    /// Rate server to client.
    #[arg(long, value_parser = parse_rate, value_name = "RATE")]
    pub down_rate: Option<u64>,
    /// Mahimahi trace client to server (one ms timestamp per line = one 1500-byte opportunity).
    #[arg(long, value_name = "FILE")]
    pub up_trace: Option<PathBuf>,
    /// Mahimahi trace server to client.
    #[arg(long, value_name = "FILE")]
    pub down_trace: Option<PathBuf>,
    /// Play traces once instead of repeating them.
    #[arg(long)]
    pub trace_once: bool,
    /// Bytes of framing added to each packet when serialising at --rate.
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub overhead: u32,
    /// Queue per direction: a size with its unit (drop-tail: 256KB, 64KiB,
    /// 1500B, 1000pkt; a bare number is refused: bytes to tc, packets to a
    /// Mahimahi user) or
    /// KIND[:key=value,...] with KIND droptail, drophead, codel (target=5ms,
    /// interval=100ms), pie (target=15ms, tupdate=15ms) or fq-codel (target,
    /// interval, flows=1024, quantum=1514); every kind takes limit= (400KB,
    /// 1000pkt, 2bdp; Mahimahi's packets=100 and bytes=30000 too), the AQMs
    /// ecn (mark CE instead of dropping).
    /// [default: droptail, limit one BDP, at least 64KB; on a trace link,
    /// 2 s of the trace's mean rate, at least 1MB: cellular networks are
    /// over-buffered, a loss-based TCP adds seconds to the RTT before a
    /// drop (Jiang et al., "Tackling Bufferbloat in 3G/4G Networks", IMC
    /// 2012), where Mahimahi's default queue is unbounded]
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<QueueSpec>,
    /// Queue of the client-to-server direction only (as --queue).
    #[arg(long, value_name = "QUEUE")]
    pub up_queue: Option<QueueSpec>,
    /// Queue of the server-to-client direction only (as --queue).
    #[arg(long, value_name = "QUEUE")]
    pub down_queue: Option<QueueSpec>,
    /// Random loss in both directions: 1%, 1%,25% (correlated with the
    /// last packet's fate, mean kept), or ge:P,R[,H,K] (Gilbert-Elliott,
    /// netem's gemodel order). Percent signs are required: netem reads
    /// `loss 1` as 1 %, Mahimahi's `mm-loss uplink 1` as 100 %.
    #[arg(long, value_name = "LOSS")]
    pub loss: Option<LossModel>,
    /// Loss client to server.
    #[arg(long, value_name = "LOSS")]
    pub up_loss: Option<LossModel>,
    /// Loss server to client.
    #[arg(long, value_name = "LOSS")]
    pub down_loss: Option<LossModel>,
    /// Delay jitter in both directions, never reordering: [KIND:]AMOUNT[,CORR]
    /// with KIND uniform (+-AMOUNT, the default), normal, pareto or
    /// paretonormal (AMOUNT is their SD; pareto's tail is late packets), and
    /// CORR the correlation of successive packets, keeping the
    /// distribution (netem's correlation shrinks it): 2ms, normal:2ms,
    /// pareto:5ms,25%.
    #[arg(long, value_name = "JITTER")]
    pub jitter: Option<Jitter>,
    /// Jitter client to server only (as --jitter).
    #[arg(long, value_name = "JITTER")]
    pub up_jitter: Option<Jitter>,
    /// Jitter server to client only (as --jitter).
    #[arg(long, value_name = "JITTER")]
    pub down_jitter: Option<Jitter>,
    /// Seed of the loss and jitter RNG (same seed, same run).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Intermittent link, both directions (mm-onoff): exponential on and off
    /// periods of these means; packets arriving while off are dropped: 5s,500ms.
    #[arg(long, value_name = "MEAN_ON,MEAN_OFF")]
    pub onoff: Option<OnOffParams>,
    /// As --onoff, client to server only.
    #[arg(long, value_name = "MEAN_ON,MEAN_OFF")]
    pub up_onoff: Option<OnOffParams>,
    /// As --onoff, server to client only.
    #[arg(long, value_name = "MEAN_ON,MEAN_OFF")]
    pub down_onoff: Option<OnOffParams>,
    /// Token-bucket policer, both directions: drops what exceeds RATE with
    /// BURST of credit, no queue (an ISP's policer): 10mbit,64KB.
    #[arg(long, value_name = "RATE,BURST")]
    pub police: Option<PoliceParams>,
    /// As --police, client to server only.
    #[arg(long, value_name = "RATE,BURST")]
    pub up_police: Option<PoliceParams>,
    /// As --police, server to client only.
    #[arg(long, value_name = "RATE,BURST")]
    pub down_police: Option<PoliceParams>,
    /// Share of packets that skip the delay line and overtake earlier ones
    /// (netem's reorder), both directions: 5%.
    #[arg(long, value_name = "P")]
    pub reorder: Option<Percent>,
    /// As --reorder, client to server only.
    #[arg(long, value_name = "P")]
    pub up_reorder: Option<Percent>,
    /// As --reorder, server to client only.
    #[arg(long, value_name = "P")]
    pub down_reorder: Option<Percent>,
    /// Share of packets delivered twice (netem's duplicate), both directions.
    #[arg(long, value_name = "P")]
    pub duplicate: Option<Percent>,
    /// As --duplicate, client to server only.
    #[arg(long, value_name = "P")]
    pub up_duplicate: Option<Percent>,
    /// As --duplicate, server to client only.
    #[arg(long, value_name = "P")]
    pub down_duplicate: Option<Percent>,
    /// Share of packets with one bit flipped after the IP header (netem's
    /// corrupt; the receiver's checksum drops them), both directions.
    #[arg(long, value_name = "P")]
    pub corrupt: Option<Percent>,
    /// As --corrupt, client to server only.
    #[arg(long, value_name = "P")]
    pub up_corrupt: Option<Percent>,
    /// As --corrupt, server to client only.
    #[arg(long, value_name = "P")]
    pub down_corrupt: Option<Percent>,
    /// Parameters over time: a file of lines `AT key=value...` (rate, delay
    /// one-way, loss; each also up-KEY/down-KEY), e.g. `0s rate=50mbit`,
    /// `5s rate=5mbit delay=80ms loss=1%`, applied at those offsets from the
    /// link's start; the statistics record when each took effect.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    /// Blackhole the link for DURATION starting AT after it comes up, both
    /// directions or :up / :down only; repeatable (a link flap): 3s@10s, 500ms@2s:down.
    #[arg(long, value_name = "DURATION@AT[:up|:down]")]
    pub outage: Vec<Outage>,
}

impl PathSpec {
    /// This path, or selftest's default (40 ms, 100 Mbit/s) when no delay,
    /// rate or trace was given.
    pub fn or_selftest_default(&self) -> PathSpec {
        let mut p = self.clone();
        if p.is_unset() {
            p.rtt = Some(40_000_000);
            p.rate = Some(100_000_000);
        }
        p
    }

    /// Whether no delay, rate or trace was given.
    pub fn is_unset(&self) -> bool {
        self.rtt.is_none()
            && self.delay.is_none()
            && self.up_delay.is_none()
            && self.down_delay.is_none()
            && self.rate.is_none()
            && self.up_rate.is_none()
            && self.down_rate.is_none()
            && self.up_trace.is_none()
            && self.down_trace.is_none()
    }
}

/// The resolved path, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct PathSummary {
    /// Configured round-trip propagation delay, ms.
    pub rtt_ms: f64,
    /// Client to server.
    pub up: DirectionSummary,
    /// Server to client.
    pub down: DirectionSummary,
    /// Seed.
    pub seed: u64,
}

/// One direction, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct DirectionSummary {
    /// One-way delay, ms.
    pub delay_ms: f64,
    /// Mean capacity of IP bytes, Mbit/s; `None` when unlimited.
    pub rate_mbit: Option<f64>,
    /// Trace file, if trace-driven.
    pub trace: Option<String>,
    /// Queue discipline and limit as text (`codel 400000 B`).
    pub queue: String,
    /// Queue limit in bytes (packets × 1500 for packet limits).
    pub queue_bytes: u64,
    /// Mean loss probability.
    pub loss: f64,
    /// Jitter, ms (uniform half-width, or SD).
    pub jitter_ms: Option<f64>,
    /// Jitter as given (`pareto:5ms,25%`).
    pub jitter: Option<String>,
}

fn conflict(a: &str, b: &str) -> EmuError {
    EmuError::Config(format!("{a} and {b} both set the same thing: give one"))
}

/// The longest round trip `emu` emulates, ns.
pub const MAX_RTT_NS: u64 = 60_000_000_000;

impl PathSpec {
    /// Resolves defaults and conflicts into (up, down).
    pub fn resolve(&self) -> Result<(LinkConfig, LinkConfig), EmuError> {
        self.resolve_bdp(None)
    }

    /// As [`PathSpec::resolve`], with the queues' BDP (a default limit,
    /// `limit=2bdp`) taken over `bdp_rtt` instead of this link's own round
    /// trip: a topology's bottleneck sizes its queue by the paths through
    /// it, whose round trips are mostly their hosts' access links.
    pub fn resolve_bdp(&self, bdp_rtt: Option<u64>) -> Result<(LinkConfig, LinkConfig), EmuError> {
        self.check_conflicts()?;
        let (up_delay, down_delay) = self.delays()?;
        let schedule = self.schedule()?;
        let up_cap = self.capacity(self.up_rate, &self.up_trace, "up")?;
        let down_cap = self.capacity(self.down_rate, &self.down_trace, "down")?;
        let rtt = bdp_rtt.unwrap_or(up_delay + down_delay);
        let up = self.link(
            (up_delay, rtt),
            up_cap,
            self.up_loss,
            self.seed.wrapping_mul(2).wrapping_add(1),
            schedule.up.clone(),
            true,
        );
        let down = self.link(
            (down_delay, rtt),
            down_cap,
            self.down_loss,
            self.seed.wrapping_mul(2).wrapping_add(2),
            schedule.down.clone(),
            false,
        );
        Ok((up, down))
    }

    /// Flags that set one thing twice, or one that needs another.
    fn check_conflicts(&self) -> Result<(), EmuError> {
        if self.rtt.is_some() && self.delay.is_some() {
            return Err(conflict("--rtt", "--delay"));
        }
        if self.up_delay.is_some() && self.down_delay.is_some() {
            if self.rtt.is_some() {
                return Err(conflict("--rtt", "--up-delay with --down-delay"));
            }
            if self.delay.is_some() {
                return Err(conflict("--delay", "--up-delay with --down-delay"));
            }
        }
        // --rate is both directions; a trace is one: say which wins
        // instead of letting the trace win silently.
        if self.rate.is_some() && (self.up_trace.is_some() || self.down_trace.is_some()) {
            let fix = match (&self.up_trace, &self.down_trace) {
                (Some(_), Some(_)) => "the traces set both directions: drop --rate".to_string(),
                (Some(_), None) => "give --down-rate for the downlink instead of --rate".into(),
                _ => "give --up-rate for the uplink instead of --rate".into(),
            };
            return Err(EmuError::Config(format!(
                "--rate sets both directions and a trace sets one: {fix}"
            )));
        }
        if self.trace_once && self.up_trace.is_none() && self.down_trace.is_none() {
            return Err(EmuError::Config(
                "--trace-once needs --up-trace or --down-trace".into(),
            ));
        }
        Ok(())
    }

    /// Each direction's one-way delay, ns, from `--rtt`, `--delay` and
    /// the per-direction delays.
    fn delays(&self) -> Result<(u64, u64), EmuError> {
        let base = self.delay.or(self.rtt.map(|r| r / 2)).unwrap_or(0);
        let up_delay = self.up_delay.unwrap_or(base);
        let down_delay = self
            .down_delay
            .unwrap_or(match (self.rtt, self.delay, self.up_delay) {
                // --rtt with only --up-delay: the rest of the round trip goes down.
                (Some(r), None, Some(u)) if self.down_delay.is_none() => r.saturating_sub(u),
                _ => base,
            });
        let rtt = up_delay + down_delay;
        // A minute of round trip is no network a test can finish on (the
        // emulator would hold a minute of traffic in memory).
        if rtt > MAX_RTT_NS {
            return Err(EmuError::Config(format!(
                "a round trip of {:.0} s is over the {} s the emulator models (--rtt, --delay, --up-delay, --down-delay)",
                rtt as f64 / 1e9,
                MAX_RTT_NS / 1_000_000_000
            )));
        }
        Ok((up_delay, down_delay))
    }

    /// One direction's capacity: its rate, `--rate`, its trace, or none.
    fn capacity(
        &self,
        rate: Option<u64>,
        trace: &Option<PathBuf>,
        which: &str,
    ) -> Result<Capacity, EmuError> {
        match (rate.or(self.rate), trace) {
            (Some(_), Some(_)) if rate.is_some() => Err(conflict(
                &format!("--{which}-rate"),
                &format!("--{which}-trace"),
            )),
            (_, Some(path)) => {
                let t = Trace::load(path).map_err(|e| EmuError::Config(e.to_string()))?;
                Ok(Capacity::Trace {
                    trace: Arc::new(t),
                    once: self.trace_once,
                })
            }
            (Some(bps), None) => Ok(Capacity::Rate {
                bits_per_sec: bps,
                overhead: self.overhead,
            }),
            (None, None) => Ok(Capacity::Unlimited),
        }
    }

    /// `--schedule FILE`, read and parsed.
    fn schedule(&self) -> Result<Schedule, EmuError> {
        Ok(match &self.schedule {
            None => Schedule::default(),
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| {
                    EmuError::caused(
                        Kind::Config,
                        format!("cannot read schedule {}", p.display()),
                        e,
                    )
                })?;
                Schedule::parse(&text).map_err(|e| {
                    EmuError::caused(Kind::Config, format!("schedule {}", p.display()), e)
                })?
            }
        })
    }

    /// One direction's link: its delay (and the round trip its queue's
    /// BDP is of), capacity, loss, seed and schedule, with the shared
    /// flags where it has none of its own.
    fn link(
        &self,
        (delay, rtt): (u64, u64),
        capacity: Capacity,
        loss: Option<LossModel>,
        seed: u64,
        schedule: Vec<tcpwise_link::schedule::Step>,
        up: bool,
    ) -> LinkConfig {
        let spec = if up { self.up_queue } else { self.down_queue }
            .or(self.queue)
            .unwrap_or_default();
        let bdp = match &capacity {
            Capacity::Trace { trace, .. } => QueueLimit::default_for_trace(trace.mean_rate_bps()),
            c => QueueLimit::default_for(c.mean_bps(), rtt),
        };
        let queue = match spec.limit {
            None => bdp,
            Some(LimitSpec::Fixed(l)) => l,
            Some(LimitSpec::Bdp(m)) => {
                let b = capacity.mean_bps().map_or(0.0, |r| r * rtt as f64 / 8e9);
                QueueLimit::Bytes(((b * m).ceil() as u64).max(1500))
            }
        };
        LinkConfig {
            delay,
            jitter: if up { self.up_jitter } else { self.down_jitter }.or(self.jitter),
            capacity,
            queue,
            qdisc: spec,
            loss: loss.or(self.loss).unwrap_or_default(),
            seed,
            outages: Outages::for_direction(&self.outage, up),
            schedule,
            impairments: Impairments {
                onoff: if up { self.up_onoff } else { self.down_onoff }.or(self.onoff),
                police: if up { self.up_police } else { self.down_police }.or(self.police),
                netem: {
                    let pick = |both: Option<Percent>, u: Option<Percent>, d: Option<Percent>| {
                        if up { u } else { d }.or(both).map_or(0.0, |f| f.0)
                    };
                    NetemParams {
                        reorder: pick(self.reorder, self.up_reorder, self.down_reorder),
                        duplicate: pick(self.duplicate, self.up_duplicate, self.down_duplicate),
                        corrupt: pick(self.corrupt, self.up_corrupt, self.down_corrupt),
                    }
                },
            },
        }
    }
}

/// What the user should know about resolved links before they run
/// (settings that are legal but probably not what was meant).
pub fn warnings(up: &LinkConfig, down: &LinkConfig) -> Vec<String> {
    let mut w = Vec::new();
    for c in [up, down] {
        let Some(Jitter { amount: j, .. }) = c.jitter else {
            continue;
        };
        let owd = c.delay;
        if j > owd {
            w.push(format!(
                "--jitter {} is larger than the one-way delay {}: delays are clamped at zero and packets keep their order, so the spread will not be the one asked for",
                tcpwise_units::fmt_nanos(j),
                tcpwise_units::fmt_nanos(owd)
            ));
            break;
        }
    }
    w
}

/// Describes resolved links for reports.
pub fn summarize(up: &LinkConfig, down: &LinkConfig) -> PathSummary {
    let d = |c: &LinkConfig| DirectionSummary {
        delay_ms: c.delay as f64 / 1e6,
        rate_mbit: c.capacity.mean_bps().map(|b| b / 1e6),
        trace: match &c.capacity {
            Capacity::Trace { trace, .. } => Some(trace.name.clone()),
            _ => None,
        },
        queue: {
            let limit = match c.queue {
                QueueLimit::Bytes(b) => format!("{b} B"),
                QueueLimit::Packets(p) => format!("{p} pkt"),
                QueueLimit::Both { packets, bytes } => format!("{packets} pkt and {bytes} B"),
            };
            match c.qdisc.name() {
                "droptail" => limit,
                k => format!("{k}{} {limit}", if c.qdisc.ecn { "+ecn" } else { "" }),
            }
        },
        queue_bytes: match c.queue {
            QueueLimit::Bytes(b) => b,
            QueueLimit::Packets(p) => p * 1500,
            QueueLimit::Both { packets, bytes } => bytes.min(packets * 1500),
        },
        loss: c.loss.mean_loss(),
        jitter_ms: c.jitter.map(|j| j.amount as f64 / 1e6),
        jitter: c.jitter.map(|j| j.to_string()),
    };
    PathSummary {
        rtt_ms: (up.delay + down.delay) as f64 / 1e6,
        up: d(up),
        down: d(down),
        seed: (up.seed.wrapping_sub(1)) / 2,
    }
}

impl std::fmt::Display for PathSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rate = |d: &DirectionSummary| match (&d.trace, d.rate_mbit) {
            (Some(t), Some(r)) => format!("trace {} ({r:.1} Mbit/s mean)", short(t)),
            (_, Some(r)) => format!("{r:.1} Mbit/s"),
            _ => "unlimited".into(),
        };
        write!(
            f,
            "rtt {:.1} ms, up {} / down {}, queue {}",
            self.rtt_ms,
            rate(&self.up),
            rate(&self.down),
            self.down.queue
        )?;
        if self.up.loss > 0.0 || self.down.loss > 0.0 {
            write!(
                f,
                ", loss {:.2}%/{:.2}%",
                self.up.loss * 100.0,
                self.down.loss * 100.0
            )?;
        }
        match (&self.up.jitter, &self.down.jitter) {
            (Some(u), Some(d)) if u == d => write!(f, ", jitter {d}")?,
            (None, None) => {}
            (u, d) => write!(
                f,
                ", jitter {}/{}",
                u.as_deref().unwrap_or("none"),
                d.as_deref().unwrap_or("none")
            )?,
        }
        Ok(())
    }
}

fn short(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_splits_and_queue_defaults_to_bdp() {
        let s = PathSpec {
            rtt: Some(100_000_000),
            rate: Some(50_000_000),
            ..PathSpec::default()
        };
        let (up, down) = s.resolve().unwrap();
        assert_eq!(up.delay, 50_000_000);
        assert_eq!(down.delay, 50_000_000);
        assert_eq!(down.queue, QueueLimit::Bytes(625_000));
        assert_ne!(up.seed, down.seed);
    }

    #[test]
    fn conflicts_are_refused() {
        let s = PathSpec {
            rtt: Some(1),
            delay: Some(1),
            ..PathSpec::default()
        };
        assert!(s.resolve().is_err());
        let s = PathSpec {
            up_rate: Some(1_000_000),
            up_trace: Some("/nonexistent".into()),
            ..PathSpec::default()
        };
        assert!(s.resolve().is_err());
        let s = PathSpec {
            down_trace: Some("/nonexistent/trace".into()),
            ..PathSpec::default()
        };
        let e = s.resolve().unwrap_err().to_string();
        assert!(e.contains("cannot read trace /nonexistent/trace"), "{e}");
    }

    #[test]
    fn a_rate_beside_a_trace_and_an_endless_rtt_are_refused_in_one_line() {
        let s = PathSpec {
            rate: Some(10_000_000),
            down_trace: Some("/nonexistent/trace".into()),
            ..PathSpec::default()
        };
        let e = s.resolve().unwrap_err().to_string();
        assert!(
            e.contains("give --up-rate for the uplink instead of --rate"),
            "{e}"
        );
        let s = PathSpec {
            rtt: Some(100_000 * 1_000_000_000),
            ..PathSpec::default()
        };
        let e = s.resolve().unwrap_err().to_string();
        assert!(e.contains("round trip of 100000 s is over the 60 s"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn asymmetric_delay() {
        let s = PathSpec {
            rtt: Some(100),
            up_delay: Some(30),
            ..PathSpec::default()
        };
        let (up, down) = s.resolve().unwrap();
        assert_eq!((up.delay, down.delay), (30, 70));
    }
}
