//! The report's section, plots and headline for the completion
//! experiment: the network table, then the file-I/O half's (no I/O).

use super::analysis::Analysis;
use super::measure::Measured;
use super::{Plan, SEED, files};
use crate::html::{Series, lines};
use crate::report::table_head;
use crate::{Headline, Render, Rendered};
use plotters::style::{BLUE, RED, RGBColor};
use std::fmt::Write;

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The network runs.
    pub measured: &'a Measured,
    /// Their figures.
    pub analysis: &'a Analysis,
    /// The file-I/O half.
    pub files: files::render::Section<'a>,
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let (plan, m, a) = (self.plan, self.measured, self.analysis);
        let counts = &plan.counts;
        let hi = counts[counts.len() - 1];
        let mut md = String::new();
        let _ = writeln!(
            md,
            "## completion (MariaDB: one completion queue drained by any worker)\n"
        );
        let _ = writeln!(
            md,
            "Path: {}. Server: 2 worker threads per model, all running side by side in the server namespace; models `shared` (one epoll set armed one-shot, drained by any worker one event at a time: a completion port), `segments` (each connection bound at accept to one worker, round robin, which waits on at most 64 of its connections at once, like WaitForMultipleObjects; the rest queue for a slot), `tokio` (tokio's work-stealing runtime, what tcpwise's servers use), `io-uring` (one ring: multishot accept, multishot receive into provided buffers; its thread hands whole requests to one queue any worker drains and sends the replies through the ring: completions rather than readiness){}. Listen backlog {backlog}. Load: `tcpwise dispatch load`, closed loop, 16-byte requests, 512-byte replies, server work 50 µs, 1 % of requests 5 ms; {:?} measured after {:?} warm-up, {} round(s), median over rounds.\n",
            m.desc,
            m.left_out
                .as_ref()
                .map(|w| format!(" ({w})"))
                .unwrap_or_default(),
            plan.secs,
            plan.warm,
            plan.rounds,
            backlog = tcpwise_dispatch::server::BACKLOG,
        );
        let mut cols: Vec<String> = vec!["model".into()];
        cols.extend(counts.iter().map(|c| c.to_string()));
        let _ = writeln!(
            md,
            "Requests per second by clients (last column: at {hi} clients over the best count; the seed's segmented server fell to 0.26, its completion port kept 1.00):\n\n{}",
            table_head(&[cols.clone(), vec![format!("{hi}/peak")]].concat())
        );
        let mut series: Vec<Series> = Vec::new();
        let colors = [BLUE, RED, RGBColor(0, 140, 0), RGBColor(200, 120, 0)];
        for (i, (model, color)) in m.models.iter().zip(colors).enumerate() {
            let v = &a.tps[i];
            series.push((
                model.clone(),
                color,
                counts
                    .iter()
                    .zip(v)
                    .map(|(&c, &t)| ((c as f64).log2(), t))
                    .collect(),
            ));
            let cells: Vec<String> = v.iter().map(|t| format!("{t:.0}")).collect();
            let _ = writeln!(
                md,
                "| {model} | {} | {:.2} |",
                cells.join(" | "),
                a.flatness[i]
            );
        }
        let _ = writeln!(md, "\nLatency p99 by clients, ms:\n\n{}", table_head(&cols));
        for (i, model) in m.models.iter().enumerate() {
            let cells: Vec<String> = a.p99_ms[i].iter().map(|p| format!("{p:.1}")).collect();
            let _ = writeln!(md, "| {model} | {} |", cells.join(" | "));
        }
        let _ = writeln!(
            md,
            "\nThe seed (sysbench update_no_key, Windows, 2011), transactions/s at 4 / 16 / 64 / 256 / 1024 clients:\n\n| server | 4 | 16 | 64 | 256 | 1024 |\n|---|---|---|---|---|---|"
        );
        for (name, v) in SEED {
            let cells: Vec<String> = v.iter().map(u32::to_string).collect();
            let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
        }
        let _ = writeln!(
            md,
            "\nAt {hi} clients segments/shared: throughput {:.2}, p99 latency {:.2}; tokio/shared: throughput {:.2}, p99 {:.2}. Below the count where the two server cores saturate, throughput grows with clients because each client has one request in flight per round trip ({} ms here; the seed's clients were local). Linux `poll` has no 64-handle limit, so the segmented model here only loses what binding costs: a worker busy with a 5 ms request holds up the connections bound to it while the other worker might have served them.",
            a.segments_over_shared.0,
            a.segments_over_shared.1,
            a.tokio_over_shared.0,
            a.tokio_over_shared.1,
            m.rtt_ms,
        );
        // A model that loses ground toward the top count is said, most of
        // all a completion-style one (the seed says they stay flat).
        for (model, flat) in m.models.iter().zip(&a.flatness) {
            if *flat < 0.9 {
                let why = if model == "shared" || model == "io-uring" {
                    ": a completion-style model, which the seed says stays flat; one round of noise can do this (the verdict waits for 2 rounds), so compare the full run"
                } else {
                    ""
                };
                let _ = writeln!(
                    md,
                    "\n**{model} loses ground**: {flat:.2} of its peak requests/s at {hi} clients{why}."
                );
            }
        }
        let files = self.files.render();
        md.push('\n');
        md.push_str(&files.markdown);
        let ours = match &self.files.analysis.headline {
            Some(h) => format!("network: {}; {h}", a.headline),
            None => a.headline.clone(),
        };
        let fp = self.files.plan;
        let skew = fp
            .sets
            .iter()
            .position(|(k, _)| *k == files::SKEW)
            .and_then(|i| self.files.analysis.shared_over_segments.get(i))
            .map(|r| (*r, fp.rounds));
        let headline = Headline {
            seed: "sysbench, 4 -> 1024 clients: segments 17,812 -> 6,043 tx/s; completion port 19,217 -> 25,925 (flat)".into(),
            ours,
            verdict: Some(super::analysis::verdict(a, &m.models, plan.rounds, skew)),
        };
        let mut plots = vec![lines(
            "Requests per second by number of clients",
            "log2(clients): 2 = 4, 6 = 64, 10 = 1024",
            "requests/s",
            &series,
        )];
        plots.extend(files.plots);
        Rendered {
            markdown: md,
            plots,
            headline,
        }
    }
}
