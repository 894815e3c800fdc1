//! Shared steps: a testbed with our own servers running in-process inside
//! its server namespace, and clients run inside its client namespace.
//!
//! Why in-process: the lab exercises the same library calls a user's
//! program would (`tcpwise_perf::run_server`, `tcpwise_server::serve`,
//! `tcpwise_dispatch::server::serve`), returns typed results without a
//! JSON round trip, and has no path to a binary to get wrong. Each server
//! runs on its own thread that entered the server namespace (its runtime's
//! worker threads inherit the namespace), binds an ephemeral port on every
//! address, and reports the port it got; nothing is written down twice.

use crate::{LabError, LabOptions, PathError};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use tcpwise_emu::netns::SpawnedIn;
use tcpwise_emu::path::PathSpec;
use tcpwise_emu::{DirectionStats, Role, Testbed, TestbedConfig};
use tcpwise_link::Nanos;
use tcpwise_outcome::Shutdown;

/// Every address, an ephemeral port: the server says which port it got.
const ANY: &str = "[::]:0";

/// A server running on a thread inside the server namespace; stopped
/// (and its thread joined) when dropped.
struct Server {
    stop: Shutdown,
    thread: Option<SpawnedIn<Result<(), LabError>>>,
}

impl Server {
    fn new(stop: Shutdown, thread: SpawnedIn<Result<(), LabError>>) -> Server {
        Server {
            stop,
            thread: Some(thread),
        }
    }

    fn signal(&self) {
        self.stop.trigger();
    }

    /// Stops it and returns how its thread ended.
    fn stop(mut self) -> Result<(), LabError> {
        self.signal();
        match self.thread.take() {
            Some(t) => t.join()?,
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A pair testbed with the servers an experiment started in it. Fields
/// drop in order: the servers stop before the namespaces go.
pub struct ServedTestbed {
    servers: Vec<Server>,
    /// The testbed.
    pub tb: Testbed,
    /// Configured RTT, ms.
    pub rtt_ms: f64,
    /// Configured rate, Mbit/s.
    pub rate_mbit: f64,
    /// Text description (path and the sysctls the experiment set).
    pub desc: String,
    /// Its slot, given back after the namespaces are gone.
    slot: Option<crate::sweep::slots::Slot>,
}

/// A multi-thread runtime like the `tcpwise` binary's (one worker per core).
use tcpwise_tcp::runtime;

impl ServedTestbed {
    /// Starts a pair testbed of `rtt` and `rate` (or the `--rtt`/`--rate`
    /// overrides) with `server_sysctls` in the server namespace.
    pub fn start(
        opts: &LabOptions,
        rtt: Nanos,
        rate: u64,
        server_sysctls: Vec<(String, String)>,
    ) -> Result<ServedTestbed, LabError> {
        let rtt = opts.rtt.unwrap_or(rtt);
        let rate = opts.rate.unwrap_or(rate);
        let spec = PathSpec {
            rtt: Some(rtt),
            rate: Some(rate),
            seed: opts.seed,
            ..PathSpec::default()
        };
        let name = format!("rtt{}ms-{}mbit", rtt as f64 / 1e6, rate as f64 / 1e6);
        ServedTestbed::start_path(opts, &spec, &name, server_sysctls)
    }

    /// Starts a pair testbed on `spec` as given (the experiment applies
    /// the overrides it honours); `name` names its record directory. Its
    /// link's rate counts against the slots' budget.
    pub fn start_path(
        opts: &LabOptions,
        spec: &PathSpec,
        name: &str,
        server_sysctls: Vec<(String, String)>,
    ) -> Result<ServedTestbed, LabError> {
        let (up, down) = spec.resolve()?;
        let desc = tcpwise_emu::path::summarize(&up, &down).to_string();
        // Its link's mean rate counts against the slots' budget (a
        // trace's mean); an unlimited link runs alone.
        let demand = up
            .capacity
            .mean_bps()
            .zip(down.capacity.mean_bps())
            .map(|(u, d)| u.max(d) as u64);
        let slot = match &opts.slots {
            Some(slots) => Some(
                slots
                    .take(demand, &opts.cancel)
                    .ok_or(LabError::Interrupted)?,
            ),
            None => None,
        };
        let mut cfg = TestbedConfig::pair(up, down);
        cfg.server_sysctls = server_sysctls.clone();
        cfg.record = opts.record.for_testbed(name);
        let tb = Testbed::start(&cfg)?;
        let sys: Vec<String> = server_sysctls
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let rtt = spec.rtt.unwrap_or(0);
        Ok(ServedTestbed {
            tb,
            servers: Vec::new(),
            slot,
            rtt_ms: rtt as f64 / 1e6,
            rate_mbit: spec.rate.unwrap_or(0) as f64 / 1e6,
            desc: if sys.is_empty() {
                desc
            } else {
                format!("{desc}; server {}", sys.join(" "))
            },
        })
    }

    /// The server's address for a port it listens on.
    pub fn peer(&self, port: u16) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(self.tb.peer_v4()), port)
    }

    /// Runs a tokio server in the server namespace until the testbed ends;
    /// `serve(ready, stop)` must call `ready` with its bound address.
    /// Returns the port it listens on.
    fn spawn_tokio<F, Fut>(&mut self, name: &'static str, serve: F) -> Result<u16, LabError>
    where
        F: FnOnce(std::sync::mpsc::SyncSender<SocketAddr>, Shutdown) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<(), LabError>>,
    {
        let stop = Shutdown::new();
        let stop_rx = stop.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let thread = self
            .tb
            .spawn_in(Role::Server, &format!("tw-lab-{name}"), move || {
                runtime()
                    .map_err(|source| LabError::Server { what: name, source })?
                    .block_on(serve(ready_tx, stop_rx))
            })?;
        self.wait_ready(name, Server::new(stop, thread), ready_rx)
    }

    fn wait_ready(
        &mut self,
        name: &'static str,
        server: Server,
        ready: std::sync::mpsc::Receiver<SocketAddr>,
    ) -> Result<u16, LabError> {
        match ready.recv_timeout(Duration::from_secs(10)) {
            Ok(addr) => {
                self.servers.push(server);
                Ok(addr.port())
            }
            // It ended before listening: its own error says why.
            Err(_) => match server.stop() {
                Err(e) => Err(e),
                Ok(()) => Err(LabError::Server {
                    what: name,
                    source: std::io::Error::other("stopped before listening"),
                }),
            },
        }
    }

    /// `tcpwise perf server`, in-process.
    pub fn serve_perf(&mut self) -> Result<u16, LabError> {
        self.spawn_tokio("perf", |ready, stop| async move {
            let opts = tcpwise_perf::ServerOptions {
                bind: ANY.parse().expect("valid"),
                one_off: false,
                verbose: false,
            };
            tcpwise_perf::run_server(opts, stop, move |a| {
                let _ = ready.send(a);
            })
            .await
            .map_err(|source| LabError::Perf {
                what: "the perf server".into(),
                source,
            })
        })
    }

    /// `tcpwise serve` (HTTP/1.1 origin), in-process.
    pub fn serve_http(&mut self) -> Result<u16, LabError> {
        self.serve_with(tcpwise_server::ServeOptions::new(
            ANY.parse().expect("valid"),
        ))
    }

    /// `tcpwise serve` with `opts` (its `bind` is replaced by every
    /// address, an ephemeral port), in-process; build them with
    /// `ServeOptions::new` and the fields that differ.
    pub fn serve_with(&mut self, opts: tcpwise_server::ServeOptions) -> Result<u16, LabError> {
        let opts = tcpwise_server::ServeOptions {
            bind: ANY.parse().expect("valid"),
            ..opts
        };
        self.spawn_tokio("http", move |ready, stop| async move {
            tcpwise_server::serve(opts, stop, move |a| {
                let _ = ready.send(a);
            })
            .await
            .map_err(|source| LabError::Server {
                what: "http",
                source,
            })
        })
    }

    /// `tcpwise dispatch server --model MODEL --workers WORKERS`, in-process.
    pub fn serve_dispatch(
        &mut self,
        model: tcpwise_dispatch::Model,
        workers: usize,
    ) -> Result<u16, LabError> {
        let flag = Shutdown::new();
        let stop = flag.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let opts = tcpwise_dispatch::server::ServerOptions {
            bind: ANY.parse().expect("valid"),
            model,
            workers,
        };
        let thread = self.tb.spawn_in(Role::Server, "tw-lab-dispatch", move || {
            tcpwise_dispatch::server::serve(&opts, stop, |a| {
                let _ = ready_tx.send(a);
            })
            .map(|_| ())
            .map_err(|source| LabError::Server {
                what: "dispatch",
                source,
            })
        })?;
        self.wait_ready("dispatch", Server::new(flag, thread), ready_rx)
    }

    /// Runs the future `make` builds on a runtime inside the client
    /// namespace, so every socket it opens belongs there: one thread, or
    /// with `multi` a multi-thread runtime like the binary's.
    pub fn in_client<T, F>(
        &self,
        multi: bool,
        make: impl FnOnce() -> F + Send,
    ) -> Result<T, LabError>
    where
        T: Send,
        F: std::future::Future<Output = Result<T, LabError>>,
    {
        let ns = self.tb.netns(Role::Client).expect("pair has a client");
        ns.run(|| {
            let rt = if multi {
                runtime()
            } else {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            }
            .map_err(LabError::Io)?;
            rt.block_on(make())
        })?
    }

    /// Stops the servers and the testbed; reports the emulator's error on
    /// this path (`min_rtt_ms`: the smallest RTT TCP measured on it).
    pub fn finish(self, min_rtt_ms: Option<f64>) -> Result<PathError, LabError> {
        let ServedTestbed {
            servers,
            tb,
            rtt_ms,
            desc,
            slot,
            ..
        } = self;
        // Every server stops; the first failure (which names its server) is reported.
        let mut first_err = None;
        for s in servers {
            if let Err(e) = s.stop() {
                first_err.get_or_insert(e);
            }
        }
        let [up, down] = tb.shutdown()?;
        drop(slot);
        if let Some(e) = first_err {
            return Err(e);
        }
        let l = |d: &DirectionStats| (d.lateness.p50_us, d.lateness.p99_us, d.lateness.max_us);
        Ok(PathError {
            path: desc,
            rtt_error_ms: min_rtt_ms.map(|m| m - rtt_ms),
            up_lateness_us: l(&up),
            down_lateness_us: l(&down),
            rtt_ms,
            offload: down.offload.mode.clone(),
            threads: if down.shared_thread { 1 } else { 2 },
        })
    }
}

/// The TLS config of the lab's HTTPS servers: a self-signed certificate
/// for `localhost` (the lab's clients trust any, as `-k` does).
pub fn self_signed() -> Result<std::sync::Arc<rustls::ServerConfig>, LabError> {
    tcpwise_http::tls::self_signed(&["localhost".into()])
        .map(|(tls, _)| tls)
        .map_err(|e| LabError::Server {
            what: "http",
            source: std::io::Error::other(e.to_string()),
        })
}

/// `a` over `b` round by round (`(round, value)` pairs; rounds where both
/// ran).
pub fn ratio_by_round(a: &[(usize, f64)], b: &[(usize, f64)]) -> Vec<f64> {
    a.iter()
        .filter_map(|(r, x)| b.iter().find(|y| y.0 == *r).map(|y| x / y.1))
        .collect()
}

/// Median and p90 (nearest rank).
pub fn median_p90(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let q = |p: f64| tcpwise_units::nearest_rank(&s, p);
    (q(0.5), q(0.9))
}
