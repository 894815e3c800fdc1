//! `index.html`: the report with plots (SVG drawn by plotters, inline).
//! The chart helpers are here; what to plot is each experiment's business
//! (its result carries its plots), so this file knows no experiment.

use crate::report::Entry;
use plotters::prelude::*;
use std::fmt::Write;
use std::path::Path;

/// Text size for plotters: its SVG writes a font's size / 1.24 as pixels,
/// so 15 is 12.1 px, the smallest the pages use.
const TEXT: f64 = 15.0;
/// Titles.
const TITLE: f64 = 19.0;

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
    let xs = || series.iter().flat_map(|s| s.2.iter().map(|p| p.0));
    let ys = || {
        series.iter().flat_map(|s| s.2.iter().map(|p| p.1)).chain(
            bands
                .iter()
                .flat_map(|b| b.1.iter().flat_map(|p| [p.1, p.2])),
        )
    };
    // From zero, or below it where a value is (a saving can be negative).
    let (xmin, xmax) = (
        xs().fold(0.0f64, f64::min),
        xs().fold(0.0f64, f64::max).max(1e-9),
    );
    let (ymin, ymax) = (
        ys().fold(0.0f64, f64::min),
        ys().fold(0.0f64, f64::max).max(1e-9) * 1.1,
    );
    let mut svg = String::new();
    {
        // The legend under the plot, a row a series: never over the data.
        let rows = series.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (760, 360 + 22 * rows)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let (plot, below) = root.split_vertically(360);
        let chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", TITLE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(xmin..xmax, ymin..ymax);
        let Ok(mut chart) = chart else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .x_desc(x)
            .y_desc(y)
            .label_style(("sans-serif", TEXT))
            .axis_desc_style(("sans-serif", TEXT))
            .draw();
        for (color, pts) in bands {
            // The upper ends left to right, then the lower ends back.
            let mut poly: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.2)).collect();
            poly.extend(pts.iter().rev().map(|p| (p.0, p.1)));
            let _ = chart.draw_series(std::iter::once(Polygon::new(
                poly,
                color.mix(0.18).filled(),
            )));
        }
        for (k, (name, color, pts)) in series.iter().enumerate() {
            let c = *color;
            // A series of one point is a point: a line needs two.
            let _ = if pts.len() < 2 {
                chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, c.filled())))
            } else {
                chart.draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            };
            let y = 10 + 22 * k as i32;
            let _ = below.draw(&PathElement::new(vec![(72, y), (96, y)], c.stroke_width(3)));
            let _ = below.draw(&Text::new(
                name.clone(),
                (104, y - 7),
                ("sans-serif", TEXT).into_font(),
            ));
        }
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
            .caption(title, ("sans-serif", TITLE))
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
            .label_style(("sans-serif", TEXT))
            .axis_desc_style(("sans-serif", TEXT))
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
                // An interval narrower than a pixel is its one cap, not
                // a line of one point.
                let whisker = [
                    vec![(lo, y + 0.3), (lo, y + 0.7)],
                    vec![(hi, y + 0.3), (hi, y + 0.7)],
                    vec![(lo, y + 0.5), (hi, y + 0.5)],
                ];
                let n = if (hi - lo) / max * 560.0 >= 1.0 { 3 } else { 1 };
                let _ = chart.draw_series(
                    whisker
                        .into_iter()
                        .take(n)
                        .map(|p| PathElement::new(p, BLACK.stroke_width(2))),
                );
            }
            let _ = chart.draw_series(std::iter::once(Text::new(
                format!("{v:.0}"),
                (end, y + 0.4),
                ("sans-serif", TEXT),
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

/// How a part's interval narrowed, round by round: the median so far
/// (a line with a point a round), the interval from the first round that
/// bounds it (a band, its ends as lines), and the zone: the confirming
/// edge green, the refuting edge red, the zone between them shaded. The
/// rounds before the first bound are said in the caption, not drawn as
/// an infinite band.
pub(crate) fn narrowing(p: &crate::sequential::PartResult) -> String {
    let edges = p.target.edges();
    let bounded: Vec<(f64, f64, f64)> = p
        .looks
        .iter()
        .filter_map(|l| Some((l.round as f64, l.low?, l.high?)))
        .collect();
    let mut median: Vec<(f64, f64)> = p
        .looks
        .iter()
        .filter_map(|l| Some((l.round as f64, l.estimate?)))
        .collect();
    // A recording from before the medians were kept: its last one.
    if let (true, Some(l)) = (median.is_empty() && p.estimate.is_finite(), p.looks.last()) {
        median.push((l.round as f64, p.estimate));
    }
    let ys = bounded
        .iter()
        .flat_map(|b| [b.1, b.2])
        .chain(median.iter().map(|m| m.1))
        .chain(edges.iter().map(|e| e.0))
        .chain(std::iter::once(p.estimate).filter(|x| x.is_finite()));
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let pad = ((hi - lo) * 0.15).max(1e-6);
    let (ylo, yhi) = (lo - pad, hi + pad);
    let xmax = p.looks.last().map_or(1.0, |l| l.round as f64).max(2.0) + 0.5;
    let first = bounded.first().map(|b| b.0 as usize);
    // The part's name is the page's caption above the plot (a long name
    // does not fit a chart's).
    let caption = match first {
        Some(r) if r > 1 => format!("no interval before round {r}"),
        Some(_) => "an interval from the first round".to_string(),
        None => "no interval yet".to_string(),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
        let _ = root.fill(&WHITE);
        // The legend beside the plot, never over its data.
        let (plot, side) = root.split_horizontally(500);
        let chart = ChartBuilder::on(&plot)
            .caption(caption, ("sans-serif", TEXT + 1.0))
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0.5..xmax, ylo..yhi);
        let Ok(mut chart) = chart else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .x_desc("round")
            .y_desc(match p.unit.trim() {
                "" => "median".to_string(),
                u => format!("median ({u})"),
            })
            .x_labels(usize::min(p.looks.len().max(2), 10))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style(("sans-serif", TEXT))
            .axis_desc_style(("sans-serif", TEXT))
            .draw();
        zone_and_edges(&mut chart, &p.target, xmax);
        if bounded.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = bounded.iter().map(|b| (b.0, b.2)).collect();
            poly.extend(bounded.iter().rev().map(|b| (b.0, b.1)));
            let band = BLUE.mix(0.2);
            let _ = chart.draw_series(std::iter::once(Polygon::new(poly, band.filled())));
        } else if let Some(&(x, l, h)) = bounded.first() {
            // One bounded round: a whisker with caps. Its vertical line
            // only where the interval spans a pixel: an interval far
            // narrower than the zone (the 3 Dec default run's warm part,
            // 0.16 ms on a 46 ms axis) shows as its two caps.
            let w = 0.15;
            let mut marks = vec![
                PathElement::new([(x - w, l), (x + w, l)], BLUE.stroke_width(3)),
                PathElement::new([(x - w, h), (x + w, h)], BLUE.stroke_width(3)),
            ];
            if chart.backend_coord(&(x, l)) != chart.backend_coord(&(x, h)) {
                marks.push(PathElement::new([(x, l), (x, h)], BLUE.stroke_width(3)));
            }
            let _ = chart.draw_series(marks);
        }
        let _ = chart.draw_series(median.iter().map(|m| Circle::new(*m, 3, BLACK.filled())));
        if median.len() >= 2 {
            let _ = chart.draw_series(LineSeries::new(median.clone(), BLACK));
        }
        legend(&side, p.target.zone_width() > 0.0);
        let _ = root.present();
    }
    svg
}

/// A part's zone shaded (a band's two margins between its inner and outer
/// edges) and its edges as dashed lines: confirming green, refuting red.
fn zone_and_edges<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    target: &crate::sequential::Target,
    xmax: f64,
) {
    use crate::sequential::{State, Target};
    let zone = RGBColor(230, 160, 60).mix(0.18);
    let zones: Vec<(f64, f64)> = match *target {
        Target::AtLeast { confirm, refute } | Target::AtMost { confirm, refute } => {
            vec![(refute, confirm)]
        }
        Target::Within {
            lo,
            hi,
            outer_lo,
            outer_hi,
        } => vec![(outer_lo, lo), (hi, outer_hi)],
    };
    for (a, b) in zones.into_iter().filter(|(a, b)| a != b) {
        let _ = chart.draw_series(std::iter::once(Rectangle::new(
            [(0.5, a.min(b)), (xmax, a.max(b))],
            zone.filled(),
        )));
    }
    for (e, wrong) in target.edges() {
        // A confirming edge is where refuting would be wrong.
        let c = if wrong == State::Fails {
            RGBColor(30, 140, 60)
        } else {
            RED
        };
        let _ = chart.draw_series(DashedLineSeries::new(
            [(0.5, e), (xmax, e)],
            6,
            4,
            c.stroke_width(2),
        ));
    }
}

/// The narrowing plot's legend, in its own area.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, zone: bool) {
    let font = ("sans-serif", TEXT).into_font();
    let mut y = 40;
    let mut entry =
        |shape: &dyn Fn(i32) -> Vec<(i32, i32)>, style: ShapeStyle, filled: bool, text: &str| {
            let pts = shape(y);
            let _ = if filled {
                area.draw(&Rectangle::new([pts[0], pts[1]], style))
            } else {
                area.draw(&PathElement::new(pts, style))
            };
            let _ = area.draw(&Text::new(text.to_string(), (26, y - 6), font.clone()));
            y += 22;
        };
    let line = |y: i32| vec![(4, y), (20, y)];
    let boxed = |y: i32| vec![(4, y - 5), (20, y + 5)];
    entry(&line, BLACK.stroke_width(2), false, "median so far");
    entry(&boxed, BLUE.mix(0.2).filled(), true, "interval");
    entry(
        &line,
        RGBColor(30, 140, 60).stroke_width(2),
        false,
        "confirming edge",
    );
    entry(&line, RED.stroke_width(2), false, "refuting edge");
    if zone {
        entry(
            &boxed,
            RGBColor(230, 160, 60).mix(0.18).filled(),
            true,
            "zone",
        );
    }
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
            // The part's name above its plot, in the page's own text (a
            // long name does not fit a chart's caption).
            let _ = write!(
                h,
                "<figure style=\"margin:1em 0\"><figcaption style=\"font-size:14px\">How the interval narrowed: {}</figcaption>{}</figure>",
                esc(&p.name),
                narrowing(p)
            );
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

#[cfg(test)]
/// What in an SVG draws nothing a reader can see: a line of fewer than
/// two points, a band or box without area. The lab's plots must have none
/// (`fixtures_tests` checks every experiment's, replayed).
pub(crate) fn empty_marks(svg: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (tag, min) in [("<polyline", 2), ("<polygon", 3)] {
        for el in svg.split(tag).skip(1) {
            let pts: Vec<(f64, f64)> = attr(el, "points")
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            let mut distinct = pts.clone();
            distinct.dedup();
            if distinct.len() < min {
                found.push(format!("{tag}> of {} point(s)", distinct.len()));
            } else if tag == "<polygon" && area(&pts) < 1.0 {
                found.push(format!("<polygon> of area {:.2}", area(&pts)));
            }
        }
    }
    found
}

#[cfg(test)]
fn attr<'a>(el: &'a str, name: &str) -> &'a str {
    let key = format!("{name}=\"");
    el.split('>')
        .next()
        .and_then(|head| head.split_once(key.as_str()))
        .and_then(|(_, rest)| rest.split_once('"'))
        .map_or("", |(v, _)| v)
}

/// The shoelace area of a polygon, in square pixels.
#[cfg(test)]
fn area(pts: &[(f64, f64)]) -> f64 {
    let n = pts.len();
    (0..n)
        .map(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            a.0 * b.1 - b.0 * a.1
        })
        .sum::<f64>()
        .abs()
        / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_of_one_point_and_a_band_without_area_are_found() {
        let found = empty_marks(r#"<svg><polyline fill="none" points="10,20 10,20 "/></svg>"#);
        assert_eq!(found, vec!["<polyline> of 1 point(s)".to_string()]);
        // A band whose ends meet has no area; a one-point series is drawn
        // as a point, not as a line of one point.
        let flat = lines(
            "t",
            "x",
            "y",
            &[("a".into(), BLUE, vec![(1.0, 2.0)])],
            &[(BLUE, vec![(1.0, 2.0, 2.0), (2.0, 2.0, 2.0)])],
        );
        assert_eq!(
            empty_marks(&flat),
            vec!["<polygon> of area 0.00".to_string()]
        );
        let two = lines(
            "t",
            "x",
            "y",
            &[("a".into(), BLUE, vec![(1.0, 2.0), (2.0, 3.0)])],
            &[],
        );
        assert_eq!(empty_marks(&two), Vec::<String>::new());
    }

    #[test]
    fn the_narrowing_plot_shows_the_median_the_interval_and_the_zone() {
        use crate::sequential::{PartSpec, Record, Stop, Target};
        let spec = PartSpec {
            name: "x".into(),
            target: Target::at_least(5.0, 3.0),
            unit: "x",
            prec: 2,
            planning: (8.0, 0.3),
        };
        let rounds: Vec<Vec<f64>> = [8.0, 8.2, 7.9, 8.1, 8.3, 7.8, 8.0, 8.1]
            .iter()
            .map(|v| vec![*v])
            .collect();
        let r = Record::of_rounds(vec![spec], &rounds, Stop::Decided);
        let svg = narrowing(&r.parts[0]);
        assert_eq!(empty_marks(&svg), Vec::<String>::new());
        for word in [
            "median so far",
            "interval",
            "confirming edge",
            "refuting edge",
            "zone",
            "round",
            "no interval before round 5",
        ] {
            assert!(svg.contains(word), "{word} missing");
        }
        // No text under 12 px.
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size
                .split('"')
                .next()
                .unwrap_or("0")
                .trim_end_matches("px")
                .parse()
                .unwrap_or(0.0);
            assert!(px >= 12.0, "text of {px} px");
        }
    }
}
