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
//! The io_uring engine picks among its ring's connections the same way
//! ([`stalest`]); the epoll engine keeps one registry a worker (its
//! accept loop and its connections share one thread), so a descriptor read here is never one that another thread
//! closed and reused: a connection leaves the registry in the same poll
//! that closes its socket.

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

    /// Tells the stalest connection not yet chosen to close; its id and
    /// staleness in ms, or `None` when this worker has none to give.
    pub fn evict_stalest(&self) -> Option<(u64, u32)> {
        let mut m = self.conns.lock().ok()?;
        let idle = m
            .iter()
            .filter(|(_, e)| !e.chosen)
            .filter_map(|(id, e)| Some((*id, idle_ms(e.fd, e.since)?)));
        let (id, ms) = stalest(idle.collect::<Vec<_>>())?;
        let e = m.get_mut(&id)?;
        e.chosen = true;
        // A stored permit: the connection sees it at its next await.
        e.evict.notify_one();
        Some((id, ms))
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
        assert_eq!(reg.evict_stalest().map(|(id, _)| id), Some(1));
        // Chosen already: not told twice.
        assert_eq!(reg.evict_stalest(), None);
        drop(m);
        assert!(reg.conns.lock().unwrap().is_empty());
    }
}
