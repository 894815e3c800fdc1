//! The three dispatch models as real servers (thin glue over epoll, poll
//! and tokio). Each serves the [`crate::proto`] protocol: read a request,
//! spin its work, write its reply, until the client closes.

use crate::proto::{REQUEST_LEN, Request};
use crate::{Model, Slots, burn};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Address to listen on.
    pub bind: SocketAddr,
    /// Dispatch model.
    pub model: Model,
    /// Worker threads.
    pub workers: usize,
}

/// What the server did, per worker: how evenly the work spread.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStats {
    /// Requests served by each worker.
    pub per_worker: Vec<u64>,
}

/// One connection's state between readiness events.
struct Conn {
    stream: TcpStream,
    buf: [u8; REQUEST_LEN],
    have: usize,
}

/// What a connection's readiness led to.
enum Outcome {
    /// Still open; this many requests were served.
    Open(u64),
    /// Closed by the peer, or broken.
    Closed(u64),
}

impl Conn {
    fn new(stream: TcpStream) -> io::Result<Conn> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: [0; REQUEST_LEN],
            have: 0,
        })
    }

    /// Reads what is there and serves every whole request in it.
    fn ready(&mut self) -> Outcome {
        let mut served = 0;
        loop {
            match self.stream.read(&mut self.buf[self.have..]) {
                Ok(0) => return Outcome::Closed(served),
                Ok(n) => {
                    self.have += n;
                    if self.have == REQUEST_LEN {
                        self.have = 0;
                        let Ok(req) = Request::decode(&self.buf) else {
                            return Outcome::Closed(served);
                        };
                        burn(req.work_us);
                        if write_all(&mut self.stream, &req.reply()).is_err() {
                            return Outcome::Closed(served);
                        }
                        served += 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Outcome::Open(served),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Outcome::Closed(served),
            }
        }
    }
}

/// Writes all of `b` to a non-blocking socket, waiting for room (up to 5 s).
fn write_all(s: &mut TcpStream, mut b: &[u8]) -> io::Result<()> {
    while !b.is_empty() {
        match s.write(b) {
            Ok(n) => b = &b[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd {
                    fd: s.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                if unsafe { libc::poll(&mut p, 1, 5000) } <= 0 {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "peer not reading"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Serves until `stop` is set; `ready` gets the bound address.
pub fn serve(
    opts: &ServerOptions,
    stop: Arc<AtomicBool>,
    ready: impl FnOnce(SocketAddr),
) -> io::Result<ServerStats> {
    if opts.workers == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "at least one worker",
        ));
    }
    raise_fd_limit();
    let listener = TcpListener::bind(opts.bind)?;
    ready(listener.local_addr()?);
    match opts.model {
        Model::Shared => shared(listener, opts.workers, &stop),
        Model::Segments { slots } => segments(listener, opts.workers, slots, &stop),
        Model::Tokio => tokio_model(listener, opts.workers, &stop),
    }
}

/// 1024 clients need more than the usual 1024 descriptors.
pub fn raise_fd_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid rlimit pointers.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max.min(1 << 16);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Accepts until `stop`, handing each connection to `hand`.
fn accept_loop(
    listener: &TcpListener,
    stop: &AtomicBool,
    mut hand: impl FnMut(TcpStream),
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((s, _)) => hand(s),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd {
                    fd: listener.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut p, 1, 100) };
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.raw_os_error() == Some(libc::EMFILE) => {
                eprintln!("tcpwise dispatch: out of file descriptors: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// Completion-port discipline: one epoll set, every connection armed
/// one-shot, any worker takes the next ready one (one at a time, like
/// `GetQueuedCompletionStatus`) and re-arms it when done.
fn shared(listener: TcpListener, workers: usize, stop: &AtomicBool) -> io::Result<ServerStats> {
    // SAFETY: plain syscall.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(io::Error::last_os_error());
    }
    let table: Arc<Vec<Mutex<Option<Conn>>>> =
        Arc::new((0..1 << 16).map(|_| Mutex::new(None)).collect());
    let counts: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|s| {
        for count in &counts {
            let table = table.clone();
            s.spawn(move || {
                let mut ev = [libc::epoll_event { events: 0, u64: 0 }; 1];
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: ev has room for one event.
                    let n = unsafe { libc::epoll_wait(ep, ev.as_mut_ptr(), 1, 100) };
                    if n <= 0 {
                        continue;
                    }
                    let fd = ev[0].u64 as RawFd;
                    let Some(slot) = table.get(fd as usize) else {
                        continue;
                    };
                    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
                    let Some(conn) = guard.as_mut() else { continue };
                    match conn.ready() {
                        Outcome::Open(k) => {
                            count.fetch_add(k, Ordering::Relaxed);
                            arm(ep, fd, libc::EPOLL_CTL_MOD);
                        }
                        Outcome::Closed(k) => {
                            count.fetch_add(k, Ordering::Relaxed);
                            // Closing removes it from the epoll set.
                            guard.take();
                        }
                    }
                }
            });
        }
        let r = accept_loop(&listener, stop, |stream| {
            let fd = stream.as_raw_fd();
            let (Some(slot), Ok(conn)) = (table.get(fd as usize), Conn::new(stream)) else {
                return;
            };
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(conn);
            arm(ep, fd, libc::EPOLL_CTL_ADD);
        });
        stop.store(true, Ordering::Relaxed);
        r
    })?;
    // SAFETY: ep is ours.
    unsafe { libc::close(ep) };
    Ok(ServerStats {
        per_worker: counts.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
    })
}

/// (Re-)arms `fd` in the epoll set `ep` for one readiness event.
fn arm(ep: RawFd, fd: RawFd, op: i32) {
    let mut ev = libc::epoll_event {
        events: (libc::EPOLLIN | libc::EPOLLONESHOT | libc::EPOLLRDHUP) as u32,
        u64: fd as u64,
    };
    // SAFETY: ep and fd are open; ev is valid.
    unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) };
}

/// Fixed segments: connection k belongs to worker k mod W for its life;
/// each worker waits (poll) on at most `slots` of its connections, the
/// rest queue for a slot ([`Slots`]).
fn segments(
    listener: TcpListener,
    workers: usize,
    slots: usize,
    stop: &AtomicBool,
) -> io::Result<ServerStats> {
    let counts: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    let mut senders = Vec::new();
    let mut wakers = Vec::new();
    let mut inboxes = Vec::new();
    for _ in 0..workers {
        let (tx, rx) = mpsc::channel::<TcpStream>();
        // SAFETY: plain syscall.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        senders.push(tx);
        wakers.push(efd);
        inboxes.push(Some(rx));
    }
    std::thread::scope(|s| {
        for (w, count) in counts.iter().enumerate() {
            let rx = inboxes[w].take().expect("one inbox per worker");
            let efd = wakers[w];
            s.spawn(move || segment_worker(rx, efd, slots, count, stop));
        }
        let mut k = 0usize;
        let r = accept_loop(&listener, stop, |stream| {
            let w = k % workers;
            k += 1;
            if senders[w].send(stream).is_ok() {
                let one: u64 = 1;
                // SAFETY: writing 8 bytes to our eventfd.
                unsafe { libc::write(wakers[w], (&one as *const u64).cast(), 8) };
            }
        });
        stop.store(true, Ordering::Relaxed);
        r
    })?;
    for efd in wakers {
        // SAFETY: ours.
        unsafe { libc::close(efd) };
    }
    Ok(ServerStats {
        per_worker: counts.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
    })
}

fn segment_worker(
    rx: mpsc::Receiver<TcpStream>,
    efd: RawFd,
    slots: usize,
    count: &AtomicU64,
    stop: &AtomicBool,
) {
    let mut conns: std::collections::HashMap<RawFd, Conn> = std::collections::HashMap::new();
    let mut set: Slots<RawFd> = Slots::new(slots);
    let mut pfds: Vec<libc::pollfd> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        pfds.clear();
        pfds.push(libc::pollfd {
            fd: efd,
            events: libc::POLLIN,
            revents: 0,
        });
        pfds.extend(set.held().iter().map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        }));
        // SAFETY: pfds is a valid array of its length.
        let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 100) };
        if n <= 0 {
            continue;
        }
        if pfds[0].revents != 0 {
            let mut v: u64 = 0;
            // SAFETY: reading 8 bytes from our eventfd.
            unsafe { libc::read(efd, (&mut v as *mut u64).cast(), 8) };
            while let Ok(stream) = rx.try_recv() {
                let fd = stream.as_raw_fd();
                if let Ok(c) = Conn::new(stream) {
                    conns.insert(fd, c);
                    set.add(fd);
                }
            }
        }
        for p in &pfds[1..] {
            if p.revents == 0 {
                continue;
            }
            let Some(conn) = conns.get_mut(&p.fd) else {
                continue;
            };
            match conn.ready() {
                Outcome::Open(k) => {
                    count.fetch_add(k, Ordering::Relaxed);
                    if k > 0 {
                        set.served(p.fd);
                    }
                }
                Outcome::Closed(k) => {
                    count.fetch_add(k, Ordering::Relaxed);
                    set.remove(p.fd);
                    conns.remove(&p.fd);
                }
            }
        }
    }
}

/// tokio's multi-thread runtime with `workers` workers, a task per
/// connection: tcpwise's own servers.
fn tokio_model(
    listener: TcpListener,
    workers: usize,
    stop: &AtomicBool,
) -> io::Result<ServerStats> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?;
    let served = Arc::new(AtomicU64::new(0));
    listener.set_nonblocking(true)?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        while !stop.load(Ordering::Relaxed) {
            let Ok(acc) = tokio::time::timeout(Duration::from_millis(100), listener.accept()).await
            else {
                continue;
            };
            let Ok((mut s, _)) = acc else { continue };
            let _ = s.set_nodelay(true);
            let served = served.clone();
            tokio::spawn(async move {
                let mut b = [0u8; REQUEST_LEN];
                while s.read_exact(&mut b).await.is_ok() {
                    let Ok(req) = Request::decode(&b) else { break };
                    burn(req.work_us);
                    if s.write_all(&req.reply()).await.is_err() {
                        break;
                    }
                    served.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        Ok::<_, io::Error>(())
    })?;
    rt.shutdown_timeout(Duration::from_secs(1));
    // tokio does not say which worker ran a task.
    Ok(ServerStats {
        per_worker: vec![served.load(Ordering::Relaxed)],
    })
}
