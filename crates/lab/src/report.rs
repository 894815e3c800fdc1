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
    glance: Glance,
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
        glance: Glance::of_results(done),
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

/// The experiments that test the four field reports, first in the
/// report (the mission's order); every other experiment follows them.
pub const FIELD_REPORTS: [&str; 4] = ["read-slow-start", "buffers", "completion", "idle-selection"];

/// One row of the report's first tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GlanceRow {
    /// The experiment.
    pub experiment: String,
    /// Its claim in a line (its section's title).
    pub claim: String,
    /// What the field report (or paper) measured.
    pub reported: String,
    /// What this run measured.
    pub measured: String,
    /// The verdict in words (`None`: the experiment gives none).
    pub verdict: Option<String>,
    /// Rounds its decision counted, and their seconds.
    pub rounds: Option<(usize, f64)>,
}

/// The report at a glance: the four field reports, the other
/// experiments, and the tally of their verdicts (kept in `results.json`
/// as `glance`, and printed at the end of a run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Glance {
    /// The field reports' rows.
    pub field_reports: Vec<GlanceRow>,
    /// Every other experiment's.
    pub others: Vec<GlanceRow>,
    /// "3 reproduced, 1 not reproduced, 4 undecided at budget".
    pub tally: String,
    /// The parts decided, and what their error rates imply together.
    pub family: String,
    /// The field reports this run left out (not named, or `--quick`'s
    /// choice), so a short table is not read as the whole answer.
    #[serde(default)]
    pub not_run: Vec<String>,
}

/// An entry's rows: one, or one a condition it was decided under.
fn rows(e: &Entry) -> Vec<GlanceRow> {
    let title = e.markdown.lines().next().unwrap_or_default();
    let claim = title
        .split_once('(')
        .and_then(|(_, r)| r.strip_suffix(')'))
        .unwrap_or(title.trim_start_matches("## "));
    let row = GlanceRow {
        experiment: e.name.clone(),
        claim: claim.into(),
        reported: e.headline.field_report.clone(),
        measured: e.headline.ours.clone(),
        verdict: e.headline.verdict.as_ref().map(|v| {
            match e
                .decision
                .as_ref()
                .and_then(crate::sequential::Record::more_text)
            {
                Some(more) => format!("{} ({more})", v.outcome),
                None => v.outcome.to_string(),
            }
        }),
        rounds: e.decision.as_ref().map(|d| (d.rounds, d.secs)),
    };
    if e.headline.conditions.is_empty() {
        return vec![row];
    }
    e.headline
        .conditions
        .iter()
        .map(|c| GlanceRow {
            claim: format!("{}, {}", row.claim, c.name),
            measured: c.measured.clone(),
            verdict: Some(c.verdict.clone()),
            ..row.clone()
        })
        .collect()
}

impl Glance {
    /// Of the experiments that ran.
    pub fn of_results(done: &[ExperimentResult]) -> Glance {
        Glance::of(&done.iter().map(Entry::from).collect::<Vec<_>>())
    }

    /// Of the entries that ran.
    pub fn of(done: &[Entry]) -> Glance {
        let (field_reports, others): (Vec<GlanceRow>, Vec<GlanceRow>) = done
            .iter()
            .flat_map(rows)
            .partition(|r| FIELD_REPORTS.contains(&r.experiment.as_str()));
        let mut counts: Vec<(String, usize)> = Vec::new();
        for v in done.iter().filter_map(|e| e.headline.verdict.as_ref()) {
            let w = v.outcome.to_string();
            match counts.iter_mut().find(|(k, _)| *k == w) {
                Some((_, n)) => *n += 1,
                None => counts.push((w, 1)),
            }
        }
        let tally = if counts.is_empty() {
            "no experiment gave a verdict".into()
        } else {
            let c: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
            c.join(", ")
        };
        let decided = done
            .iter()
            .filter_map(|e| e.decision.as_ref())
            .map(|d| d.decided())
            .sum();
        let not_run = FIELD_REPORTS
            .iter()
            .filter(|n| !done.iter().any(|e| e.name == **n))
            .map(|n| n.to_string())
            .collect();
        Glance {
            field_reports,
            others,
            not_run,
            tally,
            family: crate::sequential::family_text(decided, "in this run"),
        }
    }

    /// Markdown: the two tables, the tally and the family's bound.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        for (title, rows) in [
            ("The four field reports", &self.field_reports),
            ("The other experiments", &self.others),
        ] {
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(
                md,
                "**{title}**\n\n{}",
                table_head(&[
                    "experiment",
                    "claim",
                    "reported",
                    "this run measured",
                    "verdict",
                    "rounds, time"
                ])
            );
            for r in rows {
                let _ = writeln!(
                    md,
                    "| [{0}](#{0}) | {1} | {2} | {3} | {4} | {5} |",
                    r.experiment,
                    r.claim,
                    r.reported,
                    r.measured,
                    r.verdict
                        .as_deref()
                        .map_or("-".into(), |v| format!("**{v}**")),
                    r.rounds
                        .map_or("-".into(), |(n, s)| format!("{n}, {}", duration(s)))
                );
            }
            if title.starts_with("The four")
                && let Some(line) = self.not_run_line()
            {
                let _ = writeln!(md, "{line}\n");
            }
            md.push('\n');
        }
        if self.field_reports.is_empty()
            && let Some(line) = self.not_run_line()
        {
            let _ = writeln!(md, "{line}\n");
        }
        let _ = writeln!(md, "**Tally**: {}. {}", self.tally, self.family);
        md
    }

    /// Plain text for the terminal: a line per experiment, then the tally
    /// and the decisions' error rates.
    pub fn text(&self) -> String {
        let mut t = String::new();
        for r in self.field_reports.iter().chain(&self.others) {
            // The verdict's word in its column; what it adds in brackets
            // ("needs about 4 more rounds") at the line's end, so the
            // columns stay straight.
            let verdict = r.verdict.as_deref().unwrap_or("-");
            let (word, more) = match verdict.split_once(" (") {
                Some((w, m)) => (w, format!(": {}", m.strip_suffix(')').unwrap_or(m))),
                None => (verdict, String::new()),
            };
            let _ = writeln!(
                t,
                "{:<16} {:<30} {:<20} {}{more}",
                r.experiment,
                word,
                r.rounds.map_or(String::new(), |(n, s)| format!(
                    "{}, {}",
                    crate::sequential::rounds(n),
                    duration(s)
                )),
                r.claim
            );
        }
        if let Some(line) = self.not_run_line() {
            let _ = writeln!(t, "{line}");
        }
        let _ = writeln!(t, "tally: {}", self.tally);
        let _ = writeln!(t, "errors: {}", self.family);
        t
    }
}

impl Glance {
    /// "Not in this run: completion (...)" when a field report is missing.
    fn not_run_line(&self) -> Option<String> {
        if self.not_run.is_empty() {
            return None;
        }
        let names = self.not_run.join(", ");
        Some(format!(
            "Not in this run: {names}, whose field report is not answered here (--quick leaves completion out; name an experiment to run it: tcpwise lab {}).",
            self.not_run[0]
        ))
    }
}

/// `3 min 10 s`, `41 s`.
fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// The first tables: each experiment's reported figure beside ours, its
/// verdict in words, then the tally.
pub fn glance(done: &[Entry]) -> String {
    Glance::of(done).markdown()
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
                conditions: Vec::new(),
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

    /// A run without a field report's experiment says so under the
    /// first table, in the report and on the terminal; a full run does not.
    #[test]
    fn a_field_report_left_out_is_named_under_the_first_table() {
        let entry = |name: &str| super::Entry {
            name: name.into(),
            summary: Default::default(),
            paths: vec![],
            headline: crate::Headline {
                field_report: "theirs".into(),
                ours: "ours".into(),
                verdict: None,
                conditions: Vec::new(),
            },
            markdown: format!("## {name} (a claim)\n"),
            plots: vec![],
            decision: None,
        };
        let quick: Vec<_> = ["buffers", "idle-selection", "read-slow-start"]
            .into_iter()
            .map(entry)
            .collect();
        let g = super::Glance::of(&quick);
        assert_eq!(g.not_run, vec!["completion".to_string()]);
        let line = "Not in this run: completion, whose field report is not answered here";
        assert!(g.markdown().contains(line), "{}", g.markdown());
        assert!(g.text().contains(line), "{}", g.text());
        let all: Vec<_> = super::FIELD_REPORTS.into_iter().map(entry).collect();
        let g = super::Glance::of(&all);
        assert!(g.not_run.is_empty() && !g.markdown().contains("Not in this run"));
    }
}
