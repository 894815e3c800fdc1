//! io_uring, safely.
//!
//! The kernel reads and writes an operation's buffer, and uses its file,
//! between submission and completion, long after the call that queued it
//! has returned. The `io-uring` crate therefore makes every push `unsafe`.
//! [`Ring`] makes it safe by owning everything an operation touches until
//! its completion arrives: the buffer ([`AlignedBuf`], a `Vec` for sends,
//! the provided-buffer pool for receives) and a reference-counted handle to
//! the file or socket ([`SharedFd`]), so neither can be freed or reused
//! while the kernel still holds the operation. Completions hand the buffer
//! back ([`Event`]). Dropping a ring cancels what is still pending and waits
//! for it; whatever does not finish within a few seconds is leaked rather
//! than freed under the kernel's feet.
//!
//! Only what tcpwise uses is here: positioned reads and writes (the
//! file-I/O engine of `tcpwise dispatch aio`), an eventfd doorbell (how one
//! thread wakes another's ring), and multishot accept + multishot receive
//! with provided buffers + send (the `io-uring` network dispatch model).

use io_uring::{IoUring, cqueue, opcode, squeue, types};
use std::alloc::Layout;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::Arc;

/// A file or socket an operation keeps alive until it completes.
pub type SharedFd = Arc<dyn AsFd + Send + Sync>;

/// Why io_uring cannot be used here.
#[derive(Debug, thiserror::Error)]
pub enum UringError {
    /// The kernel has no io_uring (older than 5.1, or built without it).
    #[error("io_uring is unavailable: the kernel does not have it (io_uring_setup: {0})")]
    NoKernelSupport(io::Error),
    /// `kernel.io_uring_disabled` forbids it.
    #[error(
        "io_uring is disabled by sysctl kernel.io_uring_disabled={setting} (0 enables it; 1 allows only members of kernel.io_uring_group)"
    )]
    Disabled {
        /// The sysctl's value.
        setting: String,
    },
    /// Some other setup failure (memory lock limit, ...).
    #[error("io_uring setup failed: {0}")]
    Setup(io::Error),
}

/// Whether io_uring can be used here, and if not, why.
pub fn probe() -> Result<(), UringError> {
    Ring::new(8).map(drop)
}

/// A zeroed heap buffer aligned to 4096 bytes, as `O_DIRECT` requires.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: AlignedBuf uniquely owns its allocation, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out &[u8].
unsafe impl Sync for AlignedBuf {}

/// Alignment of [`AlignedBuf`].
pub const ALIGN: usize = 4096;

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (`len` > 0).
    ///
    /// # Panics
    /// If `len` is 0 or the allocation fails.
    pub fn new(len: usize) -> AlignedBuf {
        assert!(len > 0, "AlignedBuf of 0 bytes");
        let layout = Layout::from_size_align(len, ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        AlignedBuf { ptr, len }
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised (zeroed) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, ALIGN).expect("buffer layout");
        // SAFETY: allocated in `new` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len)
    }
}

/// An eventfd one thread rings to wake another thread's ring.
pub struct Doorbell(OwnedFd);

impl Doorbell {
    /// A new doorbell.
    pub fn new() -> io::Result<Arc<Doorbell>> {
        Ok(Arc::new(Doorbell(crate::eventfd()?)))
    }

    /// Wakes the ring that has this doorbell armed.
    pub fn ring(&self) {
        crate::eventfd_signal(self.0.as_raw_fd());
    }
}

/// A completed operation, with what the ring held for it.
#[derive(Debug)]
pub enum Event {
    /// A positioned read ended: bytes read, and the buffer.
    Read {
        /// The caller's token.
        token: u64,
        /// Bytes read.
        result: io::Result<usize>,
        /// The buffer, handed back.
        buf: AlignedBuf,
    },
    /// A positioned write ended.
    Write {
        /// The caller's token.
        token: u64,
        /// Bytes written.
        result: io::Result<usize>,
        /// The buffer, handed back.
        buf: AlignedBuf,
    },
    /// The doorbell rang; arm it again to hear the next ring.
    Doorbell {
        /// The caller's token.
        token: u64,
    },
    /// A multishot accept produced a connection (or an error).
    Accepted {
        /// The caller's token.
        token: u64,
        /// The new connection.
        result: io::Result<OwnedFd>,
        /// False when the multishot accept ended and must be re-armed.
        more: bool,
    },
    /// A multishot receive produced data in provided buffer `buf`
    /// (read it with [`Ring::provided`], then [`Ring::recycle`] it), or
    /// end of stream (`Ok(None)`), or an error.
    Received {
        /// The caller's token.
        token: u64,
        /// `(buffer id, length)`, or `None` at end of stream.
        result: io::Result<Option<(u16, usize)>>,
        /// False when the multishot receive ended and must be re-armed.
        more: bool,
    },
    /// A send ended; the data handed back.
    Sent {
        /// The caller's token.
        token: u64,
        /// Bytes sent.
        result: io::Result<usize>,
        /// The data that was sent.
        data: Vec<u8>,
    },
}

enum Held {
    Read(AlignedBuf),
    Write(AlignedBuf),
    /// The counter's 8 bytes are only written by the kernel, never read.
    Doorbell(Arc<Doorbell>, #[allow(dead_code)] Box<[u8; 8]>),
    Accept,
    Recv,
    Send(Vec<u8>),
    Provide,
    Cancel,
    /// A file-table update's descriptor, read by the kernel at submission.
    Files(#[allow(dead_code)] Box<RawFd>),
}

struct Slot {
    token: u64,
    held: Held,
    /// Keeps the file or socket open while the kernel uses it.
    _fd: Option<SharedFd>,
}

/// The provided-buffer pool of multishot receives: `count` buffers of
/// `size` bytes, group id 0.
struct Pool {
    mem: Vec<u8>,
    size: usize,
    /// Buffers a receive completion handed to us and not yet recycled:
    /// only these may be read (the kernel may be writing into the rest)
    /// or given back (twice-provided memory could take two receives).
    handed: Vec<bool>,
    /// The buffers are given back through a ring the kernel reads, not by
    /// a submission each ([`Ring::provide_buffer_ring`]).
    ring: Option<BufRing>,
}

/// A registered ring of provided buffers (`IORING_REGISTER_PBUF_RING`):
/// a page-aligned array of entries the kernel takes buffers from, and a
/// tail we advance to give one back.
struct BufRing {
    entries: AlignedBuf,
    mask: u16,
    tail: u16,
}

impl BufRing {
    /// Puts buffer `bid` at `addr` (`len` bytes) at the tail and publishes it.
    fn give(&mut self, addr: *mut u8, len: usize, bid: u16) {
        let base = self.entries.as_mut_ptr().cast::<types::BufRingEntry>();
        let at = usize::from(self.tail & self.mask);
        // SAFETY: `entries` holds mask + 1 entries (checked where it was
        // made), `at` is below that, and zeroed memory is a valid entry.
        let e = unsafe { &mut *base.add(at) };
        e.set_addr(addr as u64);
        e.set_len(len as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail field lives in the first entry, which we own;
        // the kernel reads it concurrently, hence the atomic release store
        // (the entry's fields must be visible before the new tail).
        unsafe {
            let tail = types::BufRingEntry::tail(base).cast_mut();
            (*tail.cast::<std::sync::atomic::AtomicU16>())
                .store(self.tail, std::sync::atomic::Ordering::Release);
        }
    }
}

/// The ring's registered file table (`IORING_REGISTER_FILES`, sparse):
/// sockets in it are named by index in their operations, so the kernel
/// looks them up in the ring's own array instead of taking and dropping a
/// reference in the process's descriptor table each time (`fget`/`fput`,
/// atomic on a shared table). Each entry keeps its socket's descriptor
/// open until the entry is cleared, so its number cannot be reused while
/// the index stands for it.
struct Table {
    free: Vec<u32>,
    /// By descriptor number (small integers: no hashing on every send).
    by_fd: Vec<Option<(u32, SharedFd)>>,
}

impl Table {
    fn get(&self, fd: RawFd) -> Option<&(u32, SharedFd)> {
        self.by_fd.get(usize::try_from(fd).ok()?)?.as_ref()
    }
}

/// One io_uring instance and everything its pending operations use.
pub struct Ring {
    ring: IoUring,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    in_flight: usize,
    pool: Option<Pool>,
    cqes: Vec<cqueue::Entry>,
    table: Option<Table>,
}

const GROUP: u16 = 0;

impl Ring {
    /// A ring with room for `entries` queued submissions (a power of two
    /// is used) and four times as many completions.
    pub fn new(entries: u32) -> Result<Ring, UringError> {
        Ring::build(entries, false)
    }

    /// A ring only the calling thread submits to and waits on
    /// (`IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN`, Linux
    /// 6.1): the kernel runs completions' deferred work when that thread
    /// waits in [`Ring::submit_and_wait`], in one batch, instead of
    /// interrupting it for each: what made a plain HTTP/1.1 responder
    /// on io_uring cheaper per request than nginx instead of dearer
    /// (`examples/uring_http.rs`, measured in `docs/bench.md`). Create,
    /// drive and drop it on one thread: another thread's submissions fail.
    pub fn single_issuer(entries: u32) -> Result<Ring, UringError> {
        Ring::build(entries, true)
    }

    fn build(entries: u32, single: bool) -> Result<Ring, UringError> {
        let mut b = IoUring::builder();
        b.setup_cqsize(entries.saturating_mul(4).max(8));
        if single {
            // The flag: `has_work` sees deferred work without a system call.
            b.setup_single_issuer()
                .setup_defer_taskrun()
                .setup_taskrun_flag();
        }
        let ring = b
            .build(entries.max(8))
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOSYS) => UringError::NoKernelSupport(e),
                Some(libc::EPERM) => UringError::Disabled {
                    setting: std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                        .map(|s| s.trim().to_string())
                        .unwrap_or_else(|_| "?".into()),
                },
                _ => UringError::Setup(e),
            })?;
        Ok(Ring {
            ring,
            slots: Vec::new(),
            free: Vec::new(),
            in_flight: 0,
            pool: None,
            cqes: Vec::new(),
            table: None,
        })
    }

    /// Registers an empty table of `n` sockets (Linux 5.19) for
    /// [`Ring::fix`]. Fails where the kernel lacks sparse tables or `n` is
    /// over `RLIMIT_NOFILE`; the ring then works as before, by descriptor.
    pub fn register_sockets(&mut self, n: u32) -> io::Result<()> {
        if self.table.is_some() {
            return Err(io::Error::other("the ring already has a file table"));
        }
        self.ring.submitter().register_files_sparse(n)?;
        self.table = Some(Table {
            free: (0..n).rev().collect(),
            by_fd: Vec::new(),
        });
        Ok(())
    }

    /// Puts `sock` in the file table, if the ring has one with room: the
    /// operations queued on it from now on name it by index. Queued, not
    /// waited for: the update runs at submission, before what is queued
    /// after it. Undo it with [`Ring::unfix`] when done with the socket,
    /// or the table keeps it open.
    pub fn fix(&mut self, sock: &SharedFd) -> io::Result<()> {
        let fd = sock.as_fd().as_raw_fd();
        let (Some(t), Ok(at)) = (&mut self.table, usize::try_from(fd)) else {
            return Ok(());
        };
        if t.by_fd.len() <= at {
            t.by_fd.resize(at + 1, None);
        }
        if t.by_fd[at].is_some() {
            return Ok(());
        }
        let Some(k) = t.free.pop() else {
            return Ok(());
        };
        t.by_fd[at] = Some((k, sock.clone()));
        self.update(k, fd, None)
    }

    /// Takes `sock` out of the file table, if it is there. Operations
    /// already queued or in flight on it are unaffected.
    pub fn unfix(&mut self, sock: &SharedFd) -> io::Result<()> {
        let fd = sock.as_fd().as_raw_fd();
        let taken = self.table.as_mut().and_then(|t| {
            let e = t.by_fd.get_mut(usize::try_from(fd).ok()?)?;
            e.take()
        });
        let Some((k, held)) = taken else {
            return Ok(());
        };
        // The index is free for the next socket at once: its update is
        // queued after this one and the kernel runs them in order.
        if let Some(t) = &mut self.table {
            t.free.push(k);
        }
        self.update(k, -1, Some(held))
    }

    /// Queues "table entry `k` is now `fd`" (-1: empty).
    fn update(&mut self, k: u32, fd: RawFd, keep: Option<SharedFd>) -> io::Result<()> {
        let b = Box::new(fd);
        let ptr: *const RawFd = &*b;
        let i = self.slot(Slot {
            token: 0,
            held: Held::Files(b),
            _fd: keep,
        });
        self.push(i, opcode::FilesUpdate::new(ptr, 1).offset(k as i32).build())
    }

    /// The table index `sock` is registered at.
    fn fixed(&self, sock: &SharedFd) -> Option<types::Fixed> {
        let t = self.table.as_ref()?;
        t.get(sock.as_fd().as_raw_fd())
            .map(|&(k, _)| types::Fixed(k))
    }

    /// Operations queued or in the kernel, not yet completed.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn slot(&mut self, slot: Slot) -> usize {
        self.in_flight += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        }
    }

    fn release(&mut self, i: usize) -> Option<Slot> {
        let s = self.slots.get_mut(i)?.take()?;
        self.free.push(i);
        self.in_flight -= 1;
        Some(s)
    }

    /// Queues `entry` for slot `i`. The slot already holds everything the
    /// entry points at.
    fn push(&mut self, i: usize, entry: squeue::Entry) -> io::Result<()> {
        let entry = entry.user_data(i as u64);
        for _ in 0..2 {
            // SAFETY: every pointer in `entry` points into memory held by
            // slot `i` (or the pool), which stays allocated and unmoved
            // until the completion for `i` is reaped (or the ring is
            // dropped, which waits or leaks); its fd is kept open by the
            // slot's SharedFd.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
        self.release(i);
        Err(io::Error::other("io_uring submission queue full"))
    }

    /// Reads `buf.len()` bytes at `offset` of `file`.
    pub fn read_at(
        &mut self,
        file: &SharedFd,
        mut buf: AlignedBuf,
        offset: u64,
        token: u64,
    ) -> io::Result<()> {
        let (ptr, len) = (buf.as_mut_ptr(), buf.len() as u32);
        let fd = types::Fd(file.as_fd().as_raw_fd());
        let i = self.slot(Slot {
            token,
            held: Held::Read(buf),
            _fd: Some(file.clone()),
        });
        self.push(i, opcode::Read::new(fd, ptr, len).offset(offset).build())
    }

    /// Writes all of `buf` at `offset` of `file`.
    pub fn write_at(
        &mut self,
        file: &SharedFd,
        buf: AlignedBuf,
        offset: u64,
        token: u64,
    ) -> io::Result<()> {
        let (ptr, len) = (buf.as_ptr(), buf.len() as u32);
        let fd = types::Fd(file.as_fd().as_raw_fd());
        let i = self.slot(Slot {
            token,
            held: Held::Write(buf),
            _fd: Some(file.clone()),
        });
        self.push(i, opcode::Write::new(fd, ptr, len).offset(offset).build())
    }

    /// Arms `bell`: an [`Event::Doorbell`] arrives when someone rings it.
    pub fn arm(&mut self, bell: &Arc<Doorbell>, token: u64) -> io::Result<()> {
        let mut b = Box::new([0u8; 8]);
        let ptr = b.as_mut_ptr();
        let fd = types::Fd(bell.0.as_raw_fd());
        let i = self.slot(Slot {
            token,
            held: Held::Doorbell(bell.clone(), b),
            _fd: None,
        });
        self.push(i, opcode::Read::new(fd, ptr, 8).build())
    }

    /// Gives the ring a pool of `count` receive buffers of `size` bytes for
    /// [`Ring::recv_multi`].
    pub fn provide_buffers(&mut self, count: u16, size: usize) -> io::Result<()> {
        if self.pool.is_some() {
            return Err(io::Error::other("the ring already has a buffer pool"));
        }
        let mut mem = vec![0u8; usize::from(count) * size];
        let ptr = mem.as_mut_ptr();
        self.pool = Some(Pool {
            mem,
            size,
            handed: vec![false; usize::from(count)],
            ring: None,
        });
        let i = self.slot(Slot {
            token: 0,
            held: Held::Provide,
            _fd: None,
        });
        self.push(
            i,
            opcode::ProvideBuffers::new(ptr, size as i32, count, GROUP, 0).build(),
        )
    }

    /// Like [`Ring::provide_buffers`], but given back through a registered
    /// buffer ring (Linux 5.19): [`Ring::recycle`] writes the ring's tail
    /// instead of queueing a submission, which a responder does once a
    /// request. `count` must be a power of two (at most 32,768).
    pub fn provide_buffer_ring(&mut self, count: u16, size: usize) -> io::Result<()> {
        if self.pool.is_some() {
            return Err(io::Error::other("the ring already has a buffer pool"));
        }
        if !count.is_power_of_two() {
            return Err(io::Error::other("a buffer ring's size is a power of two"));
        }
        let n = usize::from(count);
        let mut entries = AlignedBuf::new(n * std::mem::size_of::<types::BufRingEntry>());
        let addr = entries.as_mut_ptr() as u64;
        // SAFETY: `entries` is page-aligned, holds `count` zeroed entries,
        // and lives in the pool as long as the ring (the kernel pins it).
        unsafe {
            self.ring
                .submitter()
                .register_buf_ring_with_flags(addr, count, GROUP, 0)
        }?;
        let mut ring = BufRing {
            entries,
            mask: count - 1,
            tail: 0,
        };
        let mut mem = vec![0u8; n * size];
        for bid in 0..count {
            let at = usize::from(bid) * size;
            ring.give(mem[at..].as_mut_ptr(), size, bid);
        }
        self.pool = Some(Pool {
            mem,
            size,
            handed: vec![false; n],
            ring: Some(ring),
        });
        Ok(())
    }

    /// The bytes a receive put in provided buffer `bid` (empty unless a
    /// receive handed `bid` over and it was not recycled since).
    pub fn provided(&self, bid: u16, len: usize) -> &[u8] {
        match &self.pool {
            Some(p) if p.handed.get(usize::from(bid)) == Some(&true) => {
                let start = usize::from(bid) * p.size;
                &p.mem[start..start + len.min(p.size)]
            }
            _ => &[],
        }
    }

    /// Hands provided buffer `bid` back to the kernel.
    pub fn recycle(&mut self, bid: u16) -> io::Result<()> {
        let Some(p) = &mut self.pool else {
            return Ok(());
        };
        match p.handed.get_mut(usize::from(bid)) {
            Some(h) if *h => *h = false,
            // Not ours to give back: the kernel still has it.
            _ => return Ok(()),
        }
        let size = p.size;
        let start = usize::from(bid) * size;
        let Some(chunk) = p.mem.get_mut(start..start + size) else {
            return Ok(());
        };
        let ptr = chunk.as_mut_ptr();
        if let Some(ring) = &mut p.ring {
            ring.give(ptr, size, bid);
            return Ok(());
        }
        let i = self.slot(Slot {
            token: 0,
            held: Held::Provide,
            _fd: None,
        });
        self.push(
            i,
            opcode::ProvideBuffers::new(ptr, size as i32, 1, GROUP, bid).build(),
        )
    }

    /// Accepts connections on `listener` until cancelled or failed.
    pub fn accept_multi(&mut self, listener: &SharedFd, token: u64) -> io::Result<()> {
        let fd = types::Fd(listener.as_fd().as_raw_fd());
        let i = self.slot(Slot {
            token,
            held: Held::Accept,
            _fd: Some(listener.clone()),
        });
        self.push(
            i,
            opcode::AcceptMulti::new(fd)
                .flags(libc::SOCK_CLOEXEC)
                .build(),
        )
    }

    /// Receives on `sock` into the provided buffers until end of stream.
    pub fn recv_multi(&mut self, sock: &SharedFd, token: u64) -> io::Result<()> {
        if self.pool.is_none() {
            return Err(io::Error::other("recv_multi needs provide_buffers first"));
        }
        let entry = match self.fixed(sock) {
            Some(k) => opcode::RecvMulti::new(k, GROUP).build(),
            None => opcode::RecvMulti::new(types::Fd(sock.as_fd().as_raw_fd()), GROUP).build(),
        };
        let i = self.slot(Slot {
            token,
            held: Held::Recv,
            _fd: Some(sock.clone()),
        });
        self.push(i, entry)
    }

    /// Cancels every operation pending on `sock` (Linux 5.19): each still
    /// completes, with `ECANCELED` unless it had finished, so the caller
    /// learns when the ring has let go of the socket. What a server does
    /// to stop a multishot receive before closing or handing the socket on.
    pub fn cancel_fd(&mut self, sock: &SharedFd) -> io::Result<()> {
        let which = match self.fixed(sock) {
            Some(k) => types::CancelBuilder::fd(k),
            None => types::CancelBuilder::fd(types::Fd(sock.as_fd().as_raw_fd())),
        };
        let i = self.slot(Slot {
            token: 0,
            held: Held::Cancel,
            _fd: None,
        });
        self.push(i, opcode::AsyncCancel2::new(which.all()).build())
    }

    /// Sends `data` on `sock`.
    pub fn send(&mut self, sock: &SharedFd, data: Vec<u8>, token: u64) -> io::Result<()> {
        let (ptr, len) = (data.as_ptr(), data.len() as u32);
        let entry = match self.fixed(sock) {
            Some(k) => opcode::Send::new(k, ptr, len),
            None => opcode::Send::new(types::Fd(sock.as_fd().as_raw_fd()), ptr, len),
        };
        let i = self.slot(Slot {
            token,
            held: Held::Send(data),
            _fd: Some(sock.clone()),
        });
        self.push(i, entry.flags(libc::MSG_NOSIGNAL).build())
    }

    /// Submits what is queued and waits until at least `want` completions
    /// are ready or `timeout_ms` passed (an interrupted wait returns early).
    pub fn submit_and_wait(&mut self, want: usize, timeout_ms: u64) -> io::Result<()> {
        self.submit_and_wait_for(want, std::time::Duration::from_millis(timeout_ms))
    }

    /// [`Ring::submit_and_wait`] with a timeout to the nanosecond.
    pub fn submit_and_wait_for(
        &mut self,
        want: usize,
        most: std::time::Duration,
    ) -> io::Result<()> {
        let ts = types::Timespec::from(most);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Whether completions are ready, or kernel work that makes them is
    /// queued (on a [`Ring::single_issuer`] ring, which asks the kernel
    /// to flag it): a wait would then return without sleeping. Read from
    /// the ring's shared memory, no system call.
    pub fn has_work(&mut self) -> bool {
        self.ring.submission().taskrun() || !self.ring.completion().is_empty()
    }

    /// Submits what is queued without waiting.
    pub fn submit(&mut self) -> io::Result<()> {
        match self.ring.submit() {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Moves every ready completion into `out`.
    pub fn reap(&mut self, out: &mut Vec<Event>) {
        // Copied out first (completing needs the ring), into a buffer
        // kept between calls: a server reaps thousands of times a second.
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.extend(self.ring.completion());
        for cqe in cqes.drain(..) {
            if let Some(ev) = self.complete(&cqe) {
                out.push(ev);
            }
        }
        self.cqes = cqes;
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Option<Event> {
        let i = cqe.user_data() as usize;
        let res = cqe.result();
        let more = cqueue::more(cqe.flags());
        let result = if res < 0 {
            Err(io::Error::from_raw_os_error(-res))
        } else {
            Ok(res as usize)
        };
        // Multishot operations keep their slot while more completions come.
        let multishot = matches!(self.slots.get(i)?.as_ref()?.held, Held::Accept | Held::Recv);
        if multishot && more {
            let token = self.slots[i].as_ref()?.token;
            return Some(match self.slots[i].as_ref()?.held {
                Held::Accept => Event::Accepted {
                    token,
                    result: result.map(owned_fd),
                    more,
                },
                _ => Event::Received {
                    token,
                    result: self.recv_result(result, cqe.flags()),
                    more,
                },
            });
        }
        let slot = self.release(i)?;
        let token = slot.token;
        Some(match slot.held {
            Held::Read(buf) => Event::Read { token, result, buf },
            Held::Write(buf) => Event::Write { token, result, buf },
            Held::Doorbell(..) => Event::Doorbell { token },
            Held::Accept => Event::Accepted {
                token,
                result: result.map(owned_fd),
                more,
            },
            Held::Recv => Event::Received {
                token,
                result: self.recv_result(result, cqe.flags()),
                more,
            },
            Held::Send(data) => Event::Sent {
                token,
                result,
                data,
            },
            Held::Provide | Held::Cancel | Held::Files(_) => return None,
        })
    }
}

fn owned_fd(fd: usize) -> OwnedFd {
    // SAFETY: a successful accept completion's result is a new descriptor
    // that nothing else owns; it is wrapped exactly once, here.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

impl Ring {
    /// A receive's result; marks the buffer it filled as ours.
    fn recv_result(
        &mut self,
        r: io::Result<usize>,
        flags: u32,
    ) -> io::Result<Option<(u16, usize)>> {
        let n = r?;
        match cqueue::buffer_select(flags) {
            Some(bid) => {
                if let Some(h) = self
                    .pool
                    .as_mut()
                    .and_then(|p| p.handed.get_mut(usize::from(bid)))
                {
                    *h = true;
                }
                if n > 0 {
                    Ok(Some((bid, n)))
                } else {
                    // End of stream with a buffer taken: give it back.
                    let _ = self.recycle(bid);
                    Ok(None)
                }
            }
            None => Ok(None),
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Wake our own doorbell reads and cancel multishot operations, then
        // wait (bounded) for everything the kernel still holds.
        let mut cancels = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            match s.as_ref().map(|s| &s.held) {
                Some(Held::Doorbell(bell, _)) => bell.ring(),
                Some(Held::Accept | Held::Recv) => cancels.push(i as u64),
                _ => {}
            }
        }
        for target in cancels {
            let i = self.slot(Slot {
                token: 0,
                held: Held::Cancel,
                _fd: None,
            });
            let _ = self.push(i, opcode::AsyncCancel::new(target).build());
        }
        let deadline = crate::mono_ns() + 5_000_000_000;
        let mut sink = Vec::new();
        while self.in_flight > 0 && crate::mono_ns() < deadline {
            if self.submit_and_wait(1, 100).is_err() {
                break;
            }
            self.reap(&mut sink);
            for ev in sink.drain(..) {
                // A doorbell the drop did not ring itself is rung again by
                // nobody: ring it so its read completes.
                if let Event::Accepted { result: Ok(fd), .. } = ev {
                    drop(fd);
                }
            }
            for s in self.slots.iter().flatten() {
                if let Held::Doorbell(bell, _) = &s.held {
                    bell.ring();
                }
            }
        }
        if self.in_flight > 0 {
            // The kernel may still write into these: never free them.
            for s in self.slots.drain(..).flatten() {
                std::mem::forget(s);
            }
            if let Some(p) = self.pool.take() {
                std::mem::forget(p);
            }
        }
    }
}

impl tcpwise_outcome::Classify for UringError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        // No io_uring here (or switched off): missing system support.
        Some(tcpwise_outcome::Class::Privileges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn ring_or_skip() -> Option<Ring> {
        skip_unless(Ring::new(64))
    }

    fn skip_unless(ring: Result<Ring, UringError>) -> Option<Ring> {
        match ring {
            Ok(r) => Some(r),
            Err(e) if std::env::var_os("TCPWISE_REQUIRE_IO_URING").is_none() => {
                eprintln!("skipped: {e}");
                None
            }
            Err(e) => panic!("TCPWISE_REQUIRE_IO_URING=1 but {e}"),
        }
    }

    /// A listener the ring accepts on (token `accept`), a pool for its
    /// receives (four buffers, unless the ring has a pool already), and a
    /// client that connected and sent `ping`.
    fn pinged(ring: &mut Ring, accept: u64) -> std::net::TcpStream {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let l: SharedFd = Arc::new(l);
        if ring.pool.is_none() {
            ring.provide_buffers(4, 256).unwrap();
        }
        ring.accept_multi(&l, accept).unwrap();
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.write_all(b"ping").unwrap();
        c
    }

    /// One wait for completions (at most 100 ms), and what arrived.
    fn turn(ring: &mut Ring, evs: &mut Vec<Event>) {
        ring.submit_and_wait(1, 100).unwrap();
        ring.reap(evs);
    }

    /// Turns of the ring until a `ping` was answered `pong` (true), the
    /// connection accepted into `srv` first if it is not there yet, put in
    /// the ring's table if `fix`.
    fn pong(ring: &mut Ring, srv: &mut Option<SharedFd>, fix: bool) -> bool {
        let mut evs = Vec::new();
        for _ in 0..50 {
            // Deferred completions arrive only while this thread waits.
            turn(ring, &mut evs);
            for ev in evs.drain(..) {
                match ev {
                    Event::Accepted { result: Ok(fd), .. } => {
                        let s: SharedFd = Arc::new(std::net::TcpStream::from(fd));
                        if fix {
                            ring.fix(&s).unwrap();
                        }
                        ring.recv_multi(&s, 2).unwrap();
                        *srv = Some(s);
                    }
                    Event::Received { result, .. } => {
                        let (bid, n) = result.unwrap().expect("data, not the end");
                        assert_eq!(ring.provided(bid, n), b"ping");
                        ring.recycle(bid).unwrap();
                        let s = srv.as_ref().unwrap();
                        ring.send(s, b"pong".to_vec(), 3).unwrap();
                    }
                    Event::Sent { result, .. } => {
                        assert_eq!(result.unwrap(), 4);
                        return true;
                    }
                    _ => {}
                }
            }
        }
        false
    }

    #[test]
    fn write_then_read_back_through_the_ring() {
        let Some(mut ring) = ring_or_skip() else {
            return;
        };
        let path = std::env::temp_dir().join(format!("tcpwise-uring-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        let file: SharedFd = Arc::new(f);
        let mut buf = AlignedBuf::new(8192);
        buf[..5].copy_from_slice(b"hello");
        ring.write_at(&file, buf, 4096, 7).unwrap();
        let mut evs = Vec::new();
        while evs.is_empty() {
            ring.submit_and_wait(1, 1000).unwrap();
            ring.reap(&mut evs);
        }
        assert!(matches!(
            &evs[0],
            Event::Write {
                token: 7,
                result: Ok(8192),
                ..
            }
        ));
        ring.read_at(&file, AlignedBuf::new(4096), 4096, 8).unwrap();
        evs.clear();
        while evs.is_empty() {
            ring.submit_and_wait(1, 1000).unwrap();
            ring.reap(&mut evs);
        }
        match &evs[0] {
            Event::Read {
                token: 8,
                result: Ok(4096),
                buf,
            } => assert_eq!(&buf[..5], b"hello"),
            other => panic!("{other:?}"),
        }
        assert_eq!(ring.in_flight(), 0);
    }

    #[test]
    fn doorbell_wakes_and_drop_with_pending_ops_is_clean() {
        let Some(mut ring) = ring_or_skip() else {
            return;
        };
        let bell = Doorbell::new().unwrap();
        ring.arm(&bell, 3).unwrap();
        let b2 = bell.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            b2.ring();
        });
        let mut evs = Vec::new();
        for _ in 0..50 {
            ring.submit_and_wait(1, 100).unwrap();
            ring.reap(&mut evs);
            if !evs.is_empty() {
                break;
            }
        }
        t.join().unwrap();
        assert!(matches!(evs[..], [Event::Doorbell { token: 3 }]));
        // Pending doorbell + multishot accept + receive: drop must not hang.
        ring.arm(&bell, 4).unwrap();
        let _c = pinged(&mut ring, 5);
        let mut got = None;
        let mut evs = Vec::new();
        for _ in 0..50 {
            turn(&mut ring, &mut evs);
            for ev in evs.drain(..) {
                match ev {
                    Event::Accepted { result: Ok(fd), .. } => {
                        let s: SharedFd = Arc::new(fd);
                        ring.recv_multi(&s, 6).unwrap();
                    }
                    Event::Received {
                        result: Ok(Some((bid, n))),
                        ..
                    } => {
                        got = Some(ring.provided(bid, n).to_vec());
                        ring.recycle(bid).unwrap();
                        // Given back: the kernel may write it again, so
                        // it is no longer ours to read.
                        assert!(ring.provided(bid, n).is_empty());
                    }
                    _ => {}
                }
            }
            if got.is_some() {
                break;
            }
        }
        assert_eq!(got.as_deref(), Some(&b"ping"[..]));
        let t0 = std::time::Instant::now();
        drop(ring);
        assert!(t0.elapsed() < std::time::Duration::from_secs(3));
    }

    #[test]
    fn a_single_issuer_ring_answers_a_connection_and_drops_clean() {
        let Some(mut ring) = skip_unless(Ring::single_issuer(64)) else {
            return;
        };
        // Two buffers, four receives: each must come back through the ring.
        ring.provide_buffer_ring(2, 256).unwrap();
        assert!(ring.provide_buffer_ring(2, 256).is_err());
        let mut c = pinged(&mut ring, 1);
        let mut srv = None::<SharedFd>;
        for round in 0..4 {
            if round > 0 {
                c.write_all(b"ping").unwrap();
            }
            assert!(pong(&mut ring, &mut srv, false), "round {round}");
            let mut got = [0u8; 4];
            std::io::Read::read_exact(&mut c, &mut got).unwrap();
            assert_eq!(&got, b"pong");
        }
        // A multishot accept and receive still pending: drop must not hang.
        let t0 = std::time::Instant::now();
        drop(ring);
        assert!(t0.elapsed() < std::time::Duration::from_secs(3));
    }

    #[test]
    fn a_fixed_socket_is_answered_by_index_and_closes_once_unfixed() {
        let Some(mut ring) = skip_unless(Ring::single_issuer(64)) else {
            return;
        };
        // A table of one: the second socket is refused a place and works
        // by descriptor; the place is reused once the first lets go.
        ring.register_sockets(1).unwrap();
        assert!(ring.register_sockets(1).is_err());
        ring.provide_buffer_ring(4, 256).unwrap();
        let mut c = pinged(&mut ring, 1);
        let (mut evs, mut srv) = (Vec::new(), None::<SharedFd>);
        assert!(pong(&mut ring, &mut srv, true));
        assert!(ring.fixed(srv.as_ref().unwrap()).is_some());
        let mut got = [0u8; 4];
        std::io::Read::read_exact(&mut c, &mut got).unwrap();
        assert_eq!(&got, b"pong");
        let s = srv.take().unwrap();
        let other: SharedFd = Arc::new(std::net::TcpListener::bind("127.0.0.1:0").unwrap());
        ring.fix(&other).unwrap();
        assert!(ring.fixed(&other).is_none(), "the table is full");
        // Cancelled by index, then out of the table and dropped: the
        // client must see the end of stream, or the table kept it open.
        ring.cancel_fd(&s).unwrap();
        ring.unfix(&s).unwrap();
        drop(s);
        let mut ended = false;
        for _ in 0..50 {
            turn(&mut ring, &mut evs);
            ended |= evs.drain(..).any(|ev| {
                matches!(ev, Event::Received { result: Err(ref e), more: false, .. }
                    if e.raw_os_error() == Some(libc::ECANCELED))
            });
            if ended && ring.in_flight() <= 1 {
                break;
            }
        }
        assert!(ended, "the receive was cancelled");
        c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let n = std::io::Read::read(&mut c, &mut got).unwrap();
        assert_eq!(n, 0, "closed once the table let go");
        ring.fix(&other).unwrap();
        assert!(ring.fixed(&other).is_some(), "the place is free again");
    }
}
