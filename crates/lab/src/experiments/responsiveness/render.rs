//! The report's section, plots and headline for the responsiveness
//! experiment (no I/O).

use super::analysis::{Analysis, Cell};
use super::measure::{Details, Second};
use super::{BLOATED, FQ_CODEL, Plan, QUEUES};
use crate::html::{Bar, Series, bars, lines};
use crate::{Headline, Render, Rendered};
use plotters::style::RGBColor;
use std::fmt::Write;
use tcpwise_emu::testbed::{DEFAULT_SYSCTLS, sysctls_text};
use tcpwise_tcp::lowat::{ADAPTIVE_MAX, ADAPTIVE_MIN, ADAPTIVE_TIME};

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The tests.
    pub details: &'a Details,
    /// Their figures.
    pub analysis: &'a Analysis,
}

fn ms(e: &crate::verdict::Estimate) -> String {
    if e.median.is_finite() {
        e.cell(1)
    } else {
        "-".into()
    }
}

fn row(c: &Cell) -> String {
    format!(
        "| {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {:.0} | {}/{} | {} |",
        c.queue,
        c.arm,
        c.rpm.cell(0),
        tcpwise_rpm::stats::band(c.rpm.median),
        c.rpm_p90.median,
        ms(&c.foreign_ms),
        ms(&c.self_ms),
        ms(&c.idle_ms),
        c.goodput.cell(2),
        c.flows,
        c.stable,
        c.n,
        c.steal
    )
}

/// The probe latencies of the first round of one (queue, arm) on the
/// first path, per second: foreign and self.
fn probe_series(
    d: &Details,
    path: &str,
    queue: &str,
    arm: &str,
    colors: [RGBColor; 2],
) -> Vec<Series> {
    let Some(r) = d
        .runs
        .iter()
        .find(|r| r.path == path && r.queue == queue && r.arm == arm)
    else {
        return Vec::new();
    };
    let pick = |f: fn(&Second) -> Option<f64>| -> Vec<(f64, f64)> {
        r.per_second
            .iter()
            .filter_map(|x| f(x).map(|v| (x.0, v)))
            .collect()
    };
    vec![
        (format!("foreign, {arm}"), colors[0], pick(|x| x.1)),
        (format!("self, {arm}"), colors[1], pick(|x| x.2)),
    ]
}

fn over_time(plan: &Plan, d: &Details, queue: &str) -> String {
    let path = plan.paths.first().map_or("", |p| p.name.as_str());
    let mut series = Vec::new();
    let colors = [
        [RGBColor(230, 120, 120), RGBColor(200, 0, 0)],
        [RGBColor(120, 150, 230), RGBColor(0, 60, 200)],
    ];
    for (arm, c) in plan.arms.iter().filter(|a| a.cc == "cubic").zip(colors) {
        series.extend(probe_series(d, path, queue, &arm.label(), c));
    }
    lines(
        &format!("Probe latency over the test: {path}, {queue}, CUBIC (first round)"),
        "seconds into the loaded phase",
        "ms (median of the second's probes)",
        &series,
        &[],
    )
}

impl Section<'_> {
    /// How it ran here.
    fn here(&self) -> String {
        let plan = self.plan;
        format!(
            "`tcpwise rpm --direction down` (the draft's method and defaults, each loaded phase at most {} s, HTTP/2 over TLS, in-process in the client namespace) against `tcpwise serve --tls` in the server namespace, one server per setting side by side: `--notsent-lowat off` or `auto` ({} ms of the connection's delivery rate from TCP_INFO, {} KiB to {} MiB, the same bound on each HTTP/2 stream's and rustls's send buffer) × `-C cubic` or `bbr`. Queues (both directions): {}. Rounds interleave the settings: {}. Testbed: {}. Steal: hypervisor ticks over a cell's tests.",
            self.details.max_secs.unwrap_or(plan.max_duration.as_secs()),
            ADAPTIVE_TIME.as_millis(),
            ADAPTIVE_MIN / 1024,
            ADAPTIVE_MAX >> 20,
            plan.queues
                .iter()
                .map(|q| format!("{} (`--queue {}`)", q.label, q.spec))
                .collect::<Vec<_>>()
                .join(", "),
            crate::verdict::cells_in_words(
                &self.analysis.cells.iter().map(|c| c.n).collect::<Vec<_>>(),
                "tests"
            ),
            sysctls_text(DEFAULT_SYSCTLS),
        )
    }

    /// A table per path, the first path's ratios, and which queue holds
    /// the latency.
    fn tables(&self, md: &mut String) {
        let (plan, a) = (self.plan, self.analysis);
        for why in &plan.left_out {
            let _ = writeln!(md, "Note: {why}.\n");
        }
        for p in &plan.paths {
            let _ = writeln!(
                md,
                "### {}\n\n| queue | server | RPM | band | RPM from P90 | foreign probe ms | self probe ms | idle ms | goodput Mbit/s | flows | stable | steal |\n|---|---|---|---|---|---|---|---|---|---|---|---|",
                p.name
            );
            for c in a.cells.iter().filter(|c| c.path == p.name) {
                let _ = writeln!(md, "{}", row(c));
            }
            md.push('\n');
        }
        let _ = writeln!(
            md,
            "On the first path with CUBIC: FQ-CoDel with the mark over the bloated drop-tail without it: RPM {}, goodput {}; FQ-CoDel over the bloated drop-tail with the mark on both (the network's queue alone): RPM {}; under FQ-CoDel the self probes take {} as long with the mark as without.\n",
            a.fixed_over_bloated.times(2),
            a.goodput_ratio.times(2),
            a.queue_alone.times(2),
            a.lowat_self.times(2),
        );
        if let Some(n) = crate::verdict::ratio_note(
            "FQ-CoDel over drop-tail, both with the mark",
            &a.queue_alone,
        ) {
            let _ = writeln!(md, "{n}\n");
        }
        let _ = writeln!(
            md,
            "**Which queue holds the latency.** Foreign probes open new connections, so they wait only in the network's queue: on a drop-tail queue their round trip grows to the queue's delay, under FQ-CoDel a new flow has a queue of its own and sees about the idle RTT. Self probes ride a loaded HTTP/2 connection, so they also wait behind that flow's queue in the network and everything its server has queued: without `TCP_NOTSENT_LOWAT` that is the autotuned socket buffer (megabytes), whatever the network's queue; with it, the mark and what the kernel lets past it (the mark is checked when a write starts a new segment, which may hold up to 64 KB), a TLS record and an HTTP/2 frame (16 KiB each): tens of kilobytes, which at the few Mbit/s each of 5 to 16 flows gets here is 100 ms and more.\n\n**For a server operator.** {}\n",
            a.advice
        );
    }

    /// The first path's RPM bars and the two decisive queues over time.
    fn plots(&self, path: &str) -> Vec<String> {
        let (plan, d, a) = (self.plan, self.details, self.analysis);
        let items: Vec<Bar> = a
            .cells
            .iter()
            .filter(|c| c.path == path)
            .map(|c| {
                (
                    format!("{}, {}", c.queue.replace(" (bloated)", ""), c.arm),
                    c.rpm.median,
                    c.rpm.interval.map(|i| (i.lo, i.hi)),
                )
            })
            .collect();
        let mut plots = vec![bars(
            &format!("RPM on {path} (median, whisker: runs)"),
            "RPM",
            &items,
        )];
        for q in [BLOATED, FQ_CODEL] {
            if plan.queues.contains(&QUEUES[q]) {
                plots.push(over_time(plan, d, QUEUES[q].label));
            }
        }
        plots
    }

    /// The first table's line.
    fn ours(&self, path: &str) -> String {
        let a = self.analysis;
        let cell = |q: usize, lowat: &str| {
            a.cells.iter().find(|c| {
                c.path == path
                    && c.queue == QUEUES[q].label
                    && c.arm == format!("lowat {lowat}, cubic")
            })
        };
        match (cell(BLOATED, "off"), cell(FQ_CODEL, "auto")) {
            (Some(b), Some(f)) => format!(
                "{path}, CUBIC: bloated drop-tail, lowat off: {:.0} RPM ({}), foreign {:.0} ms, self {:.0} ms; FQ-CoDel, lowat auto: {:.0} RPM ({}), foreign {:.0} ms, self {:.0} ms; goodput {:.2} vs {:.2} Mbit/s",
                b.rpm.median,
                tcpwise_rpm::stats::band(b.rpm.median),
                b.foreign_ms.median,
                b.self_ms.median,
                f.rpm.median,
                tcpwise_rpm::stats::band(f.rpm.median),
                f.foreign_ms.median,
                f.self_ms.median,
                b.goodput.median,
                f.goodput.median,
            ),
            _ => "-".into(),
        }
    }
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let a = self.analysis;
        let mut md = String::new();
        let claim = "Autotuned buffers reach line rate (the buffers experiment); the field's measure of what big buffers cost is responsiveness, round trips per minute while the path is loaded (draft-ietf-ippm-responsiveness, Apple's networkQuality; the draft's bands: under 300 poor, to 1000 fair, to 6000 good). A bloated link loses RPM in two queues: the network's (which a new connection, a *foreign* probe, waits in) and the sender's own socket and HTTP/2 buffers (which a request on a loaded connection, a *self* probe, waits behind as well). A short network queue (FQ-CoDel) and a bounded sender queue (`TCP_NOTSENT_LOWAT`) should both be needed.".to_string();
        self.tables(&mut md);
        let path = self.plan.paths.first().map_or("", |p| p.name.as_str());
        Rendered {
            markdown: crate::section::Skeleton {
                name: "responsiveness",
                reproduces: "the Windows field report's other half: what big buffers cost in latency",
                claim,
                here: Some(self.here()),
                body: md,
            }
            .markdown(),
            plots: self.plots(path),
            headline: Headline {
                field_report: "(the Windows field report's other half) the field: a bloated 90 Mbit/s home link about 840 RPM, well-run links several thousand; bands < 300 poor, to 1000 fair".into(),
                ours: self.ours(path),
                verdict: Some(a.verdict.clone()),
                conditions: Vec::new(),
            },
        }
    }
}
