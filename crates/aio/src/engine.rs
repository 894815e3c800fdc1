//! The three disciplines as real threads and rings (thin glue: the rules
//! are in [`crate::txn`], the page work in [`crate::page`]).

use crate::page::{self, PAGE};
use crate::txn::{Core, Io};
use crate::{AioError, DataFile, Model, Options};
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tcpwise_sys::mono_ns;
use tcpwise_sys::uring::{AlignedBuf, Doorbell, Event, Ring, SharedFd};

mod innodb;

/// Token of a ring's doorbell read (no data I/O has it: client ids stay
/// far below 2^32 - 1).
const BELL: u64 = u64::MAX;
/// How long an idle thread sleeps before it looks at the clock again.
const IDLE_MS: u64 = 20;

/// What the engines measured; `lib.rs` turns it into the report.
pub struct Outcome {
    pub txns: u64,
    pub latency: Histogram<u64>,
    pub latch_waits: u64,
    pub expected: Vec<Option<u64>>,
    pub inflight_peak: u64,
    pub io_latency: Histogram<u64>,
    pub per_thread: Vec<u64>,
    pub per_thread_cpu_ns: Vec<u64>,
    pub reaper_cpu_ns: Option<u64>,
    /// From the start of the run until every thread ended.
    pub wall_ns: u64,
    pub queued_peak: u64,
    pub slot_waits: u64,
    pub slot_wait: Histogram<u64>,
}

/// An I/O waiting to be submitted.
struct Pending {
    io: Io,
    /// The page to write (writes only).
    buf: Option<AlignedBuf>,
    /// When it was queued.
    since: u64,
    /// It stayed queued because every slot was busy.
    blocked: bool,
}

impl Pending {
    fn new(io: Io, buf: Option<AlignedBuf>) -> Pending {
        Pending {
            io,
            buf,
            since: mono_ns(),
            blocked: false,
        }
    }
}

/// State every thread of a run shares.
struct Ctx<'a> {
    core: Mutex<Core>,
    file: &'a DataFile,
    fd: SharedFd,
    per_thread: Vec<AtomicU64>,
    per_thread_cpu: Vec<AtomicU64>,
    reaper_cpu: AtomicU64,
    inflight: AtomicU64,
    inflight_peak: AtomicU64,
    /// When each client's one outstanding I/O was submitted.
    io_started: Vec<AtomicU64>,
    io_latency: Mutex<Histogram<u64>>,
    queued: AtomicU64,
    queued_peak: AtomicU64,
    slot_waits: AtomicU64,
    slot_wait: Mutex<Histogram<u64>>,
    finished: AtomicBool,
    error: Mutex<Option<AioError>>,
    end_ns: u64,
}

impl Ctx<'_> {
    fn finished(&self) -> bool {
        self.finished.load(Ordering::Relaxed)
    }

    fn fail(&self, e: AioError) {
        let mut g = self.error.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert(e);
        self.finished.store(true, Ordering::Relaxed);
    }

    fn io_error(&self, what: &'static str, e: std::io::Error) {
        self.fail(AioError::File {
            path: self.file.path.clone(),
            what,
            source: e,
        });
    }

    /// After the end: finished once nothing is in progress; a run that does
    /// not drain within 30 s is a bug, reported rather than hung on.
    fn check_done(&self) {
        let now = mono_ns();
        if now < self.end_ns {
            return;
        }
        let core = self.core.lock().unwrap_or_else(|p| p.into_inner());
        if core.done(now) {
            self.finished.store(true, Ordering::Relaxed);
        } else if now > self.end_ns + 30_000_000_000 {
            let active = core.active();
            drop(core);
            self.fail(AioError::Stuck(active));
        }
    }

    fn count(&self, thread: usize, n: u64) {
        self.per_thread[thread].fetch_add(n, Ordering::Relaxed);
    }

    fn submitted(&self, p: &Pending) {
        self.io_started[p.io.client as usize].store(mono_ns(), Ordering::Relaxed);
        let n = self.inflight.fetch_add(1, Ordering::Relaxed) + 1;
        self.inflight_peak.fetch_max(n, Ordering::Relaxed);
        self.queued.fetch_sub(1, Ordering::Relaxed);
        if p.blocked {
            self.slot_waits.fetch_add(1, Ordering::Relaxed);
            let waited = mono_ns().saturating_sub(p.since).max(1_000);
            let _ = self
                .slot_wait
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .record(waited);
        }
    }

    fn queued(&self, n: u64) {
        let q = self.queued.fetch_add(n, Ordering::Relaxed) + n;
        self.queued_peak.fetch_max(q, Ordering::Relaxed);
    }

    /// The I/O of `client` completed.
    fn completed(&self, client: u32) {
        self.inflight.fetch_sub(1, Ordering::Relaxed);
        let took =
            mono_ns().saturating_sub(self.io_started[client as usize].load(Ordering::Relaxed));
        let _ = self
            .io_latency
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(took.max(1_000));
    }

    /// The transaction's CPU part on a page it read: the write to send.
    fn updated(
        &self,
        io: Io,
        result: std::io::Result<usize>,
        mut buf: AlignedBuf,
    ) -> Option<Pending> {
        match result {
            Ok(n) if n == PAGE => {}
            Ok(n) => {
                self.io_error(
                    "short read of",
                    std::io::Error::other(format!("{n} of {PAGE} bytes")),
                );
                return None;
            }
            Err(e) => {
                self.io_error("cannot read", e);
                return None;
            }
        }
        match page::update(&mut buf, u64::from(io.page)) {
            Ok(_) => Some(Pending::new(Io { write: true, ..io }, Some(buf))),
            Err(error) => {
                self.fail(AioError::Corrupt {
                    path: self.file.path.clone(),
                    page: io.page,
                    error,
                });
                None
            }
        }
    }

    /// The write of a transaction completed: the reads that follow.
    fn committed(&self, io: Io, result: std::io::Result<usize>, buf: &[u8]) -> Vec<Io> {
        match result {
            Ok(n) if n == PAGE => {}
            Ok(n) => {
                self.io_error(
                    "short write to",
                    std::io::Error::other(format!("{n} of {PAGE} bytes")),
                );
                return Vec::new();
            }
            Err(e) => {
                self.io_error("cannot write", e);
                return Vec::new();
            }
        }
        let now = mono_ns();
        let mut core = self.core.lock().unwrap_or_else(|p| p.into_inner());
        let next = core.committed(io, page::version_of(buf), now);
        if core.done(now) {
            self.finished.store(true, Ordering::Relaxed);
        }
        next
    }

    /// Submits queued I/Os while the ring has fewer than `cap` in flight;
    /// what stays queued is marked as waiting for a slot.
    fn fill(&self, ring: &mut Ring, pending: &mut VecDeque<Pending>, cap: usize, data: &mut usize) {
        while *data < cap {
            let Some(mut p) = pending.pop_front() else {
                return;
            };
            self.submitted(&p);
            let token = p.io.token();
            let r = match p.buf.take() {
                Some(buf) => ring.write_at(&self.fd, buf, page_offset(p.io.page), token),
                None => ring.read_at(
                    &self.fd,
                    AlignedBuf::new(PAGE),
                    page_offset(p.io.page),
                    token,
                ),
            };
            if let Err(e) = r {
                self.io_error("cannot queue I/O on", e);
                return;
            }
            *data += 1;
        }
        for p in pending.iter_mut() {
            p.blocked = true;
        }
    }
}

impl Ctx<'_> {
    /// One turn of a ring thread: submit what fits under `cap`, wait for
    /// completions, re-arm the doorbell if it rang. Leaves the data
    /// completions in `evs`; false after an error (already recorded).
    fn turn(
        &self,
        ring: &mut Ring,
        pending: &mut VecDeque<Pending>,
        cap: usize,
        data: &mut usize,
        bell: &Arc<Doorbell>,
        evs: &mut Vec<Event>,
    ) -> bool {
        self.turn_for(ring, pending, (cap, 1), data, bell, evs)
    }

    /// [`Ctx::turn`] waiting for `want` completions (0: only submit and
    /// look), with `cap` in flight at most: `(cap, want)`.
    fn turn_for(
        &self,
        ring: &mut Ring,
        pending: &mut VecDeque<Pending>,
        (cap, want): (usize, usize),
        data: &mut usize,
        bell: &Arc<Doorbell>,
        evs: &mut Vec<Event>,
    ) -> bool {
        self.fill(ring, pending, cap, data);
        if let Err(e) = ring.submit_and_wait(want, IDLE_MS) {
            self.io_error("io_uring wait on", e);
            return false;
        }
        ring.reap(evs);
        let before = evs.len();
        evs.retain(|e| !matches!(e, Event::Doorbell { .. }));
        if evs.len() < before
            && let Err(e) = ring.arm(bell, BELL)
        {
            self.io_error("cannot arm the doorbell of", e);
            return false;
        }
        *data -= evs.len();
        for ev in evs.iter() {
            if let Event::Read { token, .. } | Event::Write { token, .. } = ev {
                self.completed(Io::from_token(*token, false).client);
            }
        }
        true
    }
}

/// Stores the thread's CPU time when the thread's work ends, however it ends.
struct CpuOnExit<'a>(&'a AtomicU64);

impl Drop for CpuOnExit<'_> {
    fn drop(&mut self) {
        self.0
            .store(tcpwise_sys::thread_cpu_ns(), Ordering::Relaxed);
    }
}

fn page_offset(page: u32) -> u64 {
    u64::from(page) * PAGE as u64
}

/// Fibonacci hashing, so neighbouring (and, under Zipf, the hottest)
/// pages land in different segments.
fn segment_of(page: u32, segments: usize) -> usize {
    ((u64::from(page).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % segments as u64) as usize
}

pub fn run(opts: &Options, file: &DataFile) -> Result<Outcome, AioError> {
    let threads = opts.threads as usize;
    let start = mono_ns();
    let end_ns = start + opts.duration.as_nanos() as u64;
    let ctx = Ctx {
        core: Mutex::new(Core::new(
            file.pages,
            opts.keys,
            opts.seed,
            end_ns,
            opts.clients,
        )),
        file,
        fd: file.shared(),
        per_thread: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        per_thread_cpu: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        reaper_cpu: AtomicU64::new(0),
        inflight: AtomicU64::new(0),
        inflight_peak: AtomicU64::new(0),
        io_started: (0..opts.clients).map(|_| AtomicU64::new(0)).collect(),
        io_latency: Mutex::new(
            Histogram::new_with_bounds(1_000, 600_000_000_000, 3).expect("bounds"),
        ),
        queued: AtomicU64::new(0),
        queued_peak: AtomicU64::new(0),
        slot_waits: AtomicU64::new(0),
        slot_wait: Mutex::new(
            Histogram::new_with_bounds(1_000, 600_000_000_000, 3).expect("bounds"),
        ),
        finished: AtomicBool::new(false),
        error: Mutex::new(None),
        end_ns,
    };
    let first: Vec<Io> = {
        let mut core = ctx.core.lock().unwrap_or_else(|p| p.into_inner());
        (0..opts.clients)
            .filter_map(|c| core.begin(c, start))
            .collect()
    };
    ctx.queued(first.len() as u64);
    match opts.model {
        Model::Sync => sync(&ctx, threads, first),
        Model::Segments { slots } => segments(&ctx, threads, slots, first)?,
        Model::Shared { depth } => shared(&ctx, threads, depth, first)?,
        Model::Innodb { semantics } => {
            innodb::run(&ctx, threads, opts.clients as usize, semantics, first)?
        }
    }
    if let Some(e) = ctx.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let core = ctx.core.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(Outcome {
        txns: core.txns,
        latch_waits: core.latch_waits,
        expected: core.expected().to_vec(),
        latency: core.latency,
        inflight_peak: ctx.inflight_peak.into_inner(),
        io_latency: ctx
            .io_latency
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
        per_thread: ctx
            .per_thread
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect(),
        per_thread_cpu_ns: ctx
            .per_thread_cpu
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect(),
        reaper_cpu_ns: matches!(opts.model, Model::Shared { .. })
            .then(|| ctx.reaper_cpu.load(Ordering::Relaxed)),
        wall_ns: mono_ns() - start,
        queued_peak: ctx.queued_peak.into_inner(),
        slot_waits: ctx.slot_waits.into_inner(),
        slot_wait: ctx
            .slot_wait
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
    })
}

/// Blocking `pread`/`pwrite`: a transaction waits in one queue for a free
/// thread, which then does its read and write itself.
fn sync(ctx: &Ctx<'_>, threads: usize, first: Vec<Io>) {
    let (tx, rx) = crossbeam_channel::unbounded::<Pending>();
    let busy = AtomicU64::new(0);
    for io in first {
        let _ = tx.send(Pending::new(io, None));
    }
    std::thread::scope(|s| {
        for t in 0..threads {
            let (tx, rx, busy) = (tx.clone(), rx.clone(), &busy);
            s.spawn(move || {
                let _cpu = CpuOnExit(&ctx.per_thread_cpu[t]);
                let mut buf = AlignedBuf::new(PAGE);
                while !ctx.finished() {
                    let Ok(p) = rx.recv_timeout(Duration::from_millis(IDLE_MS)) else {
                        ctx.check_done();
                        continue;
                    };
                    busy.fetch_add(1, Ordering::Relaxed);
                    ctx.submitted(&p);
                    let off = page_offset(p.io.page);
                    let read = ctx.file.file.read_exact_at(&mut buf, off).map(|_| PAGE);
                    ctx.completed(p.io.client);
                    ctx.count(t, 1);
                    let Some(mut w) = ctx.updated(
                        p.io,
                        read,
                        std::mem::replace(&mut buf, AlignedBuf::new(PAGE)),
                    ) else {
                        busy.fetch_sub(1, Ordering::Relaxed);
                        continue;
                    };
                    // The write is queued and submitted at once, by this thread.
                    ctx.queued(1);
                    ctx.submitted(&w);
                    let page_buf = w.buf.take().expect("a write has its page");
                    let wrote = ctx.file.file.write_all_at(&page_buf, off).map(|_| PAGE);
                    ctx.completed(w.io.client);
                    ctx.count(t, 1);
                    busy.fetch_sub(1, Ordering::Relaxed);
                    let next = ctx.committed(w.io, wrote, &page_buf);
                    buf = page_buf;
                    ctx.queued(next.len() as u64);
                    for io in next {
                        // It waits for a thread if every thread is busy.
                        let mut p = Pending::new(io, None);
                        p.blocked = busy.load(Ordering::Relaxed) >= threads as u64;
                        let _ = tx.send(p);
                    }
                }
            });
        }
    });
}

/// A segment: the queue other threads hand its I/Os to, and the doorbell
/// that wakes its owner.
struct Segment {
    inbox: Mutex<Vec<Pending>>,
    bell: Arc<Doorbell>,
}

/// Fixed segments: thread t owns ring t and the I/Os of the pages that
/// hash to t; at most `slots` of them in flight, the rest wait.
fn segments(ctx: &Ctx<'_>, threads: usize, slots: usize, first: Vec<Io>) -> Result<(), AioError> {
    let segs: Vec<Segment> = (0..threads)
        .map(|_| {
            Ok(Segment {
                inbox: Mutex::new(Vec::new()),
                bell: Doorbell::new().map_err(|e| AioError::Config(format!("eventfd: {e}")))?,
            })
        })
        .collect::<Result<_, AioError>>()?;
    let mut rings = Vec::new();
    for _ in 0..threads {
        rings.push(Ring::new((slots as u32 + 2).next_power_of_two())?);
    }
    for io in first {
        let s = segment_of(io.page, threads);
        segs[s]
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Pending::new(io, None));
    }
    let segs = &segs;
    std::thread::scope(|s| {
        for (t, mut ring) in rings.into_iter().enumerate() {
            s.spawn(move || {
                let _cpu = CpuOnExit(&ctx.per_thread_cpu[t]);
                if let Err(e) = ring.arm(&segs[t].bell, BELL) {
                    return ctx.io_error("cannot arm the doorbell of", e);
                }
                let mut pending: VecDeque<Pending> = VecDeque::new();
                let mut data = 0usize;
                let mut evs = Vec::new();
                let route = |p: Pending, pending: &mut VecDeque<Pending>| {
                    ctx.queued(1);
                    let to = segment_of(p.io.page, threads);
                    if to == t {
                        pending.push_back(p);
                    } else {
                        segs[to]
                            .inbox
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(p);
                        segs[to].bell.ring();
                    }
                };
                while !ctx.finished() {
                    pending.extend(
                        segs[t]
                            .inbox
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .drain(..),
                    );
                    if !ctx.turn(
                        &mut ring,
                        &mut pending,
                        slots,
                        &mut data,
                        &segs[t].bell,
                        &mut evs,
                    ) {
                        return;
                    }
                    for ev in evs.drain(..) {
                        match ev {
                            Event::Read { token, result, buf } => {
                                ctx.count(t, 1);
                                if let Some(w) =
                                    ctx.updated(Io::from_token(token, false), result, buf)
                                {
                                    route(w, &mut pending);
                                }
                            }
                            Event::Write { token, result, buf } => {
                                ctx.count(t, 1);
                                for io in ctx.committed(Io::from_token(token, true), result, &buf) {
                                    route(Pending::new(io, None), &mut pending);
                                }
                            }
                            _ => {}
                        }
                    }
                    ctx.check_done();
                }
                // Another thread finished the run: wake everyone.
                for seg in segs {
                    seg.bell.ring();
                }
            });
        }
    });
    Ok(())
}

/// One completion queue: the reaper owns the one ring, submits what the
/// workers queue and hands every completion to one channel that any
/// worker drains.
fn shared(ctx: &Ctx<'_>, threads: usize, depth: usize, first: Vec<Io>) -> Result<(), AioError> {
    let (sub_tx, sub_rx) = crossbeam_channel::unbounded::<Pending>();
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<Event>();
    let bell = Doorbell::new().map_err(|e| AioError::Config(format!("eventfd: {e}")))?;
    let mut ring = Ring::new((depth as u32 + 1).next_power_of_two())?;
    for io in first {
        let _ = sub_tx.send(Pending::new(io, None));
    }
    let bell = &bell;
    std::thread::scope(|s| {
        s.spawn(move || {
            let _cpu = CpuOnExit(&ctx.reaper_cpu);
            if let Err(e) = ring.arm(bell, BELL) {
                return ctx.io_error("cannot arm the doorbell of", e);
            }
            let mut pending = VecDeque::new();
            let mut data = 0usize;
            let mut evs = Vec::new();
            while !ctx.finished() {
                pending.extend(sub_rx.try_iter());
                if !ctx.turn(&mut ring, &mut pending, depth, &mut data, bell, &mut evs) {
                    return;
                }
                for ev in evs.drain(..) {
                    let _ = done_tx.send(ev);
                }
                ctx.check_done();
            }
        });
        for t in 0..threads {
            let (sub_tx, done_rx) = (sub_tx.clone(), done_rx.clone());
            s.spawn(move || {
                let _cpu = CpuOnExit(&ctx.per_thread_cpu[t]);
                while !ctx.finished() {
                    let ev = match done_rx.recv_timeout(Duration::from_millis(IDLE_MS)) {
                        Ok(ev) => ev,
                        Err(_) => {
                            ctx.check_done();
                            continue;
                        }
                    };
                    ctx.count(t, 1);
                    let next: Vec<Pending> = match ev {
                        Event::Read { token, result, buf } => ctx
                            .updated(Io::from_token(token, false), result, buf)
                            .into_iter()
                            .collect(),
                        Event::Write { token, result, buf } => ctx
                            .committed(Io::from_token(token, true), result, &buf)
                            .into_iter()
                            .map(|io| Pending::new(io, None))
                            .collect(),
                        _ => Vec::new(),
                    };
                    if !next.is_empty() {
                        ctx.queued(next.len() as u64);
                        for p in next {
                            let _ = sub_tx.send(p);
                        }
                        bell.ring();
                    }
                }
                bell.ring();
            });
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_spread_neighbouring_pages() {
        let mut n = [0usize; 4];
        for p in 0..4000 {
            n[segment_of(p, 4)] += 1;
        }
        assert!(n.iter().all(|&k| (900..1100).contains(&k)), "{n:?}");
        // The four hottest Zipf pages do not all share a segment.
        let hot: std::collections::HashSet<usize> = (0..4).map(|p| segment_of(p, 4)).collect();
        assert!(hot.len() >= 2);
    }
}
