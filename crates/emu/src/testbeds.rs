//! Many identical testbeds in one process (`emu pair --testbeds N`), their
//! packets carried by one forwarder thread per core.
//!
//! Why: on a small machine the cost of a slow emulated path is not its
//! packets but its wake-ups. A testbed of its own wakes its forwarder
//! thread for every packet due; 16 testbeds at 16 Mbit/s made 37,000
//! context switches a second on this 2-core VM, and the forwarders spent
//! a quarter of their time going to sleep and waking (`docs/emu.md`,
//! density). One thread that carries many testbeds serves every packet
//! due when it wakes, whichever testbed it belongs to, and while it
//! works the next ones come due: it sleeps less often the more testbeds
//! it carries. Each testbed keeps its own namespaces, link, statistics and
//! commands, so what runs in it cannot tell the difference.

use crate::forwarder::{Direction, Forwarder, Phase};
use crate::session::{Outcome, Process, Session, Signals, status_code};
use crate::{DirectionStats, EmuError, Testbed, TestbedConfig};
use std::time::Duration;

/// Running testbeds and the threads that carry them.
pub struct Testbeds {
    /// Each thread and, in the order its directions were given (up, down
    /// of each), the testbeds it carries. Stopped before the testbeds go.
    threads: Vec<(Forwarder, Vec<usize>)>,
    sessions: Vec<Session>,
}

/// How many threads carry `n` testbeds on a machine of `cores`: one per
/// core, never more than testbeds.
pub fn threads_for(n: usize, cores: usize) -> usize {
    n.min(cores).max(1)
}

impl Testbeds {
    /// Builds `n` testbeds of `cfg` and starts the threads that carry
    /// them (testbed k on thread k mod threads); on any failure everything
    /// made so far is removed.
    pub fn start(cfg: &TestbedConfig, n: usize, signals: Signals) -> Result<Testbeds, EmuError> {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let k = threads_for(n, cores);
        let mut groups: Vec<(Vec<Direction>, Vec<usize>)> =
            (0..k).map(|_| (Vec::new(), Vec::new())).collect();
        let mut sessions = Vec::with_capacity(n);
        for i in 0..n {
            let (tb, [up, down]) = Testbed::build(cfg)?;
            let g = &mut groups[i % k];
            g.0.extend([up, down]);
            g.1.push(i);
            sessions.push(Session::of(tb, signals.clone()));
        }
        let mut threads = Vec::with_capacity(k);
        for (dirs, beds) in groups {
            let f = Forwarder::spawn(dirs, Phase::default(), cfg.forwarder)
                .map_err(|e| EmuError::os("cannot start forwarder", e))?;
            threads.push((f, beds));
        }
        Ok(Testbeds { threads, sessions })
    }

    /// The testbeds' sessions, in order.
    pub fn sessions(&self) -> &[Session] {
        &self.sessions
    }

    /// Commands spawned from now on, in every testbed, run as `who`.
    pub fn run_as(&mut self, who: Option<crate::session::RunAs>) {
        for s in &mut self.sessions {
            s.run_as(who.clone());
        }
    }

    /// How many forwarder threads carry the testbeds.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    fn failed(&self) -> bool {
        self.threads.iter().any(|(f, _)| f.is_finished())
    }

    /// The signal that asked us to stop, if any.
    pub fn signalled(&self) -> Option<i32> {
        self.sessions.first().and_then(Session::signalled)
    }

    /// Waits for every client to end, a signal, or a forwarder to fail
    /// (then stops the clients still running). The outcome: the first
    /// nonzero exit status in testbed order, else 0; and each testbed's
    /// status (`None`: stopped by us).
    pub fn supervise(
        &self,
        clients: &mut [Process],
        servers: &mut [Option<Process>],
    ) -> (Outcome, Vec<Option<i32>>) {
        let stop_all = |clients: &mut [Process], sig: i32| {
            // Signalled together, then waited for one by one.
            for c in clients.iter_mut() {
                if c.try_wait().is_none() {
                    crate::sys::kill(-(c.id() as i32), sig);
                }
            }
            for c in clients.iter_mut() {
                if c.try_wait().is_none() {
                    c.stop(sig);
                }
            }
        };
        loop {
            let codes: Vec<Option<i32>> = clients
                .iter_mut()
                .map(|c| c.try_wait().map(status_code))
                .collect();
            if codes.iter().all(Option::is_some) {
                for c in clients.iter() {
                    // The groups may still hold children of CMD.
                    crate::sys::kill(-(c.id() as i32), libc::SIGTERM);
                }
                let first = codes.iter().flatten().find(|&&c| c != 0).copied();
                return (Outcome::Exited(first.unwrap_or(0)), codes);
            }
            if let Some(s) = self.signalled() {
                stop_all(clients, s);
                return (Outcome::Signalled(s), codes);
            }
            if self.failed() {
                stop_all(clients, libc::SIGTERM);
                return (Outcome::ForwarderDied, codes);
            }
            for (k, slot) in servers.iter_mut().enumerate() {
                if let Some(st) = slot.as_mut().and_then(Process::try_wait) {
                    eprintln!(
                        "tcpwise: warning: testbed {k}: the server command exited ({st}) while the client runs"
                    );
                    *slot = None;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the threads, tears every testbed down and returns each one's
    /// statistics (up, down), in order; the first teardown error, after
    /// trying them all.
    pub fn finish(self) -> Result<Vec<[DirectionStats; 2]>, EmuError> {
        let mut slots: Vec<[Option<DirectionStats>; 2]> =
            (0..self.sessions.len()).map(|_| [None, None]).collect();
        for (f, beds) in self.threads {
            for (j, st) in f.stop().into_iter().enumerate() {
                if let Some(&b) = beds.get(j / 2) {
                    slots[b][j % 2] = Some(st);
                }
            }
        }
        let mut out = Vec::with_capacity(slots.len());
        let mut first_err = None;
        for (s, [up, down]) in self.sessions.into_iter().zip(slots) {
            match s.finish_with(up.unwrap_or_default(), down.unwrap_or_default()) {
                Ok(st) => out.push(st),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(out), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::threads_for;

    #[test]
    fn a_thread_per_core_never_more_than_testbeds() {
        assert_eq!(threads_for(32, 2), 2);
        assert_eq!(threads_for(1, 2), 1);
        assert_eq!(threads_for(3, 8), 3);
        assert_eq!(threads_for(0, 2), 1);
    }
}
