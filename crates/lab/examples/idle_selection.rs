//! Firefox's idle-connection experiment on a real path.
//!
//! Run inside an emulated pair (the server is `tcpwise serve`):
//!
//! ```sh
//! cargo build --release --examples
//! tcpwise emu pair --rtt 250ms --rate 8mbit --server-sysctl net.ipv4.tcp_slow_start_after_idle=0 \
//!   --server 'tcpwise serve --bind 198.18.0.2:8080' --wait-port 8080 \
//!   -- target/release/examples/idle_selection http://198.18.0.2:8080 10 fifo lifo max-burst warmest kernel
//! ```
//!
//! `IDLE_PAUSE_MS` changes the 1 s pause. Prints each run and, per policy, the median and p90 of the 25 KB
//! object's load time (request written to last byte), then one JSON line.

use std::time::Duration;
use tcpwise_client::ClientConfig;
use tcpwise_lab::experiments::idle_selection::scenario::{IdleSelection, run_idle_selection};
use tcpwise_pool::Policy;

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    tcpwise_units::nearest_rank(v, p)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: idle_selection BASE_URL RUNS POLICY...");
        std::process::exit(2);
    }
    let base = url::Url::parse(&args[1]).expect("base URL");
    let runs: usize = args[2].parse().expect("runs");
    let policies: Vec<Policy> = args[3..]
        .iter()
        .map(|p| p.parse::<Policy>().expect("policy"))
        .collect();
    let mut scenario = IdleSelection::seed(base);
    if let Some(ms) = std::env::var("IDLE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        scenario.pause = Duration::from_millis(ms);
    }
    let mut all = Vec::new();
    for r in 0..runs {
        // Interleave policies so drift in the machine hits them alike.
        for p in &policies {
            let cfg = ClientConfig {
                policy: *p,
                ..ClientConfig::default()
            };
            match run_idle_selection(cfg, &scenario).await {
                Ok(x) => {
                    eprintln!(
                        "run {r} {:<9} load {:7.1} ms on conn #{} (burst {} B, rtt {:?} ms): {}",
                        x.policy,
                        x.load_ms,
                        x.conn,
                        x.chosen_burst,
                        x.rtt_ms,
                        x.reason.clone().unwrap_or_default()
                    );
                    all.push(x);
                }
                Err(e) => eprintln!("run {r} {}: error: {e}", p.name()),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let mut summary = serde_json::Map::new();
    for p in &policies {
        let mut v: Vec<f64> = all
            .iter()
            .filter(|x| x.policy == p.name())
            .map(|x| x.load_ms)
            .collect();
        if v.is_empty() {
            continue;
        }
        let (med, p90) = (pct(&mut v, 0.5), pct(&mut v, 0.9));
        println!(
            "{:<9} median {med:7.1} ms  p90 {p90:7.1} ms  ({} runs)",
            p.name(),
            v.len()
        );
        summary.insert(
            format!("{}_median_ms", p.name().replace('-', "_")),
            med.into(),
        );
        summary.insert(format!("{}_p90_ms", p.name().replace('-', "_")), p90.into());
    }
    println!("{}", serde_json::json!({ "summary": summary, "runs": all }));
}
