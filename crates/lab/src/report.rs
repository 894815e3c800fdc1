//! `results.json` and `report.md`, rewritten after every experiment.
//!
//! `results.json` holds everything the two pages are made of (each
//! experiment's [`Entry`]: its figures, headline, paths, section and
//! plots, and the run's header line), so `tcpwise lab report DIR`
//! rebuilds `report.md` and `index.html` from it alone, byte for byte.

use crate::{ExperimentResult, Headline, LabOptions, PathError, Summary};
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::Path;

/// What the report shows of one experiment: the part of an
/// [`ExperimentResult`] the pages are rendered from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// Name (`buffers`, `idle-selection`, ...).
    pub name: String,
    /// Named figures.
    pub summary: Summary,
    /// The emulator's error on each path used.
    pub paths: Vec<PathError>,
    /// The first table's line.
    pub headline: Headline,
    /// The experiment's section of report.md.
    pub markdown: String,
    /// Its plots (SVG).
    pub plots: Vec<String>,
    /// The sequential decision, where it ran in rounds until decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<crate::sequential::Record>,
}

impl From<&ExperimentResult> for Entry {
    fn from(e: &ExperimentResult) -> Entry {
        Entry {
            name: e.name.clone(),
            summary: e.summary.clone(),
            paths: e.paths.clone(),
            headline: e.headline.clone(),
            markdown: e.markdown.clone(),
            plots: e.plots.clone(),
            decision: e.decision.clone(),
        }
    }
}

/// What `tcpwise lab report` reads back of `results.json`.
#[derive(Deserialize)]
pub struct Saved {
    /// The run's header line.
    pub header: String,
    /// The experiments' names in report order (the order chosen; some
    /// run at once).
    pub order: Vec<String>,
    /// Each experiment, under its name with `_` for `-`.
    pub experiments: std::collections::BTreeMap<String, Entry>,
}

impl Saved {
    /// Reads `DIR/results.json`.
    pub fn load(dir: &Path) -> Result<Saved, crate::LabError> {
        let p = dir.join("results.json");
        let text = std::fs::read_to_string(&p)
            .map_err(|e| crate::LabError::Usage(format!("cannot read {}: {e}", p.display())))?;
        serde_json::from_str(&text).map_err(|e| {
            crate::LabError::Usage(format!(
                "{}: not a results.json this tcpwise can rebuild a report from ({e}; runs before the report was kept in it cannot be rebuilt)",
                p.display()
            ))
        })
    }

    /// The entries in the order they ran.
    pub fn entries(self) -> Result<Vec<Entry>, crate::LabError> {
        let mut map = self.experiments;
        self.order
            .iter()
            .map(|n| {
                map.remove(&n.replace('-', "_")).ok_or_else(|| {
                    crate::LabError::Usage(format!(
                        "results.json: '{n}' is in order but not in experiments"
                    ))
                })
            })
            .collect()
    }
}

fn first_line(path: &str) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_default()
}

/// `results.json`.
#[derive(serde::Serialize)]
struct ResultsFile<'a> {
    tcpwise_version: &'static str,
    kernel: &'a str,
    machine: String,
    seed: u64,
    quick: bool,
    header: &'a str,
    order: Vec<&'a str>,
    experiments: std::collections::BTreeMap<String, &'a ExperimentResult>,
}

/// Writes `results.json`; returns the header line both pages open with.
pub fn write_json(opts: &LabOptions, done: &[ExperimentResult]) -> std::io::Result<String> {
    let kernel = first_line("/proc/sys/kernel/osrelease");
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let header = format!(
        "tcpwise {}, kernel {kernel}, {cores} x {cpu}, seed {}{}. Every testbed namespace gets {} before the experiment's own sysctls (listed with each path).{}",
        tcpwise_outcome::version(),
        opts.seed,
        if opts.quick { ", quick" } else { "" },
        tcpwise_emu::testbed::sysctls_text(tcpwise_emu::testbed::DEFAULT_SYSCTLS),
        crate::at_once_sentence(opts)
    );
    let doc = ResultsFile {
        tcpwise_version: tcpwise_outcome::version(),
        kernel: &kernel,
        machine: format!("{cores} x {cpu}"),
        seed: opts.seed,
        quick: opts.quick,
        header: &header,
        order: done.iter().map(|e| e.name.as_str()).collect(),
        experiments: done.iter().map(|e| (e.name.replace('-', "_"), e)).collect(),
    };
    let tmp = opts.out.join("results.json.tmp");
    std::fs::write(
        &tmp,
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n",
    )?;
    std::fs::rename(&tmp, opts.out.join("results.json"))?;
    Ok(header)
}

/// Writes `report.md` from the entries.
pub fn write_md(out: &Path, header: &str, done: &[Entry]) -> std::io::Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "# tcpwise lab report\n\n{header}\n\n{}", glance(done));
    for e in done {
        md.push_str(&section(e));
    }
    let tmp = out.join("report.md.tmp");
    std::fs::write(&tmp, md)?;
    std::fs::rename(&tmp, out.join("report.md"))
}

/// A Markdown table's header row and rule: `| a | b |` then `|---|---|`.
pub fn table_head<S: AsRef<str>>(cols: &[S]) -> String {
    let names: Vec<&str> = cols.iter().map(AsRef::as_ref).collect();
    format!("| {} |\n|{}", names.join(" | "), "---|".repeat(names.len()))
}

/// The first table: each experiment's seed figure beside ours.
pub fn glance(done: &[Entry]) -> String {
    let mut md = String::from(
        "| experiment | the seed reported | this run measured | verdict (criterion in the section) |\n|---|---|---|---|\n",
    );
    for e in done {
        let _ = writeln!(
            md,
            "| [{}](#{}) | {} | {} | {} |",
            e.name,
            e.name,
            e.headline.field_report,
            e.headline.ours,
            e.headline
                .verdict
                .as_ref()
                .map_or("-".to_string(), |v| v.cell())
        );
    }
    md
}

/// One experiment's section: its text and tables, then the emulator's
/// error on each path it used.
pub fn section(e: &Entry) -> String {
    let mut md = e.markdown.clone();
    // The verdict right under the section's title.
    if let Some(v) = &e.headline.verdict {
        let at = md.find('\n').map_or(md.len(), |i| i + 1);
        let decision = e.decision.as_ref().map_or(String::new(), |r| r.markdown());
        md.insert_str(at, &format!("\n{}{decision}", v.line()));
    }
    if e.paths.is_empty() {
        // No header over no rows: an experiment that ran no path says so.
        let _ = writeln!(md, "\nNo emulated path was measured.\n");
        return md;
    }
    let _ = writeln!(
        md,
        "\nEmulator error on the paths used (smallest RTT TCP measured minus the configured RTT; how late the forwarders released packets; the TUN offload mode they ran, and their threads):\n\n| path | TCP min RTT - configured | lateness up p50 / p99 / max µs | down | offload |\n|---|---|---|---|---|"
    );
    for p in &e.paths {
        let l = |x: (f64, f64, f64)| format!("{:.0} / {:.0} / {:.0}", x.0, x.1, x.2);
        let _ = writeln!(
            md,
            "| {}{} | {} | {} | {} | {} |",
            p.path,
            if p.late() { " (**late**)" } else { "" },
            p.rtt_error_ms.map_or("-".into(), |v| format!("{v:+.2} ms")),
            l(p.up_lateness_us),
            l(p.down_lateness_us),
            offload_cell(p)
        );
    }
    if e.paths.iter().any(|p| p.late()) {
        let _ = writeln!(
            md,
            "\n**late**: the forwarders' p99 lateness on that path exceeds 1 % of its RTT, enough to move a figure measured on it by about a percent; read its figures with that margin."
        );
    }
    md.push('\n');
    md
}

/// The offload column: the TUN mode, and how many forwarder threads ran
/// (one carries both directions of a slow path).
fn offload_cell(p: &crate::PathError) -> String {
    let mode = if p.offload.is_empty() {
        "-"
    } else {
        &p.offload
    };
    match p.threads {
        0 => mode.to_string(),
        1 => format!("{mode}, one thread"),
        n => format!("{mode}, {n} threads"),
    }
}

#[cfg(test)]
mod tests {
    use super::offload_cell;

    #[test]
    fn the_offload_column_names_the_forwarder_threads_when_known() {
        let p = |offload: &str, threads| crate::PathError {
            path: "rtt 20.0 ms".into(),
            rtt_error_ms: None,
            up_lateness_us: (0.0, 0.0, 0.0),
            down_lateness_us: (0.0, 0.0, 0.0),
            rtt_ms: 20.0,
            offload: offload.into(),
            threads,
        };
        assert_eq!(offload_cell(&p("tso+uso", 1)), "tso+uso, one thread");
        assert_eq!(offload_cell(&p("off", 2)), "off, 2 threads");
        // Results written before either was kept.
        assert_eq!(offload_cell(&p("tso+uso", 0)), "tso+uso");
        assert_eq!(offload_cell(&p("", 0)), "-");
    }

    #[test]
    fn a_section_without_paths_has_no_headed_empty_table() {
        let mut e = super::Entry {
            name: "buffers".into(),
            summary: Default::default(),
            paths: vec![],
            headline: crate::Headline {
                field_report: String::new(),
                ours: String::new(),
                verdict: None,
            },
            markdown: "## buffers\n".into(),
            plots: vec![],
            decision: None,
        };
        let md = super::section(&e);
        assert!(
            md.contains("No emulated path was measured.") && !md.contains("| path |"),
            "{md}"
        );
        e.paths.push(crate::PathError {
            path: "rtt 20.0 ms".into(),
            rtt_error_ms: Some(0.01),
            up_lateness_us: (1.0, 2.0, 3.0),
            down_lateness_us: (1.0, 2.0, 3.0),
            rtt_ms: 20.0,
            offload: "tso+uso".into(),
            threads: 1,
        });
        let md = super::section(&e);
        assert!(
            md.contains("| rtt 20.0 ms | +0.01 ms | 1 / 2 / 3 |"),
            "{md}"
        );
    }
}
