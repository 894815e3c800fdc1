//! What a forwarder reports: lateness, the offload mode and what it
//! carried, the link's counters, CPU; the one summary line.

use hdrhistogram::Histogram;
use serde::Serialize;
use tcpwise_link::LinkStats;

/// Lateness percentiles, microseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Lateness {
    /// Packets measured.
    pub samples: u64,
    /// Median, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Maximum, µs.
    pub max_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
}

impl Lateness {
    pub(super) fn from_hist(h: &Histogram<u64>) -> Lateness {
        let us = |v: u64| v as f64 / 1000.0;
        Lateness {
            samples: h.len(),
            p50_us: us(h.value_at_quantile(0.5)),
            p99_us: us(h.value_at_quantile(0.99)),
            max_us: us(h.max()),
            mean_us: h.mean() / 1000.0,
        }
    }
}

/// How a direction's TUN devices move packets: what `--stats-json`
/// and every summary say ran.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct OffloadStats {
    /// "tso+uso", "tso" or "off".
    pub mode: String,
    /// Why offloads are off, or what changed while running.
    pub note: Option<String>,
    /// Reads that returned a packet.
    pub reads: u64,
    /// Of those, super-packets (more than one segment).
    pub super_reads: u64,
    /// Segments those reads carried.
    pub segments_read: u64,
    /// Write calls.
    pub writes: u64,
    /// Segments those writes carried.
    pub segments_written: u64,
    /// Super-packets the sender's kernel gave that could not be split.
    pub unsplittable: u64,
}

impl OffloadStats {
    /// "tso+uso, 30.1 segments/read, 28.7/write".
    pub fn text(&self) -> String {
        let per = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        let why = self
            .note
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let bad = if self.unsplittable > 0 {
            format!(
                ", {} super-packets dropped unsplit (not IPv4/IPv6 TCP or UDP as their header said)",
                self.unsplittable
            )
        } else {
            String::new()
        };
        format!(
            "offload {}{why}, {:.1} segments/read, {:.1}/write{bad}",
            self.mode,
            per(self.segments_read, self.reads),
            per(self.segments_written, self.writes)
        )
    }
}

/// What one direction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DirectionStats {
    /// "up" (client to server) or "down".
    pub direction: String,
    /// TUN offloads: the mode that ran and what they carried.
    pub offload: OffloadStats,
    /// The link model's counters.
    #[serde(flatten)]
    pub link: LinkStats,
    /// Packets the output TUN refused.
    pub write_errors: u64,
    /// Packets the sending kernel dropped at the input TUN's own queue
    /// (its `tx_dropped`, `txqueuelen` 10,000) before this forwarder read
    /// them: a sender without congestion control outran the forwarder.
    /// They never reached the link, so the link's drops leave them out.
    pub input_dropped: u64,
    /// How late packets were written relative to their deadlines.
    pub lateness: Lateness,
    /// The same, per measurement phase marked with [`Phase`] (index = phase).
    pub phase_lateness: Vec<Lateness>,
    /// CPU seconds the forwarder thread used (both directions' when
    /// `shared_thread`).
    pub cpu_s: f64,
    /// Seconds it ran.
    pub wall_s: f64,
    /// One thread carried both directions (`--forwarder-threads`): its
    /// CPU is in both, and counted once by [`forwarders_cpu_percent`].
    pub shared_thread: bool,
    /// How many testbeds' directions the thread carried: 1, or more
    /// under `emu pair --testbeds` ([`crate::testbeds`]), where its CPU is
    /// theirs together.
    pub thread_testbeds: usize,
    /// How many link directions the thread carried (2 for one testbed; a
    /// topology's thread carries every link's).
    #[serde(default)]
    pub thread_links: usize,
    /// Seconds during which the thread coalesced its wake-ups (one pass
    /// per [`super::wake::COALESCE_NS`]: many testbeds on a machine with
    /// no idle time); its packets then left up to that much late.
    pub coalesced_s: f64,
    /// Each flow that left the link, by 5-tuple (a topology's bottleneck
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<crate::flows::FlowReport>>,
    /// Set when the thread died (panic or I/O error).
    pub failure: Option<String>,
}

impl DirectionStats {
    /// Average CPU use of the thread, percent of one core.
    pub fn cpu_percent(&self) -> f64 {
        if self.wall_s > 0.0 {
            100.0 * self.cpu_s / self.wall_s
        } else {
            0.0
        }
    }

    /// The CPU figure of the summary: the thread's, and whether the other
    /// direction shares it.
    fn cpu_text(&self) -> String {
        // Over a run shorter than a second, start-up spinning is most
        // of it: an average would mislead.
        let cpu = if self.wall_s >= 1.0 {
            format!("{:.0}% of a core", self.cpu_percent())
        } else {
            format!("{:.0} ms", self.cpu_s * 1e3)
        };
        if self.thread_testbeds > 1 {
            let coalesced = if self.coalesced_s > 0.0 {
                format!(
                    ", one pass per {} µs for {:.1} s: no idle time",
                    super::wake::COALESCE_NS / 1000,
                    self.coalesced_s
                )
            } else {
                String::new()
            };
            format!(
                "{cpu} (one thread for {} testbeds{coalesced})",
                self.thread_testbeds
            )
        } else if self.thread_links > 2 {
            format!(
                "{cpu} (one thread for {} link directions)",
                self.thread_links
            )
        } else if self.shared_thread {
            format!("{cpu} (one thread for both directions)")
        } else {
            cpu
        }
    }

    /// One line for stderr.
    pub fn summary_line(&self) -> String {
        let l = &self.link;
        // Causes and effects that are not zero, in a fixed order.
        let extra = |v: &[(&str, u64)]| -> String {
            v.iter()
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!(", {k} {n}"))
                .collect()
        };
        format!(
            "{:>4}: {} pkts {:.1} MB delivered, dropped {} (queue {}, loss {}{}){}{}, peak queue {:.1} KB/{} pkts, lateness p50 {:.0}µs p99 {:.0}µs max {:.0}µs, cpu {}, {}",
            self.direction,
            l.delivered_packets,
            l.delivered_bytes as f64 / 1e6,
            l.dropped_queue
                + l.dropped_loss
                + l.dropped_outage
                + l.dropped_aqm
                + l.dropped_onoff
                + l.dropped_police,
            l.dropped_queue,
            l.dropped_loss,
            extra(&[
                ("aqm", l.dropped_aqm),
                ("outage", l.dropped_outage),
                ("off", l.dropped_onoff),
                ("policed", l.dropped_police),
            ]),
            if self.input_dropped > 0 {
                format!(
                    ", {} dropped before the link (the forwarder did not read them in time)",
                    self.input_dropped
                )
            } else {
                String::new()
            },
            extra(&[
                ("marked CE", l.marked_ce),
                ("reordered", l.reordered),
                ("duplicated", l.duplicated),
                ("corrupted", l.corrupted),
            ]),
            l.peak_queue_bytes as f64 / 1e3,
            l.peak_queue_packets,
            self.lateness.p50_us,
            self.lateness.p99_us,
            self.lateness.max_us,
            self.cpu_text(),
            self.offload.text()
        )
    }
}

/// The forwarders' CPU, percent of one core: each thread counted once
/// (a thread that carried both directions is in both).
pub fn forwarders_cpu_percent(dirs: &[DirectionStats]) -> f64 {
    let shared = dirs.iter().filter(|d| d.shared_thread).count().max(1) as f64;
    dirs.iter()
        .map(|d| {
            if d.shared_thread {
                d.cpu_percent() / shared
            } else {
                d.cpu_percent()
            }
        })
        .sum()
}
