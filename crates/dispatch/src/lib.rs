//! # tcpwise-dispatch: who runs a connection that is ready
//!
//! MariaDB's field report: InnoDB on Windows waited for I/O completions with
//! `WaitForMultipleObjects`, which takes at most 64 handles, so every I/O
//! was bound in advance to one thread's fixed *segment*; switching to one
//! I/O completion port that any thread drains kept sysbench throughput flat
//! from 4 to 1024 clients, where the segmented design fell from 23,436 to
//! 6,043 transactions/s.
//!
//! This crate has the three ways a server here can dispatch ready
//! connections, behind one request/response protocol, so the lab can
//! measure them against each other on real kernel TCP:
//!
//! - [`Model::Shared`]: one epoll set, armed one-shot, drained by any of the
//!   worker threads: the completion-port discipline on Linux.
//! - [`Model::Segments`]: each connection bound at accept to one worker
//!   (round robin), and each worker waits on at most 64 connections at once
//!   ([`Slots`]); the others queue for a slot, as InnoDB's I/O requests
//!   queued for a free slot in their segment.
//! - [`Model::Tokio`]: tokio's multi-thread runtime, what tcpwise's own
//!   servers use (one epoll driver, work-stealing workers).
//! - [`Model::IoUring`]: the completion queue Linux has. One ring takes
//!   connections with a multishot accept and their bytes with multishot
//!   receives into provided buffers; its reaper thread hands every whole
//!   request to one queue that any worker drains, and the worker's reply
//!   goes back out through the ring. A completion port in the full sense:
//!   completions, not readiness.
//!
//! The policy parts ([`Slots`], [`Workload`], [`proto`]) are sans-IO and
//! unit-tested; [`server`] and [`load`] are the thin glue.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod load;
pub mod proto;
pub mod server;
mod slots;
mod uring;

pub use slots::Slots;

use serde::Serialize;

/// How a server hands ready connections to its worker threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// One shared readiness queue, any worker takes the next ready connection.
    Shared,
    /// Connections bound to one worker each; a worker waits on at most
    /// `slots` of them at a time.
    Segments {
        /// Connections a worker can wait on at once (64 for WaitForMultipleObjects).
        slots: usize,
    },
    /// tokio's multi-thread runtime.
    Tokio,
    /// io_uring: multishot accept and receive, one shared request queue.
    IoUring,
}

/// Whether `model` can run here: io_uring may be missing or disabled.
pub fn probe(model: Model) -> Result<(), tcpwise_sys::uring::UringError> {
    match model {
        Model::IoUring => tcpwise_sys::uring::probe(),
        _ => Ok(()),
    }
}

/// A dispatch model that could not be parsed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Not a model.
    #[error("unknown dispatch model '{0}': use shared, segments[:SLOTS], tokio or io-uring")]
    Unknown(String),
    /// `segments:N` with a bad N.
    #[error("'{0}': the slot count must be a whole number from 1 to 4096")]
    Slots(String),
}

impl std::str::FromStr for Model {
    type Err = ModelError;

    /// `shared`, `segments[:N]` (N slots per worker, default 64), `tokio`
    /// or `io-uring`.
    fn from_str(s: &str) -> Result<Model, ModelError> {
        match s.split_once(':') {
            None if s == "shared" => Ok(Model::Shared),
            None if s == "tokio" => Ok(Model::Tokio),
            None if s == "io-uring" || s == "io_uring" => Ok(Model::IoUring),
            None if s == "segments" => Ok(Model::Segments { slots: 64 }),
            Some(("segments", n)) => match n.parse::<usize>() {
                Ok(v) if (1..=4096).contains(&v) => Ok(Model::Segments { slots: v }),
                _ => Err(ModelError::Slots(s.to_string())),
            },
            _ => Err(ModelError::Unknown(s.to_string())),
        }
    }
}

impl Model {
    /// The name `parse` accepts.
    pub fn name(&self) -> String {
        match self {
            Model::Shared => "shared".into(),
            Model::Segments { slots: 64 } => "segments".into(),
            Model::Segments { slots } => format!("segments:{slots}"),
            Model::Tokio => "tokio".into(),
            Model::IoUring => "io-uring".into(),
        }
    }
}

/// The server-side CPU work each request asks for, drawn by the client
/// from a seeded stream so every model sees the same sequence: mostly
/// short, a few long (a slow query), which is where binding a connection
/// to a busy thread costs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Workload {
    /// Work of an ordinary request, µs.
    pub base_us: u32,
    /// Fraction of requests that are long.
    pub long_fraction: f64,
    /// Work of a long request, µs.
    pub long_us: u32,
    /// Response size, bytes.
    pub reply_bytes: u32,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            base_us: 50,
            long_fraction: 0.01,
            long_us: 5000,
            reply_bytes: 512,
        }
    }
}

impl Workload {
    /// Work of the request whose uniform draw is `u` in [0, 1).
    pub fn work_us(&self, u: f64) -> u32 {
        if u < self.long_fraction {
            self.long_us
        } else {
            self.base_us
        }
    }

    /// Mean work per request, µs.
    pub fn mean_us(&self) -> f64 {
        self.long_fraction * f64::from(self.long_us)
            + (1.0 - self.long_fraction) * f64::from(self.base_us)
    }
}

/// Spins the CPU for `us` microseconds: the request's work.
pub fn burn(us: u32) {
    let until = std::time::Instant::now() + std::time::Duration::from_micros(u64::from(us));
    let mut x = 0u64;
    while std::time::Instant::now() < until {
        for i in 0..64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    }
    std::hint::black_box(x);
}

/// What the server did, per worker: how evenly the work spread.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerStats {
    /// Requests served by each worker.
    pub per_worker: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_parse_and_print_back() {
        for s in ["shared", "segments", "segments:8", "tokio", "io-uring"] {
            assert_eq!(s.parse::<Model>().unwrap().name(), s);
        }
        assert_eq!("segments:64".parse::<Model>().unwrap().name(), "segments");
        for bad in ["", "iocp", "segments:0", "segments:x", "shared:2"] {
            assert!(bad.parse::<Model>().is_err(), "{bad}");
        }
    }

    #[test]
    fn workload_mean_and_draws() {
        let w = Workload::default();
        assert_eq!(w.work_us(0.005), 5000);
        assert_eq!(w.work_us(0.5), 50);
        assert!((w.mean_us() - 99.5).abs() < 1e-9);
    }
}
