//! The section, plot and headline of the sharing experiment (no I/O).

use super::Plan;
use super::analysis::Analysis;
use super::measure::Measured;
use crate::html::{Series, lines};
use crate::{Headline, Render, Rendered};
use plotters::style::RGBColor;
use std::fmt::Write;

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The trials.
    pub measured: &'a Measured,
    /// Their figures.
    pub analysis: &'a Analysis,
}

const COLOURS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
];

impl Section<'_> {
    fn tables(&self, md: &mut String) {
        for f in &self.analysis.cases {
            let (rate, queue) = f.case.bottleneck();
            let (secs, warm) = f.case.secs();
            let _ = writeln!(
                md,
                "### {}\n\nBottleneck {} Mbit/s, `{queue}` (its BDP over the longest path), ACKs unlimited; {secs} s trials, shares over seconds {warm}-{secs}; bottleneck sojourn p99 {:.1} ms (median over rounds); steal {} ticks over its trials.\n\n| host | congestion control | access RTT | start | goodput Mbit/s |\n|---|---|---|---|---|",
                f.case.label(),
                rate / 1_000_000,
                f.sojourn_p99_ms,
                f.steal
            );
            for (i, (cc, rtt, start)) in f.case.hosts().into_iter().enumerate() {
                let _ = writeln!(
                    md,
                    "| {cc}{i} | {cc} | {rtt} ms | {start} s | {} |",
                    f.goodput[i].cell(2)
                );
            }
            let _ = writeln!(
                md,
                "\nShare of the flow the criterion reads: {}; Jain's index {}.\n",
                f.share.cell(3),
                f.jain.cell(3)
            );
        }
    }

    /// Every flow's goodput over time, one chart per case (its last trial).
    fn plots(&self) -> Vec<String> {
        let last = self.measured.details.rounds.last();
        let mut out = Vec::new();
        for t in last.into_iter().flatten() {
            let series: Vec<Series> = t
                .hosts
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    let pts = h
                        .per_s_mbit
                        .iter()
                        .enumerate()
                        .map(|(s, m)| (s as f64 + 0.5, *m))
                        .collect();
                    (
                        format!("{}{i} ({} ms)", h.cc, h.rtt_ms),
                        COLOURS[i % COLOURS.len()],
                        pts,
                    )
                })
                .collect();
            out.push(lines(
                &format!("{}: goodput at the bottleneck, last trial", t.case.label()),
                "s",
                "Mbit/s",
                &series,
                &[],
            ));
        }
        out
    }
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let a = self.analysis;
        let mut md = String::new();
        self.tables(&mut md);
        let _ = writeln!(
            md,
            "**Beside the papers.** Cao et al. (IMC 2019) measured BBR taking 94 % of a bottleneck far below a BDP from CUBIC; Ware et al. (IMC 2019) model BBR's share against loss-based flows in a deep buffer at about 0.55 whatever their number; RFC 8290's FQ-CoDel gives each flow its own queue; a CUBIC flow's window grows in real time, so the shorter RTT wins (RFC 9438), where BBR's in-flight cap of 2 BDP favours the longer RTT (Hock et al., ICNP 2017; Ma et al., 2017). `docs/emu.md` keeps the figures of each run beside its command.\n"
        );
        let ours = a
            .cases
            .iter()
            .map(|f| format!("{}: {:.2}", f.case.label(), f.share.median))
            .collect::<Vec<_>>()
            .join("; ");
        let here = format!(
            "one `emu dumbbell` topology per trial (each host a namespace behind its own access link, one receiver), `tcpwise perf` senders in-process with `TCP_CONGESTION` set on their sockets, CUBIC started first; goodput counted by 5-tuple at the bottleneck's exit; {} cases a round, rounds until decided.",
            self.plan.cases.len()
        );
        Rendered {
            markdown: crate::section::Skeleton {
                name: "sharing",
                reproduces: "BBR and CUBIC at one bottleneck: Cao et al. and Ware et al., IMC 2019",
                claim: "BBR takes most of a shallow drop-tail buffer from CUBIC, about half of a deep one, and FQ-CoDel shares fairly; with different RTTs CUBIC favours the short one, BBR the long one.".into(),
                here: Some(here),
                body: md,
            }
            .markdown(),
            plots: self.plots(),
            headline: Headline {
                field_report: "BBR's share vs CUBIC: 0.94 shallow (Cao et al.), ~0.55 deep (Ware et al.), fair under FQ-CoDel".into(),
                ours,
                verdict: Some(a.verdict.clone()),
                conditions: Vec::new(),
            },
        }
    }
}
