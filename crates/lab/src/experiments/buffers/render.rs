//! The report's section, plot and headline for the buffers experiment,
//! from its plan, downloads and figures (no I/O).

use super::analysis::Analysis;
use super::measure::Measured;
use super::{Plan, SEED_BUFFER};
use crate::html::{Band, Series, lines};
use crate::{Headline, Render, Rendered};
use plotters::style::{BLUE, RED, RGBColor};
use std::fmt::Write;
use tcpwise_emu::testbed::{DEFAULT_SYSCTLS, LINUX_DEFAULT_TCP_MEM, sysctls_text};
use tcpwise_perf::PerfReport;

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The downloads.
    pub measured: &'a Measured,
    /// Their figures.
    pub analysis: &'a Analysis,
}

/// Per second, over an arm's downloads: (end of the second, median,
/// smallest, largest), Mbit/s.
fn per_second(runs: &[PerfReport]) -> Vec<(f64, f64, f64, f64)> {
    let rows = runs.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    (0..rows)
        .filter_map(|i| {
            let mut v: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.intervals.get(i).map(|x| x.mbit))
                .collect();
            let end = runs.iter().find_map(|r| r.intervals.get(i))?.end_s;
            v.sort_by(f64::total_cmp);
            Some((end, crate::common::median_p90(&v).0, v[0], v[v.len() - 1]))
        })
        .collect()
}

/// What a new namespace inherited, as the run read it: the host's values
/// (Linux 4.15 on), which are neither arm's unless they happen to match.
fn inherited_text(read: &[(String, String)]) -> String {
    if read.is_empty() {
        return "a new namespace copies its host's values, which this record does not keep".into();
    }
    let kv: Vec<(&str, &str)> = read.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    format!(
        "the host's values a new namespace inherits, read from a fresh one when the run started, are {} (so each arm sets its own)",
        sysctls_text(&kv)
    )
}

impl Section<'_> {
    /// The claim's paragraph, with how the downloads ran.
    fn claim(&self) -> String {
        let (secs, rounds) = (self.plan.secs, self.analysis.rounds);
        format!(
            "A receive buffer pinned with `SO_RCVBUF` caps a download at about the buffer over the round trip, whatever the link; leaving the buffer to the kernel's autotuning reaches line rate. **Here**: path {}; {rounds} download(s) of {secs} s an arm with `tcpwise perf -R`, receiver in the client namespace, static and autotuned alternating. The testbed raises the autotuning ceilings in both namespaces ({}); the third arm sets them to Linux's boot-time defaults ({}, what a stock host has) on the same path{}; {}. Figures are medians over an arm's downloads ({}).",
            self.measured.paths.first().map_or("", |p| p.path.as_str()),
            sysctls_text(DEFAULT_SYSCTLS),
            sysctls_text(LINUX_DEFAULT_TCP_MEM),
            if self.measured.details.auto_default.is_empty() {
                ", as far as the share holds: it did not run here (the experiments after this one needed the time)"
            } else {
                ""
            },
            inherited_text(&self.measured.details.inherited),
            crate::verdict::intervals_in_words(rounds)
        )
    }

    /// The goodput table beside the field report's, and the ratio.
    fn summary(&self, md: &mut String) {
        let d = &self.measured.details;
        let a = self.analysis;
        let (ceiling, predicted) = (a.ceiling, a.predicted);
        let sndbuf = {
            let v: Vec<f64> = d
                .auto_default
                .iter()
                .filter_map(|r| r.summary.sndbuf_limited_pct)
                .collect();
            (!v.is_empty()).then(|| crate::common::median_p90(&v).0)
        };
        let _ = writeln!(
            md,
            "| goodput over the run | static {SEED_BUFFER} B | autotuned ({} MiB ceilings) | autotuned (Linux's default ceilings) | path ceiling |\n|---|---|---|---|---|",
            tcpwise_emu::testbed::tcp_mem_max() >> 20
        );
        let _ = writeln!(
            md,
            "| this run, Mbit/s | {} (cap predicted {predicted:.2}) | {} (steady {}) | {} | {ceiling:.2} |",
            a.pinned.cell(2),
            a.auto.cell(2),
            a.steady.cell(1),
            if d.auto_default.is_empty() {
                "did not run".to_string()
            } else {
                format!(
                    "{} (send-buffer-limited {})",
                    a.auto_default.cell(2),
                    sndbuf.map_or("-".into(), |p| format!("{p:.0} % of the time"))
                )
            }
        );
        let _ = writeln!(
            md,
            "| field report (Windows, over the Internet), Mbit/s | 11.3 avg, 12.6 max | 126 avg, 151 max | | 151 |\n"
        );
        let _ = writeln!(
            md,
            "Autotuned over static, download by download: {} times.\n",
            a.times.text(1)
        );
        if let Some(note) = crate::verdict::overlap_note(
            "the autotuned flows with the testbed's and with Linux's default ceilings",
            &a.auto,
            &a.auto_default,
            " Mbit/s",
        ) {
            let _ = writeln!(md, "{note}\n");
        }
    }

    /// Per second, each arm's median over its downloads.
    fn per_second(&self, md: &mut String, arms: &[Vec<(f64, f64, f64, f64)>; 3]) {
        let rounds = self.analysis.rounds;
        let ceiling = self.analysis.ceiling;
        // An arm that did not run gets no column.
        let ran: Vec<bool> = arms.iter().map(|r| !r.is_empty()).collect();
        let names = ["static", "autotuned", "autotuned, Linux's default ceilings"];
        let head: Vec<&str> = names
            .iter()
            .zip(&ran)
            .filter(|x| *x.1)
            .map(|x| *x.0)
            .collect();
        let _ = writeln!(
            md,
            "Per second, Mbit/s{}:\n\n| second | {} |\n|---|{}",
            if rounds > 1 {
                format!(" (median of {rounds} downloads [smallest, largest])")
            } else {
                String::new()
            },
            head.join(" | "),
            "---|".repeat(head.len())
        );
        let rows = arms.iter().map(Vec::len).max().unwrap_or(0);
        // A second above the ceiling is physics, not a fault: say why.
        let over = arms.iter().flatten().map(|x| x.3).fold(0.0f64, f64::max);
        for i in 0..rows {
            let start = arms
                .iter()
                .find_map(|r| r.get(i))
                .map_or(i as f64, |x| x.0 - 1.0);
            let cells: Vec<String> = arms
                .iter()
                .zip(&ran)
                .filter(|x| *x.1)
                .map(|(r, _)| {
                    r.get(i).map_or("-".into(), |x| {
                        if rounds > 1 {
                            format!("{:.1} [{:.1}, {:.1}]", x.1, x.2, x.3)
                        } else {
                            format!("{:.1}", x.1)
                        }
                    })
                })
                .collect();
            let _ = writeln!(md, "| {:.0} | {} |", start.max(0.0), cells.join(" | "));
        }
        if over > ceiling {
            let _ = writeln!(
                md,
                "\nOne second reads {over:.1} Mbit/s, above the {ceiling:.1} Mbit/s the link can carry: after a loss the receiver holds the data that arrived out of order until the retransmission fills the hole (SACK recovery), then hands it all over at once, so that second counts bytes that crossed the link in the seconds before. The run's average is what the ceiling bounds."
            );
        }
    }

    /// What `tcpwise perf` diagnosed of the static and the default ceilings' runs.
    fn diagnoses(&self, md: &mut String) {
        let d = &self.measured.details;
        if let Some(dg) = d.pinned.iter().find_map(|r| r.summary.diagnosis.as_ref()) {
            let _ = writeln!(md, "\nDiagnosis of the static run: {dg}");
        }
        if let Some(dg) = d
            .auto_default
            .iter()
            .find_map(|r| r.summary.diagnosis.as_ref())
        {
            let _ = writeln!(md, "\nDiagnosis with Linux's default ceilings: {dg}");
        }
        let _ = writeln!(
            md,
            "\nLinux doubles SO_RCVBUF and advertises 160/256 of it for full-sized segments, so the field report's request caps at about 15.7 Mbit/s here rather than Windows' 12.6."
        );
    }

    /// The per-second plot.
    fn plot(&self, arms: &[Vec<(f64, f64, f64, f64)>; 3]) -> String {
        let (secs, rounds) = (self.plan.secs, self.analysis.rounds);
        let ceiling = self.analysis.ceiling;
        let colors = [RED, BLUE, RGBColor(0, 140, 0)];
        let names = [
            "static SO_RCVBUF",
            "autotuned",
            "autotuned, Linux's default ceilings",
        ];
        let end = arms[1].last().map_or(secs as f64, |x| x.0);
        let mut series: Vec<Series> = names
            .iter()
            .zip(colors)
            .zip(arms)
            .filter(|(_, r)| !r.is_empty())
            .map(|((n, c), r)| {
                (
                    if rounds > 1 {
                        format!("{n} (median)")
                    } else {
                        n.to_string()
                    },
                    c,
                    r.iter().map(|x| (x.0, x.1)).collect(),
                )
            })
            .collect();
        series.push((
            "payload ceiling".into(),
            RGBColor(120, 120, 120),
            vec![(0.0, ceiling), (end, ceiling)],
        ));
        let bands: Vec<Band> = if rounds > 1 {
            colors
                .iter()
                .zip(arms)
                .filter(|(_, r)| !r.is_empty())
                .map(|(c, r)| (*c, r.iter().map(|x| (x.0, x.2, x.3)).collect()))
                .collect()
        } else {
            Vec::new()
        };
        lines(
            &if rounds > 1 {
                format!(
                    "Per-second goodput, median of {rounds} downloads (band: smallest to largest)"
                )
            } else {
                "Per-second goodput: static 278,775-byte buffer vs autotuned".into()
            },
            "seconds",
            "Mbit/s",
            &series,
            &bands,
        )
    }

    /// The first table's line.
    fn headline(&self) -> Headline {
        let (secs, rounds) = (self.plan.secs, self.analysis.rounds);
        let a = self.analysis;
        let (ceiling, predicted) = (a.ceiling, a.predicted);
        Headline {
            field_report: "278,775-byte static buffer: 11.3 Mbit/s avg (12.6 max); autotuned 126 avg, 151 max, on 151 Mbit/s / 177 ms".into(),
            ours: format!(
                "static {:.1} Mbit/s (predicted cap {predicted:.1}); autotuned {:.1} Mbit/s = {:.0} % of the {ceiling:.1} ceiling ({secs} s, median of {rounds}; {})",
                a.pinned.median,
                a.auto.median,
                100.0 * a.auto.median / ceiling,
                if self.measured.details.auto_default.is_empty() {
                    "Linux's default autotuning ceilings did not run".to_string()
                } else {
                    format!(
                        "{:.1} with Linux's default autotuning ceilings",
                        a.auto_default.median
                    )
                },
            ),
            verdict: Some(super::analysis::verdict(a)),
            conditions: Vec::new(),
        }
    }
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let d = &self.measured.details;
        let mut md = String::new();
        self.summary(&mut md);
        let arms = [
            per_second(&d.pinned),
            per_second(&d.auto),
            per_second(&d.auto_default),
        ];
        self.per_second(&mut md, &arms);
        self.diagnoses(&mut md);
        Rendered {
            markdown: crate::section::Skeleton {
                name: "buffers",
                reproduces: "Windows TCP team: no static socket buffers",
                claim: self.claim(),
                here: None,
                body: md,
            }
            .markdown(),
            plots: vec![self.plot(&arms)],
            headline: self.headline(),
        }
    }
}
