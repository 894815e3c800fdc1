//! # tcpwise-sys: the OS glue, in one place
//!
//! Thin, safe wrappers over the Linux calls tcpwise needs that std, tokio
//! and socket2 do not offer: TUN devices, named network namespaces,
//! timerfd/eventfd/epoll, process groups and the terminal, real-time
//! scheduling, `TCP_INFO`. **Every `unsafe` block of the workspace lives
//! in this crate**, each with a `SAFETY:` comment that says why it holds;
//! the other crates are `#![forbid(unsafe_code)]`. File descriptors are
//! returned as [`OwnedFd`], so they close exactly once (the mio style).

pub mod uring;

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

/// A minimal epoll set; `Sync`, so several threads can drain one set
/// (the completion-port discipline of the dispatch crate).
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

    /// Arms `fd` for exactly one input (or hang-up) event reporting
    /// `token`; `add` for a new fd, otherwise re-arms one already in the set.
    pub fn arm_oneshot(&self, fd: RawFd, token: u64, add: bool) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLONESHOT | libc::EPOLLRDHUP) as u32,
            u64: token,
        };
        let op = if add {
            libc::EPOLL_CTL_ADD
        } else {
            libc::EPOLL_CTL_MOD
        };
        // SAFETY: ev is valid for the call; a closed fd gives EBADF, not UB.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), op, fd, &mut ev) }).map(|_| ())
    }

    /// Waits for at most one event (what `GetQueuedCompletionStatus` hands
    /// a worker); `None` on timeout or EINTR.
    pub fn wait_one(&self, timeout_ms: i32) -> Option<u64> {
        let mut ev = [libc::epoll_event { events: 0, u64: 0 }; 1];
        // SAFETY: ev has room for the one event asked for.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), ev.as_mut_ptr(), 1, timeout_ms) };
        (n == 1).then(|| ev[0].u64)
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

/// Effective gid.
pub fn egid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::getegid() }
}

/// Whether the caller may read and write `path` (access(2) with R_OK|W_OK).
pub fn can_read_write(path: &str) -> bool {
    let Ok(c) = CString::new(path) else {
        return false;
    };
    // SAFETY: c is a valid C string.
    unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::W_OK) == 0 }
}

/// Moves the process into a new user and mount namespace. Only sound
/// while the process is single-threaded (the kernel refuses otherwise).
pub fn unshare_user_and_mount() -> io::Result<()> {
    // SAFETY: flags only.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) }).map(|_| ())
}

/// Makes every mount private (so ours do not propagate to the host), then
/// mounts a fresh tmpfs at `path`.
pub fn private_tmpfs_at(path: &str) -> io::Result<()> {
    let c = |s: &str| CString::new(s).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput));
    let (none, root, target, tmpfs, opts) =
        (c("none")?, c("/")?, c(path)?, c("tmpfs")?, c("mode=0755")?);
    // SAFETY: valid C strings; affects only this process's mount namespace.
    cvt(unsafe {
        libc::mount(
            none.as_ptr(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })?;
    // SAFETY: valid C strings; opts is a NUL-terminated option string.
    cvt(unsafe {
        libc::mount(
            tmpfs.as_ptr(),
            target.as_ptr(),
            tmpfs.as_ptr(),
            0,
            opts.as_ptr().cast(),
        )
    })
    .map(|_| ())
}

/// Makes `cmd` enter the network namespace behind `fd` between fork and
/// exec; `fd` must stay open until the command is spawned.
pub fn exec_in_netns(cmd: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setns is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes `cmd` run as `uid`/`gid` with no supplementary groups, switching
/// between fork and exec after every hook registered before this one (the
/// namespace switch needs root). Mahimahi drops privileges the same way.
pub fn exec_as(cmd: &mut std::process::Command, uid: u32, gid: u32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setgroups, setgid and setuid are async-signal-safe and touch
    // no memory of ours (a null list with length 0 is valid).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes `cmd` the leader of its own process group and, with
/// `foreground`, the terminal's foreground group, so Ctrl-C at an
/// interactive prompt reaches the command rather than tearing down around it.
pub fn exec_in_own_group(cmd: &mut std::process::Command, foreground: bool) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (setpgid, signal, tcsetpgrp,
    // getpid) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            if foreground {
                libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                libc::tcsetpgrp(0, libc::getpid());
                libc::signal(libc::SIGTTOU, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

/// Hands the terminal on stdin to process group `pgid` while alive and
/// gives it back to ours on drop.
pub struct Foreground(Option<libc::pid_t>);

impl Foreground {
    /// Gives the terminal to `pgid`; does nothing when stdin is no terminal.
    pub fn give(pgid: i32, stdin_is_terminal: bool) -> Foreground {
        if !stdin_is_terminal {
            return Foreground(None);
        }
        // SAFETY: plain calls on fd 0; SIGTTOU is ignored so tcsetpgrp from
        // a background group does not stop us.
        unsafe {
            let ours = libc::getpgrp();
            libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            libc::tcsetpgrp(0, pgid);
            Foreground(Some(ours))
        }
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        if let Some(pg) = self.0 {
            // SAFETY: plain call on fd 0; SIGTTOU is still ignored.
            unsafe { libc::tcsetpgrp(0, pg) };
        }
    }
}

/// Waits up to `timeout_ms` for `events` (`libc::POLLIN`, `POLLOUT`) on
/// `fd`; returns whether they came.
pub fn wait_fd(fd: RawFd, events: i16, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) > 0 }
}

/// poll(2) over `fds`; returns how many have events (0 on timeout or EINTR).
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> usize {
    // SAFETY: fds is a valid array of its length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    n.max(0) as usize
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (at most 65536):
/// 1024 clients need more than the usual 1024 descriptors. Returns the
/// soft limit now in force.
pub fn raise_fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid rlimit for both calls.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 1024;
        }
        if r.rlim_cur < r.rlim_max {
            let want = r.rlim_max.min(1 << 16).max(r.rlim_cur);
            let raised = libc::rlimit {
                rlim_cur: want,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                r.rlim_cur = want;
            }
        }
    }
    r.rlim_cur
}

/// `struct tcp_info` as Linux lays it out (include/uapi/linux/tcp.h, up
/// to 6.7); older kernels fill a prefix, which [`tcp_info`] reports.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
pub struct TcpInfoRaw {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
}

/// Reads `TCP_INFO` of a TCP socket: the struct and how many of its bytes
/// the kernel filled (fields past that are zero and must not be trusted).
pub fn tcp_info(fd: RawFd) -> Option<(TcpInfoRaw, usize)> {
    let mut raw = TcpInfoRaw::default();
    let mut len = std::mem::size_of::<TcpInfoRaw>() as libc::socklen_t;
    // SAFETY: raw is a valid, plain-data buffer of len bytes; the kernel
    // writes at most len and every bit pattern is a valid TcpInfoRaw.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut raw as *mut TcpInfoRaw).cast(),
            &mut len,
        )
    };
    (r == 0).then_some((raw, len as usize))
}

/// An anonymous in-memory file of `len` bytes of `byte` (`memfd_create`):
/// the source `sendfile` sends from for `perf -Z`, so the bytes go from
/// the page cache to the socket without a copy through user space.
pub fn memfd_filled(len: usize, byte: u8) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: a NUL-terminated name; the returned fd, if valid, is ours.
    let fd = unsafe { libc::memfd_create(c"tcpwise-perf-zerocopy".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nobody else.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    let mut f = std::fs::File::from(owned);
    f.write_all(&vec![byte; len])?;
    Ok(f.into())
}

/// `sendfile(out, in, &offset, count)`: bytes from a file to a socket in
/// the kernel. Non-blocking sockets answer `WouldBlock` when full.
pub fn sendfile(
    out: RawFd,
    input: RawFd,
    offset: &mut i64,
    count: usize,
) -> std::io::Result<usize> {
    let mut off: libc::off_t = *offset;
    // SAFETY: both fds are open for the duration of the call; off is a
    // valid pointer the kernel updates.
    let n = unsafe { libc::sendfile(out, input, &mut off, count) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    *offset = off;
    Ok(n as usize)
}

/// Turns on `SO_ZEROCOPY`, which `send_zerocopy` needs (Linux 4.14).
pub fn set_so_zerocopy(fd: RawFd) -> std::io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: a valid option pointer and length for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `send(fd, buf, MSG_ZEROCOPY | MSG_DONTWAIT)`: the kernel pins `buf`'s
/// pages instead of copying them, so `buf` must not change until the
/// completion for this send is reaped ([`reap_zerocopy`]); `'static`
/// makes that hold. `ENOBUFS` means too many sends await completion.
pub fn send_zerocopy(fd: RawFd, buf: &'static [u8]) -> std::io::Result<usize> {
    // SAFETY: buf lives for the whole program, so the pinned pages stay valid.
    let n = unsafe {
        libc::send(
            fd,
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_ZEROCOPY | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Whether an error of [`send_zerocopy`] is `ENOBUFS`: too many sends
/// await their completions (the socket's `optmem` is full).
pub fn is_enobufs(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOBUFS)
}

/// Completions of `MSG_ZEROCOPY` sends reaped from a socket's error queue.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ZeroCopyReaped {
    /// Sends completed (the kernel no longer holds their pages).
    pub completed: u64,
    /// Of those, sends the kernel copied after all
    /// (`SO_EE_CODE_ZEROCOPY_COPIED`: loopback, TUN and other paths
    /// that hand the bytes to a local receiver).
    pub copied: u64,
}

/// Reads every completion waiting on `fd`'s error queue (non-blocking).
pub fn reap_zerocopy(fd: RawFd) -> std::io::Result<ZeroCopyReaped> {
    const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
    const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;
    let mut out = ZeroCopyReaped::default();
    loop {
        // u64s keep the control buffer aligned for cmsghdr.
        let mut control = [0u64; 16];
        // SAFETY: zeroed msghdr is valid; its pointers are set below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: msg points at a buffer that outlives the call.
        let r = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            return match e.kind() {
                std::io::ErrorKind::WouldBlock => Ok(out),
                _ => Err(e),
            };
        }
        // SAFETY: walking the control messages recvmsg filled in, with
        // the kernel's own macros.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                let h = &*c;
                let ours = (h.cmsg_level == libc::SOL_IP && h.cmsg_type == libc::IP_RECVERR)
                    || (h.cmsg_level == libc::SOL_IPV6 && h.cmsg_type == libc::IPV6_RECVERR);
                if ours {
                    let e = std::ptr::read_unaligned(
                        libc::CMSG_DATA(c).cast::<libc::sock_extended_err>(),
                    );
                    if e.ee_origin == SO_EE_ORIGIN_ZEROCOPY && e.ee_errno == 0 {
                        let n = u64::from(e.ee_data.wrapping_sub(e.ee_info)) + 1;
                        out.completed += n;
                        if e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                            out.copied += n;
                        }
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
    }
}

/// BBR's state, `struct tcp_bbr_info` (`TCP_CC_INFO` of a BBR socket).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct BbrInfoRaw {
    /// Low 32 bits of its bandwidth estimate, bytes/s.
    pub bw_lo: u32,
    /// High 32 bits.
    pub bw_hi: u32,
    /// Its min RTT estimate, µs.
    pub min_rtt: u32,
    /// Pacing gain, fixed point << 8.
    pub pacing_gain: u32,
    /// Cwnd gain, fixed point << 8.
    pub cwnd_gain: u32,
}

/// BBR's state of a TCP socket, when its congestion control is BBR:
/// `TCP_CC_INFO` answers with `struct tcp_bbr_info` (20 bytes) for BBR,
/// 16 bytes for Vegas/DCTCP and nothing for CUBIC or Reno.
pub fn tcp_bbr_info(fd: RawFd) -> Option<BbrInfoRaw> {
    let mut raw = BbrInfoRaw::default();
    let mut len = std::mem::size_of::<BbrInfoRaw>() as libc::socklen_t;
    // SAFETY: raw is a plain-data buffer of len bytes; the kernel writes at
    // most len and every bit pattern is valid.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CC_INFO,
            (&mut raw as *mut BbrInfoRaw).cast(),
            &mut len,
        )
    };
    (r == 0 && len as usize == std::mem::size_of::<BbrInfoRaw>()).then_some(raw)
}

/// Restores the default action of SIGPIPE (Rust ignores it), so that
/// `tcpwise ... | head -1` ends quietly when the reader goes away, as
/// other Unix tools do, instead of failing a write with EPIPE.
pub fn default_sigpipe() {
    // SAFETY: installs the default disposition; no handler code runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Caps a socket's pacing rate (`SO_MAX_PACING_RATE`, bytes per second):
/// the kernel spaces the socket's packets itself (TCP's internal pacing,
/// or the fq qdisc), so a sender needs no sleep loop to hold a rate.
pub fn set_max_pacing_rate(
    fd: &impl std::os::fd::AsRawFd,
    bytes_per_s: u64,
) -> std::io::Result<()> {
    let v: u64 = bytes_per_s;
    // SAFETY: a valid socket fd and a u64 the kernel reads (it takes a u32
    // or, since Linux 4.20, a u64).
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&v as *const u64).cast(),
            std::mem::size_of::<u64>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Ignores SIGPIPE, so a peer that closes its socket while we write
/// costs that connection an EPIPE, not the whole process its life:
/// what every server and client that writes to sockets needs (nginx and
/// curl do the same; curl then exits 23 when standard output closes).
/// Children started with `std::process::Command` get the default back.
pub fn ignore_sigpipe() {
    // SAFETY: installs SIG_IGN; no handler code runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
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

/// Whether `path` is on a filesystem kept in memory (tmpfs, ramfs): there
/// `O_DIRECT`, where it is allowed at all, reaches RAM, not a disk.
pub fn on_memory_fs(path: &std::path::Path) -> io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
    // SAFETY: statfs is plain data; zeroed is a valid value to overwrite.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path; st is a valid out pointer.
    cvt(unsafe { libc::statfs(c.as_ptr(), &mut st) })?;
    #[allow(clippy::unnecessary_cast)]
    let t = st.f_type as i64;
    Ok(t == TMPFS_MAGIC || t == RAMFS_MAGIC)
}

/// Raises the soft `RLIMIT_NOFILE` to at least `need` descriptors if the
/// hard limit allows (never lowers it); returns (soft, hard) afterwards.
pub fn fd_limit_for(need: u64) -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid rlimit for both calls.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return (0, 0);
        }
        if r.rlim_cur < need && r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max.min(need),
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                r = want;
            }
        }
    }
    (r.rlim_cur, r.rlim_max)
}
