//! The io_uring model: completions, not readiness.
//!
//! The serving thread owns one ring. A multishot accept posts a completion
//! per new connection; each connection has a multishot receive that posts
//! a completion per chunk of bytes, landed in a buffer the kernel took
//! from a pool we provided (no buffer per idle connection). Every whole
//! request goes to one queue that any of the workers drains; a worker
//! spins the request's work and hands its reply back to the ring
//! thread (a doorbell wakes it), which sends it with the ring. Nothing
//! waits on one socket: the ring thread only ever waits for "something
//! completed", like `GetQueuedCompletionStatus`.

use crate::ServerStats;
use crate::burn;
use crate::proto::{REQUEST_LEN, Request};
use std::collections::HashMap;
use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tcpwise_outcome::Shutdown;
use tcpwise_sys::uring::{Doorbell, Event, Ring, SharedFd};

/// Token of the accept and of the doorbell (connection ids count up from 0).
const ACCEPT: u64 = u64::MAX;
const BELL: u64 = u64::MAX - 1;
/// Provided receive buffers: enough for every connection's request to be
/// in flight at once at 1024 clients, with room to spare.
const BUFFERS: u16 = 4096;
const BUFFER_BYTES: usize = 2048;

/// A request for the workers.
struct Job {
    conn: u64,
    req: Request,
}

/// A reply for the ring thread to send.
struct Reply {
    conn: u64,
    data: Vec<u8>,
}

struct Conn {
    sock: SharedFd,
    pending: Vec<u8>,
}

pub fn serve(listener: TcpListener, workers: usize, stop: &Shutdown) -> io::Result<ServerStats> {
    let mut ring = Ring::new(4096).map_err(|e| io::Error::new(io::ErrorKind::Unsupported, e))?;
    // io_uring polls a non-blocking listener instead of parking an accept
    // on one of its worker threads.
    listener.set_nonblocking(true)?;
    let listener: SharedFd = Arc::new(listener);
    ring.provide_buffers(BUFFERS, BUFFER_BYTES)?;
    ring.accept_multi(&listener, ACCEPT)?;
    let bell = Doorbell::new()?;
    ring.arm(&bell, BELL)?;
    let (job_tx, job_rx) = crossbeam_channel::unbounded::<Job>();
    let (reply_tx, reply_rx) = crossbeam_channel::unbounded::<Reply>();
    let counts: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(0)).collect();
    let done = AtomicBool::new(false);
    let r = std::thread::scope(|s| {
        for count in &counts {
            let (job_rx, reply_tx, bell, done) = (job_rx.clone(), reply_tx.clone(), &bell, &done);
            s.spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    let Ok(job) = job_rx.recv_timeout(Duration::from_millis(100)) else {
                        continue;
                    };
                    burn(job.req.work_us);
                    count.fetch_add(1, Ordering::Relaxed);
                    let _ = reply_tx.send(Reply {
                        conn: job.conn,
                        data: job.req.reply(),
                    });
                    bell.ring();
                }
            });
        }
        let r = ring_loop(&mut ring, &listener, &bell, &job_tx, &reply_rx, stop);
        done.store(true, Ordering::Relaxed);
        r
    });
    drop(ring);
    r?;
    Ok(ServerStats {
        per_worker: counts.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
    })
}

fn ring_loop(
    ring: &mut Ring,
    listener: &SharedFd,
    bell: &Arc<Doorbell>,
    jobs: &crossbeam_channel::Sender<Job>,
    replies: &crossbeam_channel::Receiver<Reply>,
    stop: &Shutdown,
) -> io::Result<()> {
    let mut conns: HashMap<u64, Conn> = HashMap::new();
    let mut next_id = 0u64;
    let mut evs = Vec::new();
    while !stop.is_triggered() {
        ring.submit_and_wait(1, 100)?;
        ring.reap(&mut evs);
        for ev in evs.drain(..) {
            match ev {
                Event::Accepted { result, more, .. } => {
                    if let Ok(fd) = result {
                        let stream = TcpStream::from(fd);
                        let _ = stream.set_nodelay(true);
                        let sock: SharedFd = Arc::new(stream);
                        ring.recv_multi(&sock, next_id)?;
                        conns.insert(
                            next_id,
                            Conn {
                                sock,
                                pending: Vec::new(),
                            },
                        );
                        next_id += 1;
                    }
                    if !more {
                        // EMFILE and friends end the multishot: pause, re-arm.
                        std::thread::sleep(Duration::from_millis(10));
                        ring.accept_multi(listener, ACCEPT)?;
                    }
                }
                Event::Received {
                    token,
                    result,
                    more,
                } => match result {
                    Ok(Some((bid, n))) => {
                        if let Some(c) = conns.get_mut(&token) {
                            c.pending.extend_from_slice(ring.provided(bid, n));
                            let whole = c.pending.len() / REQUEST_LEN * REQUEST_LEN;
                            let mut bad = false;
                            for chunk in c.pending[..whole].chunks_exact(REQUEST_LEN) {
                                match Request::decode(chunk.try_into().expect("16 bytes")) {
                                    Ok(req) => {
                                        let _ = jobs.send(Job { conn: token, req });
                                    }
                                    Err(_) => bad = true,
                                }
                            }
                            c.pending.drain(..whole);
                            if bad {
                                // Not our protocol: close it; the receive
                                // ends with the shutdown.
                                let _ = socket2::SockRef::from(&c.sock)
                                    .shutdown(std::net::Shutdown::Both);
                                conns.remove(&token);
                            } else if !more {
                                // Out of provided buffers: receive again.
                                ring.recv_multi(&c.sock, token)?;
                            }
                        }
                        ring.recycle(bid)?;
                    }
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) && !more => {
                        if let Some(c) = conns.get(&token) {
                            ring.recv_multi(&c.sock.clone(), token)?;
                        }
                    }
                    // End of stream or a broken connection.
                    _ => {
                        if !more {
                            conns.remove(&token);
                        }
                    }
                },
                Event::Doorbell { .. } => {
                    for r in replies.try_iter() {
                        if let Some(c) = conns.get(&r.conn) {
                            ring.send(&c.sock.clone(), r.data, r.conn)?;
                        }
                    }
                    ring.arm(bell, BELL)?;
                }
                Event::Sent {
                    token,
                    result,
                    data,
                } => match result {
                    Ok(n) if n < data.len() => {
                        if let Some(c) = conns.get(&token) {
                            ring.send(&c.sock.clone(), data[n..].to_vec(), token)?;
                        }
                    }
                    Ok(_) => {}
                    Err(_) => {
                        conns.remove(&token);
                    }
                },
                _ => {}
            }
        }
    }
    Ok(())
}
