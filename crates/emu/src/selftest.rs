//! `tcpwise emu selftest`: the emulator measured against its own
//! configuration, with real kernel TCP on both ends of a pair testbed.
//!
//! Three measurements, all over the emulated path:
//! 1. idle RTT: 100-byte messages echoed on a `TCP_NODELAY` connection,
//!    one at a time (the configured RTT plus two tiny serialisations);
//! 2. bulk goodput: the server sends for a few seconds; goodput over the
//!    last 80 % (after slow start) against the payload ceiling
//!    (rate × 1448/1500: MSS 1448 with timestamps on a 1500-byte MTU);
//! 3. loaded RTT: the same echo, every 50 ms, during the bulk flow, and
//!    beside it numbered 100-byte UDP probes every 50 ms. A drop-tail queue
//!    of Q bytes at rate R bounds a packet's round trip by RTT + Q/R; the
//!    UDP probes are what that bound is compared with, because a TCP probe
//!    dropped in the queue waits for TCP's loss recovery (a tail-loss
//!    probe, a retransmission timeout), which is TCP's delay, not the
//!    emulator's. A UDP probe that is dropped is counted as lost instead.
//!
//! Plus the forwarder's lateness and, when loss or an impairment is
//! configured, each measured share against its binomial 99.9 % interval.

use crate::EmuError;
use crate::forwarder::{DirectionStats, Lateness};
use crate::path::{PathSummary, summarize};
use crate::testbed::{Testbed, TestbedConfig, Topology};
use serde::Serialize;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tcpwise_link::LossModel;

mod limits;
pub(crate) mod server;
mod text;
pub use limits::*;
use server::{server_loop, udp_echo};

/// What the bulk senders' `TCP_INFO` said at their end, one per flow.
type SenderInfos = Arc<std::sync::Mutex<Vec<tcpwise_tcp::TcpInfo>>>;

/// Port the selftest server listens on inside the server namespace.
const PORT: u16 = 5201;
const MSG: usize = 100;

/// What to run.
#[derive(Debug, Clone)]
pub struct SelftestOptions {
    /// The path (topology is forced to a pair).
    pub testbed: TestbedConfig,
    /// Idle round trips to time.
    pub rtt_samples: usize,
    /// Length of the bulk download.
    pub bulk: Duration,
    /// Parallel bulk downloads (FQ-CoDel's isolation shows with 2).
    pub flows: usize,
    /// Congestion control of every test socket (`TCP_CONGESTION` on both
    /// ends), or the namespaces' default. Per socket, because a namespace
    /// may only default to an algorithm the host allows.
    pub congestion: Option<String>,
}

fn set_congestion(s: &impl std::os::fd::AsFd, algo: Option<&str>) -> Result<(), EmuError> {
    if let Some(a) = algo {
        tcpwise_tcp::set_congestion(&socket2::SockRef::from(s), a)
            .map_err(|e| EmuError::Config(e.to_string()))?;
    }
    Ok(())
}

/// Summary statistics of RTT samples, ms.
#[derive(Debug, Clone, Serialize, Default)]
pub struct RttStats {
    /// Number of samples.
    pub samples: usize,
    /// Minimum.
    pub min_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile (nearest rank).
    pub p99_ms: f64,
    /// Maximum.
    pub max_ms: f64,
}

impl RttStats {
    /// From samples in ms.
    pub fn from_samples(mut v: Vec<f64>) -> RttStats {
        if v.is_empty() {
            return RttStats::default();
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| tcpwise_units::nearest_rank(&v, p);
        RttStats {
            samples: v.len(),
            min_ms: v[0],
            p50_ms: q(0.5),
            p99_ms: q(0.99),
            max_ms: v[v.len() - 1],
        }
    }
}

/// Loss check of one direction.
#[derive(Debug, Clone, Serialize)]
pub struct LossCheck {
    /// "up" or "down".
    pub direction: String,
    /// Configured mean loss probability.
    pub configured: f64,
    /// Packets offered.
    pub offered: u64,
    /// Packets lost.
    pub lost: u64,
    /// lost / offered.
    pub measured: f64,
    /// 99.9 % binomial interval for the fraction (Bernoulli only).
    pub interval: Option<(f64, f64)>,
    /// Whether the measured fraction lies in the interval.
    pub within: Option<bool>,
}

/// One impairment of one direction, configured against measured.
#[derive(Debug, Clone, Serialize)]
pub struct ImpairmentCheck {
    /// "up" or "down".
    pub direction: String,
    /// "reorder", "duplicate", "corrupt", "onoff", "police".
    pub what: String,
    /// Configured share (`None` for on/off and policer, whose drops are a
    /// consequence of the traffic, not a share).
    pub configured: Option<f64>,
    /// Packets it affected.
    pub count: u64,
    /// Out of this many (delivered packets; offered for drops).
    pub of: u64,
    /// count / of.
    pub measured: f64,
    /// 99.9 % binomial interval of the share.
    pub interval: Option<(f64, f64)>,
    /// Whether the share lies inside it.
    pub within: Option<bool>,
}

fn impairment_checks(cfg: &tcpwise_link::LinkConfig, d: &DirectionStats) -> Vec<ImpairmentCheck> {
    let l = &d.link;
    let n = &cfg.impairments.netem;
    let mut v = Vec::new();
    let mut share = |what: &str, p: Option<f64>, count: u64, of: u64| {
        let measured = count as f64 / of.max(1) as f64;
        let interval = p.map(|p| binomial_interval(p, of));
        v.push(ImpairmentCheck {
            direction: d.direction.clone(),
            what: what.into(),
            configured: p,
            count,
            of,
            measured,
            interval,
            within: interval.map(|(lo, hi)| measured >= lo && measured <= hi),
        });
    };
    for (what, p, count) in [
        ("reorder", n.reorder, l.reordered),
        ("duplicate", n.duplicate, l.duplicated),
        ("corrupt", n.corrupt, l.corrupted),
    ] {
        if p > 0.0 {
            share(what, Some(p), count, l.delivered_packets);
        }
    }
    if cfg.impairments.onoff.is_some() {
        share("onoff", None, l.dropped_onoff, l.offered_packets);
    }
    if cfg.impairments.police.is_some() {
        share("police", None, l.dropped_police, l.offered_packets);
    }
    v
}

/// Everything the selftest measured.
#[derive(Debug, Clone, Serialize)]
pub struct SelftestReport {
    /// The configured path.
    pub path: PathSummary,
    /// Idle RTT of 100-byte messages.
    pub idle_rtt: RttStats,
    /// What the model predicts for the idle round trip: configured RTT
    /// plus serialising the 152-byte packet (100 B + IPv4 + TCP with
    /// timestamps) each way on rate links. Traces add a wait for the next
    /// opportunity that is not included here.
    pub expected_idle_rtt_ms: f64,
    /// Idle RTT median minus the expected RTT, ms: the emulator's error.
    pub rtt_error_ms: f64,
    /// Bulk download seconds.
    pub bulk_s: f64,
    /// Goodput over the whole download, Mbit/s.
    pub goodput_mbit: f64,
    /// Median of the one-second goodputs over the last 80 % of the
    /// download, Mbit/s. A median, like reading iperf3's interval lines:
    /// after a loss the receiver releases a retransmission's worth of
    /// held-back data at once, so one window can exceed the link rate.
    pub steady_goodput_mbit: f64,
    /// Payload ceiling of the down direction, Mbit/s (`None` if unlimited).
    pub ceiling_mbit: Option<f64>,
    /// TCP echo RTT samples during the bulk download (TCP's own loss
    /// recovery included).
    pub loaded_rtt: RttStats,
    /// UDP probe RTT samples during the bulk download: what the queue
    /// bound applies to.
    pub loaded_rtt_udp: RttStats,
    /// UDP probes sent during the bulk download.
    pub udp_probes_sent: u64,
    /// UDP probes never answered (dropped on the way out or back).
    pub udp_probes_lost: u64,
    /// RTT + (queue + the packet in service + the probe each way) / rate of
    /// the down direction, ms (`None` if unlimited).
    pub loaded_rtt_bound_ms: Option<f64>,
    /// Loss checks, for directions with loss configured.
    pub loss: Vec<LossCheck>,
    /// Reorder, duplicate and corrupt shares against their configuration,
    /// and the drops of on/off and policer, per direction.
    pub impairments: Vec<ImpairmentCheck>,
    /// What limited the bulk senders besides the path (`TCP_INFO`), `None`
    /// where the kernel does not say.
    pub sender_limits: Option<SenderLimits>,
    /// The autotuning ranges the bulk flow ran with (they set its
    /// largest window: a figure-moving setting, printed beside it).
    pub tcp_mem: String,
    /// Forwarder lateness during the idle-RTT phase, up then down.
    pub idle_lateness: Vec<Lateness>,
    /// Forwarder lateness during the bulk phase, up then down.
    pub bulk_lateness: Vec<Lateness>,
    /// Forwarder statistics, up then down.
    pub directions: Vec<DirectionStats>,
    /// The share of the machine's CPU time the hypervisor took during the
    /// bulk phase (`/proc/stat`'s steal), percent: a stolen millisecond
    /// is a forwarder's millisecond late.
    pub bulk_steal_pct: Option<f64>,
    /// Both forwarders' CPU, percent of one core, per Gbit/s of goodput.
    pub cpu_per_gbit: f64,
    /// Set when the machine did not hold the path with its timing intact
    /// (what it measured, against [`HOLD_P99_US`] and [`HOLD_GOODPUT`]).
    pub warning: Option<String>,
}

/// Bulk-phase lateness p99 above which the timing is not intact, µs.
pub const HOLD_P99_US: f64 = 500.0;
/// Share of the payload ceiling below which a rate is not held.
pub const HOLD_GOODPUT: f64 = 0.95;

/// Whether the machine held the path: bulk lateness p99 within
/// [`HOLD_P99_US`] in each direction and, at a set rate, goodput at least
/// [`HOLD_GOODPUT`] of the ceiling; `Some` says what fell short.
fn held(bulk: &[Lateness], steady: f64, ceiling: Option<f64>) -> Option<String> {
    let mut short: Vec<String> = bulk
        .iter()
        .zip(["up", "down"])
        .filter(|(l, _)| l.p99_us > HOLD_P99_US)
        .map(|(l, d)| {
            format!(
                "{d} lateness p99 {:.2} ms (max {:.1} ms)",
                l.p99_us / 1e3,
                l.max_us / 1e3
            )
        })
        .collect();
    if let Some(c) = ceiling.filter(|c| steady < HOLD_GOODPUT * c) {
        short.push(format!(
            "goodput {:.0} % of the ceiling",
            100.0 * steady / c
        ));
    }
    (!short.is_empty()).then(|| {
        format!(
            "this machine did not hold the path with its timing intact ({}; the bound is p99 {:.1} ms and {:.0} % of the ceiling): figures at this rate carry the emulator's own error",
            short.join(", "),
            HOLD_P99_US / 1e3,
            HOLD_GOODPUT * 100.0
        )
    })
}

fn connect(
    tb: &Testbed,
    kind: u8,
    arg: u64,
    congestion: Option<&str>,
) -> Result<TcpStream, EmuError> {
    let addr = SocketAddr::from((tb.peer_v4(), PORT));
    let ns = tb.netns(crate::Role::Client).expect("client exists");
    let mut s = ns.run(move || TcpStream::connect_timeout(&addr, Duration::from_secs(10)))??;
    set_congestion(&s, congestion)?;
    s.set_nodelay(true)?;
    let mut hello = [0u8; 9];
    hello[0] = kind;
    hello[1..].copy_from_slice(&arg.to_be_bytes());
    s.write_all(&hello)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    Ok(s)
}

/// One round trip of a [`MSG`]-byte message, ms.
pub(crate) fn round_trip(s: &mut TcpStream) -> Result<f64, EmuError> {
    let msg = [0x42u8; MSG];
    let mut back = [0u8; MSG];
    let t = Instant::now();
    s.write_all(&msg)?;
    s.read_exact(&mut back)?;
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// 99.9 % normal-approximation interval of a binomial fraction.
pub fn binomial_interval(p: f64, n: u64) -> (f64, f64) {
    let sd = (p * (1.0 - p) / n.max(1) as f64).sqrt();
    ((p - 3.29 * sd).max(0.0), (p + 3.29 * sd).min(1.0))
}

/// Each direction's configured loss against what its link dropped, with
/// the binomial interval where the model is Bernoulli.
fn loss_checks(cfg: &TestbedConfig, dirs: &[DirectionStats]) -> Vec<LossCheck> {
    [(&cfg.up.loss, &dirs[0]), (&cfg.down.loss, &dirs[1])]
        .into_iter()
        .filter(|(m, _)| **m != LossModel::None)
        .map(|(m, d)| {
            let p = m.mean_loss();
            let n = d.link.offered_packets;
            let measured = d.link.dropped_loss as f64 / n.max(1) as f64;
            let interval =
                matches!(m, LossModel::Bernoulli { .. }).then(|| binomial_interval(p, n));
            LossCheck {
                direction: d.direction.clone(),
                configured: p,
                offered: n,
                lost: d.link.dropped_loss,
                measured,
                interval,
                within: interval.map(|(lo, hi)| measured >= lo && measured <= hi),
            }
        })
        .collect()
}

/// The idle round trip the model predicts: the delays, and a probe's
/// serialisation each way.
fn expected_idle_rtt(path: &PathSummary, cfg: &TestbedConfig) -> f64 {
    let ser_ms = |c: &tcpwise_link::LinkConfig| match c.capacity {
        tcpwise_link::Capacity::Rate {
            bits_per_sec,
            overhead,
        } => f64::from(152 + overhead) * 8.0 / bits_per_sec as f64 * 1e3,
        _ => 0.0,
    };
    path.rtt_ms + ser_ms(&cfg.up) + ser_ms(&cfg.down)
}

/// The buffer maxima in effect: the testbed's defaults unless --sysctl
/// set them.
fn tcp_mem(cfg: &TestbedConfig) -> String {
    let mem = |key: &str, extra: &[(String, String)]| {
        extra
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| crate::testbed::default_sysctl(key).map(String::from))
            .unwrap_or_default()
    };
    format!(
        "receiver's tcp_rmem=\"{}\", sender's tcp_wmem=\"{}\"",
        mem("net.ipv4.tcp_rmem", &cfg.client_sysctls),
        mem("net.ipv4.tcp_wmem", &cfg.server_sysctls)
    )
}

/// Runs the selftest. `progress` receives one line per phase.
pub fn run(
    opts: &SelftestOptions,
    progress: &dyn Fn(&str),
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<SelftestReport, EmuError> {
    let mut cfg = opts.testbed.clone();
    cfg.topology = Topology::Pair;
    let path = summarize(&cfg.up, &cfg.down);
    let tb = Testbed::start(&cfg)?;
    let server_ns = tb.netns(crate::Role::Server).expect("pair has a server");
    let bind = SocketAddr::from((tb.peer_v4(), PORT));
    let listener = server_ns.run(move || TcpListener::bind(bind))??;
    // Accepted sockets inherit the listener's algorithm.
    set_congestion(&listener, opts.congestion.as_deref())?;
    let udp = server_ns.run(move || UdpSocket::bind(bind))??;
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let infos = SenderInfos::default();
    let infos2 = infos.clone();
    let server = std::thread::spawn(move || server_loop(listener, stop2, infos2));
    let stop3 = stop.clone();
    let udp_server = std::thread::spawn(move || udp_echo(udp, stop3));
    let result = measure(opts, &tb, &path, progress, cancelled);
    stop.store(true, Ordering::Relaxed);
    let _ = server.join();
    let _ = udp_server.join();
    let dirs = tb.shutdown()?;
    let m = result?;
    if let Some(f) = dirs.iter().find_map(|d| d.failure.clone()) {
        return Err(EmuError::Setup(f));
    }
    let ceiling = path.down.rate_mbit.map(|r| r * 1448.0 / 1500.0);
    let bound = path
        .down
        .rate_mbit
        // A probe waits behind a full queue and the packet in service, then
        // is serialised itself (128 bytes: 100 + IPv4 + UDP) each way.
        .map(|r| path.rtt_ms + (path.down.queue_bytes + 1500 + 2 * 128) as f64 * 8.0 / (r * 1e3));
    let impairments = impairment_checks(&cfg.up, &dirs[0])
        .into_iter()
        .chain(impairment_checks(&cfg.down, &dirs[1]))
        .collect();
    let loss = loss_checks(&cfg, &dirs);
    let expected = expected_idle_rtt(&path, &cfg);
    let bulk_lateness: Vec<Lateness> = dirs
        .iter()
        .map(|d| d.phase_lateness.get(2).cloned().unwrap_or_default())
        .collect();
    let mut sender_limits = SenderLimits::of(&infos.lock().map(|v| v.clone()).unwrap_or_default());
    if let Some(l) = &mut sender_limits {
        l.receive_buffer = m.rcvbuf;
    }
    Ok(SelftestReport {
        sender_limits,
        tcp_mem: tcp_mem(&cfg),
        expected_idle_rtt_ms: expected,
        rtt_error_ms: m.idle.p50_ms - expected,
        path,
        idle_rtt: m.idle,
        bulk_s: m.bulk_s,
        goodput_mbit: m.goodput,
        steady_goodput_mbit: m.steady,
        ceiling_mbit: ceiling,
        loaded_rtt: m.loaded,
        loaded_rtt_udp: m.loaded_udp,
        udp_probes_sent: m.udp_sent,
        udp_probes_lost: m.udp_lost,
        loaded_rtt_bound_ms: bound,
        loss,
        impairments,
        idle_lateness: dirs
            .iter()
            .map(|d| d.phase_lateness.get(1).cloned().unwrap_or_default())
            .collect(),
        cpu_per_gbit: {
            let cpu = crate::forwarder::forwarders_cpu_percent(&dirs[..]);
            if m.steady > 0.0 {
                cpu / (m.steady / 1e3)
            } else {
                0.0
            }
        },
        warning: held(&bulk_lateness, m.steady, ceiling).map(|w| match m.steal {
            Some(s) if s > 0.0 => format!(
                "{w}; the hypervisor held this machine's CPUs for {s:.2} % of the bulk phase (steal), which the lateness includes"
            ),
            _ => w,
        }),
        bulk_steal_pct: m.steal,
        bulk_lateness,
        directions: dirs.to_vec(),
    })
}

struct Measured {
    idle: RttStats,
    goodput: f64,
    steady: f64,
    bulk_s: f64,
    loaded: RttStats,
    loaded_udp: RttStats,
    udp_sent: u64,
    udp_lost: u64,
    steal: Option<f64>,
    rcvbuf: Option<u64>,
}

/// Sends a numbered 100-byte probe every 50 ms until `done`, then waits
/// `drain` for late answers. Returns the round trips (ms) of the answered
/// probes and how many were sent.
fn udp_probes(s: UdpSocket, done: Arc<AtomicBool>, drain: Duration) -> (Vec<f64>, u64) {
    let mut sent: Vec<Instant> = Vec::new();
    let mut rtt: Vec<Option<f64>> = Vec::new();
    let mut buf = [0u8; 2048];
    std::thread::sleep(Duration::from_millis(200));
    let mut receive_until = |until: Instant, sent: &[Instant], rtt: &mut Vec<Option<f64>>| {
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
                break;
            }
            let Ok(n) = s.recv(&mut buf) else {
                continue;
            };
            if n < 8 {
                continue;
            }
            let seq = u64::from_be_bytes(buf[..8].try_into().unwrap_or_default()) as usize;
            if let (Some(at), Some(slot)) = (sent.get(seq), rtt.get_mut(seq)) {
                // A duplicated probe's second copy is not a new sample.
                slot.get_or_insert(at.elapsed().as_secs_f64() * 1e3);
            }
        }
    };
    while !done.load(Ordering::Relaxed) {
        let mut msg = [0u8; MSG];
        msg[..8].copy_from_slice(&(sent.len() as u64).to_be_bytes());
        sent.push(Instant::now());
        rtt.push(None);
        if s.send(&msg).is_err() {
            break;
        }
        receive_until(Instant::now() + Duration::from_millis(50), &sent, &mut rtt);
    }
    receive_until(Instant::now() + drain, &sent, &mut rtt);
    (rtt.into_iter().flatten().collect(), sent.len() as u64)
}

/// The idle phase: warm-up round trips, then `n` timed ones at real-time
/// priority.
fn idle_round_trips(
    echo: &mut TcpStream,
    n: usize,
    tb: &Testbed,
    check: &dyn Fn() -> Result<(), EmuError>,
) -> Result<Vec<f64>, EmuError> {
    for _ in 0..3 {
        round_trip(echo)?; // warm-up: first segments, route caches
    }
    let mut idle = Vec::with_capacity(n);
    tb.mark_phase(1);
    crate::sys::set_realtime(5);
    let sampled = (|| {
        for _ in 0..n {
            check()?;
            idle.push(round_trip(echo)?);
        }
        Ok::<(), EmuError>(())
    })();
    crate::sys::set_normal();
    sampled.map(|()| idle)
}

/// The bulk flows after the first, each read on a thread of its own,
/// their bytes counted into `others`.
fn more_flows(
    opts: &SelftestOptions,
    tb: &Testbed,
    ms: u64,
    others: &Arc<std::sync::atomic::AtomicU64>,
) -> Result<Vec<std::thread::JoinHandle<()>>, EmuError> {
    let mut extra = Vec::new();
    for _ in 1..opts.flows.max(1) {
        let mut s = connect(tb, b'B', ms, opts.congestion.as_deref())?;
        let others = others.clone();
        extra.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 256 * 1024];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                others.fetch_add(n as u64, Ordering::Relaxed);
            }
        }));
    }
    Ok(extra)
}

/// Reads the first bulk flow to its end (or `limit`): its bytes, the
/// marks (seconds, bytes of every flow) the steady goodput is read from,
/// and how it ended.
fn read_bulk(
    bulk: &mut TcpStream,
    start: Instant,
    limit: Duration,
    others: &std::sync::atomic::AtomicU64,
    check: &dyn Fn() -> Result<(), EmuError>,
) -> (u64, Vec<(f64, u64)>, Result<(), EmuError>) {
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    let mut marks: Vec<(f64, u64)> = Vec::new();
    let mut outcome = Ok(());
    loop {
        if let Err(e) = check() {
            outcome = Err(e);
            break;
        }
        let n = match bulk.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) => {
                outcome = Err(e.into());
                break;
            }
        };
        total += n as u64;
        marks.push((
            start.elapsed().as_secs_f64(),
            total + others.load(Ordering::Relaxed),
        ));
        if start.elapsed() > limit {
            break;
        }
    }
    (total, marks, outcome)
}

fn measure(
    opts: &SelftestOptions,
    tb: &Testbed,
    path: &PathSummary,
    progress: &dyn Fn(&str),
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Measured, EmuError> {
    let check = || {
        if cancelled() {
            Err(EmuError::Interrupted)
        } else if tb.failed() {
            Err(EmuError::Setup(
                "the forwarder stopped during the selftest".into(),
            ))
        } else {
            Ok(())
        }
    };
    progress(&format!(
        "idle RTT: {} round trips of {MSG}-byte messages",
        opts.rtt_samples
    ));
    let mut echo = connect(tb, b'E', 0, opts.congestion.as_deref())?;
    let idle = idle_round_trips(&mut echo, opts.rtt_samples, tb, &check)?;
    progress(&format!(
        "bulk: {:.0} s download with RTT samples every 50 ms",
        opts.bulk.as_secs_f64()
    ));
    let ms = opts.bulk.as_millis() as u64;
    tb.mark_phase(2);
    let mut bulk = connect(tb, b'B', ms, opts.congestion.as_deref())?;
    bulk.set_read_timeout(Some(Duration::from_millis(200)))?;
    // Further bulk flows count into `others`; the first is read here.
    let others = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let extra = more_flows(opts, tb, ms, &others)?;
    let done = Arc::new(AtomicBool::new(false));
    let done2 = done.clone();
    let client_ns = tb.netns(crate::Role::Client).expect("client exists");
    let probe = client_ns.run(|| UdpSocket::bind(("0.0.0.0", 0)))??;
    probe.connect(SocketAddr::from((tb.peer_v4(), PORT)))?;
    let drain = Duration::from_millis(1000 + 4 * path.rtt_ms as u64);
    let done3 = done.clone();
    let udp_pinger = std::thread::spawn(move || udp_probes(probe, done3, drain));
    let pinger = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::thread::sleep(Duration::from_millis(200));
        while !done2.load(Ordering::Relaxed) {
            match round_trip(&mut echo) {
                Ok(r) => v.push(r),
                Err(_) => break,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        v
    });
    let start = Instant::now();
    let steal0 = crate::sys::steal_ticks();
    let limit = opts.bulk + Duration::from_secs(30) + Duration::from_millis(4 * path.rtt_ms as u64);
    let (total, marks, outcome) = read_bulk(&mut bulk, start, limit, &others, &check);
    done.store(true, Ordering::Relaxed);
    tb.mark_phase(3);
    // How far autotuning took the receive buffer.
    let rcvbuf = socket2::SockRef::from(&bulk)
        .recv_buffer_size()
        .ok()
        .map(|b| b as u64);
    // Ticks are 1/100 s of one CPU.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let wall = start.elapsed().as_secs_f64();
    let steal = steal0
        .zip(crate::sys::steal_ticks())
        .map(|(a, b)| 100.0 * b.saturating_sub(a) as f64 / (wall * 100.0 * cores).max(1.0));
    drop(bulk);
    for t in extra {
        let _ = t.join();
    }
    let total = total + others.load(Ordering::Relaxed);
    let loaded = pinger.join().unwrap_or_default();
    let (loaded_udp, udp_sent) = udp_pinger.join().unwrap_or_default();
    outcome?;
    let elapsed = marks.last().map_or(0.0, |m| m.0);
    let steady = steady_goodput(&marks, elapsed);
    let goodput = if elapsed > 0.0 {
        total as f64 * 8.0 / elapsed / 1e6
    } else {
        0.0
    };
    Ok(Measured {
        idle: RttStats::from_samples(idle),
        goodput,
        steady,
        bulk_s: elapsed,
        loaded: RttStats::from_samples(loaded),
        udp_lost: udp_sent - loaded_udp.len() as u64,
        loaded_udp: RttStats::from_samples(loaded_udp),
        udp_sent,
        steal,
        rcvbuf,
    })
}

/// Median per-second goodput (Mbit/s) after the first 20 % of the run;
/// `marks` are (seconds, cumulative bytes) at each read.
pub fn steady_goodput(marks: &[(f64, u64)], elapsed: f64) -> f64 {
    let at = |t: f64| {
        marks
            .iter()
            .take_while(|m| m.0 <= t)
            .last()
            .map_or(0, |m| m.1)
    };
    let first = (elapsed * 0.2).ceil() as u64;
    let last = elapsed.floor() as u64;
    let mut v: Vec<f64> = (first..last)
        .map(|k| (at(k as f64 + 1.0) - at(k as f64)) as f64 * 8.0 / 1e6)
        .collect();
    if v.is_empty() {
        let cut = marks
            .iter()
            .find(|m| m.0 >= elapsed * 0.2)
            .copied()
            .unwrap_or((0.0, 0));
        let total = marks.last().map_or(0, |m| m.1);
        return if elapsed > cut.0 {
            (total - cut.1) as f64 * 8.0 / (elapsed - cut.0) / 1e6
        } else {
            0.0
        };
    }
    if v.len() < 3 {
        // A median of one or two seconds is not robust: a reader that
        // stalls across a second's boundary moves bytes from one second
        // into the next. The mean over the same whole seconds is.
        return (at(last as f64) - at(first as f64)) as f64 * 8.0 / (last - first) as f64 / 1e6;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_goodput_is_the_median_second() {
        // 1 MB/s, with a burst of held-back data released in second 3.
        let mut marks = Vec::new();
        let mut total = 0;
        for i in 1..=100 {
            let t = i as f64 * 0.1;
            total += if i == 35 { 1_100_000 } else { 100_000 };
            marks.push((t, total));
        }
        let g = steady_goodput(&marks, 10.0);
        assert!((g - 8.0).abs() < 1e-9, "{g}");
        // Two whole seconds: a stall across the boundary at 2 s (reads at
        // 1.9 and 2.1) must not make either second count double.
        let marks = [
            (0.5, 0),
            (1.0, 125_000),
            (1.9, 237_500),
            (2.1, 262_500),
            (3.0, 375_000),
            (3.3, 412_500),
        ];
        let g = steady_goodput(&marks, 3.3);
        assert!((g - 1.0).abs() < 1e-9, "{g}");
        assert_eq!(RttStats::from_samples(vec![3.0, 1.0, 2.0]).p50_ms, 2.0);
    }
}
