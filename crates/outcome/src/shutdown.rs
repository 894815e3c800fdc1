//! The one way to tell a server (or any long loop) to stop.
//!
//! A [`Shutdown`] is a cloneable flag: whoever holds a clone can
//! [`trigger`](Shutdown::trigger) it, and every holder sees it, whether
//! it polls ([`is_triggered`](Shutdown::is_triggered), for threads and
//! epoll loops), blocks ([`wait_timeout`](Shutdown::wait_timeout)) or
//! awaits ([`wait`](Shutdown::wait), for async servers on any runtime:
//! no tokio here). Triggering is idempotent and cannot be undone.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The tasks awaiting a trigger, by the key of their [`Wait`].
#[derive(Default)]
struct Wakers {
    next: u64,
    by_key: HashMap<u64, Waker>,
}

#[derive(Default)]
struct Inner {
    set: AtomicBool,
    wakers: Mutex<Wakers>,
    blocked: Condvar,
}

/// A stop signal shared by clones (see the module docs).
#[derive(Clone, Default)]
pub struct Shutdown {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shutdown")
            .field("triggered", &self.is_triggered())
            .finish()
    }
}

impl Shutdown {
    /// A signal not yet triggered.
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Tells every holder to stop.
    pub fn trigger(&self) {
        self.inner.set.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut self.wakers().by_key);
        for w in wakers.into_values() {
            w.wake();
        }
        self.inner.blocked.notify_all();
    }

    /// Whether [`trigger`](Shutdown::trigger) was called.
    pub fn is_triggered(&self) -> bool {
        self.inner.set.load(Ordering::SeqCst)
    }

    /// Blocks up to `d`; true if triggered.
    pub fn wait_timeout(&self, d: Duration) -> bool {
        let guard = self.wakers();
        if self.is_triggered() {
            return true;
        }
        let _ = self
            .inner
            .blocked
            .wait_timeout_while(guard, d, |_| !self.is_triggered());
        self.is_triggered()
    }

    /// Resolves once triggered.
    pub fn wait(&self) -> Wait {
        Wait {
            shutdown: self.clone(),
            key: None,
            registered: None,
        }
    }

    fn wakers(&self) -> std::sync::MutexGuard<'_, Wakers> {
        match self.inner.wakers.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

/// The future of [`Shutdown::wait`]. Its waker is registered under a key
/// of its own and removed when it is dropped: a server awaits one per
/// connection, and wakers left behind by connections that ended kept each
/// one's task alive (7 KB a connection) and made every poll scan them all
/// (`serve`'s largest user-space cost at 1,024 connections, docs/bench.md).
pub struct Wait {
    shutdown: Shutdown,
    key: Option<u64>,
    /// The waker it registered: polled again by the same task (a
    /// connection's every request), it takes no lock.
    registered: Option<Waker>,
}

impl Future for Wait {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.shutdown.is_triggered() {
            return Poll::Ready(());
        }
        // Still registered (a trigger takes every waker, and then the
        // flag above is set), and by this task.
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return Poll::Pending;
        }
        let shutdown = self.shutdown.clone();
        let mut w = shutdown.wakers();
        // Checked again under the lock: a trigger in between has taken
        // the wakers already.
        if shutdown.is_triggered() {
            return Poll::Ready(());
        }
        let key = match self.key {
            Some(k) => k,
            None => {
                w.next += 1;
                let k = w.next;
                self.key = Some(k);
                k
            }
        };
        w.by_key.insert(key, cx.waker().clone());
        drop(w);
        self.registered = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        if let Some(k) = self.key {
            self.shutdown.wakers().by_key.remove(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn every_clone_sees_a_trigger_polled_blocked_or_awaited() {
        let s = Shutdown::new();
        let c = s.clone();
        assert!(!c.is_triggered());
        assert!(!c.wait_timeout(Duration::from_millis(1)));
        let woke = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(woke.clone());
        let mut cx = Context::from_waker(&waker);
        let mut fut = Box::pin(c.wait());
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        let t = {
            let c = c.clone();
            std::thread::spawn(move || c.wait_timeout(Duration::from_secs(10)))
        };
        s.trigger();
        assert!(t.join().expect("thread"), "a blocked waiter is woken");
        assert!(woke.0.load(Ordering::SeqCst), "an awaiting task is woken");
        assert!(fut.as_mut().poll(&mut cx).is_ready());
        assert!(c.is_triggered());
        s.trigger(); // idempotent
        assert!(c.wait_timeout(Duration::ZERO));
    }

    #[test]
    fn a_dropped_wait_leaves_no_waker_behind() {
        let s = Shutdown::new();
        let woke = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(woke.clone());
        let mut cx = Context::from_waker(&waker);
        for _ in 0..1000 {
            let mut fut = Box::pin(s.wait());
            assert!(fut.as_mut().poll(&mut cx).is_pending());
            assert!(fut.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(s.wakers().by_key.len(), 0);
        // One that lives is still woken.
        let mut fut = Box::pin(s.wait());
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        assert_eq!(s.wakers().by_key.len(), 1);
        s.trigger();
        assert!(woke.0.load(Ordering::SeqCst));
        assert!(fut.as_mut().poll(&mut cx).is_ready());
    }
}
