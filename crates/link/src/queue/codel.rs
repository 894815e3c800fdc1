//! CoDel, RFC 8289: drop (or mark) at dequeue when packets have waited
//! longer than `target` for at least `interval`, at a rate that grows as
//! the square root of the drops, until the sojourn time falls below
//! `target` again. Follows the RFC's pseudocode (section 5), including
//! the reuse of the previous drop count when dropping resumes soon.

use super::{Ecn, Effects, Fifo, MTU, Packet, Qdisc, QueueDrop, Refused};
use crate::{Nanos, QueueLimit};

/// CoDel's two parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Acceptable standing queue delay (default 5 ms).
    pub target: Nanos,
    /// Window over which the delay must stay above target (default 100 ms).
    pub interval: Nanos,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            target: 5_000_000,
            interval: 100_000_000,
        }
    }
}

/// The control loop of one queue (FQ-CoDel keeps one per flow).
#[derive(Debug, Clone, Default)]
pub struct State {
    first_above_time: Option<Nanos>,
    drop_next: Nanos,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

impl State {
    fn control_law(&self, t: Nanos, p: &Params) -> Nanos {
        t + (p.interval as f64 / f64::from(self.count.max(1)).sqrt()) as Nanos
    }

    /// RFC 8289's `dodequeue`: pops one packet and says whether CoDel
    /// would drop it.
    fn pop<T>(&mut self, q: &mut Fifo<T>, now: Nanos, p: &Params) -> (Option<Packet<T>>, bool) {
        let Some(pkt) = q.pop() else {
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_sub(pkt.arrival);
        if sojourn < p.target || q.bytes() <= u64::from(MTU) {
            // Went below target (or the queue holds less than a packet).
            self.first_above_time = None;
            return (Some(pkt), false);
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + p.interval);
                (Some(pkt), false)
            }
            Some(t) => (Some(pkt), now >= t),
        }
    }

    /// RFC 8289's `dequeue`: the next packet of `q` at `now`, dropping or
    /// marking (with `ecn`) as the control law says.
    pub fn dequeue<T>(
        &mut self,
        q: &mut Fifo<T>,
        now: Nanos,
        p: &Params,
        ecn: bool,
        fx: &mut Effects<T>,
    ) -> Option<Packet<T>> {
        let (mut pkt, mut ok_to_drop) = self.pop(q, now, p);
        let Some(mut cur) = pkt.take() else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            } else {
                while now >= self.drop_next && self.dropping {
                    self.count += 1;
                    if ecn && cur.ecn != Ecn::NotEct {
                        // Mark instead of dropping: the packet goes on.
                        mark(&mut cur, fx);
                        self.drop_next = self.control_law(self.drop_next, p);
                        return Some(cur);
                    }
                    fx.drop(QueueDrop::Aqm, cur);
                    let (next, ok) = self.pop(q, now, p);
                    let Some(n) = next else {
                        self.dropping = false;
                        return None;
                    };
                    cur = n;
                    ok_to_drop = ok;
                    if !ok_to_drop {
                        self.dropping = false;
                    } else {
                        self.drop_next = self.control_law(self.drop_next, p);
                    }
                }
            }
        } else if ok_to_drop {
            if ecn && cur.ecn != Ecn::NotEct {
                mark(&mut cur, fx);
            } else {
                fx.drop(QueueDrop::Aqm, cur);
                let (next, _) = self.pop(q, now, p);
                match next {
                    Some(n) => cur = n,
                    None => {
                        self.enter_dropping(now, p);
                        return None;
                    }
                }
            }
            self.enter_dropping(now, p);
        }
        Some(cur)
    }

    fn enter_dropping(&mut self, now: Nanos, p: &Params) {
        self.dropping = true;
        // Drop at a rate close to the last one if we dropped recently.
        let delta = self.count.saturating_sub(self.lastcount);
        self.count = if delta > 1 && now.saturating_sub(self.drop_next) < 16 * p.interval {
            delta
        } else {
            1
        };
        self.drop_next = self.control_law(now, p);
        self.lastcount = self.count;
    }
}

fn mark<T>(p: &mut Packet<T>, fx: &mut Effects<T>) {
    if p.ecn != Ecn::Ce {
        p.ecn = Ecn::Ce;
        fx.marked += 1;
    }
}

/// A CoDel queue: a FIFO (its limit only a backstop) and one control loop.
pub struct Codel<T> {
    q: Fifo<T>,
    st: State,
    p: Params,
    ecn: bool,
}

impl<T> Codel<T> {
    /// CoDel with `p`, a hard `limit`, and ECN marking if `ecn`.
    pub fn new(p: Params, limit: QueueLimit, ecn: bool) -> Codel<T> {
        Codel {
            q: Fifo::new(limit, false),
            st: State::default(),
            p,
            ecn,
        }
    }
}

impl<T: Send> Qdisc<T> for Codel<T> {
    fn enqueue(&mut self, _now: Nanos, p: Packet<T>, _fx: &mut Effects<T>) -> Refused<T> {
        if self.q.would_overflow(p.size) {
            return Err((QueueDrop::Overflow, p));
        }
        self.q.push(p);
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, fx: &mut Effects<T>) -> Option<Packet<T>> {
        self.st.dequeue(&mut self.q, now, &self.p, self.ecn, fx)
    }

    fn bytes(&self) -> u64 {
        self.q.bytes()
    }

    fn packets(&self) -> usize {
        self.q.packets()
    }
}
