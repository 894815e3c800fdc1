//! `tcpwise emu shell|pair|selftest|clean`.

use crate::exit;
use crate::link_args::LinkArgs;
use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tcpwise_emu::path::summarize;
use tcpwise_emu::selftest::{self, SelftestOptions, SelftestReport};
use tcpwise_emu::{DirectionStats, EmuError, Role, Testbed, TestbedConfig, Topology};

#[derive(Debug, Subcommand)]
pub enum EmuCommand {
    /// Run CMD in a client namespace whose far end, through the emulated link, is this host.
    ///
    /// The host is reachable at $TCPWISE_PEER (IPv6: $TCPWISE_PEER6), so a server
    /// listening on the host (iperf3 -s, nginx) is reached through the link.
    /// Without CMD, runs $SHELL. Exit status is CMD's.
    ///
    /// Example: tcpwise emu shell --rtt 100ms --rate 50mbit -- iperf3 -c '$TCPWISE_PEER' -R
    #[command(verbatim_doc_comment)]
    Shell(ShellArgs),
    /// Run a server command and a client command in two namespaces joined by the emulated link.
    ///
    /// The server runs `sh -c CMD` at 198.18.0.2 (2001:2::2); the client command
    /// starts once the server listens, with $TCPWISE_PEER set to the server.
    /// Exit status is the client's; the server is stopped afterwards.
    ///
    /// Example: tcpwise emu pair --rtt 250ms --rate 8mbit --server 'python3 -m http.server 8000' \
    ///            -- sh -c 'curl -s http://$TCPWISE_PEER:8000/ >/dev/null'
    #[command(verbatim_doc_comment)]
    Pair(PairArgs),
    /// Measure the emulator against its own configuration on this machine.
    ///
    /// Times round trips of 100-byte TCP messages, a bulk download and RTT under
    /// load over a pair testbed, and prints configured vs measured with the
    /// forwarder's lateness. Default path: --rtt 40ms --rate 100mbit.
    Selftest(SelftestArgs),
    /// Remove tw-* namespaces and devices whose owning process is gone.
    Clean,
}

#[derive(Debug, Args)]
pub struct Common {
    #[command(flatten)]
    pub link: LinkArgs,
    /// Sysctl for the client namespace (net.* keys), repeatable.
    #[arg(long = "client-sysctl", value_name = "KEY=VALUE", value_parser = kv)]
    pub client_sysctl: Vec<(String, String)>,
    /// Write per-direction statistics as JSON to FILE on exit.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Do not print the per-direction summary on exit.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ShellArgs {
    #[command(flatten)]
    pub common: Common,
    /// Command and arguments (default: $SHELL).
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PairArgs {
    #[command(flatten)]
    pub common: Common,
    /// Sysctl for the server namespace, e.g. net.ipv4.tcp_slow_start_after_idle=0; repeatable.
    #[arg(long = "server-sysctl", value_name = "KEY=VALUE", value_parser = kv)]
    pub server_sysctl: Vec<(String, String)>,
    /// Server command, run with `sh -c` in the server namespace.
    #[arg(long, value_name = "CMD")]
    pub server: String,
    /// Start the client once this TCP port listens in the server namespace [default: any port].
    #[arg(long, value_name = "PORT")]
    pub wait_port: Option<u16>,
    /// Give up if the server does not listen within this time.
    #[arg(long, default_value = "10s", value_parser = |s: &str| tcpwise_link::units::parse_duration(s).map_err(|e| e.to_string()), value_name = "TIME")]
    pub wait_timeout: u64,
    /// Client command and arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SelftestArgs {
    #[command(flatten)]
    pub link: LinkArgs,
    /// Idle round trips to time.
    #[arg(long, default_value_t = 100)]
    pub samples: usize,
    /// Length of the bulk download.
    #[arg(long, default_value = "5s", value_parser = |s: &str| tcpwise_link::units::parse_duration(s).map_err(|e| e.to_string()), value_name = "TIME")]
    pub bulk: u64,
    /// Print the report as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn kv(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| {
        format!("'{s}' is not KEY=VALUE (e.g. net.ipv4.tcp_slow_start_after_idle=0)")
    })?;
    tcpwise_emu::netns::sysctl_path(k.trim()).map_err(|e| e.to_string())?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

/// Signal number received (0 = none).
fn signals() -> Arc<AtomicUsize> {
    let got = Arc::new(AtomicUsize::new(0));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register_usize(sig, got.clone(), sig as usize);
    }
    got
}

fn code_for(e: &anyhow::Error) -> i32 {
    match e.downcast_ref::<EmuError>() {
        Some(EmuError::Privileges(_) | EmuError::Missing(_)) => exit::PRIVILEGES,
        Some(EmuError::Config(_)) => exit::USAGE,
        Some(EmuError::Interrupted) => 130,
        Some(EmuError::Setup(_)) => exit::EMULATOR,
        _ => exit::FAILURE,
    }
}

fn fail(e: anyhow::Error) -> i32 {
    eprintln!("tcpwise: error: {e:#}");
    code_for(&e)
}

pub fn run(cmd: EmuCommand) -> i32 {
    let r = match cmd {
        EmuCommand::Shell(a) => run_shell(a),
        EmuCommand::Pair(a) => run_pair(a),
        EmuCommand::Selftest(a) => run_selftest(a),
        EmuCommand::Clean => run_clean(),
    };
    r.unwrap_or_else(fail)
}

fn config(
    common: &Common,
    topology: Topology,
    server: Vec<(String, String)>,
) -> Result<TestbedConfig> {
    let (up, down) = common.link.spec().resolve()?;
    Ok(TestbedConfig {
        topology,
        up,
        down,
        client_sysctls: common.client_sysctl.clone(),
        server_sysctls: server,
    })
}

fn run_clean() -> Result<i32> {
    tcpwise_emu::testbed::check_privileges()?;
    let removed = tcpwise_emu::clean::clean_stale()?;
    if removed.is_empty() {
        eprintln!("tcpwise: nothing to clean");
    }
    for r in removed {
        println!("removed {r}");
    }
    Ok(0)
}

/// How a supervised command ended.
enum Outcome {
    Exited(i32),
    Signalled(usize),
    ForwarderDied,
}

/// Makes the child its own process group and, on a terminal, the
/// foreground one, so Ctrl-C at an interactive prompt goes to the child
/// (which may ignore it) rather than tearing the testbed down.
fn own_group(cmd: &mut std::process::Command, foreground: bool) {
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            if foreground {
                libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                libc::tcsetpgrp(0, libc::getpid());
                libc::signal(libc::SIGTTOU, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

struct Terminal(Option<libc::pid_t>);

impl Terminal {
    fn take(child: &Child) -> Terminal {
        if !std::io::stdin().is_terminal() {
            return Terminal(None);
        }
        // SAFETY: plain calls on fd 0.
        unsafe {
            let ours = libc::getpgrp();
            libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            libc::tcsetpgrp(0, child.id() as libc::pid_t);
            Terminal(Some(ours))
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Some(pg) = self.0 {
            // SAFETY: plain call on fd 0; SIGTTOU is ignored.
            unsafe { libc::tcsetpgrp(0, pg) };
        }
    }
}

fn status_code(s: std::process::ExitStatus) -> i32 {
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

/// Stops a process group: `sig`, then SIGKILL after a grace period.
fn stop_group(child: &mut Child, sig: i32) -> Option<std::process::ExitStatus> {
    let pg = child.id() as i32;
    tcpwise_emu::sys::kill(-pg, sig);
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        if let Ok(Some(s)) = child.try_wait() {
            tcpwise_emu::sys::kill(-pg, libc::SIGKILL);
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    tcpwise_emu::sys::kill(-pg, libc::SIGKILL);
    child.wait().ok()
}

fn supervise(
    tb: &Testbed,
    child: &mut Child,
    sig: &AtomicUsize,
    server: Option<&mut Child>,
) -> Outcome {
    let mut server = server;
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            // The group may still hold children of CMD: stop them too.
            tcpwise_emu::sys::kill(-(child.id() as i32), libc::SIGTERM);
            return Outcome::Exited(status_code(s));
        }
        let s = sig.load(Ordering::Relaxed);
        if s != 0 {
            stop_group(child, s as i32);
            return Outcome::Signalled(s);
        }
        if tb.failed() {
            stop_group(child, libc::SIGTERM);
            return Outcome::ForwarderDied;
        }
        if let Some(srv) = server.as_deref_mut()
            && let Ok(Some(st)) = srv.try_wait()
        {
            eprintln!("tcpwise: warning: the server command exited ({st}) while the client runs");
            server = None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn finish(tb: Testbed, common: &Common, cfg: &TestbedConfig, outcome: Outcome) -> Result<i32> {
    let stats = tb.shutdown()?;
    report_stats(&stats, common, cfg)?;
    match outcome {
        Outcome::Exited(c) => Ok(c),
        Outcome::Signalled(s) => Ok(128 + s as i32),
        Outcome::ForwarderDied => {
            let why = stats
                .iter()
                .find_map(|d| d.failure.clone())
                .unwrap_or_else(|| "unknown reason".into());
            Err(anyhow::Error::new(EmuError::Setup(format!(
                "the emulator stopped ({why}); the testbed was torn down"
            ))))
        }
    }
}

fn report_stats(stats: &[DirectionStats; 2], common: &Common, cfg: &TestbedConfig) -> Result<()> {
    if !common.quiet {
        for d in stats {
            eprintln!("tcpwise emu {}", d.summary_line());
        }
    }
    if let Some(path) = &common.stats_json {
        let v = serde_json::json!({
            "path": summarize(&cfg.up, &cfg.down),
            "directions": stats,
        });
        std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn spawn_err(program: &str, e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        anyhow!("cannot run '{program}': command not found")
    } else {
        anyhow!("cannot run '{program}': {e}")
    }
}

fn run_shell(a: ShellArgs) -> Result<i32> {
    if tcpwise_emu::sys::euid() != 0 {
        return Err(anyhow::Error::new(EmuError::Privileges(
            "tcpwise emu shell needs root: its far end is this host's own network namespace (run it with sudo, or use 'tcpwise emu pair', which works rootless where the kernel allows)".into(),
        )));
    }
    let sig = signals();
    let cfg = config(&a.common, Topology::Shell, Vec::new())?;
    let tb = Testbed::start(&cfg)?;
    if let s @ 1.. = sig.load(Ordering::Relaxed) {
        let _ = tb.shutdown();
        return Ok(128 + s as i32);
    }
    let argv = if a.cmd.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        a.cmd.clone()
    };
    let mut cmd = tb.command(Role::Client, &argv[0])?;
    cmd.args(&argv[1..]);
    let fg = std::io::stdin().is_terminal();
    own_group(&mut cmd, fg);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = tb.shutdown();
            return Err(spawn_err(&argv[0], e));
        }
    };
    let term = Terminal::take(&child);
    let outcome = supervise(&tb, &mut child, &sig, None);
    drop(term);
    finish(tb, &a.common, &cfg, outcome)
}

fn run_pair(a: PairArgs) -> Result<i32> {
    tcpwise_emu::rootless::enter_if_unprivileged()?;
    let sig = signals();
    let cfg = config(&a.common, Topology::Pair, a.server_sysctl.clone())?;
    let tb = Testbed::start(&cfg)?;
    let mut server_cmd = tb.command(Role::Server, "sh")?;
    server_cmd.arg("-c").arg(&a.server).stdin(Stdio::null());
    // The server's stdout goes to our stderr so the client's stdout stays clean.
    if let Ok(fd) = std::io::stderr().as_fd_dup() {
        server_cmd.stdout(fd);
    }
    own_group(&mut server_cmd, false);
    let mut server = match server_cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = tb.shutdown();
            return Err(spawn_err("sh", e));
        }
    };
    let ready = wait_listening(&tb, &mut server, a.wait_port, a.wait_timeout, &sig);
    if let Err(e) = ready {
        stop_group(&mut server, libc::SIGTERM);
        let stats = tb.shutdown()?;
        report_stats(&stats, &a.common, &cfg)?;
        return match sig.load(Ordering::Relaxed) {
            0 => Err(e),
            s => Ok(128 + s as i32),
        };
    }
    let mut cmd = tb.command(Role::Client, &a.cmd[0])?;
    cmd.args(&a.cmd[1..]);
    let fg = std::io::stdin().is_terminal();
    own_group(&mut cmd, fg);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            stop_group(&mut server, libc::SIGTERM);
            let _ = tb.shutdown();
            return Err(spawn_err(&a.cmd[0], e));
        }
    };
    let term = Terminal::take(&child);
    let outcome = supervise(&tb, &mut child, &sig, Some(&mut server));
    drop(term);
    stop_group(&mut server, libc::SIGTERM);
    finish(tb, &a.common, &cfg, outcome)
}

fn wait_listening(
    tb: &Testbed,
    server: &mut Child,
    port: Option<u16>,
    timeout_ns: u64,
    sig: &AtomicUsize,
) -> Result<()> {
    let ns = tb.netns(Role::Server).expect("pair has a server namespace");
    let until = Instant::now() + Duration::from_nanos(timeout_ns);
    loop {
        if ns.listening(port)? {
            return Ok(());
        }
        if let Ok(Some(st)) = server.try_wait() {
            return Err(anyhow!("the server command exited ({st}) before listening"));
        }
        if sig.load(Ordering::Relaxed) != 0 {
            return Err(anyhow::Error::new(EmuError::Interrupted));
        }
        if Instant::now() > until {
            let what = port.map_or("any TCP port".to_string(), |p| format!("TCP port {p}"));
            return Err(anyhow!(
                "the server did not listen on {what} within {:.0} s (set --wait-port or --wait-timeout)",
                timeout_ns as f64 / 1e9
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run_selftest(a: SelftestArgs) -> Result<i32> {
    tcpwise_emu::rootless::enter_if_unprivileged()?;
    let sig = signals();
    let mut link = a.link.clone();
    let unset = link.rtt.is_none()
        && link.delay.is_none()
        && link.up_delay.is_none()
        && link.down_delay.is_none()
        && link.rate.is_none()
        && link.up_rate.is_none()
        && link.down_rate.is_none()
        && link.up_trace.is_none()
        && link.down_trace.is_none();
    if unset {
        link.rtt = Some(40_000_000);
        link.rate = Some(100_000_000);
    }
    let (up, down) = link.spec().resolve()?;
    if a.samples == 0 {
        return Err(anyhow::Error::new(EmuError::Config(
            "--samples must be at least 1".into(),
        )));
    }
    let opts = SelftestOptions {
        testbed: TestbedConfig {
            topology: Topology::Pair,
            up,
            down,
            client_sysctls: Vec::new(),
            server_sysctls: Vec::new(),
        },
        rtt_samples: a.samples,
        bulk: Duration::from_nanos(a.bulk.max(1_000_000_000)),
    };
    let quiet = a.json;
    let progress = |s: &str| {
        if !quiet {
            eprintln!("tcpwise emu selftest: {s}");
        }
    };
    let sig2 = sig.clone();
    let cancelled = move || sig2.load(Ordering::Relaxed) != 0;
    let r = match selftest::run(&opts, &progress, &cancelled) {
        Err(EmuError::Interrupted) => return Ok(128 + sig.load(Ordering::Relaxed) as i32),
        r => r?,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print_selftest(&r);
    }
    Ok(0)
}

fn print_selftest(r: &SelftestReport) {
    println!("path: {}", r.path);
    println!("{:<28} {:>12} {:>12}", "", "model", "measured");
    println!(
        "{:<28} {:>9.2} ms {:>9.2} ms  (error {:+.2} ms; p99 {:.2}, min {:.2}, max {:.2}; {} samples)",
        "idle RTT (median)",
        r.expected_idle_rtt_ms,
        r.idle_rtt.p50_ms,
        r.rtt_error_ms,
        r.idle_rtt.p99_ms,
        r.idle_rtt.min_ms,
        r.idle_rtt.max_ms,
        r.idle_rtt.samples
    );
    match r.ceiling_mbit {
        Some(c) => println!(
            "{:<28} {:>7.2} Mbit/s {:>7.2} Mbit/s  ({:.1}% of payload ceiling; whole run {:.2})",
            "goodput (down, median 1 s)",
            c,
            r.steady_goodput_mbit,
            100.0 * r.steady_goodput_mbit / c,
            r.goodput_mbit
        ),
        None => println!(
            "{:<28} {:>12} {:>7.2} Mbit/s  (whole run {:.2}; rate unlimited: this is the forwarder's ceiling)",
            "goodput (down, median 1 s)", "unlimited", r.steady_goodput_mbit, r.goodput_mbit
        ),
    }
    match r.loaded_rtt_bound_ms {
        Some(_) if !r.loss.is_empty() => println!(
            "{:<28} {:>12} {:>9.2} ms  (max; p50 {:.2}; with loss, retransmission timeouts exceed the queue bound)",
            "RTT under load", "-", r.loaded_rtt.max_ms, r.loaded_rtt.p50_ms
        ),
        Some(b) => println!(
            "{:<28} {:>9.2} ms {:>9.2} ms  (max; p50 {:.2}; bound = RTT + queue/rate; {} samples)",
            "RTT under load (bound)",
            b,
            r.loaded_rtt.max_ms,
            r.loaded_rtt.p50_ms,
            r.loaded_rtt.samples
        ),
        None => println!(
            "{:<28} {:>12} {:>9.2} ms  (max; p50 {:.2})",
            "RTT under load", "-", r.loaded_rtt.max_ms, r.loaded_rtt.p50_ms
        ),
    }
    for l in &r.loss {
        let iv = l
            .interval
            .map(|(lo, hi)| {
                format!(
                    "99.9% interval {:.3}-{:.3}%: {}",
                    lo * 100.0,
                    hi * 100.0,
                    if l.within == Some(true) {
                        "inside"
                    } else {
                        "OUTSIDE"
                    }
                )
            })
            .unwrap_or_else(|| "correlated model: no binomial interval".into());
        println!(
            "{:<28} {:>10.3} % {:>10.3} %  ({} of {} packets; {iv})",
            format!("loss ({})", l.direction),
            l.configured * 100.0,
            l.measured * 100.0,
            l.lost,
            l.offered
        );
    }
    for (i, d) in r.directions.iter().enumerate() {
        let (idle, bulk) = (&r.idle_lateness[i], &r.bulk_lateness[i]);
        println!(
            "forwarder {:<5} lateness idle p50 {:.1} µs p99 {:.1} µs max {:.1} µs; bulk p50 {:.1} µs p99 {:.1} µs max {:.1} µs",
            d.direction,
            idle.p50_us,
            idle.p99_us,
            idle.max_us,
            bulk.p50_us,
            bulk.p99_us,
            bulk.max_us
        );
        println!(
            "forwarder {:<5} lateness p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs over {} packets; drops queue {} loss {}; peak queue {:.1} KB; cpu {:.1}% of a core",
            d.direction,
            d.lateness.p50_us,
            d.lateness.p99_us,
            d.lateness.max_us,
            d.lateness.samples,
            d.link.dropped_queue,
            d.link.dropped_loss,
            d.link.peak_queue_bytes as f64 / 1e3,
            d.cpu_percent()
        );
    }
}

trait DupFd {
    fn as_fd_dup(&self) -> std::io::Result<std::os::fd::OwnedFd>;
}

impl DupFd for std::io::Stderr {
    fn as_fd_dup(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::AsFd;
        self.as_fd().try_clone_to_owned()
    }
}
