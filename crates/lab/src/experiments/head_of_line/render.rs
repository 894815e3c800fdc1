//! The report's section, plot and headline for the head-of-line
//! experiment (no I/O).

use super::NO_LOSS_TOLERANCE;
use super::analysis::{Analysis, Cell};
use super::measure::Details;
use super::{CONGESTION, H1_CONNECTIONS, Plan};
use crate::html::{Bar, bars};
use crate::{Headline, Render, Rendered};
use std::fmt::Write;

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The loads.
    pub details: &'a Details,
    /// Their figures.
    pub analysis: &'a Analysis,
    /// The decision.
    pub record: &'a crate::sequential::Record,
}

/// The published figures the issue cites, beside ours.
const PUBLISHED: &str = "Trevisan et al., \"Measuring HTTP/3: Adoption and Performance\" (2021), on emulated links: HTTP/3 gains under high latency or very low bandwidth and little under random loss alone; comparisons under netem loss of 0 to 12 % report large gains at high loss";

fn recovered(c: &Cell) -> String {
    match c.sent_recovered {
        Some((sent, r)) if sent > 0.0 => format!("{r:.1} / {sent:.0} ({:.2} %)", r / sent * 100.0),
        Some((sent, r)) => format!("{r:.1} / {sent:.0}"),
        None => "-".into(),
    }
}

/// A path's short name in the plot and the first table: its loss rate,
/// or LTE.
fn tag(plan: &Plan, path: &str) -> String {
    match plan.paths.iter().find(|p| p.name == path) {
        Some(p) if p.trace => "LTE".to_string(),
        Some(p) => format!("{} %", p.loss_pct),
        None => path.to_string(),
    }
}

impl Section<'_> {
    /// Whether `path`'s HTTP/3 over HTTP/2 part was decided (the
    /// highest-loss path's claim, the lossless path's detail).
    fn decided_on(&self, path: &str) -> bool {
        let Some((zero, worst)) = self.plan.decisive() else {
            return false;
        };
        let part = [(worst, 0), (zero, 1)]
            .into_iter()
            .find(|(i, _)| self.plan.paths[*i].name == path)
            .map(|(_, k)| k);
        part.and_then(|k| self.record.parts.get(k))
            .is_some_and(|p| p.state != crate::sequential::State::Undecided)
    }

    /// How it ran here.
    fn here(&self) -> String {
        let (plan, d) = (self.plan, self.details);
        let objects = &d.page[1..];
        format!(
            "`tcpwise serve --tls --http3 -C {CONGESTION}` in the server namespace (TCP with CUBIC, as quinn's QUIC uses by default, so the transports' loss recovery and multiplexing are compared, not two congestion controls), TLS 1.3 with ALPN for both. A page of one {} B HTML and {} objects of {} to {} B ({} B in all, drawn from the random seed), loaded cold on a fresh client each time (connects and handshakes included, as a first visit): the HTML, then every object at once; HTTP/1.1 over at most {H1_CONNECTIONS} connections, HTTP/2 and HTTP/3 over one. Page-load time runs to the last byte of the last object. The decision's rounds ({} of them) load the page over HTTP/2 and HTTP/3 on the path without loss back to back, and on the highest-loss path {}, every testbed at once{}; then, as far as the budget holds, each trial loads the page once per way on every path, the ways in a rotating order ({} loads a cell at most): {}. Random loss is Bernoulli, the same rate each way. Beside each cell, per load (means): packets the link dropped (server to client / client to server; \"both ways'\" where every load of the cell shared its link with the other way, so the drops are the pair's), and what the server's transport recovered: TCP segments retransmitted over segments sent (the server namespace's `RetransSegs` / `OutSegs`, so a cell's figure is its own connections'), QUIC packets declared lost over packets sent (quinn's statistics). Steal: hypervisor ticks over the cell's loads.",
            d.page[0],
            objects.len(),
            objects.iter().min().copied().unwrap_or(0),
            objects.iter().max().copied().unwrap_or(0),
            plan.page_bytes(),
            self.record.rounds + self.record.discarded,
            match self.analysis.replicas {
                0 | 1 => "back to back too".to_string(),
                n => format!(
                    "at once on each of {n} testbeds of their own (the same path, each with its own loss draws; the round's value there is the median of the {n} ratios, whose median is one ratio's)"
                ),
            },
            match self.analysis.pair_share {
                Some(x) => format!(
                    " (the two ways at once used at most {:.1} % of the link's rate together, the largest pair)",
                    x * 100.0
                ),
                None => String::new(),
            },
            plan.trials,
            crate::verdict::cells_in_words(
                &self.analysis.cells.iter().map(|c| c.n).collect::<Vec<_>>(),
                "loads"
            ),
        )
    }

    /// A table per path that ran, with its paired ratios, and how to
    /// read them.
    fn paths(&self, md: &mut String) {
        let (plan, a) = (self.plan, self.analysis);
        for why in &plan.left_out {
            let _ = writeln!(md, "Note: {why}.\n");
        }
        for p in plan
            .paths
            .iter()
            .filter(|p| a.cells.iter().any(|c| c.path == p.name))
        {
            let _ = writeln!(
                md,
                "### {}\n\n| way | page-load ms | p90 ms | HTML ms | connections | loads (failed) | link drops down / up | recovered / sent | steal |\n|---|---|---|---|---|---|---|---|---|",
                p.name
            );
            for c in a.cells.iter().filter(|c| c.path == p.name) {
                let _ = writeln!(
                    md,
                    "| {} | {} | {:.0} | {} | {:.0} | {} ({}) | {:.1} / {:.1}{} | {} | {} |",
                    c.proto.label(),
                    c.plt.cell(0),
                    c.plt_p90,
                    c.html.cell(0),
                    c.connections,
                    c.n,
                    c.failed,
                    c.drops.0,
                    c.drops.1,
                    if c.drops_of_pairs {
                        " (both ways')"
                    } else {
                        ""
                    },
                    recovered(c),
                    c.steal
                );
            }
            if let Some(r) = a.ratios.iter().find(|r| r.path == p.name) {
                let _ = writeln!(
                    md,
                    "\nPaired by trial: HTTP/3 / HTTP/2 {}, HTTP/1.1 / HTTP/2 {}.",
                    r.h3.times(2),
                    r.h1.times(2)
                );
                match crate::verdict::ratio_note("HTTP/3 / HTTP/2", &r.h3) {
                    // The decided part's own interval is the one to read
                    // on its path: this one pools the rounds' pairs at a
                    // fixed count, after the sequence chose when to stop.
                    Some(_) if self.decided_on(&p.name) => {
                        let _ = writeln!(
                            md,
                            "\nThis pooled interval over every pair is descriptive; the decision above reads the rounds' values by its confidence sequence, which stays valid however the rounds stopped."
                        );
                    }
                    Some(n) => {
                        let _ = writeln!(md, "\n{n}");
                    }
                    None => {}
                }
            }
            md.push('\n');
        }
        let _ = writeln!(
            md,
            "**Reading it.** Without loss the ways differ by their handshakes (QUIC's is one round trip, TCP + TLS 1.3 two) and by how fast one connection's window opens against six; the criterion allows HTTP/3 and HTTP/2 {:.0} % apart there. Under loss, a retransmission costs HTTP/2 every stream's progress for a round trip or more (the whole page waits behind one segment), HTTP/3 only the stream it belongs to, and HTTP/1.1's six connections each recover alone but each with a smaller window. The recovered / sent column shows the loss each transport saw and repaired; the link's drops are the loss the path imposed on the load.\n",
            NO_LOSS_TOLERANCE * 100.0
        );
    }

    /// Page-load time by path and way.
    fn plot(&self) -> String {
        let a = self.analysis;
        let items: Vec<Bar> = a
            .cells
            .iter()
            .map(|c| {
                (
                    format!("{}, {}", tag(self.plan, &c.path), c.proto.label()),
                    c.plt.median,
                    c.plt.interval.map(|i| (i.lo, i.hi)),
                )
            })
            .collect();
        bars(
            "Page-load time by loss rate and way (median, whisker: its interval)",
            "ms",
            &items,
        )
    }

    /// The first table's line: HTTP/3 over HTTP/2 on each path.
    fn ours(&self) -> String {
        let ours = self
            .analysis
            .ratios
            .iter()
            .map(|r| {
                format!(
                    "{}: HTTP/3 / HTTP/2 x{:.2}",
                    tag(self.plan, &r.path),
                    r.h3.median
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        if ours.is_empty() { "-".into() } else { ours }
    }
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let a = self.analysis;
        let mut md = String::new();
        let claim = format!(
            "HTTP/2 multiplexes a page over one TCP connection, so one lost segment holds every stream's bytes behind it until it is retransmitted (head-of-line blocking); QUIC recovers per stream and its handshake takes one round trip fewer. Without loss the two should load a page about as fast; under loss HTTP/3 should win. Published: {PUBLISHED}."
        );
        self.paths(&mut md);
        Rendered {
            markdown: crate::section::Skeleton {
                name: "head-of-line",
                reproduces: "when does HTTP/3 beat HTTP/2 on a lossy path?",
                claim,
                here: Some(self.here()),
                body: md,
            }
            .markdown(),
            plots: vec![self.plot()],
            headline: Headline {
                field_report: "(beside the field reports) HTTP/3 vs HTTP/2 on lossy paths: gains at high loss (netem studies), little from loss alone (Trevisan et al. 2021)".into(),
                ours: self.ours(),
                verdict: Some(a.verdict.clone()),
                conditions: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Proto;
    use super::*;
    use crate::LabOptions;

    #[test]
    fn the_section_has_a_table_per_path_the_ratios_and_a_plot() {
        let plan = Plan::new(&LabOptions::for_tests(true, None)).unwrap();
        let loads = plan
            .paths
            .iter()
            .flat_map(|p| {
                Proto::ALL.into_iter().flat_map(move |proto| {
                    (1..=3).map(move |t| super::super::measure::Load {
                        path: p.name.clone(),
                        proto,
                        trial: t,
                        error: None,
                        plt_ms: 1000.0 + t as f64,
                        html_ms: 300.0,
                        bytes: 10,
                        connections: 1,
                        drops_down: 1,
                        drops_up: 0,
                        tcp_sent: Some(100),
                        tcp_retrans: Some(1),
                        quic_sent: 100,
                        quic_lost: 1,
                        steal_ticks: None,
                        beside: false,
                    })
                })
            })
            .collect();
        let d = Details {
            loads,
            paths: Vec::new(),
            page: plan.page.clone(),
            congestion: CONGESTION.into(),
        };
        let record = crate::sequential::Record::of_rounds(
            super::super::parts(),
            &vec![vec![1.0, 1.0]; 7],
            crate::sequential::Stop::Decided,
        );
        let a = super::super::analysis::analyse(&plan, &d, &record);
        let r = Section {
            plan: &plan,
            details: &d,
            analysis: &a,
            record: &record,
        }
        .render();
        for p in &plan.paths {
            assert!(
                r.markdown.contains(&format!("### {}", p.name)),
                "{}",
                p.name
            );
        }
        assert!(
            r.markdown.contains("HTTP/3 / HTTP/2 x1.00"),
            "{}",
            r.markdown
        );
        assert!(r.markdown.contains("1.0 / 100 (1.00 %)"), "{}", r.markdown);
        assert_eq!(r.plots.len(), 1);
        assert!(r.headline.ours.contains("0 %: HTTP/3 / HTTP/2 x1.00"));
    }
}
