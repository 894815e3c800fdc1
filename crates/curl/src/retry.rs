//! `--retry`: curl's rules for what to try again and when, sans-IO.
//!
//! curl retries a *transient* failure only: a timeout (its exit 28), or an
//! HTTP answer of 408, 429, 500, 502, 503 or 504. A refused connection
//! counts with `--retry-connrefused`, anything with `--retry-all-errors`.
//! It waits one second, then doubles the wait each time up to ten minutes,
//! unless `--retry-delay` fixes it or the server's `Retry-After` (seconds)
//! asks for longer; `--retry-max-time` bounds the whole. We add one rule
//! curl leaves to the user: only idempotent requests are retried (a POST
//! may have taken effect), so `--retry` never sends a body twice.

use std::time::Duration;

/// The `--retry` flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryPolicy {
    /// `--retry N`: at most this many retries.
    pub max: u32,
    /// `--retry-delay`: a fixed wait instead of the doubling one.
    pub delay: Option<Duration>,
    /// `--retry-max-time`: no retry starts after this long.
    pub max_time: Option<Duration>,
    /// `--retry-connrefused`.
    pub connrefused: bool,
    /// `--retry-all-errors`.
    pub all_errors: bool,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An HTTP answer, with its `Retry-After` in seconds if any.
    Status(u16, Option<u64>),
    /// A failure with curl's exit code; `refused` for ECONNREFUSED.
    Error {
        /// curl's exit code for it.
        code: i32,
        /// The connection was refused.
        refused: bool,
    },
}

impl Outcome {
    /// curl's word for it in the retry warning.
    pub fn describe(&self) -> &'static str {
        match self {
            Outcome::Status(..) => "HTTP error",
            Outcome::Error { code: 28, .. } => "timeout",
            Outcome::Error { .. } => "connection problem",
        }
    }
}

/// The longest wait between attempts (curl's).
pub const MAX_BACKOFF: Duration = Duration::from_secs(600);

impl RetryPolicy {
    /// Whether the attempt's outcome is worth another (before counting).
    pub fn transient(&self, o: Outcome) -> bool {
        match o {
            Outcome::Status(s, _) => matches!(s, 408 | 429 | 500 | 502 | 503 | 504),
            Outcome::Error { code: 28, .. } => true,
            Outcome::Error { refused: true, .. } => self.connrefused || self.all_errors,
            Outcome::Error { code, .. } => self.all_errors && code != 0,
        }
    }

    /// The wait before retry number `done + 1`, or `None` to stop:
    /// `elapsed` since the first attempt started.
    pub fn next(
        &self,
        done: u32,
        elapsed: Duration,
        idempotent: bool,
        o: Outcome,
    ) -> Option<Duration> {
        if done >= self.max || !idempotent || !self.transient(o) {
            return None;
        }
        let backoff = Duration::from_secs(1u64 << done.min(9)).min(MAX_BACKOFF);
        let mut wait = self.delay.unwrap_or(backoff);
        if let Outcome::Status(_, Some(after)) = o {
            wait = wait.max(Duration::from_secs(after));
        }
        match self.max_time {
            Some(max) if elapsed + wait > max => None,
            _ => Some(wait),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn transient_failures_only_with_doubling_waits() {
        let p = RetryPolicy {
            max: 5,
            ..RetryPolicy::default()
        };
        let timeout = Outcome::Error {
            code: 28,
            refused: false,
        };
        let waits: Vec<_> = (0..6).map(|d| p.next(d, S(0), true, timeout)).collect();
        assert_eq!(
            waits,
            vec![
                Some(S(1)),
                Some(S(2)),
                Some(S(4)),
                Some(S(8)),
                Some(S(16)),
                None
            ]
        );
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(
                p.next(0, S(0), true, Outcome::Status(s, None)).is_some(),
                "{s}"
            );
        }
        for s in [200, 404, 501, 505] {
            assert!(
                p.next(0, S(0), true, Outcome::Status(s, None)).is_none(),
                "{s}"
            );
        }
        let refused = Outcome::Error {
            code: 7,
            refused: true,
        };
        assert_eq!(p.next(0, S(0), true, refused), None);
        let cr = RetryPolicy {
            connrefused: true,
            ..p
        };
        assert_eq!(cr.next(0, S(0), true, refused), Some(S(1)));
        // Not for a POST, whatever the failure.
        assert_eq!(p.next(0, S(0), false, timeout), None);
        // Retry-After raises the wait; --retry-delay fixes it; the budget stops it.
        assert_eq!(
            p.next(0, S(0), true, Outcome::Status(503, Some(3))),
            Some(S(3))
        );
        let fixed = RetryPolicy {
            delay: Some(S(2)),
            max_time: Some(S(5)),
            ..p
        };
        assert_eq!(fixed.next(3, S(2), true, timeout), Some(S(2)));
        assert_eq!(fixed.next(3, S(4), true, timeout), None);
        let all = RetryPolicy {
            all_errors: true,
            ..p
        };
        let dns = Outcome::Error {
            code: 6,
            refused: false,
        };
        assert!(p.next(0, S(0), true, dns).is_none() && all.next(0, S(0), true, dns).is_some());
        assert_eq!(p.next(20, S(0), true, timeout), None);
        let long = RetryPolicy { max: 30, ..p };
        assert_eq!(
            long.next(12, S(0), true, timeout),
            Some(MAX_BACKOFF.min(S(512)))
        );
    }
}
