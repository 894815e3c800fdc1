//! Running parts of the lab at once, so that one failing part stops the
//! others at once and is what the run reports.
//!
//! Why one function: the lab runs things beside each other at three
//! levels (experiments in [`crate::Plan::run`], the paths of
//! read-slow-start and head-of-line, idle-selection's testbeds), and each
//! had grown its own copy of the same three rules, one of them
//! incompletely: head-of-line's paths ran on after one failed, so its
//! error arrived only when the slowest path ended, minutes later.
//!
//! The rules: every part gets the caller's [`LabOptions`] with a cancel
//! flag of its own; the caller's flag (the user's Ctrl-C) is relayed into
//! it; the first part to fail raises it, so the others stop at their
//! next check (between trials, and while waiting for a testbed slot).
//! Parts stopped that way answer [`LabError::Interrupted`], which is not
//! the run's answer: the first real failure is. Only the user's signal
//! makes the whole answer "interrupted". A panicking part is a failure
//! like any other.

use crate::{LabError, LabOptions};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One part: what it does with the options it is given.
pub type Part<'a, T> = Box<dyn FnOnce(&LabOptions) -> Result<T, LabError> + Send + 'a>;

/// How often the caller's cancel flag is looked at.
const RELAY_EVERY: Duration = Duration::from_millis(50);

/// Runs `parts` at once, each on its own thread; their results in the
/// parts' order, or the first failure that is not a sibling's
/// interruption (see the module's rules). `what` names the thread that
/// panicked in the error.
pub fn at_once<'a, T: Send>(
    opts: &LabOptions,
    what: &'static str,
    parts: Vec<Part<'a, T>>,
) -> Result<Vec<T>, LabError> {
    let inner = LabOptions {
        cancel: Arc::new(AtomicBool::new(false)),
        ..opts.clone()
    };
    let first: Mutex<Option<LabError>> = Mutex::new(None);
    let fail = |e: LabError| {
        inner.cancel.store(true, Ordering::Relaxed);
        let mut f = first.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() || matches!(*f, Some(LabError::Interrupted)) {
            *f = Some(e);
        }
    };
    let running = AtomicBool::new(true);
    let done: Vec<Option<T>> = std::thread::scope(|s| {
        s.spawn(|| {
            while running.load(Ordering::Relaxed) {
                if opts.cancel.load(Ordering::Relaxed) {
                    inner.cancel.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(RELAY_EVERY);
            }
        });
        let hs: Vec<_> = parts
            .into_iter()
            .map(|part| {
                let (inner, fail) = (&inner, &fail);
                s.spawn(move || {
                    // Caught here, not at the join: the join waits for
                    // the parts before it, and the others must stop now.
                    std::panic::catch_unwind(AssertUnwindSafe(|| part(inner)))
                        .unwrap_or_else(|_| Err(panicked(what)))
                        .map_err(fail)
                        .ok()
                })
            })
            .collect();
        let done = hs
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    fail(panicked(what));
                    None
                })
            })
            .collect();
        running.store(false, Ordering::Relaxed);
        done
    });
    if let Some(e) = first.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(done.into_iter().flatten().collect())
}

fn panicked(what: &'static str) -> LabError {
    LabError::Server {
        what,
        source: std::io::Error::other("a thread of it panicked"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A part that works `ms` milliseconds in steps, checking its options
    /// between steps as the lab's trials do.
    fn work<'a>(ms: u64, out: u32) -> Part<'a, u32> {
        Box::new(move |o: &LabOptions| {
            for _ in 0..ms / 10 {
                o.check()?;
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(out)
        })
    }

    fn failing<'a>(after_ms: u64) -> Part<'a, u32> {
        Box::new(move |_: &LabOptions| {
            std::thread::sleep(Duration::from_millis(after_ms));
            Err(LabError::TooFew("this part failed".into()))
        })
    }

    #[test]
    fn results_come_back_in_the_parts_order() {
        let opts = LabOptions::for_tests(true, None);
        let got = at_once(&opts, "t", vec![work(60, 1), work(10, 2), work(30, 3)]).unwrap();
        assert_eq!(got, vec![1, 2, 3]);
    }

    #[test]
    fn a_failure_stops_the_others_at_once_and_is_the_answer() {
        let opts = LabOptions::for_tests(true, None);
        let t = Instant::now();
        let r = at_once(
            &opts,
            "t",
            vec![work(5_000, 1), failing(50), work(5_000, 3)],
        );
        // The siblings stopped at their next check, not after 5 s.
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        match r {
            Err(LabError::TooFew(m)) => assert_eq!(m, "this part failed"),
            other => panic!(
                "wanted the failure, got {:?}",
                other.map_err(|e| e.to_string())
            ),
        }
        // The caller's own flag is untouched: a failure is not a signal.
        assert!(opts.check().is_ok());
    }

    #[test]
    fn the_callers_signal_stops_every_part_as_an_interruption() {
        let opts = LabOptions::for_tests(true, None);
        let flag = opts.cancel.clone();
        let t = Instant::now();
        let r = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                flag.store(true, Ordering::Relaxed);
            });
            at_once(&opts, "t", vec![work(5_000, 1), work(5_000, 2)])
        });
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(matches!(r, Err(LabError::Interrupted)));
    }

    #[test]
    fn a_panicking_part_is_a_failure_that_stops_the_others() {
        let opts = LabOptions::for_tests(true, None);
        let boom: Part<'_, u32> = Box::new(|_: &LabOptions| panic!("boom"));
        let t = Instant::now();
        let r = at_once(&opts, "a test", vec![work(5_000, 1), boom]);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        match r {
            Err(LabError::Server { what, .. }) => assert_eq!(what, "a test"),
            other => panic!(
                "wanted a failure, got {:?}",
                other.map_err(|e| e.to_string())
            ),
        }
    }
}
