//! The largest burst a connection has moved: Firefox's proxy for the
//! server-side congestion window of an idle keep-alive connection ("the
//! history of moving the largest amount of data in one burst").
//!
//! Two definitions, both kept:
//! - **per activation** (Firefox's): bytes read between a request's start
//!   and the end of its response; pipelined requests with no RTT between
//!   them fall into one activation if the caller keeps it open;
//! - **gap-based**: a burst ends after the connection has been idle for
//!   longer than `gap_fraction × RTT`; this needs no request boundaries.
//!
//! Sans-IO: the caller passes `now` (ns) and byte counts.

use serde::Serialize;

/// Burst history of one connection.
#[derive(Debug, Clone, Serialize)]
pub struct BurstMeter {
    gap_fraction: f64,
    /// Largest per-activation burst, bytes.
    pub max_activation: u64,
    /// Largest gap-based burst, bytes.
    pub max_gap_burst: u64,
    /// Total bytes recorded.
    pub total: u64,
    /// Number of activations ended.
    pub activations: u64,
    current_activation: Option<u64>,
    current_gap_burst: u64,
    last_bytes_at: Option<u64>,
}

impl BurstMeter {
    /// A meter whose gap-based bursts end after `gap_fraction × RTT` idle.
    pub fn new(gap_fraction: f64) -> BurstMeter {
        BurstMeter {
            gap_fraction,
            max_activation: 0,
            max_gap_burst: 0,
            total: 0,
            activations: 0,
            current_activation: None,
            current_gap_burst: 0,
            last_bytes_at: None,
        }
    }

    /// A request starts (bytes read from now on count toward it).
    pub fn begin(&mut self) {
        if self.current_activation.is_none() {
            self.current_activation = Some(0);
        }
    }

    /// `n` bytes were read at `now`; `rtt_ns` is the current RTT estimate.
    pub fn record(&mut self, now: u64, n: u64, rtt_ns: u64) {
        self.total += n;
        if let Some(a) = self.current_activation.as_mut() {
            *a += n;
            self.max_activation = self.max_activation.max(*a);
        }
        let gap = (rtt_ns as f64 * self.gap_fraction) as u64;
        match self.last_bytes_at {
            Some(t) if now.saturating_sub(t) <= gap => self.current_gap_burst += n,
            _ => self.current_gap_burst = n,
        }
        self.max_gap_burst = self.max_gap_burst.max(self.current_gap_burst);
        self.last_bytes_at = Some(now);
    }

    /// The response ended.
    pub fn end(&mut self) {
        if self.current_activation.take().is_some() {
            self.activations += 1;
        }
    }

    /// When bytes last arrived.
    pub fn last_activity(&self) -> Option<u64> {
        self.last_bytes_at
    }
}

impl Default for BurstMeter {
    /// Bursts end after half an RTT of silence.
    fn default() -> Self {
        BurstMeter::new(0.5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn per_activation_keeps_the_largest() {
        let mut m = BurstMeter::default();
        m.begin();
        m.record(0, 1000, 100 * MS);
        m.record(MS, 500, 100 * MS);
        m.end();
        m.begin();
        m.record(500 * MS, 300, 100 * MS);
        m.end();
        assert_eq!(m.max_activation, 1500, "the largest, not the last");
        assert_eq!(m.activations, 2);
        // Bytes outside an activation do not count toward one.
        m.record(600 * MS, 10_000, 100 * MS);
        assert_eq!(m.max_activation, 1500);
        assert_eq!(m.total, 11_800);
    }

    #[test]
    fn pipelined_requests_form_one_activation() {
        let mut m = BurstMeter::default();
        m.begin();
        m.record(0, 1000, 100 * MS);
        m.begin(); // second request pipelined, no RTT between
        m.record(MS, 1000, 100 * MS);
        m.end();
        assert_eq!(m.max_activation, 2000);
    }

    #[test]
    fn gap_based_bursts_split_on_idle_longer_than_fraction_of_rtt() {
        let mut m = BurstMeter::new(0.5);
        let rtt = 100 * MS;
        // Three reads 10 ms apart: one burst.
        for i in 0..3 {
            m.record(i * 10 * MS, 1000, rtt);
        }
        assert_eq!(m.max_gap_burst, 3000);
        // 49 ms later: still the same burst (gap 0.5 RTT = 50 ms).
        m.record(20 * MS + 49 * MS, 1000, rtt);
        assert_eq!(m.max_gap_burst, 4000);
        // 51 ms of silence: a new burst starts.
        m.record(69 * MS + 51 * MS, 500, rtt);
        assert_eq!(m.max_gap_burst, 4000);
        m.record(121 * MS, 500, rtt);
        assert_eq!(m.max_gap_burst, 4000, "the new burst is only 1000");
        // A larger RTT estimate widens the gap.
        m.record(121 * MS + 80 * MS, 5000, 200 * MS);
        assert_eq!(m.max_gap_burst, 6000);
        assert_eq!(m.last_activity(), Some(201 * MS));
    }
}
