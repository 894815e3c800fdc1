//! `--meter`: a live line a second on stderr with what each direction
//! delivered, how much it holds queued and what it dropped: Mahimahi's
//! `--meter-uplink`/`--meter-downlink` (X11 windows there) as text, for a
//! terminal or a log. The forwarders publish their counters into a
//! [`Gauge`] (relaxed stores, at most every 10 ms); the line is built by
//! [`line`] from two readings, without I/O; [`Printer`] is the thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tcpwise_link::LinkStats;

/// A direction's live counters, written by its forwarder.
#[derive(Debug, Default)]
pub struct Gauge {
    delivered_bytes: AtomicU64,
    dropped: AtomicU64,
    queued_bytes: AtomicU64,
}

/// One reading of a [`Gauge`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// Bytes delivered so far.
    pub delivered_bytes: u64,
    /// Packets dropped so far, for any cause.
    pub dropped: u64,
    /// Bytes queued now.
    pub queued_bytes: u64,
}

impl Gauge {
    /// Publishes the link's counters and what it holds now.
    pub fn publish(&self, stats: &LinkStats, queued_bytes: u64) {
        let dropped = stats.dropped_queue
            + stats.dropped_loss
            + stats.dropped_outage
            + stats.dropped_aqm
            + stats.dropped_onoff
            + stats.dropped_police;
        self.delivered_bytes
            .store(stats.delivered_bytes, Ordering::Relaxed);
        self.dropped.store(dropped, Ordering::Relaxed);
        self.queued_bytes.store(queued_bytes, Ordering::Relaxed);
    }

    /// What it says now.
    pub fn read(&self) -> Reading {
        Reading {
            delivered_bytes: self.delivered_bytes.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            queued_bytes: self.queued_bytes.load(Ordering::Relaxed),
        }
    }
}

/// Which directions a meter shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// The uplink (client to server).
    pub up: bool,
    /// The downlink.
    pub down: bool,
}

/// The line for the second that ended at `at_s`: each shown direction's
/// rate over `secs`, its queue now and its drops in that time.
pub fn line(
    at_s: f64,
    secs: f64,
    shown: Shown,
    up: (Reading, Reading),
    down: (Reading, Reading),
) -> String {
    let one = |name: &str, (a, b): (Reading, Reading)| {
        let mbit =
            b.delivered_bytes.saturating_sub(a.delivered_bytes) as f64 * 8.0 / secs.max(1e-9) / 1e6;
        format!(
            "{name} {mbit:7.2} Mbit/s queue {:7.1} KB drops {}",
            b.queued_bytes as f64 / 1e3,
            b.dropped.saturating_sub(a.dropped)
        )
    };
    let mut parts = Vec::new();
    if shown.up {
        parts.push(one("up", up));
    }
    if shown.down {
        parts.push(one("down", down));
    }
    format!("tcpwise emu meter [{at_s:6.1} s] {}", parts.join(" | "))
}

/// The thread that prints a line a second until dropped.
pub struct Printer {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Printer {
    /// Starts printing the gauges of `up` and `down` to stderr.
    pub fn start(shown: Shown, up: Arc<Gauge>, down: Arc<Gauge>) -> std::io::Result<Printer> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("tw-meter".into())
            .spawn(move || {
                let t0 = Instant::now();
                let (mut last, mut a, mut b) = (t0, up.read(), down.read());
                let mut next = t0 + Duration::from_secs(1);
                while !flag.load(Ordering::Relaxed) {
                    let now = Instant::now();
                    if now < next {
                        std::thread::sleep((next - now).min(Duration::from_millis(50)));
                        continue;
                    }
                    let (a2, b2) = (up.read(), down.read());
                    let secs = now.duration_since(last).as_secs_f64();
                    let at = now.duration_since(t0).as_secs_f64();
                    eprintln!("{}", line(at, secs, shown, (a, a2), (b, b2)));
                    (last, a, b) = (now, a2, b2);
                    next += Duration::from_secs(1);
                }
            })?;
        Ok(Printer {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Printer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_each_shown_directions_rate_queue_and_drops() {
        let r = |d, x, q| Reading {
            delivered_bytes: d,
            dropped: x,
            queued_bytes: q,
        };
        let both = Shown {
            up: true,
            down: true,
        };
        let l = line(
            2.0,
            1.0,
            both,
            (r(0, 0, 0), r(1_250_000, 3, 1500)),
            (r(100, 1, 0), r(100, 1, 0)),
        );
        assert_eq!(
            l,
            "tcpwise emu meter [   2.0 s] up   10.00 Mbit/s queue     1.5 KB drops 3 | down    0.00 Mbit/s queue     0.0 KB drops 0"
        );
        let down = Shown {
            up: false,
            down: true,
        };
        assert!(!line(1.0, 1.0, down, Default::default(), Default::default()).contains("up "));
    }
}
