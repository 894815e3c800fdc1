//! FQ-CoDel, RFC 8290 (Linux's default qdisc): packets are hashed by flow
//! into `flows` queues, served by deficit round robin with a quantum of
//! one MTU, new flows first (so a sparse flow, like a ping or a DNS query,
//! overtakes bulk ones), each queue under its own CoDel. When the shared
//! limit is reached, the head of the fattest queue is dropped.

use super::codel::{self, State};
use super::{Effects, Fifo, MTU, Packet, Qdisc, QueueDrop, Refused};
use crate::{Nanos, QueueLimit};
use std::collections::VecDeque;

/// FQ-CoDel's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// CoDel per flow.
    pub codel: codel::Params,
    /// Number of flow queues (default 1024).
    pub flows: u32,
    /// DRR quantum in bytes (default one MTU, 1514).
    pub quantum: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            codel: codel::Params::default(),
            flows: 1024,
            quantum: MTU,
        }
    }
}

struct Flow<T> {
    q: Fifo<T>,
    codel: State,
    deficit: i64,
    /// In `new` or `old` (or neither).
    listed: bool,
}

/// An FQ-CoDel queue.
pub struct FqCodel<T> {
    flows: Vec<Flow<T>>,
    new: VecDeque<usize>,
    old: VecDeque<usize>,
    limit: QueueLimit,
    bytes: u64,
    packets: usize,
    p: Params,
    ecn: bool,
}

impl<T> FqCodel<T> {
    /// FQ-CoDel with `p`, a shared `limit`, ECN marking if `ecn`.
    pub fn new(p: Params, limit: QueueLimit, ecn: bool) -> FqCodel<T> {
        FqCodel {
            flows: (0..p.flows)
                .map(|_| Flow {
                    // Per-flow FIFOs are unbounded: the shared limit governs.
                    q: Fifo::new(QueueLimit::Bytes(u64::MAX / 2), false),
                    codel: State::default(),
                    deficit: 0,
                    listed: false,
                })
                .collect(),
            new: VecDeque::new(),
            old: VecDeque::new(),
            limit,
            bytes: 0,
            packets: 0,
            p,
            ecn,
        }
    }

    fn over(&self) -> bool {
        match self.limit {
            QueueLimit::Bytes(b) => self.bytes > b,
            QueueLimit::Packets(n) => self.packets as u64 > n,
            QueueLimit::Both { packets, bytes } => {
                self.packets as u64 > packets || self.bytes > bytes
            }
        }
    }

    /// Drops the head of the fattest flow (RFC 8290, 4.1).
    fn drop_fattest(&mut self, fx: &mut Effects<T>) {
        let Some(i) = (0..self.flows.len()).max_by_key(|&i| self.flows[i].q.bytes()) else {
            return;
        };
        if let Some(p) = self.flows[i].q.pop() {
            self.bytes -= u64::from(p.size);
            self.packets -= 1;
            fx.drop(QueueDrop::Overflow, p);
        }
    }
}

impl<T: Send> Qdisc<T> for FqCodel<T> {
    fn enqueue(&mut self, _now: Nanos, p: Packet<T>, fx: &mut Effects<T>) -> Refused<T> {
        let i = (p.flow % u64::from(self.p.flows)) as usize;
        self.bytes += u64::from(p.size);
        self.packets += 1;
        let f = &mut self.flows[i];
        f.q.push(p);
        if !f.listed {
            f.listed = true;
            f.deficit = i64::from(self.p.quantum);
            self.new.push_back(i);
        }
        while self.over() {
            self.drop_fattest(fx);
        }
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, fx: &mut Effects<T>) -> Option<Packet<T>> {
        loop {
            let (from_new, i) = match self.new.front() {
                Some(&i) => (true, i),
                None => (false, *self.old.front()?),
            };
            let f = &mut self.flows[i];
            if f.deficit <= 0 {
                f.deficit += i64::from(self.p.quantum);
                if from_new {
                    self.new.pop_front();
                } else {
                    self.old.pop_front();
                }
                self.old.push_back(i);
                continue;
            }
            let before = (f.q.bytes(), f.q.packets());
            let got = f.codel.dequeue(&mut f.q, now, &self.p.codel, self.ecn, fx);
            // CoDel's drops leave the shared counts too.
            self.bytes -= before.0 - f.q.bytes();
            self.packets -= before.1 - f.q.packets();
            match got {
                Some(p) => {
                    f.deficit -= i64::from(p.size);
                    return Some(p);
                }
                None => {
                    // Empty: a new flow goes to the old list once (so it
                    // cannot get priority again at once), an old one leaves.
                    if from_new {
                        self.new.pop_front();
                        if !self.old.is_empty() {
                            self.old.push_back(i);
                            continue;
                        }
                    } else {
                        self.old.pop_front();
                    }
                    self.flows[i].listed = false;
                }
            }
        }
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn packets(&self) -> usize {
        self.packets
    }
}
