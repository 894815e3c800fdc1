//! Segments as InnoDB built them on Windows (`os0file.c`,
//! `os_aio_array_reserve_slot`, `os_aio_array_free_slot` and
//! `os_aio_windows_handle` of MariaDB 5.2 and MySQL 5.5): one array of
//! `threads` segments of slots; each client's own thread reserves a slot
//! and hands the I/O to the reaper of the slot's segment; the reaper frees
//! the slot, does the page's work and hands what follows back to the
//! client's thread. Each [`Semantic`] can be left out; left out, it does
//! what the fair `segments` model does.

use super::{Ctx, IDLE_MS, Pending, Segment};
use crate::txn::Io;
use crate::{AioError, Semantic, Semantics};
use crossbeam_channel::{Receiver, Sender};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tcpwise_sys::uring::{Doorbell, Event, Ring};

/// Stack of a client's thread: it only reserves slots and passes I/Os on,
/// and up to 1,024 of them run at once.
const CLIENT_STACK: usize = 64 << 10;

/// Which segment InnoDB prefers for a page: `(offset >> (page shift + 6))
/// % segments`, 64 neighbouring pages (one 1 MiB extent) a segment.
fn preferred(page: u32, segments: usize) -> usize {
    (page as usize / 64) % segments
}

/// The slots' state, under the array's one mutex.
struct Slots {
    busy: Vec<bool>,
    /// Reserved slots in each segment.
    in_segment: Vec<usize>,
    /// The `not_full` events' state (one for the array with
    /// [`Semantic::Spill`], else one a segment): set means "not full".
    set: Vec<bool>,
    /// Threads waiting on each event.
    waiters: Vec<usize>,
}

/// The slot array with its `not_full` events.
struct Array {
    slots: Mutex<Slots>,
    not_full: Vec<Condvar>,
    per_segment: usize,
    segments: usize,
    semantics: Semantics,
}

impl Array {
    fn new(segments: usize, semantics: Semantics) -> Array {
        let per_segment = semantics.slots();
        let events = if semantics.has(Semantic::Spill) {
            1
        } else {
            segments
        };
        Array {
            slots: Mutex::new(Slots {
                busy: vec![false; segments * per_segment],
                in_segment: vec![0; segments],
                set: vec![true; events],
                waiters: vec![0; events],
            }),
            not_full: (0..events).map(|_| Condvar::new()).collect(),
            per_segment,
            segments,
            semantics,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The event a request for `segment` waits on.
    fn event(&self, segment: usize) -> usize {
        if self.semantics.has(Semantic::Spill) {
            0
        } else {
            segment
        }
    }

    /// Whether a request preferring `segment` finds no slot it may take.
    fn full(&self, g: &Slots, segment: usize) -> bool {
        if self.semantics.has(Semantic::Spill) {
            g.in_segment.iter().sum::<usize>() == g.busy.len()
        } else {
            g.in_segment[segment] == self.per_segment
        }
    }

    /// The slots a request preferring `segment` searches, in order: from
    /// the segment's first slot over the whole array, or its own only.
    fn search(&self, segment: usize) -> impl Iterator<Item = usize> + use<> {
        let (n, first) = (self.segments * self.per_segment, segment * self.per_segment);
        let len = if self.semantics.has(Semantic::Spill) {
            n
        } else {
            self.per_segment
        };
        (0..len).map(move |i| (first + i) % n)
    }

    /// Reserves a slot for `p` (marking it blocked when it had to wait);
    /// None once `over` says the run is.
    fn reserve(&self, p: &mut Pending, over: impl Fn() -> bool) -> Option<usize> {
        let segment = preferred(p.io.page, self.segments);
        let ev = self.event(segment);
        let mut g = self.lock();
        while self.full(&g, segment) {
            p.blocked = true;
            g.waiters[ev] += 1;
            let wait = Duration::from_millis(IDLE_MS);
            // A manual-reset event: wait until it is set (every waiter
            // wakes then), then look again, as `goto loop` does.
            g = if self.semantics.has(Semantic::WakeAll) {
                self.not_full[ev]
                    .wait_timeout_while(g, wait, |s| !s.set[ev])
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            } else {
                self.not_full[ev]
                    .wait_timeout(g, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            };
            g.waiters[ev] -= 1;
            if over() {
                return None;
            }
        }
        let slot = self.search(segment).find(|&i| !g.busy[i])?;
        g.busy[slot] = true;
        g.in_segment[slot / self.per_segment] += 1;
        if self.full(&g, segment) {
            g.set[ev] = false;
        }
        Some(slot)
    }

    /// Frees `slot`: with [`Semantic::WakeAll`] a full array's event is
    /// set and every waiter wakes; without, one waiter a freed slot.
    fn free(&self, slot: usize) {
        let segment = slot / self.per_segment;
        let ev = self.event(segment);
        let mut g = self.lock();
        let was_full = self.full(&g, segment);
        g.busy[slot] = false;
        g.in_segment[segment] -= 1;
        if self.semantics.has(Semantic::WakeAll) {
            if was_full {
                g.set[ev] = true;
                self.not_full[ev].notify_all();
            }
        } else if g.waiters[ev] > 0 {
            self.not_full[ev].notify_one();
        }
    }
}

/// What every thread of the model shares beyond the run's [`Ctx`].
struct Shared<'a> {
    ctx: &'a Ctx<'a>,
    array: Array,
    segs: Vec<Segment>,
    /// Each client's mailbox: the next I/O its thread is to submit.
    mail: Vec<(Sender<Pending>, Receiver<Pending>)>,
    /// The slot of each client's one I/O in flight.
    slot_of: Vec<AtomicUsize>,
}

impl Shared<'_> {
    /// A client's thread: reserve a slot for each I/O it is handed, and
    /// pass the I/O to that slot's segment.
    fn client(&self, c: usize) {
        let rx = &self.mail[c].1;
        while !self.ctx.finished() {
            let Ok(mut p) = rx.recv_timeout(Duration::from_millis(IDLE_MS)) else {
                self.ctx.check_done();
                continue;
            };
            let Some(slot) = self.array.reserve(&mut p, || self.ctx.finished()) else {
                return;
            };
            self.slot_of[c].store(slot, Ordering::Relaxed);
            let seg = &self.segs[slot / self.array.per_segment];
            seg.inbox.lock().unwrap_or_else(|e| e.into_inner()).push(p);
            seg.bell.ring();
        }
    }

    /// Hands `p` to its client's thread.
    fn hand(&self, p: Pending) {
        self.ctx.queued(1);
        let _ = self.mail[p.io.client as usize].0.send(p);
    }

    /// A completed I/O: its slot freed first (as `os_aio_windows_handle`
    /// does before the page's work), then what follows handed on.
    fn handle(&self, t: usize, ev: Event) {
        let token = match &ev {
            Event::Read { token, .. } | Event::Write { token, .. } => *token,
            _ => return,
        };
        let client = Io::from_token(token, false).client as usize;
        self.array
            .free(self.slot_of[client].load(Ordering::Relaxed));
        self.ctx.count(t, 1);
        match ev {
            Event::Read { token, result, buf } => {
                if let Some(w) = self.ctx.updated(Io::from_token(token, false), result, buf) {
                    self.hand(w);
                }
            }
            Event::Write { token, result, buf } => {
                for io in self
                    .ctx
                    .committed(Io::from_token(token, true), result, &buf)
                {
                    self.hand(Pending::new(io, None));
                }
            }
            _ => {}
        }
    }

    /// Segment `t`'s reaper: submits what its inbox holds and handles
    /// completions, one a wait, the smallest slot first
    /// ([`Semantic::LowestFirst`]), or all that are ready.
    fn reaper(&self, t: usize, mut ring: Ring) {
        let bell = &self.segs[t].bell;
        if let Err(e) = ring.arm(bell, super::BELL) {
            return self.ctx.io_error("cannot arm the doorbell of", e);
        }
        let lowest = self.array.semantics.has(Semantic::LowestFirst);
        let mut pending = VecDeque::new();
        let (mut data, mut evs) = (0usize, Vec::new());
        let mut ready: BTreeMap<usize, Event> = BTreeMap::new();
        while !self.ctx.finished() {
            pending.extend(
                self.segs[t]
                    .inbox
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .drain(..),
            );
            let want = usize::from(ready.is_empty());
            let cap = (usize::MAX, want);
            if !self
                .ctx
                .turn_for(&mut ring, &mut pending, cap, &mut data, bell, &mut evs)
            {
                return;
            }
            if lowest {
                for ev in evs.drain(..) {
                    ready.insert(self.slot_of_event(&ev), ev);
                }
                if let Some((_, ev)) = ready.pop_first() {
                    self.handle(t, ev);
                }
            } else {
                for ev in evs.drain(..) {
                    self.handle(t, ev);
                }
            }
            self.ctx.check_done();
        }
        for seg in &self.segs {
            seg.bell.ring();
        }
    }

    fn slot_of_event(&self, ev: &Event) -> usize {
        match ev {
            Event::Read { token, .. } | Event::Write { token, .. } => {
                let client = Io::from_token(*token, false).client as usize;
                self.slot_of[client].load(Ordering::Relaxed)
            }
            _ => usize::MAX,
        }
    }
}

/// Runs the model: `threads` segments with their reapers, one thread a
/// client.
pub(super) fn run(
    ctx: &Ctx<'_>,
    threads: usize,
    clients: usize,
    semantics: Semantics,
    first: Vec<Io>,
) -> Result<(), AioError> {
    let array = Array::new(threads, semantics);
    let segs = (0..threads)
        .map(|_| {
            Ok(Segment {
                inbox: Mutex::new(Vec::new()),
                bell: Doorbell::new().map_err(|e| AioError::Config(format!("eventfd: {e}")))?,
            })
        })
        .collect::<Result<Vec<_>, AioError>>()?;
    let mut rings = Vec::new();
    for _ in 0..threads {
        rings.push(Ring::new(
            (array.per_segment as u32 + 2).next_power_of_two(),
        )?);
    }
    let shared = Shared {
        ctx,
        array,
        segs,
        mail: (0..clients)
            .map(|_| crossbeam_channel::unbounded())
            .collect(),
        slot_of: (0..clients).map(|_| AtomicUsize::new(0)).collect(),
    };
    for io in first {
        let _ = shared.mail[io.client as usize]
            .0
            .send(Pending::new(io, None));
    }
    let shared = &shared;
    std::thread::scope(|s| {
        for (t, ring) in rings.into_iter().enumerate() {
            s.spawn(move || {
                let _cpu = super::CpuOnExit(&ctx.per_thread_cpu[t]);
                shared.reaper(t, ring);
            });
        }
        for c in 0..clients {
            let spawned = std::thread::Builder::new()
                .stack_size(CLIENT_STACK)
                .spawn_scoped(s, move || shared.client(c));
            if let Err(e) = spawned {
                ctx.fail(AioError::Config(format!(
                    "cannot start client thread {c}: {e}"
                )));
                break;
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(page: u32) -> Pending {
        Pending::new(
            Io {
                write: false,
                page,
                client: 0,
            },
            None,
        )
    }

    #[test]
    fn a_request_spills_over_the_array_only_with_spill() {
        let all = Array::new(2, Semantics::ALL);
        assert_eq!(all.per_segment, 32);
        // Page 0 prefers segment 0: its 32 slots first, then segment 1's.
        let order: Vec<usize> = all.search(0).collect();
        assert_eq!(order.len(), 64);
        assert_eq!((order[0], order[31], order[32]), (0, 31, 32));
        let own = Array::new(2, Semantics::ALL.without(Semantic::Spill));
        let order: Vec<usize> = own.search(1).collect();
        assert_eq!(order, (32..64).collect::<Vec<_>>());
        assert_eq!(preferred(63, 4), 0);
        assert_eq!(preferred(64, 4), 1);
        assert_eq!(preferred(256, 4), 0);
    }

    #[test]
    fn a_full_array_resets_its_event_and_a_free_slot_sets_it() {
        let a = Array::new(1, Semantics::ALL);
        let mut g = a.lock();
        for i in 0..31 {
            g.busy[i] = true;
        }
        g.in_segment[0] = 31;
        drop(g);
        let slot = a.reserve(&mut pending(5), || false).expect("the last slot");
        assert_eq!(slot, 31);
        assert!(!a.lock().set[0], "full: the event is reset");
        a.free(3);
        assert!(a.lock().set[0], "a freed slot in a full array sets it");
        let mut p = pending(5);
        assert_eq!(a.reserve(&mut p, || false), Some(3));
        assert!(!p.blocked);
    }
}
