//! Shared steps: testbeds with our own binary as the server.

use crate::{LabError, LabOptions, PathError};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use tcpwise_emu::path::PathSpec;
use tcpwise_emu::{DirectionStats, Role, Testbed, TestbedConfig, Topology};
use tcpwise_link::Nanos;

/// A pair testbed with `server_args` of our binary running in the server namespace.
pub struct Bed {
    /// The testbed.
    pub tb: Testbed,
    server: Child,
    /// Configured RTT, ms.
    pub rtt_ms: f64,
    /// Configured rate, Mbit/s.
    pub rate_mbit: f64,
    /// Text description.
    pub desc: String,
}

impl Bed {
    /// Starts the testbed and the server, waits until `port` listens.
    pub fn start(
        opts: &LabOptions,
        rtt: Nanos,
        rate: u64,
        server_sysctls: Vec<(String, String)>,
        server_args: &[&str],
        port: u16,
    ) -> Result<Bed, LabError> {
        let rtt = opts.rtt.unwrap_or(rtt);
        let rate = opts.rate.unwrap_or(rate);
        let spec = PathSpec {
            rtt: Some(rtt),
            rate: Some(rate),
            seed: opts.seed,
            ..PathSpec::default()
        };
        let (up, down) = spec.resolve()?;
        let desc = tcpwise_emu::path::summarize(&up, &down).to_string();
        let tb = Testbed::start(&TestbedConfig {
            topology: Topology::Pair,
            up,
            down,
            client_sysctls: Vec::new(),
            server_sysctls: server_sysctls.clone(),
        })?;
        let mut cmd = tb.command(Role::Server, &opts.exe.to_string_lossy())?;
        cmd.args(server_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let server = cmd
            .spawn()
            .map_err(|e| LabError::Step(format!("cannot start {}: {e}", opts.exe.display())))?;
        let ns = tb.netns(Role::Server).expect("pair");
        let until = Instant::now() + Duration::from_secs(10);
        while !ns.listening(Some(port))? {
            if Instant::now() > until {
                return Err(LabError::Step(format!(
                    "the server ({server_args:?}) did not listen on {port}"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let sys: Vec<String> = server_sysctls
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        Ok(Bed {
            tb,
            server,
            rtt_ms: rtt as f64 / 1e6,
            rate_mbit: rate as f64 / 1e6,
            desc: if sys.is_empty() {
                desc
            } else {
                format!("{desc}; server {}", sys.join(" "))
            },
        })
    }

    /// Runs our binary in the client namespace and returns its stdout.
    pub fn client(&self, opts: &LabOptions, args: &[&str]) -> Result<String, LabError> {
        let mut cmd = self.tb.command(Role::Client, &opts.exe.to_string_lossy())?;
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| LabError::Step(format!("cannot run {}: {e}", opts.exe.display())))?;
        if !out.status.success() {
            return Err(LabError::Step(format!(
                "tcpwise {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).to_string())
    }

    /// Runs the future `make` builds on a runtime whose one thread is inside
    /// the client namespace, so every socket it opens belongs there.
    pub fn in_client<T, F>(&self, make: impl FnOnce() -> F + Send) -> Result<T, LabError>
    where
        T: Send,
        F: std::future::Future<Output = Result<T, LabError>>,
    {
        let ns = self.tb.netns(Role::Client).expect("pair has a client");
        ns.run(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(LabError::Io)?;
            rt.block_on(make())
        })?
    }

    /// Stops everything and reports the emulator's error on this path.
    pub fn finish(mut self, min_rtt_ms: Option<f64>) -> Result<PathError, LabError> {
        let _ = self.server.kill();
        let _ = self.server.wait();
        let [up, down] = self.tb.shutdown()?;
        let l = |d: &DirectionStats| (d.lateness.p50_us, d.lateness.p99_us, d.lateness.max_us);
        Ok(PathError {
            path: self.desc,
            rtt_error_ms: min_rtt_ms.map(|m| m - self.rtt_ms),
            up_lateness_us: l(&up),
            down_lateness_us: l(&down),
        })
    }
}

/// Median and p90 (nearest rank).
pub fn median_p90(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let q = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    if s.is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        (q(0.5), q(0.9))
    }
}
