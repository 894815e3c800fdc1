//! The file-I/O half of the completion experiment: MariaDB's report on
//! its own workload. sysbench `update_no_key` reduced to its I/O (read a
//! 16 KiB page with `O_DIRECT`, update a row, write it back; no fsync, as
//! the report's author ran it) from 4 to 1024 closed-loop clients, under
//! the three disciplines of `tcpwise-aio` on io_uring: fixed segments,
//! one shared completion queue, and blocking `pread`/`pwrite`. Uniform and
//! Zipf-skewed keys; rounds interleave every model, key set and client
//! count so drift hits them alike, and each figure is the median over
//! rounds. No network is involved, so no testbed either.

use crate::common::median_p90;
use crate::html::{Series, lines};
use crate::report::table_head;
use crate::{LabError, LabOptions, Progress, Summary};
use plotters::style::{BLUE, RED, RGBColor};
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;
use tcpwise_aio::{AioError, AioReport, DataFile, Keys, Model, Options};

/// I/O threads of every model (InnoDB's default: 4 read + 4 write
/// threads; here 4 that do both).
const THREADS: u32 = 4;
/// The data file's size.
const FILE_BYTES: u64 = tcpwise_aio::DEFAULT_FILE_BYTES;
/// The skewed key distribution.
const SKEW: Keys = Keys::Zipf(0.99);

/// One run.
#[derive(Debug, Clone, Serialize)]
pub struct FileRun {
    /// Which round.
    pub round: usize,
    /// What it measured (model, keys, clients inside).
    #[serde(flatten)]
    pub report: AioReport,
}

/// Everything the file-I/O half measured.
#[derive(Debug, Clone, Serialize)]
pub struct FileTable {
    /// Every run, in the order they ran.
    pub runs: Vec<FileRun>,
    /// Client counts, in table order.
    pub counts: Vec<u32>,
    /// Why the table is missing, when it is.
    pub skipped: Option<String>,
}

/// What the half adds to the experiment's result.
pub struct FileResult {
    /// The measurements.
    pub table: FileTable,
    /// Its report section.
    pub markdown: String,
    /// Its plots.
    pub plots: Vec<String>,
    /// Its headline, when it ran.
    pub headline: Option<String>,
}

fn key_prefix(keys: Keys) -> &'static str {
    match keys {
        Keys::Uniform => "aio",
        Keys::Zipf(_) => "aio_skew",
    }
}

/// One colour per model, the same in every plot.
fn color_of(m: &str) -> RGBColor {
    match m {
        "shared" => BLUE,
        "shared:256" => RGBColor(120, 0, 160),
        "segments" => RED,
        "segments:8" => RGBColor(200, 120, 0),
        _ => RGBColor(0, 140, 0),
    }
}

/// `segments:8` as a summary key: `segments8`.
fn model_key(m: &str) -> String {
    m.replace(':', "")
}

/// io_uring or the data file's filesystem not there: the reason to skip
/// (the network table still runs), unless `TCPWISE_REQUIRE_IO_URING=1`.
fn skippable(e: &AioError) -> bool {
    matches!(
        e,
        AioError::Uring(_) | AioError::NoDirect(_) | AioError::NoSpace(_)
    ) && std::env::var_os("TCPWISE_REQUIRE_IO_URING").is_none()
}

/// Runs the file-I/O table and adds its figures to `summary`.
pub fn run(
    opts: &LabOptions,
    progress: &dyn Progress,
    summary: &mut Summary,
    seed_table: &[(&str, [u32; 5])],
) -> Result<FileResult, LabError> {
    let counts: Vec<u32> = if opts.quick {
        vec![4, 64, 1024]
    } else {
        vec![4, 16, 64, 256, 1024]
    };
    // shared:256 caps the shared queue at the in-flight total of the
    // segments (4 x 64), so the two differ only in who may reap what;
    // segments:8 shows the slot binding at every count. The quick run
    // leaves both out to stay short.
    let uniform_models: &[&str] = if opts.quick {
        &["shared", "segments", "sync"]
    } else {
        &["shared", "shared:256", "segments", "segments:8", "sync"]
    };
    let skew_models: &[&str] = if opts.quick {
        &["shared", "segments", "sync"]
    } else {
        &["shared", "shared:256", "segments", "sync"]
    };
    let rounds = opts.runs.unwrap_or(if opts.quick { 1 } else { 3 });
    let secs = if opts.quick {
        Duration::from_millis(1500)
    } else {
        Duration::from_secs(3)
    };
    let path = tcpwise_aio::default_file(FILE_BYTES);
    let aio_err = |what: String| move |source| LabError::Aio { what, source };
    let skipped = |reason: String| {
        progress.done(
            progress.step("completion (file I/O)", 0),
            &format!("completion (file I/O): skipped: {reason}"),
        );
        Ok(FileResult {
            table: FileTable {
                runs: Vec::new(),
                counts: counts.clone(),
                skipped: Some(reason.clone()),
            },
            markdown: format!("### File I/O (the report's own workload)\n\nSkipped: {reason}.\n\n"),
            plots: Vec::new(),
            headline: None,
        })
    };
    if let Err(e) = tcpwise_aio::probe() {
        if skippable(&e) {
            return skipped(e.to_string());
        }
        return Err(aio_err("completion: io_uring".into())(e));
    }
    let file = match DataFile::open(&path, FILE_BYTES, || {
        let id = progress.step(
            &format!(
                "completion: creating the data file {} (1 GiB, once)",
                path.display()
            ),
            0,
        );
        progress.done(id, "completion: data file created");
    }) {
        Ok(f) => f,
        Err(e) if skippable(&e) => return skipped(e.to_string()),
        Err(e) => return Err(aio_err("completion: the data file".into())(e)),
    };
    let plan: Vec<(Keys, &[&str])> = vec![(Keys::Uniform, uniform_models), (SKEW, skew_models)];
    let per_round: usize = plan.iter().map(|(_, m)| m.len()).sum::<usize>() * counts.len();
    let id = progress.step(
        &format!(
            "completion (file I/O): {rounds} round(s) x {per_round} runs of {secs:?}, {THREADS} threads, {}",
            path.display()
        ),
        (rounds * per_round) as u64,
    );
    let mut runs = Vec::new();
    for round in 0..rounds {
        for &c in &counts {
            for (keys, models) in &plan {
                for &m in *models {
                    opts.check()?;
                    let o = Options {
                        model: m.parse::<Model>().expect("known model"),
                        clients: c,
                        threads: THREADS,
                        duration: secs,
                        keys: *keys,
                        seed: opts.seed + round as u64,
                    };
                    let report = tcpwise_aio::run(&o, &file)
                        .map_err(aio_err(format!("completion: {m} file I/O, {c} clients")))?;
                    runs.push(FileRun { round, report });
                    progress.inc(id, 1);
                }
            }
        }
    }
    let med = |keys: Keys, m: &str, c: u32, k: fn(&AioReport) -> f64| {
        let v: Vec<f64> = runs
            .iter()
            .filter(|r| {
                r.report.keys == keys.to_string() && r.report.model == m && r.report.clients == c
            })
            .map(|r| k(&r.report))
            .collect();
        if v.is_empty() {
            f64::NAN
        } else {
            median_p90(&v).0
        }
    };
    let tps = |r: &AioReport| r.tps;
    let steal: u64 = runs.iter().filter_map(|r| r.report.steal_ticks).sum();
    let hi = counts[counts.len() - 1];
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### File I/O: the report's own workload, on io_uring\n\nsysbench `update_no_key` reduced to its I/O: each closed-loop client's transaction reads one 16 KiB page at a random key from `{}` (1 GiB, {} pages, written once and reused) with `O_DIRECT`, updates a row and writes the page back. **No fsync** (the report's author turned durability off to stress the I/O path; so do we). A transaction holds its page's latch from read to write (as a row lock would), so under skewed keys the hottest pages queue (`latch waits`). {THREADS} I/O threads per model: `shared` (one ring, as deep as the clients need; a reaper thread hands completions to one queue any of the 4 workers drains: a completion port, as MariaDB's tpool does on Linux), `shared:256` (the same with at most 256 I/Os in flight, the total the segments allow), `segments` (4 rings, each I/O bound to ring hash(page) mod 4 with at most 64 in flight; only the owner reaps it: WaitForMultipleObjects' segments), `segments:8` (8 slots a segment), `sync` (4 threads doing pread/pwrite). {secs:?} per run, {rounds} round(s) interleaving every model, key set and count; medians. Every page of the file was read back and checked after every run (header, checksum, version of its last write). Hypervisor steal over all runs: {steal} ticks.\n",
        file.path.display(),
        file.pages
    );
    let mut cols: Vec<String> = vec!["model".into()];
    cols.extend(counts.iter().map(|c| c.to_string()));
    let mut plots = Vec::new();
    for (keys, models) in &plan {
        let prefix = key_prefix(*keys);
        let _ = writeln!(
            md,
            "Transactions per second, {keys} keys (last column: at {hi} clients over the model's best count):\n\n{}",
            table_head(&[cols.clone(), vec![format!("{hi}/peak")]].concat())
        );
        let mut series: Vec<Series> = Vec::new();
        for &m in models.iter() {
            let color = color_of(m);
            let v: Vec<f64> = counts.iter().map(|&c| med(*keys, m, c, tps)).collect();
            let peak = v.iter().copied().fold(0.0f64, f64::max);
            let flat = v[v.len() - 1] / peak;
            for (c, t) in counts.iter().zip(&v) {
                summary.insert(format!("{prefix}_{}_{c}_tps", model_key(m)), (*t).into());
            }
            summary.insert(format!("{prefix}_{}_flatness", model_key(m)), flat.into());
            let cells: Vec<String> = v.iter().map(|t| format!("{t:.0}")).collect();
            let _ = writeln!(md, "| {m} | {} | {flat:.2} |", cells.join(" | "));
            series.push((
                m.to_string(),
                color,
                counts
                    .iter()
                    .zip(&v)
                    .map(|(&c, &t)| (f64::from(c).log2(), t))
                    .collect(),
            ));
        }
        let ratio = med(*keys, "shared", hi, tps) / med(*keys, "segments", hi, tps);
        summary.insert(format!("{prefix}_shared_over_segments_{hi}"), ratio.into());
        let _ = writeln!(
            md,
            "\nAt {hi} clients, {keys} keys: shared / segments = {ratio:.2}. What each model did there (medians; per-thread completions of the median-throughput run):\n\n{}",
            table_head(
                &[
                    "model",
                    "in flight (peak)",
                    "I/O in kernel p50 / p99 ms",
                    "queued (peak)",
                    "slot waits",
                    "slot wait p99 ms",
                    "latch waits",
                    "p99 ms",
                    "busiest thread CPU %",
                    "completions per thread"
                ]
                .map(String::from)
            )
        );
        for &m in *models {
            let f = |k: fn(&AioReport) -> f64| med(*keys, m, hi, k);
            let mine: Vec<&AioReport> = runs
                .iter()
                .map(|r| &r.report)
                .filter(|r| r.keys == keys.to_string() && r.model == m && r.clients == hi)
                .collect();
            let mid = f(tps);
            let spread = mine
                .iter()
                .min_by(|a, b| (a.tps - mid).abs().total_cmp(&(b.tps - mid).abs()))
                .map(|r| format!("{:?}", r.per_thread_completions))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "| {m} | {:.0} | {:.1} / {:.1} | {:.0} | {:.0} | {:.1} | {:.0} | {:.1} | {:.0} | {spread} |",
                f(|r| r.inflight_peak as f64),
                f(|r| r.io_p50_ms),
                f(|r| r.io_p99_ms),
                f(|r| r.queued_peak as f64),
                f(|r| r.slot_waits as f64),
                f(|r| r.slot_wait_p99_ms),
                f(|r| r.latch_waits as f64),
                f(|r| r.p99_ms),
                f(|r| r.busiest_thread_cpu * 100.0),
            );
        }
        let _ = writeln!(md);
        plots.push(lines(
            &format!("File I/O transactions per second, {keys} keys"),
            "log2(clients): 2 = 4, 6 = 64, 10 = 1024",
            "transactions/s",
            &series,
        ));
    }
    let _ = writeln!(
        md,
        "The seed's table (sysbench update_no_key on Windows, 2011) for comparison:\n\n| server | 4 | 16 | 64 | 256 | 1024 |\n|---|---|---|---|---|---|"
    );
    for (name, v) in seed_table {
        let cells: Vec<String> = v.iter().map(u32::to_string).collect();
        let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
    }
    let _ = writeln!(md);
    let lo = counts[0];
    let headline = format!(
        "file I/O (uniform): shared {:.0} -> {:.0} tx/s, segments {:.0} -> {:.0}; skewed at {hi}: shared/segments {:.2}",
        med(Keys::Uniform, "shared", lo, tps),
        med(Keys::Uniform, "shared", hi, tps),
        med(Keys::Uniform, "segments", lo, tps),
        med(Keys::Uniform, "segments", hi, tps),
        med(SKEW, "shared", hi, tps) / med(SKEW, "segments", hi, tps),
    );
    progress.done(id, &format!("completion: {headline}"));
    Ok(FileResult {
        table: FileTable {
            runs,
            counts,
            skipped: None,
        },
        markdown: md,
        plots,
        headline: Some(headline),
    })
}
