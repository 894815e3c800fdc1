//! The LINK flags shared by every `emu` subcommand (and later the lab).

use clap::Args;
use std::path::PathBuf;
use tcpwise_emu::path::PathSpec;
use tcpwise_link::units::{parse_duration, parse_rate};
use tcpwise_link::{Jitter, LossModel, Nanos, QueueLimit};

fn duration(s: &str) -> Result<Nanos, String> {
    parse_duration(s).map_err(|e| e.to_string())
}
fn rate(s: &str) -> Result<u64, String> {
    parse_rate(s).map_err(|e| e.to_string())
}
fn queue(s: &str) -> Result<QueueLimit, String> {
    QueueLimit::parse(s).map_err(|e| e.to_string())
}
fn loss(s: &str) -> Result<LossModel, String> {
    LossModel::parse(s).map_err(|e| e.to_string())
}
fn jitter(s: &str) -> Result<Jitter, String> {
    let (kind, amount) = match s.split_once(':') {
        Some((k, a)) => (k, a),
        None => ("uniform", s),
    };
    let ns = duration(amount)?;
    match kind {
        "uniform" => Ok(Jitter::Uniform(ns)),
        "normal" => Ok(Jitter::Normal(ns)),
        _ => Err(format!(
            "unknown jitter '{kind}': write 2ms, uniform:2ms or normal:2ms"
        )),
    }
}

/// Path flags. "up" is client to server, "down" server to client.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Link (\"up\" = client to server)")]
pub struct LinkArgs {
    /// Round-trip propagation delay, split evenly (100ms, 1.5s, 250us).
    #[arg(long, value_parser = duration, value_name = "TIME")]
    pub rtt: Option<Nanos>,
    /// One-way delay in both directions (instead of --rtt).
    #[arg(long, value_parser = duration, value_name = "TIME")]
    pub delay: Option<Nanos>,
    /// One-way delay client to server.
    #[arg(long, value_parser = duration, value_name = "TIME")]
    pub up_delay: Option<Nanos>,
    /// One-way delay server to client.
    #[arg(long, value_parser = duration, value_name = "TIME")]
    pub down_delay: Option<Nanos>,
    /// Rate of IP bytes in both directions (20mbit, 1gbit, 2.5MB/s); default unlimited.
    #[arg(long, value_parser = rate, value_name = "RATE")]
    pub rate: Option<u64>,
    /// Rate client to server.
    #[arg(long, value_parser = rate, value_name = "RATE")]
    pub up_rate: Option<u64>,
    /// Rate server to client.
    #[arg(long, value_parser = rate, value_name = "RATE")]
    pub down_rate: Option<u64>,
    /// Mahimahi trace client to server (one ms timestamp per line = one 1500-byte opportunity).
    #[arg(long, value_name = "FILE")]
    pub up_trace: Option<PathBuf>,
    /// Mahimahi trace server to client.
    #[arg(long, value_name = "FILE")]
    pub down_trace: Option<PathBuf>,
    /// Play traces once instead of repeating them.
    #[arg(long)]
    pub trace_once: bool,
    /// Bytes of framing added to each packet when serialising at --rate.
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub overhead: u32,
    /// Drop-tail queue per direction: 256KB, 64KiB or 1000pkt [default: one BDP, at least 64KB].
    #[arg(long, value_parser = queue, value_name = "LIMIT")]
    pub queue: Option<QueueLimit>,
    /// Random loss in both directions: 1%, 0.01, or ge:P,R[,H,K] (Gilbert-Elliott, netem's gemodel order).
    #[arg(long, value_parser = loss, value_name = "LOSS")]
    pub loss: Option<LossModel>,
    /// Loss client to server.
    #[arg(long, value_parser = loss, value_name = "LOSS")]
    pub up_loss: Option<LossModel>,
    /// Loss server to client.
    #[arg(long, value_parser = loss, value_name = "LOSS")]
    pub down_loss: Option<LossModel>,
    /// Delay jitter, never reordering: 2ms (uniform +-2ms) or normal:2ms (SD).
    #[arg(long, value_parser = jitter, value_name = "JITTER")]
    pub jitter: Option<Jitter>,
    /// Seed of the loss and jitter RNG (same seed, same run).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl LinkArgs {
    /// The path these flags describe.
    pub fn spec(&self) -> PathSpec {
        PathSpec {
            rtt: self.rtt,
            delay: self.delay,
            up_delay: self.up_delay,
            down_delay: self.down_delay,
            rate: self.rate,
            up_rate: self.up_rate,
            down_rate: self.down_rate,
            up_trace: self.up_trace.clone(),
            down_trace: self.down_trace.clone(),
            trace_once: self.trace_once,
            overhead: self.overhead,
            queue: self.queue,
            loss: self.loss,
            up_loss: self.up_loss,
            down_loss: self.down_loss,
            jitter: self.jitter,
            seed: self.seed,
        }
    }
}
