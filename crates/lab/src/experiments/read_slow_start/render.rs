//! The report's section, plot and headline for the read-slow-start
//! trial (no I/O).

use super::Plan;
use super::analysis::{Analysis, ix};
use super::measure::{Arm, Cause, Trial};
use crate::html::{Series, lines};
use crate::{Headline, Render, Rendered};
use plotters::style::{BLUE, RED};
use std::fmt::Write;

/// What the section is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// Every trial.
    pub trials: &'a [Trial],
    /// The table and figures.
    pub analysis: &'a Analysis,
}

/// The pairs' saving under `cause` and its interval, in words.
fn saving(a: &Analysis, cause: Cause) -> String {
    super::analysis::part(&a.record, cause).map_or("not measured".into(), |p| p.interval_text())
}

/// Whether the first byte moved by the field report's saving, from the
/// part's decision and interval (never a literal: the sentence must read
/// otherwise when the data says otherwise).
fn moved(part: Option<&crate::sequential::PartResult>) -> String {
    use crate::sequential::State;
    let report = super::REPORTED_SAVING_MS;
    let end = |x: Option<f64>| x.map_or("unbounded".to_string(), |v| format!("{v:.2} ms"));
    match part {
        None => "the saving was not measured".into(),
        Some(p) => match p.state {
            State::Fails => format!(
                "it did not move by the report's {report} ms: the saving's upper end is {}",
                end(p.high)
            ),
            State::Holds => format!(
                "yet it moved by at least the report's {report} ms here too: the saving's lower end is {}",
                end(p.low)
            ),
            State::Undecided => format!(
                "whether it moved by the report's {report} ms is not decided ({} rounds, interval {} to {})",
                p.looks.len(),
                end(p.low),
                end(p.high)
            ),
        },
    }
}

impl Section<'_> {
    /// The claim's paragraph, with what this run found.
    fn claim(&self) -> String {
        let a = self.analysis;
        let (off50, on50) = (&a.table[0].off, &a.table[0].on);
        let held = super::analysis::part(&a.record, Cause::Held);
        let linux = super::analysis::part(&a.record, Cause::Linux);
        let word = |p: Option<&crate::sequential::PartResult>| {
            p.map_or("not measured", |p| p.decision_word())
        };
        format!(
            "Chromium found that starting each connection's reads small (1 KiB, doubling after every read that fills, up to 32 KiB) rather than at 32 KiB lowered the median time to first byte by 0.8-6.3 % (3-20 ms) on Windows, because Windows held back completing a read it could only partly fill (by 40-50 ms, issue 30144). **On this machine**, under that cause modelled (a read that got less than it asked completes 40-50 ms later unless later data fills it), the pairs' saving is {} ({}): {}. **On Linux as it is** the median time to first byte is {:.1} ms with fixed reads and {:.1} ms with read slow start over {} fresh connections, and the pairs' saving is {} ({}): Linux completes a read as soon as any data is there; {}.",
            saving(a, Cause::Held),
            word(held),
            moved(held),
            off50.value,
            on50.value,
            a.ttfb[0].len() + a.ttfb[1].len(),
            saving(a, Cause::Linux),
            word(linux),
            moved(linux),
        )
    }

    /// A table per path and condition, and what the arms' reads asked.
    fn per_path(&self, md: &mut String) {
        let a = self.analysis;
        let _ = writeln!(
            md,
            "\n**Per path** (medians; a pair is one connection of each arm for one response size, back to back; \"total, >= 100 KB\" is the pairs' off-minus-on total time on responses of 100 KB or more, what small reads cost and the model does not inject):\n\n{}",
            crate::report::table_head(&[
                "condition",
                "path RTT",
                "pairs",
                "off: TTFB, ms",
                "on: TTFB, ms",
                "saved per pair, ms",
                "total, >= 100 KB: saved per pair, ms (pairs)"
            ])
        );
        for r in &a.paths {
            let f = |x: f64| {
                if x.is_finite() {
                    format!("{x:.1}")
                } else {
                    "none ran".into()
                }
            };
            let _ = writeln!(
                md,
                "| {} | {:.0} ms | {} | {} | {} | {:+.2} | {} ({}) |",
                r.cause.label(),
                r.rtt_ms,
                r.pairs,
                f(r.ttfb[0]),
                f(r.ttfb[1]),
                r.saved_ms,
                if r.large_total_saved.0.is_finite() {
                    format!("{:+.1}", r.large_total_saved.0)
                } else {
                    "none ran".into()
                },
                r.large_total_saved.1
            );
        }
        let words = |arm: Arm| {
            let r = &a.reads[ix(arm)];
            if r.n == 0 {
                "not recorded (a run from before every read was kept)".to_string()
            } else {
                format!(
                    "{} reads, asked {} to {} B ({} of them 32 KiB), {} returned less than asked, median {:.0} B returned",
                    r.n, r.asked.0, r.asked.1, r.at_32k, r.partial, r.returned_median
                )
            }
        };
        let _ = writeln!(
            md,
            "\nEvery read, as asked of the socket and returned (each read asks its whole size: no HTTP library's buffer sizes it): fixed arm {}; read slow start {}.",
            words(Arm::Off),
            words(Arm::On)
        );
    }

    /// How the trials ran, and the field report's table.
    fn table(&self, md: &mut String) {
        let a = self.analysis;
        let (on_t, off_t) = (&a.ttfb[ix(Arm::On)], &a.ttfb[ix(Arm::Off)]);
        let _ = writeln!(
            md,
            "{} fresh connections on Linux ({} on, {} off; as many under the modelled cause, in the table per path) in {} rounds of {} pairs a path and condition, a pair being one of each arm for one response size, back to back in a random order (seed {}), GET /bytes/N with N log-uniform in 500 B..500 KB, over {} at 20 Mbit/s (one testbed per path, the paths at once, each path's trials one after another; the arms interleave on every path, so whatever a path's emulator error does, it does to both). The field report's table, on Linux, every path's connections together as the report's histograms were: time to first byte from the connect's start, ms; per cutoff: the value at that percentile and the mean of the samples at or below it with its 95 % confidence interval (the report's ~Avg with Min Avg and Max Avg).\n",
            on_t.len() + off_t.len(),
            on_t.len(),
            off_t.len(),
            a.record.rounds + a.record.discarded,
            super::PAIRS,
            self.plan.seed,
            self.plan
                .rtts
                .iter()
                .map(|r| format!("{} ms", r / 1_000_000))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            md,
            "| percentile | off: value, ms | off: mean below it [95 % CI], ms | on: value, ms | on: mean below it [95 % CI], ms | off - on at the percentile, ms | % of off | off - on of the means, ms | % of off |\n|---|---|---|---|---|---|---|---|---|"
        );
        // A percentile p needs 1/(1 - p) samples an arm before it is not
        // simply the largest: rows past that are left out, and said.
        let n = on_t.len().min(off_t.len()) as f64;
        let (shown, hidden): (Vec<_>, Vec<_>) = a
            .table
            .iter()
            .partition(|r| n >= 1.0 / (1.0 - r.cutoff / 100.0) - 1e-9);
        for r in shown {
            let (off, on, c) = (&r.off, &r.on, r.cutoff);
            let (dv, da) = (r.delta_value_ms, r.savings_avg_ms);
            let _ = writeln!(
                md,
                "| {c}% | {:.1} | {:.1} [{:.1}, {:.1}] | {:.1} | {:.1} [{:.1}, {:.1}] | {dv:+.2} | {:+.2}% | {da:+.2} | {:+.2}% |",
                off.value,
                off.avg,
                off.min_avg,
                off.max_avg,
                on.value,
                on.avg,
                on.min_avg,
                on.max_avg,
                100.0 * dv / off.value,
                100.0 * da / off.avg
            );
        }
        let _ = writeln!(
            md,
            "\nA positive difference is time read slow start saved (off minus on).{}",
            if hidden.is_empty() {
                String::new()
            } else {
                format!(
                    " Percentiles {} are left out: {n:.0} trials an arm are too few for them (p needs 1/(1 - p)).",
                    hidden
                        .iter()
                        .map(|r| format!("{}%", r.cutoff))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
    }

    /// What the table says, and why.
    fn notes(&self, md: &mut String) {
        let a = self.analysis;
        let mem = |arm: Arm| a.read_buffer[ix(arm)];
        let _ = writeln!(
            md,
            "\nOn Linux: {}. Median total time: off {:.1} ms, on {:.1} ms. Read buffer per connection (largest read asked, mean): off {:.0} B, on {:.0} B.",
            if a.significant {
                "The 95 % confidence intervals of the means below the median do not overlap: the difference is significant"
            } else {
                "The 95 % confidence intervals of the means below the median overlap: no significant difference"
            },
            a.median_total[ix(Arm::Off)],
            a.median_total[ix(Arm::On)],
            mem(Arm::Off),
            mem(Arm::On)
        );
    }

    /// The first table's line, and a row for each condition.
    fn headline(&self) -> Headline {
        let a = self.analysis;
        let (off50, on50) = (&a.table[0].off, &a.table[0].on);
        let conditions = Cause::ALL
            .iter()
            .map(|&c| crate::Condition {
                name: c.label().into(),
                measured: format!("saved per pair {}", saving(a, c)),
                verdict: super::analysis::part(&a.record, c)
                    .map_or("not measured", |p| p.decision_word())
                    .into(),
            })
            .collect();
        Headline {
            field_report:
                "median time to first byte 0.8-6.3 % (3-20 ms) lower with read slow start (Windows)"
                    .into(),
            ours: format!(
                "under the modelled cause: saved per pair {}; on Linux: median TTFB off {:.1} ms, on {:.1} ms, saved per pair {}",
                saving(a, Cause::Held),
                off50.value,
                on50.value,
                saving(a, Cause::Linux),
            ),
            verdict: Some(super::analysis::verdict(a)),
            conditions,
        }
    }

    /// The pairs' saving under each condition, CDF (paired within a path,
    /// so the paths' RTTs do not make its steps).
    fn plot(&self) -> String {
        let cdf = |c: Cause| -> Vec<(f64, f64)> {
            let mut v: Vec<f64> = super::analysis::pairs(self.trials)
                .filter(|(on, _)| on.cause == c)
                .map(|(on, off)| off.ttfb_ms - on.ttfb_ms)
                .collect();
            v.sort_by(f64::total_cmp);
            let n = v.len().max(1) as f64;
            v.iter()
                .enumerate()
                .map(|(i, x)| (*x, (i + 1) as f64 / n))
                .collect()
        };
        let series: Vec<Series> = [(Cause::Held, RED), (Cause::Linux, BLUE)]
            .into_iter()
            .map(|(c, col)| (c.label().to_string(), col, cdf(c)))
            .filter(|s| !s.2.is_empty())
            .collect();
        lines(
            "Time to first byte saved per pair (off minus on), CDF",
            "ms saved",
            "fraction of pairs",
            &series,
            &[],
        )
    }
}

impl Render for Section<'_> {
    fn render(&self) -> Rendered {
        let mut md = String::new();
        self.table(&mut md);
        self.notes(&mut md);
        self.per_path(&mut md);
        Rendered {
            markdown: crate::section::Skeleton {
                name: "read-slow-start",
                reproduces: "Chromium: first read 1 KiB, doubling",
                claim: self.claim(),
                here: None,
                body: md,
            }
            .markdown(),
            plots: vec![self.plot()],
            headline: self.headline(),
        }
    }
}

#[cfg(test)]
mod moved_tests {
    use super::*;
    use crate::sequential::{PartResult, State, Target};

    fn part(state: State, low: f64, high: f64) -> PartResult {
        PartResult {
            name: "saving".into(),
            target: Target::at_least(3.0, 1.0),
            unit: " ms".into(),
            prec: 2,
            estimate: (low + high) / 2.0,
            low: Some(low),
            high: Some(high),
            level: 0.9,
            method: "test".into(),
            state,
            decided_after: Some(7),
            looks: Vec::new(),
            sorted_values: vec![],
        }
    }

    /// A recording where the report's saving holds and one where it fails
    /// read differently once their figures are masked.
    #[test]
    fn the_sentence_follows_the_decision() {
        let mask = |s: String| {
            s.chars()
                .filter(|c| !c.is_ascii_digit())
                .collect::<String>()
        };
        let holds = moved(Some(&part(State::Holds, 3.5, 9.0)));
        let fails = moved(Some(&part(State::Fails, -0.5, 0.4)));
        let open = moved(Some(&part(State::Undecided, -0.5, 4.0)));
        assert!(
            holds.contains("3.50 ms") && fails.contains("0.40 ms"),
            "{holds} / {fails}"
        );
        assert_ne!(mask(holds.clone()), mask(fails.clone()));
        assert_ne!(mask(open), mask(fails));
        assert!(!holds.contains("did not"));
    }
}
