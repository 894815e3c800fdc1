//! The dispatch models as real servers (thin glue over epoll, poll
//! and tokio). Each serves the [`crate::proto`] protocol: read a request,
//! spin its work, write its reply, until the client closes.

use crate::proto::{REQUEST_LEN, Request};
use crate::{Model, Slots, burn};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tcpwise_outcome::Shutdown;

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

pub use crate::ServerStats;

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
                if !tcpwise_sys::wait_fd(s.as_raw_fd(), libc::POLLOUT, 5000) {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "peer not reading"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Serves until `stop` is triggered; `ready` gets the bound address.
pub fn serve(
    opts: &ServerOptions,
    stop: Shutdown,
    ready: impl FnOnce(SocketAddr),
) -> io::Result<ServerStats> {
    if opts.workers == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "at least one worker",
        ));
    }
    crate::probe(opts.model).map_err(|e| io::Error::new(io::ErrorKind::Unsupported, e))?;
    raise_fd_limit();
    let listener = listen(opts.bind)?;
    ready(listener.local_addr()?);
    match opts.model {
        Model::Shared => shared(listener, opts.workers, &stop),
        Model::Segments { slots } => segments(listener, opts.workers, slots, &stop),
        Model::Tokio => tokio_model(listener, opts.workers, &stop),
        Model::IoUring => crate::uring::serve(listener, opts.workers, &stop),
    }
}

/// Listen backlog: room for 1024 clients connecting at once (std's
/// `TcpListener::bind` asks for 128; nginx asks for 511, Go for
/// `net.core.somaxconn`, which caps this one too).
pub const BACKLOG: i32 = 1024;

fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    tcpwise_tcp::listen(addr, BACKLOG, tcpwise_tcp::PortShare::Alone)
}

/// 1024 clients need more than the usual 1024 descriptors.
pub use tcpwise_sys::raise_fd_limit;

/// Accepts until `stop`, handing each connection to `hand`.
fn accept_loop(
    listener: &TcpListener,
    stop: &Shutdown,
    mut hand: impl FnMut(TcpStream),
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    while !stop.is_triggered() {
        match listener.accept() {
            Ok((s, _)) => hand(s),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                tcpwise_sys::wait_fd(listener.as_raw_fd(), libc::POLLIN, 100);
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
fn shared(listener: TcpListener, workers: usize, stop: &Shutdown) -> io::Result<ServerStats> {
    let ep = tcpwise_sys::Epoll::new()?;
    let ep = &ep;
    let table: Arc<Vec<Mutex<Option<Conn>>>> =
        Arc::new((0..1 << 16).map(|_| Mutex::new(None)).collect());
    let counts: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|s| {
        for count in &counts {
            let table = table.clone();
            s.spawn(move || {
                while !stop.is_triggered() {
                    let Some(token) = ep.wait_one(100) else {
                        continue;
                    };
                    let fd = token as RawFd;
                    let Some(slot) = table.get(fd as usize) else {
                        continue;
                    };
                    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
                    let Some(conn) = guard.as_mut() else { continue };
                    match conn.ready() {
                        Outcome::Open(k) => {
                            count.fetch_add(k, Ordering::Relaxed);
                            let _ = ep.arm_oneshot(fd, fd as u64, false);
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
            let _ = ep.arm_oneshot(fd, fd as u64, true);
        });
        stop.trigger();
        r
    })?;
    Ok(ServerStats {
        per_worker: counts.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
    })
}

/// Fixed segments: connection k belongs to worker k mod W for its life;
/// each worker waits (poll) on at most `slots` of its connections, the
/// rest queue for a slot ([`Slots`]).
fn segments(
    listener: TcpListener,
    workers: usize,
    slots: usize,
    stop: &Shutdown,
) -> io::Result<ServerStats> {
    let counts: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    let mut senders = Vec::new();
    let mut wakers = Vec::new();
    let mut inboxes = Vec::new();
    for _ in 0..workers {
        let (tx, rx) = mpsc::channel::<TcpStream>();
        let efd = tcpwise_sys::eventfd()?;
        senders.push(tx);
        wakers.push(efd);
        inboxes.push(Some(rx));
    }
    std::thread::scope(|s| {
        for (w, count) in counts.iter().enumerate() {
            let rx = inboxes[w].take().expect("one inbox per worker");
            let efd = wakers[w].as_raw_fd();
            s.spawn(move || segment_worker(rx, efd, slots, count, stop));
        }
        let mut k = 0usize;
        let r = accept_loop(&listener, stop, |stream| {
            let w = k % workers;
            k += 1;
            if senders[w].send(stream).is_ok() {
                tcpwise_sys::eventfd_signal(wakers[w].as_raw_fd());
            }
        });
        stop.trigger();
        r
    })?;
    Ok(ServerStats {
        per_worker: counts.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
    })
}

fn segment_worker(
    rx: mpsc::Receiver<TcpStream>,
    efd: RawFd,
    slots: usize,
    count: &AtomicU64,
    stop: &Shutdown,
) {
    let mut conns: std::collections::HashMap<RawFd, Conn> = std::collections::HashMap::new();
    let mut set: Slots<RawFd> = Slots::new(slots);
    let mut pfds: Vec<libc::pollfd> = Vec::new();
    while !stop.is_triggered() {
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
        if tcpwise_sys::poll(&mut pfds, 100) == 0 {
            continue;
        }
        if pfds[0].revents != 0 {
            tcpwise_sys::drain_counter(efd);
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
fn tokio_model(listener: TcpListener, workers: usize, stop: &Shutdown) -> io::Result<ServerStats> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?;
    let served = Arc::new(AtomicU64::new(0));
    listener.set_nonblocking(true)?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        while !stop.is_triggered() {
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
