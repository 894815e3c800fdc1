//! Cells into a report: one group per path × varied values × workload,
//! its repetitions' figures, their median with the interval the order
//! statistics give, and the samples of every repetition merged into one
//! distribution (percentiles and a histogram of the pooled samples, never
//! an average of per-cell figures). Sans-IO: records in, text out; the
//! same function makes a shard's report and a merged one, so merging N
//! shards and running the matrix on one machine give the same report.

use crate::sweep::store::{CellRecord, Header};
use crate::verdict::{Interval, median_interval};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One group: a cell's settings over its repetitions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Group {
    /// The path.
    pub path: String,
    /// The varied values.
    pub vary: Vec<(String, String)>,
    /// The workload.
    pub workload: String,
    /// The figure's unit.
    pub unit: String,
    /// Each repetition's figure (None: failed), in repetition order.
    pub figures: Vec<(u32, Option<f64>)>,
    /// The median of the figures with its interval (from 2 repetitions).
    pub interval: Option<Interval>,
    /// Samples pooled over the repetitions (perf: 1 s intervals).
    pub samples: usize,
    /// Their 10th, 50th and 90th percentile (nearest rank).
    pub sample_p10_p50_p90: Option<(f64, f64, f64)>,
    /// Their histogram: 10 equal bins from the smallest to the largest
    /// sample, (low edge, high edge, count).
    pub histogram: Vec<(f64, f64, usize)>,
    /// The worst forwarder lateness p99 of any repetition, µs.
    pub lateness_p99_us: f64,
    /// The most steal of any repetition, %.
    pub steal_pct_max: Option<f64>,
    /// The most testbeds at once beside any repetition.
    pub running_max: usize,
}

/// A sweep's report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// The binary that ran it.
    pub version: String,
    /// The matrix's fingerprint.
    pub fingerprint: String,
    /// The matrix file.
    pub matrix: String,
    /// Cells in the matrix.
    pub cells_total: usize,
    /// Cells with a record.
    pub cells_present: usize,
    /// Cells with a record that failed.
    pub failed: Vec<String>,
    /// Ids expected here without a record.
    pub missing: Vec<String>,
    /// The shards merged (`K/N`), or empty for a whole run.
    pub shards: Vec<String>,
    /// The shards of the same split not given to `lab merge` (`2/2`).
    #[serde(default)]
    pub shards_missing: Vec<String>,
    /// The groups, in matrix order.
    pub groups: Vec<Group>,
}

fn histogram(sorted: &[f64]) -> Vec<(f64, f64, usize)> {
    let (Some(&lo), Some(&hi)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let bins = 10;
    let width = (hi - lo) / bins as f64;
    if width <= 0.0 {
        return vec![(lo, hi, sorted.len())];
    }
    let mut counts = vec![0usize; bins];
    for &x in sorted {
        let i = (((x - lo) / width) as usize).min(bins - 1);
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + width * i as f64, lo + width * (i + 1) as f64, c))
        .collect()
}

/// The report of `records` against what `headers` expected.
pub fn summarize(headers: &[Header], records: &BTreeMap<String, CellRecord>) -> Summary {
    let first = &headers[0];
    let mut expected: Vec<String> = headers.iter().flat_map(|h| h.cells.clone()).collect();
    expected.sort();
    expected.dedup();
    let missing: Vec<String> = expected
        .iter()
        .filter(|id| !records.contains_key(*id))
        .cloned()
        .collect();
    let mut recs: Vec<&CellRecord> = records.values().collect();
    recs.sort_by_key(|r| (r.cell.index, r.cell.repetition));
    let mut groups: Vec<(String, Vec<&CellRecord>)> = Vec::new();
    for r in recs {
        let key = format!(
            "{}\u{0}{:?}\u{0}{}",
            r.cell.path, r.cell.vary, r.cell.workload
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let groups = groups
        .into_iter()
        .map(|(_, mut rs)| {
            rs.sort_by_key(|r| r.cell.repetition);
            let c = &rs[0].cell;
            let figs: Vec<f64> = rs
                .iter()
                .filter(|r| r.ok)
                .filter_map(|r| r.figure)
                .collect();
            let mut pooled: Vec<f64> = rs
                .iter()
                .filter(|r| r.ok)
                .flat_map(|r| r.samples.iter().copied())
                .filter(|x| x.is_finite())
                .collect();
            pooled.sort_by(f64::total_cmp);
            Group {
                path: c.path.clone(),
                vary: c.vary.clone(),
                workload: c.workload.clone(),
                unit: rs[0].unit.clone(),
                figures: rs
                    .iter()
                    .map(|r| (r.cell.repetition, r.figure.filter(|_| r.ok)))
                    .collect(),
                interval: median_interval(&figs),
                samples: pooled.len(),
                sample_p10_p50_p90: (!pooled.is_empty()).then(|| {
                    (
                        tcpwise_units::nearest_rank(&pooled, 0.1),
                        tcpwise_units::nearest_rank(&pooled, 0.5),
                        tcpwise_units::nearest_rank(&pooled, 0.9),
                    )
                }),
                histogram: histogram(&pooled),
                lateness_p99_us: rs
                    .iter()
                    .map(|r| r.lateness_p99_us.0.max(r.lateness_p99_us.1))
                    .fold(0.0, f64::max),
                steal_pct_max: rs.iter().filter_map(|r| r.steal_pct).reduce(f64::max),
                running_max: rs.iter().map(|r| r.running_max).max().unwrap_or(0),
            }
        })
        .collect();
    let mut shards: Vec<String> = headers.iter().filter_map(|h| h.shard.clone()).collect();
    shards.sort();
    let shards_missing = shards_not_given(&shards);
    Summary {
        version: first.version.clone(),
        fingerprint: first.fingerprint.clone(),
        matrix: first.matrix.clone(),
        cells_total: first.cells_total,
        cells_present: records.len(),
        failed: records
            .values()
            .filter(|r| !r.ok)
            .map(|r| r.cell.id.clone())
            .collect(),
        missing,
        shards,
        shards_missing,
        groups,
    }
}

/// The `K/N` of a split that are not among `given` (all of them `K/N`
/// with one N: `lab merge` refuses shards of different matrices).
fn shards_not_given(given: &[String]) -> Vec<String> {
    let Some(n) = given
        .iter()
        .filter_map(|s| s.split_once('/')?.1.parse::<usize>().ok())
        .max()
    else {
        return Vec::new();
    };
    (1..=n)
        .map(|k| format!("{k}/{n}"))
        .filter(|s| !given.contains(s))
        .collect()
}

/// `report.md`.
pub fn markdown(s: &Summary) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "# tcpwise lab sweep: {}\n", s.matrix);
    let _ = writeln!(
        m,
        "tcpwise {}; matrix {}; {} of {} cells{}{}.\n",
        s.version,
        s.fingerprint,
        s.cells_present,
        s.cells_total,
        if s.shards.is_empty() {
            String::new()
        } else {
            format!(", shards {} merged", s.shards.join(", "))
        },
        if s.failed.is_empty() {
            String::new()
        } else {
            format!(", {} failed ({})", s.failed.len(), s.failed.join(", "))
        }
    );
    if !s.missing.is_empty() {
        let _ = writeln!(
            m,
            "Missing ({}): {}.\n",
            s.missing.len(),
            s.missing.join(", ")
        );
    }
    if !s.shards_missing.is_empty() {
        let _ = writeln!(
            m,
            "Not merged: shard {} ({} cells): an incomplete report.\n",
            s.shards_missing.join(", "),
            s.cells_total - s.cells_present - s.missing.len().min(s.cells_total - s.cells_present)
        );
    }
    let vary_keys: Vec<String> = s
        .groups
        .first()
        .map(|g| g.vary.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut head = vec!["path".to_string()];
    head.extend(vary_keys.iter().cloned());
    head.extend(
        [
            "workload",
            "median [interval]",
            "repetitions",
            "pooled samples p10 / p50 / p90",
            "lateness p99",
            "steal",
            "at once",
        ]
        .map(String::from),
    );
    m.push_str(&crate::report::table_head(&head));
    m.push('\n');
    for g in &s.groups {
        let mut row = vec![g.path.clone()];
        row.extend(g.vary.iter().map(|(_, v)| format!("`{v}`")));
        row.push(g.workload.clone());
        row.push(match (&g.interval, g.figures.iter().find_map(|f| f.1)) {
            (Some(i), _) => format!("{} {}", i.with_median(2), g.unit),
            (None, Some(f)) => format!("{f:.2} {}", g.unit),
            (None, None) => "failed".into(),
        });
        row.push(
            g.figures
                .iter()
                .map(|(_, f)| f.map_or("failed".into(), |f| format!("{f:.2}")))
                .collect::<Vec<_>>()
                .join(", "),
        );
        row.push(match g.sample_p10_p50_p90 {
            Some((a, b, c)) => format!("{a:.2} / {b:.2} / {c:.2} ({})", g.samples),
            None => "-".into(),
        });
        row.push(format!("{:.0} µs", g.lateness_p99_us));
        row.push(g.steal_pct_max.map_or("-".into(), |x| format!("{x:.1} %")));
        row.push(g.running_max.to_string());
        let _ = writeln!(m, "| {} |", row.join(" | "));
    }
    m.push_str(
        "\nMedian and interval over the repetitions (the order statistics' interval, its confidence \
         when under 95 %); pooled samples are every repetition's samples together (perf: 1 s \
         intervals); lateness is the forwarders' own error, steal the hypervisor's share of the \
         machine while a repetition ran, the most of any; at once: the most testbeds running beside it.\n",
    );
    m
}

/// `index.html`: the report rendered.
pub fn html(s: &Summary) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>tcpwise lab sweep</title>\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}\
         table{{border-collapse:collapse;font-size:14px}}td,th{{border:1px solid #ccc;padding:4px 8px}}\
         th{{background:#eef2f8}}</style></head><body>{}</body></html>\n",
        crate::html::render(&markdown(s))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::matrix::parse;
    use std::path::Path;

    fn record(cell: &crate::sweep::matrix::Cell, fig: f64, samples: Vec<f64>) -> CellRecord {
        CellRecord {
            cell: cell.clone(),
            fingerprint: "f".into(),
            version: "v".into(),
            ok: true,
            exit_code: Some(0),
            error: None,
            figure: Some(fig),
            unit: "Mbit/s".into(),
            samples,
            started_unix_s: 0.0,
            wall_s: 1.0,
            running_at_start: 1,
            running_max: 2,
            steal_pct: Some(0.5),
            busy_pct: Some(50.0),
            load1: Some(1.0),
            lateness_p99_us: (100.0, 200.0),
            lateness_max_us: 300.0,
            offload: "tso+uso".into(),
            tool: serde_json::Value::Null,
            emu: serde_json::Value::Null,
        }
    }

    fn header(ids: Vec<String>, shard: Option<&str>) -> Header {
        Header {
            fingerprint: "f".into(),
            version: "v".into(),
            matrix: "m.toml".into(),
            cells_total: 8,
            shard: shard.map(String::from),
            cells: ids,
        }
    }

    #[test]
    fn merged_shards_give_the_report_of_the_whole() {
        let m = parse(
            "repetitions = 4\n[paths.a]\nrtt = \"10ms\"\nrate = \"10mbit\"\n[vary]\nqueue = [\"1bdp\", \"2bdp\"]\n\
             [workloads.w]\ntool = \"perf\"\nargs = [\"-t\", \"3\"]\n",
            Path::new("m.toml"),
        )
        .unwrap();
        let recs: BTreeMap<String, CellRecord> = m
            .cells
            .iter()
            .map(|c| {
                let f = 10.0 + c.index as f64;
                (c.id.clone(), record(c, f, vec![f - 1.0, f, f + 1.0]))
            })
            .collect();
        let all = header(m.cells.iter().map(|c| c.id.clone()).collect(), None);
        let whole = summarize(&[all], &recs);
        let shard = |k: usize| {
            let s = crate::sweep::shard::Shard { k, n: 2 };
            header(
                m.cells
                    .iter()
                    .filter(|c| s.holds(c.index))
                    .map(|c| c.id.clone())
                    .collect(),
                Some(&format!("{k}/2")),
            )
        };
        let merged = summarize(&[shard(2), shard(1)], &recs);
        assert_eq!(
            serde_json::to_string(&whole.groups).unwrap(),
            serde_json::to_string(&merged.groups).unwrap()
        );
        assert_eq!(merged.shards, ["1/2", "2/2"]);
        let g = &whole.groups[0];
        assert_eq!(g.figures.len(), 4);
        // Medians of the figures, not of the pooled samples; the pool is
        // every sample of every repetition (12), not their average.
        assert_eq!(g.interval.unwrap().median, 11.5);
        assert_eq!(g.samples, 12);
        assert_eq!(g.histogram.iter().map(|b| b.2).sum::<usize>(), 12);
        assert_eq!(g.sample_p10_p50_p90, Some((10.0, 11.0, 13.0)));
        // A missing cell is named.
        let mut fewer = recs.clone();
        fewer.remove(&m.cells[0].id);
        let s = summarize(
            &[header(m.cells.iter().map(|c| c.id.clone()).collect(), None)],
            &fewer,
        );
        assert_eq!(s.missing, [m.cells[0].id.clone()]);
        assert!(markdown(&s).contains("Missing (1)"));
    }
}
