//! The report's section, plots and headline for the completion
//! experiment: the network table, then the file-I/O half's (no I/O).

use super::Details as Measured;
use super::analysis::Analysis;
use super::{Plan, SEED, files};
use crate::html::{Band, Series, lines};
use crate::report::table_head;
use crate::verdict::{intervals_in_words, ratio_note};
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
    /// The decision.
    pub record: &'a crate::sequential::Record,
    /// The file-I/O half.
    pub files: files::render::Section<'a>,
}

impl Section<'_> {
    /// The claim's paragraph, with the decision's figure and the tables'.
    fn claim(&self) -> String {
        let (m, a) = (self.measured, self.analysis);
        let hi = self.plan.counts[self.plan.counts.len() - 1];
        let shared = m.models.iter().position(|x| x == "shared");
        // By name: a run recorded before a part existed did not decide it.
        let specs = super::parts();
        let part = |i: usize| {
            self.record
                .parts
                .iter()
                .find(|p| p.name == specs[i].name)
                .map_or("not decided in this run".into(), |p| p.interval_text())
        };
        format!(
            "MariaDB replaced InnoDB's fixed segments (each I/O bound to one thread's slots, waited on with WaitForMultipleObjects) by one completion port that any worker drains: under sysbench the segmented server fell from 23,436 to 6,043 transactions/s between 64 and 1024 clients, the completion port stayed flat at about 25,900. **On this machine** the decision's rounds ({} rounds) put the shared queue's requests/s over the network at 1,024 clients over its best of 4, 64 and 1,024 clients at {}; on the report's own workload, file I/O, shared's transactions/s at 1,024 clients over its best of 64 and 1,024 at {} and innodb's (segments with InnoDB's semantics) at {}. In the network tables below shared keeps {} of its peak at {hi} clients ({} round(s)); the segmented network model, which only binds connections to threads (Linux has no 64-handle limit), keeps {}.",
            self.record.rounds,
            part(0),
            part(1),
            part(2),
            shared.map_or("-".into(), |i| a.flatness[i].text(2)),
            a.rounds,
            m.models
                .iter()
                .position(|x| x == "segments")
                .map_or("-".into(), |i| a.flatness[i].text(2)),
        )
    }

    /// Which of InnoDB's semantics made the collapse: each left out in
    /// turn at the top file count, over innodb in the same round.
    fn semantics(&self, md: &mut String) {
        let d = super::Decision::new();
        let rows = super::analysis::semantics(&d, &self.measured.decision);
        // Rounds recorded before innodb was modelled have none of its runs.
        let innodb = d.file_models[1].to_string();
        let n = self
            .measured
            .decision
            .iter()
            .filter(|r| r.1.iter().any(|f| f.report.model == innodb))
            .count();
        if n == 0 {
            return;
        }
        let top = d.file_top();
        let _ = writeln!(
            md,
            "\n#### Which of InnoDB's semantics made the difference\n\nIn each decision round, innodb with one semantic left out (it falls back to what the fair `segments` does) at {top} clients, over innodb in the same round ({n} round(s); {}):\n\n{}",
            intervals_in_words(n),
            table_head(&["variant", "tx/s over innodb's", "reading"].map(String::from)),
        );
        let (mut made, mut helps) = (Vec::new(), Vec::new());
        for (name, e) in &rows {
            let (text, effect) = reading(e);
            let short = name.trim_start_matches("innodb:without=").to_string();
            match effect {
                Some(true) => made.push(short),
                Some(false) => helps.push(short),
                None => {}
            }
            let _ = writeln!(md, "| {name} | {} | {text} |", e.cell(2));
        }
        let bounded = rows.iter().any(|(_, e)| e.interval.is_some());
        let _ = writeln!(md, "\n{}", semantics_line((&made, &helps), top, bounded));
    }

    /// The columns of the tables by clients.
    fn cols(&self) -> Vec<String> {
        let mut cols: Vec<String> = vec!["model".into()];
        cols.extend(self.plan.counts.iter().map(|c| c.to_string()));
        cols
    }

    /// How the tables ran, and requests per second by clients; the
    /// plot's lines and bands, the table's medians and intervals.
    fn tps(&self, md: &mut String) -> (Vec<Series>, Vec<Band>) {
        let (plan, m, a) = (self.plan, self.measured, self.analysis);
        let counts = &plan.counts;
        let hi = counts[counts.len() - 1];
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
        let cols = self.cols();
        let _ = writeln!(
            md,
            "Requests per second by clients, median over rounds ({}; last column: at {hi} clients over the best count, round by round; the field report's segmented server fell to 0.26, its completion port kept 1.00):\n\n{}",
            intervals_in_words(a.rounds),
            table_head(&[cols.clone(), vec![format!("{hi}/peak")]].concat())
        );
        let mut series: Vec<Series> = Vec::new();
        let mut bands: Vec<Band> = Vec::new();
        let colors = [BLUE, RED, RGBColor(0, 140, 0), RGBColor(200, 120, 0)];
        for (i, (model, color)) in m.models.iter().zip(colors).enumerate() {
            // The line is the table's medians, so the two agree.
            let spread = &a.tps_spread[i];
            let x = |c: usize| (c as f64).log2();
            series.push((
                model.clone(),
                color,
                counts
                    .iter()
                    .zip(spread)
                    .map(|(&c, e)| (x(c), e.median))
                    .collect(),
            ));
            if a.rounds > 1 {
                bands.push((
                    color,
                    counts
                        .iter()
                        .zip(spread)
                        .filter_map(|(&c, e)| e.interval.map(|i| (x(c), i.lo, i.hi)))
                        .collect(),
                ));
            }
            let cells: Vec<String> = spread.iter().map(|e| e.cell(0)).collect();
            let _ = writeln!(
                md,
                "| {model} | {} | {} |",
                cells.join(" | "),
                a.flatness[i].cell(2)
            );
        }
        (series, bands)
    }

    /// p99 latency, the field report's table, the ratios at the top count, and
    /// the models that lose ground.
    fn rest(&self, md: &mut String) {
        let (plan, m, a) = (self.plan, self.measured, self.analysis);
        let counts = &plan.counts;
        let hi = counts[counts.len() - 1];
        let cols = self.cols();
        let _ = writeln!(md, "\nLatency p99 by clients, ms:\n\n{}", table_head(&cols));
        for (i, model) in m.models.iter().enumerate() {
            let cells: Vec<String> = a.p99_ms[i].iter().map(|p| format!("{p:.1}")).collect();
            let _ = writeln!(md, "| {model} | {} |", cells.join(" | "));
        }
        let _ = writeln!(
            md,
            "\nThe field report (sysbench update_no_key, Windows, 2011), transactions/s at 4 / 16 / 64 / 256 / 1024 clients:\n\n| server | 4 | 16 | 64 | 256 | 1024 |\n|---|---|---|---|---|---|"
        );
        for (name, v) in SEED {
            let cells: Vec<String> = v.iter().map(u32::to_string).collect();
            let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
        }
        let (seg, tok) = a.ratios_at_top;
        let _ = writeln!(
            md,
            "\nAt {hi} clients segments/shared: throughput {:.2} (round by round {}), p99 latency {:.2}; tokio/shared: throughput {:.2} (round by round {}), p99 {:.2}. Below the count where the two server cores saturate, throughput grows with clients because each client has one request in flight per round trip ({} ms here; the field report's clients were local). Linux `poll` has no 64-handle limit, so the segmented model here only loses what binding costs: a worker busy with a 5 ms request holds up the connections bound to it while the other worker might have served them.",
            a.segments_over_shared.0,
            seg.text(2),
            a.segments_over_shared.1,
            a.tokio_over_shared.0,
            tok.text(2),
            a.tokio_over_shared.1,
            m.rtt_ms,
        );
        for (what, e) in [("segments/shared", seg), ("tokio/shared", tok)] {
            if let Some(note) = ratio_note(&format!("at {hi} clients {what}"), &e) {
                let _ = writeln!(md, "\n{note}");
            }
        }
        // A model that loses ground toward the top count is said, most of
        // all a completion-style one (the field report says they stay flat).
        for (model, flat) in m.models.iter().zip(&a.flatness) {
            if flat.median < 0.9 {
                let why = match (model == "shared" || model == "io-uring", a.rounds >= 3) {
                    (true, false) => {
                        ": a completion-style model, which the field report says stays flat; a round of noise can do this (the decision above reads many rounds)"
                    }
                    (true, true) if flat.interval.is_some_and(|i| i.hi < 0.9) => {
                        ": a completion-style model, which the field report says stays flat; every round showed it, so it is not one round's noise"
                    }
                    (true, true) => {
                        ": a completion-style model, which the field report says stays flat; not every round showed it, so part of it is noise"
                    }
                    _ => "",
                };
                let _ = writeln!(
                    md,
                    "\n**{model} loses ground**: {} of its peak requests/s at {hi} clients{why}.",
                    flat.text(2)
                );
            }
        }
    }
}

/// How a leave-one-out variant's interval over innodb reads, and what it
/// names the semantic: part of the collapse (`Some(true)`), a help to
/// innodb (`Some(false)`), or neither shown.
fn reading(e: &crate::verdict::Estimate) -> (&'static str, Option<bool>) {
    match e.interval {
        Some(i) if i.lo > 1.0 => ("faster without it: part of the collapse", Some(true)),
        Some(i) if i.hi < 1.0 => ("slower without it: it helps here", Some(false)),
        Some(_) => ("the interval holds 1: no difference shown", None),
        None => ("too few rounds for an interval", None),
    }
}

/// The paragraph after the leave-one-out table, from the semantics it
/// named part of the collapse (`made`) and a help (`helps`); `bounded`:
/// whether any variant had an interval.
fn semantics_line((made, helps): (&[String], &[String]), top: u32, bounded: bool) -> String {
    let list = |v: &[String]| (v.join(", "), if v.len() == 1 { "it" } else { "they" });
    let found = if !bounded {
        format!(
            "**Not yet told:** no variant has an interval yet, so this run cannot say which semantic, if any, made innodb's transactions/s at {top} clients what they were"
        )
    } else if made.is_empty() && helps.is_empty() {
        format!(
            "**No single semantic:** none of the four, left out alone, changed innodb's transactions/s at {top} clients by more than its rounds' spread here"
        )
    } else if made.is_empty() {
        let (h, they) = list(helps);
        format!(
            "**No semantic of the collapse:** leaving none of the four out raised innodb's transactions/s at {top} clients beyond its interval; leaving out {h} lowered them: {they} helped innodb here, not made it collapse"
        )
    } else {
        let (m, they) = list(made);
        let mut line = format!(
            "**Which made it:** leaving out {m} raised innodb's transactions/s at {top} clients beyond its interval: {they} made the difference here"
        );
        if !helps.is_empty() {
            let (h, they) = list(helps);
            line.push_str(&format!("; leaving out {h} lowered them: {they} helped"));
        }
        line
    };
    format!(
        "{found}. That a semantic causes the report's collapse is our hypothesis, tested on Linux with io_uring standing in for Windows' overlapped I/O."
    )
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let (m, a) = (self.measured, self.analysis);
        let mut md = String::new();
        let (series, bands) = self.tps(&mut md);
        self.rest(&mut md);
        let files = self.files.render();
        md.push('\n');
        md.push_str(&files.markdown);
        self.semantics(&mut md);
        let ours = match &self.files.analysis.headline {
            Some(h) => format!("network: {}; {h}", a.headline),
            None => a.headline.clone(),
        };
        let headline = Headline {
            field_report: "sysbench, 4 -> 1024 clients: segments 17,812 -> 6,043 tx/s; completion port 19,217 -> 25,925 (flat)".into(),
            ours,
            verdict: Some(super::analysis::verdict(a, &m.models, self.record)),
            conditions: Vec::new(),
        };
        let mut plots = vec![lines(
            "Requests per second by number of clients",
            "log2(clients): 2 = 4, 6 = 64, 10 = 1024",
            "requests/s",
            &series,
            &bands,
        )];
        plots.extend(files.plots);
        Rendered {
            markdown: crate::section::Skeleton {
                name: "completion",
                reproduces: "MariaDB: one completion queue drained by any worker",
                claim: self.claim(),
                here: None,
                body: md,
            }
            .markdown(),
            plots,
            headline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Estimate;

    #[test]
    fn the_semantics_line_names_what_the_intervals_show() {
        let above = Estimate::of(&[1.7, 1.8, 1.9, 1.6, 1.75, 1.85, 1.8]);
        let level = Estimate::of(&[0.9, 1.1, 1.0, 1.05, 0.95, 1.02, 0.98]);
        let below = Estimate::of(&[0.6, 0.7, 0.65, 0.72, 0.68, 0.62, 0.7]);
        assert_eq!(reading(&above).1, Some(true));
        assert_eq!(reading(&level).1, None);
        assert_eq!(reading(&below).1, Some(false));
        assert_eq!(
            reading(&Estimate::of(&[1.8])).1,
            None,
            "one round names nothing"
        );
        let none: &[String] = &[];
        let wake = ["wake-all".to_string()];
        let lowest = ["lowest-first".to_string()];
        let holds = semantics_line((&wake, none), 1024, true);
        let fails = semantics_line((none, none), 1024, true);
        let early = semantics_line((none, none), 1024, false);
        // The 3 Dec default run: only lowest-first moved innodb, downward;
        // "none of the four changed it" would have been false.
        let helped = semantics_line((none, &lowest), 1024, true);
        let both = semantics_line((&wake, &lowest), 1024, true);
        assert!(early.contains("cannot say"), "{early}");
        assert!(holds.contains("leaving out wake-all"), "{holds}");
        assert!(
            fails.contains("none of the four, left out alone"),
            "{fails}"
        );
        assert!(
            helped.contains("leaving out lowest-first lowered")
                && !helped.contains("none of the four, left"),
            "{helped}"
        );
        assert!(
            both.contains("wake-all raised") || both.contains("out wake-all raised"),
            "{both}"
        );
        assert!(both.contains("lowest-first lowered"), "{both}");
        let mask = |t: &str| t.replace(|c: char| c.is_ascii_digit(), "#");
        assert_ne!(mask(&holds), mask(&fails));
        assert_ne!(mask(&helped), mask(&fails));
    }

    /// The section rendered from the recorded run's tables with two
    /// synthetic decisions: innodb collapsed (holds) and innodb flat
    /// (fails); the verdicts must read apart with figures masked, and
    /// neither section may print NaN or an unbounded interval.
    #[test]
    fn the_verdict_follows_the_decision() {
        use crate::sequential::{Record, Stop};
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/lab-default.json"
        );
        let fx: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
        let m: super::super::Details =
            serde_json::from_value(fx["experiments"]["completion"]["details"].clone())
                .expect("the recorded details");
        let plan = m.plan();
        let a = super::super::analysis::analyse(&plan, &m);
        let fa = super::super::files::analysis::analyse(&plan.files, &m.files);
        let render = |rounds: [f64; 3]| {
            let record = Record::of_rounds(
                super::super::parts(),
                &vec![rounds.to_vec(); 8],
                Stop::Decided,
            );
            let r = Section {
                plan: &plan,
                measured: &m,
                analysis: &a,
                record: &record,
                files: files::render::Section {
                    plan: &plan.files,
                    measured: &m.files,
                    analysis: &fa,
                },
            }
            .render();
            (r.markdown, r.headline.verdict.expect("a verdict"))
        };
        let (holds_md, holds) = render([0.97, 0.95, 0.4]);
        let (fails_md, fails) = render([0.97, 0.95, 0.97]);
        for md in [&holds_md, &fails_md] {
            assert!(!md.contains("NaN") && !md.contains("inf]"), "{md}");
        }
        assert!(holds_md.contains("0.400") && fails_md.contains("0.970"));
        let mask = |t: &str| t.replace(|c: char| c.is_ascii_digit(), "#");
        assert_ne!(holds.outcome, fails.outcome);
        assert_ne!(mask(&holds.line()), mask(&fails.line()));
    }
}
