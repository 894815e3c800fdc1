//! Medians, 90th percentiles and round trips per contender, from the
//! runs alone (no I/O).

use super::measure::{Measured, Table};
use super::scenario::IdleRun;
use super::{Contender, SWEEP, contenders, sweep_contenders};
use crate::Summary;
use crate::common::median_p90;
use crate::verdict::Verdict;

/// One contender's row of a main table.
pub struct Row {
    /// Who took the object.
    pub contender: Contender,
    /// Median load time, ms.
    pub median_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// Round trips the median stands for.
    pub round_trips: f64,
    /// The largest burst of the connection it chose (its first run), bytes.
    pub chosen_burst: u64,
    /// The median's interval at whatever confidence the runs give (the
    /// range of 3 runs holds it 75 % of the time; 95 % from 6 runs on).
    pub interval: Option<crate::verdict::Interval>,
    /// Runs.
    pub n: usize,
}

/// A main table's figures.
pub struct TableFigures {
    /// The server's `tcp_slow_start_after_idle`.
    pub ssai: String,
    /// One round trip plus serialising the object, ms.
    pub one_round_trip_ms: f64,
    /// The path's round trip, ms.
    pub rtt_ms: f64,
    /// A row per contender.
    pub rows: Vec<Row>,
}

/// One object size of the sweep: per contender, (median ms, round
/// trips, the median over the runs with its interval).
pub type SweepRow = (u64, Vec<(Contender, f64, f64, crate::verdict::Estimate)>);

/// What the runs show.
pub struct Analysis {
    /// The main tables, `=0` then `=1`.
    pub tables: Vec<TableFigures>,
    /// The sweep: per size, per contender, (median ms, round trips).
    pub sweep: Vec<SweepRow>,
    /// Named figures for `results.json`.
    pub summary: Summary,
    /// The sequential decision on FIFO against the largest burst.
    pub record: crate::sequential::Record,
}

/// Serialising `bytes` of payload at `rate_mbit`, ms (1448 per 1500-byte packet).
pub fn serialise_ms(bytes: u64, rate_mbit: f64) -> f64 {
    (bytes as f64 / 1448.0).ceil() * 1500.0 * 8.0 / (rate_mbit * 1e3)
}

/// The median and round trips of `v`'s load times after `ser_ms` of
/// serialisation on an `rtt_ms` path.
fn trips(v: &[f64], ser_ms: f64, rtt_ms: f64) -> (f64, f64, f64) {
    let (med, p90) = median_p90(v);
    (med, p90, ((med - ser_ms) / rtt_ms).round())
}

fn table(t: &Table<IdleRun>, summary: &mut Summary) -> TableFigures {
    let ser_ms = serialise_ms(t.target, t.rate_mbit);
    let prefix = if t.ssai == "0" { "" } else { "restart_" };
    // A contender the budget left no run for has no row.
    let rows = contenders()
        .into_iter()
        .filter_map(|c| {
            let name = c.name();
            let v: Vec<f64> = t
                .runs
                .iter()
                .filter(|r| r.policy == name)
                .map(|r| r.load_ms)
                .collect();
            if v.is_empty() {
                return None;
            }
            let (median_ms, p90_ms, round_trips) = trips(&v, ser_ms, t.rtt_ms);
            let interval = crate::verdict::median_interval(&v);
            let key = c.key();
            summary.insert(format!("{prefix}{key}_median_ms"), median_ms.into());
            summary.insert(format!("{prefix}{key}_p90_ms"), p90_ms.into());
            summary.insert(format!("{prefix}{key}_round_trips"), round_trips.into());
            Some(Row {
                contender: c,
                median_ms,
                p90_ms,
                round_trips,
                chosen_burst: t
                    .runs
                    .iter()
                    .find(|r| r.policy == name)
                    .map_or(0, |r| r.chosen_burst),
                interval,
                n: v.len(),
            })
        })
        .collect();
    summary.insert("rtt_ms".into(), t.rtt_ms.into());
    summary.insert("rate_mbit".into(), t.rate_mbit.into());
    TableFigures {
        ssai: t.ssai.clone(),
        one_round_trip_ms: t.rtt_ms + ser_ms,
        rtt_ms: t.rtt_ms,
        rows,
    }
}

/// The field report's claim as this experiment decides it, fixed before the run.
pub const CRITERION: &str = "with the server's tcp_slow_start_after_idle=0 (the field report's conditions), FIFO and the largest burst loading the object back to back each round, the median of FIFO's time minus the largest burst's is at least 0.9 of the RTT (one round trip), decided by its indifference zone (the decision table)";

/// The verdict on the field report's claim: the sequential decision, with the
/// `=0` table's medians beside it.
pub fn verdict(a: &Analysis) -> Verdict {
    let row = |name: &str| {
        a.tables
            .first()
            .and_then(|t| t.rows.iter().find(|r| r.contender.name() == name))
            .map_or(f64::NAN, |r| r.median_ms)
    };
    let rtt = a.tables.first().map_or(f64::NAN, |t| t.rtt_ms);
    Verdict {
        outcome: crate::sequential::outcome(&a.record.parts, crate::sequential::Combine::Main(1)),
        criterion: CRITERION.into(),
        measured: format!(
            "median load FIFO {:.0} ms, largest burst {:.0} ms on a {rtt:.0} ms RTT; {}",
            row("fifo"),
            row("max-burst"),
            a.record.line()
        ),
    }
}

/// The figures of `m`.
pub fn analyse(m: &Measured) -> Analysis {
    let mut summary = Summary::new();
    let tables = m
        .details
        .tables
        .iter()
        .map(|t| table(t, &mut summary))
        .collect();
    let sweep = m.details.sweep.as_ref().map_or_else(Vec::new, |s| {
        SWEEP
            .iter()
            .map(|&size| {
                let ser_ms = serialise_ms(size, s.rate_mbit);
                let cells = sweep_contenders()
                    .into_iter()
                    .map(|c| {
                        let v: Vec<f64> = s
                            .runs
                            .iter()
                            .filter(|(sz, r)| *sz == size && r.policy == c.name())
                            .map(|(_, r)| r.load_ms)
                            .collect();
                        let (med, _, trips) = trips(&v, ser_ms, s.rtt_ms);
                        summary.insert(
                            format!("sweep_{}kb_{}_median_ms", size / 1000, c.key()),
                            med.into(),
                        );
                        (c, med, trips, crate::verdict::Estimate::of(&v))
                    })
                    .collect();
                (size, cells)
            })
            .collect()
    });
    Analysis {
        tables,
        sweep,
        summary,
        record: m.decision.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Outcome;

    #[test]
    fn a_25_kb_object_at_8_mbit_takes_about_26_ms_to_serialise() {
        let ms = serialise_ms(25_000, 8.0);
        assert!((ms - 27.0).abs() < 0.01, "{ms}");
        let (med, _, t) = trips(&[276.0, 277.0, 276.5], ms, 250.0);
        assert_eq!((med, t), (276.5, 1.0));
    }

    fn figures(fifo: f64, burst: f64, runs: usize) -> Analysis {
        use crate::sequential::{Record, Stop, Tracker};
        let row = |c: &str, m: f64| Row {
            contender: super::super::pool(c),
            median_ms: m,
            p90_ms: m + 2.0,
            round_trips: 0.0,
            chosen_burst: 0,
            interval: None,
            n: runs,
        };
        let mut t = Tracker::new(super::super::parts().remove(0));
        for i in 0..runs {
            t.push((fifo - burst + (i % 3) as f64) / 250.0);
        }
        Analysis {
            tables: vec![TableFigures {
                ssai: "0".into(),
                one_round_trip_ms: 277.0,
                rtt_ms: 250.0,
                rows: vec![row("fifo", fifo), row("max-burst", burst)],
            }],
            sweep: Vec::new(),
            summary: Summary::new(),
            record: Record {
                parts: vec![t.result()],
                rounds: runs,
                discarded: 0,
                secs: 60.0,
                stopped: Stop::Decided,
                budget_secs: None,
            },
        }
    }

    #[test]
    fn the_largest_burst_losing_its_round_trip_flips_the_verdict() {
        let held = verdict(&figures(529.0, 277.0, 7));
        assert_eq!(held.outcome, Outcome::Reproduced, "{}", held.measured);
        assert!(
            held.measured.contains("decided after 7 rounds"),
            "{}",
            held.measured
        );
        // Corrupted: the largest burst as slow as FIFO.
        assert_eq!(
            verdict(&figures(529.0, 520.0, 7)).outcome,
            Outcome::NotReproduced
        );
        // Three rounds bound nothing: undecided at budget.
        assert_eq!(
            verdict(&figures(529.0, 277.0, 3)).outcome,
            Outcome::Undecided
        );
    }
}
