//! The forwarder: one thread per direction moves packets from one TUN
//! device, through a [`Link`], into the other.
//!
//! Why a thread per direction (DESIGN.md says one thread holds both fds):
//! the two directions share no state, and writing a packet into a TUN
//! device runs the receiving kernel's TCP in the writer's context, so at
//! high rates one thread per direction lets both cores work. Each loop is
//! also simpler: one input, one timer.
//!
//! Timing: the next delivery is an absolute CLOCK_MONOTONIC deadline on a
//! timerfd armed a little early ([`SPIN_LONG_NS`] while a CPU budget lasts, then
//! [`SPIN_SHORT_NS`]), then the thread spins (still
//! reading input) until the deadline; timer slack is 1 ns. How late each
//! packet was written relative to its deadline is recorded: that lateness
//! is the emulator's own error and goes into every report.

use crate::sys;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use tcpwise_link::{Link, LinkStats};

/// How long before a deadline the timer fires and the thread starts
/// spinning, while the spin budget lasts. On the VMs we run on, timer
/// wake-ups reach p99 0.3-0.7 ms even with zero cpu_dma_latency, while a
/// spinning thread sees p99 under 0.1 ms: sparse traffic (round-trip
/// probes, TTFB experiments) gets the long margin for free.
pub const SPIN_LONG_NS: u64 = 1_000_000;
/// The margin once the budget is spent: none. Dense traffic would
/// otherwise keep the thread spinning on every packet and take a core from
/// the TCP endpoints; its packets then leave one timer wake-up late
/// (~50 µs here), and the lateness report shows it.
pub const SPIN_SHORT_NS: u64 = 0;
/// Spinning allowed per [`SPIN_WINDOW_NS`] before falling back to the short margin.
pub const SPIN_BUDGET_NS: u64 = 15_000_000;
/// The budget's accounting window (so spinning takes at most ~15 % of a core).
pub const SPIN_WINDOW_NS: u64 = 100_000_000;
/// How often a forwarder recounts the testbeds on the machine.
const SHARE_EVERY_NS: u64 = 500_000_000;

/// This forwarder's share of the spin budget: the machine's cores divided
/// among every running forwarder, at most 1. Spinning at SCHED_FIFO takes a
/// core from everything else (the TCP endpoints, and equal-priority
/// forwarders, which wait until the spinner blocks), so 16 testbeds each
/// spinning 15 % of a core would ask 2 cores for 4.8 and every one of
/// them would miss its deadlines and its rate. Split, the whole machine
/// spins at most 15 % of each core, however many testbeds run, and a
/// forwarder beyond its share waits on its timer (one wake-up late, which
/// its lateness report shows).
///
/// Testbeds are counted by their client namespaces in `/run/netns`
/// (`tw-<pid>-c<n>`, one per testbed, two forwarders each), so separate
/// `tcpwise emu` processes and the lab's parallel testbeds see each other
/// with no shared state to leak. Rootless testbeds (no named namespace)
/// count only themselves.
pub fn spin_share() -> f64 {
    let testbeds = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with("tw-") && n.split('-').nth(2).is_some_and(|r| r.starts_with('c'))
                })
                .count()
        })
        .unwrap_or(0)
        .max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores as f64 / (2 * testbeds) as f64).min(1.0)
}

/// Packets read per wake-up before deliveries are looked at again.
const READ_BATCH: usize = 64;

const TOKEN_INPUT: u64 = 1;
const TOKEN_TIMER: u64 = 2;
const TOKEN_STOP: u64 = 3;

/// Lateness percentiles, microseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Lateness {
    /// Packets measured.
    pub samples: u64,
    /// Median, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Maximum, µs.
    pub max_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
}

impl Lateness {
    fn from_hist(h: &Histogram<u64>) -> Lateness {
        let us = |v: u64| v as f64 / 1000.0;
        Lateness {
            samples: h.len(),
            p50_us: us(h.value_at_quantile(0.5)),
            p99_us: us(h.value_at_quantile(0.99)),
            max_us: us(h.max()),
            mean_us: h.mean() / 1000.0,
        }
    }
}

/// What one direction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DirectionStats {
    /// "up" (client to server) or "down".
    pub direction: String,
    /// The link model's counters.
    #[serde(flatten)]
    pub link: LinkStats,
    /// Packets the output TUN refused.
    pub write_errors: u64,
    /// How late packets were written relative to their deadlines.
    pub lateness: Lateness,
    /// The same, per measurement phase marked with [`Phase`] (index = phase).
    pub phase_lateness: Vec<Lateness>,
    /// CPU seconds the forwarder thread used.
    pub cpu_s: f64,
    /// Seconds it ran.
    pub wall_s: f64,
    /// Set when the thread died (panic or I/O error).
    pub failure: Option<String>,
}

impl DirectionStats {
    /// Average CPU use of the thread, percent of one core.
    pub fn cpu_percent(&self) -> f64 {
        if self.wall_s > 0.0 {
            100.0 * self.cpu_s / self.wall_s
        } else {
            0.0
        }
    }

    /// One line for stderr.
    pub fn summary_line(&self) -> String {
        let l = &self.link;
        // Causes and effects that are not zero, in a fixed order.
        let extra = |v: &[(&str, u64)]| -> String {
            v.iter()
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!(", {k} {n}"))
                .collect()
        };
        format!(
            "{:>4}: {} pkts {:.1} MB delivered, dropped {} (queue {}, loss {}{}){}, peak queue {:.1} KB/{} pkts, lateness p50 {:.0}µs p99 {:.0}µs max {:.0}µs, cpu {}",
            self.direction,
            l.delivered_packets,
            l.delivered_bytes as f64 / 1e6,
            l.dropped_queue
                + l.dropped_loss
                + l.dropped_outage
                + l.dropped_aqm
                + l.dropped_onoff
                + l.dropped_police,
            l.dropped_queue,
            l.dropped_loss,
            extra(&[
                ("aqm", l.dropped_aqm),
                ("outage", l.dropped_outage),
                ("off", l.dropped_onoff),
                ("policed", l.dropped_police),
            ]),
            extra(&[
                ("marked CE", l.marked_ce),
                ("reordered", l.reordered),
                ("duplicated", l.duplicated),
                ("corrupted", l.corrupted),
            ]),
            l.peak_queue_bytes as f64 / 1e3,
            l.peak_queue_packets,
            self.lateness.p50_us,
            self.lateness.p99_us,
            self.lateness.max_us,
            // Over a run shorter than a second, start-up spinning is most
            // of it: an average would mislead.
            if self.wall_s >= 1.0 {
                format!("{:.0}% of a core", self.cpu_percent())
            } else {
                format!("{:.0} ms", self.cpu_s * 1e3)
            }
        )
    }
}

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

/// How a forwarder thread runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwarderOptions {
    /// SCHED_FIFO priority, so ordinary tasks cannot delay a deadline
    /// (`tcpwise emu` turns it off with `TCPWISE_NO_RT=1`).
    pub realtime: bool,
    /// Injected faults (none by default).
    pub faults: Faults,
}

impl Default for ForwarderOptions {
    fn default() -> Self {
        ForwarderOptions {
            realtime: true,
            faults: Faults::default(),
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
}

/// A running direction.
pub struct Forwarder {
    stop: OwnedFd,
    handle: Option<JoinHandle<DirectionStats>>,
    direction: String,
}

impl Forwarder {
    /// Starts moving packets from `ends.input` to `ends.output` through `link`.
    pub fn spawn(
        direction: &str,
        ends: Ends,
        link: Link<Vec<u8>>,
        phase: Phase,
        opts: ForwarderOptions,
        rec: Option<crate::record::Recorder>,
        gauge: Arc<crate::meter::Gauge>,
    ) -> std::io::Result<Forwarder> {
        let stop = sys::eventfd()?;
        let stop_raw = stop.as_raw_fd();
        let dir = direction.to_string();
        let handle = std::thread::Builder::new()
            .name(format!("tw-fwd-{direction}"))
            .spawn(move || run(dir, ends, link, stop_raw, (phase, gauge), opts, rec))?;
        Ok(Forwarder {
            stop,
            handle: Some(handle),
            direction: direction.to_string(),
        })
    }

    /// Whether the thread has stopped on its own (it only does on failure).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Stops the thread and returns its statistics.
    pub fn stop(mut self) -> DirectionStats {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> DirectionStats {
        sys::eventfd_signal(self.stop.as_raw_fd());
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(s)) => s,
            Some(Err(p)) => DirectionStats {
                direction: self.direction.clone(),
                failure: Some(format!("forwarder thread panicked: {}", panic_text(&p))),
                ..DirectionStats::default()
            },
            None => DirectionStats::default(),
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
    input: Arc<OwnedFd>,
    output: Arc<OwnedFd>,
    link: Link<Vec<u8>>,
    scratch: Vec<u8>,
    pool: Vec<Vec<u8>>,
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
}

impl Loop {
    /// Reads up to a batch of packets into the link.
    fn read_batch(&mut self) -> std::io::Result<()> {
        for _ in 0..READ_BATCH {
            let Some(n) = sys::read_nb(self.input.as_raw_fd(), &mut self.scratch)? else {
                return Ok(());
            };
            if n == 0 {
                continue;
            }
            let now = sys::mono_ns();
            let mut buf = self.pool.pop().unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(&self.scratch[..n]);
            let (flow, ecn) = crate::ip::classify(&buf);
            if let Some(r) = &mut self.rec {
                r.arrive(now, n as u32);
            }
            if let Err(d) = self.link.enqueue_flow(now, n as u32, flow, ecn, buf) {
                if let Some(r) = &mut self.rec {
                    r.drop(now, n as u32, d.cause);
                }
                self.recycle(d.item);
            }
            self.recycle_dropped();
        }
        Ok(())
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
            self.recycle(d.item);
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
        loop {
            let now = sys::mono_ns();
            let Some(d) = self.link.dequeue_full(now) else {
                self.recycle_dropped();
                return;
            };
            let (deadline, mut buf) = (d.deadline, d.item);
            if d.ce {
                crate::ip::set_ce(&mut buf);
            }
            if let Some(r) = d.corrupt {
                crate::ip::flip_bit(&mut buf, r);
            }
            if let Some(r) = &mut self.rec {
                r.depart(d.arrival, d.departure, buf.len() as u32, d.ce);
            }
            if d.duplicate {
                if sys::write_all(self.output.as_raw_fd(), &buf).is_err() {
                    self.write_errors += 1;
                } else if let Some(r) = &mut self.rec {
                    r.packet(sys::mono_ns(), &buf);
                }
            }
            let late = now.saturating_sub(deadline).max(1);
            let _ = self.lateness.record(late);
            let ph = self.phase.load(Ordering::Relaxed).min(MAX_PHASES - 1);
            let _ = self.phases[ph].record(late);
            if sys::write_all(self.output.as_raw_fd(), &buf).is_err() {
                self.write_errors += 1;
            } else if let Some(r) = &mut self.rec {
                r.packet(sys::mono_ns(), &buf);
            }
            self.recycle(buf);
            self.forwarded += 1;
            self.faults.after_packet(self.forwarded);
        }
    }
}

fn run(
    direction: String,
    ends: Ends,
    link: Link<Vec<u8>>,
    stop: i32,
    (phase, gauge): (Phase, Arc<crate::meter::Gauge>),
    opts: ForwarderOptions,
    rec: Option<crate::record::Recorder>,
) -> DirectionStats {
    let hist = || Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
    sys::set_timer_slack_1ns();
    if opts.realtime {
        sys::set_realtime(10);
    }
    let cpu0 = sys::thread_cpu_ns();
    let wall0 = sys::mono_ns();
    let mut lp = Loop {
        input: ends.input,
        output: ends.output,
        link,
        scratch: vec![0u8; 65_536],
        pool: Vec::new(),
        lateness: hist(),
        phases: (0..MAX_PHASES).map(|_| hist()).collect(),
        phase,
        write_errors: 0,
        forwarded: 0,
        faults: opts.faults,
        rec,
        gauge,
        published: 0,
    };
    let mut failure = event_loop(&mut lp, stop).err().map(|e| e.to_string());
    if let Some(r) = &mut lp.rec {
        if let Some(buf) = r.capacity_buf() {
            lp.link.capacity_until(sys::mono_ns(), buf);
        }
        if let Some(e) = r.finish() {
            failure.get_or_insert(e);
        }
    }
    DirectionStats {
        direction,
        link: lp.link.report(),
        write_errors: lp.write_errors,
        lateness: Lateness::from_hist(&lp.lateness),
        phase_lateness: lp.phases.iter().map(Lateness::from_hist).collect(),
        cpu_s: (sys::thread_cpu_ns() - cpu0) as f64 / 1e9,
        wall_s: (sys::mono_ns() - wall0) as f64 / 1e9,
        failure,
    }
}

fn event_loop(lp: &mut Loop, stop: i32) -> std::io::Result<()> {
    let timer = sys::timerfd()?;
    let ep = sys::Epoll::new()?;
    ep.add(lp.input.as_raw_fd(), TOKEN_INPUT)?;
    ep.add(timer.as_raw_fd(), TOKEN_TIMER)?;
    ep.add(stop, TOKEN_STOP)?;
    let mut ready = Vec::with_capacity(8);
    let mut armed: u64 = 0;
    let (mut window, mut spent) = (sys::mono_ns(), 0u64);
    let (mut budget, mut counted) = (0u64, 0u64);
    loop {
        lp.read_batch()?;
        lp.deliver();
        lp.publish();
        if let Some(r) = &mut lp.rec {
            if let Some(buf) = r.capacity_buf() {
                lp.link.capacity_until(sys::mono_ns(), buf);
            }
            r.flush();
        }
        if let Some(deadline) = lp.link.next_deadline() {
            let now = sys::mono_ns();
            if now - window > SPIN_WINDOW_NS {
                (window, spent) = (now, 0);
            }
            if counted == 0 || now - counted > SHARE_EVERY_NS {
                budget = (SPIN_BUDGET_NS as f64 * spin_share()) as u64;
                counted = now;
            }
            let margin = if spent < budget {
                SPIN_LONG_NS
            } else {
                SPIN_SHORT_NS
            };
            if deadline <= now + margin {
                // Close enough: spin to the deadline, still taking input.
                // Yielding on each turn lets another forwarder of equal
                // SCHED_FIFO priority on this core (another testbed's) run
                // instead of waiting up to a whole margin behind the
                // spinner; alone on a core, it returns at once.
                while sys::mono_ns() < deadline {
                    lp.read_batch()?;
                    std::thread::yield_now();
                }
                spent += sys::mono_ns() - now;
                continue;
            }
            let at = deadline - margin;
            // Never arm at 0 (that disarms).
            let at = at.max(1);
            if at != armed {
                sys::timerfd_set_abs(timer.as_raw_fd(), at);
                armed = at;
            }
        } else if armed != 0 {
            sys::timerfd_set_abs(timer.as_raw_fd(), 0);
            armed = 0;
        }
        ep.wait(-1, &mut ready)?;
        for &t in &ready {
            match t {
                TOKEN_STOP => return Ok(()),
                TOKEN_TIMER => {
                    sys::drain_counter(timer.as_raw_fd());
                    armed = 0;
                }
                _ => {}
            }
        }
    }
}
