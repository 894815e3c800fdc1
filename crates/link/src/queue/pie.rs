//! PIE, RFC 8033: a drop probability updated every `tupdate` from the
//! queueing delay (how far from `target`, and which way it moves), applied
//! to arriving packets, with a 150 ms burst allowance and the RFC's
//! auto-tuning of the step size. The delay is the sojourn time of the last
//! packet to leave (the timestamp method Linux uses), not a rate estimate.
//! Updates happen on the caller's clock, lazily, for every `tupdate`
//! boundary passed.

use super::{Ecn, Effects, Fifo, MTU, Packet, Qdisc, QueueDrop, Refused};
use crate::{Nanos, QueueLimit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// PIE's parameters (alpha and beta are the RFC's, fixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Target queue delay (default 15 ms).
    pub target: Nanos,
    /// Update interval (default 15 ms).
    pub tupdate: Nanos,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            target: 15_000_000,
            tupdate: 15_000_000,
        }
    }
}

const ALPHA: f64 = 0.125;
const BETA: f64 = 1.25;
const MAX_BURST: Nanos = 150_000_000;
/// Above this drop probability, ECN-capable packets are dropped too (RFC 8033, 5.1).
const MARK_ECN_TH: f64 = 0.1;

/// A PIE queue.
pub struct Pie<T> {
    q: Fifo<T>,
    p: Params,
    ecn: bool,
    rng: ChaCha8Rng,
    prob: f64,
    qdelay: Nanos,
    qdelay_old: Nanos,
    burst_allowance: Nanos,
    next_update: Option<Nanos>,
}

impl<T> Pie<T> {
    /// PIE with `p`, a hard `limit`, ECN marking if `ecn`, seeded.
    pub fn new(p: Params, limit: QueueLimit, ecn: bool, seed: u64) -> Pie<T> {
        Pie {
            q: Fifo::new(limit, false),
            p,
            ecn,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15),
            prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: MAX_BURST,
            next_update: None,
        }
    }

    /// The drop probability now (for tests and statistics).
    pub fn probability(&self) -> f64 {
        self.prob
    }

    fn catch_up(&mut self, now: Nanos) {
        let next = *self.next_update.get_or_insert(now + self.p.tupdate);
        if now < next {
            return;
        }
        let missed = (now - next) / self.p.tupdate + 1;
        // An idle link that missed many updates only needs the decay's result.
        for _ in 0..missed.min(1000) {
            self.update();
        }
        self.next_update = Some(next + missed * self.p.tupdate);
    }

    fn update(&mut self) {
        let qdelay = if self.q.packets() == 0 {
            0
        } else {
            self.qdelay
        };
        let s = |n: Nanos| n as f64 / 1e9;
        let mut delta =
            ALPHA * (s(qdelay) - s(self.p.target)) + BETA * (s(qdelay) - s(self.qdelay_old));
        // Auto-tuning: small probabilities move in small steps.
        let p = self.prob;
        delta /= if p < 0.000_001 {
            2048.0
        } else if p < 0.000_01 {
            512.0
        } else if p < 0.000_1 {
            128.0
        } else if p < 0.001 {
            32.0
        } else if p < 0.01 {
            8.0
        } else if p < 0.1 {
            2.0
        } else {
            1.0
        };
        if p >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        let mut np = p + delta;
        if qdelay > 250_000_000 {
            np += 0.02;
        }
        if qdelay == 0 && self.qdelay_old == 0 {
            np *= 0.98;
        }
        self.prob = np.clamp(0.0, 1.0);
        self.burst_allowance = self.burst_allowance.saturating_sub(self.p.tupdate);
        if self.prob == 0.0 && qdelay < self.p.target / 2 && self.qdelay_old < self.p.target / 2 {
            self.burst_allowance = MAX_BURST;
        }
        self.qdelay_old = qdelay;
    }
}

impl<T: Send> Qdisc<T> for Pie<T> {
    fn enqueue(&mut self, now: Nanos, mut pkt: Packet<T>, fx: &mut Effects<T>) -> Refused<T> {
        self.catch_up(now);
        if self.q.would_overflow(pkt.size) {
            return Err((QueueDrop::Overflow, pkt));
        }
        let spared = self.burst_allowance > 0
            || (self.qdelay_old < self.p.target / 2 && self.prob < 0.2)
            || self.q.bytes() <= 2 * u64::from(MTU);
        if !spared && self.rng.random::<f64>() < self.prob {
            if self.ecn && pkt.ecn != Ecn::NotEct && self.prob <= MARK_ECN_TH {
                if pkt.ecn != Ecn::Ce {
                    pkt.ecn = Ecn::Ce;
                    fx.marked += 1;
                }
            } else {
                return Err((QueueDrop::Aqm, pkt));
            }
        }
        self.q.push(pkt);
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, _fx: &mut Effects<T>) -> Option<Packet<T>> {
        self.catch_up(now);
        let p = self.q.pop()?;
        self.qdelay = now.saturating_sub(p.arrival);
        Some(p)
    }

    fn bytes(&self) -> u64 {
        self.q.bytes()
    }

    fn packets(&self) -> usize {
        self.q.packets()
    }
}
