//! A sweep's directory: `sweep.json` (which matrix, which binary, which
//! shard, which cells), `cells/<id>.json` (one finished cell each,
//! written whole or not at all) and `tmp/` (files being written; emptied
//! on every start).
//!
//! Why rename: a file is written under `tmp/`, synced, and renamed into
//! `cells/` (one directory, one file system), so a reader, a `--resume`
//! or a `merge` sees a cell whole or not at all, whatever killed the
//! writer.

use crate::sweep::matrix::Cell;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `sweep.json`: what a directory holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The matrix's fingerprint ([`crate::sweep::matrix::Matrix`]).
    pub fingerprint: String,
    /// The tcpwise version and commit that ran it.
    pub version: String,
    /// The matrix file, as given.
    pub matrix: String,
    /// Cells in the whole matrix.
    pub cells_total: usize,
    /// `K/N`, or `None` for the whole matrix.
    pub shard: Option<String>,
    /// The ids this directory is to hold.
    pub cells: Vec<String>,
}

/// One finished cell: what ran, what it measured, and the conditions it
/// ran under.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellRecord {
    /// The cell.
    pub cell: Cell,
    /// The matrix's fingerprint.
    pub fingerprint: String,
    /// The binary's version.
    pub version: String,
    /// Whether the tool exited 0 and printed its JSON.
    pub ok: bool,
    /// The tool's exit status (`emu pair` passes the client's on).
    pub exit_code: Option<i32>,
    /// The last lines of standard error when it failed.
    pub error: Option<String>,
    /// The cell's figure (perf: goodput; rpm: RPM).
    pub figure: Option<f64>,
    /// Its unit.
    pub unit: String,
    /// The samples behind it (perf: each interval's Mbit/s; rpm: each
    /// phase's RPM).
    pub samples: Vec<f64>,
    /// When it started, seconds since the epoch.
    pub started_unix_s: f64,
    /// How long it ran, s.
    pub wall_s: f64,
    /// Testbeds running (this one included) when it started.
    pub running_at_start: usize,
    /// The most testbeds running at once while it ran.
    pub running_max: usize,
    /// The machine's CPU time stolen by the hypervisor while it ran, %
    /// of all CPU time (`/proc/stat`).
    pub steal_pct: Option<f64>,
    /// The machine's busy CPU time while it ran, % of all CPU time.
    pub busy_pct: Option<f64>,
    /// The 1-minute load average at its end.
    pub load1: Option<f64>,
    /// The emulator's own error: forwarder lateness p99 up and down, µs.
    pub lateness_p99_us: (f64, f64),
    /// The worst forwarder lateness, µs.
    pub lateness_max_us: f64,
    /// The TUN offload mode the forwarders ran.
    pub offload: String,
    /// The tool's `--json`, as printed.
    pub tool: serde_json::Value,
    /// The emulator's `--stats-json`.
    pub emu: serde_json::Value,
}

/// A sweep directory.
#[derive(Debug, Clone)]
pub struct SweepDir {
    /// Its root.
    pub root: PathBuf,
}

impl SweepDir {
    /// `DIR/cells`.
    pub fn cells_dir(&self) -> PathBuf {
        self.root.join("cells")
    }

    /// `DIR/tmp`.
    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// The header, if the directory has one.
    pub fn header(&self) -> Result<Option<Header>, StoreError> {
        let p = self.root.join("sweep.json");
        match std::fs::read_to_string(&p) {
            Ok(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|err| StoreError::foreign(&p, "a sweep's header", err)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(StoreError::read(&p, err)),
        }
    }

    /// Creates the directories, empties `tmp/` and writes the header.
    pub fn prepare(&self, header: &Header) -> std::io::Result<()> {
        std::fs::create_dir_all(self.cells_dir())?;
        let _ = std::fs::remove_dir_all(self.tmp_dir());
        std::fs::create_dir_all(self.tmp_dir())?;
        let text = serde_json::to_string_pretty(header).map_err(std::io::Error::other)?;
        self.write_atomic(&self.root.join("sweep.json"), text.as_bytes())
    }

    /// Writes `data` to `to` through a synced file in `tmp/` and a rename.
    pub fn write_atomic(&self, to: &Path, data: &[u8]) -> std::io::Result<()> {
        let name = to.file_name().unwrap_or_default().to_string_lossy();
        let tmp = self
            .tmp_dir()
            .join(format!("{name}.{}.tmp", std::process::id()));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, to)?;
        if let Some(dir) = to.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// Writes a finished cell.
    pub fn write_cell(&self, rec: &CellRecord) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(rec).map_err(std::io::Error::other)?;
        let to = self.cells_dir().join(format!("{}.json", rec.cell.id));
        self.write_atomic(&to, text.as_bytes())
    }

    /// Every cell file, by id; a file that does not parse is an error
    /// naming it (cells are written whole, so it was not written by us).
    pub fn cells(&self) -> Result<BTreeMap<String, CellRecord>, StoreError> {
        let mut out = BTreeMap::new();
        let dir = self.cells_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(err) => return Err(StoreError::read(&dir, err)),
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&p).map_err(|err| StoreError::read(&p, err))?;
            let rec: CellRecord = serde_json::from_str(&text)
                .map_err(|err| StoreError::foreign(&p, "a cell record", err))?;
            out.insert(rec.cell.id.clone(), rec);
        }
        Ok(out)
    }
}

/// A sweep directory that cannot be read back. The cause is part of the
/// one line (`cannot read DIR/x: Permission denied`), as before there was
/// a type; it is not repeated as a source.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or directory of it cannot be read.
    #[error("cannot read {}: {err}", path.display())]
    Read {
        /// Which.
        path: PathBuf,
        /// Why.
        err: std::io::Error,
    },
    /// A file in it that no sweep wrote.
    #[error("{}: not {what}: {err}", path.display())]
    Foreign {
        /// Which.
        path: PathBuf,
        /// What it should have been.
        what: &'static str,
        /// Why it is not.
        err: serde_json::Error,
    },
}

impl StoreError {
    fn read(path: &Path, err: std::io::Error) -> StoreError {
        StoreError::Read {
            path: path.to_path_buf(),
            err,
        }
    }

    fn foreign(path: &Path, what: &'static str, err: serde_json::Error) -> StoreError {
        StoreError::Foreign {
            path: path.to_path_buf(),
            what,
            err,
        }
    }
}
