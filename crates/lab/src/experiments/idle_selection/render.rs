//! The report's section, plot and headline for idle selection (no I/O).

use super::Plan;
use super::analysis::Analysis;
use super::measure::Details as Measured;
use super::sweep_contenders;
use crate::html::{Bar, bars};
use crate::{Headline, Render, Rendered};
use std::fmt::Write;

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The runs.
    pub measured: &'a Measured,
    /// Their figures.
    pub analysis: &'a Analysis,
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let (a, runs) = (self.analysis, self.plan.runs);
        let mut md = String::new();
        let g0 = |k: &str| a.summary.get(k).map_or(f64::NAN, |f| f.as_f64());
        let claim = format!(
            "Firefox found that when an object can go on any of several idle connections to its origin, the one that last moved the largest burst (whose congestion window grew the furthest) loads it faster than the oldest (FIFO): a 25 KB object on a 250 ms path in 363 ms instead of 793 ms. **On this machine** FIFO takes {:.0} ms and the largest burst {:.0} ms ({:.0} and {:.0} round trips), medians of {runs} runs each: {}; Linux's initial window of 10 segments makes FIFO's cold connection one round trip shorter than the field report's.",
            g0("fifo_median_ms"),
            g0("max_burst_median_ms"),
            g0("fifo_round_trips"),
            g0("max_burst_round_trips"),
            match g0("fifo_round_trips") - g0("max_burst_round_trips") {
                d if d >= 1.0 => format!(
                    "the largest burst saves {d:.0} round trip(s), as the field report's did"
                ),
                _ => "the largest burst saves no round trip, unlike the field report's".to_string(),
            }
        );
        for t in &a.tables {
            md.push_str(&table_md(t));
        }
        if let (Some(runs), Some(_)) = (self.plan.sweep_runs, &self.measured.sweep) {
            md.push_str(&sweep_md(a, runs));
        }
        let _ = writeln!(
            md,
            "Seed (Firefox 4 beta, 2011, 250 ms): FIFO 793 ms (three round trips), sort by burst 363 ms. Linux servers start at 10 segments, so a cold 25 KB object needs two round trips here.\n\n\
             With `=1` nothing changes on this testbed: Linux skips the idle restart for congestion controls with their own cong_control (BBR, inherited from the host), and for Reno/CUBIC `tcp_cwnd_restart()` halves the window once per RTO of idle rather than resetting it; after 1 s (RTO about 750 ms) that is one halving, and the warm connection still carries 25 KB in one round trip.\n\n\
             The `http2` row loads the page and the object over the origin's one h2c connection; `http3` over one QUIC connection to `tcpwise serve --tls --http3` on the same testbed (quinn's congestion control, CUBIC, in user space: the kernel's `tcp_slow_start_after_idle` does not apply to it, and its handshake is one round trip shorter, outside the timed object)."
        );
        let headline = Headline {
            field_report:
                "25 KB on an idle connection, 250 ms RTT: FIFO 793 ms, largest burst first 363 ms"
                    .into(),
            ours: headline_figures(a, runs),
            verdict: Some(super::analysis::verdict(a)),
            conditions: Vec::new(),
        };
        let mut items: Vec<Bar> = Vec::new();
        for t in &a.tables {
            for r in &t.rows {
                items.push((
                    format!("{} (ssai={})", r.contender.name(), t.ssai),
                    r.median_ms,
                    r.interval.map(|i| (i.lo, i.hi)),
                ));
            }
        }
        let plot = bars(
            "25 KB object on an idle connection: median load time by policy (whisker: its interval)",
            "ms",
            &items,
        );
        Rendered {
            markdown: crate::section::Skeleton {
                name: "idle-selection",
                reproduces: "Firefox: reuse the connection that moved the largest burst",
                claim,
                here: None,
                body: md,
            }
            .markdown(),
            plots: vec![plot],
            headline,
        }
    }
}

/// One server setting's table: each contender's median, interval, p90,
/// round trips, the connection it chose and its runs; the line said when
/// medians' intervals overlap.
fn table_md(t: &super::analysis::TableFigures) -> String {
    let mut md = format!(
        "Server `tcp_slow_start_after_idle={}`, the runs of each policy in the last column; one round trip plus serialisation = {:.0} ms.\n\n",
        t.ssai, t.one_round_trip_ms
    );
    md.push_str("| policy | median load time, ms | its interval, ms | p90, ms | round trips | connection it chose (typical) | runs |\n|---|---|---|---|---|---|---|\n");
    for r in &t.rows {
        let chose = if r.contender == super::Contender::Http3 {
            "its one QUIC connection".to_string()
        } else {
            format!("largest burst {} B", r.chosen_burst)
        };
        let _ = writeln!(
            md,
            "| {} | {:.1} | {} | {:.1} | {:.0} | {chose} | {} |",
            r.contender.name(),
            r.median_ms,
            r.interval.map_or("-".into(), |i| i.text(1)),
            r.p90_ms,
            r.round_trips,
            r.n,
        );
    }
    // Policies whose medians' intervals overlap.
    if let Some(note) = close_pairs(&t.rows) {
        let _ = writeln!(md, "\n{note}");
    }
    md.push('\n');
    md
}

/// The object-size sweep's table, `runs` runs each.
fn sweep_md(a: &Analysis, runs: usize) -> String {
    let mut md = format!(
        "Object-size sweep (server `=0`, {runs} runs each), median load time in ms (round trips) and its interval:\n\n"
    );
    let mut head = vec!["object".to_string()];
    head.extend(sweep_contenders().iter().map(|c| c.name()));
    let _ = writeln!(md, "{}", crate::report::table_head(&head));
    for (size, cells) in &a.sweep {
        let mut row = format!("| {} KB |", size / 1000);
        for (_, med, trips, e) in cells {
            let _ = write!(
                row,
                " {med:.0} ({trips:.0}) {} |",
                e.interval.map_or(String::new(), |i| i.text(0))
            );
        }
        let _ = writeln!(md, "{row}");
    }
    md.push('\n');
    md
}

/// The first table's figures: each contender's median at `=0` (FIFO and
/// the largest burst over `runs`), and at `=1` where the budget ran it.
fn headline_figures(a: &Analysis, runs: usize) -> String {
    let line = |t: &super::analysis::TableFigures| {
        t.rows
            .iter()
            .map(|r| format!("{} {:.0} ms", r.contender.name(), r.median_ms))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = a.tables.first().map_or(String::new(), line);
    s.push_str(&format!(
        " (server ssai=0, FIFO and largest burst medians of {runs})"
    ));
    if let Some(t) = a.tables.get(1) {
        s.push_str(&format!("; ssai=1: {}", line(t)));
    }
    s
}

/// The line under a table when contenders' medians' intervals overlap:
/// who they are, how far apart their medians are and how wide the
/// spread, read as no difference.
fn close_pairs(rows: &[super::analysis::Row]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    let (mut lo, mut hi, mut widest) = (f64::INFINITY, 0.0f64, 0.0f64);
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            let (Some(x), Some(y)) = (a.interval, b.interval) else {
                continue;
            };
            let spread = (x.hi - x.lo).max(y.hi - y.lo);
            if !x.apart(&y) {
                for r in [a, b] {
                    let n = r.contender.name();
                    if !names.contains(&n) {
                        names.push(n);
                        (lo, hi) = (lo.min(r.median_ms), hi.max(r.median_ms));
                    }
                }
                widest = widest.max(spread);
            }
        }
    }
    (!names.is_empty()).then(|| {
        format!(
            "**Spread larger than the effect**: the medians of {} lie within {:.1} ms of each other ({lo:.1} to {hi:.1}), less than their runs spread over (up to {widest:.1} ms); read them as no difference.",
            names.join(", "),
            hi - lo
        )
    })
}
