//! What a link reports: every drop with its cause, the queue's sojourn
//! percentiles, the schedule's changes as they were applied.

use super::*;

/// Why a packet was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropCause {
    /// The queue was full.
    Queue,
    /// Random loss.
    Loss,
    /// An outage window (blackhole).
    Outage,
    /// The queue's AQM (CoDel, PIE) chose to drop it.
    Aqm,
    /// The on/off process had the link off.
    OnOff,
    /// Over the policer's rate.
    Police,
}

/// A packet the link refused, handed back so its buffer can be reused.
#[derive(Debug)]
pub struct Dropped<T> {
    /// Why.
    pub cause: DropCause,
    /// The packet.
    pub item: T,
}

/// Counters of one direction.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered to the link.
    pub offered_packets: u64,
    /// Bytes offered to the link.
    pub offered_bytes: u64,
    /// Packets handed out by `dequeue`.
    pub delivered_packets: u64,
    /// Bytes handed out by `dequeue`.
    pub delivered_bytes: u64,
    /// Packets dropped because the queue was full.
    pub dropped_queue: u64,
    /// Packets dropped by random loss.
    pub dropped_loss: u64,
    /// Packets dropped in outage windows.
    #[serde(default)]
    pub dropped_outage: u64,
    /// Packets the queue's AQM dropped (CoDel, PIE).
    #[serde(default)]
    pub dropped_aqm: u64,
    /// Packets marked CE instead of dropped (`ecn`).
    #[serde(default)]
    pub marked_ce: u64,
    /// Packets dropped while the on/off process had the link off.
    #[serde(default)]
    pub dropped_onoff: u64,
    /// Packets dropped by the policer.
    #[serde(default)]
    pub dropped_police: u64,
    /// Delivered packets that skipped the delay line (reordered).
    #[serde(default)]
    pub reordered: u64,
    /// Delivered packets delivered twice.
    #[serde(default)]
    pub duplicated: u64,
    /// Delivered packets with a bit flipped.
    #[serde(default)]
    pub corrupted: u64,
    /// When each schedule line took effect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule_applied: Vec<ScheduleApplied>,
    /// Largest queue seen, bytes (waiting for the serialiser).
    pub peak_queue_bytes: u64,
    /// Largest queue seen, packets.
    pub peak_queue_packets: u64,
    /// Time packets waited in the queue before the serialiser took them
    /// (filled by [`Link::report`]).
    #[serde(default)]
    pub sojourn: Sojourn,
    /// IP bytes delivered in each whole second since the link started
    /// (by due time), as `mm-throughput-graph` bins them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivered_bytes_per_s: Vec<u64>,
}

/// Queueing delay of the packets the serialiser took, µs (2 significant
/// digits).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Sojourn {
    /// Packets measured.
    pub samples: u64,
    /// Median.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Largest.
    pub max_us: u64,
}

/// A schedule line that took effect.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ScheduleApplied {
    /// Its line in the schedule file.
    pub line: usize,
    /// Its offset, ns from the link's start.
    pub at_ns: u64,
    /// How long after its offset it took effect, ns.
    pub late_ns: u64,
}
