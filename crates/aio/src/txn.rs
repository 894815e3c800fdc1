//! The workload's rules, without I/O: which page each client touches next,
//! page latches, and when a transaction counts. The engines do the I/O
//! and call in here (under one mutex) when a read or write completes.
//!
//! A transaction is sysbench's `update_no_key` reduced to its I/O: read
//! one page, change a row, write the page back. Two transactions on one
//! page would race (both read version v, both write v+1: a lost update),
//! so a transaction holds the page's latch from its read until its write
//! completes, and the next one queues behind it, as a row lock would make
//! it. Under skewed keys the hot pages' latches are a real cost; it is
//! counted (`latch_waits`) so it is not mistaken for a dispatch cost.

use crate::Keys;
use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;
use std::collections::{HashMap, VecDeque};

/// An I/O a client needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    /// Read the page, or write it back.
    pub write: bool,
    /// Page number.
    pub page: u32,
    /// The client whose transaction this is.
    pub client: u32,
}

impl Io {
    /// The I/O packed into an io_uring token (its kind travels in the
    /// completion event).
    pub fn token(&self) -> u64 {
        (u64::from(self.client) << 32) | u64::from(self.page)
    }

    /// Unpacks a token.
    pub fn from_token(token: u64, write: bool) -> Io {
        Io {
            write,
            page: token as u32,
            client: (token >> 32) as u32,
        }
    }
}

/// The transaction state of every client.
pub struct Core {
    pages: u32,
    rng: ChaCha8Rng,
    zipf: Option<rand_distr::Zipf<f64>>,
    /// Latched pages, each with the clients queued behind the holder.
    latched: HashMap<u32, VecDeque<u32>>,
    started: Vec<u64>,
    /// Version of each page's last completed write in this run.
    expected: Vec<Option<u64>>,
    end_ns: u64,
    active: usize,
    /// Transactions committed before the end.
    pub txns: u64,
    /// Their latencies, ns.
    pub latency: Histogram<u64>,
    /// Transactions that found their page latched.
    pub latch_waits: u64,
}

impl Core {
    /// `clients` clients over `pages` pages; transactions start until `end_ns`.
    pub fn new(pages: u32, keys: Keys, seed: u64, end_ns: u64, clients: u32) -> Core {
        let zipf = match keys {
            Keys::Uniform => None,
            Keys::Zipf(s) => rand_distr::Zipf::new(f64::from(pages), s).ok(),
        };
        Core {
            pages,
            rng: ChaCha8Rng::seed_from_u64(seed),
            zipf,
            latched: HashMap::new(),
            started: vec![0; clients as usize],
            expected: vec![None; pages as usize],
            end_ns,
            active: 0,
            txns: 0,
            latency: Histogram::new_with_bounds(1_000, 600_000_000_000, 3).expect("bounds"),
            latch_waits: 0,
        }
    }

    fn draw(&mut self) -> u32 {
        match &self.zipf {
            // Zipf draws 1..=n, most often 1: page 0 is the hottest.
            Some(z) => (z.sample(&mut self.rng) as u32)
                .saturating_sub(1)
                .min(self.pages - 1),
            None => self.rng.random_range(0..self.pages),
        }
    }

    /// Client `client` starts a transaction at `now`: its read, unless the
    /// page is latched (then it queues and the read comes from
    /// [`Core::committed`] of the holder).
    pub fn begin(&mut self, client: u32, now: u64) -> Option<Io> {
        let page = self.draw();
        self.started[client as usize] = now;
        self.active += 1;
        match self.latched.get_mut(&page) {
            Some(q) => {
                q.push_back(client);
                self.latch_waits += 1;
                None
            }
            None => {
                self.latched.insert(page, VecDeque::new());
                Some(Io {
                    write: false,
                    page,
                    client,
                })
            }
        }
    }

    /// The write of `io` (version `version`) completed at `now`: counts the
    /// transaction, passes the latch on, and starts the client's next
    /// transaction if the run is not over. Returns up to two reads.
    pub fn committed(&mut self, io: Io, version: u64, now: u64) -> Vec<Io> {
        self.expected[io.page as usize] = Some(version);
        self.active -= 1;
        if now <= self.end_ns {
            self.txns += 1;
            let took = now.saturating_sub(self.started[io.client as usize]);
            let _ = self.latency.record(took.max(1_000));
        }
        let mut next = Vec::with_capacity(2);
        match self.latched.get_mut(&io.page).and_then(|q| q.pop_front()) {
            Some(w) => next.push(Io {
                write: false,
                page: io.page,
                client: w,
            }),
            None => {
                self.latched.remove(&io.page);
            }
        }
        if now < self.end_ns {
            next.extend(self.begin(io.client, now));
        }
        next
    }

    /// Transactions started and not yet committed.
    pub fn active(&self) -> usize {
        self.active
    }

    /// The run is over: past the end and nothing in progress.
    pub fn done(&self, now: u64) -> bool {
        now >= self.end_ns && self.active == 0
    }

    /// The version each page written in this run must have on disk.
    pub fn expected(&self) -> &[Option<u64>] {
        &self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latched_page_queues_the_second_client_and_hands_over() {
        // One page: every transaction wants page 0.
        let mut c = Core::new(1, Keys::Uniform, 1, 1_000_000, 2);
        let a = c.begin(0, 0).expect("first gets the latch");
        assert_eq!(c.begin(1, 10), None);
        assert_eq!(c.latch_waits, 1);
        let next = c.committed(Io { write: true, ..a }, 1, 100);
        // The waiter's read, then client 0's next transaction queues.
        assert_eq!(
            next,
            vec![Io {
                write: false,
                page: 0,
                client: 1
            }]
        );
        assert_eq!(c.active(), 2);
        assert_eq!(c.txns, 1);
        assert_eq!(c.expected()[0], Some(1));
    }

    #[test]
    fn nothing_starts_after_the_end_and_the_run_drains() {
        let mut c = Core::new(100, Keys::Uniform, 1, 1000, 1);
        let a = c.begin(0, 0).unwrap();
        assert!(!c.done(2000));
        let next = c.committed(Io { write: true, ..a }, 1, 2000);
        assert!(next.is_empty());
        assert!(c.done(2000));
        // Committed after the end: not counted.
        assert_eq!(c.txns, 0);
    }

    #[test]
    fn zipf_keys_favour_low_pages_and_stay_in_range() {
        let mut c = Core::new(65536, Keys::Zipf(0.99), 7, u64::MAX, 1);
        let draws: Vec<u32> = (0..20000).map(|_| c.draw()).collect();
        assert!(draws.iter().all(|&p| p < 65536));
        let hot = draws.iter().filter(|&&p| p == 0).count() as f64 / 20000.0;
        // 1 / H(65536, 0.99) is about 0.08.
        assert!((0.06..0.11).contains(&hot), "{hot}");
        let mut u = Core::new(65536, Keys::Uniform, 7, u64::MAX, 1);
        let zeros = (0..20000).filter(|_| u.draw() == 0).count();
        assert!(zeros < 10);
    }

    #[test]
    fn tokens_round_trip() {
        let io = Io {
            write: true,
            page: 65535,
            client: 1023,
        };
        assert_eq!(Io::from_token(io.token(), true), io);
    }
}
