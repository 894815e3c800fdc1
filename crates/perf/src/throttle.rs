//! `-b` for TCP as iperf3 means it: the sender holds its writes to an
//! average rate since the test began, and the kernel sends what it was
//! given as fast as the path allows.
//!
//! Why not the kernel's pacing (`SO_MAX_PACING_RATE`), which `-b` was
//! before: iperf3's sender counts the bytes it wrote, and with its own
//! throttle those are the bytes sent, so its sender and receiver lines
//! agree. Paced by the kernel, the writes run ahead into the send buffer:
//! on a 20 Mbit/s `-b` our sender's line read 33 Mbit/s while 20 arrived
//! (issue 73). iperf3's own kernel pacing is `--fq-rate`, and so is ours.
//!
//! iperf3 checks its throttle on a timer (`--pacing-timer`, 1 ms) and
//! writes a whole block when the average is below the rate; waiting
//! exactly until the bytes written so far are due is the same average,
//! without the timer's rounding.

use std::time::{Duration, Instant};

/// The writes of one stream, held to `bps` on average since `start`.
#[derive(Debug, Clone, Copy)]
pub struct Throttle {
    bps: u64,
    start: Instant,
}

impl Throttle {
    /// A throttle at `bps` bits/s from `start` (`None` for 0: no limit).
    pub fn new(bps: u64, start: Instant) -> Option<Throttle> {
        (bps > 0).then_some(Throttle { bps, start })
    }

    /// How long to wait at `now`, with `sent` bytes written, before the
    /// next write: zero once the average is at or below the rate.
    pub fn wait(&self, sent: u64, now: Instant) -> Duration {
        let due = Duration::from_secs_f64(sent as f64 * 8.0 / self.bps as f64);
        due.saturating_sub(now.saturating_duration_since(self.start))
    }
}

/// Sleeps as `throttle` says (nothing without one), at most `cap`.
pub async fn hold(throttle: Option<Throttle>, sent: u64, cap: Option<Duration>) {
    let Some(t) = throttle else { return };
    let mut w = t.wait(sent, Instant::now());
    if let Some(c) = cap {
        w = w.min(c);
    }
    if !w.is_zero() {
        tokio::time::sleep(w).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_wait_until_their_bytes_are_due() {
        let t0 = Instant::now();
        let t = Throttle::new(8_000_000, t0).unwrap(); // 1 MB/s
        // 1 MB written at once: due at 1 s.
        assert_eq!(t.wait(1_000_000, t0), Duration::from_secs(1));
        assert_eq!(
            t.wait(1_000_000, t0 + Duration::from_millis(400)),
            Duration::from_millis(600)
        );
        // Behind the rate: no wait.
        assert_eq!(
            t.wait(1_000_000, t0 + Duration::from_secs(2)),
            Duration::ZERO
        );
        assert_eq!(t.wait(0, t0), Duration::ZERO);
        assert!(Throttle::new(0, t0).is_none());
    }
}
