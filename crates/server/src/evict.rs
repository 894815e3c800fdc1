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
//! The epoll engine keeps one registry a worker (its accept loop and its
//! connections share one thread), and only that thread reads its
//! descriptors, so a descriptor read here is never one that another
//! thread closed and reused: a connection leaves the registry in the
//! same poll that closes its socket. A newcomer whose worker holds no
//! stale connection still gets one: [`Workers`] asks every other worker,
//! on its own thread, for its stalest, and the stalest of all is told to
//! close (by id, not by descriptor). Without that, `SO_REUSEPORT` hashed
//! a newcomer to a worker without attackers and it waited a header
//! timeout (CI, 3 Dec: 2,966 ms). The io_uring engine picks among its
//! ring's connections alone ([`stalest`]): its rings take plain HTTP/1.1
//! only, whose header timeout closes a stalled connection anyway.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc, oneshot};

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
    /// ms, or `None` when this worker has none to give. Only the worker's
    /// own thread calls it (it reads the descriptors).
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

/// A question from another worker's newcomer: the stalest connection
/// here, answered on this worker's thread.
type Ask = oneshot::Sender<Option<(u64, u32)>>;

/// How long a newcomer waits for a busy worker's answer before it goes
/// without it (a worker answers between its connections' polls), when
/// its own worker has a connection to give.
const ASK_WAIT: Duration = Duration::from_millis(20);

/// The same when its own worker has none: going without an answer then
/// costs a slot freed by a timeout (3 s in the hostile test). With 20 ms
/// a CI run (debug build, 3 Dec) found the worker holding the zero-window
/// attackers busy setting up their file streams past every ask, and a
/// HEAD waited 3,259 ms.
const ASK_WAIT_ALONE: Duration = Duration::from_millis(500);

/// Every epoll worker's registry and a line to each worker's thread.
#[derive(Clone)]
pub(crate) struct Workers {
    regs: Arc<Vec<Registry>>,
    asks: Arc<Vec<mpsc::UnboundedSender<Ask>>>,
    inboxes: Arc<Vec<Mutex<Option<mpsc::UnboundedReceiver<Ask>>>>>,
}

impl Workers {
    /// For `n` workers.
    pub fn new(n: usize) -> Workers {
        let (asks, inboxes) = (0..n.max(1))
            .map(|_| {
                let (tx, rx) = mpsc::unbounded_channel();
                (tx, Mutex::new(Some(rx)))
            })
            .unzip();
        Workers {
            regs: Arc::new((0..n.max(1)).map(|_| Registry::default()).collect()),
            asks: Arc::new(asks),
            inboxes: Arc::new(inboxes),
        }
    }

    /// Worker `i`'s registry.
    pub fn registry(&self, i: usize) -> &Registry {
        &self.regs[i]
    }

    /// Answers the other workers' newcomers from worker `i`'s thread
    /// until the server drops its lines (spawn it on that thread).
    pub fn answer(&self, i: usize) -> impl std::future::Future<Output = ()> + 'static {
        let reg = self.regs[i].clone();
        let inbox = self.inboxes[i].lock().ok().and_then(|mut r| r.take());
        async move {
            let Some(mut inbox) = inbox else { return };
            while let Some(ask) = inbox.recv().await {
                let _ = ask.send(reg.stalest());
            }
        }
    }

    /// For a newcomer on worker `me` at the limit: tells the stalest
    /// connection of any worker to close; its id and staleness in ms.
    pub async fn evict_for(&self, me: usize) -> Option<(u64, u32)> {
        // A pick another newcomer chose first is asked again, a few times.
        for _ in 0..3 {
            let mut waits = Vec::new();
            for (j, tx) in self.asks.iter().enumerate().filter(|(j, _)| *j != me) {
                let (ask, answer) = oneshot::channel();
                if tx.send(ask).is_ok() {
                    waits.push((j, answer));
                }
            }
            let mut found: Vec<(usize, (u64, u32))> = self.regs[me]
                .stalest()
                .map(|c| (me, c))
                .into_iter()
                .collect();
            let wait = if found.is_empty() {
                ASK_WAIT_ALONE
            } else {
                ASK_WAIT
            };
            for (j, answer) in waits {
                if let Ok(Ok(Some(c))) = tokio::time::timeout(wait, answer).await {
                    found.push((j, c));
                }
            }
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
        rt.block_on(async {
            for i in 0..3 {
                tokio::spawn(w.answer(i));
            }
            assert_eq!(w.evict_for(0).await.map(|(id, _)| id), Some(9));
            // The chosen connection was told, and is not chosen twice.
            tokio::time::timeout(Duration::from_secs(1), m.evict.notified())
                .await
                .expect("told to close");
            assert_eq!(w.evict_for(1).await, None);
        });
    }
}
