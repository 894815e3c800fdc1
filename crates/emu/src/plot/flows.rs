//! `tcpwise emu plot RUN.json`: every flow of a topology run on one chart,
//! from `emu dumbbell --stats-json`: goodput at the bottleneck per second,
//! then each sender's smoothed RTT per second where its kernel was
//! sampled. One pair of charts per direction that carried bulk flows.
//!
//! The parser reads only what it draws, so a file from a newer tcpwise
//! with more fields still plots.

use super::time_chart;
use crate::flows::BULK_MIN_BYTES;
use plotters::prelude::*;
use serde::Deserialize;

/// The parts of a `--stats-json` this draws.
#[derive(Debug, Deserialize)]
pub struct RunFile {
    /// Every flow the bottleneck counted.
    pub flows: Vec<Flow>,
    /// The second the commands began (flows before are probes).
    #[serde(default)]
    pub commands_from_s: usize,
}

/// One flow of the file.
#[derive(Debug, Deserialize)]
pub struct Flow {
    /// Its sending node.
    pub from: String,
    /// Its receiving node.
    pub to: String,
    /// "up" or "down".
    pub direction: String,
    /// (address, port) of its receiver.
    pub dst: (String, u16),
    /// Goodput in each second.
    pub goodput_bytes_per_s: Vec<u64>,
    /// Its sender's samples.
    #[serde(default)]
    pub tcp: Option<Tcp>,
}

/// A flow's sampled RTTs.
#[derive(Debug, Deserialize)]
pub struct Tcp {
    /// Smoothed RTT in each second, ms.
    pub srtt_ms_per_s: Vec<Option<f64>>,
    /// Its congestion control.
    pub cc: Option<String>,
}

/// Why a file is no topology run.
#[derive(Debug, thiserror::Error)]
#[error("not the --stats-json of 'tcpwise emu dumbbell' ({0})")]
pub struct NotARun(String);

impl RunFile {
    /// Reads the JSON text.
    pub fn parse(text: &str) -> Result<RunFile, NotARun> {
        serde_json::from_str(text).map_err(|e| NotARun(e.to_string()))
    }

    /// The bulk flows of `dir`, as the report counts them.
    fn bulk(&self, dir: &str) -> Vec<&Flow> {
        let from = self.commands_from_s;
        (self.flows.iter())
            .filter(|f| f.direction == dir)
            .filter(|f| f.goodput_bytes_per_s.iter().skip(from).sum::<u64>() >= BULK_MIN_BYTES)
            .collect()
    }

    /// One line per flow: its name and its mean goodput over its seconds.
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        for dir in ["up", "down"] {
            for f in self.bulk(dir) {
                let secs = f.goodput_bytes_per_s.len().max(1);
                let bytes: u64 = f.goodput_bytes_per_s.iter().sum();
                out.push(format!(
                    "{} ({dir}): {:.2} Mbit/s over {secs} s",
                    label(f),
                    bytes as f64 * 8.0 / secs as f64 / 1e6
                ));
            }
        }
        out
    }
}

/// A flow's legend: sender, receiver and port, congestion control.
fn label(f: &Flow) -> String {
    let cc = f.tcp.as_ref().and_then(|t| t.cc.as_deref());
    let cc = cc.map(|c| format!(", {c}")).unwrap_or_default();
    format!("{} -> {}:{}{cc}", f.from, f.to, f.dst.1)
}

const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Goodput and RTT of every bulk flow, per direction, as one SVG.
pub fn svg(run: &RunFile) -> String {
    let dirs: Vec<(&str, Vec<&Flow>)> = ["up", "down"]
        .into_iter()
        .map(|d| (d, run.bulk(d)))
        .filter(|(_, f)| !f.is_empty())
        .collect();
    super::stacked(&dirs, (440, 240), |top, bottom, (dir, flows)| {
        let goodput: Vec<Vec<(f64, f64)>> = (flows.iter())
            .map(|f| per_s(f.goodput_bytes_per_s.iter().map(|&b| Some(b as f64 * 8e-6))))
            .collect();
        let caption = format!("{dir}: each flow's goodput at the bottleneck (1 s bins)");
        draw(top, &caption, "Mbit/s", flows, &goodput);
        let rtt: Vec<Vec<(f64, f64)>> = (flows.iter())
            .map(|f| {
                (f.tcp.as_ref()).map_or_else(Vec::new, |t| per_s(t.srtt_ms_per_s.iter().copied()))
            })
            .collect();
        if rtt.iter().any(|r| !r.is_empty()) {
            let caption =
                format!("{dir}: each sender's smoothed RTT (its kernel, sampled each second)");
            draw(bottom, &caption, "ms", flows, &rtt);
        }
    })
}

/// Points at each second's middle.
fn per_s(v: impl Iterator<Item = Option<f64>>) -> Vec<(f64, f64)> {
    v.enumerate()
        .filter_map(|(s, y)| y.map(|y| (s as f64 + 0.5, y)))
        .collect()
}

fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    ydesc: &str,
    flows: &[&Flow],
    series: &[Vec<(f64, f64)>],
) {
    let pts = series.iter().flatten();
    let xmax = pts.clone().map(|p| p.0 + 0.5).fold(1.0f64, f64::max);
    let ymax = pts.map(|p| p.1).fold(1e-3f64, f64::max) * 1.15;
    let Some(mut chart) = time_chart(area, caption, xmax, ymax, ydesc) else {
        return;
    };
    for (i, (f, s)) in flows.iter().zip(series).enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        if let Ok(a) = chart.draw_series(LineSeries::new(s.iter().copied(), c.stroke_width(2))) {
            a.label(label(f))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], c.stroke_width(2)));
        }
    }
    super::legend(&mut chart, SeriesLabelPosition::UpperRight);
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"{"commands_from_s": 1, "links": [], "flows": [
      {"from": "a", "to": "r", "direction": "up", "proto": 6,
       "src": ["198.18.1.1", 40000], "dst": ["198.18.2.1", 5301],
       "goodput_bytes_per_s": [0, 1250000, 1250000],
       "tcp": {"srtt_ms_per_s": [null, 41.0, 43.5], "cc": "cubic"}},
      {"from": "b", "to": "r", "direction": "up", "proto": 6,
       "src": ["198.18.1.2", 40001], "dst": ["198.18.2.1", 5301],
       "goodput_bytes_per_s": [300, 200]}]}"#;

    #[test]
    fn draws_the_bulk_flows_and_leaves_out_the_small() {
        let run = RunFile::parse(RUN).unwrap();
        assert_eq!(run.bulk("up").len(), 1);
        assert_eq!(
            run.summary(),
            vec!["a -> r:5301, cubic (up): 6.67 Mbit/s over 3 s"]
        );
        let svg = svg(&run);
        assert!(svg.contains("a -&gt; r:5301, cubic") || svg.contains("a -> r:5301, cubic"));
        assert!(svg.contains("smoothed RTT"));
    }

    #[test]
    fn refuses_what_is_not_a_run() {
        let e = RunFile::parse(r#"{"links": []}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("not the --stats-json of 'tcpwise emu dumbbell'")
        );
    }
}
