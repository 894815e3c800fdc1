//! `index.html`: the report with plots (SVG drawn by plotters, inline).
//! The chart helpers are here; what to plot is each experiment's business
//! (its result carries its plots), so this file knows no experiment.

use crate::report::Entry;
use plotters::prelude::*;
use std::fmt::Write;
use std::path::Path;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One line of a chart: name, colour, points.
pub(crate) type Series = (String, RGBColor, Vec<(f64, f64)>);

/// The spread around a line: its colour and, per x, the lower and upper
/// end (the runs' interval), drawn as a pale band behind the line.
pub(crate) type Band = (RGBColor, Vec<(f64, f64, f64)>);

/// A line chart as an SVG string, with `bands` (the spread of the runs a
/// line is the median of) shaded behind the lines.
pub(crate) fn lines(title: &str, x: &str, y: &str, series: &[Series], bands: &[Band]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 360)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let xmax = series
            .iter()
            .flat_map(|s| s.2.iter().map(|p| p.0))
            .fold(0.0f64, f64::max)
            .max(1e-9);
        let ymax = series
            .iter()
            .flat_map(|s| s.2.iter().map(|p| p.1))
            .chain(bands.iter().flat_map(|b| b.1.iter().map(|p| p.2)))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.1;
        let chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..xmax, 0.0..ymax);
        let Ok(mut chart) = chart else {
            return String::new();
        };
        let _ = chart.configure_mesh().x_desc(x).y_desc(y).draw();
        for (color, pts) in bands {
            // The upper ends left to right, then the lower ends back.
            let mut poly: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.2)).collect();
            poly.extend(pts.iter().rev().map(|p| (p.0, p.1)));
            let _ = chart.draw_series(std::iter::once(Polygon::new(
                poly,
                color.mix(0.18).filled(),
            )));
        }
        for (name, color, pts) in series {
            let c = *color;
            if let Ok(a) =
                chart.draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            {
                a.label(name.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
            }
        }
        // Upper left: the one corner a curve rising from zero leaves free
        // (the middle right, plotters' default, hid a curve).
        let _ = chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw();
        let _ = root.present();
    }
    svg
}

/// One bar: its label, value and the interval drawn as a whisker.
pub(crate) type Bar = (String, f64, Option<(f64, f64)>);

/// A horizontal bar chart as an SVG string, each bar with its interval.
pub(crate) fn bars(title: &str, unit: &str, items: &[Bar]) -> String {
    let mut svg = String::new();
    {
        let h = 60 + 34 * items.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (760, h)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let max = items
            .iter()
            .map(|i| i.2.map_or(i.1, |c| c.1.max(i.1)))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.15;
        let n = items.len().max(1) as f64;
        let chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(170)
            .build_cartesian_2d(0.0..max, 0.0..n);
        let Ok(mut chart) = chart else {
            return String::new();
        };
        let labels: Vec<String> = items.iter().map(|i| i.0.clone()).collect();
        let _ = chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(items.len() * 2 + 1)
            .y_label_formatter(&|y| {
                let i = y.floor() as usize;
                if (y - y.floor() - 0.5).abs() < 0.26 {
                    labels.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc(unit)
            .draw();
        for (i, (_, v, ci)) in items.iter().enumerate() {
            let y = i as f64;
            let _ = chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, y + 0.15), (*v, y + 0.85)],
                BLUE.mix(0.6).filled(),
            )));
            let mut end = *v;
            if let Some((lo, hi)) = *ci {
                end = end.max(hi);
                let _ = chart.draw_series(
                    [
                        vec![(lo, y + 0.5), (hi, y + 0.5)],
                        vec![(lo, y + 0.3), (lo, y + 0.7)],
                        vec![(hi, y + 0.3), (hi, y + 0.7)],
                    ]
                    .into_iter()
                    .map(|p| PathElement::new(p, BLACK.stroke_width(2))),
                );
            }
            let _ = chart.draw_series(std::iter::once(Text::new(
                format!("{v:.0}"),
                (end, y + 0.4),
                ("sans-serif", 13),
            )));
        }
        let _ = root.present();
    }
    svg
}

/// Markdown (with tables) to HTML.
pub(crate) fn render(md: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(md, pulldown_cmark::Options::ENABLE_TABLES);
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// How a part's interval narrowed, round by round: the band between its
/// ends after each look (an end not yet bounded runs to the chart's
/// edge), and its threshold or band edges as red lines.
pub(crate) fn narrowing(p: &crate::sequential::PartResult) -> String {
    let edges = p.target.edges();
    let finite: Vec<f64> = p
        .looks
        .iter()
        .flat_map(|l| [l.low, l.high])
        .flatten()
        .chain(edges.iter().copied())
        .chain(std::iter::once(p.estimate).filter(|x| x.is_finite()))
        .collect();
    let (lo, hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let pad = ((hi - lo) * 0.15).max(1e-6);
    let (ylo, yhi) = (lo - pad, hi + pad);
    let xmax = p.looks.last().map_or(1.0, |l| l.round as f64).max(1.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (370, 220)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let chart = ChartBuilder::on(&root)
            .caption(&p.name, ("sans-serif", 12))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..xmax, ylo..yhi);
        let Ok(mut chart) = chart else {
            return String::new();
        };
        let _ = chart.configure_mesh().x_desc("round").draw();
        let mut poly: Vec<(f64, f64)> = p
            .looks
            .iter()
            .map(|l| (l.round as f64, l.high.unwrap_or(yhi).min(yhi)))
            .collect();
        poly.extend(
            p.looks
                .iter()
                .rev()
                .map(|l| (l.round as f64, l.low.unwrap_or(ylo).max(ylo))),
        );
        let _ = chart.draw_series(std::iter::once(Polygon::new(poly, BLUE.mix(0.25).filled())));
        for e in edges {
            let _ = chart.draw_series(LineSeries::new([(0.0, e), (xmax, e)], RED));
        }
    }
    svg
}

/// Writes `index.html`: the same text as report.md, rendered, with each
/// experiment's plots under its heading and every named figure folded away
/// at the end of its section.
pub fn write(out: &Path, done: &[Entry], header: &str) -> std::io::Result<()> {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>tcpwise lab report</title>\
         <style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}}\
         table{{border-collapse:collapse;margin:1em 0;font-size:14px}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}\
         th{{background:#eef2f8}}tr:nth-child(even) td{{background:#fafafa}}code{{background:#f2f2f2;padding:0 3px}}\
         h2{{border-bottom:2px solid #36c;padding-bottom:4px;margin-top:2.5em}}svg{{max-width:100%;height:auto}}\
         details{{margin:1em 0}}summary{{cursor:pointer;color:#36c}}</style></head><body>\
         <h1>tcpwise lab report</h1><p>{}</p>{}",
        esc(header),
        render(&crate::report::glance(done))
    );
    for e in done {
        let body = render(&crate::report::section(e));
        // Anchor for the first table's links; plots go under the heading.
        // The verdict, when the section opens with one, stays right under
        // the heading, above the plots.
        let (head, rest) = match body.find("</h2>") {
            Some(i) => {
                let at = i + "</h2>".len();
                let verdict = body[at..].trim_start().starts_with("<p><strong>Verdict");
                match body[at..].find("</p>").filter(|_| verdict) {
                    Some(j) => body.split_at(at + j + "</p>".len()),
                    None => body.split_at(at),
                }
            }
            None => ("", body.as_str()),
        };
        let _ = write!(h, "<section id=\"{}\">{head}", esc(&e.name));
        for svg in &e.plots {
            h.push_str(svg);
        }
        // Each part's interval narrowing round by round.
        for p in e.decision.iter().flat_map(|d| &d.parts) {
            h.push_str(&narrowing(p));
        }
        h.push_str(rest);
        h.push_str("<details><summary>Every named figure (results.json <code>summary</code>)</summary><table><tr><th>figure</th><th>value</th></tr>");
        for (k, v) in &e.summary {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(k),
                esc(&v.to_string())
            );
        }
        h.push_str("</table></details></section>");
    }
    h.push_str("</body></html>\n");
    let tmp = out.join("index.html.tmp");
    std::fs::write(&tmp, h)?;
    std::fs::rename(&tmp, out.join("index.html"))
}
