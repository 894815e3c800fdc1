//! A closed-loop load generator, like sysbench's clients: N connections,
//! each sending its next request as soon as the last reply arrived, for a
//! fixed time; throughput and latency percentiles over the measured part.

use crate::Workload;
use crate::proto::Request;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One load run.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The server.
    pub target: SocketAddr,
    /// Concurrent connections.
    pub clients: usize,
    /// Measured time.
    pub duration: Duration,
    /// Time before measuring starts (connections are open by then).
    pub warmup: Duration,
    /// What each request asks of the server.
    pub workload: Workload,
    /// Seed of the request stream.
    pub seed: u64,
}

/// What it measured.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct LoadReport {
    /// Concurrent connections.
    pub clients: usize,
    /// Requests completed in the measured time.
    pub requests: u64,
    /// Requests per second.
    pub tps: f64,
    /// Latency percentiles, µs.
    pub p50_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Largest.
    pub max_us: u64,
    /// Connections that broke during the run.
    pub errors: u64,
    /// Smallest RTT TCP measured on any connection (TCP_INFO), µs.
    pub min_rtt_us: Option<u32>,
}

impl LoadOptions {
    /// Refuses a run that cannot be measured.
    pub fn validate(&self) -> Result<(), LoadError> {
        let hour = std::time::Duration::from_secs(3600);
        if self.duration.is_zero() {
            return Err(LoadError::Config("-t must be longer than 0".into()));
        }
        if self.duration > hour || self.warmup > hour {
            return Err(LoadError::Config(
                "-t and --warmup: at most one hour".into(),
            ));
        }
        if self.clients == 0 {
            return Err(LoadError::Config("--clients must be at least 1".into()));
        }
        let w = &self.workload;
        if w.base_us > 1_000_000 || w.long_us > 1_000_000 {
            return Err(LoadError::Config(
                "--work and --long-work: at most 1s".into(),
            ));
        }
        if !(4..=1_048_576).contains(&w.reply_bytes) {
            return Err(LoadError::Config(
                "--reply-bytes: between 4 bytes and 1MiB".into(),
            ));
        }
        if !(0.0..=1.0).contains(&w.long_fraction) {
            return Err(LoadError::Config(
                "--long-fraction: between 0% and 100%".into(),
            ));
        }
        Ok(())
    }
}

/// One line, as `tcpwise dispatch load` prints it.
impl std::fmt::Display for LoadReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} clients: {:.0} requests/s ({} in the measured time); latency p50 {} µs, p90 {} µs, p99 {} µs, max {} µs; {} broken",
            self.clients,
            self.tps,
            self.requests,
            self.p50_us,
            self.p90_us,
            self.p99_us,
            self.max_us,
            self.errors
        )
    }
}

/// Why the load could not run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Connecting failed.
    #[error("cannot connect to {0}")]
    Connect(SocketAddr, #[source] std::io::Error),
    /// The options make no sense.
    #[error("{0}")]
    Config(String),
    /// Too many connections broke.
    #[error("{0} of {1} connections broke during the run (is it a tcpwise dispatch server?)")]
    Broken(u64, usize),
}

/// The least time connecting may take before a peer counts as silent.
pub const CONNECT_FLOOR: Duration = Duration::from_secs(3);

/// Runs the load on the current tokio runtime.
pub async fn run(o: &LoadOptions) -> Result<LoadReport, LoadError> {
    o.validate()?;
    crate::server::raise_fd_limit();
    // Connecting counts against the run: a peer that drops everything
    // must not hold us past the warm-up and the measured time, or 3 s
    // when they are shorter: a SYN dropped by a full accept queue is sent
    // again after 1 s (the initial RTO), so 1,024 clients of a 1 s run
    // (a short CI lab, 2 Dec: "segments with 1024 clients: no answer")
    // need room for a second try.
    let give_up = Instant::now() + (o.warmup + o.duration).max(CONNECT_FLOOR);
    let mut streams = Vec::with_capacity(o.clients);
    for _ in 0..o.clients {
        let s =
            match tokio::time::timeout_at(give_up.into(), tokio::net::TcpStream::connect(o.target))
                .await
            {
                Ok(r) => r.map_err(|e| LoadError::Connect(o.target, e))?,
                Err(_) => {
                    let e = std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer");
                    return Err(LoadError::Connect(o.target, e));
                }
            };
        let _ = s.set_nodelay(true);
        streams.push(s);
    }
    let start = Instant::now() + o.warmup;
    let end = start + o.duration;
    let mut tasks = tokio::task::JoinSet::new();
    for (i, mut s) in streams.into_iter().enumerate() {
        let w = o.workload;
        let mut rng =
            tcpwise_units::SplitMix64(o.seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407));
        tasks.spawn(async move {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("bounds");
            let mut reply = vec![0u8; w.reply_bytes.max(4) as usize];
            let mut seq = 0u32;
            loop {
                let t0 = Instant::now();
                if t0 >= end {
                    let rtt = tcpwise_tcp::TcpInfo::of(&s).and_then(|i| i.min_rtt_us);
                    return (h, false, rtt);
                }
                seq = seq.wrapping_add(1);
                let req = Request {
                    work_us: w.work_us(rng.unit()),
                    reply_bytes: w.reply_bytes.max(4),
                    seq,
                };
                // A reply that has not come by the end does not count, so
                // stop waiting then, whatever the server does.
                let exchange = async {
                    s.write_all(&req.encode()).await.is_ok()
                        && s.read_exact(&mut reply).await.is_ok()
                        && reply[..4] == seq.to_be_bytes()
                };
                match tokio::time::timeout_at(end.into(), exchange).await {
                    Ok(true) => {}
                    Ok(false) => return (h, true, None),
                    Err(_) => {
                        let rtt = tcpwise_tcp::TcpInfo::of(&s).and_then(|i| i.min_rtt_us);
                        return (h, false, rtt);
                    }
                }
                let done = Instant::now();
                if t0 >= start && done <= end {
                    let _ = h.record((done - t0).as_micros().max(1) as u64);
                }
            }
        });
    }
    let mut all = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("bounds");
    let mut errors = 0;
    let mut min_rtt_us: Option<u32> = None;
    while let Some(r) = tasks.join_next().await {
        if let Ok((h, broke, rtt)) = r {
            let _ = all.add(&h);
            errors += u64::from(broke);
            min_rtt_us = match (min_rtt_us, rtt) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        } else {
            errors += 1;
        }
    }
    if errors * 10 > o.clients as u64 {
        return Err(LoadError::Broken(errors, o.clients));
    }
    Ok(LoadReport {
        clients: o.clients,
        requests: all.len(),
        tps: all.len() as f64 / o.duration.as_secs_f64(),
        p50_us: all.value_at_quantile(0.5),
        p90_us: all.value_at_quantile(0.9),
        p99_us: all.value_at_quantile(0.99),
        max_us: all.max(),
        errors,
        min_rtt_us,
    })
}

impl tcpwise_outcome::Classify for LoadError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        // Bad flags are the user's; anything else is the cause's to say.
        matches!(self, LoadError::Config(_)).then_some(tcpwise_outcome::Class::Usage)
    }
}
