//! The report's section, plot and headline for the buffers experiment,
//! from its plan, downloads and figures (no I/O).

use super::analysis::Analysis;
use super::measure::Measured;
use super::{Plan, SEED_BUFFER};
use crate::html::{Series, lines};
use crate::{Headline, Render, Rendered};
use plotters::style::{BLUE, RED, RGBColor};
use std::fmt::Write;
use tcpwise_emu::testbed::{DEFAULT_SYSCTLS, KERNEL_TCP_MEM, sysctls_text};
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

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let secs = self.plan.secs;
        let d = &self.measured.details;
        let (pinned, auto, auto_default) = (&d.pinned, &d.auto, &d.auto_default);
        let (ceiling, predicted) = (self.analysis.ceiling, self.analysis.predicted);
        let (st, au, ad) = (&pinned.summary, &auto.summary, &auto_default.summary);
        let mut md = String::new();
        let _ = writeln!(
            md,
            "## buffers (Windows TCP team: no static socket buffers)\n"
        );
        let _ = writeln!(
            md,
            "Path: {}. A {secs} s download with `tcpwise perf -R`, receiver in the client namespace. The testbed raises the autotuning ceilings in both namespaces ({}); the third column sets them back to the kernel's own ({}) on the same path.\n",
            self.measured.path.path,
            sysctls_text(DEFAULT_SYSCTLS),
            sysctls_text(KERNEL_TCP_MEM)
        );
        let _ = writeln!(
            md,
            "| | static {SEED_BUFFER} B | autotuned (32 MiB ceilings) | autotuned (kernel's ceilings) | path ceiling |\n|---|---|---|---|---|"
        );
        let _ = writeln!(
            md,
            "| this run | {:.2} Mbit/s (cap predicted {predicted:.2}) | {:.2} Mbit/s | {:.2} Mbit/s (send-buffer-limited {}) | {ceiling:.2} Mbit/s |",
            st.goodput_mbit,
            au.goodput_mbit,
            ad.goodput_mbit,
            ad.sndbuf_limited_pct
                .map_or("-".into(), |p| format!("{p:.0}% of the time"))
        );
        let _ = writeln!(
            md,
            "| seed (Windows, over the Internet) | 11.3 avg, 12.6 max | 126 avg, 151 max | | 151 |\n"
        );
        let _ = writeln!(
            md,
            "Per second, Mbit/s:\n\n| second | static | autotuned | autotuned, kernel's ceilings |\n|---|---|---|---|"
        );
        let runs = [&pinned.intervals, &auto.intervals, &auto_default.intervals];
        let rows = runs.iter().map(|r| r.len()).max().unwrap_or(0);
        // A second above the ceiling is physics, not a fault: say why.
        let over = runs
            .iter()
            .flat_map(|r| r.iter())
            .map(|i| i.mbit)
            .fold(0.0f64, f64::max);
        let above = (over > ceiling).then(|| format!(
            "\nOne second reads {over:.1} Mbit/s, above the {ceiling:.1} Mbit/s the link can carry: after a loss the receiver holds the data that arrived out of order until the retransmission fills the hole (SACK recovery), then hands it all over at once, so that second counts bytes that crossed the link in the seconds before. The run's average is what the ceiling bounds.\n"
        ));
        for i in 0..rows {
            let start = runs
                .iter()
                .find_map(|r| r.get(i))
                .map_or(i as f64, |x| x.start_s);
            let cells: Vec<String> = runs
                .iter()
                .map(|r| r.get(i).map_or("-".into(), |x| format!("{:.1}", x.mbit)))
                .collect();
            let _ = writeln!(md, "| {start:.0} | {} |", cells.join(" | "));
        }
        if let Some(t) = &above {
            md.push_str(t);
        }
        if let Some(d) = &st.diagnosis {
            let _ = writeln!(md, "\nDiagnosis of the static run: {d}");
        }
        if let Some(d) = &ad.diagnosis {
            let _ = writeln!(md, "\nDiagnosis with the kernel's ceilings: {d}");
        }
        let _ = writeln!(
            md,
            "\nLinux doubles SO_RCVBUF and advertises 160/256 of it for full-sized segments, so the seed's request caps at about 15.7 Mbit/s here rather than Windows' 12.6."
        );
        let pts = |r: &PerfReport| -> Vec<(f64, f64)> {
            r.intervals.iter().map(|i| (i.end_s, i.mbit)).collect()
        };
        let end = auto.intervals.last().map_or(10.0, |i| i.end_s);
        let series: [Series; 4] = [
            ("autotuned".into(), BLUE, pts(auto)),
            (
                "autotuned, kernel's ceilings".into(),
                RGBColor(0, 140, 0),
                pts(auto_default),
            ),
            ("static SO_RCVBUF".into(), RED, pts(pinned)),
            (
                "payload ceiling".into(),
                RGBColor(120, 120, 120),
                vec![(0.0, ceiling), (end, ceiling)],
            ),
        ];
        let plot = lines(
            "Per-second goodput: static 278,775-byte buffer vs autotuned",
            "seconds",
            "Mbit/s",
            &series,
        );
        let headline = Headline {
            seed: "278,775-byte static buffer: 11.3 Mbit/s avg (12.6 max); autotuned 126 avg, 151 max, on 151 Mbit/s / 177 ms".into(),
            ours: format!(
                "static {:.1} Mbit/s (predicted cap {predicted:.1}); autotuned {:.1} Mbit/s = {:.0} % of the {ceiling:.1} ceiling ({secs} s; {:.1} with the kernel's default autotuning ceilings)",
                st.goodput_mbit,
                au.goodput_mbit,
                100.0 * au.goodput_mbit / ceiling,
                ad.goodput_mbit,
            ),
            verdict: Some(super::analysis::verdict(
                st.goodput_mbit,
                au.goodput_mbit,
                super::analysis::steady_mbit(
                    &self.measured.details.auto.intervals.iter().map(|i| i.mbit).collect::<Vec<_>>(),
                ),
                ceiling,
            )),
        };
        Rendered {
            markdown: md,
            plots: vec![plot],
            headline,
        }
    }
}
