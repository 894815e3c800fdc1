//! At `--max-conns`, a newcomer closes the connection that moved data
//! longest ago instead of waiting in the listen backlog behind it. nginx
//! does the like when it runs out of `worker_connections` (it closes idle
//! keep-alive connections, `ngx_drain_connections`); we read staleness
//! from the kernel (`TCP_INFO`'s time since the last data sent and
//! received), so a connection stalled mid-request (half a preface, a
//! window held at zero) counts as idle as one between requests, and one
//! that moves data is never the one chosen while another stands still.
//! Without eviction 50 stalled connections held a newcomer for a header
//! timeout a round of 50 (3.0 and 6.0 s, 1 Dec; docs/serve.md).
//!
//! The epoll engine keeps one registry a worker, and a newcomer reads
//! every worker's registry itself, on its own thread: its worker may hold
//! no stale connection at all (`SO_REUSEPORT` hashed it to one without
//! attackers, and it waited a header timeout: CI, 3 Dec, 2,966 ms).
//! Reading another thread's descriptor is safe here because nothing is
//! done to a descriptor: the chosen connection is told to close by id,
//! and closes on its own thread. A descriptor read just as its connection
//! closes (it leaves the registry in the same poll) may name a socket
//! accepted since: that misjudges only how stale the leaving connection
//! looks, and choosing it frees the slot it is giving back anyway. Asking
//! each worker's thread for its stalest instead, as before 4 Dec, cost a
//! newcomer the time until that worker's next poll: a worker busy with
//! 105 zero-window attackers' file streams answered late, and a HEAD
//! waited 113 ms (release) to 3,259 ms (debug, CI). The io_uring engine
//! picks among its ring's connections alone ([`stalest`]): its rings take
//! plain HTTP/1.1 only, whose header timeout closes a stalled connection
//! anyway.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::Notify;

/// A worker's open connections, by id.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    conns: Arc<Mutex<HashMap<u64, Entry>>>,
}

struct Entry {
    fd: RawFd,
    since: Instant,
    evict: Arc<Notify>,
    chosen: bool,
}

/// A connection's place in the registry: dropped with the connection.
pub(crate) struct Member {
    id: u64,
    reg: Registry,
    /// Notified when a newcomer chose this connection.
    pub evict: Arc<Notify>,
}

impl Member {
    /// Runs the connection `conn` until it ends or a newcomer chooses it:
    /// then the connection (its socket with it) is dropped, and the
    /// member leaves the registry in the same poll.
    pub async fn run<F>(self, conn: F) -> std::io::Result<()>
    where
        F: std::future::Future<Output = std::io::Result<()>>,
    {
        let evicted = self.evict.clone();
        tokio::select! {
            r = conn => r,
            _ = evicted.notified() => Err(std::io::Error::other(
                "closed for a newcomer at --max-conns: it had moved no data for longest",
            )),
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if let Ok(mut m) = self.reg.conns.lock() {
            m.remove(&self.id);
        }
    }
}

/// How long the connection on `fd`, accepted at `since`, has moved no
/// data, ms: the kernel's times since it last sent and received data,
/// and never more than since it was accepted (a request that waited in
/// the listen backlog is old to the kernel and new to us: without that
/// bound a newcomer behind attackers was the one chosen next, CI 3 Dec).
pub(crate) fn idle_ms(fd: RawFd, since: Instant) -> Option<u32> {
    let (info, _) = tcpwise_sys::tcp_info(fd)?;
    let ours = u32::try_from(since.elapsed().as_millis()).unwrap_or(u32::MAX);
    Some(info.last_data_recv.min(info.last_data_sent).min(ours))
}

/// The candidate that moved data longest ago: `(id, ms since it last
/// sent or received data)`; ties go to the lowest id (the oldest).
pub(crate) fn stalest(candidates: impl IntoIterator<Item = (u64, u32)>) -> Option<(u64, u32)> {
    candidates
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
}

impl Registry {
    /// Registers connection `id` on socket `fd`.
    pub fn join(&self, id: u64, fd: RawFd) -> Member {
        let evict = Arc::new(Notify::new());
        if let Ok(mut m) = self.conns.lock() {
            m.insert(
                id,
                Entry {
                    fd,
                    since: Instant::now(),
                    evict: evict.clone(),
                    chosen: false,
                },
            );
        }
        Member {
            id,
            reg: self.clone(),
            evict,
        }
    }

    /// The stalest connection not yet chosen: its id and staleness in
    /// ms, or `None` when this worker has none to give. Any thread may
    /// call it (the module's doc says why reading the descriptors is
    /// safe).
    pub fn stalest(&self) -> Option<(u64, u32)> {
        let m = self.conns.lock().ok()?;
        let idle = m
            .iter()
            .filter(|(_, e)| !e.chosen)
            .filter_map(|(id, e)| Some((*id, idle_ms(e.fd, e.since)?)));
        stalest(idle.collect::<Vec<_>>())
    }

    /// Tells connection `id` to close, unless it is gone or chosen
    /// already; whether it was told. Any thread may call it: it reads
    /// no descriptor.
    pub fn evict(&self, id: u64) -> bool {
        let Ok(mut m) = self.conns.lock() else {
            return false;
        };
        match m.get_mut(&id) {
            Some(e) if !e.chosen => {
                e.chosen = true;
                // A stored permit: the connection sees it at its next await.
                e.evict.notify_one();
                true
            }
            _ => false,
        }
    }
}

/// Every epoll worker's registry.
#[derive(Clone)]
pub(crate) struct Workers {
    regs: Arc<Vec<Registry>>,
}

impl Workers {
    /// For `n` workers.
    pub fn new(n: usize) -> Workers {
        Workers {
            regs: Arc::new((0..n.max(1)).map(|_| Registry::default()).collect()),
        }
    }

    /// Worker `i`'s registry.
    pub fn registry(&self, i: usize) -> &Registry {
        &self.regs[i]
    }

    /// For a newcomer at the limit: tells the stalest connection of any
    /// worker to close; its id and staleness in ms.
    pub fn evict_for(&self) -> Option<(u64, u32)> {
        // A pick another newcomer chose first is looked for again, a few
        // times.
        for _ in 0..3 {
            let found: Vec<(usize, (u64, u32))> = self
                .regs
                .iter()
                .enumerate()
                .filter_map(|(j, r)| Some((j, r.stalest()?)))
                .collect();
            let (id, ms) = stalest(found.iter().map(|(_, c)| *c))?;
            let owner = found.iter().find(|(_, c)| c.0 == id).map(|(j, _)| *j)?;
            if self.regs[owner].evict(id) {
                return Some((id, ms));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_idle_longest_is_chosen_and_ties_go_to_the_oldest() {
        assert_eq!(stalest([(1, 5), (2, 900), (3, 40)]), Some((2, 900)));
        assert_eq!(stalest([(7, 100), (3, 100)]), Some((3, 100)));
        assert_eq!(stalest([]), None);
    }

    #[test]
    fn a_member_leaves_with_its_connection_and_is_chosen_once() {
        let reg = Registry::default();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&c);
        let m = reg.join(1, fd);
        assert_eq!(reg.stalest().map(|(id, _)| id), Some(1));
        assert!(reg.evict(1));
        // Chosen already: not told twice.
        assert_eq!(reg.stalest(), None);
        assert!(!reg.evict(1));
        drop(m);
        assert!(reg.conns.lock().unwrap().is_empty());
    }

    #[test]
    fn a_newcomer_on_a_worker_without_connections_closes_another_workers_stalest() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&c);
        let w = Workers::new(3);
        let m = w.registry(2).join(9, fd);
        assert_eq!(w.evict_for().map(|(id, _)| id), Some(9));
        rt.block_on(async {
            // The chosen connection was told, and is not chosen twice.
            tokio::time::timeout(std::time::Duration::from_secs(1), m.evict.notified())
                .await
                .expect("told to close");
        });
        assert_eq!(w.evict_for(), None);
    }
}
