//! The scheduler: cells start in matrix order while they fit the limit
//! (testbeds at once, and their links' rates added up), each as one
//! `tcpwise emu pair` process; each finished cell is written before the
//! next one starts; a signal stops new starts and ends the running ones.
//!
//! A rate budget stands beside the count because what a machine can hold
//! is packets and endpoints, not testbeds: the default, 4 testbeds and
//! 100 Mbit/s of link rate a core, is what held every group's median
//! against a serial run (docs/sweep.md has the 48-cell measurement); a
//! cell with no rate runs alone. Each record keeps the forwarders'
//! lateness and the machine's busy and stolen time, so a cell the machine
//! did not hold shows it.

use crate::sweep::matrix::Cell;
use crate::sweep::shell_quote;
use crate::sweep::store::{CellRecord, SweepDir};
use crate::sweep::topology::{self, TopologyCell};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// How much runs at once.
#[derive(Debug, Clone)]
pub struct Limit {
    /// Testbeds at once.
    pub testbeds: usize,
    /// Their links' rates added up, bit/s.
    pub rate_bps: u64,
    /// Where the limit comes from, for the line that prints it.
    pub why: String,
}

impl Limit {
    /// What `scripts/density` measured this machine kind holds.
    pub fn auto(cores: usize) -> Limit {
        let cores = cores.max(1);
        Limit {
            testbeds: 4 * cores,
            rate_bps: 100_000_000 * cores as u64,
            why: format!(
                "{cores} cores: 4 testbeds and 100 Mbit/s of link rate a core, where examples/sweep-48.toml held every figure within 2 % of a serial run (docs/sweep.md); --jobs N to set"
            ),
        }
    }

    /// `--jobs N`: N at once, whatever their rates.
    pub fn fixed(n: usize) -> Limit {
        Limit {
            testbeds: n.max(1),
            rate_bps: u64::MAX,
            why: "--jobs".into(),
        }
    }

    /// Whether a testbed asking for `demand` (its link rate; `None`: it
    /// runs alone) may start beside `running` (theirs).
    pub fn fits(&self, demand: Option<u64>, running: &[Option<u64>]) -> bool {
        if running.is_empty() {
            return true;
        }
        if running.len() >= self.testbeds {
            return false;
        }
        if self.rate_bps == u64::MAX {
            return true;
        }
        if running.iter().any(Option::is_none) {
            return false;
        }
        let Some(rate) = demand else {
            return false;
        };
        let used: u64 = running.iter().flatten().sum();
        self.rate_bps == u64::MAX || used.saturating_add(rate) <= self.rate_bps
    }
}

/// What a cell counts against the rate budget; `None`: it runs alone.
/// `rpm` cells run alone whatever their rate: responsiveness is latency
/// under load, and a core shared with other testbeds' TLS and HTTP/2 is
/// latency (FQ-CoDel at 20 Mbit/s / 40 ms: 803 RPM alone, 596 to 651
/// with three other `rpm` cells beside it; docs/sweep.md).
fn budget_rate(cell: &Cell) -> Option<u64> {
    match cell.tool {
        crate::sweep::Tool::Rpm => None,
        _ => cell.rate_bps,
    }
}

/// How cells run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The tcpwise binary each cell runs.
    pub exe: PathBuf,
    /// How many at once.
    pub limit: Limit,
    /// A cell still running after this is stopped and recorded as failed.
    pub cell_timeout: Duration,
    /// Set by a signal handler: start nothing more, stop what runs.
    pub cancel: Arc<AtomicBool>,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Ran {
    /// Cells written with a figure.
    pub ok: usize,
    /// Cells written as failed.
    pub failed: usize,
    /// Cells stopped by a signal, not written.
    pub interrupted: usize,
}

/// `/proc/stat`'s first line: (total, busy, steal) ticks.
fn cpu_ticks() -> Option<(u64, u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let v: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 8 {
        return None;
    }
    let total: u64 = v.iter().sum();
    Some((total, total - v[3] - v[4], v[7]))
}

fn load1() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

struct Running {
    cell: Cell,
    pid: u32,
    start: Instant,
    start_unix: f64,
    ticks: Option<(u64, u64, u64)>,
    at_start: usize,
    max: usize,
    timed_out: bool,
}

/// Runs `cells` in order into `dir`, handing each cell written to
/// `finished`.
pub fn run_cells(
    dir: &SweepDir,
    cells: Vec<Cell>,
    fingerprint: &str,
    opts: &RunOptions,
    finished: &mut dyn FnMut(&CellRecord),
) -> std::io::Result<Ran> {
    let mut pending: VecDeque<Cell> = cells.into();
    let mut running: BTreeMap<String, Running> = BTreeMap::new();
    let (tx, rx) = mpsc::channel::<(String, std::io::Result<Output>)>();
    let mut ran = Ran::default();
    let mut stopping = false;
    loop {
        let cancelled = opts.cancel.load(Ordering::Relaxed);
        if cancelled && !stopping {
            stopping = true;
            for r in running.values() {
                tcpwise_sys::kill(r.pid as i32, 15);
            }
        }
        while let Some(next) = pending.front() {
            let rates: Vec<Option<u64>> = running.values().map(|r| budget_rate(&r.cell)).collect();
            if cancelled || !opts.limit.fits(budget_rate(next), &rates) {
                break;
            }
            let cell = pending.pop_front().expect("front exists");
            let child = spawn(&cell, &opts.exe, &dir.tmp_dir())?;
            let pid = child.id();
            let id = cell.id.clone();
            let tx = tx.clone();
            // This thread (the scheduler's) spawned the child and waits
            // for every child before it returns: the parent-death signal
            // follows the spawning thread, so it fires only when the
            // sweep itself dies. Another thread just collects the output.
            std::thread::spawn(move || {
                let _ = tx.send((id, child.wait_with_output()));
            });
            let now_running = running.len() + 1;
            for r in running.values_mut() {
                r.max = r.max.max(now_running);
            }
            running.insert(
                cell.id.clone(),
                Running {
                    pid,
                    start: Instant::now(),
                    start_unix: SystemTime::now()
                        .duration_since(SystemTime::UNIX_EPOCH)
                        .map(|d| d.as_secs_f64())
                        .unwrap_or(0.0),
                    ticks: cpu_ticks(),
                    at_start: now_running,
                    max: now_running,
                    timed_out: false,
                    cell,
                },
            );
        }
        if running.is_empty() {
            break;
        }
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok((id, out)) => {
                let Some(r) = running.remove(&id) else {
                    continue;
                };
                let out = out?;
                // A cell a signal stopped measured nothing whole.
                if stopping && !out.status.success() && !r.timed_out {
                    ran.interrupted += 1;
                    let _ = std::fs::remove_file(stats_file(&dir.tmp_dir(), &id));
                    continue;
                }
                let rec = record(r, &out, fingerprint, &dir.tmp_dir());
                dir.write_cell(&rec)?;
                if rec.ok {
                    ran.ok += 1;
                } else {
                    ran.failed += 1;
                }
                finished(&rec);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                for r in running.values_mut() {
                    if !r.timed_out && r.start.elapsed() > opts.cell_timeout {
                        r.timed_out = true;
                        tcpwise_sys::kill(r.pid as i32, 15);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(ran)
}

fn stats_file(tmp: &Path, id: &str) -> PathBuf {
    tmp.join(format!("{id}.emu.json"))
}

/// A topology cell's `tcpwise emu dumbbell` command: its file written,
/// every host without a command running the workload's client (its
/// output dropped: the bottleneck counts the flows).
fn topology_command(
    cell: &Cell,
    t: &TopologyCell,
    exe: &Path,
    tmp: &Path,
) -> std::io::Result<Command> {
    let exe_s = exe.to_string_lossy();
    let mut client = vec![shell_quote(&exe_s), "perf client $TCPWISE_PEER".into()];
    client.extend(cell.args.iter().map(|a| shell_quote(a)));
    client.push("> /dev/null".into());
    let server = cell.tool.server_command(&exe_s, &cell.server_args);
    let text = topology::run_text(t, &client.join(" "), &server);
    let file = topology::file(tmp, &cell.id);
    std::fs::write(&file, text)?;
    let mut cmd = Command::new(exe);
    cmd.args(["emu", "dumbbell", "-q", "--topology"])
        .arg(file)
        .arg("--stats-json")
        .arg(stats_file(tmp, &cell.id))
        .arg("--wait-port")
        .arg(cell.tool.port().to_string());
    Ok(cmd)
}

/// The cell's `tcpwise emu pair` (or a topology's `emu dumbbell`)
/// command, started.
fn spawn(cell: &Cell, exe: &Path, tmp: &Path) -> std::io::Result<std::process::Child> {
    let mut cmd = match &cell.topology {
        Some(t) => topology_command(cell, t, exe, tmp)?,
        None => pair_command(cell, exe, tmp),
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tcpwise_sys::exec_with_parent_death_signal(&mut cmd, 15);
    cmd.spawn()
}

/// A path cell's `tcpwise emu pair` command.
fn pair_command(cell: &Cell, exe: &Path, tmp: &Path) -> Command {
    let exe_s = exe.to_string_lossy();
    let mut cmd = Command::new(exe);
    cmd.args(["emu", "pair", "-q", "--stats-json"])
        .arg(stats_file(tmp, &cell.id))
        .args(&cell.link)
        .arg("--server")
        .arg(cell.tool.server_command(&exe_s, &cell.server_args))
        .arg("--wait-port")
        .arg(cell.tool.port().to_string())
        .arg("--")
        .args(cell.tool.client_argv(&exe_s, &cell.args));
    cmd
}

/// The tool's JSON out of its standard output (anything a server printed
/// before it is skipped).
fn tool_json(stdout: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(stdout);
    let at = text.find('{')?;
    serde_json::from_str(text[at..].trim()).ok()
}

fn record(r: Running, out: &Output, fp: &str, tmp: &Path) -> CellRecord {
    let ticks = match (r.ticks, cpu_ticks()) {
        (Some(a), Some(b)) if b.0 > a.0 => Some((b.0 - a.0, b.1 - a.1, b.2 - a.2)),
        _ => None,
    };
    let stats_path = stats_file(tmp, &r.cell.id);
    let emu: serde_json::Value = std::fs::read_to_string(&stats_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let _ = std::fs::remove_file(&stats_path);
    let _ = std::fs::remove_file(topology::file(tmp, &r.cell.id));
    // A pair's directions, or a topology's bottleneck.
    let dir_stat = |name: &str, ptr: &str| -> f64 {
        let (list, name) = match r.cell.topology {
            Some(_) => ("links", format!("bottleneck {name}")),
            None => ("directions", name.to_string()),
        };
        emu.get(list)
            .and_then(|d| d.as_array())
            .and_then(|d| {
                d.iter()
                    .find(|x| x.get("direction").and_then(|n| n.as_str()) == Some(name.as_str()))
            })
            .and_then(|x| x.pointer(ptr))
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    };
    let offload = emu
        .pointer("/directions/0/offload/mode")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let (tool, fig, unit) = match &r.cell.topology {
        Some(t) => (None, topology::figure(t, &emu), t.figure.unit()),
        None => {
            let tool = tool_json(&out.stdout);
            let fig = tool.as_ref().and_then(|j| r.cell.tool.figure(j));
            (tool, fig, r.cell.tool.unit())
        }
    };
    let ok = out.status.success() && fig.is_some() && !r.timed_out;
    let error = (!ok).then(|| {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        let mut tail: Vec<&str> = tail.into_iter().rev().collect();
        if r.timed_out {
            tail.push("stopped: the cell outran --cell-timeout");
        }
        tail.join("\n")
    });
    let (figure, samples) = match fig {
        Some((f, s)) => (Some(f), s),
        None => (None, Vec::new()),
    };
    CellRecord {
        fingerprint: fp.to_string(),
        version: tcpwise_outcome::version().to_string(),
        ok,
        exit_code: out.status.code(),
        error,
        figure,
        unit: unit.to_string(),
        samples,
        started_unix_s: r.start_unix,
        wall_s: r.start.elapsed().as_secs_f64(),
        running_at_start: r.at_start,
        running_max: r.max,
        steal_pct: ticks.map(|(t, _, s)| 100.0 * s as f64 / t as f64),
        busy_pct: ticks.map(|(t, b, _)| 100.0 * b as f64 / t as f64),
        load1: load1(),
        lateness_p99_us: (
            dir_stat("up", "/lateness/p99_us"),
            dir_stat("down", "/lateness/p99_us"),
        ),
        lateness_max_us: dir_stat("up", "/lateness/max_us")
            .max(dir_stat("down", "/lateness/max_us")),
        offload,
        tool: tool.unwrap_or(serde_json::Value::Null),
        emu,
        cell: r.cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(rate: Option<u64>) -> Cell {
        Cell {
            index: 0,
            id: "x".into(),
            path: "p".into(),
            vary: vec![],
            workload: "w".into(),
            tool: crate::sweep::Tool::Perf,
            args: vec![],
            server_args: vec![],
            repetition: 1,
            seed: 1,
            link: vec![],
            rate_bps: rate,
            topology: None,
        }
    }

    #[test]
    fn the_limit_counts_testbeds_and_rates() {
        let l = Limit::auto(2);
        let m16 = Some(16_000_000);
        assert!(l.fits(budget_rate(&cell(m16)), &[]));
        assert!(l.fits(budget_rate(&cell(m16)), &[m16; 7]));
        assert!(!l.fits(budget_rate(&cell(m16)), &[m16; 8]));
        assert!(!l.fits(
            budget_rate(&cell(Some(100_000_000))),
            &[Some(100_000_000); 2]
        ));
        assert!(l.fits(
            budget_rate(&cell(Some(100_000_000))),
            &[Some(100_000_000); 1]
        ));
        assert!(l.fits(budget_rate(&cell(Some(50_000_000))), &[Some(50_000_000); 3]));
        // Unlimited links run alone.
        assert!(l.fits(budget_rate(&cell(None)), &[]));
        assert!(!l.fits(budget_rate(&cell(None)), &[m16]));
        assert!(!l.fits(budget_rate(&cell(m16)), &[None]));
        let mut rpm = cell(m16);
        rpm.tool = crate::sweep::Tool::Rpm;
        assert!(l.fits(budget_rate(&rpm), &[]));
        assert!(!l.fits(budget_rate(&rpm), &[m16]));
        assert!(Limit::fixed(3).fits(None, &[]));
        assert!(!Limit::fixed(3).fits(m16, &[m16, m16, m16]));
    }
}
