//! `results.json` and `report.md`, rewritten after every experiment.

use crate::{ExperimentResult, LabOptions};
use std::fmt::Write;

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
    experiments: std::collections::BTreeMap<String, &'a ExperimentResult>,
}

/// Writes both files; returns the header line the HTML page repeats.
pub fn write(opts: &LabOptions, done: &[ExperimentResult]) -> std::io::Result<String> {
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
    let doc = ResultsFile {
        tcpwise_version: env!("CARGO_PKG_VERSION"),
        kernel: &kernel,
        machine: format!("{cores} x {cpu}"),
        seed: opts.seed,
        quick: opts.quick,
        experiments: done.iter().map(|e| (e.name.replace('-', "_"), e)).collect(),
    };
    let tmp = opts.out.join("results.json.tmp");
    std::fs::write(
        &tmp,
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n",
    )?;
    std::fs::rename(&tmp, opts.out.join("results.json"))?;
    let header = format!(
        "tcpwise {}, kernel {kernel}, {cores} x {cpu}, seed {}{}. Every testbed namespace gets {} before the experiment's own sysctls (listed with each path).",
        env!("CARGO_PKG_VERSION"),
        opts.seed,
        if opts.quick { ", quick" } else { "" },
        tcpwise_emu::testbed::sysctls_text(tcpwise_emu::testbed::DEFAULT_SYSCTLS)
    );
    let mut md = String::new();
    let _ = writeln!(md, "# tcpwise lab report\n\n{header}\n\n{}", glance(done));
    for e in done {
        md.push_str(&section(e));
    }
    let tmp = opts.out.join("report.md.tmp");
    std::fs::write(&tmp, md)?;
    std::fs::rename(&tmp, opts.out.join("report.md"))?;
    Ok(header)
}

/// A Markdown table's header row and rule: `| a | b |` then `|---|---|`.
pub fn table_head<S: AsRef<str>>(cols: &[S]) -> String {
    let names: Vec<&str> = cols.iter().map(AsRef::as_ref).collect();
    format!("| {} |\n|{}", names.join(" | "), "---|".repeat(names.len()))
}

/// The first table: each experiment's seed figure beside ours.
pub fn glance(done: &[ExperimentResult]) -> String {
    let mut md =
        String::from("| experiment | the seed reported | this run measured |\n|---|---|---|\n");
    for e in done {
        let _ = writeln!(
            md,
            "| [{}](#{}) | {} | {} |",
            e.name, e.name, e.headline.seed, e.headline.ours
        );
    }
    md
}

/// One experiment's section: its text and tables, then the emulator's
/// error on each path it used.
pub fn section(e: &ExperimentResult) -> String {
    let mut md = e.markdown.clone();
    let _ = writeln!(
        md,
        "\nEmulator error on the paths used (smallest RTT TCP measured minus the configured RTT; how late the forwarders released packets):\n\n| path | TCP min RTT - configured | lateness up p50 / p99 / max µs | down |\n|---|---|---|---|"
    );
    for p in &e.paths {
        let l = |x: (f64, f64, f64)| format!("{:.0} / {:.0} / {:.0}", x.0, x.1, x.2);
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            p.path,
            p.rtt_error_ms.map_or("-".into(), |v| format!("{v:+.2} ms")),
            l(p.up_lateness_us),
            l(p.down_lateness_us)
        );
    }
    md.push('\n');
    md
}
