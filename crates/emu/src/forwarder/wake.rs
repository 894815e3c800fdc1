//! When a forwarder thread sleeps, spins and wakes: one loop for the
//! one or two directions the thread carries.
//!
//! Two directions share a thread because, at the rates most paths have, a
//! forwarder's cost is its wake-ups, not its packets: a TUN write runs the
//! receiving kernel's TCP in the writer's context, so the ACK or data it
//! causes is already queued on the other direction's input when the write
//! returns, and a thread carrying both reads it without another wake-up.
//! At high rates the directions need both cores and get a thread each
//! ([`super::Threads`]). The figures behind these constants are in
//! `docs/emu.md`, "Why the forwarder wakes when it does".

use super::{Loop, TOKEN_STOP};
use crate::sys;
use std::os::fd::AsRawFd;

/// How long before a deadline the timer fires and the thread starts
/// spinning, while the spin budget lasts: a timer wake-up is late by far
/// more than a spinning thread, and sparse traffic (round-trip probes,
/// TTFB experiments) can afford the spin.
pub const SPIN_LONG_NS: u64 = 1_000_000;
/// The margin once the budget is spent: none. Dense traffic would
/// otherwise keep the thread spinning on every packet and take a core from
/// the TCP endpoints; its packets then leave one timer wake-up late, and
/// the lateness report shows it.
pub const SPIN_SHORT_NS: u64 = 0;
/// Spinning allowed per [`SPIN_WINDOW_NS`] before falling back to the short margin.
pub const SPIN_BUDGET_NS: u64 = 15_000_000;
/// The budget's accounting window (so spinning takes at most ~15 % of a core).
pub const SPIN_WINDOW_NS: u64 = 100_000_000;
/// A deadline this close to the last write belongs to a dense flow and
/// is not spun for: spinning there costs the endpoints more goodput than
/// the lateness it saves.
pub const DENSE_GAP_NS: u64 = 200_000;
/// With other testbeds running and no idle time on the machine, a thread
/// that carries several testbeds passes over them at most once per this
/// long, reading every input and writing every packet due in one wake-up,
/// because on a busy machine wake-ups are the forwarder's largest cost. A
/// packet may then be read this much late and leave this much late again;
/// the lateness report shows the second, the summary says when it applied.
pub const COALESCE_NS: u64 = 100_000;
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
/// (`tw-<pid>-c<n>`, one per testbed, two directions each), so separate
/// `tcpwise emu` processes and the lab's parallel testbeds see each other
/// with no shared state to leak. Rootless testbeds (no named namespace)
/// count only themselves.
pub fn spin_share() -> f64 {
    share_of(testbeds_running())
}

/// [`spin_share`] with `testbeds` counted.
fn share_of(testbeds: usize) -> f64 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores as f64 / (2 * testbeds) as f64).min(1.0)
}

/// The testbeds running on this machine (at least this one), counted by
/// their client namespaces as [`spin_share`] says.
pub fn testbeds_running() -> usize {
    std::fs::read_dir("/run/netns")
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
        .max(1)
}

/// With other testbeds running, the machine's idle share below which
/// nobody spins: spinning turns idle time into timing precision, and on a
/// machine with no idle time it takes a core's share from the other
/// testbeds' forwarders and endpoints instead (measured: a saturated run
/// of 16 testbeds spent 5 % of its forwarders' time yielding in spins,
/// `docs/emu.md`). A testbed alone keeps its budget on a busy machine:
/// at 1 Gbit/s its spin is what holds lateness p99 near 0.2 ms (without
/// it, 0.3 to 5.7 ms in two runs).
pub const SPIN_IDLE_MIN: f64 = 0.10;

/// The machine's idle share since the last look, from `/proc/stat`'s
/// first line (idle and iowait over all ticks); `None` the first time or
/// where it cannot be read.
#[derive(Default)]
pub struct IdleMeter {
    last: Option<(u64, u64)>,
}

impl IdleMeter {
    /// The idle share since the previous call.
    pub fn share(&mut self) -> Option<f64> {
        let now = Self::ticks()?;
        let prev = self.last.replace(now)?;
        let total = now.1.checked_sub(prev.1).filter(|&t| t > 0)?;
        Some(now.0.saturating_sub(prev.0) as f64 / total as f64)
    }

    fn ticks() -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        Self::parse(stat.lines().next()?)
    }

    /// (idle + iowait, all) ticks of a `cpu ` line.
    fn parse(line: &str) -> Option<(u64, u64)> {
        let v: Vec<u64> = line
            .strip_prefix("cpu ")?
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        (v.len() >= 5).then(|| (v[3] + v[4], v.iter().sum()))
    }
}

/// How a thread spends its wake-ups for the next [`SHARE_EVERY_NS`].
#[derive(Debug, PartialEq)]
struct Wakeups {
    /// Spinning allowed per [`SPIN_WINDOW_NS`].
    spin_budget_ns: u64,
    /// One pass per [`COALESCE_NS`] at most.
    coalesce: bool,
}

impl Wakeups {
    /// For a thread carrying `directions`, with `testbeds` running on the
    /// machine and its idle share since the last look (`None`: unknown).
    /// A thread that carries both directions spins for both; with other
    /// testbeds running, nobody spins on a machine with no idle time, and
    /// a thread of several testbeds coalesces its wake-ups (one testbed's
    /// thread has few to share: its packets are sparse).
    fn of(testbeds: usize, idle: Option<f64>, directions: usize) -> Wakeups {
        let busy = testbeds > 1 && idle.is_some_and(|i| i < SPIN_IDLE_MIN);
        let share = (share_of(testbeds) * directions as f64).min(1.0);
        Wakeups {
            spin_budget_ns: if busy {
                0
            } else {
                (SPIN_BUDGET_NS as f64 * share) as u64
            },
            coalesce: busy && directions > 2,
        }
    }
}

/// Runs the directions' loops until `stop` is signalled or an I/O error;
/// adds to `coalesced_ns` the time it coalesced its wake-ups
/// ([`COALESCE_NS`]).
///
/// One `epoll_pwait2` both waits for input and wakes the thread at the
/// next deadline; a direction's input is read only once epoll has said it
/// holds packets. Per timer wake-up that is one system call where a
/// timerfd and a read per input until EAGAIN took four (a saturated run's
/// forwarders spent 3.4 % of their time in `timerfd_settime` alone).
/// What epoll said, marked on the loops: `true` on the stop doorbell.
fn note(ready: &[u64], lps: &mut [Loop]) -> bool {
    for &t in ready {
        match lps.get_mut(t as usize) {
            Some(lp) => lp.readable = true,
            None => return t == TOKEN_STOP,
        }
    }
    false
}

/// Close enough to a deadline: spin to it, still taking input; `true` when
/// told to stop. Yielding on each turn lets another forwarder of equal
/// SCHED_FIFO priority on this core (another testbed's) run instead of
/// waiting up to a whole margin behind the spinner; alone on a core, it
/// returns at once.
fn spin_until(
    deadline: u64,
    ep: &sys::Epoll,
    ready: &mut Vec<u64>,
    lps: &mut [Loop],
) -> std::io::Result<bool> {
    while sys::mono_ns() < deadline {
        ep.wait_until(Some(0), ready)?;
        if note(ready, lps) {
            return Ok(true);
        }
        for lp in lps.iter_mut() {
            lp.read_batch()?;
        }
        // A packet just read can be due first: the other direction's, on
        // a path whose one-way delay is under the spin margin (a 1 ms RTT).
        if lps
            .iter()
            .any(|lp| lp.wake_at().is_some_and(|w| w < deadline))
        {
            break;
        }
        std::thread::yield_now();
    }
    Ok(false)
}

pub(super) fn event_loop(
    lps: &mut [Loop],
    stop: i32,
    coalesced_ns: &mut u64,
) -> std::io::Result<()> {
    let ep = sys::Epoll::new()?;
    for (i, lp) in lps.iter().enumerate() {
        ep.add(lp.input.as_raw_fd(), i as u64)?;
    }
    ep.add(stop, TOKEN_STOP)?;
    let mut ready = Vec::with_capacity(16);
    let (mut window, mut spent) = (sys::mono_ns(), 0u64);
    let (mut budget, mut counted) = (0u64, 0u64);
    let mut idle = IdleMeter::default();
    // Whether wake-ups are coalesced (one pass per COALESCE_NS).
    let mut coalesce = false;
    // A return adds the time since the last recount, if coalescing.
    let mut tally = |coalesce: bool, since: u64, now: u64| {
        if coalesce {
            *coalesced_ns += now.saturating_sub(since);
        }
    };
    loop {
        // In order: what one direction writes (an ACK, the data it
        // releases) is on the other's input when its turn comes. Only the
        // directions with something to do (many, under `--testbeds`).
        let now = sys::mono_ns();
        let pass_at = now;
        for lp in lps.iter_mut() {
            if lp.busy(now) {
                lp.pass()?;
            }
        }
        // The earliest wake-up, and the last write of its direction.
        let next = lps
            .iter()
            .filter_map(|lp| Some((lp.wake_at()?, lp.last_write)))
            .min_by_key(|&(at, _)| at);
        let mut wake = None;
        if let Some((deadline, last_write)) = next {
            let now = sys::mono_ns();
            if now - window > SPIN_WINDOW_NS {
                (window, spent) = (now, 0);
            }
            if counted == 0 || now - counted > SHARE_EVERY_NS {
                let plan = Wakeups::of(testbeds_running(), idle.share(), lps.len());
                tally(coalesce, counted, now);
                (budget, coalesce) = (plan.spin_budget_ns, plan.coalesce);
                counted = now;
            }
            // Spin only for a deadline that stands apart from the last
            // write: in a dense flow the next packet is due within
            // microseconds anyway, and spinning would only take the
            // budget (and a core's share) from the endpoints.
            let margin = if spent < budget && deadline > last_write + DENSE_GAP_NS {
                SPIN_LONG_NS
            } else {
                SPIN_SHORT_NS
            };
            if deadline <= now + margin {
                if spin_until(deadline, &ep, &mut ready, lps)? {
                    tally(coalesce, counted, sys::mono_ns());
                    return Ok(());
                }
                spent += sys::mono_ns() - now;
                continue;
            }
            // Never 0 (that only looks).
            wake = Some((deadline - margin).max(1));
        }
        let floor = pass_at + COALESCE_NS;
        if coalesce && sys::mono_ns() < floor {
            // Deaf until then: what arrives waits for the next pass.
            sys::sleep_until(floor);
            ep.wait_until(Some(0), &mut ready)?;
        } else {
            ep.wait_until(wake, &mut ready)?;
        }
        if note(&ready, lps) {
            tally(coalesce, counted, sys::mono_ns());
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{IdleMeter, SPIN_BUDGET_NS, Wakeups};

    #[test]
    fn a_thread_of_many_testbeds_coalesces_only_with_no_idle_time() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        // Alone: its budget, whatever the idle time (a saturated 1 Gbit/s
        // testbed needs its spin).
        let alone = Wakeups::of(1, Some(0.0), 2);
        assert_eq!(alone.spin_budget_ns, SPIN_BUDGET_NS);
        assert!(!alone.coalesce);
        // 32 testbeds, 32 on this thread, a saturated machine: no spin,
        // one pass per COALESCE_NS.
        let busy = Wakeups::of(32, Some(0.05), 32);
        assert_eq!(
            busy,
            Wakeups {
                spin_budget_ns: 0,
                coalesce: true
            }
        );
        // The same with idle time, or before the first look: the share
        // of the budget, every wake-up.
        for idle in [Some(0.5), None] {
            let p = Wakeups::of(32, idle, 32);
            assert!(!p.coalesce);
            let share = (cores / 64.0 * 32.0).min(1.0);
            assert_eq!(p.spin_budget_ns, (SPIN_BUDGET_NS as f64 * share) as u64);
        }
        // One testbed's thread among many: no spin, no coalescing.
        assert_eq!(
            Wakeups::of(32, Some(0.0), 2),
            Wakeups {
                spin_budget_ns: 0,
                coalesce: false
            }
        );
    }

    #[test]
    fn idle_share_counts_idle_and_iowait_over_all_ticks() {
        let line = "cpu  100 0 50 800 50 0 0 0 0 0";
        assert_eq!(IdleMeter::parse(line), Some((850, 1000)));
        assert_eq!(IdleMeter::parse("cpu0 1 2 3 4 5"), None);
        assert_eq!(IdleMeter::parse("cpu  1 2"), None);
        // Only a difference is a share: the first look gives none.
        let mut m = IdleMeter::default();
        assert_eq!(m.share(), None);
    }
}
