//! Thin, safe wrappers over the few Linux calls the emulator needs.
//! Everything `unsafe` in the crate lives here.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock the link model runs on.
pub fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
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

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// Creates a TUN device (`IFF_TUN | IFF_NO_PI`) named `name` in the calling
/// thread's network namespace; it disappears when the fd is closed.
pub fn create_tun(name: &str) -> io::Result<OwnedFd> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface name too long",
        ));
    }
    let path = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: path is a valid C string.
    let fd = cvt(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: fd was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    for (d, s) in req.name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: TUNSETIFF reads an ifreq, which IfReq lays out.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) })?;
    Ok(fd)
}

/// Moves the calling thread into the network namespace behind `fd`.
pub fn setns_net(fd: RawFd) -> io::Result<()> {
    // SAFETY: setns only reads the fd.
    cvt(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }).map(|_| ())
}

/// Opens a file read-only with O_CLOEXEC.
pub fn open_ro(path: &str) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: c is a valid C string.
    let fd = cvt(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    // SAFETY: freshly opened.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Non-blocking read; `Ok(None)` when nothing is there.
pub fn read_nb(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// Writes one packet.
pub fn write_all(fd: RawFd, buf: &[u8]) -> io::Result<()> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
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

/// A minimal epoll set.
pub struct Epoll(OwnedFd);

impl Epoll {
    /// A new epoll instance.
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: no pointers.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: freshly created.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Watches `fd` for input, reporting `token`.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: ev is valid for the call.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })
            .map(|_| ())
    }

    /// Waits (forever when `timeout_ms` is -1); returns the tokens ready.
    pub fn wait(&self, timeout_ms: i32, out: &mut Vec<u64>) -> io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 8];
        // SAFETY: evs is valid for 8 entries.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), 8, timeout_ms) };
        out.clear();
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::EINTR) {
                Ok(())
            } else {
                Err(e)
            };
        }
        out.extend(evs[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

/// Effective uid.
pub fn euid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() }
}

/// Whether `pid` names a live process.
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Sends `sig` to `pid` (negative: a process group), ignoring errors.
pub fn kill(pid: i32, sig: i32) {
    // SAFETY: no pointers.
    unsafe { libc::kill(pid, sig) };
}

/// An exclusive advisory lock on a file, released on drop.
pub struct FileLock(#[allow(dead_code)] std::fs::File);

impl FileLock {
    /// Blocks until the lock on `path` is held.
    pub fn acquire(path: &str) -> io::Result<FileLock> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // SAFETY: valid fd.
        cvt(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) })?;
        Ok(FileLock(f))
    }
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

/// Creates a new network namespace and bind-mounts it at `path` (what
/// `ip netns add` does, minus its final setns back to the caller's
/// namespace, which an unprivileged user namespace may not do).
pub fn create_named_netns(path: &str) -> io::Result<()> {
    std::fs::create_dir_all(NETNS_PARENT)?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let target = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let made = std::thread::spawn(move || -> io::Result<()> {
        // SAFETY: flags only; affects this thread, which then exits.
        cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
        let src = CString::new("/proc/thread-self/ns/net").expect("no NUL");
        // SAFETY: valid C strings.
        cvt(unsafe {
            libc::mount(
                src.as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        })?;
        Ok(())
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("namespace thread panicked")));
    if made.is_err() {
        let _ = std::fs::remove_file(path);
    }
    made
}

/// Unmounts and removes a named namespace (what `ip netns del` does).
pub fn delete_named_netns(path: &str) -> io::Result<()> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: valid C string.
    let r = unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    let e = io::Error::last_os_error();
    std::fs::remove_file(path)?;
    if r != 0 && e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e);
    }
    Ok(())
}

const NETNS_PARENT: &str = "/run/netns";

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
