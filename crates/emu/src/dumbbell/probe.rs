//! Each host's idle round trip through the topology, as `emu selftest`
//! times a pair's: 100-byte TCP messages echoed by the host's receiver,
//! back to back, at real-time priority on both ends so the figure is the
//! emulator's and not the scheduler's; hosts one at a time, so every
//! queue is empty.

use super::Dumbbell;
use crate::EmuError;
use crate::selftest::round_trip;
use crate::selftest::server::echo;
use crate::topology::Side;
use serde::Serialize;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// One host's idle round trips.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IdleRtt {
    /// The host.
    pub host: String,
    /// The round trip its links add up to, ms.
    pub setting_ms: f64,
    /// Round trips timed.
    pub samples: usize,
    /// Median, ms.
    pub median_ms: f64,
    /// 99th percentile (nearest rank), ms.
    pub p99_ms: f64,
}

impl IdleRtt {
    /// One line for a terminal.
    pub fn text(&self) -> String {
        format!(
            "host {}: idle RTT median {:.3} ms, p99 {:.3} ms over {} round trips (its links add up to {:.3} ms: {:+.3} ms)",
            self.host,
            self.median_ms,
            self.p99_ms,
            self.samples,
            self.setting_ms,
            self.median_ms - self.setting_ms
        )
    }
}

/// `n` round trips from this thread's namespace to `to`, after three
/// that warm the route caches and the first segments.
fn client(to: SocketAddr, n: usize) -> Result<Vec<f64>, EmuError> {
    let mut s = TcpStream::connect_timeout(&to, Duration::from_secs(10))?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    crate::sys::set_realtime(5);
    for _ in 0..3 {
        round_trip(&mut s)?;
    }
    (0..n).map(|_| round_trip(&mut s)).collect()
}

/// Times `n` idle round trips from every host, one host after another.
pub fn idle_rtts(d: &Dumbbell, n: usize) -> Result<Vec<IdleRtt>, EmuError> {
    let t = d.topology();
    let mut out = Vec::new();
    for (i, h) in t.hosts.iter().enumerate() {
        let r = &t.receivers[h.peer];
        let listener = d
            .netns(Side::Receiver, h.peer)
            .run(|| TcpListener::bind((r.v4, 0)))?
            .map_err(|e| EmuError::os("cannot listen for the idle probe", e))?;
        let to = listener
            .local_addr()
            .map_err(|e| EmuError::os("idle probe", e))?;
        let server = std::thread::spawn(move || {
            // Gives up if the client never comes (its error is reported).
            listener.set_nonblocking(true).ok();
            let until = Instant::now() + Duration::from_secs(15);
            while Instant::now() < until {
                if let Ok((s, _)) = listener.accept() {
                    s.set_nonblocking(false).ok();
                    s.set_nodelay(true).ok();
                    return echo(s);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        let rtts = d
            .spawn_in(Side::Host, i, "tw-idle-probe", move || client(to, n))?
            .join()?
            .map_err(|e| EmuError::Setup(format!("host '{}': idle probe: {e}", h.spec.name)))?;
        let _ = server.join();
        let mut sorted = rtts.clone();
        sorted.sort_by(f64::total_cmp);
        let b = &t.bottleneck;
        out.push(IdleRtt {
            host: h.spec.name.clone(),
            setting_ms: (h.rtt() + r.rtt() + b.0.delay + b.1.delay) as f64 / 1e6,
            samples: n,
            median_ms: tcpwise_units::nearest_rank(&sorted, 0.5),
            p99_ms: tcpwise_units::nearest_rank(&sorted, 0.99),
        });
    }
    Ok(out)
}
