//! The `emu` commands as one call each: `shell`, `pair`, `selftest`,
//! `plot`, `clean`. Each refuses bad input before anything is set up
//! (an unwritable `--log` or `--stats-json`, a missing root for `shell`),
//! sets the testbed up, runs the commands in it under supervision, tears
//! it down, and turns the outcome into the exit status the user sees
//! (the command's own, or 128+N after signal N); `pair --testbeds N` does
//! it for N testbeds at once ([`crate::testbeds`]). The binary parses the
//! flags and calls these.

use crate::flags::{Common, PairArgs, PlotArgs, SelftestArgs, ShellArgs};
use crate::forwarder::{Faults, ForwarderOptions};
use crate::netns::Sysctl;
use crate::path::summarize;
use crate::record::RecordArgs;
use crate::selftest::{self, SelftestOptions, SelftestReport};
use crate::session::{Outcome, Process, RunAs, Session, server_stdio};
use crate::{DirectionStats, EmuError, Kind, Role, TestbedConfig, Topology};
use std::io::IsTerminal;
use std::time::Duration;

pub(crate) fn write(path: &std::path::Path, text: String) -> Result<(), EmuError> {
    std::fs::write(path, text).map_err(|source| EmuError::Output {
        what: format!("cannot write {}", path.display()),
        source,
    })
}

/// `emu clean`: removes `tw-*` namespaces whose process is gone; their names.
pub fn clean() -> Result<Vec<String>, EmuError> {
    crate::testbed::check_privileges()?;
    crate::clean::clean_stale()
}

/// `emu plot`: draws the logs of `--log DIR` into an SVG or HTML file.
pub fn plot(a: PlotArgs) -> Result<i32, EmuError> {
    use crate::plot::{LinkLog, PlotOptions};
    let ext = match &a.output {
        None => "svg",
        Some(o) => o.extension().and_then(|e| e.to_str()).unwrap_or(""),
    };
    if let Some(o) = a.output.as_ref().filter(|_| ext != "svg" && ext != "html") {
        return Err(EmuError::Config(format!(
            "-o {}: give a .svg or .html file",
            o.display()
        )));
    }
    let (up, down) = if a.dir.extension().is_some_and(|e| e == "json") {
        let (svg, summary) = plot_flows(&a.dir)?;
        return emit_plot(&a, ext, svg, summary);
    } else if a.dir.is_file() {
        (None, Some(LinkLog::load(&a.dir)?))
    } else {
        let load = |n: &str| {
            let p = a.dir.join(n);
            p.exists().then(|| LinkLog::load(&p)).transpose()
        };
        let (u, d) = (load("up.log")?, load("down.log")?);
        if u.is_none() && d.is_none() {
            return Err(EmuError::Config(format!(
                "{}: no up.log or down.log here (write them with --log DIR)",
                a.dir.display()
            )));
        }
        (u, d)
    };
    let bin_ms = (a.bin.0 / 1_000_000).max(1);
    let mut summary = Vec::new();
    for (n, l) in [("up", &up), ("down", &down)] {
        if let Some(l) = l {
            let s = crate::plot::summary(n, l);
            eprintln!("tcpwise emu plot: {s}");
            summary.push(s);
        }
    }
    let svg = crate::plot::svg(up.as_ref(), down.as_ref(), &PlotOptions { bin_ms });
    emit_plot(&a, ext, svg, summary)
}

/// A topology run's flows: the SVG and its summary lines.
fn plot_flows(file: &std::path::Path) -> Result<(String, Vec<String>), EmuError> {
    use crate::plot::flows::RunFile;
    let text = std::fs::read_to_string(file).map_err(|e| {
        EmuError::caused(Kind::Config, format!("cannot read {}", file.display()), e)
    })?;
    let run =
        RunFile::parse(&text).map_err(|e| EmuError::Config(format!("{}: {e}", file.display())))?;
    let summary = run.summary();
    if summary.is_empty() {
        return Err(EmuError::Config(format!(
            "{}: no flow carried 64 KB or more: nothing to draw",
            file.display()
        )));
    }
    for s in &summary {
        eprintln!("tcpwise emu plot: {s}");
    }
    Ok((crate::plot::flows::svg(&run), summary))
}

/// Writes the SVG (or the HTML page around it) where `-o` says.
fn emit_plot(a: &PlotArgs, ext: &str, svg: String, summary: Vec<String>) -> Result<i32, EmuError> {
    let out = if ext == "html" {
        crate::plot::html(&svg, &summary.join("\n"))
    } else {
        svg
    };
    match &a.output {
        Some(o) => {
            write(o, out)?;
            eprintln!("tcpwise emu plot: wrote {}", o.display());
        }
        None => {
            use std::io::Write as _;
            std::io::stdout()
                .write_all(out.as_bytes())
                .map_err(|e| EmuError::caused(Kind::Config, "cannot write the SVG", e))?;
        }
    }
    Ok(0)
}

/// An unwritable --log/--pcap DIR fails first: before privileges are
/// checked and before anything is set up.
fn check_record(r: &RecordArgs) -> Result<(), EmuError> {
    let o = r.options();
    if o.any() {
        o.open()?;
    }
    Ok(())
}

fn pairs(v: &[Sysctl]) -> Vec<(String, String)> {
    v.iter().map(|s| (s.0.clone(), s.1.clone())).collect()
}

fn config(
    c: &Common,
    topology: Topology,
    server: Vec<(String, String)>,
) -> Result<TestbedConfig, EmuError> {
    let (up, down) = c.link.resolve()?;
    // Inside a testbed already (its commands get TCPWISE_NETNS): a second
    // one would take the same addresses and lose every packet. Refused in
    // one line with the one-testbed equivalent, where Mahimahi nests.
    if let Ok(outer) = std::env::var("TCPWISE_NETNS") {
        let ms = |ns: u64| ns as f64 / 1e6;
        return Err(EmuError::Config(format!(
            "already inside the emulated path of testbed {outer}: a testbed inside it would reuse its addresses and lose every packet; give one testbed the whole path instead (delays add up: this one's {:.1} ms up and {:.1} ms down go on top of the outer's --up-delay/--down-delay; the slower rate and both losses apply)",
            ms(up.delay),
            ms(down.delay)
        )));
    }
    let record = c.record.options();
    for w in crate::path::warnings(&up, &down) {
        eprintln!("tcpwise: warning: {w}");
    }
    if !c.quiet && !c.no_notice {
        eprintln!("tcpwise emu: {}", crate::testbed::sysctl_notice());
    }
    // Found before anything is set up, not after CMD ran.
    if let Some(p) = &c.stats_json {
        std::fs::File::create(p).map_err(|e| {
            EmuError::caused(Kind::Config, format!("--stats-json {}", p.display()), e)
        })?;
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
        offload: !c.no_offload,
        threads: c.forwarder_threads,
    };
    Ok(cfg)
}

/// Tears down, prints the statistics, and turns the outcome into a status.
fn finish(s: Session, c: &Common, cfg: &TestbedConfig, outcome: Outcome) -> Result<i32, EmuError> {
    let stats = s.finish()?;
    report_stats(&stats, c, cfg)?;
    Session::exit_status(&outcome, &stats)
}

fn report_stats(
    stats: &[DirectionStats; 2],
    c: &Common,
    cfg: &TestbedConfig,
) -> Result<(), EmuError> {
    if !c.quiet {
        for d in stats {
            eprintln!("tcpwise emu {}", d.summary_line());
        }
    }
    if let Some(path) = &c.stats_json {
        write_stats_json(path, cfg, "directions", serde_json::json!(stats))?;
    }
    Ok(())
}

/// `--stats-json`: the version, the path, and `key` (one testbed's
/// directions, or every testbed).
fn write_stats_json(
    path: &std::path::Path,
    cfg: &TestbedConfig,
    key: &str,
    value: serde_json::Value,
) -> Result<(), EmuError> {
    let mut v = serde_json::json!({
        "tcpwise_version": tcpwise_outcome::version(),
        "path": summarize(&cfg.up, &cfg.down),
    });
    v[key] = value;
    let text = serde_json::to_string_pretty(&v).map_err(std::io::Error::other)?;
    write(path, text + "\n")
}

/// `emu shell`: CMD (or `$SHELL`) in a client namespace whose far end is
/// this host; CMD's exit status.
pub fn shell(a: ShellArgs) -> Result<i32, EmuError> {
    check_record(&a.common.record)?;
    crate::testbed::check_privileges_for(Topology::Shell)?;
    let who = run_as(&a.common)?;
    let cfg = config(&a.common, Topology::Shell, Vec::new())?;
    let mut s = Session::start(&cfg, crate::session::watch_signals())?;
    s.run_as(who);
    s.keep_meter(meter(&s, &a.common)?);
    if let Some(n) = s.signalled() {
        let _ = s.finish();
        return Ok(128 + n);
    }
    let interactive = a.cmd.is_empty();
    let argv = if interactive {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        a.cmd.clone()
    };
    // The prompt says the shell is on the emulated path, as Mahimahi's
    // `[delay 50 ms]` does: PS1 for sh, and PROMPT_COMMAND for bash (whose
    // .bashrc sets PS1 after the environment).
    let tag = format!("[emu {}] ", prompt_tag(&cfg));
    let prompt = |c: &mut std::process::Command| {
        if interactive {
            let ps1 = std::env::var("PS1").unwrap_or_else(|_| "$ ".into());
            c.env("PS1", format!("{tag}{ps1}")).env(
                "PROMPT_COMMAND",
                format!("case \"$PS1\" in \"{tag}\"*) ;; *) PS1=\"{tag}$PS1\";; esac"),
            );
        }
    };
    let mut child = match s.spawn(Role::Client, &argv, std::io::stdin().is_terminal(), prompt) {
        Ok(c) => c,
        Err(e) => {
            let _ = s.finish();
            return Err(e);
        }
    };
    let outcome = s.supervise(&mut child, None);
    drop(child);
    finish(s, &a.common, &cfg, outcome)
}

/// The path in a few words for a prompt: `rtt 100 ms, 50 Mbit/s`.
fn prompt_tag(cfg: &TestbedConfig) -> String {
    let rtt = (cfg.up.delay + cfg.down.delay) as f64 / 1e6;
    let rate = |c: &tcpwise_link::Capacity| c.mean_bps().map(|b| format!("{:.0} Mbit/s", b / 1e6));
    match (rate(&cfg.up.capacity), rate(&cfg.down.capacity)) {
        (Some(u), Some(d)) if u == d => format!("rtt {rtt:.0} ms, {d}"),
        (Some(u), Some(d)) => format!("rtt {rtt:.0} ms, up {u} down {d}"),
        _ => format!("rtt {rtt:.0} ms"),
    }
}

/// `--meter` (and Mahimahi's `--meter-uplink`/`--meter-downlink`/
/// `--meter-all`): the printer, stopped when dropped.
fn meter(s: &Session, c: &Common) -> Result<Option<crate::meter::Printer>, EmuError> {
    let all = c.meter || c.meter_all;
    let shown = crate::meter::Shown {
        up: all || c.meter_uplink,
        down: all || c.meter_downlink,
    };
    if !shown.up && !shown.down {
        return Ok(None);
    }
    let [up, down] = s.testbed().gauges();
    crate::meter::Printer::start(shown, up, down)
        .map(Some)
        .map_err(|e| EmuError::os("cannot start the meter", e))
}

/// Who CMD runs as: the sudo user unless --as-root (said on stderr unless -q).
fn run_as(c: &Common) -> Result<Option<RunAs>, EmuError> {
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

/// `emu pair`: a server and a client command in two namespaces joined
/// by the link; the client's exit status.
pub fn pair(a: PairArgs) -> Result<i32, EmuError> {
    if a.testbeds > 1 {
        return pair_testbeds(a);
    }
    check_record(&a.common.record)?;
    // Before a rootless user namespace is entered (there is no sudo user then).
    let who = run_as(&a.common)?;
    crate::rootless::enter_if_unprivileged()?;
    let cfg = config(&a.common, Topology::Pair, pairs(&a.server_sysctl))?;
    let mut s = Session::start(&cfg, crate::session::watch_signals())?;
    s.run_as(who);
    s.keep_meter(meter(&s, &a.common)?);
    let argv = ["sh".to_string(), "-c".into(), a.server.clone()];
    let mut server = match s.spawn(Role::Server, &argv, false, server_stdio) {
        Ok(p) => p,
        Err(e) => {
            let _ = s.finish();
            return Err(e);
        }
    };
    if let Err(e) = s.wait_listening(&mut server, a.wait_port, a.wait_timeout.std()) {
        drop(server);
        let signalled = s.signalled();
        let stats = s.finish()?;
        report_stats(&stats, &a.common, &cfg)?;
        return match signalled {
            Some(n) => Ok(128 + n),
            None => Err(e),
        };
    }
    let fg = std::io::stdin().is_terminal();
    let mut child = match s.spawn(Role::Client, &a.cmd, fg, |_| {}) {
        Ok(c) => c,
        Err(e) => {
            drop(server);
            let _ = s.finish();
            return Err(e);
        }
    };
    let outcome = s.supervise(&mut child, Some(&mut server));
    drop(child);
    drop(server);
    finish(s, &a.common, &cfg, outcome)
}

/// `emu pair --testbeds N`: the server and client commands in each of N
/// testbeds; the first nonzero client status, else 0.
fn pair_testbeds(a: PairArgs) -> Result<i32, EmuError> {
    let n = a.testbeds as usize;
    let c = &a.common;
    if c.record.options().any() || c.meter || c.meter_all || c.meter_uplink || c.meter_downlink {
        return Err(EmuError::Config(format!(
            "--testbeds {n}: --log, --pcap and --meter record one testbed; run that one alone"
        )));
    }
    if c.forwarder_threads != crate::forwarder::Threads::Auto {
        return Err(EmuError::Config(format!(
            "--testbeds {n}: the testbeds share one forwarder thread per core; --forwarder-threads sets one testbed's"
        )));
    }
    check_record(&c.record)?;
    let who = run_as(c)?;
    crate::rootless::enter_if_unprivileged()?;
    let cfg = config(c, Topology::Pair, pairs(&a.server_sysctl))?;
    let mut testbeds = crate::testbeds::Testbeds::start(&cfg, n, crate::session::watch_signals())?;
    testbeds.run_as(who);
    if !c.quiet {
        eprintln!(
            "tcpwise emu: {n} testbeds, their packets carried by {} forwarder thread(s)",
            testbeds.threads()
        );
    }
    let tag = |k: usize| {
        move |cmd: &mut std::process::Command| {
            cmd.env("TCPWISE_TESTBED", k.to_string());
        }
    };
    let argv = ["sh".to_string(), "-c".into(), a.server.clone()];
    // Every server, each listening, then every client; on a failure what
    // started is stopped as its processes drop.
    let started = (|| {
        let mut servers = Vec::with_capacity(n);
        for (k, s) in testbeds.sessions().iter().enumerate() {
            servers.push(Some(s.spawn(Role::Server, &argv, false, |cmd| {
                server_stdio(cmd);
                tag(k)(cmd);
            })?));
        }
        for (s, p) in testbeds.sessions().iter().zip(servers.iter_mut().flatten()) {
            s.wait_listening(p, a.wait_port, a.wait_timeout.std())?;
        }
        let clients = testbeds
            .sessions()
            .iter()
            .enumerate()
            .map(|(k, s)| s.spawn(Role::Client, &a.cmd, false, tag(k)))
            .collect::<Result<Vec<Process>, EmuError>>()?;
        Ok::<_, EmuError>((servers, clients))
    })();
    let (mut servers, mut clients) = match started {
        Ok(p) => p,
        Err(e) => {
            let signalled = testbeds.signalled();
            let _ = testbeds.finish();
            return match signalled {
                Some(s) => Ok(128 + s),
                None => Err(e),
            };
        }
    };
    let (outcome, codes) = testbeds.supervise(&mut clients, &mut servers);
    drop(clients);
    drop(servers);
    let stats = testbeds.finish()?;
    report_testbeds(&stats, &codes, &a, &cfg)?;
    Session::exit_status(&outcome, stats.as_flattened())
}

/// One summary line per direction and testbed unless `-q`; every testbed
/// in `--stats-json`.
fn report_testbeds(
    stats: &[[DirectionStats; 2]],
    codes: &[Option<i32>],
    a: &PairArgs,
    cfg: &TestbedConfig,
) -> Result<(), EmuError> {
    if !a.common.quiet {
        for (k, tb) in stats.iter().enumerate() {
            for d in tb {
                eprintln!("tcpwise emu testbed {k} {}", d.summary_line());
            }
        }
    }
    if let Some(path) = &a.common.stats_json {
        let beds: Vec<_> = stats
            .iter()
            .enumerate()
            .map(|(k, tb)| {
                serde_json::json!({
                    "testbed": k,
                    "exit": codes.get(k).copied().flatten(),
                    "directions": tb,
                })
            })
            .collect();
        write_stats_json(path, cfg, "testbeds", serde_json::Value::Array(beds))?;
    }
    Ok(())
}

/// How `emu selftest` ended.
pub enum Selftested {
    /// The report, to print.
    Report(Box<SelftestReport>),
    /// Stopped by this exit status (128 + the signal).
    Interrupted(i32),
}

/// `emu selftest`: measures the emulator against its own configuration.
/// Progress lines go to standard error unless `--json`.
pub fn selftest(a: &SelftestArgs) -> Result<Selftested, EmuError> {
    check_record(&a.record)?;
    crate::rootless::enter_if_unprivileged()?;
    let sig = crate::session::watch_signals();
    let (up, down) = a.link.or_selftest_default().resolve()?;
    let mut testbed = TestbedConfig::pair(up, down);
    testbed.client_sysctls = pairs(&a.sysctl);
    testbed.server_sysctls = pairs(&a.sysctl);
    testbed.record = a.record.options();
    testbed.forwarder.offload = !a.no_offload;
    testbed.forwarder.threads = a.forwarder_threads;
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
    match selftest::run(&opts, &progress, &cancelled) {
        Err(EmuError::Interrupted) => Ok(Selftested::Interrupted(
            128 + sig.load(std::sync::atomic::Ordering::Relaxed) as i32,
        )),
        r => Ok(Selftested::Report(Box::new(r?))),
    }
}
