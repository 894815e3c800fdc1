//! `tcpwise emu dumbbell` as one call: refuse bad input, build, start
//! the receivers' servers and the hosts' commands at their offsets,
//! supervise, tear down, report.

use super::sockets::Sampler;
use super::{Dumbbell, DumbbellConfig};
use crate::EmuError;
use crate::flags::DumbbellArgs;
use crate::forwarder::ForwarderOptions;
use crate::session::{Process, RunAs, server_stdio, spawn_group, status_code, wait_listening};
use crate::topology::{self, Side, TopologySpec};
use std::time::{Duration, Instant};

/// The topology the flags declare: the file's, or the short form's.
fn spec(a: &DumbbellArgs) -> Result<TopologySpec, EmuError> {
    match &a.topology {
        Some(f) => {
            if !topology::is_default(&a.link) {
                return Err(EmuError::Config(format!(
                    "--topology {} declares the bottleneck in its [bottleneck] table: leave out the link flags",
                    f.display()
                )));
            }
            topology::load(f)
        }
        None if a.host.is_empty() => Err(EmuError::Config(
            "give the hosts: --topology FILE, or --host NAME:rtt=10ms,cc=cubic (repeatable) with --server CMD".into(),
        )),
        None => topology::from_flags(&a.host, a.link.clone(), a.server.clone()),
    }
}

/// A host's words: its table's command, else CMD.
fn host_argv(cmd: Option<&str>, fallback: &[String]) -> Option<Vec<String>> {
    match (cmd, fallback) {
        (Some(c), _) => Some(vec!["sh".into(), "-c".into(), c.into()]),
        (None, []) => None,
        (None, [one]) if one.contains(' ') => Some(vec!["sh".into(), "-c".into(), one.clone()]),
        (None, words) => Some(words.to_vec()),
    }
}

/// `emu dumbbell`: the first nonzero status of a host's command, else 0.
pub fn dumbbell(a: DumbbellArgs) -> Result<i32, EmuError> {
    let spec = spec(&a)?;
    let argvs: Vec<Option<Vec<String>>> = (spec.hosts.iter())
        .map(|h| host_argv(h.command.as_deref(), &a.cmd))
        .collect();
    if argvs.iter().all(Option::is_none) {
        return Err(EmuError::Config(
            "no host has a command: give one after -- or as command = \"...\" in a [[host]] table"
                .into(),
        ));
    }
    let topology = spec.resolve()?;
    let record = a.record.options();
    if record.any() {
        record.open()?;
    }
    let who = if a.as_root {
        None
    } else {
        RunAs::from_sudo_env()?
    };
    crate::rootless::enter_if_unprivileged()?;
    let cfg = DumbbellConfig {
        topology,
        forwarder: ForwarderOptions {
            realtime: std::env::var_os("TCPWISE_NO_RT").is_none(),
            offload: !a.no_offload,
            threads: a.forwarder_threads,
            ..ForwarderOptions::default()
        },
        record,
    };
    let signals = crate::session::watch_signals();
    let d = Dumbbell::start(&cfg)?;
    let started = std::time::Instant::now();
    let idle = match a.idle_rtt {
        Some(n) => super::idle_rtts(&d, n as usize),
        None => Ok(Vec::new()),
    };
    // Whole seconds of the links' clock before the commands began.
    let commands_from_s = started.elapsed().as_secs() as usize;
    // Sampling is a report's detail: a namespace that refuses it costs
    // the RTT column, not the run.
    let mut sampler = Sampler::new(&d, started)
        .map_err(|e| eprintln!("tcpwise emu dumbbell: no RTT per flow: {e}"))
        .ok();
    let outcome = match &idle {
        Ok(_) => run_commands(&d, &a, &argvs, &signals, who.as_ref(), &mut sampler),
        Err(_) => Ok(1),
    };
    let mut report = d.shutdown()?;
    if let Some(s) = &sampler {
        for f in &mut report.flows {
            f.tcp = s.samples.of(&f.flow.key);
        }
        if let Some(e) = &s.failed {
            eprintln!("tcpwise emu dumbbell: some RTT samples failed: {e}");
        }
    }
    report.commands_from_s = if a.idle_rtt.is_some() {
        commands_from_s + 1
    } else {
        0
    };
    let idle = idle?;
    for r in &idle {
        eprintln!("tcpwise emu dumbbell: {}", r.text());
    }
    if !a.quiet {
        for l in report.text() {
            eprintln!("tcpwise emu dumbbell: {l}");
        }
    }
    if let Some(p) = &a.stats_json {
        let shares: Vec<_> = ["up", "down"]
            .iter()
            .filter_map(|d| report.window(d))
            .collect();
        let v = serde_json::json!({
            "tcpwise_version": tcpwise_outcome::version(),
            "topology": report_of_topology(&cfg),
            "idle_rtt": idle,
            "links": report.links,
            "flows": report.flows,
            "shares": shares,
            "commands_from_s": report.commands_from_s,
        });
        let text = serde_json::to_string_pretty(&v).map_err(std::io::Error::other)?;
        crate::command::write(p, text + "\n")?;
    }
    outcome
}

/// The topology as JSON: names, addresses, round trips, congestion control.
fn report_of_topology(cfg: &DumbbellConfig) -> serde_json::Value {
    let t = &cfg.topology;
    let node = |n: &topology::Node| {
        serde_json::json!({
            "name": n.spec.name,
            "side": n.spec.side,
            "address": n.v4.to_string(),
            "address6": n.v6.to_string(),
            "access_rtt_ms": n.rtt() as f64 / 1e6,
            "cc": n.spec.cc,
            "start_s": n.spec.start as f64 / 1e9,
        })
    };
    serde_json::json!({
        "bottleneck": crate::path::summarize(&t.bottleneck.0, &t.bottleneck.1),
        "hosts": t.hosts.iter().map(node).collect::<Vec<_>>(),
        "receivers": t.receivers.iter().map(node).collect::<Vec<_>>(),
    })
}

/// Servers, then hosts at their offsets, until every host's command
/// ends, a signal or a forwarder's death.
fn run_commands(
    d: &Dumbbell,
    a: &DumbbellArgs,
    argvs: &[Option<Vec<String>>],
    signals: &crate::session::Signals,
    who: Option<&RunAs>,
    sampler: &mut Option<Sampler>,
) -> Result<i32, EmuError> {
    let signalled = || match signals.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        s => Some(s as i32),
    };
    let mut servers = Vec::new();
    for (j, r) in d.topology().receivers.iter().enumerate() {
        let Some(line) = &r.spec.command else {
            continue;
        };
        let argv = ["sh".to_string(), "-c".into(), line.clone()];
        let mut cmd = d.command(Side::Receiver, j, "sh");
        cmd.args(&argv[1..]);
        server_stdio(&mut cmd);
        servers.push((j, spawn_group(cmd, &argv, who, false)?));
    }
    for (j, p) in &mut servers {
        let who = format!(
            "receiver '{}': its server",
            d.node(Side::Receiver, *j).spec.name
        );
        let stopped = || signalled().is_some();
        let ns = d.netns(Side::Receiver, *j);
        wait_listening(ns, (p, &who), a.wait_port, a.wait_timeout.std(), &stopped)?;
    }
    let t0 = Instant::now();
    let mut pending: Vec<usize> = (0..argvs.len()).filter(|&i| argvs[i].is_some()).collect();
    let mut running: Vec<(usize, Process)> = Vec::new();
    let mut first_fail = None;
    loop {
        let now = t0.elapsed().as_nanos() as u64;
        let (due, later): (Vec<usize>, Vec<usize>) = pending
            .iter()
            .partition(|&&i| d.node(Side::Host, i).spec.start <= now);
        pending = later;
        for i in due {
            let argv = argvs[i].clone().unwrap_or_default();
            let mut cmd = d.command(Side::Host, i, &argv[0]);
            cmd.args(&argv[1..]);
            running.push((i, spawn_group(cmd, &argv, who, false)?));
        }
        for (_, p) in running.iter_mut() {
            if let Some(st) = p.try_wait() {
                let code = status_code(st);
                if code != 0 {
                    first_fail.get_or_insert(code);
                }
            }
        }
        let done = running.iter_mut().all(|(_, p)| p.try_wait().is_some());
        if pending.is_empty() && done {
            return Ok(first_fail.unwrap_or(0));
        }
        if let Some(s) = signalled() {
            return Ok(128 + s);
        }
        if d.failed() {
            return Err(EmuError::Setup(
                "the emulator stopped (a forwarder thread died); the topology was torn down".into(),
            ));
        }
        if let Some(s) = sampler.as_mut() {
            s.tick();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
