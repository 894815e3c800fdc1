//! HTTP/1.1's fast path on io_uring: one ring per server thread, the
//! same [`Core`] as the tokio path, and tokio only for what leaves the
//! fast path.
//!
//! Why: with epoll, `serve` and nginx ask the kernel for the same work
//! per request (one `recvfrom`, one `sendto`, the same kernel profile,
//! `docs/bench.md`), so neither can be much cheaper than the other. A
//! ring takes a loop turn's sends in the same `io_uring_enter` that waits
//! for the next completions, receives into buffers it is given back
//! without a system call ([`Ring::provide_buffer_ring`]), and with
//! [`Ring::single_issuer`] runs the completions' kernel work in that one
//! wait: fewer kernel entries per request than nginx makes.
//!
//! Each connection has one multishot receive and at most one send in the
//! kernel (a short send's rest must go before anything after it); answers
//! made while a send is out wait in `queued`, and input that arrives
//! while a full turn of answers waits is held unparsed, so a client that
//! pipelines without reading is slowed to its own pace. A request the
//! fast path does not answer (a delay, a streamed body, an echo larger
//! than one read) and HTTP/2's preface hand the connection to a tokio
//! runtime, after the ring has let go of it: its receive cancelled and
//! finished, its sends complete, the bytes already read passed along.

use super::*;
use crate::coalesce::Coalesce;
use std::os::fd::{AsFd, OwnedFd};
use std::task::Wake;
use tcpwise_sys::uring::{Doorbell, Event, Ring, SharedFd};

/// The listener's multishot accept (connections' tokens: see [`Links`]).
const ACCEPT: u64 = u64::MAX;
/// The doorbell a [`Shutdown`] rings.
const STOP: u64 = u64::MAX - 1;
/// Submission queue entries (four times as many completions).
const ENTRIES: u32 = 4096;
/// Receive buffers, and their size: what the io_uring sketch measured
/// with (`crates/sys/examples/uring_http.rs`); a request head fits one.
pub const BUFFERS: u16 = 4096;
/// See [`BUFFERS`].
pub const BUFFER_SIZE: usize = 2048;
/// Input a connection may have read and not yet parsed while its answers
/// wait for the client to read them; past it the connection is closed.
const HELD_MAX: usize = 4 << 20;

/// Whether this kernel gives a thread a single-issuer ring with a buffer
/// ring (Linux 6.1), and if not, why. Asked once, on a thread of its own:
/// when a ring is freed the kernel interrupts every thread that used it
/// (task work with a signal's wake-up), and a caller blocked in a socket
/// read with a timeout would see `EINTR` (it did, in a test).
pub(super) fn available() -> Result<(), String> {
    static ANSWER: OnceLock<Result<(), String>> = OnceLock::new();
    ANSWER
        .get_or_init(|| {
            std::thread::spawn(|| {
                let mut r = Ring::single_issuer(8).map_err(|e| e.to_string())?;
                r.provide_buffer_ring(2, 64)
                    .map_err(|e| format!("io_uring buffer ring: {e}"))
            })
            .join()
            .unwrap_or_else(|_| Err("the io_uring probe panicked".into()))
        })
        .clone()
}

/// What a connection is doing besides reading requests.
enum End {
    Open,
    /// Close once the answers are sent (`true`: drain what the client
    /// still sends first, nginx's lingering close).
    Close(bool),
    /// Draining until end of stream or this instant.
    Linger(Instant),
    /// Hand over once the ring has let go of the socket: a request the
    /// fast path does not answer (its head consumed), or `None`, HTTP/2
    /// with prior knowledge (the bytes read so far kept as they came).
    Hand(Option<Box<Slow>>),
    /// The server stops: close once the answers are sent.
    Stopping,
}

struct Link {
    fd: SharedFd,
    core: Core,
    _permit: tokio::sync::OwnedSemaphorePermit,
    /// A send is in the kernel.
    sending: bool,
    /// Answers made while it is.
    queued: Vec<u8>,
    /// Input not yet parsed because `queued` is full.
    held: Vec<u8>,
    /// The multishot receive is in the kernel.
    receiving: bool,
    /// Its cancellation was asked for.
    cancelled: bool,
    /// Nothing read yet: the first bytes may be HTTP/2's preface.
    fresh: bool,
    end: End,
    /// [`Coalesce::received`]'s mark.
    seen: u32,
    /// When it was accepted (`crate::evict::idle_ms`).
    since: std::time::Instant,
}

/// The open connections, by token: a slot's index and, above it, the
/// slot's generation, so a completion that arrives for a connection
/// already closed (a cancelled receive) finds nothing, not its successor.
/// A slab, not a hash map: a request looks its connection up six times.
#[derive(Default)]
struct Links {
    slots: Vec<(u32, Option<Link>)>,
    free: Vec<u32>,
    open: usize,
}

impl Links {
    fn insert(&mut self, link: Link) -> u64 {
        self.open += 1;
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push((0, None));
                (self.slots.len() - 1) as u32
            }
        };
        let slot = &mut self.slots[i as usize];
        slot.0 = slot.0.wrapping_add(1);
        slot.1 = Some(link);
        (u64::from(slot.0) << 32) | u64::from(i)
    }

    fn get_mut(&mut self, token: u64) -> Option<&mut Link> {
        match self.slots.get_mut(token as u32 as usize) {
            Some((g, Some(l))) if u64::from(*g) == token >> 32 => Some(l),
            _ => None,
        }
    }

    fn remove(&mut self, token: u64) -> Option<Link> {
        let i = token as u32;
        match self.slots.get_mut(i as usize) {
            Some((g, l)) if u64::from(*g) == token >> 32 && l.is_some() => {
                self.open -= 1;
                self.free.push(i);
                l.take()
            }
            _ => None,
        }
    }

    fn is_empty(&self) -> bool {
        self.open == 0
    }

    fn iter(&self) -> impl Iterator<Item = (u64, &Link)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, (g, l))| l.as_ref().map(|l| ((u64::from(*g) << 32) | i as u64, l)))
    }
}

/// Rings a [`Doorbell`] when woken: how a [`Shutdown`] reaches a thread
/// that waits in the ring, not in tokio.
struct Bell(Arc<Doorbell>);

impl Wake for Bell {
    fn wake(self: Arc<Self>) {
        self.0.ring();
    }
}

/// One server thread's loop.
pub(super) struct Loop {
    ring: Ring,
    listener: SharedFd,
    links: Links,
    /// Spare send buffers, so a request does not allocate one.
    spare: Vec<Vec<u8>>,
    opts: ServeOptions,
    shared: Shared,
    hand: tokio::runtime::Handle,
    tasks: Arc<AtomicU64>,
    stop: Shutdown,
    /// The accept is in the kernel.
    accepting: bool,
    /// Retry a failed accept at this instant (out of descriptors).
    accept_retry: Option<Instant>,
    /// Connections accepted past the limit, waiting for a slot.
    waiting: std::collections::VecDeque<OwnedFd>,
    at_limit: bool,
    /// Check deadlines at this instant.
    check: Instant,
    stopping: Option<Instant>,
    /// When the current turn's completions were reaped.
    turn: Instant,
    /// When to sleep for a batch of completions rather than one.
    coalesce: Coalesce,
}

/// Counts a handed-over connection's task while it runs.
struct Task(Arc<AtomicU64>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Loop {
    /// A loop on this thread for `listener`; slow requests go to `hand`,
    /// their tasks counted in `tasks`.
    pub(super) fn new(
        listener: std::net::TcpListener,
        opts: ServeOptions,
        shared: Shared,
        (hand, tasks): (tokio::runtime::Handle, Arc<AtomicU64>),
        stop: Shutdown,
    ) -> io::Result<Loop> {
        // The ring polls a non-blocking listener rather than parking a thread.
        listener.set_nonblocking(true)?;
        let mut ring = Ring::single_issuer(ENTRIES).map_err(io::Error::other)?;
        ring.provide_buffer_ring(BUFFERS, BUFFER_SIZE)?;
        // Sockets named by index (`docs/bench.md`, "Coalescing"); a kernel
        // or limit that refuses the table leaves them named by descriptor.
        if let Err(e) = ring.register_sockets(opts.limits.max_conns.min(1 << 20) as u32) {
            log!("tcpwise serve: no io_uring file table ({e}): sockets by descriptor");
        }
        Ok(Loop {
            ring,
            listener: Arc::new(listener),
            links: Links::default(),
            spare: Vec::new(),
            opts,
            shared,
            hand,
            tasks,
            stop,
            accepting: false,
            accept_retry: None,
            waiting: Default::default(),
            at_limit: false,
            check: Instant::now() + Duration::from_secs(1),
            stopping: None,
            turn: Instant::now(),
            coalesce: Coalesce::new(Instant::now()),
        })
    }

    /// Serves until the [`Shutdown`] fires and the connections in flight
    /// have finished (at most 10 s more).
    pub(super) fn run(mut self) -> io::Result<()> {
        let bell = Doorbell::new()?;
        self.ring.arm(&bell, STOP)?;
        let waker = std::task::Waker::from(Arc::new(Bell(bell)));
        let mut stopped = pin!(self.stop.wait());
        if stopped
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            return Ok(());
        }
        self.ring.accept_multi(&self.listener, ACCEPT)?;
        self.accepting = true;
        let mut events = Vec::new();
        loop {
            let now = self.turn;
            if self
                .stopping
                .is_some_and(|t| now >= t || self.links.is_empty())
            {
                return Ok(());
            }
            self.timers(now)?;
            let wait = self.check.saturating_duration_since(now);
            let ms = (wait.as_millis() as u64).clamp(1, 1000);
            match self.coalesce.batch(self.ring.has_work()) {
                Some((k, most)) => self.ring.submit_and_wait_for(k, wait.min(most))?,
                None => self.ring.submit_and_wait(1, ms)?,
            }
            self.ring.reap(&mut events);
            // One clock read a turn, not one per request.
            self.turn = Instant::now();
            self.coalesce.turn(self.turn, events.len());
            set_turn_clock(SystemTime::now());
            for ev in events.drain(..) {
                self.event(ev)?;
            }
        }
    }

    fn event(&mut self, ev: Event) -> io::Result<()> {
        match ev {
            Event::Doorbell { .. } => self.begin_stop(),
            Event::Accepted { result, more, .. } => {
                self.accepting &= more;
                match result {
                    Ok(fd) => self.accepted(fd),
                    Err(e) if e.raw_os_error() == Some(libc::ECANCELED) => Ok(()),
                    Err(e) => {
                        log!("tcpwise serve: accept: {e}");
                        // Out of descriptors: back off instead of spinning.
                        if !more {
                            let t = Instant::now() + Duration::from_millis(10);
                            self.accept_retry = Some(t);
                            self.check = self.check.min(t);
                        }
                        Ok(())
                    }
                }
            }
            Event::Received {
                token,
                result,
                more,
            } => self.received(token, result, more),
            Event::Sent {
                token,
                result,
                data,
            } => self.sent(token, result, data),
            _ => Ok(()),
        }
    }

    /// The server stops: no more connections; each open one closes once
    /// its answers are sent.
    fn begin_stop(&mut self) -> io::Result<()> {
        if self.stopping.is_some() {
            return Ok(());
        }
        self.stopping = Some(Instant::now() + Duration::from_secs(10));
        if self.accepting {
            self.ring.cancel_fd(&self.listener)?;
        }
        self.waiting.clear();
        let tokens: Vec<u64> = self.links.iter().map(|(t, _)| t).collect();
        for t in tokens {
            if let Some(l) = self.links.get_mut(t)
                && matches!(l.end, End::Open)
            {
                l.end = End::Stopping;
            }
            self.settle(t)?;
        }
        Ok(())
    }

    fn accepted(&mut self, fd: OwnedFd) -> io::Result<()> {
        if self.stopping.is_some() {
            return Ok(());
        }
        match self.shared.conns.clone().try_acquire_owned() {
            Ok(p) => {
                self.at_limit = false;
                self.start(fd, p)
            }
            Err(_) => {
                if !std::mem::replace(&mut self.at_limit, true) {
                    log!(
                        "tcpwise serve: connection limit reached ({} open, --max-conns); each newcomer closes the connection that moved data longest ago",
                        self.opts.limits.max_conns
                    );
                }
                // The newcomer takes the slot of this ring's stalest
                // connection (crate::evict says why).
                if let Some(token) = self.stalest() {
                    self.drop_link(token)?;
                    if let Ok(p) = self.shared.conns.clone().try_acquire_owned() {
                        return self.start(fd, p);
                    }
                }
                // None here to close: keep the rest in the backlog, and
                // stop accepting until a slot frees.
                self.waiting.push_back(fd);
                if self.accepting {
                    self.ring.cancel_fd(&self.listener)?;
                }
                Ok(())
            }
        }
    }

    /// The connection that moved data longest ago, by `TCP_INFO`.
    fn stalest(&self) -> Option<u64> {
        use std::os::fd::AsRawFd;
        let idle = self.links.iter().filter_map(|(token, l)| {
            Some((
                token,
                crate::evict::idle_ms(l.fd.as_fd().as_raw_fd(), l.since)?,
            ))
        });
        crate::evict::stalest(idle.collect::<Vec<_>>()).map(|(token, _)| token)
    }

    /// A new connection: the socket options `serve` sets, its core, its receive.
    fn start(&mut self, fd: OwnedFd, permit: tokio::sync::OwnedSemaphorePermit) -> io::Result<()> {
        let sock = std::net::TcpStream::from(fd);
        let _ = sock.set_nodelay(true);
        if let Some(cc) = &self.opts.congestion {
            // Checked at start-up: it is available.
            let _ = tcpwise_tcp::set_congestion(&socket2::SockRef::from(&sock), cc);
        }
        let _ = self.opts.notsent_lowat.apply(&sock);
        let log = self.opts.access_log;
        let peer = match log {
            true => sock.peer_addr(),
            false => Err(io::ErrorKind::Unsupported.into()),
        }
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
        let id = self.shared.ids.fetch_add(1, Ordering::Relaxed) + 1;
        let fd: SharedFd = Arc::new(sock);
        let core = Core::with(id, peer, log, self.opts.limits);
        self.check = self.check.min(core.deadline());
        self.ring.fix(&fd)?;
        let token = self.links.insert(Link {
            fd: fd.clone(),
            core,
            _permit: permit,
            sending: false,
            queued: Vec::new(),
            held: Vec::new(),
            receiving: true,
            cancelled: false,
            fresh: true,
            end: End::Open,
            seen: 0,
            since: std::time::Instant::now(),
        });
        self.ring.recv_multi(&fd, token)
    }

    fn received(
        &mut self,
        token: u64,
        result: io::Result<Option<(u16, usize)>>,
        more: bool,
    ) -> io::Result<()> {
        let Some(link) = self.links.get_mut(token) else {
            if let Ok(Some((bid, _))) = result {
                self.ring.recycle(bid)?;
            }
            return Ok(());
        };
        link.receiving &= more;
        match result {
            Ok(Some((bid, len))) => {
                self.coalesce.received(&mut link.seen);
                let data = self.ring.provided(bid, len);
                let out = feed(link, data, self.spare.pop().unwrap_or_default(), self.turn);
                self.ring.recycle(bid)?;
                self.output(token, out)?;
            }
            // End of stream: answer what was read, then close.
            Ok(None) => {
                link.receiving = false;
                if matches!(link.end, End::Open) {
                    link.end = End::Close(false);
                }
                if matches!(link.end, End::Linger(_)) {
                    return self.drop_link(token);
                }
            }
            // Out of buffers: receive again (settle re-arms it).
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(e) => {
                let cancelled = e.raw_os_error() == Some(libc::ECANCELED);
                if !cancelled && link.core.log {
                    log!("conn={} peer={} ended: {e}", link.core.id, link.core.peer);
                }
                // A cancelled receive is one we stopped on purpose.
                if !cancelled || matches!(link.end, End::Open | End::Linger(_)) {
                    return self.drop_link(token);
                }
            }
        }
        self.settle(token)
    }

    fn sent(&mut self, token: u64, result: io::Result<usize>, mut data: Vec<u8>) -> io::Result<()> {
        let Some(link) = self.links.get_mut(token) else {
            return Ok(());
        };
        link.sending = false;
        match result {
            Ok(n) if n > 0 && n < data.len() => {
                // A short send: its rest goes first.
                data.drain(..n);
                link.sending = true;
                let fd = link.fd.clone();
                return self.ring.send(&fd, data, token);
            }
            Ok(n) if n > 0 || data.is_empty() => {}
            r => {
                if link.core.log {
                    let e = r.err().unwrap_or_else(|| io::ErrorKind::WriteZero.into());
                    log!("conn={} peer={} ended: {e}", link.core.id, link.core.peer);
                }
                return self.drop_link(token);
            }
        }
        data.clear();
        if data.capacity() <= OUT_HIGH {
            self.spare.push(data);
        }
        self.pump(token)?;
        self.settle(token)
    }

    /// Sends `out` now, or after the send in flight.
    fn output(&mut self, token: u64, out: Vec<u8>) -> io::Result<()> {
        let Some(link) = self.links.get_mut(token) else {
            return Ok(());
        };
        if out.is_empty() {
            self.spare.push(out);
        } else if link.sending {
            link.queued.extend_from_slice(&out);
            let mut out = out;
            out.clear();
            self.spare.push(out);
        } else {
            link.sending = true;
            let fd = link.fd.clone();
            self.ring.send(&fd, out, token)?;
        }
        Ok(())
    }

    /// After a send: the answers queued behind it, then requests left
    /// unanswered while they waited.
    fn pump(&mut self, token: u64) -> io::Result<()> {
        loop {
            let Some(link) = self.links.get_mut(token) else {
                return Ok(());
            };
            if link.sending {
                return Ok(());
            }
            if !link.queued.is_empty() {
                let q = std::mem::take(&mut link.queued);
                return self.output(token, q);
            }
            let waiting = link.core.has_more() || !link.held.is_empty();
            if !matches!(link.end, End::Open) || !waiting {
                return Ok(());
            }
            let out = self.spare.pop().unwrap_or_default();
            let out = if link.core.has_more() {
                step(link, None, out, self.turn)
            } else {
                let n = link.held.len().min(READ_BUF);
                let chunk: Vec<u8> = link.held.drain(..n).collect();
                step(link, Some(&chunk), out, self.turn)
            };
            self.output(token, out)?;
        }
    }

    /// What a connection does next once its last event is taken: receive
    /// again, close, linger, or leave for tokio.
    fn settle(&mut self, token: u64) -> io::Result<()> {
        let Some(link) = self.links.get_mut(token) else {
            return Ok(());
        };
        let idle = !link.sending && link.queued.is_empty();
        match link.end {
            End::Open => {
                if link.held.len() > HELD_MAX {
                    if link.core.log {
                        log!(
                            "conn={} peer={} closed: it sends requests faster than it reads the answers",
                            link.core.id,
                            link.core.peer
                        );
                    }
                    return self.drop_link(token);
                }
                if !link.receiving {
                    link.receiving = true;
                    let fd = link.fd.clone();
                    self.ring.recv_multi(&fd, token)?;
                }
                self.check = self.check.min(link.core.deadline());
            }
            End::Close(drain) if idle => {
                if drain && link.receiving {
                    let _ = socket2::SockRef::from(&link.fd.as_fd())
                        .shutdown(std::net::Shutdown::Write);
                    let until = Instant::now() + LINGER;
                    link.end = End::Linger(until);
                    self.check = self.check.min(until);
                } else {
                    return self.drop_link(token);
                }
            }
            End::Stopping if idle => return self.drop_link(token),
            End::Hand(_) if idle && !link.receiving => return self.hand_over(token),
            // Only once its answers are sent: the cancellation takes every
            // operation on the socket, a send waiting for room too.
            End::Hand(_) if idle && link.receiving && !link.cancelled => {
                link.cancelled = true;
                let fd = link.fd.clone();
                self.ring.cancel_fd(&fd)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Closes a connection: the ring's hold on the socket is cancelled
    /// and the socket closes when the last operation on it completes.
    fn drop_link(&mut self, token: u64) -> io::Result<()> {
        if let Some(l) = self.links.remove(token) {
            if l.receiving || l.sending {
                self.ring.cancel_fd(&l.fd)?;
            }
            // Whatever was in flight: the table would keep it open.
            self.ring.unfix(&l.fd)?;
        }
        self.resume_accepting()
    }

    /// Takes the connections that waited for a slot, and accepts again.
    fn resume_accepting(&mut self) -> io::Result<()> {
        if self.stopping.is_some() || self.accepting {
            return Ok(());
        }
        while let Some(fd) = self.waiting.pop_front() {
            match self.shared.conns.clone().try_acquire_owned() {
                Ok(p) => self.start(fd, p)?,
                Err(_) => {
                    self.waiting.push_front(fd);
                    return Ok(());
                }
            }
        }
        if self.shared.conns.available_permits() > 0 && self.accept_retry.is_none() {
            self.ring.accept_multi(&self.listener, ACCEPT)?;
            self.accepting = true;
        }
        Ok(())
    }

    /// The ring has let go of the socket: the connection goes on as a
    /// tokio task, with the bytes it read and the request it stopped at.
    fn hand_over(&mut self, token: u64) -> io::Result<()> {
        let Some(link) = self.links.remove(token) else {
            return Ok(());
        };
        // The socket lives on in tokio; the table lets go of it.
        self.ring.unfix(&link.fd)?;
        let End::Hand(slow) = link.end else {
            return Ok(());
        };
        let fd = match link.fd.as_fd().try_clone_to_owned() {
            Ok(fd) => fd,
            // Out of descriptors: this connection ends, not the server.
            Err(e) => {
                log!(
                    "tcpwise serve: conn={} peer={} closed: {e}",
                    link.core.id,
                    link.core.peer
                );
                return self.resume_accepting();
            }
        };
        let mut core = link.core;
        // In the order read: what the core kept, then what was held.
        core.pending.extend_from_slice(&link.held);
        self.tasks.fetch_add(1, Ordering::Relaxed);
        let task = Task(self.tasks.clone());
        let (opts, stop, permit) = (self.opts.clone(), self.stop.clone(), link._permit);
        self.hand.spawn(async move {
            let _task = task;
            let _permit = permit;
            take_over(fd, core, slow, &opts, stop).await;
        });
        Ok(())
    }

    /// Deadlines: connections past theirs are closed; accepting resumes.
    fn timers(&mut self, now: Instant) -> io::Result<()> {
        if self.accept_retry.is_some_and(|t| now >= t) {
            self.accept_retry = None;
        }
        if !self.accepting && self.stopping.is_none() {
            self.resume_accepting()?;
        }
        if now < self.check {
            return Ok(());
        }
        let mut next = now + Duration::from_secs(1);
        let mut late = Vec::new();
        for (t, l) in self.links.iter() {
            // Also a connection whose answers or hand-off wait for a
            // client that does not read: idle as long as it makes no progress.
            let due = match l.end {
                End::Linger(until) => until,
                _ => l.core.deadline(),
            };
            if now >= due {
                if matches!(l.end, End::Open) {
                    l.core.timed_out();
                }
                late.push(t);
            } else {
                next = next.min(due);
            }
        }
        for t in late {
            self.drop_link(t)?;
        }
        self.check = next;
        Ok(())
    }
}

/// Takes newly received `data` into a connection: parsed and answered
/// into `out` on the fast path, held while its answers wait, kept for
/// the hand-off, or dropped while it closes.
fn feed(link: &mut Link, data: &[u8], out: Vec<u8>, now: Instant) -> Vec<u8> {
    match link.end {
        End::Open => {}
        // After input held earlier, which the hand-off puts after `pending`.
        End::Hand(_) => {
            link.held.extend_from_slice(data);
            return out;
        }
        _ => return out,
    }
    if !link.held.is_empty() || (link.sending && link.queued.len() >= OUT_HIGH) {
        link.held.extend_from_slice(data);
        return out;
    }
    if link.fresh {
        // HTTP/2's preface starts with `PRI`, a method HTTP/1.1 reserves
        // for it: decided on the first three bytes, as the tokio path does
        // (the core keeps what came before them, and reads on after it).
        let p = &mut link.core.pending;
        let n = (p.len() + data.len()).min(3);
        let pri = p.iter().chain(data).take(3).eq(&h2::PREFACE[..n]);
        if pri && n < 3 {
            p.extend_from_slice(data);
            return out;
        }
        link.fresh = false;
        if pri {
            p.extend_from_slice(data);
            link.end = End::Hand(None);
            return out;
        }
    }
    step(link, Some(data), out, now)
}

/// One step of the core, its outcome kept in the connection.
fn step(link: &mut Link, data: Option<&[u8]>, mut out: Vec<u8>, now: Instant) -> Vec<u8> {
    let answered = link.core.answered;
    match link.core.consume(data, &mut out) {
        Step::Again => {}
        Step::Slow(s) => link.end = End::Hand(Some(s)),
        Step::Close(drain) => link.end = End::Close(drain),
    }
    link.core.stepped_at(answered, now);
    out
}

/// A handed-over connection, as the tokio path runs it from here on:
/// the slow request, then the connection's next requests; or HTTP/2
/// from the bytes the core kept.
async fn take_over(
    fd: OwnedFd,
    mut core: Core,
    slow: Option<Box<Slow>>,
    opts: &ServeOptions,
    stop: Shutdown,
) {
    let (id, peer, log) = (core.id, core.peer, core.log);
    let r = async {
        let sock = tokio_stream(fd)?;
        let raw = std::os::fd::AsRawFd::as_raw_fd(&sock);
        let sock = tcpwise_tcp::LowatStream::new(sock, opts.notsent_lowat);
        let Some(slow) = slow else {
            let read = std::mem::take(&mut core.pending);
            let send_buf = opts.notsent_lowat.stream_buffer();
            let h2 = ("http", send_buf, Handshake::done());
            return h2::serve_connection(Replay::new(read, sock), h2, None, opts.limits, stop)
                .await;
        };
        let mut conn = Conn::with_core(sock, core).with_fd(raw);
        let answered = conn.answered;
        if !Box::pin(conn.slow(*slow)).await? {
            return conn.close(true).await;
        }
        conn.stepped(answered);
        conn.run(stop).await
    }
    .await;
    if let Err(e) = r
        && log
    {
        log!("conn={id} peer={peer} ended: {e}");
    }
}

fn tokio_stream(fd: OwnedFd) -> io::Result<tokio::net::TcpStream> {
    let s = std::net::TcpStream::from(fd);
    // Accepted by the ring, the socket is blocking; tokio needs it not to be.
    s.set_nonblocking(true)?;
    tokio::net::TcpStream::from_std(s)
}

/// A stream whose first reads return bytes read before it was made.
struct Replay<S> {
    read: Vec<u8>,
    at: usize,
    io: S,
}

impl<S> Replay<S> {
    fn new(read: Vec<u8>, io: S) -> Replay<S> {
        Replay { read, at: 0, io }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Replay<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.at < self.read.len() {
            let n = buf.remaining().min(self.read.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.read[at..at + n]);
            self.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Replay<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
