//! HTTP/2's per-stream idle limit: a stream whose request body stops
//! coming, or whose response waits on a window the client holds at zero,
//! is reset after `--idle-timeout` without progress, as HTTP/1.1 closes
//! such a connection. The connection's own watchdog (`h2::Activity`)
//! sees only that *some* stream moved, so one live stream kept any number
//! of stalled ones (each holding a file descriptor under `--root`).
//!
//! How: hyper runs each stream (its service future, then the pipe of its
//! response body) as one future handed to the connection's executor;
//! [`StreamExec`] runs it under a per-stream clock that the bodies'
//! frames advance ([`touch`]), and drops it once the clock is
//! `--idle-timeout` old. Dropping a stream's handles makes h2 send
//! `RST_STREAM` (CANCEL) and frees what the stream held.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

tokio::task_local! {
    static CLOCK: Arc<Clock>;
}

/// When a stream last moved, in ns from its start.
struct Clock {
    start: Instant,
    last: AtomicU64,
    /// Set just before a stalled stream is dropped.
    stalled: AtomicBool,
}

impl Clock {
    fn due(&self, idle: Duration) -> Instant {
        self.start + Duration::from_nanos(self.last.load(Relaxed)) + idle
    }
}

/// Marks progress of the stream being polled (a body frame read or
/// sent); nothing outside a stream's task.
pub fn touch() {
    let _ = CLOCK.try_with(|c| c.last.store(c.start.elapsed().as_nanos() as u64, Relaxed));
}

/// Whether the stream being dropped is dropped for stalling: its end is
/// then no progress of its connection's.
pub fn stalled() -> bool {
    CLOCK.try_with(|c| c.stalled.load(Relaxed)).unwrap_or(false)
}

/// hyper's executor for one connection's streams, each under the idle
/// limit.
#[derive(Clone, Copy)]
pub struct StreamExec {
    /// `--idle-timeout`.
    pub idle: Duration,
}

impl<F> hyper::rt::Executor<F> for StreamExec
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, fut: F) {
        let idle = self.idle;
        let clock = Arc::new(Clock {
            start: Instant::now(),
            last: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
        });
        // Boxed once here: moved into the task's own state, a stream's
        // future (its service's and its body's) was held twice, which
        // cost 20 MB more with 1,024 streams at a zero window.
        let mut fut = Box::pin(CLOCK.scope(clock.clone(), fut));
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = &mut fut => return,
                    () = tokio::time::sleep_until(clock.due(idle).into()) => {
                        // Progress may have moved the clock while we slept.
                        // `fut` is dropped inside its scope, so what it
                        // holds sees the flag as it goes.
                        if clock.due(idle) <= Instant::now() {
                            clock.stalled.store(true, Relaxed);
                            return;
                        }
                    }
                }
            }
        });
    }
}
