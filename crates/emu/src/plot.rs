//! `tcpwise emu plot DIR`: what `mm-throughput-graph` and `mm-delay-graph`
//! draw, in one picture per direction, from the logs `--log DIR` wrote (or
//! from Mahimahi's own `--uplink-log`/`--downlink-log` files: the format is
//! the same).
//!
//! The parser is sans-IO (text in, events out) and keeps what Mahimahi's
//! scripts keep; the drawing uses plotters, the lab's plotting library.
//! Per direction: throughput against capacity in bins (capacity filled,
//! ingress and egress as lines), then each packet's queueing delay at its
//! departure, with drops (by cause) and CE marks as ticks along the bottom.

pub mod flows;

use crate::{EmuError, Kind};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// One direction's log, parsed.
#[derive(Debug, Default, Clone)]
pub struct LinkLog {
    /// `# base timestamp:` (ms).
    pub base_ms: u64,
    /// Arrivals: (ms since base, bytes).
    pub arrivals: Vec<(u64, u64)>,
    /// Delivery opportunities: (ms since base, bytes).
    pub capacity: Vec<(u64, u64)>,
    /// Departures: (ms since base, bytes, delay ms).
    pub departures: Vec<(u64, u64, u64)>,
    /// Drops: (ms since base, bytes, cause).
    pub drops: Vec<(u64, u64, String)>,
    /// CE marks: (ms since base, bytes).
    pub marks: Vec<(u64, u64)>,
}

/// Why a log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A line that is not an event.
    #[error("line {line}: {why}: {text:?}")]
    Bad {
        /// 1-based.
        line: usize,
        /// What is wrong.
        why: &'static str,
        /// The line.
        text: String,
    },
    /// No `# base timestamp:` before the first event.
    #[error("no '# base timestamp:' line before the first event (not a Mahimahi link log)")]
    NoBase,
}

impl LinkLog {
    /// Parses a Mahimahi link log: `t + bytes`, `t # bytes`,
    /// `t - bytes delay`, and our comment lines `# t d bytes cause` and
    /// `# t m bytes`; other comments are skipped.
    pub fn parse(text: &str) -> Result<LinkLog, LogError> {
        let mut log = LinkLog::default();
        let mut base = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let bad = |why| LogError::Bad {
                line: i + 1,
                why,
                text: raw.chars().take(80).collect(),
            };
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('#') {
                let rest = rest.trim();
                if let Some(b) = rest.strip_prefix("base timestamp:") {
                    base = Some(
                        b.trim()
                            .parse::<u64>()
                            .map_err(|_| bad("bad base timestamp"))?,
                    );
                    continue;
                }
                // Our drops and marks; any other comment is skipped.
                let f: Vec<&str> = rest.split_whitespace().collect();
                if let (Some(b), [t, kind, bytes, more @ ..]) = (base, f.as_slice())
                    && let (Ok(t), Ok(bytes)) = (t.parse::<u64>(), bytes.parse::<u64>())
                {
                    let t = t.saturating_sub(b);
                    match *kind {
                        "d" => {
                            log.drops
                                .push((t, bytes, more.first().unwrap_or(&"drop").to_string()))
                        }
                        "m" => log.marks.push((t, bytes)),
                        _ => {}
                    }
                }
                continue;
            }
            let b = base.ok_or(LogError::NoBase)?;
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 3 {
                return Err(bad("expected 'timestamp event bytes [delay]'"));
            }
            let t = f[0].parse::<u64>().map_err(|_| bad("bad timestamp"))?;
            let bytes = f[2].parse::<u64>().map_err(|_| bad("bad byte count"))?;
            let t = t.saturating_sub(b);
            match f[1] {
                "+" => log.arrivals.push((t, bytes)),
                "#" => log.capacity.push((t, bytes)),
                "-" => {
                    let d = f
                        .get(3)
                        .and_then(|d| d.parse::<u64>().ok())
                        .ok_or_else(|| bad("a departure needs its delay"))?;
                    log.departures.push((t, bytes, d));
                }
                _ => return Err(bad("unknown event type")),
            }
        }
        log.base_ms = base.ok_or(LogError::NoBase)?;
        Ok(log)
    }

    /// Reads and parses a log file.
    pub fn load(path: &Path) -> Result<LinkLog, EmuError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            EmuError::caused(Kind::Config, format!("cannot read {}", path.display()), e)
        })?;
        LinkLog::parse(&text)
            .map_err(|e| EmuError::caused(Kind::Config, path.display().to_string(), e))
    }

    /// Sum of the departures' bytes.
    pub fn departed_bytes(&self) -> u64 {
        self.departures.iter().map(|d| d.1).sum()
    }

    /// Mean Mbit/s of capacity, ingress and egress over the span from the
    /// first event to the last, as mm-throughput-graph computes its
    /// averages: the summary line and the plot's legend give the same
    /// figures (a mean of bins would count a partial last bin as whole).
    pub fn mean_rates(&self) -> [f64; 3] {
        let first = [
            self.arrivals.first().map(|x| x.0),
            self.capacity.first().map(|x| x.0),
            self.departures.first().map(|x| x.0),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(0);
        let dur = self.end_ms().saturating_sub(first) as f64 / 1e3;
        let rate = |b: u64| {
            if dur > 0.0 {
                b as f64 * 8.0 / dur / 1e6
            } else {
                0.0
            }
        };
        [
            rate(self.capacity.iter().map(|c| c.1).sum()),
            rate(self.arrivals.iter().map(|a| a.1).sum()),
            rate(self.departed_bytes()),
        ]
    }

    /// Last event time, ms.
    fn end_ms(&self) -> u64 {
        let times = self.arrivals.iter().chain(&self.capacity).map(|x| x.0);
        times
            .chain(self.departures.iter().map(|d| d.0))
            .max()
            .unwrap_or(0)
    }

    /// Mbit/s per bin of `bin_ms`: (bin start s, capacity, ingress, egress).
    pub fn throughput(&self, bin_ms: u64) -> Vec<(f64, f64, f64, f64)> {
        let bin_ms = bin_ms.max(1);
        let mut bins: BTreeMap<u64, [u64; 3]> = BTreeMap::new();
        for (i, v) in [
            self.capacity.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            self.arrivals.clone(),
            self.departures.iter().map(|x| (x.0, x.1)).collect(),
        ]
        .iter()
        .enumerate()
        {
            for &(t, b) in v {
                bins.entry(t / bin_ms).or_default()[i] += b;
            }
        }
        let n = self.end_ms() / bin_ms + 1;
        let mbit = |b: u64| b as f64 * 8.0 / (bin_ms as f64 * 1e3);
        (0..n)
            .map(|k| {
                let b = bins.get(&k).copied().unwrap_or_default();
                (
                    (k * bin_ms) as f64 / 1e3,
                    mbit(b[0]),
                    mbit(b[1]),
                    mbit(b[2]),
                )
            })
            .collect()
    }
}

/// What to draw.
#[derive(Debug, Clone)]
pub struct PlotOptions {
    /// Throughput bin, ms (mm-throughput-graph's MS_PER_BIN).
    pub bin_ms: u64,
}

/// Both directions as one SVG.
pub fn svg(up: Option<&LinkLog>, down: Option<&LinkLog>, opts: &PlotOptions) -> String {
    let dirs: Vec<(&str, &LinkLog)> = [
        ("up (client to server)", up),
        ("down (server to client)", down),
    ]
    .into_iter()
    .filter_map(|(n, l)| l.map(|l| (n, l)))
    .collect();
    stacked(&dirs, (420, 220), |top, bottom, (name, log)| {
        draw_throughput(top, name, log, opts.bin_ms);
        draw_delay(bottom, name, log);
    })
}

/// An SVG area.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// One SVG of a row per item, 1000 px wide, each row `(height, top)`
/// split into a chart of `top` px over another.
fn stacked<T>(rows: &[T], (height, top): (u32, u32), draw: impl Fn(&Area, &Area, &T)) -> String {
    let mut out = String::new();
    {
        let h = height * rows.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut out, (1000, h)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let areas = root.split_evenly((rows.len().max(1), 1));
        for (area, row) in areas.iter().zip(rows) {
            let (t, b) = area.split_vertically(top);
            draw(&t, &b, row);
        }
        let _ = root.present();
    }
    out
}

type TimeChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The series' labels, boxed, at `at`.
fn legend<'a, DB: DrawingBackend + 'a>(chart: &mut TimeChart<'a, DB>, at: SeriesLabelPosition) {
    let _ = chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw();
}

/// A chart over time (s) with its mesh drawn.
fn time_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    xmax: f64,
    ymax: f64,
    ydesc: &str,
) -> Option<TimeChart<'a, DB>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)
        .ok()?;
    let _ = chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(ydesc)
        .draw();
    Some(chart)
}

fn draw_throughput<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    name: &str,
    log: &LinkLog,
    bin_ms: u64,
) {
    let pts = log.throughput(bin_ms);
    let xmax = pts
        .last()
        .map_or(1.0, |p| p.0 + bin_ms as f64 / 1e3)
        .max(1e-3);
    let ymax = pts
        .iter()
        .map(|p| p.1.max(p.2).max(p.3))
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.15;
    let means = log.mean_rates();
    let mean = |i: usize| means[i];
    let caption = format!("{name}: throughput ({bin_ms} ms bins)");
    let Some(mut chart) = time_chart(area, &caption, xmax, ymax, "Mbit/s") else {
        return;
    };
    let cap = RGBColor(200, 60, 60);
    if !log.capacity.is_empty()
        && let Ok(a) = chart.draw_series(AreaSeries::new(
            pts.iter().map(|p| (p.0, p.1)),
            0.0,
            cap.mix(0.18),
        ))
    {
        a.label(format!("capacity (mean {:.2} Mbit/s)", mean(0)))
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 18, y + 5)], cap.mix(0.3).filled())
            });
    }
    let ing = RGBColor(0, 32, 160);
    let egr = RGBColor(255, 96, 64);
    for (i, c, label, w) in [(2usize, ing, "ingress", 3), (3, egr, "egress", 2)] {
        if let Ok(a) = chart.draw_series(LineSeries::new(
            pts.iter().map(move |p| (p.0, [p.1, p.2, p.3][i - 1])),
            c.stroke_width(w),
        )) {
            a.label(format!("{label} (mean {:.2} Mbit/s)", mean(i - 1)))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight);
}

fn draw_delay<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    name: &str,
    log: &LinkLog,
) {
    let xmax = (log.end_ms() as f64 / 1e3).max(1e-3) + 1e-3;
    let mut delays: Vec<u64> = log.departures.iter().map(|d| d.2).collect();
    delays.sort_unstable();
    let p95 = delays
        .get((delays.len() as f64 * 0.95) as usize)
        .copied()
        .unwrap_or(0);
    let ymax = (delays.last().copied().unwrap_or(1) as f64 * 1.15).max(1.0);
    let caption = format!(
        "{name}: per-packet queueing delay (p95 {p95} ms; {} drops, {} CE marks)",
        log.drops.len(),
        log.marks.len()
    );
    let Some(mut chart) = time_chart(area, &caption, xmax, ymax, "ms in the link") else {
        return;
    };
    let blue = RGBColor(40, 90, 200);
    // At most the lowest and highest delay per 1/2000 of the time axis, so
    // a long run stays a picture of bounded size (every packet's delay is
    // in the log itself).
    let col = |t: u64| ((t as f64 / 1e3) / xmax * 2000.0) as usize;
    let mut cols: BTreeMap<usize, (u64, u64, u64, u64)> = BTreeMap::new();
    for d in &log.departures {
        let e = cols.entry(col(d.0)).or_insert((d.0, d.2, d.0, d.2));
        if d.2 < e.1 {
            (e.0, e.1) = (d.0, d.2);
        }
        if d.2 > e.3 {
            (e.2, e.3) = (d.0, d.2);
        }
    }
    let points = cols
        .values()
        .flat_map(|&(t0, lo, t1, hi)| [(t0, lo), (t1, hi)])
        .map(|(t, d)| Circle::new((t as f64 / 1e3, d as f64), 1, blue.filled()));
    if let Ok(a) = chart.draw_series(points) {
        a.label("departure: time in the link")
            .legend(move |(x, y)| Circle::new((x + 9, y), 3, blue.filled()));
    }
    let red = RGBColor(220, 30, 30);
    if !log.drops.is_empty()
        && let Ok(a) = chart.draw_series(log.drops.iter().map(|d| {
            PathElement::new(
                vec![(d.0 as f64 / 1e3, 0.0), (d.0 as f64 / 1e3, ymax * 0.06)],
                red.stroke_width(1),
            )
        }))
    {
        a.label("drop").legend(move |(x, y)| {
            PathElement::new(vec![(x + 9, y - 5), (x + 9, y + 5)], red.stroke_width(2))
        });
    }
    let orange = RGBColor(240, 150, 0);
    if !log.marks.is_empty()
        && let Ok(a) = chart.draw_series(log.marks.iter().map(|m| {
            PathElement::new(
                vec![
                    (m.0 as f64 / 1e3, ymax * 0.06),
                    (m.0 as f64 / 1e3, ymax * 0.12),
                ],
                orange.stroke_width(1),
            )
        }))
    {
        a.label("CE mark").legend(move |(x, y)| {
            PathElement::new(vec![(x + 9, y - 5), (x + 9, y + 5)], orange.stroke_width(2))
        });
    }
    let _ = chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, p95 as f64), (xmax, p95 as f64)],
            BLACK.mix(0.5).stroke_width(1),
        )))
        .map(|a| {
            a.label(format!("95th percentile ({p95} ms)"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.5)))
        });
    legend(&mut chart, SeriesLabelPosition::UpperRight);
}

/// Both directions' SVG wrapped in an HTML page with the figures beside it.
pub fn html(svg: &str, summary: &str) -> String {
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>tcpwise emu plot</title>\n<style>body{{font-family:sans-serif;max-width:1040px;margin:1em auto}}pre{{background:#f4f4f4;padding:.5em;white-space:pre-wrap}}</style></head>\n<body><h1>tcpwise emu plot</h1>\n<pre>{}</pre>\n{svg}\n</body></html>\n",
        summary.replace('&', "&amp;").replace('<', "&lt;")
    )
}

/// mm-throughput-graph's figures for one direction, as text (computed as
/// it computes them: over the span from the first to the last event).
pub fn summary(name: &str, log: &LinkLog) -> String {
    let [cap_mbit, _, dep_mbit] = log.mean_rates();
    let cap: u64 = log.capacity.iter().map(|c| c.1).sum();
    let mut delays: Vec<u64> = log.departures.iter().map(|d| d.2).collect();
    delays.sort_unstable();
    let p95 = delays
        .get((delays.len() as f64 * 0.95) as usize)
        .copied()
        .unwrap_or(0);
    let dep = log.departed_bytes();
    let signal =
        signal_delay_p95(log).map_or(String::new(), |s| format!(", p95 signal delay {s} ms"));
    format!(
        "{name}: capacity {:.2} Mbit/s, throughput {:.2} Mbit/s{}, {} packets departed ({} bytes), p95 queueing delay {p95} ms{signal}, {} drops, {} CE marks",
        cap_mbit,
        dep_mbit,
        if cap > 0 {
            format!(" ({:.1}% utilisation)", 100.0 * dep as f64 / cap as f64)
        } else {
            String::new()
        },
        log.departures.len(),
        dep,
        log.drops.len(),
        log.marks.len()
    )
}

/// mm-throughput-graph's 95th-percentile signal delay, ms: for every
/// millisecond t from the first to the last departure's send time, the
/// least time anything sent at t took to leave the link; a millisecond
/// nothing was sent in takes the next one's plus one (its bytes would
/// have waited for that). `None` without departures.
pub fn signal_delay_p95(log: &LinkLog) -> Option<u64> {
    let mut least: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for &(t, _, delay) in &log.departures {
        let sent = t as i64 - delay as i64;
        let e = least.entry(sent).or_insert(u64::MAX);
        *e = (*e).min(delay);
    }
    let (&lo, _) = least.first_key_value()?;
    let (&hi, &last) = least.last_key_value()?;
    let mut all = Vec::with_capacity((hi - lo + 1) as usize);
    let mut next = last;
    for t in (lo..=hi).rev() {
        let v = least.get(&t).copied().unwrap_or(next + 1);
        all.push(v);
        next = v;
    }
    all.sort_unstable();
    all.get((all.len() as f64 * 0.95) as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_delay_is_mm_throughput_graphs() {
        // Sent at 0 (took 5), at 2 (took 3), at 10 (took 1): every ms from 0
        // to 10 gets the least delay of what was sent then, or the next
        // ms's plus one: 10:1 9:2 8:3 7:4 6:5 5:6 4:7 3:8 2:3 1:4 0:5.
        let log = LinkLog {
            departures: vec![(5, 1500, 5), (5, 1500, 3), (11, 1500, 1)],
            ..LinkLog::default()
        };
        // Sorted: 1 2 3 3 4 4 5 5 6 7 8; index 0.95 * 11 = 10.
        assert_eq!(signal_delay_p95(&log), Some(8));
        assert_eq!(signal_delay_p95(&LinkLog::default()), None);
    }

    const LOG: &str = "# mahimahi mm-link (down) [x] > y\n# base timestamp: 1000\n1000 + 1500\n1000 # 1500\n1001 # 1500\n1002 - 1500 2\n# 1003 d 1500 queue\n# 1004 m 1500\n1004 - 1400 3\n";

    #[test]
    fn parses_mahimahi_lines_and_ours() {
        let l = LinkLog::parse(LOG).unwrap();
        assert_eq!(l.base_ms, 1000, "times below are relative to it");
        assert_eq!(l.arrivals, vec![(0, 1500)]);
        assert_eq!(l.capacity, vec![(0, 1500), (1, 1500)]);
        assert_eq!(l.departures, vec![(2, 1500, 2), (4, 1400, 3)]);
        assert_eq!(l.drops, vec![(3, 1500, "queue".to_string())]);
        assert_eq!(l.marks, vec![(4, 1500)]);
        assert_eq!(l.departed_bytes(), 2900);
        let t = l.throughput(2);
        assert_eq!(t.len(), 3);
        assert!(
            (t[0].1 - 12.0).abs() < 1e-9,
            "3000 bytes in 2 ms = 12 Mbit/s: {t:?}"
        );
        let s = svg(None, Some(&l), &PlotOptions { bin_ms: 2 });
        assert!(
            s.starts_with("<svg") && s.contains("queueing delay"),
            "{}",
            &s[..200.min(s.len())]
        );
    }

    #[test]
    fn the_legend_and_the_summary_give_one_average() {
        // 3 bins of 2 ms, the last only half used: a mean of bins would
        // read lower than the bytes over the span.
        let l = LinkLog::parse(LOG).unwrap();
        let sum = summary("down", &l);
        let svg = svg(None, Some(&l), &PlotOptions { bin_ms: 2 });
        let [_, _, egress] = l.mean_rates();
        let figure = format!("{egress:.2} Mbit/s");
        assert!(sum.contains(&format!("throughput {figure}")), "{sum}");
        assert!(svg.contains(&format!("egress (mean {figure})")), "{figure}");
    }

    #[test]
    fn bad_logs_are_refused_with_the_line() {
        assert!(matches!(LinkLog::parse("1 + 2\n"), Err(LogError::NoBase)));
        let e = LinkLog::parse("# base timestamp: 1\n5 x 2\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("unknown event"), "{e}");
        let e = LinkLog::parse("# base timestamp: 1\n5 - 2\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("delay"), "{e}");
        assert!(LinkLog::parse("").is_err());
    }
}
