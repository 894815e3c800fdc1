//! The forwarder: a thread moves packets from one TUN device, through a
//! [`Link`], into the other, for one direction or for both.
//!
//! How many threads ([`Threads`]): DESIGN.md says one thread holds both
//! fds, and at the rates most paths have that is what runs: a thread's
//! cost there is its wake-ups, and one thread for both directions reads
//! the ACKs and data its own writes cause without waking another
//! ([`wake`] says why). Writing a packet into a TUN device runs the
//! receiving kernel's TCP in the writer's context, so above
//! [`SHARED_MAX_BPS`] each direction gets its own thread and both cores
//! work.
//!
//! Timing: the next delivery is a CLOCK_MONOTONIC deadline the thread
//! waits for in `epoll_pwait2` (with its inputs), a little early
//! ([`SPIN_LONG_NS`] while a CPU budget lasts and the machine has idle
//! time, then [`SPIN_SHORT_NS`]), then it spins (still reading input)
//! until the deadline; timer slack is 1 ns. A thread may carry the
//! directions of many testbeds ([`crate::testbeds`]). How late each
//! packet was written relative to its deadline is recorded: that lateness
//! is the emulator's own error and goes into every report.
//!
//! Offloads ([`crate::gso`]): on TUN devices opened with a virtio-net
//! header, one read can bring a 64 KB super-packet, which is split into
//! its segments before the link sees it; the packets due at one pass are
//! written with in-order segments of a flow (TCP, or UDP datagrams of one
//! size) joined into one super-packet (`writev`: the virtio-net header,
//! the joined headers, each segment's payload), so the receiving kernel
//! handles 64 KB at a time. Lateness is taken per segment at its write.

use crate::gso::{self, Packet, VnetHdr};
use crate::sys;
use hdrhistogram::Histogram;
use std::io::IoSlice;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use tcpwise_link::Link;

/// How long a run of segments may wait for the next segment of its flow
/// before it is written (GRO's flush timer, as a NIC's interrupt
/// moderation holds packets a few tens of µs): at 5 Gbit/s a 1,500-byte
/// segment is due every 2.4 µs, so a run gathers ~20 segments and the
/// receiving kernel one super-packet instead of 20. Only a run that can
/// still grow waits, and only when its next segment is due within the
/// hold: sparse packets (probes, handshakes, ACKs) never wait.
pub const JOIN_HOLD_NS: u64 = 50_000;

/// Packets read per wake-up before deliveries are looked at again.
const READ_BATCH: usize = 64;
/// A read buffer: the largest super-packet and its virtio-net header.
const READ_BUF: usize = 65_536 + 1_024;
/// Read buffers kept for reuse while their segments are on the link:
/// 64 MB, two BDPs of 10 Gbit/s at 20 ms; beyond it a still-held buffer is
/// left to its segments to free.
const READS_OUT: usize = 1_024;

/// Bytes of a hop's arrival stamp before each datagram.
const HOP_STAMP: usize = 8;

/// The stop doorbell's epoll token; a direction's input is its index.
const TOKEN_STOP: u64 = u64::MAX;

mod stats;
mod wake;
pub use stats::*;
pub use wake::{
    DENSE_GAP_NS, SPIN_BUDGET_NS, SPIN_LONG_NS, SPIN_SHORT_NS, SPIN_WINDOW_NS, spin_share,
};

/// Maximum number of phases a run can mark.
pub const MAX_PHASES: usize = 8;

/// Shared phase index: the forwarder files each packet's lateness under
/// the phase current when it was written, so a selftest can report idle
/// and loaded lateness apart.
pub type Phase = Arc<AtomicUsize>;

/// Faults to inject into a forwarder, configured in code (the way
/// smoltcp's `FaultInjector` wraps a device): tests use them to prove that
/// a dying emulator tears the testbed down cleanly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Panic after forwarding this many packets.
    pub panic_after: Option<u64>,
}

impl Faults {
    /// Called after every packet forwarded.
    fn after_packet(&self, forwarded: u64) {
        if self.panic_after.is_some_and(|n| forwarded >= n) {
            panic!("injected forwarder fault (panic after {forwarded} packets)");
        }
    }
}

/// How many forwarder threads a testbed runs (`--forwarder-threads`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Threads {
    /// One for both directions when neither is ever set faster than
    /// [`SHARED_MAX_BPS`], else one per direction.
    #[default]
    Auto,
    /// One thread carries both directions.
    One,
    /// A thread per direction.
    Two,
}

/// A `--forwarder-threads` value that is none of auto, 1 and 2.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("'{0}': forwarder threads are auto, 1 or 2")]
pub struct BadThreads(pub String);

impl std::str::FromStr for Threads {
    type Err = BadThreads;

    /// `auto`, `1` or `2`.
    fn from_str(s: &str) -> Result<Threads, BadThreads> {
        match s {
            "auto" => Ok(Threads::Auto),
            "1" => Ok(Threads::One),
            "2" => Ok(Threads::Two),
            _ => Err(BadThreads(s.to_string())),
        }
    }
}

/// The fastest path one thread carries both directions of under
/// [`Threads::Auto`], in bit/s of each direction's highest mean rate.
pub const SHARED_MAX_BPS: f64 = 200e6;

impl Threads {
    /// Whether one thread carries both directions of a path whose
    /// directions peak at these rates (`None`: unlimited).
    pub fn shared(self, up_bps: Option<f64>, down_bps: Option<f64>) -> bool {
        let slow = |r: Option<f64>| r.is_some_and(|r| r <= SHARED_MAX_BPS);
        match self {
            Threads::One => true,
            Threads::Two => false,
            Threads::Auto => slow(up_bps) && slow(down_bps),
        }
    }
}

/// How a forwarder thread runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwarderOptions {
    /// SCHED_FIFO priority, so ordinary tasks cannot delay a deadline
    /// (`tcpwise emu` turns it off with `TCPWISE_NO_RT=1`).
    pub realtime: bool,
    /// Injected faults (none by default).
    pub faults: Faults,
    /// Open the TUN devices with a virtio-net header and TSO/USO where the
    /// kernel agrees (`--no-offload` turns it off).
    pub offload: bool,
    /// One thread for both directions, or one each.
    pub threads: Threads,
}

impl Default for ForwarderOptions {
    fn default() -> Self {
        ForwarderOptions {
            realtime: true,
            faults: Faults::default(),
            offload: true,
            threads: Threads::Auto,
        }
    }
}

/// The two TUN ends a direction moves packets between.
#[derive(Clone)]
pub struct Ends {
    /// Where packets are read.
    pub input: Arc<OwnedFd>,
    /// Where they are written when due.
    pub output: Arc<OwnedFd>,
    /// Both were opened with a virtio-net header and offloads: "tso+uso"
    /// or "tso"; `None`: one plain packet per read and write.
    pub offload: Option<&'static str>,
    /// Why offloads are off (`--no-offload`, the kernel's refusal).
    pub note: Option<String>,
    /// Where a packet goes by its destination address, when this link
    /// feeds several (a topology's bottleneck); empty: always `output`.
    /// A packet to none of them is dropped and counted as a write error.
    pub routes: Vec<(std::net::IpAddr, Arc<OwnedFd>)>,
    /// The input is a hop from another link ([`crate::dumbbell`]): each
    /// datagram starts with the 8-byte time it left that link, which is
    /// when it arrives at this one (not when this thread got to read it).
    pub hop_in: bool,
    /// The output is a hop to another link: each write starts with the
    /// time it was made.
    pub hop_out: bool,
}

/// One direction a forwarder thread carries.
pub struct Direction {
    /// "up" or "down".
    pub name: String,
    /// Its TUN devices.
    pub ends: Ends,
    /// Its link.
    pub link: Link<Packet>,
    /// `--log` and `--pcap`.
    pub rec: Option<crate::record::Recorder>,
    /// What `--meter` reads.
    pub gauge: Arc<crate::meter::Gauge>,
    /// Counts each flow leaving the link (a topology's bottleneck).
    pub flows: Option<crate::flows::FlowMeter>,
}

/// A running forwarder thread: one direction, or both.
pub struct Forwarder {
    stop: OwnedFd,
    handle: Option<JoinHandle<Vec<DirectionStats>>>,
    directions: Vec<String>,
}

impl Forwarder {
    /// Starts one thread moving packets for each direction in `dirs`,
    /// from its input to its output through its link.
    pub fn spawn(
        dirs: Vec<Direction>,
        phase: Phase,
        opts: ForwarderOptions,
    ) -> std::io::Result<Forwarder> {
        let stop = sys::eventfd()?;
        let stop_raw = stop.as_raw_fd();
        let directions: Vec<String> = dirs.iter().map(|d| d.name.clone()).collect();
        let handle = std::thread::Builder::new()
            .name(format!("tw-fwd-{}", directions.join("+")))
            .spawn(move || run(dirs, stop_raw, phase, opts))?;
        Ok(Forwarder {
            stop,
            handle: Some(handle),
            directions,
        })
    }

    /// Whether the thread has stopped on its own (it only does on failure).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Stops the thread and returns each direction's statistics.
    pub fn stop(mut self) -> Vec<DirectionStats> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Vec<DirectionStats> {
        sys::eventfd_signal(self.stop.as_raw_fd());
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(s)) => s,
            Some(Err(p)) => self
                .directions
                .iter()
                .map(|d| DirectionStats {
                    direction: d.clone(),
                    failure: Some(format!("forwarder thread panicked: {}", panic_text(&p))),
                    ..DirectionStats::default()
                })
                .collect(),
            None => Vec::new(),
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        if self.handle.is_some() {
            let _ = self.stop_inner();
        }
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into())
}

struct Loop {
    /// "up" or "down".
    name: String,
    input: Arc<OwnedFd>,
    output: Arc<OwnedFd>,
    routes: Vec<(std::net::IpAddr, Arc<OwnedFd>)>,
    flows: Option<crate::flows::FlowMeter>,
    hop_in: bool,
    hop_out: bool,
    /// When the last packet arrived (a hop's stamps, kept in order).
    last_in: u64,
    link: Link<Packet>,
    /// Where a read lands: shared with the segments split from it, so a
    /// new one is taken while they are on the link.
    scratch: Arc<Vec<u8>>,
    /// Read buffers whose segments may still be on the link, oldest
    /// first (segments leave in order, so the oldest frees first).
    reads_out: std::collections::VecDeque<Arc<Vec<u8>>>,
    /// Buffers for packets' heads (the headers of a segment, or a whole
    /// packet).
    pool: Vec<Vec<u8>>,
    /// Reads and writes carry a virtio-net header.
    vnet: bool,
    /// Segments may be joined on write (until the kernel refuses one).
    join: bool,
    /// UDP datagrams too: the devices take USO (Linux 6.2), and the
    /// kernel has not refused a UDP run.
    join_udp: bool,
    off: OffloadStats,
    /// A read's segments, before the link.
    segs: Vec<Packet>,
    /// The packets due in this pass, and their deadlines (0: a duplicate,
    /// whose lateness is not counted twice).
    out: Vec<Packet>,
    due: Vec<u64>,
    /// The joined headers of a write.
    hdr: Vec<u8>,
    /// A held run is written by then.
    flush_at: Option<u64>,
    /// The last run was cut by its hold (a dense flow).
    dense: bool,
    /// When the last write was made.
    last_write: u64,
    lateness: Histogram<u64>,
    phases: Vec<Histogram<u64>>,
    phase: Phase,
    write_errors: u64,
    forwarded: u64,
    faults: Faults,
    rec: Option<crate::record::Recorder>,
    gauge: Arc<crate::meter::Gauge>,
    /// When the gauge was last written.
    published: u64,
    /// epoll said the input has packets, and no read has found it empty
    /// since: a pass reads only then, not once more per wake-up to learn
    /// there is nothing.
    readable: bool,
}

impl Loop {
    fn new(d: Direction, phase: Phase, faults: Faults) -> Loop {
        let hist = || Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
        Loop {
            name: d.name,
            input: d.ends.input,
            output: d.ends.output,
            routes: d.ends.routes,
            flows: d.flows,
            hop_in: d.ends.hop_in,
            hop_out: d.ends.hop_out,
            last_in: 0,
            link: d.link,
            scratch: Arc::new(vec![0u8; READ_BUF]),
            reads_out: std::collections::VecDeque::with_capacity(READS_OUT),
            pool: Vec::new(),
            vnet: d.ends.offload.is_some(),
            join: d.ends.offload.is_some(),
            join_udp: d.ends.offload == Some("tso+uso"),
            off: OffloadStats {
                mode: d.ends.offload.unwrap_or("off").to_string(),
                note: d.ends.note,
                ..OffloadStats::default()
            },
            segs: Vec::with_capacity(64),
            out: Vec::with_capacity(256),
            due: Vec::with_capacity(256),
            hdr: Vec::with_capacity(128),
            flush_at: None,
            dense: false,
            last_write: 0,
            lateness: hist(),
            phases: (0..MAX_PHASES).map(|_| hist()).collect(),
            phase,
            write_errors: 0,
            forwarded: 0,
            faults,
            rec: d.rec,
            gauge: d.gauge,
            published: 0,
            readable: true,
        }
    }

    /// Whether a pass at `now` has anything to do: input epoll reported,
    /// a packet or a held run due, or a recorder to feed. A thread that
    /// carries many testbeds passes over the others, whose links have
    /// nothing due (their state catches up from their own clocks when
    /// they next are).
    fn busy(&self, now: u64) -> bool {
        self.readable || self.rec.is_some() || self.wake_at().is_some_and(|w| w <= now)
    }

    /// One pass: read what waits, write what is due, publish, record.
    fn pass(&mut self) -> std::io::Result<()> {
        self.read_batch()?;
        self.deliver();
        self.publish();
        if let Some(r) = &mut self.rec {
            if let Some(buf) = r.capacity_buf() {
                self.link.capacity_until(sys::mono_ns(), buf);
            }
            r.flush();
        }
        Ok(())
    }

    /// The direction's statistics once the thread stops; `cpu_s` is the
    /// thread's (`shared`: with the other direction).
    fn finish(
        mut self,
        mut failure: Option<String>,
        cpu_s: f64,
        wall_s: f64,
        shared: bool,
    ) -> DirectionStats {
        if let Some(r) = &mut self.rec {
            if let Some(buf) = r.capacity_buf() {
                self.link.capacity_until(sys::mono_ns(), buf);
            }
            if let Some(e) = r.finish() {
                failure.get_or_insert(e);
            }
        }
        DirectionStats {
            direction: self.name,
            offload: self.off,
            link: self.link.report(),
            write_errors: self.write_errors,
            // Read from the input device's namespace by the testbed.
            input_dropped: 0,
            lateness: Lateness::from_hist(&self.lateness),
            phase_lateness: self.phases.iter().map(Lateness::from_hist).collect(),
            cpu_s,
            wall_s,
            shared_thread: shared,
            thread_testbeds: 1,
            thread_links: 2,
            coalesced_s: 0.0,
            flows: self.flows.map(|f| f.report()),
            failure,
        }
    }

    /// The read buffer, for this forwarder alone: the one it has if no
    /// segment holds it, else the oldest buffer the link has let go of,
    /// else a new one.
    fn read_buf(&mut self) -> &mut Vec<u8> {
        if Arc::get_mut(&mut self.scratch).is_none() {
            let full = self.reads_out.len() >= READS_OUT;
            let fresh = match self.reads_out.front_mut().map(Arc::get_mut) {
                Some(Some(_)) => self.reads_out.pop_front(),
                // Still held (a long queue, a reordered segment): let the
                // segments free it when they go, and keep no count of it.
                Some(None) if full => {
                    self.reads_out.pop_front();
                    None
                }
                _ => None,
            }
            .unwrap_or_else(|| Arc::new(vec![0u8; READ_BUF]));
            let held = std::mem::replace(&mut self.scratch, fresh);
            self.reads_out.push_back(held);
        }
        Arc::get_mut(&mut self.scratch).expect("unique: just checked or made")
    }

    /// Reads up to a batch of packets into the link.
    fn read_batch(&mut self) -> std::io::Result<()> {
        if !self.readable {
            return Ok(());
        }
        for _ in 0..READ_BATCH {
            let fd = self.input.as_raw_fd();
            let Some(n) = sys::read_nb(fd, self.read_buf())? else {
                self.readable = false;
                return Ok(());
            };
            if n == 0 {
                continue;
            }
            let (now, off) = self.arrival(n);
            self.split(off, n);
            let mut segs = std::mem::take(&mut self.segs);
            // A super-packet's segments share their flow and ECN field.
            let mut class = None;
            for p in segs.drain(..) {
                let size = p.len() as u32;
                let (flow, ecn) = *class.get_or_insert_with(|| crate::ip::classify(&p.head));
                if let Some(r) = &mut self.rec {
                    r.arrive(now, size);
                }
                if let Err(d) = self.link.enqueue_flow(now, size, flow, ecn, p) {
                    if let Some(r) = &mut self.rec {
                        r.drop(now, size, d.cause);
                    }
                    self.recycle(d.item.head);
                }
            }
            self.segs = segs;
            self.recycle_dropped();
        }
        Ok(())
    }

    /// When the `n` bytes just read arrived, and where the packet starts
    /// in them: now, or a hop's stamp (never before the last arrival, so
    /// the link's clock runs forward; never in the future).
    fn arrival(&mut self, n: usize) -> (u64, usize) {
        let now = sys::mono_ns();
        if !self.hop_in || n < HOP_STAMP {
            return (now, 0);
        }
        let stamp = u64::from_ne_bytes(self.scratch[..HOP_STAMP].try_into().expect("8 bytes"));
        let at = stamp.clamp(self.last_in.min(now), now);
        self.last_in = at;
        (at, HOP_STAMP)
    }

    /// Turns the bytes `off..n` read into `segs`: one packet, or a
    /// super-packet's segments.
    fn split(&mut self, off: usize, n: usize) {
        self.off.reads += 1;
        let pool = &mut self.pool;
        let mut buf = || {
            let mut b = pool.pop().unwrap_or_default();
            b.clear();
            b
        };
        if !self.vnet {
            let mut b = buf();
            b.extend_from_slice(&self.scratch[off..n]);
            self.segs.push(Packet::whole(b));
        } else if let Some(h) = VnetHdr::parse(&self.scratch[off..n]) {
            let data = off + gso::VNET_HDR_LEN..n;
            if gso::split(&h, &self.scratch, data, buf, &mut self.segs).is_err() {
                self.off.unsplittable += 1;
            }
        }
        let k = self.segs.len() as u64;
        self.off.segments_read += k;
        self.off.super_reads += u64::from(k > 1);
    }

    /// Takes back what the queue dropped (AQM, drop-head) for reuse.
    fn recycle_dropped(&mut self) {
        let dropped: Vec<_> = self.link.drain_dropped().collect();
        let now = if dropped.is_empty() {
            0
        } else {
            sys::mono_ns()
        };
        for d in dropped {
            if let Some(r) = &mut self.rec {
                r.drop(now, d.item.len() as u32, d.cause);
            }
            self.recycle(d.item.head);
        }
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.pool.len() < 4096 {
            self.pool.push(buf);
        }
    }

    /// Writes the counters into the gauge `--meter` reads, at most every
    /// 10 ms.
    fn publish(&mut self) {
        let now = sys::mono_ns();
        if now.saturating_sub(self.published) >= 10_000_000 {
            self.published = now;
            let (bytes, _) = self.link.queued(now);
            self.gauge.publish(self.link.stats(), bytes);
        }
    }

    /// Writes every packet that is due.
    fn deliver(&mut self) {
        let pcap = self.rec.as_ref().is_some_and(|r| r.wants_packets());
        loop {
            let now = sys::mono_ns();
            let Some(d) = self.link.dequeue_full(now) else {
                break;
            };
            let mut p = d.item;
            if d.ce {
                // The IP header is in the head.
                crate::ip::set_ce(&mut p.head);
            }
            if let Some(r) = d.corrupt {
                // Completed first, so the receiver's check sees the flip.
                p.finalize_csum();
                crate::ip::flip_bit(p.make_contiguous(), r);
                p.corrupt = true;
            }
            if pcap {
                // Captured whole, with valid checksums.
                p.finalize_csum();
                p.make_contiguous();
            }
            if let Some(r) = &mut self.rec {
                r.depart(d.arrival, d.departure, p.len() as u32, d.ce);
            }
            if let Some(m) = &mut self.flows {
                m.record(d.deadline, &p.head, p.len());
            }
            if d.duplicate {
                self.out.push(p.clone());
                self.due.push(0);
            }
            self.out.push(p);
            self.due.push(d.deadline);
            self.forwarded += 1;
            self.faults.after_packet(self.forwarded);
        }
        self.recycle_dropped();
        if !self.holding() {
            self.write_out();
        }
    }

    /// Whether the packets due wait for more ([`JOIN_HOLD_NS`]); sets
    /// when they are written at the latest.
    fn holding(&mut self) -> bool {
        self.flush_at = None;
        let (Some(last), Some(&first)) = (self.out.last(), self.due.iter().find(|&&d| d != 0))
        else {
            return false;
        };
        let (until, now, next) = (
            first + JOIN_HOLD_NS,
            sys::mono_ns(),
            self.link.next_deadline(),
        );
        let joinable = self.join && gso::may_grow(last, self.join_udp);
        let hold = joinable && now < until && next.is_some_and(|n| n <= until);
        if hold {
            self.flush_at = Some(until);
        }
        // A run cut by its hold with the flow still going means a dense
        // flow: the next wake-up waits a hold past the next deadline (one
        // wake-up per hold, not one per segment; arming a timer costs a VM
        // exit here).
        self.dense = joinable && now >= until && next.is_some_and(|n| n <= now + JOIN_HOLD_NS);
        hold
    }

    /// When the loop must wake next: a held run's flush, else the next
    /// deadline (a hold past it in a dense flow).
    fn wake_at(&self) -> Option<u64> {
        self.flush_at.or_else(|| {
            let n = self.link.next_deadline()?;
            Some(if self.dense { n + JOIN_HOLD_NS } else { n })
        })
    }

    /// Writes the packets due, in order, joining runs of segments.
    fn write_out(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        let mut i = 0;
        while i < out.len() {
            let k = if self.join {
                gso::run_len(&out[i..], self.join_udp)
            } else {
                1
            };
            let now = sys::mono_ns();
            let res = if k > 1 {
                let r = self.write_joined(&out[i..i + k]);
                // EINVAL (InvalidInput): a virtio-net header it will not take.
                if r.as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::InvalidInput)
                {
                    // The kernel takes no joined packets of this kind:
                    // segment by segment from now on, and say so once.
                    if gso::is_udp(&out[i]) {
                        self.join_udp = false;
                        self.off.note = Some("the receiving TUN device refused joined UDP datagrams (EINVAL): they are written one by one".into());
                    } else {
                        self.join = false;
                        self.off.note = Some("the receiving TUN device refused a joined super-packet (EINVAL): segments are written one by one".into());
                    }
                    continue;
                }
                r
            } else {
                self.write_one(&out[i])
            };
            self.off.writes += 1;
            self.last_write = now;
            self.off.segments_written += k as u64;
            let ph = self.phase.load(Ordering::Relaxed).min(MAX_PHASES - 1);
            for j in i..i + k {
                if self.due[j] != 0 {
                    let late = now.saturating_sub(self.due[j]).max(1);
                    let _ = self.lateness.record(late);
                    let _ = self.phases[ph].record(late);
                }
            }
            match res {
                Err(_) => self.write_errors += k as u64,
                Ok(()) => {
                    if let Some(r) = &mut self.rec {
                        let t = sys::mono_ns();
                        for p in &out[i..i + k] {
                            r.packet(t, &p.head);
                        }
                    }
                }
            }
            i += k;
        }
        for p in out.drain(..) {
            self.recycle(p.head);
        }
        self.out = out;
        self.due.clear();
    }

    /// The fd a packet goes to: `output`, or its destination's route.
    fn output_for(&self, p: &Packet) -> std::io::Result<i32> {
        if self.routes.is_empty() {
            return Ok(self.output.as_raw_fd());
        }
        let dst = crate::flows::destination(&p.head);
        self.routes
            .iter()
            .find(|(a, _)| Some(*a) == dst)
            .map(|(_, fd)| fd.as_raw_fd())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::AddrNotAvailable))
    }

    /// A hop's stamp for a write, or nothing when the output is a TUN
    /// device: when the packets leave, as on a wire, so a link's lateness
    /// is its own and the next link's counts from here.
    fn stamp(&self) -> Option<[u8; HOP_STAMP]> {
        self.hop_out.then(|| sys::mono_ns().to_ne_bytes())
    }

    fn write_one(&mut self, p: &Packet) -> std::io::Result<()> {
        let fd = self.output_for(p)?;
        let stamp = self.stamp();
        let mut parts = Vec::with_capacity(4);
        if let Some(s) = &stamp {
            parts.push(IoSlice::new(s));
        }
        let h = VnetHdr::single(p).encode();
        if self.vnet {
            parts.push(IoSlice::new(&h));
            parts.extend([IoSlice::new(&p.head), IoSlice::new(p.body())]);
        } else {
            parts.push(IoSlice::new(&p.head));
        }
        sys::write_vectored(fd, &parts)
    }

    fn write_joined(&mut self, run: &[Packet]) -> std::io::Result<()> {
        let stamp = self.stamp();
        let h = gso::joined_header(run, &mut self.hdr);
        let vh = h.encode();
        let skip = usize::from(h.hdr_len);
        let mut pieces = Vec::with_capacity(run.len());
        gso::payloads(run, skip, &mut pieces);
        let mut parts = Vec::with_capacity(pieces.len() + 3);
        if let Some(s) = &stamp {
            parts.push(IoSlice::new(s));
        }
        parts.push(IoSlice::new(&vh));
        parts.push(IoSlice::new(&self.hdr));
        parts.extend(pieces.iter().map(|p| IoSlice::new(p.as_slice())));
        sys::write_vectored(self.output_for(&run[0])?, &parts)
    }
}

fn run(
    dirs: Vec<Direction>,
    stop: i32,
    phase: Phase,
    opts: ForwarderOptions,
) -> Vec<DirectionStats> {
    sys::set_timer_slack_1ns();
    if opts.realtime {
        sys::set_realtime(10);
    }
    let cpu0 = sys::thread_cpu_ns();
    let wall0 = sys::mono_ns();
    let mut loops: Vec<Loop> = dirs
        .into_iter()
        .map(|d| Loop::new(d, phase.clone(), opts.faults))
        .collect();
    let mut coalesced_ns = 0;
    let failure = wake::event_loop(&mut loops, stop, &mut coalesced_ns)
        .err()
        .map(|e| e.to_string());
    let cpu_s = (sys::thread_cpu_ns() - cpu0) as f64 / 1e9;
    let wall_s = (sys::mono_ns() - wall0) as f64 / 1e9;
    let shared = loops.len() > 1;
    // Each testbed gives a shared thread both its directions.
    let links = loops.len();
    let testbeds = links.div_ceil(2);
    loops
        .into_iter()
        .map(|lp| {
            let mut st = lp.finish(failure.clone(), cpu_s, wall_s, shared);
            st.thread_testbeds = testbeds;
            st.thread_links = links;
            st.coalesced_s = coalesced_ns as f64 / 1e9;
            st
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_carries_both_directions_of_a_slow_path_only() {
        let (slow, fast) = (Some(16e6), Some(1e9));
        assert!(Threads::Auto.shared(slow, slow));
        assert!(Threads::Auto.shared(Some(SHARED_MAX_BPS), slow));
        // Either direction fast or unlimited: a thread each.
        assert!(!Threads::Auto.shared(slow, fast));
        assert!(!Threads::Auto.shared(None, slow));
        assert!(!Threads::Auto.shared(None, None));
        // Forced either way.
        assert!(Threads::One.shared(None, None));
        assert!(!Threads::Two.shared(slow, slow));
        assert_eq!("1".parse(), Ok(Threads::One));
        assert_eq!("auto".parse(), Ok(Threads::Auto));
        assert!(
            "3".parse::<Threads>()
                .unwrap_err()
                .to_string()
                .contains("auto, 1 or 2")
        );
    }

    #[test]
    fn a_shared_threads_cpu_is_counted_once() {
        let dir = |cpu_s: f64, shared_thread: bool| DirectionStats {
            cpu_s,
            wall_s: 10.0,
            shared_thread,
            ..DirectionStats::default()
        };
        assert_eq!(
            forwarders_cpu_percent(&[dir(1.0, true), dir(1.0, true)]),
            10.0
        );
        assert_eq!(
            forwarders_cpu_percent(&[dir(1.0, false), dir(2.0, false)]),
            30.0
        );
    }
}
