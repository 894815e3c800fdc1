//! `tcpwise lab sweep` and `tcpwise lab merge` as one call each: refuse
//! bad input before anything runs, run or join, write the report, say
//! what happened.

use crate::LabError;
use crate::sweep::flags::{MergeArgs, SweepArgs};
use crate::sweep::matrix::{Cell, Matrix};
use crate::sweep::run::{Limit, Ran, RunOptions, run_cells};
use crate::sweep::store::{CellRecord, Header, SweepDir};
use crate::sweep::summary::{self, Summary};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// How a sweep ended.
#[derive(Debug)]
pub struct Swept {
    /// What ran.
    pub ran: Ran,
    /// `--list`: nothing ran; the line that ends the list.
    pub listed: Option<String>,
    /// A signal stopped it.
    pub cancelled: bool,
}

impl Swept {
    /// The line said at the end.
    pub fn line(&self, out: &Path) -> String {
        if let Some(line) = &self.listed {
            return line.clone();
        }
        let (r, out) = (&self.ran, out.display());
        let mut s = format!(
            "{} cells measured, {} failed, {} stopped; report: {out}/report.md, {out}/index.html, {out}/results.json",
            r.ok, r.failed, r.interrupted
        );
        if self.cancelled {
            s.push_str("; --resume runs the rest");
        }
        s
    }

    /// 0 every cell measured, 1 a cell failed, `signalled` (130 or 143)
    /// when a signal stopped it.
    pub fn exit_code(&self, signalled: i32) -> i32 {
        match (self.cancelled, self.ran.failed) {
            (true, _) => signalled,
            (false, 0) => 0,
            (false, _) => 1,
        }
    }
}

impl Summary {
    /// What `lab merge` says. Missing counts every cell of the matrix
    /// without a record, the cells of shards not given included.
    pub fn merged_line(&self, out: &Path) -> String {
        let out = out.display();
        let not_given = match self.shards_missing.as_slice() {
            [] => String::new(),
            [one] => format!(" (shard {one} not given)"),
            many => format!(" (shards {} not given)", many.join(", ")),
        };
        format!(
            "merged {} of {} cells (shards: {}); {} missing{not_given}, {} failed; report: {out}/report.md, {out}/index.html, {out}/results.json",
            self.cells_present,
            self.cells_total,
            if self.shards.is_empty() {
                "none".into()
            } else {
                self.shards.join(", ")
            },
            self.cells_total.saturating_sub(self.cells_present),
            self.failed.len()
        )
    }

    /// `lab merge`'s exit status: 0 only when every cell of the matrix is
    /// there and measured; 1 for a partial merge (its report is written).
    pub fn merge_exit_code(&self) -> i32 {
        i32::from(self.cells_present < self.cells_total || !self.failed.is_empty())
    }
}

fn usage(m: impl ToString) -> LabError {
    LabError::Usage(m.to_string())
}

/// Reads and expands the matrix file.
pub fn load_matrix(file: &Path) -> Result<Matrix, LabError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| usage(format!("cannot read {}: {e}", file.display())))?;
    crate::sweep::matrix::parse(&text, file).map_err(usage)
}

/// The cells `--list` prints, one line each.
pub fn list_lines(cells: &[Cell]) -> Vec<String> {
    cells
        .iter()
        .map(|c| {
            if let Some(t) = &c.topology {
                let hosts = t.toml.matches("[[host]]").count();
                return format!(
                    "{}  perf client {}  | emu dumbbell, {hosts} hosts, figure: {}; its topology is the record's cell.topology.toml",
                    c.id,
                    c.args.join(" "),
                    t.figure.unit()
                );
            }
            format!(
                "{}  {} {}  | emu pair {}",
                c.id,
                match c.tool {
                    crate::sweep::Tool::Perf => "perf client",
                    crate::sweep::Tool::Rpm => "rpm",
                    crate::sweep::Tool::Get => "get",
                },
                c.args.join(" "),
                c.link.join(" ")
            )
        })
        .collect()
}

/// `--list`: the cells, a line each, on standard output.
fn list(a: &SweepArgs, matrix: &Matrix, cells: &[Cell]) -> Swept {
    for l in list_lines(cells) {
        println!("{l}");
    }
    let shard = a.shard.map(|s| format!(" (shard {s})"));
    Swept {
        ran: Ran::default(),
        listed: Some(format!(
            "{} cells{} of {}, matrix {}",
            cells.len(),
            shard.unwrap_or_default(),
            matrix.cells.len(),
            matrix.fingerprint
        )),
        cancelled: false,
    }
}

/// Refuses an `--out` that holds another sweep's cells (another matrix,
/// shard or binary), or this one's without `--resume`.
fn refuse_another_run(
    a: &SweepArgs,
    head: &Header,
    existing: Option<&Header>,
    records: &BTreeMap<String, CellRecord>,
    cells: usize,
) -> Result<(), LabError> {
    let out = a.out.display();
    if let Some(old) = existing {
        if old.fingerprint != head.fingerprint {
            return Err(usage(format!(
                "{out} holds cells of another matrix ({} , not {}): use another --out",
                old.fingerprint, head.fingerprint
            )));
        }
        if old.shard != head.shard {
            return Err(usage(format!(
                "{out} holds shard {}, not {}: use another --out",
                old.shard.as_deref().unwrap_or("all"),
                head.shard.as_deref().unwrap_or("all")
            )));
        }
        if old.version != head.version && !records.is_empty() {
            return Err(usage(format!(
                "{out} was measured by tcpwise {}, this is {}: one sweep, one binary (use another --out)",
                old.version, head.version
            )));
        }
    }
    if !records.is_empty() && !a.resume {
        return Err(usage(format!(
            "{out} already holds {} of these {} cells: --resume to run the rest, or another --out",
            records.values().filter(|r| r.ok).count(),
            cells
        )));
    }
    Ok(())
}

/// `tcpwise lab sweep`: `exe` is the tcpwise binary the cells run.
pub fn sweep(a: &SweepArgs, exe: PathBuf, cancel: Arc<AtomicBool>) -> Result<Swept, LabError> {
    let matrix = load_matrix(&a.matrix)?;
    let total = matrix.cells.len();
    let cells: Vec<Cell> = matrix
        .cells
        .iter()
        .filter(|c| a.shard.is_none_or(|s| s.holds(c.index)))
        .cloned()
        .collect();
    if cells.is_empty() {
        return Err(usage(format!(
            "shard {} of a {total}-cell matrix holds no cells",
            a.shard.map(|s| s.to_string()).unwrap_or_default()
        )));
    }
    if a.list {
        return Ok(list(a, &matrix, &cells));
    }
    tcpwise_emu::testbed::check_privileges()?;
    let dir = SweepDir {
        root: a.out.clone(),
    };
    let head = header(a, &matrix, &cells);
    let existing = dir.header().map_err(usage)?;
    let records = dir.cells().map_err(usage)?;
    let out = a.out.display();
    refuse_another_run(a, &head, existing.as_ref(), &records, cells.len())?;
    // What a machine that died outright left (a kill -9 leaves nothing:
    // each cell's emulator tears down when the sweep dies).
    let stale = tcpwise_emu::clean::clean_stale()?;
    if !stale.is_empty() {
        eprintln!("removed stale testbeds: {}", stale.join(", "));
    }
    dir.prepare(&head)?;
    let todo: Vec<Cell> = cells
        .iter()
        .filter(|c| !records.get(&c.id).is_some_and(|r| r.ok))
        .cloned()
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let limit = match a.jobs {
        Some(n) => Limit::fixed(n as usize),
        None => Limit::auto(cores),
    };
    let budget = if limit.rate_bps == u64::MAX {
        String::new()
    } else {
        format!(" and {} Mbit/s of link rate", limit.rate_bps / 1_000_000)
    };
    eprintln!(
        "sweep {}: {} cells{} of {total}, {} to run ({} done) in {out}; at most {} testbeds{budget} at once ({})",
        matrix.fingerprint,
        cells.len(),
        a.shard.map(|s| format!(" (shard {s})")).unwrap_or_default(),
        todo.len(),
        cells.len() - todo.len(),
        limit.testbeds,
        limit.why
    );
    let opts = RunOptions {
        exe,
        limit,
        cell_timeout: a.cell_timeout.std(),
        cancel: cancel.clone(),
    };
    let n_todo = todo.len();
    let mut finished = 0;
    let ran = run_cells(&dir, todo, &matrix.fingerprint, &opts, &mut |r| {
        finished += 1;
        eprintln!("[{finished}/{n_todo}] {}", cell_line(r));
    })?;
    write_report(&a.out, &[head])?;
    Ok(Swept {
        ran,
        listed: None,
        cancelled: cancel.load(std::sync::atomic::Ordering::Relaxed),
    })
}

fn header(a: &SweepArgs, m: &Matrix, cells: &[Cell]) -> Header {
    Header {
        fingerprint: m.fingerprint.clone(),
        version: tcpwise_outcome::version().to_string(),
        matrix: a.matrix.display().to_string(),
        cells_total: m.cells.len(),
        shard: a.shard.map(|s| s.to_string()),
        cells: cells.iter().map(|c| c.id.clone()).collect(),
    }
}

/// A finished cell in one line.
pub fn cell_line(r: &CellRecord) -> String {
    let what = match (r.ok, r.figure) {
        (true, Some(f)) => format!("{f:.2} {}", r.unit),
        _ => format!(
            "failed (exit {}): {}",
            r.exit_code.map_or("-".into(), |c| c.to_string()),
            r.error
                .as_deref()
                .and_then(|e| e.lines().last())
                .unwrap_or("")
        ),
    };
    format!(
        "{}  {what}  ({:.1} s, {} at once, lateness p99 {:.0}/{:.0} µs, steal {})",
        r.cell.id,
        r.wall_s,
        r.running_max,
        r.lateness_p99_us.0,
        r.lateness_p99_us.1,
        r.steal_pct.map_or("-".into(), |s| format!("{s:.1} %"))
    )
}

/// Writes `results.json`, `report.md` and `index.html` of the cells in
/// the directories `headers` describe, into `out`.
fn write_report_of(
    out: &Path,
    headers: &[Header],
    records: &BTreeMap<String, CellRecord>,
) -> Result<Summary, LabError> {
    let s = summary::summarize(headers, records);
    let dir = SweepDir {
        root: out.to_path_buf(),
    };
    std::fs::create_dir_all(dir.tmp_dir())?;
    let cells: Vec<&CellRecord> = records.values().collect();
    let json = serde_json::json!({ "summary": &s, "cells": cells });
    let text = serde_json::to_string_pretty(&json).map_err(std::io::Error::other)?;
    dir.write_atomic(&out.join("results.json"), text.as_bytes())?;
    dir.write_atomic(&out.join("report.md"), summary::markdown(&s).as_bytes())?;
    dir.write_atomic(&out.join("index.html"), summary::html(&s).as_bytes())?;
    let _ = std::fs::remove_dir(dir.tmp_dir());
    Ok(s)
}

fn write_report(out: &Path, headers: &[Header]) -> Result<Summary, LabError> {
    let records = SweepDir {
        root: out.to_path_buf(),
    }
    .cells()
    .map_err(usage)?;
    write_report_of(out, headers, &records)
}

/// `tcpwise lab merge`: joins shard directories of one matrix and one
/// binary; refuses anything else before writing.
pub fn merge(a: &MergeArgs) -> Result<Summary, LabError> {
    let mut headers = Vec::new();
    let mut records: BTreeMap<String, CellRecord> = BTreeMap::new();
    let mut from: BTreeMap<String, PathBuf> = BTreeMap::new();
    for d in &a.dirs {
        let dir = SweepDir { root: d.clone() };
        let Some(h) = dir.header().map_err(usage)? else {
            return Err(usage(format!(
                "{}: no sweep.json (not a `lab sweep` directory)",
                d.display()
            )));
        };
        if let Some(first) = headers.first() {
            let first: &Header = first;
            if h.fingerprint != first.fingerprint {
                return Err(usage(format!(
                    "{} and {} hold different matrices ({} and {}): nothing merged",
                    a.dirs[0].display(),
                    d.display(),
                    first.fingerprint,
                    h.fingerprint
                )));
            }
            if h.version != first.version {
                return Err(usage(format!(
                    "{} and {} were measured by different binaries ({} and {}): nothing merged",
                    a.dirs[0].display(),
                    d.display(),
                    first.version,
                    h.version
                )));
            }
        }
        for (id, r) in dir.cells().map_err(usage)? {
            if r.fingerprint != h.fingerprint || r.version != h.version {
                return Err(usage(format!(
                    "{}: cell {id} is of another matrix or binary: nothing merged",
                    d.display()
                )));
            }
            if let Some(other) = from.get(&id) {
                return Err(usage(format!(
                    "cell {id} is in both {} and {} (one shard run twice?): nothing merged",
                    other.display(),
                    d.display()
                )));
            }
            from.insert(id.clone(), d.clone());
            records.insert(id, r);
        }
        headers.push(h);
    }
    let merged = Header {
        shard: None,
        cells: {
            let mut ids: Vec<String> = headers.iter().flat_map(|h| h.cells.clone()).collect();
            ids.sort();
            ids.dedup();
            ids
        },
        ..headers[0].clone()
    };
    // The merged directory is a sweep directory again: it can be merged
    // further or resumed into.
    let dir = SweepDir {
        root: a.out.clone(),
    };
    dir.prepare(&merged)?;
    for r in records.values() {
        dir.write_cell(r)?;
    }
    write_report_of(&a.out, &headers, &records)
}
