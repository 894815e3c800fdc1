//! `tcpwise emu shell|pair|selftest|clean`: flags in, `tcpwise_emu::session` does the work.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;
use tcpwise_emu::forwarder::{Faults, ForwarderOptions};
use tcpwise_emu::netns::Sysctl;
use tcpwise_emu::path::{PathSpec, summarize};
use tcpwise_emu::record::{ConfigArgs, RecordArgs};
use tcpwise_emu::selftest::{self, SelftestOptions};
use tcpwise_emu::session::{Outcome, RunAs, Session, server_stdio};
use tcpwise_emu::{DirectionStats, EmuError, Role, TestbedConfig, Topology};
use tcpwise_units::Dur;

#[derive(Debug, Subcommand)]
pub enum EmuCommand {
    /// Run CMD in a client namespace whose far end, through the emulated link, is this host.
    ///
    /// The host is reachable at $TCPWISE_PEER (IPv6: $TCPWISE_PEER6), so a server
    /// listening on the host (iperf3 -s, nginx) is reached through the link.
    /// Without CMD, runs $SHELL. Exit status is CMD's.
    ///
    /// Example: tcpwise emu shell --rtt 100ms --rate 50mbit -- sh -c 'iperf3 -c $TCPWISE_PEER -R'
    #[command(verbatim_doc_comment, args_override_self = true)]
    Shell(ShellArgs),
    /// Run a server command and a client command in two namespaces joined by the emulated link.
    ///
    /// The server runs `sh -c CMD` at 198.18.0.2 (2001:2::2); the client command
    /// starts once the server listens, with $TCPWISE_PEER set to the server.
    /// Exit status is the client's; the server is stopped afterwards.
    ///
    /// Example: tcpwise emu pair --rtt 250ms --rate 8mbit --server 'python3 -m http.server 8000' \
    ///            -- sh -c 'curl -s http://$TCPWISE_PEER:8000/ >/dev/null'
    #[command(verbatim_doc_comment, args_override_self = true)]
    Pair(PairArgs),
    /// Measure the emulator against its own configuration on this machine.
    ///
    /// Times round trips of 100-byte TCP messages, a bulk download and RTT under
    /// load over a pair testbed, and prints configured vs measured with the
    /// forwarder's lateness. Default path: --rtt 40ms --rate 100mbit.
    ///
    /// Under load, numbered UDP probes (every 50 ms) are held to the queue's
    /// bound, RTT + (queue + MTU)/rate: a dropped probe counts as lost, where
    /// a TCP echo would wait for TCP's loss recovery (its figure is printed
    /// beside, not held to the bound). Loss, reorder, duplicate and corrupt
    /// are checked against their binomial 99.9 % interval; on/off and policer
    /// drops, AQM drops, CE marks and the time packets spent in the queue are
    /// counted per direction. Queue disciplines compared (--queue KIND, -C
    /// cubic, --flows 2): scripts/aqm-table and the README's table.
    ///
    /// Example: tcpwise emu selftest --rtt 40ms --rate 20mbit --queue codel:limit=400KB -C cubic
    #[command(verbatim_doc_comment, args_override_self = true)]
    Selftest(SelftestArgs),
    /// Draw what a link did, from the logs `--log DIR` wrote (or Mahimahi's own).
    ///
    /// One picture per direction: throughput against capacity in bins (as
    /// mm-throughput-graph) and each packet's time in the link at its departure
    /// (as mm-delay-graph), with drops and CE marks; the figures
    /// mm-throughput-graph prints go to stderr. -o FILE.svg or FILE.html.
    ///
    /// Example: tcpwise emu pair --rtt 40ms --rate 20mbit --log run1 --server 'tcpwise perf server' \
    ///            -- sh -c 'tcpwise perf client -R $TCPWISE_PEER' && tcpwise emu plot run1 -o run1.html
    #[command(verbatim_doc_comment)]
    Plot(PlotArgs),
    /// Remove tw-* namespaces and devices whose owning process is gone.
    Clean,
}

#[derive(Debug, Args)]
pub struct Common {
    #[command(flatten)]
    pub link: PathSpec,
    #[command(flatten)]
    pub record: RecordArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Sysctl for the client namespace (net.* keys), repeatable.
    #[arg(long = "client-sysctl", value_name = "KEY=VALUE")]
    pub client_sysctl: Vec<Sysctl>,
    /// Write per-direction statistics as JSON to FILE on exit.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Do not print the per-direction summary on exit.
    #[arg(short, long)]
    pub quiet: bool,
    /// Under sudo, run CMD (and --server) as root instead of as the user who
    /// invoked sudo (SUDO_UID/SUDO_GID, supplementary groups dropped, the
    /// default, as Mahimahi does). The forwarder always keeps root.
    #[arg(long)]
    pub as_root: bool,
    /// Make the forwarder panic after N packets (tests of the teardown).
    #[arg(long, hide = true, value_name = "N")]
    pub inject_panic_after: Option<u64>,
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
    #[arg(long = "server-sysctl", value_name = "KEY=VALUE")]
    pub server_sysctl: Vec<Sysctl>,
    /// Server command, run with `sh -c` in the server namespace.
    #[arg(long, value_name = "CMD")]
    pub server: String,
    /// Start the client once this TCP port listens in the server namespace [default: any port].
    #[arg(long, value_name = "PORT")]
    pub wait_port: Option<u16>,
    /// Give up if the server does not listen within this time.
    #[arg(long, default_value = "10s", value_name = "TIME")]
    pub wait_timeout: Dur,
    /// Client command and arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Directory holding up.log and/or down.log (or a single log file).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Output: FILE.svg or FILE.html.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Throughput bin (mm-throughput-graph's MS_PER_BIN).
    #[arg(long, default_value = "100ms", value_name = "TIME")]
    pub bin: Dur,
}

#[derive(Debug, Args)]
pub struct SelftestArgs {
    #[command(flatten)]
    pub link: PathSpec,
    #[command(flatten)]
    pub record: RecordArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Idle round trips to time.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub samples: u32,
    /// Length of the bulk download (at least 1s).
    #[arg(long, default_value = "5s", value_name = "TIME")]
    pub bulk: Dur,
    /// Parallel bulk downloads (2 shows whether a fair queue, fq-codel,
    /// keeps the RTT probes' flow apart from the bulk ones).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub flows: u32,
    /// Congestion control of the test's sockets, both ends (TCP_CONGESTION),
    /// e.g. cubic: a namespace may only default to what the host allows
    /// (net.ipv4.tcp_allowed_congestion_control), a socket may use any
    /// available one. BBR keeps its own queue short and hides bufferbloat.
    #[arg(short = 'C', long, value_name = "ALGO")]
    pub congestion: Option<String>,
    /// Sysctl for both namespaces, repeatable, e.g. net.ipv4.tcp_ecn=1.
    #[arg(long = "sysctl", value_name = "KEY=VALUE")]
    pub sysctl: Vec<Sysctl>,
    /// Print the report as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: EmuCommand, m: Option<&clap::ArgMatches>) -> Result<i32> {
    let print = match &cmd {
        EmuCommand::Shell(a) => a.common.config.print_config,
        EmuCommand::Pair(a) => a.common.config.print_config,
        EmuCommand::Selftest(a) => a.config.print_config,
        _ => false,
    };
    if print && let Some((_, sub)) = m.and_then(|m| m.subcommand()) {
        print!("{}", tcpwise_emu::config::effective(sub));
        return Ok(0);
    }
    match cmd {
        EmuCommand::Shell(a) => shell(a),
        EmuCommand::Pair(a) => pair(a),
        EmuCommand::Selftest(a) => run_selftest(a),
        EmuCommand::Plot(a) => plot(a),
        EmuCommand::Clean => {
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
    }
}

fn plot(a: PlotArgs) -> Result<i32> {
    use tcpwise_emu::plot::{LinkLog, PlotOptions};
    let ext = a.output.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext != "svg" && ext != "html" {
        return Err(crate::Usage(format!(
            "-o {}: give a .svg or .html file",
            a.output.display()
        ))
        .into());
    }
    let (up, down) = if a.dir.is_file() {
        (None, Some(LinkLog::load(&a.dir)?))
    } else {
        let load = |n: &str| {
            let p = a.dir.join(n);
            p.exists().then(|| LinkLog::load(&p)).transpose()
        };
        let (u, d) = (load("up.log")?, load("down.log")?);
        if u.is_none() && d.is_none() {
            return Err(crate::Usage(format!(
                "{}: no up.log or down.log here (write them with --log DIR)",
                a.dir.display()
            ))
            .into());
        }
        (u, d)
    };
    let bin_ms = (a.bin.0 / 1_000_000).max(1);
    let mut summary = Vec::new();
    for (n, l) in [("up", &up), ("down", &down)] {
        if let Some(l) = l {
            let s = tcpwise_emu::plot::summary(n, l);
            eprintln!("tcpwise emu plot: {s}");
            summary.push(s);
        }
    }
    let svg = tcpwise_emu::plot::svg(up.as_ref(), down.as_ref(), &PlotOptions { bin_ms });
    let out = if ext == "html" {
        tcpwise_emu::plot::html(&svg, &summary.join("\n"))
    } else {
        svg
    };
    std::fs::write(&a.output, out)
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    eprintln!("tcpwise emu plot: wrote {}", a.output.display());
    Ok(0)
}

/// An unwritable --log/--pcap DIR fails first: before privileges are
/// checked and before anything is set up.
fn check_record(r: &RecordArgs) -> Result<()> {
    let o = r.options();
    if o.any() {
        o.open()?;
    }
    Ok(())
}

fn pairs(v: &[Sysctl]) -> Vec<(String, String)> {
    v.iter().map(|s| (s.0.clone(), s.1.clone())).collect()
}

fn config(c: &Common, topology: Topology, server: Vec<(String, String)>) -> Result<TestbedConfig> {
    let (up, down) = c.link.resolve()?;
    let record = c.record.options();
    for w in tcpwise_emu::path::warnings(&up, &down) {
        eprintln!("tcpwise: warning: {w}");
    }
    if !c.quiet {
        eprintln!("tcpwise emu: {}", tcpwise_emu::testbed::sysctl_notice());
    }
    // Found before anything is set up, not after CMD ran.
    if let Some(p) = &c.stats_json {
        std::fs::File::create(p)
            .map_err(|e| crate::Usage(format!("--stats-json {}: {e}", p.display())))?;
    }
    let mut cfg = TestbedConfig::pair(up, down);
    cfg.topology = topology;
    cfg.client_sysctls = pairs(&c.client_sysctl);
    cfg.server_sysctls = server;
    cfg.record = record;
    cfg.forwarder = ForwarderOptions {
        // The edge reads the environment; the library takes it in code.
        realtime: std::env::var_os("TCPWISE_NO_RT").is_none(),
        faults: Faults {
            panic_after: c.inject_panic_after,
        },
    };
    Ok(cfg)
}

/// Tears down, prints the statistics, and turns the outcome into a status.
fn finish(s: Session, c: &Common, cfg: &TestbedConfig, outcome: Outcome) -> Result<i32> {
    let stats = s.finish()?;
    report_stats(&stats, c, cfg)?;
    Ok(Session::exit_status(&outcome, &stats)?)
}

fn report_stats(stats: &[DirectionStats; 2], c: &Common, cfg: &TestbedConfig) -> Result<()> {
    if !c.quiet {
        for d in stats {
            eprintln!("tcpwise emu {}", d.summary_line());
        }
    }
    if let Some(path) = &c.stats_json {
        let v = serde_json::json!({
            "path": summarize(&cfg.up, &cfg.down),
            "directions": stats,
        });
        std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn shell(a: ShellArgs) -> Result<i32> {
    check_record(&a.common.record)?;
    if tcpwise_emu::sys::euid() != 0 {
        return Err(EmuError::Privileges(
            "tcpwise emu shell needs root: its far end is this host's own network namespace (run it with sudo, or use 'tcpwise emu pair', which works rootless where the kernel allows)".into(),
        ).into());
    }
    let who = run_as(&a.common)?;
    let cfg = config(&a.common, Topology::Shell, Vec::new())?;
    let mut s = Session::start(&cfg, tcpwise_emu::session::watch_signals())?;
    s.run_as(who);
    if let Some(n) = s.signalled() {
        let _ = s.finish();
        return Ok(128 + n);
    }
    let argv = if a.cmd.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        a.cmd.clone()
    };
    let mut child = match s.spawn(Role::Client, &argv, std::io::stdin().is_terminal(), |_| {}) {
        Ok(c) => c,
        Err(e) => {
            let _ = s.finish();
            return Err(e.into());
        }
    };
    let outcome = s.supervise(&mut child, None);
    drop(child);
    finish(s, &a.common, &cfg, outcome)
}

/// Who CMD runs as: the sudo user unless --as-root (said on stderr unless -q).
fn run_as(c: &Common) -> Result<Option<RunAs>> {
    if c.as_root {
        return Ok(None);
    }
    let who = RunAs::from_sudo_env()?;
    if let Some(w) = &who
        && !c.quiet
    {
        eprintln!(
            "tcpwise emu: commands run as uid {} gid {} (SUDO_UID/SUDO_GID; --as-root keeps root); the forwarder keeps root",
            w.uid, w.gid
        );
    }
    Ok(who)
}

fn pair(a: PairArgs) -> Result<i32> {
    check_record(&a.common.record)?;
    // Before a rootless user namespace is entered (there is no sudo user then).
    let who = run_as(&a.common)?;
    tcpwise_emu::rootless::enter_if_unprivileged()?;
    let cfg = config(&a.common, Topology::Pair, pairs(&a.server_sysctl))?;
    let mut s = Session::start(&cfg, tcpwise_emu::session::watch_signals())?;
    s.run_as(who);
    let argv = ["sh".to_string(), "-c".into(), a.server.clone()];
    let mut server = match s.spawn(Role::Server, &argv, false, server_stdio) {
        Ok(p) => p,
        Err(e) => {
            let _ = s.finish();
            return Err(e.into());
        }
    };
    if let Err(e) = s.wait_listening(&mut server, a.wait_port, a.wait_timeout.std()) {
        drop(server);
        let signalled = s.signalled();
        let stats = s.finish()?;
        report_stats(&stats, &a.common, &cfg)?;
        return match signalled {
            Some(n) => Ok(128 + n),
            None => Err(e.into()),
        };
    }
    let fg = std::io::stdin().is_terminal();
    let mut child = match s.spawn(Role::Client, &a.cmd, fg, |_| {}) {
        Ok(c) => c,
        Err(e) => {
            drop(server);
            let _ = s.finish();
            return Err(e.into());
        }
    };
    let outcome = s.supervise(&mut child, Some(&mut server));
    drop(child);
    drop(server);
    finish(s, &a.common, &cfg, outcome)
}

fn run_selftest(a: SelftestArgs) -> Result<i32> {
    check_record(&a.record)?;
    tcpwise_emu::rootless::enter_if_unprivileged()?;
    let sig = tcpwise_emu::session::watch_signals();
    let (up, down) = a.link.or_selftest_default().resolve()?;
    let mut testbed = TestbedConfig::pair(up, down);
    testbed.client_sysctls = pairs(&a.sysctl);
    testbed.server_sysctls = pairs(&a.sysctl);
    testbed.record = a.record.options();
    let opts = SelftestOptions {
        testbed,
        rtt_samples: a.samples as usize,
        bulk: Duration::from_nanos(a.bulk.0.max(1_000_000_000)),
        flows: a.flows as usize,
        congestion: a.congestion.clone(),
    };
    let quiet = a.json;
    let progress = |s: &str| {
        if !quiet {
            eprintln!("tcpwise emu selftest: {s}");
        }
    };
    let sig2 = sig.clone();
    let cancelled = move || sig2.load(std::sync::atomic::Ordering::Relaxed) != 0;
    let r = match selftest::run(&opts, &progress, &cancelled) {
        Err(EmuError::Interrupted) => {
            return Ok(128 + sig.load(std::sync::atomic::Ordering::Relaxed) as i32);
        }
        r => r?,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{r}");
    }
    Ok(0)
}
