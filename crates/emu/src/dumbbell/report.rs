//! What a topology run reports: every link's statistics (the same as a
//! pair's direction) and every flow through the bottleneck with the host
//! it came from, its share and the fairness of the whole.

use super::sockets::TcpSampled;
use crate::flows::{FlowReport, jain};
use crate::forwarder::DirectionStats;
use crate::topology::Resolved;
use serde::Serialize;

pub use crate::flows::BULK_MIN_BYTES;

/// One flow through the bottleneck, named by its hosts.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowShare {
    /// The node that sent it (a host, or a receiver sending back).
    pub from: String,
    /// The node it went to.
    pub to: String,
    /// "up" (hosts to receivers) or "down".
    pub direction: String,
    /// The flow as the bottleneck counted it.
    #[serde(flatten)]
    pub flow: FlowReport,
    /// What its sender's kernel said of it (`None` when no sample found
    /// its socket open: a flow shorter than a second, or UDP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSampled>,
}

/// One direction's bulk flows over the seconds they all ran, and their
/// shares (in `--stats-json` as `shares`).
#[derive(Debug, Clone, Serialize)]
pub struct Window<'a> {
    /// "up" or "down".
    pub direction: String,
    /// The node each flow came from, in the shares' order.
    pub from: Vec<String>,
    /// Whether the window is the span every flow ran (else the whole run).
    pub all_ran: bool,
    /// Goodput, shares, Jain's index.
    #[serde(flatten)]
    pub shares: Shares,
    /// Each flow's goodput in each second of the window, bit/s.
    pub per_s_bps: Vec<Vec<f64>>,
    /// The flows.
    #[serde(skip)]
    pub flows: Vec<&'a FlowShare>,
}

/// A topology run's whole report (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct TopologyReport {
    /// Every link direction: hosts', the bottleneck's, receivers'.
    pub links: Vec<DirectionStats>,
    /// Every data flow through the bottleneck.
    pub flows: Vec<FlowShare>,
    /// The second of the run the commands started at (after `--idle-rtt`'s
    /// probes, whose flows are not the commands'): shares count from it.
    pub commands_from_s: usize,
}

/// Flows' goodput over a window, and the fairness of it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Shares {
    /// Seconds of the run the window covers, `[from, to)`.
    pub from_s: usize,
    /// See `from_s`.
    pub to_s: usize,
    /// Each flow's mean goodput, bit/s, in flow order.
    pub goodput_bps: Vec<f64>,
    /// Each flow's share of their sum.
    pub share: Vec<f64>,
    /// Jain's fairness index of the goodputs.
    pub jain: f64,
    /// Their sum, bit/s.
    pub total_bps: f64,
}

impl TopologyReport {
    /// Names each flow the bottleneck counted after the nodes whose
    /// addresses it joins.
    pub fn new(t: &Resolved, links: Vec<DirectionStats>) -> TopologyReport {
        let name = |a: std::net::IpAddr| {
            t.hosts
                .iter()
                .chain(&t.receivers)
                .find(|n| n.addrs().contains(&a))
                .map_or_else(|| a.to_string(), |n| n.spec.name.clone())
        };
        let mut flows = Vec::new();
        for l in &links {
            let dir = l.direction.strip_prefix("bottleneck ");
            let (Some(dir), Some(fl)) = (dir, &l.flows) else {
                continue;
            };
            flows.extend(fl.iter().map(|f| FlowShare {
                from: name(f.key.src.0),
                to: name(f.key.dst.0),
                direction: dir.to_string(),
                flow: f.clone(),
                tcp: None,
            }));
        }
        TopologyReport {
            links,
            flows,
            commands_from_s: 0,
        }
    }

    /// The bottleneck's direction `dir` ("up" or "down").
    pub fn bottleneck(&self, dir: &str) -> Option<&DirectionStats> {
        let name = format!("bottleneck {dir}");
        self.links.iter().find(|l| l.direction == name)
    }

    /// The flows of one direction of the bottleneck that carried at
    /// least [`BULK_MIN_BYTES`] while the commands ran: a control
    /// connection's few hundred bytes (iperf3's, perf's) are no
    /// competitor and would pull Jain's index down, and the idle probes
    /// before the commands are not theirs.
    pub fn flows_of(&self, dir: &str) -> Vec<&FlowShare> {
        let from = self.commands_from_s;
        self.flows
            .iter()
            .filter(|f| {
                let since: u64 = f.flow.goodput_bytes_per_s.iter().skip(from).sum();
                f.direction == dir && since >= BULK_MIN_BYTES
            })
            .collect()
    }

    /// Goodput, shares and Jain's index of `flows` over seconds
    /// `[from, to)` of the run.
    pub fn shares(flows: &[&FlowShare], from: usize, to: usize) -> Shares {
        let goodput_bps: Vec<f64> = flows.iter().map(|f| f.flow.goodput_bps(from, to)).collect();
        let total_bps: f64 = goodput_bps.iter().sum();
        Shares {
            from_s: from,
            to_s: to,
            share: goodput_bps
                .iter()
                .map(|g| if total_bps > 0.0 { g / total_bps } else { 0.0 })
                .collect(),
            jain: jain(&goodput_bps),
            goodput_bps,
            total_bps,
        }
    }

    /// The window of `dir`'s bulk flows: the whole seconds strictly
    /// inside the span every flow ran (start-up and ends do not count),
    /// else the whole run; `None` when `dir` carried no bulk flow.
    pub fn window(&self, dir: &str) -> Option<Window<'_>> {
        let flows = self.flows_of(dir);
        if flows.is_empty() {
            return None;
        }
        let from = flows
            .iter()
            .map(|f| f.flow.first_s.ceil() as usize)
            .max()
            .unwrap_or(0);
        let to = flows
            .iter()
            .map(|f| f.flow.last_s.floor() as usize)
            .min()
            .unwrap_or(0);
        let (from, to, all_ran) = if to > from {
            (from, to, true)
        } else {
            let end = flows
                .iter()
                .map(|f| f.flow.goodput_bytes_per_s.len())
                .max()
                .unwrap_or(0);
            (0, end, false)
        };
        let shares = Self::shares(&flows, from, to);
        let per_s_bps = (flows.iter())
            .map(|f| (from..to).map(|s| f.flow.goodput_bps(s, s + 1)).collect())
            .collect();
        Some(Window {
            per_s_bps,
            direction: dir.to_string(),
            from: flows.iter().map(|f| f.from.clone()).collect(),
            all_ran,
            shares,
            flows,
        })
    }

    /// Lines for a terminal: each flow's goodput over its direction's
    /// [`TopologyReport::window`], its share, Jain's index, the
    /// bottleneck's queue, then every link's summary line.
    pub fn text(&self) -> Vec<String> {
        let mut out = Vec::new();
        for dir in ["up", "down"] {
            let Some(w) = self.window(dir) else {
                continue;
            };
            let (flows, s) = (&w.flows, &w.shares);
            let when = if w.all_ran {
                format!("seconds {}-{}, while every flow ran", s.from_s, s.to_s)
            } else {
                "the whole run: the flows never all ran at once".to_string()
            };
            let small = self.flows.iter().filter(|f| f.direction == dir).count() - flows.len();
            let left = if small > 0 {
                format!(" ({small} flows of under 64 KB left out)")
            } else {
                String::new()
            };
            out.push(format!(
                "flows through the bottleneck ({dir}), goodput over {when}{left}:"
            ));
            for (k, f) in flows.iter().enumerate() {
                let k4 = &f.flow.key;
                out.push(format!(
                    "  {:>10} -> {:<10} {}:{} -> {}:{}  {:>8.2} Mbit/s  share {:.3}  retransmitted {:.1} KB",
                    f.from,
                    f.to,
                    k4.src.0,
                    k4.src.1,
                    k4.dst.0,
                    k4.dst.1,
                    s.goodput_bps[k] / 1e6,
                    s.share[k],
                    f.flow.repeated_bytes as f64 / 1e3
                ));
                if let Some(t) = &f.tcp {
                    out.push(format!(
                        "  {:>10}    its kernel: {}, smoothed RTT median {:.1} ms (max {:.1}, min RTT {:.1}) over {} samples, {} segments retransmitted",
                        "",
                        t.cc.as_deref().unwrap_or("?"),
                        t.srtt_ms_median,
                        t.srtt_ms_max,
                        t.min_rtt_ms,
                        t.samples,
                        t.retransmits
                    ));
                }
            }
            out.push(format!(
                "  sum {:.2} Mbit/s, Jain's fairness index {:.3}",
                s.total_bps / 1e6,
                s.jain
            ));
        }
        if let Some(b) = self.bottleneck("up") {
            let q = &b.link.sojourn;
            out.push(format!(
                "bottleneck queue (up): sojourn p50 {} µs, p99 {} µs, max {} µs over {} packets; peak {:.1} KB",
                q.p50_us,
                q.p99_us,
                q.max_us,
                q.samples,
                b.link.peak_queue_bytes as f64 / 1e3
            ));
        }
        out.extend(self.links.iter().map(DirectionStats::summary_line));
        out
    }
}
