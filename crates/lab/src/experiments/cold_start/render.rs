//! The report's section, plot and headline for the cold-start
//! experiment (no I/O).

use super::analysis::{Analysis, TOLERANCE_MS, eyeballs_bound};
use super::measure::Details;
use super::{Arm, OBJECT, Plan};
use crate::html::{Bar, bars};
use crate::{Headline, Render, Rendered};
use std::fmt::Write;

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The fetches.
    pub details: &'a Details,
    /// Their figures.
    pub analysis: &'a Analysis,
}

impl Section<'_> {
    /// How it ran here.
    fn here(&self) -> String {
        let d = self.details;
        format!(
            "`tcpwise serve --tls --tls-earlydata --tls-tickets 4 --tfo` in the server namespace (`net.ipv4.tcp_fastopen=3` there; the client's keeps the kernel's default, 1), HTTP/1.1 over TLS 1.3, a {OBJECT}-byte object. Each trial fetches once per arm, the arms in a rotating order; an arm that resumes first makes a full handshake on a fresh client (its tickets; for TFO the kernel's cookie), then fetches on another fresh client sharing its sessions; warm fetches twice on one client. Time to first byte counts from the start of the request (connect and handshakes included). curl{} fetches the same way on the same testbed in the same run: resumed is two URLs with `Connection: close` (curl keeps its sessions in-process), TFO is `--tcp-fastopen` (curl 7.88 has no early data: its TFO row is TFO with a resumed 1-RTT handshake), warm is two URLs on one connection. OpenSSL's `s_client -tls1_3`{} fetches cold, resumed (`-sess_out` from a full handshake, then `-sess_in`: sessions through a file, across processes) and resumed + 0-RTT (`-early_data`, the request from a file), timed from the process's start to the response's first byte, so its figures carry its start-up (its 1 ms row is mostly that); it has no TFO (OpenSSL 3.2+) and one request a connection. {}. A fallback is a fetch whose mechanism did not happen (no resumption, early data refused, no data in the SYN, no reuse), counted, never an error. Steal: hypervisor ticks over a cell's fetches.",
            d.curl.as_ref().map_or(
                " (not installed: its rows are left out)".to_string(),
                |v| format!(" ({v})")
            ),
            d.openssl.as_ref().map_or(
                " (not installed: its rows are left out)".to_string(),
                |v| format!(" ({v})")
            ),
            crate::verdict::cells_in_words(
                &self.analysis.cells.iter().map(|c| c.n).collect::<Vec<_>>(),
                "fetches"
            ),
        )
    }

    /// A table per path: each arm's time to first byte against its floor.
    fn paths(&self, md: &mut String) {
        let (plan, a) = (self.plan, self.analysis);
        for why in &plan.left_out {
            let _ = writeln!(md, "Note: {why}.\n");
        }
        for p in &plan.paths {
            let _ = writeln!(
                md,
                "### {}\n\n| arm | client | TTFB ms | in RTTs | floor | floor ms | fallbacks | fetches | steal |\n|---|---|---|---|---|---|---|---|---|",
                p.name
            );
            for c in a.cells.iter().filter(|c| c.path == p.name) {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {:.2} | {} | {:.0} | {} | {} | {} |",
                    c.arm.label(),
                    c.client,
                    c.ttfb.cell(1),
                    c.rtts,
                    c.arm.floor_rtts(),
                    c.arm.floor_rtts() * p.rtt_ms,
                    c.fallbacks,
                    c.n,
                    c.steal
                );
            }
            md.push('\n');
        }
    }

    /// Happy Eyeballs past the blackholed address, and what a client
    /// author takes from the section.
    fn eyeballs(&self, md: &mut String) {
        let (plan, a) = (self.plan, self.analysis);
        let _ = writeln!(
            md,
            "### Happy Eyeballs: `dual.test` resolves to a blackholed IPv6 address ({}, dropped silently at the server's end) and then the server's IPv4 address; {} ms RTT\n\n| client | TTFB ms | fetches the IPv4 address won |\n|---|---|---|",
            super::BLACKHOLE_V6,
            plan.eyeballs_rtt_ms
        );
        for r in &a.rows {
            let _ = writeln!(
                md,
                "| {} | {} | {}/{} |",
                r.row,
                r.ttfb.cell(1),
                r.v4_won,
                r.n
            );
        }
        let _ = writeln!(
            md,
            "\nRFC 8305 allows the connection-attempt delay ({} ms here) plus the connection itself: the bound is {:.0} ms (delay + 2 RTT + 20 ms). Without racing, a client waits for the IPv6 attempt to time out (here its connect timeout, shortened to {} s; the default is 10 s).\n",
            tcpwise_client::ATTEMPT_DELAY.as_millis(),
            eyeballs_bound(plan.eyeballs_rtt_ms),
            plan.sequential_timeout_s
        );
        let _ = writeln!(
            md,
            "**For a client author.** On a fresh connection the round trips, not the bandwidth, set the first byte: keep sessions (resumption costs nothing extra and lets safe requests go as early data), turn on TCP Fast Open where the path passes it (the fallback is automatic and counted here), and race address families rather than wait for one. A figure more than {TOLERANCE_MS} ms above its floor on a short path is the emulator's and the machine's own time (a few ms of TLS and scheduling on 2 cores), shown beside each path in the emulator-error table.\n"
        );
    }

    /// The 100 ms path's bars, and the first table's line.
    fn plot_and_line(&self) -> (Vec<String>, String) {
        let (plan, a) = (self.plan, self.analysis);
        let p100 = plan
            .paths
            .iter()
            .find(|p| p.rtt_ms == 100.0)
            .or(plan.paths.first());
        let mut plots = Vec::new();
        let mut ours = "-".to_string();
        if let Some(p) = p100 {
            let items: Vec<Bar> = a
                .cells
                .iter()
                .filter(|c| c.path == p.name)
                .map(|c| {
                    (
                        format!("{}, {}", c.arm.label(), c.client),
                        c.ttfb.median,
                        c.ttfb.interval.map(|i| (i.lo, i.hi)),
                    )
                })
                .collect();
            plots.push(bars(
                &format!(
                    "Time to first byte on {} (median, whisker: its interval)",
                    p.name
                ),
                "ms",
                &items,
            ));
            let cell = |arm: Arm| {
                a.cells
                    .iter()
                    .find(|c| c.path == p.name && c.arm == arm && c.client == "tcpwise")
                    .map_or("-".to_string(), |c| {
                        format!("{:.0} ms ({:.2} RTT)", c.ttfb.median, c.rtts)
                    })
            };
            ours = format!(
                "{}: cold {}, 0-RTT {}, TFO + 0-RTT {}, warm {}",
                p.name,
                cell(Arm::Cold),
                cell(Arm::ZeroRtt),
                cell(Arm::TfoZeroRtt),
                cell(Arm::Warm)
            );
        }
        (plots, ours)
    }
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let a = self.analysis;
        let mut md = String::new();
        let claim = "A cold HTTPS request waits three round trips for its first byte (TCP, TLS 1.3, the request). Resuming the TLS session saves the certificate, not a round trip; 0-RTT early data sends the request with the ClientHello (two); TCP Fast Open sends the ClientHello in the SYN (one, with 0-RTT); a warm pooled connection needs one. Each mechanism is a part of the stack (`get --tls-earlydata --tcp-fastopen`, `serve --tls-earlydata --tfo`), measured here against its floor.".to_string();
        self.paths(&mut md);
        self.eyeballs(&mut md);
        let (plots, ours) = self.plot_and_line();
        Rendered {
            markdown: crate::section::Skeleton {
                name: "cold-start",
                reproduces: "what the Firefox field report's warm connection is compared against",
                claim,
                here: Some(self.here()),
                body: md,
            }
            .markdown(),
            plots,
            headline: Headline {
                field_report: "(beside the Firefox field report) a cold HTTPS request: 3 RTT; resumed with 0-RTT 2; TFO + 0-RTT 1; warm 1".into(),
                ours,
                verdict: Some(a.verdict.clone()),
                conditions: Vec::new(),
            },
        }
    }
}
