//! # tcpwise-link: one direction of an emulated network path, sans IO
//!
//! A [`Link`] models what a packet meets between two hosts in one direction:
//! outages and random loss at the entrance, a queue discipline, a
//! serialiser that drains the queue at a fixed rate or along a Mahimahi
//! capacity trace, and a
//! propagation delay with optional jitter that never reorders packets.
//!
//! It never reads a clock, touches a socket or sleeps: the caller passes
//! `now` (nanoseconds on any monotonic clock) into [`Link::enqueue`] and
//! [`Link::dequeue`], and asks [`Link::next_deadline`] when to come back.
//! That is what lets the same code run on virtual time in tests and under
//! the real forwarder in `tcpwise-emu`, and lets a seeded run be replayed.
//!
//! Contract:
//! - packets leave in the order they entered (no reordering, even with jitter);
//! - a packet admitted at `t` is delivered no earlier than
//!   `t + serialisation + delay`, and the serialiser is work-conserving, so
//!   a rate link delivers exactly `rate` bits per second while busy;
//! - the queue counts every admitted byte waiting for the serialiser (the
//!   packet being serialised has left it, as in a Linux qdisc or
//!   Mahimahi); what happens when it is full, or before, is the queue
//!   discipline's choice ([`queue`]: drop-tail by default, drop-head,
//!   CoDel, PIE, FQ-CoDel), made when the serialiser takes the next packet;
//! - the same configuration, seed and inputs give the same outputs.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod impair;
pub mod jitter;
pub mod loss;
pub mod outage;
pub mod queue;
pub mod schedule;
pub mod trace;

mod serializer;
mod stats;

use serializer::*;
pub use stats::*;

pub use jitter::Jitter;
pub use loss::LossModel;
pub use queue::{Ecn, QueueSpec};
pub use trace::{Trace, TraceError};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::Arc;

use tcpwise_units as units;
/// Nanoseconds on the caller's monotonic clock (the one time type, from `tcpwise-units`).
pub use tcpwise_units::Nanos;

/// Smallest default queue, so slow links still hold a few packets.
pub const MIN_DEFAULT_QUEUE_BYTES: u64 = 64_000;

/// How fast the link drains its queue.
#[derive(Debug, Clone, PartialEq)]
pub enum Capacity {
    /// No serialisation: packets only see delay and loss.
    Unlimited,
    /// A fixed rate.
    Rate {
        /// Bits per second.
        bits_per_sec: u64,
        /// Bytes added to every packet for serialisation (framing); 0 means
        /// the rate counts IP bytes, like `tc`'s default.
        overhead: u32,
    },
    /// A Mahimahi trace of delivery opportunities.
    Trace {
        /// The trace.
        trace: Arc<Trace>,
        /// Play it once instead of repeating; after it ends nothing leaves.
        once: bool,
    },
}

impl Capacity {
    /// Mean capacity in bit/s, `None` when unlimited.
    pub fn mean_bps(&self) -> Option<f64> {
        match self {
            Capacity::Unlimited => None,
            Capacity::Rate {
                bits_per_sec,
                overhead,
            } => Some(*bits_per_sec as f64 * 1500.0 / (1500.0 + f64::from(*overhead))),
            Capacity::Trace { trace, .. } => Some(trace.mean_rate_bps()),
        }
    }
}

/// Where the drop-tail queue draws the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueLimit {
    /// At most this many bytes waiting or being serialised.
    Bytes(u64),
    /// At most this many packets waiting or being serialised.
    Packets(u64),
    /// Both at once, a packet refused when it would pass either
    /// (Mahimahi's `packets=N,bytes=M`: its `DroptailPacketQueue`
    /// admits a packet only when it is `good_with` both).
    Both {
        /// The packets limit.
        packets: u64,
        /// The bytes limit.
        bytes: u64,
    },
}

impl QueueLimit {
    /// The default: one bandwidth-delay product of `rate_bps` and `rtt`,
    /// at least [`MIN_DEFAULT_QUEUE_BYTES`].
    pub fn default_for(rate_bps: Option<f64>, rtt: Nanos) -> QueueLimit {
        let bdp = rate_bps.map_or(0.0, |r| r * rtt as f64 / 8e9);
        QueueLimit::Bytes((bdp.ceil() as u64).max(MIN_DEFAULT_QUEUE_BYTES))
    }
}

impl QueueLimit {
    /// The default on a trace link: 2 s of the trace's mean rate, at least
    /// [`TRACE_MIN_DEFAULT_QUEUE_BYTES`]. Cellular networks buffer deeply
    /// (a loss-based TCP adds seconds to the RTT before its first drop:
    /// Jiang et al., "Tackling Bufferbloat in 3G/4G Networks", IMC 2012),
    /// so a BDP-sized queue would drop where the network being replayed
    /// does not; Mahimahi's default is unbounded.
    pub fn default_for_trace(mean_rate_bps: f64) -> QueueLimit {
        let b = (mean_rate_bps * TRACE_QUEUE_SECONDS / 8.0).ceil() as u64;
        QueueLimit::Bytes(b.max(TRACE_MIN_DEFAULT_QUEUE_BYTES))
    }
}

/// Seconds of the mean rate a trace link's default queue holds.
pub const TRACE_QUEUE_SECONDS: f64 = 2.0;
/// Smallest default queue of a trace link.
pub const TRACE_MIN_DEFAULT_QUEUE_BYTES: u64 = 1_000_000;

impl std::str::FromStr for QueueLimit {
    type Err = units::UnitError;

    /// Parses `256KB`, `64KiB`, `1500B`, `1000pkt`; a bare number is refused.
    fn from_str(s: &str) -> Result<QueueLimit, units::UnitError> {
        let t = s.trim();
        for suffix in ["packets", "pkts", "pkt", "p"] {
            if let Some(n) = t.strip_suffix(suffix) {
                let n: u64 = n.trim().parse().map_err(|_| units::UnitError::BadNumber {
                    input: s.to_string(),
                    expected: "a queue limit such as 256KB, 64KiB or 1000pkt",
                })?;
                if n == 0 {
                    return Err(units::UnitError::Range {
                        input: s.to_string(),
                        why: "a queue holds at least one packet",
                    });
                }
                return Ok(QueueLimit::Packets(n));
            }
        }
        // A bare number is bytes to tc's bfifo and packets to a Mahimahi
        // user (`--downlink-queue-args=packets=100`): refuse, say both.
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return Err(units::UnitError::Range {
                input: s.to_string(),
                why: "a bare number is bytes to tc and packets to Mahimahi: write its unit, B or pkt (1500B, 100pkt)",
            });
        }
        let b = units::parse_size(t)?;
        if b < 1500 {
            return Err(units::UnitError::Range {
                input: s.to_string(),
                why: "a queue holds at least one 1500-byte packet",
            });
        }
        Ok(QueueLimit::Bytes(b))
    }
}

/// Everything that defines one direction.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// One-way propagation delay.
    pub delay: Nanos,
    /// Optional jitter on the delay (never reorders).
    pub jitter: Option<Jitter>,
    /// Serialisation.
    pub capacity: Capacity,
    /// Queue limit.
    pub queue: QueueLimit,
    /// Queue discipline (drop-tail by default).
    pub qdisc: QueueSpec,
    /// Random loss at the entrance.
    pub loss: LossModel,
    /// RNG seed (loss and jitter).
    pub seed: u64,
    /// Blackhole windows of this direction.
    pub outages: outage::Outages,
    /// On/off, policer, reorder, duplicate, corrupt.
    pub impairments: impair::Impairments,
    /// Changes over time (`--schedule`), in time order.
    pub schedule: Vec<schedule::Step>,
}

impl LinkConfig {
    /// The highest mean rate this direction is ever set to, bit/s: its
    /// capacity's and every `--schedule` rate's; `None` when unlimited.
    pub fn peak_bps(&self) -> Option<f64> {
        let base = self.capacity.mean_bps()?;
        Some(
            self.schedule
                .iter()
                .flat_map(|s| &s.changes)
                .filter_map(|c| match c {
                    schedule::Change::Rate(r) => Some(*r as f64),
                    _ => None,
                })
                .fold(base, f64::max),
        )
    }
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            delay: 0,
            jitter: None,
            capacity: Capacity::Unlimited,
            queue: QueueLimit::Bytes(MIN_DEFAULT_QUEUE_BYTES),
            qdisc: QueueSpec::default(),
            loss: LossModel::None,
            seed: 1,
            outages: outage::Outages::default(),
            impairments: impair::Impairments::default(),
            schedule: Vec::new(),
        }
    }
}

struct InFlight<T> {
    arrival: Nanos,
    departure: Nanos,
    deliver: Nanos,
    size: u32,
    ce: bool,
    tags: impair::Verdict,
    item: T,
}

/// A packet handed out by [`Link::dequeue_full`].
#[derive(Debug)]
pub struct Delivery<T> {
    /// When it was due (the caller measures its lateness against it).
    pub deadline: Nanos,
    /// When it arrived at the link.
    pub arrival: Nanos,
    /// When the serialiser finished it (it then spent the delay on the
    /// wire): Mahimahi's departure from `mm-link`.
    pub departure: Nanos,
    /// The packet.
    pub item: T,
    /// The queue marked it CE: rewrite its ECN field.
    pub ce: bool,
    /// Deliver it twice.
    pub duplicate: bool,
    /// Flip one bit after the IP header; this random number picks which.
    pub corrupt: Option<u32>,
}

const NEVER: Nanos = Nanos::MAX;

/// One direction of an emulated path. `T` is whatever the caller carries
/// (a packet buffer); the link only looks at the size given with it.
pub struct Link<T> {
    cfg: LinkConfig,
    rng: ChaCha8Rng,
    loss: loss::LossState,
    jit: jitter::JitterState,
    /// Time in the queue of each packet the serialiser took, µs.
    sojourn: hdrhistogram::Histogram<u64>,
    serializer: Serializer,
    /// Admitted, waiting for the serialiser.
    qdisc: Box<dyn queue::Qdisc<T>>,
    /// Effects of the queue not yet taken into the statistics.
    fx: queue::Effects<T>,
    /// Packets the queue dropped, for the caller to take back.
    dropped: Vec<Dropped<T>>,
    /// When the queue last became non-empty.
    nonempty_since: Nanos,
    /// When the serialiser can start the next packet.
    ser_free: Nanos,
    /// Taken by the serialiser: departure and delivery known.
    line: VecDeque<InFlight<T>>,
    /// Reordered packets: they skip the delay, so they overtake `line`.
    express: VecDeque<InFlight<T>>,
    /// Impairments at the entrance, in order.
    impair: Vec<Box<dyn impair::Impairment>>,
    /// The next schedule step to apply.
    next_step: usize,
    /// The next whole millisecond whose capacity [`Link::capacity_until`]
    /// reports, and the millibits carried into it.
    cap_ms: u64,
    cap_carry: u64,
    last_deliver: Nanos,
    stats: LinkStats,
    start: Nanos,
}

impl<T: Send + 'static> Link<T> {
    /// A link whose clock (and trace) starts at `start`.
    pub fn new(cfg: LinkConfig, start: Nanos) -> Link<T> {
        let mut l = Link {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            loss: loss::LossState::default(),
            jit: jitter::JitterState::default(),
            sojourn: hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 2)
                .expect("static bounds"),
            serializer: Serializer::new(&cfg.capacity, start),
            qdisc: cfg.qdisc.build(cfg.queue, cfg.seed),
            fx: queue::Effects::default(),
            dropped: Vec::new(),
            nonempty_since: start,
            ser_free: start,
            line: VecDeque::new(),
            express: VecDeque::new(),
            impair: cfg.impairments.build(start),
            next_step: 0,
            cap_ms: 0,
            cap_carry: 0,
            last_deliver: 0,
            stats: LinkStats::default(),
            start,
            cfg,
        };
        // Lines at offset 0 are the link's starting configuration.
        l.apply_due(start);
        l
    }
}

impl<T> Link<T> {
    /// The configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Counters so far (without the sojourn percentiles: see
    /// [`Link::report`]).
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Counters so far with the queue's sojourn percentiles filled in.
    pub fn report(&self) -> LinkStats {
        let h = &self.sojourn;
        let mut s = self.stats.clone();
        s.sojourn = Sojourn {
            samples: h.len(),
            p50_us: if h.is_empty() {
                0
            } else {
                h.value_at_quantile(0.5)
            },
            p99_us: if h.is_empty() {
                0
            } else {
                h.value_at_quantile(0.99)
            },
            max_us: h.max(),
        };
        s
    }

    /// Bytes and packets currently queued (admitted, not fully serialised).
    pub fn queued(&mut self, now: Nanos) -> (u64, usize) {
        self.advance(now);
        let (mut bytes, mut packets) = (self.qdisc.bytes(), self.qdisc.packets());
        for p in self.line.iter().rev() {
            if p.departure <= now {
                break;
            }
            bytes += u64::from(p.size);
            packets += 1;
        }
        (bytes, packets)
    }

    /// The link's capacity in each whole millisecond that ended by `now`
    /// and was not reported before, as (ms since the start, bytes): what
    /// Mahimahi logs as delivery opportunities (`t # bytes`). A rate link
    /// gives its rate's bytes (the rate of the moment, if a schedule
    /// changes it), a trace link 1500 bytes per opportunity, an unlimited
    /// link nothing.
    pub fn capacity_until(&mut self, now: Nanos, out: &mut Vec<(u64, u64)>) {
        let done_ms = now.saturating_sub(self.start) / 1_000_000;
        while self.cap_ms < done_ms {
            let ms = self.cap_ms;
            self.cap_ms += 1;
            let bytes = match &self.serializer {
                Serializer::Unlimited => {
                    self.cap_ms = done_ms;
                    return;
                }
                Serializer::Rate { bps, .. } => {
                    // `bps` bits per second are `bps` millibits per ms;
                    // what does not make a whole byte carries over.
                    let millibits = bps + self.cap_carry;
                    self.cap_carry = millibits % 8000;
                    millibits / 8000
                }
                Serializer::Trace {
                    trace,
                    once,
                    exhausted,
                    ..
                } => {
                    if *exhausted || (*once && ms >= trace.period_ms()) {
                        0
                    } else {
                        trace.count_at(ms) as u64 * u64::from(trace::OPPORTUNITY_BYTES)
                    }
                }
            };
            if bytes > 0 {
                out.push((ms, bytes));
            }
        }
    }

    /// Packets the queue dropped since the last call (AQM drops at
    /// dequeue, drop-head evictions), for the caller to count or recycle.
    pub fn drain_dropped(&mut self) -> std::vec::Drain<'_, Dropped<T>> {
        self.dropped.drain(..)
    }

    /// Moves the queue's drops and marks into the statistics.
    fn take_effects(&mut self) {
        self.stats.marked_ce += std::mem::take(&mut self.fx.marked);
        let dropped = std::mem::take(&mut self.fx.dropped);
        for (why, item) in dropped {
            let cause = self.count_queue_drop(why);
            self.dropped.push(Dropped { cause, item });
        }
    }

    /// Counts a drop by the queue under its cause.
    fn count_queue_drop(&mut self, why: queue::QueueDrop) -> DropCause {
        match why {
            queue::QueueDrop::Overflow => {
                self.stats.dropped_queue += 1;
                DropCause::Queue
            }
            queue::QueueDrop::Aqm => {
                self.stats.dropped_aqm += 1;
                DropCause::Aqm
            }
        }
    }

    /// When the next schedule step is due, if any.
    fn next_step_at(&self) -> Option<Nanos> {
        self.cfg
            .schedule
            .get(self.next_step)
            .map(|s| self.start.saturating_add(s.at))
    }

    /// Applies the schedule steps due by `t`.
    fn apply_due(&mut self, t: Nanos) {
        while let Some(at) = self.next_step_at().filter(|at| *at <= t) {
            let step = self.cfg.schedule[self.next_step].clone();
            self.next_step += 1;
            for c in &step.changes {
                match *c {
                    schedule::Change::Rate(bps) => {
                        let from = self.ser_free.max(at);
                        let overhead = match self.serializer {
                            Serializer::Rate { overhead, .. } => overhead,
                            _ => 0,
                        };
                        self.serializer = Serializer::Rate {
                            bps,
                            overhead,
                            busy_start: from,
                            busy_bits: 0,
                            free_at: from,
                        };
                    }
                    schedule::Change::Delay(d) => self.cfg.delay = d,
                    schedule::Change::Loss(m) => {
                        self.cfg.loss = m;
                        self.loss = loss::LossState::default();
                    }
                }
            }
            self.stats.schedule_applied.push(ScheduleApplied {
                line: step.line,
                at_ns: step.at,
                late_ns: t - at,
            });
        }
    }

    /// Hands the serialiser every packet it starts by `now`, each at the
    /// time it starts (so an AQM sees its true sojourn), under the
    /// schedule's parameters of that time.
    fn advance(&mut self, now: Nanos) {
        while self.qdisc.packets() > 0 && self.ser_free != NEVER {
            let t = self.ser_free.max(self.nonempty_since);
            if t > now {
                break;
            }
            self.apply_due(t);
            let got = self.qdisc.dequeue(t, &mut self.fx);
            self.take_effects();
            let Some(p) = got else {
                break;
            };
            self.sojourn.saturating_record((t - p.arrival) / 1_000);
            let departure = self.serializer.departure(t, p.size);
            self.ser_free = departure;
            self.send(departure, p);
        }
        self.apply_due(now);
    }

    /// Puts a serialised packet on the wire: after the delay, in order, or
    /// (reordered) at once, overtaking the others.
    fn send(&mut self, departure: Nanos, p: queue::Packet<T>) {
        let reorder = p.tags.reorder && departure != NEVER;
        let deliver = if departure == NEVER {
            NEVER
        } else if reorder {
            departure
        } else {
            let d = departure as i128 + self.cfg.delay as i128 + i128::from(self.jitter());
            // No reordering: never before the packet ahead, never before it left.
            (d.max(departure as i128) as Nanos).max(self.last_deliver)
        };
        let f = InFlight {
            arrival: p.arrival,
            departure,
            deliver,
            size: p.size,
            ce: p.ecn == Ecn::Ce,
            tags: p.tags,
            item: p.item,
        };
        if reorder {
            self.express.push_back(f);
        } else {
            self.last_deliver = deliver;
            self.line.push_back(f);
        }
    }

    fn jitter(&mut self) -> i64 {
        match &self.cfg.jitter {
            None => 0,
            Some(j) => self.jit.sample(j, &mut self.rng),
        }
    }

    /// Offers a packet of `size` bytes at `now` (not ECN-capable, flow 0).
    pub fn enqueue(&mut self, now: Nanos, size: u32, item: T) -> Result<(), Dropped<T>> {
        self.enqueue_flow(now, size, 0, Ecn::NotEct, item)
    }

    /// Offers a packet of `size` bytes at `now`, of flow hash `flow` (for
    /// fair queueing) with ECN codepoint `ecn` (for marking). `Err` hands
    /// back the packet itself when it is not admitted; packets it pushes
    /// out of the queue come from [`Link::drain_dropped`].
    pub fn enqueue_flow(
        &mut self,
        now: Nanos,
        size: u32,
        flow: u64,
        ecn: Ecn,
        item: T,
    ) -> Result<(), Dropped<T>> {
        self.advance(now);
        self.stats.offered_packets += 1;
        self.stats.offered_bytes += u64::from(size);
        if !self.cfg.outages.is_empty()
            && self.cfg.outages.blackholed(now.saturating_sub(self.start))
        {
            self.stats.dropped_outage += 1;
            return Err(Dropped {
                cause: DropCause::Outage,
                item,
            });
        }
        if self.loss.lose(&self.cfg.loss, &mut self.rng) {
            self.stats.dropped_loss += 1;
            return Err(Dropped {
                cause: DropCause::Loss,
                item,
            });
        }
        let mut tags = impair::Verdict::default();
        for i in &mut self.impair {
            tags = tags.and(i.arrive(now, size, &mut self.rng));
        }
        if let Some(d) = tags.drop {
            let cause = match d {
                impair::Dropper::OnOff => {
                    self.stats.dropped_onoff += 1;
                    DropCause::OnOff
                }
                impair::Dropper::Police => {
                    self.stats.dropped_police += 1;
                    DropCause::Police
                }
            };
            return Err(Dropped { cause, item });
        }
        let was_empty = self.qdisc.packets() == 0;
        let p = queue::Packet {
            arrival: now,
            size,
            flow,
            ecn,
            tags,
            item,
        };
        // An unlimited link never holds a queue, so no limit applies: it
        // takes the packet at once.
        if matches!(self.serializer, Serializer::Unlimited) {
            self.send(now, p);
            return Ok(());
        }
        let r = self.qdisc.enqueue(now, p, &mut self.fx);
        self.take_effects();
        if let Err((why, p)) = r {
            let cause = self.count_queue_drop(why);
            return Err(Dropped {
                cause,
                item: p.item,
            });
        }
        if was_empty {
            self.nonempty_since = now;
        }
        self.advance(now);
        // The backlog the limit bounds: waiting, not being serialised.
        let (b, n) = (self.qdisc.bytes(), self.qdisc.packets());
        self.stats.peak_queue_bytes = self.stats.peak_queue_bytes.max(b);
        self.stats.peak_queue_packets = self.stats.peak_queue_packets.max(n as u64);
        Ok(())
    }

    /// When the next packet is due out, if any will ever be.
    ///
    /// The serialiser picks from the queue lazily, at whichever call comes
    /// first, but always as of the moment it became free, so the choice is
    /// exact. The packet it is sending sits at the end of the line (its
    /// delivery lies ahead), and nothing picked later can be due before the
    /// line's front, so the front's deadline is the next event; only an
    /// empty line with a waiting queue (no delay at all) needs a wake-up
    /// just to pick.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let line = match self.line.front() {
            Some(p) => (p.deliver != NEVER).then_some(p.deliver),
            None => (self.qdisc.packets() > 0 && self.ser_free != NEVER)
                .then(|| self.ser_free.max(self.nonempty_since)),
        };
        [
            line,
            self.express.front().map(|p| p.deliver),
            self.next_step_at(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Hands out the next packet due at or before `now`, with its deadline
    /// (the caller measures its own lateness against it).
    pub fn dequeue(&mut self, now: Nanos) -> Option<(Nanos, T)> {
        self.dequeue_full(now).map(|d| (d.deadline, d.item))
    }

    /// As [`Link::dequeue`], with what the caller must do to the packet:
    /// mark it CE, send it twice, flip a bit.
    pub fn dequeue_full(&mut self, now: Nanos) -> Option<Delivery<T>> {
        self.advance(now);
        let due = |q: &VecDeque<InFlight<T>>| q.front().map(|p| p.deliver).filter(|d| *d <= now);
        let p = match (due(&self.line), due(&self.express)) {
            (Some(a), Some(b)) if b < a => self.express.pop_front(),
            (Some(_), _) => self.line.pop_front(),
            (None, Some(_)) => self.express.pop_front(),
            (None, None) => None,
        }?;
        self.stats.delivered_packets += 1;
        self.stats.delivered_bytes += u64::from(p.size);
        let sec = (p.deliver.saturating_sub(self.start) / 1_000_000_000) as usize;
        let per_s = &mut self.stats.delivered_bytes_per_s;
        if per_s.len() <= sec {
            per_s.resize(sec + 1, 0);
        }
        per_s[sec] += u64::from(p.size);
        self.stats.reordered += u64::from(p.tags.reorder);
        self.stats.duplicated += u64::from(p.tags.duplicate);
        self.stats.corrupted += u64::from(p.tags.corrupt.is_some());
        Some(Delivery {
            deadline: p.deliver,
            arrival: p.arrival,
            departure: p.departure,
            item: p.item,
            ce: p.ce,
            duplicate: p.tags.duplicate,
            corrupt: p.tags.corrupt,
        })
    }
}

#[cfg(test)]
mod tests;
