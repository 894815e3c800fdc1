//! When the io_uring loop sleeps, and for how many completions: interrupt
//! coalescing, as a network card's adaptive receive coalescing does it.
//!
//! Why: a loop that sleeps whenever it has caught up sleeps once every
//! few dozen requests under a closed-loop load, and on this VM a sleep and
//! its wake-up cost the server about 6 us of CPU (a halted virtual CPU and
//! the interrupt that restarts it): a tenth of its cost per request at 64
//! connections. Waiting for a batch instead, once the load shows there is
//! one to come, makes the sleeps rarer and the turns larger
//! (`docs/bench.md`, "Coalescing", has the measurements). The bounds keep
//! it from costing latency where there is no batch: it waits only after a
//! turn that had [`AFTER`] completions or more (a lone request at low load
//! is never held), for at most half the connections active in the last
//! [`WINDOW`] (a client with four connections is never waited on for
//! eight), at least [`MIN`] and at most [`MAX`], and never longer than
//! [`WAIT`]; and never when completions are already pending.

use std::time::Duration;
use tokio::time::Instant;

/// A turn with at least this many completions marks a load worth batching.
pub const AFTER: usize = 4;
/// The fewest completions worth a timed wait: waiting for 4 (8
/// connections) cost 5 % more CPU a request than sleeping for one, for 8
/// about as much, for 16 (32 connections) 3.5 % less (`docs/bench.md`):
/// the short timer a batch wait arms costs about what a few sleeps do.
pub const MIN: usize = 16;
/// The most completions waited for at once.
pub const MAX: usize = 32;
/// The longest a batch is waited for: the latency it may add.
pub const WAIT: Duration = Duration::from_micros(50);
/// How far back a connection counts as active.
pub const WINDOW: Duration = Duration::from_millis(1);

/// The loop's recent load: completions in the last turn, and the
/// connections that received in the current and the last window.
#[derive(Debug)]
pub struct Coalesce {
    epoch: u32,
    since: Instant,
    counting: usize,
    active: usize,
    last_turn: usize,
}

impl Coalesce {
    pub fn new(now: Instant) -> Coalesce {
        Coalesce {
            epoch: 1,
            since: now,
            counting: 0,
            active: 0,
            last_turn: 0,
        }
    }

    /// A connection received: `seen` is its mark, so that each counts
    /// once a window however many requests it sends.
    pub fn received(&mut self, seen: &mut u32) {
        if *seen != self.epoch {
            *seen = self.epoch;
            self.counting += 1;
        }
    }

    /// A turn reaped `events` completions at `now`.
    pub fn turn(&mut self, now: Instant, events: usize) {
        self.last_turn = events;
        if now.duration_since(self.since) >= WINDOW {
            self.active = self.counting;
            self.counting = 0;
            // Zero is every new connection's mark: skip it.
            self.epoch = self.epoch.wrapping_add(1).max(1);
            self.since = now;
        }
    }

    /// How many completions to wait for, and for how long at most, when
    /// the loop is about to sleep with nothing `pending`; `None`: wait for
    /// one, as long as the loop's timers allow.
    pub fn batch(&self, pending: bool) -> Option<(usize, Duration)> {
        let k = (self.active / 2).min(MAX);
        (!pending && self.last_turn >= AFTER && k >= MIN).then_some((k, WAIT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window in which `conns` connections each received once, then a
    /// turn of `events` completions.
    fn loaded(conns: usize, events: usize) -> Coalesce {
        let t = Instant::now();
        let mut c = Coalesce::new(t);
        let mut marks = vec![0u32; conns];
        for m in &mut marks {
            c.received(m);
            c.received(m);
        }
        c.turn(t + WINDOW, events);
        c
    }

    #[test]
    fn waits_for_half_the_active_connections_capped() {
        assert_eq!(loaded(64, 10).batch(false), Some((32, WAIT)));
        assert_eq!(loaded(40, 10).batch(false), Some((20, WAIT)));
        assert_eq!(loaded(32, 10).batch(false), Some((MIN, WAIT)));
        assert_eq!(loaded(1024, 10).batch(false), Some((MAX, WAIT)));
    }

    #[test]
    fn never_holds_low_load_few_clients_or_pending_work() {
        // A turn of fewer than AFTER completions: requests come one by one.
        assert_eq!(loaded(64, AFTER - 1).batch(false), None);
        // Fewer than 2 * MIN connections: a batch too small to pay for
        // the wait's timer.
        assert_eq!(loaded(31, 10).batch(false), None);
        assert_eq!(loaded(3, 10).batch(false), None);
        // Completions already waiting are taken at once.
        assert_eq!(loaded(64, 10).batch(true), None);
        // Nothing counted yet.
        assert_eq!(Coalesce::new(Instant::now()).batch(false), None);
    }

    #[test]
    fn a_connection_counts_once_a_window_and_old_windows_fade() {
        let t = Instant::now();
        let mut c = Coalesce::new(t);
        let mut m = 0;
        for _ in 0..100 {
            c.received(&mut m);
        }
        c.turn(t + WINDOW, 10);
        assert_eq!(c.active, 1);
        // A window with nobody receiving leaves nobody active.
        c.turn(t + 2 * WINDOW, 10);
        assert_eq!(c.active, 0);
        assert_eq!(c.batch(false), None);
        // Within a window the count is not replaced.
        c.received(&mut m);
        c.turn(t + 2 * WINDOW + WINDOW / 2, 10);
        assert_eq!(c.active, 0);
    }
}
