//! File descriptors: non-blocking reads and writes, epoll, poll, file
//! locks, access checks, which filesystem a path is on.

use super::*;
use std::os::fd::{AsFd, BorrowedFd};

/// Opens a file read-only with O_CLOEXEC.
pub fn open_ro(path: &str) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: c is a valid C string.
    let fd = cvt(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    // SAFETY: freshly opened.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Registers `sock` with the tokio reactor for `interest` alone. tokio's
/// safe constructor for a chosen interest is deprecated: it cannot know
/// that the descriptor outlives the registration. Inside a tokio runtime.
pub fn async_fd<T: AsRawFd + Into<OwnedFd>>(
    sock: T,
    interest: tokio::io::Interest,
) -> io::Result<tokio::io::unix::AsyncFd<T>> {
    // SAFETY: `T` owns its descriptor (it converts into an `OwnedFd`), so
    // the descriptor stays open, and the same, for as long as the
    // `AsyncFd` owns the `T`.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(sock, interest) }
        .map_err(|e| e.into_parts().1)
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
        Self::collect(n, &evs, out)
    }

    /// Waits until `deadline` ([`mono_ns`]'s clock; 0 or past: only
    /// looks) or an event, forever when `None`; returns the tokens ready.
    /// `epoll_pwait2`'s nanosecond timeout arms the wake-up in the same
    /// system call that waits, where a timerfd costs a `timerfd_settime`
    /// and a `read` more for every wake-up (Linux >= 5.11).
    pub fn wait_until(&self, deadline: Option<u64>, out: &mut Vec<u64>) -> io::Result<()> {
        let ts = deadline.map(|d| {
            let left = d.saturating_sub(mono_ns());
            libc::timespec {
                tv_sec: (left / 1_000_000_000) as libc::time_t,
                tv_nsec: (left % 1_000_000_000) as libc::c_long,
            }
        });
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // Up to 64 a call: a thread carrying many testbeds can find most
        // of their inputs ready after one sleep.
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: evs is valid for 64 entries, tsp null or a live timespec,
        // no signal mask.
        let n = unsafe {
            libc::epoll_pwait2(
                self.0.as_raw_fd(),
                evs.as_mut_ptr(),
                64,
                tsp,
                std::ptr::null(),
            )
        };
        Self::collect(n, &evs, out)
    }

    fn collect(n: i32, evs: &[libc::epoll_event], out: &mut Vec<u64>) -> io::Result<()> {
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

/// Whether the caller may read and write `path` (access(2) with R_OK|W_OK).
pub fn can_read_write(path: &str) -> bool {
    let Ok(c) = CString::new(path) else {
        return false;
    };
    // SAFETY: c is a valid C string.
    unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::W_OK) == 0 }
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

/// Waits up to `timeout_ms` for room to write on `fd`; returns whether
/// it came.
pub fn wait_writable(fd: RawFd, timeout_ms: i32) -> bool {
    wait_fd(fd, libc::POLLOUT, timeout_ms)
}

/// Whether `fd` has something to read or its peer closed, without
/// waiting or consuming anything.
pub fn stirred(fd: RawFd) -> bool {
    wait_fd(fd, libc::POLLIN | libc::POLLRDHUP, 0)
}

/// poll(2) over `fds`; returns how many have events (0 on timeout or EINTR).
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> usize {
    // SAFETY: fds is a valid array of its length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    n.max(0) as usize
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

/// Which of a socket's buffers [`force_buffer`] sets.
#[derive(Clone, Copy, Debug)]
pub enum Buffer {
    Receive,
    Send,
}

/// Sets a socket's receive or send buffer to `bytes`: forced
/// (`SO_RCVBUFFORCE`/`SO_SNDBUFFORCE`, which need `CAP_NET_ADMIN`), else
/// as much as `SO_RCVBUF`/`SO_SNDBUF` give under
/// `net.core.rmem_max`/`wmem_max`. Returns what the kernel then holds
/// (`getsockopt`, twice the request as the kernel books it).
pub fn force_buffer(fd: BorrowedFd<'_>, which: Buffer, bytes: usize) -> usize {
    let (force, plain) = match which {
        Buffer::Receive => (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        Buffer::Send => (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    };
    let size = bytes.min(i32::MAX as usize / 2) as libc::c_int;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    let set = |opt| {
        // SAFETY: passes a valid int and its length.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                len,
            )
        }
    };
    if set(force) != 0 {
        set(plain);
    }
    let (mut got, mut got_len) = (0 as libc::c_int, len);
    // SAFETY: got and got_len are valid out-parameters of the right size.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            plain,
            (&mut got as *mut libc::c_int).cast(),
            &mut got_len,
        )
    };
    if r == 0 { got.max(0) as usize } else { 0 }
}

/// A connected pair of non-blocking `AF_UNIX` datagram sockets that carry
/// packets between two links inside one process (a topology's hops), each
/// datagram one packet or super-packet. A connected pair has no
/// `max_dgram_qlen` limit; only the sender's buffer bounds what waits, so
/// it is forced to `sndbuf` bytes (`SO_SNDBUFFORCE`, allowed to root and
/// in a user namespace we own), or as much as `SO_SNDBUF` gives.
pub fn hop_pair(sndbuf: usize) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    let kind = libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: fds is a valid out-array of two ints.
    cvt(unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) })?;
    // SAFETY: both freshly created and owned by nobody else.
    let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in [&pair.0, &pair.1] {
        force_buffer(fd.as_fd(), Buffer::Send, sndbuf);
    }
    Ok(pair)
}

/// The MTU of the route to `peer` (the kernel's path MTU for it, else its
/// interface's), as `IP_MTU`/`IPV6_MTU` on a UDP socket connected there
/// reads it; `None` when there is no route. Connecting a UDP socket sends
/// nothing.
pub fn path_mtu(peer: std::net::SocketAddr) -> Option<u32> {
    let any: std::net::SocketAddr = if peer.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let s = std::net::UdpSocket::bind(any).ok()?;
    s.connect(peer).ok()?;
    let (level, opt) = if peer.is_ipv6() {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU)
    } else {
        (libc::IPPROTO_IP, libc::IP_MTU)
    };
    let (mut mtu, mut len) = (
        0 as libc::c_int,
        std::mem::size_of::<libc::c_int>() as libc::socklen_t,
    );
    // SAFETY: mtu and len are valid out-parameters of the right size.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            level,
            opt,
            (&mut mtu as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0 && mtu > 0).then_some(mtu as u32)
}
