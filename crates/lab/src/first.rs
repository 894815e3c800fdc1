//! Field reports first: in the phase whose experiments share the machine,
//! the others ask for testbed slots only once every field report of the
//! phase has the testbeds its decision runs on, or has ended.
//!
//! Why: the slots go to whoever asks first, and the experiments of that
//! phase start on threads at the same instant. In the default run of
//! 4 Dec (docs/lab.md) idle-selection and head-of-line took all 8 slots
//! before read-slow-start asked; it waited 55 s for its 4 testbeds, had
//! 46 s of the phase's 101 s left for rounds of 11 s, and ended
//! *undecided at budget* after 4. The phase's share is the largest of its
//! members' costs ([`crate::budget::phases`]), which holds only when they
//! run side by side; a field report is what the run is for, so it is the
//! one that must not wait. The others still run beside it on the slots
//! left, and take the rest as the field reports' testbeds end.

use crate::LabError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Open once every [`Key`] made from it has been turned.
#[derive(Debug)]
pub struct Gate {
    left: Mutex<usize>,
    opened: Condvar,
}

/// One field report's part of a [`Gate`]: turned when its decision's
/// testbeds are up, or when it is dropped (the experiment ended, failed
/// or was stopped before it got them).
#[derive(Debug)]
pub struct Key {
    gate: Arc<Gate>,
    turned: AtomicBool,
}

impl Gate {
    /// A gate that `keys` keys open.
    pub fn new(keys: usize) -> Arc<Gate> {
        Arc::new(Gate {
            left: Mutex::new(keys),
            opened: Condvar::new(),
        })
    }

    /// One of its keys.
    pub fn key(self: &Arc<Gate>) -> Key {
        Key {
            gate: self.clone(),
            turned: AtomicBool::new(false),
        }
    }

    /// Waits until it is open; [`LabError::Interrupted`] when `cancel`
    /// is set first.
    pub fn wait(&self, cancel: &AtomicBool) -> Result<(), LabError> {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        while *left > 0 {
            if cancel.load(Ordering::Relaxed) {
                return Err(LabError::Interrupted);
            }
            // A timeout, so a cancel is seen without anyone notifying.
            left = self
                .opened
                .wait_timeout(left, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        Ok(())
    }
}

impl Key {
    /// Its part of the gate opens; the second turn does nothing.
    pub fn turn(&self) {
        if self.turned.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut left = self.gate.left.lock().unwrap_or_else(|p| p.into_inner());
        *left = left.saturating_sub(1);
        self.gate.opened.notify_all();
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        self.turn();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_gate_opens_when_every_key_is_turned_or_dropped() {
        let gate = Gate::new(2);
        let (a, b) = (gate.key(), gate.key());
        let cancel = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| gate.wait(&cancel).is_ok());
            a.turn();
            a.turn(); // twice is once
            std::thread::sleep(Duration::from_millis(150));
            assert!(!waiter.is_finished(), "one key of two");
            drop(b);
            assert!(waiter.join().unwrap());
        });
        // Open stays open.
        assert!(gate.wait(&cancel).is_ok());
    }

    #[test]
    fn a_cancel_ends_the_wait() {
        let gate = Gate::new(1);
        let _key = gate.key();
        let cancel = AtomicBool::new(true);
        let t = Instant::now();
        assert!(matches!(gate.wait(&cancel), Err(LabError::Interrupted)));
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
