//! The scheduler's limit for threads: `tcpwise lab`'s own experiments run
//! their testbeds at once under the same [`Limit`] a sweep's cells do.
//!
//! Why the same rule: it is the one this machine kind was measured to
//! hold (docs/sweep.md: 4 testbeds and 100 Mbit/s of link rate a core kept
//! every group of a 48-cell matrix within 2 % of a serial run). Each lab
//! testbed takes a slot before its namespaces exist and gives it back
//! after they are gone; a testbed whose link has no mean rate (unlimited)
//! runs alone. A free slot goes to the earliest waiting testbed that
//! fits (first fit), not strictly to the earliest: the lab's testbeds
//! differ by 100 times in rate, and served strictly in order (as a sweep
//! starts its cells) the first full run held every small testbed behind
//! one of 151 Mbit/s that did not fit (idle selection started at 99 s,
//! cold start's 600 ms path after 380 s). A large testbed can wait while
//! small ones go; every testbed of a run ends, so it never waits for
//! ever. A thread holds at most one slot at a time (a testbed finishes
//! before its thread starts the next), so waiting cannot deadlock.

use super::run::Limit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Testbeds at once, within a [`Limit`].
#[derive(Debug)]
pub struct Slots {
    limit: Limit,
    state: Mutex<State>,
    turn: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The next ticket handed out.
    next: u64,
    /// Waiting testbeds: (ticket, demand), earliest first.
    waiting: Vec<(u64, Option<u64>)>,
    /// Running testbeds: (ticket, demand).
    running: Vec<(u64, Option<u64>)>,
    /// The most that ran at once.
    most: usize,
}

/// A held slot; dropping it gives it back.
#[derive(Debug)]
pub struct Slot {
    slots: Arc<Slots>,
    ticket: u64,
}

impl Slots {
    /// Slots within `limit`.
    pub fn new(limit: Limit) -> Arc<Slots> {
        Arc::new(Slots {
            limit,
            state: Mutex::default(),
            turn: Condvar::new(),
        })
    }

    /// Slots within [`Limit::auto`] for this machine's cores.
    pub fn for_this_machine() -> Arc<Slots> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Slots::new(Limit::auto(cores))
    }

    /// The limit, for the line that prints it.
    pub fn limit(&self) -> &Limit {
        &self.limit
    }

    /// The most testbeds that held a slot at once so far.
    pub fn most(&self) -> usize {
        self.lock().most
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a slot for a testbed of `demand` (its link rate, bit/s;
    /// `None`: alone). `None` back when `cancel` was set while waiting
    /// (the run is stopping: no slot is served after that).
    pub fn take(self: &Arc<Slots>, demand: Option<u64>, cancel: &AtomicBool) -> Option<Slot> {
        let mut st = self.lock();
        let ticket = st.next;
        st.next += 1;
        st.waiting.push((ticket, demand));
        loop {
            if cancel.load(Ordering::Relaxed) {
                st.waiting.retain(|w| w.0 != ticket);
                self.turn.notify_all();
                return None;
            }
            let rates: Vec<Option<u64>> = st.running.iter().map(|r| r.1).collect();
            let first_fit = st
                .waiting
                .iter()
                .find(|w| self.limit.fits(w.1, &rates))
                .map(|w| w.0);
            if first_fit == Some(ticket) {
                st.waiting.retain(|w| w.0 != ticket);
                st.running.push((ticket, demand));
                st.most = st.most.max(st.running.len());
                self.turn.notify_all();
                return Some(Slot {
                    slots: self.clone(),
                    ticket,
                });
            }
            // A timeout, so a cancel is seen without anyone notifying.
            st = self
                .turn
                .wait_timeout(st, Duration::from_millis(200))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut st = self.slots.lock();
        st.running.retain(|r| r.0 != self.ticket);
        drop(st);
        self.slots.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_the_limit_and_go_to_the_first_that_fits() {
        let slots = Slots::new(Limit::auto(1)); // 4 testbeds, 100 Mbit/s
        let cancel = AtomicBool::new(false);
        let a = slots.take(Some(60_000_000), &cancel).unwrap();
        let b = slots.take(Some(30_000_000), &cancel).unwrap();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            // 50 Mbit/s does not fit beside 90: it waits, and the 5 Mbit/s
            // one that asked after it goes first.
            s.spawn(|| {
                let _big = slots.take(Some(50_000_000), &cancel).unwrap();
                order.lock().unwrap().push("big");
            });
            while slots.lock().next < 3 {
                std::thread::yield_now();
            }
            let small = slots.take(Some(5_000_000), &cancel).unwrap();
            order.lock().unwrap().push("small");
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(
                *order.lock().unwrap(),
                vec!["small"],
                "50 beside 95 is over 100"
            );
            assert_eq!(slots.most(), 3);
            drop(small);
            drop(a);
        });
        assert_eq!(*order.lock().unwrap(), vec!["small", "big"]);
        // Four testbeds at most, whatever their rates.
        let held: Vec<Slot> = (0..3)
            .map(|_| slots.take(Some(1), &cancel).unwrap())
            .collect();
        std::thread::scope(|s| {
            let h = s.spawn(|| slots.take(Some(1), &cancel).map(|_| ()));
            std::thread::sleep(Duration::from_millis(50));
            assert!(!h.is_finished(), "b and three more are four");
            drop(b);
            assert!(h.join().unwrap().is_some());
        });
        drop(held);
        // Alone: an unlimited link waits for an empty machine.
        let c = slots.take(Some(1), &cancel).unwrap();
        std::thread::scope(|s| {
            let h = s.spawn(|| slots.take(None, &cancel).map(|_| ()));
            std::thread::sleep(Duration::from_millis(50));
            assert!(!h.is_finished());
            drop(c);
            assert!(h.join().unwrap().is_some());
        });
    }

    #[test]
    fn a_cancel_frees_the_waiters() {
        let slots = Slots::new(Limit::auto(1));
        let cancel = AtomicBool::new(false);
        let _alone = slots.take(None, &cancel).unwrap();
        std::thread::scope(|s| {
            let h = s.spawn(|| slots.take(Some(1), &cancel).is_none());
            std::thread::sleep(Duration::from_millis(50));
            cancel.store(true, Ordering::Relaxed);
            assert!(h.join().unwrap());
        });
    }
}
