//! The file-I/O half's part of the completion section: tables, the
//! per-model detail at the top count, plots (no I/O).

use super::analysis::{Analysis, Medians, tps};
use super::{FileTable, Plan, THREADS};
use crate::html::{Band, Series, lines};
use crate::report::table_head;
use crate::verdict::{intervals_in_words, ratio_note};
use crate::{Headline, Render, Rendered};
use plotters::style::{BLUE, RED, RGBColor};
use std::fmt::Write;
use tcpwise_aio::{AioReport, Keys, Model};

/// One colour per model, the same in every plot.
fn color_of(m: &str) -> RGBColor {
    match m {
        "shared" => BLUE,
        "shared:256" => RGBColor(120, 0, 160),
        "segments" => RED,
        "segments:8" => RGBColor(200, 120, 0),
        "innodb" => RGBColor(0, 0, 0),
        _ => RGBColor(0, 140, 0),
    }
}

/// What the half's part is made of.
pub struct Section<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The runs.
    pub measured: &'a FileTable,
    /// Their figures.
    pub analysis: &'a Analysis,
}

impl Section<'_> {
    /// Key set `si`'s table of transactions per second by clients; the
    /// plot's lines and bands.
    fn set_table(
        &self,
        md: &mut String,
        si: usize,
        (keys, models): &(Keys, Vec<Model>),
    ) -> (Vec<Series>, Vec<Band>) {
        let (plan, a) = (self.plan, self.analysis);
        let counts = &plan.counts;
        let hi = counts[counts.len() - 1];
        let rounds = plan.rounds;
        let mut cols: Vec<String> = vec!["model".into()];
        cols.extend(counts.iter().map(|c| c.to_string()));
        let _ = writeln!(
            md,
            "Transactions per second, {keys} keys, median over rounds ({}; last column: at {hi} clients over the model's best count):\n\n{}",
            intervals_in_words(rounds),
            table_head(&[cols.clone(), vec![format!("{hi}/peak")]].concat())
        );
        let mut series: Vec<Series> = Vec::new();
        let mut bands: Vec<Band> = Vec::new();
        for (mi, &model) in models.iter().enumerate() {
            let name = model.to_string();
            let (_, flat) = &a.tps[si][mi];
            let spread = &a.spread[si][mi];
            let cells: Vec<String> = spread.iter().map(|e| e.cell(0)).collect();
            let _ = writeln!(md, "| {name} | {} | {flat:.2} |", cells.join(" | "));
            let x = |c: u32| f64::from(c).log2();
            series.push((
                name.clone(),
                color_of(&name),
                // The table's medians, so line and table agree.
                counts
                    .iter()
                    .zip(spread)
                    .map(|(&c, e)| (x(c), e.median))
                    .collect(),
            ));
            if rounds > 1 {
                bands.push((
                    color_of(&name),
                    counts
                        .iter()
                        .zip(spread)
                        .filter_map(|(&c, e)| e.interval.map(|i| (x(c), i.lo, i.hi)))
                        .collect(),
                ));
            }
        }
        (series, bands)
    }

    /// Key set `si` at the top count: shared over segments, and what
    /// each model did there.
    fn at_top(&self, md: &mut String, si: usize, (keys, models): &(Keys, Vec<Model>)) {
        let (plan, a) = (self.plan, self.analysis);
        let med = Medians::of(self.measured);
        let hi = plan.counts[plan.counts.len() - 1];
        let rounds = plan.rounds;
        let ratio = a.shared_over_segments[si];
        let by_round = a.ratio_by_round[si];
        let quick = if rounds < 3 {
            format!(
                " From {rounds} round(s) this ratio is too uncertain to judge (the full run has 3 rounds)."
            )
        } else {
            String::new()
        };
        let note = ratio_note("shared/segments", &by_round)
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "\nAt {hi} clients, {keys} keys: shared / segments = {ratio:.2} (round by round {}).{quick}{note} What each model did there (medians; per-thread completions of the median-throughput run):\n\n{}",
            by_round.text(2),
            table_head(
                &[
                    "model",
                    "in flight (peak)",
                    "I/O in kernel p50 / p99 ms",
                    "queued (peak)",
                    "slot waits",
                    "slot wait p99 ms",
                    "latch waits",
                    "p99 ms",
                    "busiest thread CPU %",
                    "completions per thread"
                ]
                .map(String::from)
            ),
        );
        for &model in models {
            let f = |k: fn(&AioReport) -> f64| med.median(*keys, model, hi, k);
            let mid = f(tps);
            let spread = med
                .runs(*keys, model, hi)
                .into_iter()
                .min_by(|a, b| (a.tps - mid).abs().total_cmp(&(b.tps - mid).abs()))
                .map(|r| format!("{:?}", r.per_thread_completions))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "| {model} | {:.0} | {:.1} / {:.1} | {:.0} | {:.0} | {:.1} | {:.0} | {:.1} | {:.0} | {spread} |",
                f(|r| r.inflight_peak as f64),
                f(|r| r.io_p50_ms),
                f(|r| r.io_p99_ms),
                f(|r| r.queued_peak as f64),
                f(|r| r.slot_waits as f64),
                f(|r| r.slot_wait_p99_ms),
                f(|r| r.latch_waits as f64),
                f(|r| r.p99_ms),
                f(|r| r.busiest_thread_cpu * 100.0),
            );
        }
    }
}

impl Render for Section<'_> {
    /// The part's markdown and plots; its headline is the analysis's
    /// (the experiment's line joins both halves).
    fn render(&self) -> Rendered {
        let (plan, m, a) = (self.plan, self.measured, self.analysis);
        let headline = Headline {
            field_report: String::new(),
            ours: a.headline.clone().unwrap_or_default(),
            // The experiment's verdict weighs this half in.
            verdict: None,
            conditions: Vec::new(),
        };
        if let Some(reason) = &m.skipped {
            return Rendered {
                markdown: format!(
                    "### File I/O (the report's own workload)\n\nSkipped: {reason}.\n\n"
                ),
                plots: Vec::new(),
                headline,
            };
        }
        let (path, pages) = (m.file.clone().unwrap_or_default(), m.pages);
        let (secs, rounds, steal) = (plan.secs, plan.rounds, a.steal);
        let mut md = String::new();
        let _ = writeln!(
            md,
            "### File I/O: the report's own workload, on io_uring\n\nsysbench `update_no_key` reduced to its I/O: each closed-loop client's transaction reads one 16 KiB page at a random key from `{}` (1 GiB, {pages} pages, written once and reused) with `O_DIRECT`, updates a row and writes the page back. **No fsync** (the report's author turned durability off to stress the I/O path; so do we). A transaction holds its page's latch from read to write (as a row lock would), so under skewed keys the hottest pages queue (`latch waits`). {THREADS} I/O threads per model: `shared` (one ring, as deep as the clients need; a reaper thread hands completions to one queue any of the 4 workers drains: a completion port, as MariaDB's tpool does on Linux), `shared:256` (the same with at most 256 I/Os in flight, the total the segments allow), `segments` (4 rings, each I/O bound to ring hash(page) mod 4 with at most 64 in flight; only the owner reaps it: WaitForMultipleObjects' segments), `segments:8` (8 slots a segment), `innodb` (segments as InnoDB built them on Windows, from `os0file.c` of MariaDB 5.2 and MySQL 5.5, the report's builds: 32 slots a segment, `OS_AIO_N_PENDING_IOS_PER_THREAD`, because \"Win NT does not allow more than 64\" handles a wait; one reaper thread a segment taking one completion a wait, the lowest-numbered slot first, as `WaitForMultipleObjects` returns the signalled handle with the smallest index; a request takes the first free slot of its preferred segment, then of the whole array, `os_aio_array_reserve_slot`; when every slot is taken it waits on one manual-reset `not_full` event that `os_aio_array_free_slot` sets, waking every waiter; a thread a client, as a thread a connection in the server), `sync` (4 threads doing pread/pwrite). {secs:?} per run, {rounds} round(s) interleaving every model, key set and count; medians. Every page of the file was read back and checked after every run (header, checksum, version of its last write). Hypervisor steal over all runs: {steal} ticks.\n",
            path.display(),
        );
        let mut plots = Vec::new();
        for (si, set) in plan.sets.iter().enumerate() {
            let (series, bands) = self.set_table(&mut md, si, set);
            self.at_top(&mut md, si, set);
            let _ = writeln!(md);
            plots.push(lines(
                &format!("File I/O transactions per second, {} keys", set.0),
                "log2(clients): 2 = 4, 6 = 64, 10 = 1024",
                "transactions/s",
                &series,
                &bands,
            ));
        }
        // The field report's table is printed once, with the network half above.
        let _ = writeln!(
            md,
            "Compare with the field report's table in the network half above (transactions/s at the same client counts).\n"
        );
        Rendered {
            markdown: md,
            plots,
            headline,
        }
    }
}
