//! Queue disciplines: what a link does with packets that wait for the
//! serialiser. Each is its own module behind one trait, [`Qdisc`], the way
//! Rattan's cells are; the [`crate::Link`] only asks for the next packet
//! when the serialiser is free (at *that* time, so an AQM sees each
//! packet's true sojourn) and never branches on the kind.
//!
//! - [`Fifo`]: drop-tail (the default, and Mahimahi's `droptail`) or
//!   drop-head (`drophead`: on overflow the oldest packets go, so the
//!   freshest data gets through);
//! - [`codel::Codel`]: CoDel, RFC 8289 (target 5 ms, interval 100 ms);
//! - [`pie::Pie`]: PIE, RFC 8033 (target 15 ms, update every 15 ms);
//! - [`fq_codel::FqCodel`]: FQ-CoDel, RFC 8290 (1024 flow queues, DRR with
//!   a quantum of one MTU, CoDel per flow), Linux's default qdisc.
//!
//! With `ecn`, the AQM kinds mark ECN-capable packets CE instead of
//! dropping them (RFC 3168); the caller rewrites the IP header.
//! Everything runs on the caller's clock and the caller's seed.

pub mod codel;
pub mod fq_codel;
pub mod pie;

use crate::{Nanos, QueueLimit};
use std::collections::VecDeque;
use tcpwise_units::{UnitError, parse_duration};

/// One packet's ECN codepoint (RFC 3168), as the IP header carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ecn {
    /// Not ECN-capable: an AQM must drop it.
    #[default]
    NotEct,
    /// ECT(0) or ECT(1): may be marked instead.
    Ect,
    /// Congestion experienced (already marked, or marked here).
    Ce,
}

/// A packet waiting in a queue.
#[derive(Debug)]
pub struct Packet<T> {
    /// When it entered the link.
    pub arrival: Nanos,
    /// Bytes on the wire.
    pub size: u32,
    /// Flow hash (the 5-tuple's), for fair queueing.
    pub flow: u64,
    /// Its ECN codepoint; `Ce` after a mark here.
    pub ecn: Ecn,
    /// What the impairments decided for it at the entrance.
    pub tags: crate::impair::Verdict,
    /// The caller's packet.
    pub item: T,
}

/// Why a queue let a packet go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueDrop {
    /// The queue was full (drop-tail, drop-head, FQ-CoDel's fattest flow).
    Overflow,
    /// The AQM chose to drop it (CoDel, PIE).
    Aqm,
}

/// What a queue did besides handing out packets: packets it dropped (for
/// the caller to count and recycle) and how many it marked CE.
#[derive(Debug)]
pub struct Effects<T> {
    /// Dropped packets, with why.
    pub dropped: Vec<(QueueDrop, T)>,
    /// Packets marked CE.
    pub marked: u64,
}

impl<T> Default for Effects<T> {
    fn default() -> Self {
        Effects {
            dropped: Vec::new(),
            marked: 0,
        }
    }
}

impl<T> Effects<T> {
    fn drop(&mut self, why: QueueDrop, p: Packet<T>) {
        self.dropped.push((why, p.item));
    }
}

/// What [`Qdisc::enqueue`] says of the arriving packet.
pub type Refused<T> = Result<(), (QueueDrop, Packet<T>)>;

/// A queue discipline.
pub trait Qdisc<T>: Send {
    /// A packet arrives at `now`: queue it, or refuse it (`Err`, with why);
    /// packets already queued that it pushes out go into `fx`.
    fn enqueue(&mut self, now: Nanos, p: Packet<T>, fx: &mut Effects<T>) -> Refused<T>;
    /// The serialiser is free at `now`: the next packet to send, if any,
    /// after whatever the discipline drops or marks on the way.
    fn dequeue(&mut self, now: Nanos, fx: &mut Effects<T>) -> Option<Packet<T>>;
    /// Bytes waiting.
    fn bytes(&self) -> u64;
    /// Packets waiting.
    fn packets(&self) -> usize;
}

/// The size of one MTU-sized packet, the unit of quanta and "one packet left".
pub const MTU: u32 = 1514;

/// A queue limit against a backlog.
fn over(limit: QueueLimit, bytes: u64, packets: usize, size: u32) -> bool {
    match limit {
        QueueLimit::Bytes(b) => bytes + u64::from(size) > b,
        QueueLimit::Packets(n) => packets as u64 + 1 > n,
        QueueLimit::Both {
            packets: n,
            bytes: b,
        } => {
            over(QueueLimit::Packets(n), bytes, packets, size)
                || over(QueueLimit::Bytes(b), bytes, packets, size)
        }
    }
}

/// A first-in first-out queue with a limit: drop-tail or drop-head.
pub struct Fifo<T> {
    q: VecDeque<Packet<T>>,
    bytes: u64,
    limit: QueueLimit,
    head_drop: bool,
}

impl<T> Fifo<T> {
    /// A FIFO of `limit`; `head_drop` drops the oldest on overflow.
    pub fn new(limit: QueueLimit, head_drop: bool) -> Fifo<T> {
        Fifo {
            q: VecDeque::new(),
            bytes: 0,
            limit,
            head_drop,
        }
    }

    /// Appends without a limit check (the AQMs check their own).
    pub(crate) fn push(&mut self, p: Packet<T>) {
        self.bytes += u64::from(p.size);
        self.q.push_back(p);
    }

    /// Removes the oldest.
    pub(crate) fn pop(&mut self) -> Option<Packet<T>> {
        let p = self.q.pop_front()?;
        self.bytes -= u64::from(p.size);
        Some(p)
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets waiting.
    pub fn packets(&self) -> usize {
        self.q.len()
    }

    /// Whether `size` more bytes would exceed the limit.
    pub(crate) fn would_overflow(&self, size: u32) -> bool {
        over(self.limit, self.bytes, self.q.len(), size)
    }
}

impl<T: Send> Qdisc<T> for Fifo<T> {
    fn enqueue(&mut self, _now: Nanos, p: Packet<T>, fx: &mut Effects<T>) -> Refused<T> {
        if !self.would_overflow(p.size) {
            self.push(p);
            return Ok(());
        }
        if !self.head_drop {
            return Err((QueueDrop::Overflow, p));
        }
        while !self.q.is_empty() && self.would_overflow(p.size) {
            let old = self.pop().expect("not empty");
            fx.drop(QueueDrop::Overflow, old);
        }
        if self.would_overflow(p.size) {
            return Err((QueueDrop::Overflow, p));
        }
        self.push(p);
        Ok(())
    }

    fn dequeue(&mut self, _now: Nanos, _fx: &mut Effects<T>) -> Option<Packet<T>> {
        self.pop()
    }

    fn bytes(&self) -> u64 {
        Fifo::bytes(self)
    }

    fn packets(&self) -> usize {
        Fifo::packets(self)
    }
}

/// Which discipline, with its parameters (limits are set apart, in
/// [`QueueLimit`], so a bare `--queue 256KB` keeps meaning drop-tail).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Drop-tail FIFO.
    DropTail,
    /// Drop-head FIFO.
    DropHead,
    /// CoDel.
    Codel(codel::Params),
    /// PIE.
    Pie(pie::Params),
    /// FQ-CoDel.
    FqCodel(fq_codel::Params),
}

/// A discipline as `--queue` names it: kind, parameters, optional limit
/// (`None`: the path's default) and ECN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueSpec {
    /// The discipline.
    pub kind: Kind,
    /// Its limit, if given.
    pub limit: Option<LimitSpec>,
    /// Mark ECN-capable packets instead of dropping them (AQM kinds).
    pub ecn: bool,
}

/// A limit as written: bytes, packets, or multiples of the path's BDP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitSpec {
    /// A fixed limit.
    Fixed(QueueLimit),
    /// This many bandwidth-delay products.
    Bdp(f64),
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec {
            kind: Kind::DropTail,
            limit: None,
            ecn: false,
        }
    }
}

impl QueueSpec {
    /// The name `--queue` takes.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::DropTail => "droptail",
            Kind::DropHead => "drophead",
            Kind::Codel(_) => "codel",
            Kind::Pie(_) => "pie",
            Kind::FqCodel(_) => "fq-codel",
        }
    }

    /// Builds the queue with its resolved `limit`, seeded with `seed`.
    pub fn build<T: Send + 'static>(&self, limit: QueueLimit, seed: u64) -> Box<dyn Qdisc<T>> {
        match self.kind {
            Kind::DropTail => Box::new(Fifo::new(limit, false)),
            Kind::DropHead => Box::new(Fifo::new(limit, true)),
            Kind::Codel(p) => Box::new(codel::Codel::new(p, limit, self.ecn)),
            Kind::Pie(p) => Box::new(pie::Pie::new(p, limit, self.ecn, seed)),
            Kind::FqCodel(p) => Box::new(fq_codel::FqCodel::new(p, limit, self.ecn)),
        }
    }
}

fn bad(input: &str, why: &'static str) -> UnitError {
    UnitError::Range {
        input: input.to_string(),
        why,
    }
}

/// A queue limit: a size (`400KB`, `1000pkt`) or bandwidth-delay
/// products (`2bdp`), the same in `--queue 2bdp` and `droptail:limit=2bdp`.
fn limit_spec(s: &str, v: &str) -> Result<LimitSpec, UnitError> {
    Ok(match v.strip_suffix("bdp") {
        Some(x) => {
            let m: f64 = x
                .trim()
                .parse()
                .map_err(|_| bad(s, "limit=Nbdp takes a number of bandwidth-delay products"))?;
            if !(m > 0.0 && m.is_finite()) {
                return Err(bad(s, "limit=Nbdp must be positive"));
            }
            LimitSpec::Bdp(m)
        }
        None => LimitSpec::Fixed(v.parse()?),
    })
}

impl std::str::FromStr for QueueSpec {
    type Err = UnitError;

    /// `256KB` / `1000pkt` (drop-tail of that size), or
    /// `KIND[:key=value,...]`: `droptail`, `drophead`, `codel`
    /// (`target=`, `interval=`), `pie` (`target=`, `tupdate=`),
    /// `fq-codel` (`target=`, `interval=`, `flows=`, `quantum=`); every
    /// kind takes `limit=` (`400KB`, `1000pkt`, `2bdp`), the AQM kinds `ecn`.
    fn from_str(s: &str) -> Result<QueueSpec, UnitError> {
        let s = s.trim();
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(QueueSpec {
                limit: Some(limit_spec(s, s)?),
                ..QueueSpec::default()
            });
        }
        let (kind, opts) = s.split_once(':').unwrap_or((s, ""));
        let mut spec = QueueSpec {
            kind: match kind {
                "droptail" | "drop-tail" => Kind::DropTail,
                "drophead" | "drop-head" => Kind::DropHead,
                "codel" => Kind::Codel(codel::Params::default()),
                "pie" => Kind::Pie(pie::Params::default()),
                "fq-codel" | "fq_codel" => Kind::FqCodel(fq_codel::Params::default()),
                _ => {
                    return Err(bad(
                        s,
                        "a queue is a size (256KB, 1000pkt) or droptail, drophead, codel, pie or fq-codel[:key=value,...]",
                    ));
                }
            },
            ..QueueSpec::default()
        };
        let mut seen: Vec<&str> = Vec::new();
        for opt in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
            let dur = || parse_duration(v);
            // A key given twice would be the last one's silently.
            if seen.contains(&k) {
                return Err(bad(s, "a key given twice: give each once"));
            }
            seen.push(k);
            if k == "limit" && seen.iter().any(|k| *k == "packets" || *k == "bytes")
                || (k == "packets" || k == "bytes") && seen.contains(&"limit")
            {
                return Err(bad(
                    s,
                    "limit= and Mahimahi's packets=/bytes= both: give one (packets= and bytes= together hold both limits)",
                ));
            }
            match (&mut spec.kind, k) {
                (_, "limit") => spec.limit = Some(limit_spec(s, v)?),
                // Mahimahi's queue arguments (`--downlink-queue-args`):
                // `packets=N` and `bytes=N`, bare numbers in their unit;
                // both given, both hold, as in `mm-link`.
                (_, "packets" | "bytes") => {
                    let unit = if k == "packets" { "pkt" } else { "B" };
                    let l = mahimahi_limit(s, v, unit)?;
                    spec.limit = Some(match (spec.limit, l) {
                        (
                            Some(LimitSpec::Fixed(QueueLimit::Packets(packets))),
                            LimitSpec::Fixed(QueueLimit::Bytes(bytes)),
                        )
                        | (
                            Some(LimitSpec::Fixed(QueueLimit::Bytes(bytes))),
                            LimitSpec::Fixed(QueueLimit::Packets(packets)),
                        ) => LimitSpec::Fixed(QueueLimit::Both { packets, bytes }),
                        (_, l) => l,
                    });
                }
                (Kind::Codel(_) | Kind::Pie(_) | Kind::FqCodel(_), "ecn") if v.is_empty() => {
                    spec.ecn = true
                }
                (Kind::Codel(p), "target") => p.target = positive(s, dur()?)?,
                (Kind::Codel(p), "interval") => p.interval = positive(s, dur()?)?,
                (Kind::FqCodel(p), "target") => p.codel.target = positive(s, dur()?)?,
                (Kind::FqCodel(p), "interval") => p.codel.interval = positive(s, dur()?)?,
                (Kind::FqCodel(p), "flows") => {
                    p.flows = v
                        .parse()
                        .ok()
                        .filter(|n| (1..=65_536).contains(n))
                        .ok_or_else(|| bad(s, "flows= takes 1 to 65536"))?
                }
                (Kind::FqCodel(p), "quantum") => {
                    p.quantum = u32::try_from(tcpwise_units::parse_size(v)?)
                        .ok()
                        .filter(|q| *q >= 64)
                        .ok_or_else(|| bad(s, "quantum= takes at least 64 bytes"))?
                }
                (Kind::Pie(p), "target") => p.target = positive(s, dur()?)?,
                (Kind::Pie(p), "tupdate") => p.tupdate = positive(s, dur()?)?,
                _ => {
                    return Err(bad(
                        s,
                        "a key this queue kind does not take (codel: target, interval; pie: target, tupdate; fq-codel: target, interval, flows, quantum; all: limit=400KB|100pkt|2bdp, or Mahimahi's packets=100, bytes=30000; AQMs: ecn)",
                    ));
                }
            }
        }
        Ok(spec)
    }
}

/// Mahimahi's `packets=N` / `bytes=N`: a bare count in that unit.
fn mahimahi_limit(s: &str, v: &str, unit: &str) -> Result<LimitSpec, UnitError> {
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_digit()) {
        return Err(bad(
            s,
            "Mahimahi's packets= and bytes= take a bare count (packets=100, bytes=30000)",
        ));
    }
    limit_spec(s, &format!("{v}{unit}"))
}

fn positive(s: &str, d: Nanos) -> Result<Nanos, UnitError> {
    if d == 0 {
        Err(bad(s, "a time here must be more than 0"))
    } else {
        Ok(d)
    }
}

#[cfg(test)]
mod tests;
