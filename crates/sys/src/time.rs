//! Clocks and timers: monotonic and thread-CPU time, timer slack,
//! timerfd and eventfd (the forwarder's deadlines and doorbells),
//! real-time scheduling and `/dev/cpu_dma_latency`.

use super::*;

/// CLOCK_MONOTONIC in nanoseconds: the clock the link model runs on.
pub fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

pub(super) fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; these clocks always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Asks for 1 ns timer slack on this thread, so hrtimers fire on time.
pub fn set_timer_slack_1ns() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and no pointers.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// An eventfd used to stop a forwarder.
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: no pointers.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
    // SAFETY: freshly created.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Signals an eventfd.
pub fn eventfd_signal(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a valid u64.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

/// A CLOCK_MONOTONIC timerfd.
pub fn timerfd() -> io::Result<OwnedFd> {
    // SAFETY: no pointers.
    let fd = cvt(unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
        )
    })?;
    // SAFETY: freshly created.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Arms a timerfd at an absolute CLOCK_MONOTONIC time (0 disarms).
pub fn timerfd_set_abs(fd: RawFd, at_ns: u64) {
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
        },
    };
    // SAFETY: spec is valid; old value not requested.
    unsafe { libc::timerfd_settime(fd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
}

/// Drains a timerfd or eventfd counter.
pub fn drain_counter(fd: RawFd) {
    let mut v: u64 = 0;
    // SAFETY: reads 8 bytes into a valid u64.
    unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
}

/// Gives the calling thread real-time (SCHED_FIFO) priority so ordinary
/// tasks cannot delay a packet's deadline; returns whether it took.
/// Hypervisor steal is beyond its reach.
pub fn set_realtime(priority: i32) -> bool {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: p is valid; pid 0 means the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// Returns the calling thread to ordinary (SCHED_OTHER) scheduling.
pub fn set_normal() {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: p is valid; pid 0 means the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
}

/// Holds `/dev/cpu_dma_latency` at 0 µs while alive: the guest's cpuidle
/// then polls instead of halting, which on a virtual machine cuts timer
/// wake-up latency from ~100 µs (p99 in the ms) to ~45 µs. This is the
/// knob cyclictest uses; it only spends cycles the CPU would idle away.
pub struct DmaLatencyGuard(#[allow(dead_code)] Option<std::fs::File>);

impl DmaLatencyGuard {
    /// Requests zero wake-up latency; quietly does nothing without root.
    pub fn zero() -> DmaLatencyGuard {
        use std::io::Write;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency");
        DmaLatencyGuard(
            f.ok()
                .and_then(|mut f| f.write_all(&0i32.to_ne_bytes()).ok().map(|_| f)),
        )
    }

    /// Whether the request is in force.
    pub fn active(&self) -> bool {
        self.0.is_some()
    }
}

/// Ticks (1/100 s of one CPU) the hypervisor has stolen from this machine
/// since boot: the `steal` column of `/proc/stat`. Compare two readings to
/// see whether a measurement was starved.
pub fn steal_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find(|l| l.starts_with("cpu "))?
        .split_whitespace()
        .nth(8)?
        .parse()
        .ok()
}

/// Sleeps until `deadline` ([`mono_ns`]'s clock), whatever else happens
/// (a signal's interruption resumes the sleep); returns at once if it has
/// passed.
pub fn sleep_until(deadline: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: ts is a live timespec; no remainder is asked for (absolute).
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}
