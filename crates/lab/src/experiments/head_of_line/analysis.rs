//! The head-of-line figures (no I/O): each (path, way) cell's median
//! page-load time with its interval and its 90th percentile, the loads
//! that failed, and per load the link's drops and each transport's
//! packets sent and recovered; HTTP/3 and HTTP/1.1 over HTTP/2 paired
//! trial by trial; the verdict.

use super::measure::{Details, Load};
use super::{Plan, Proto};
use crate::verdict::{Estimate, Outcome, Verdict};
use crate::{Figure, Summary};

/// One (path, way) cell.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The path.
    pub path: String,
    /// The way.
    pub proto: Proto,
    /// Page-load time, ms.
    pub plt: Estimate,
    /// Its 90th percentile (nearest rank), ms.
    pub plt_p90: f64,
    /// Until the HTML's last byte, ms.
    pub html: Estimate,
    /// Loads that completed.
    pub n: usize,
    /// Loads that failed.
    pub failed: usize,
    /// Connections per load (median).
    pub connections: f64,
    /// Per load, means: link drops server to client and client to server.
    pub drops: (f64, f64),
    /// Per load, means: the server's packets or segments sent and those
    /// it recovered (TCP: retransmitted; QUIC: declared lost).
    pub sent_recovered: Option<(f64, f64)>,
    /// Steal over the cell's loads, ticks.
    pub steal: u64,
}

/// One path's comparison: `a` over HTTP/2's page-load time, trial by trial.
#[derive(Debug, Clone)]
pub struct Ratio {
    /// The path.
    pub path: String,
    /// HTTP/3 over HTTP/2.
    pub h3: Estimate,
    /// HTTP/1.1 over HTTP/2.
    pub h1: Estimate,
}

/// Everything the section shows.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The cells, by path and way.
    pub cells: Vec<Cell>,
    /// The ratios, by path.
    pub ratios: Vec<Ratio>,
    /// The figures for `results.json`.
    pub summary: Summary,
    /// The verdict.
    pub verdict: Verdict,
}

/// How close HTTP/3 and HTTP/2 must be without loss (the 10 %).
pub const NO_LOSS_TOLERANCE: f64 = 0.10;

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { f64::NAN } else { s / n as f64 }
}

fn cell(path: &str, proto: Proto, loads: &[&Load]) -> Cell {
    let ok: Vec<&&Load> = loads.iter().filter(|l| l.error.is_none()).collect();
    let plt: Vec<f64> = ok.iter().map(|l| l.plt_ms).collect();
    let html: Vec<f64> = ok.iter().map(|l| l.html_ms).collect();
    let conns: Vec<f64> = ok.iter().map(|l| l.connections as f64).collect();
    // Median and p90 of what was measured (nothing, when every load failed).
    let median_p90 = |v: &[f64]| {
        if v.is_empty() {
            (f64::NAN, f64::NAN)
        } else {
            crate::common::median_p90(v)
        }
    };
    let all = || loads.iter();
    let sent_recovered = match proto {
        Proto::Http3 => Some((
            mean(all().map(|l| l.quic_sent as f64)),
            mean(all().map(|l| l.quic_lost as f64)),
        )),
        _ => {
            let t: Vec<(u64, u64)> = all()
                .filter_map(|l| l.tcp_sent.zip(l.tcp_retrans))
                .collect();
            (!t.is_empty()).then(|| {
                (
                    mean(t.iter().map(|x| x.0 as f64)),
                    mean(t.iter().map(|x| x.1 as f64)),
                )
            })
        }
    };
    Cell {
        path: path.into(),
        proto,
        plt: Estimate::of(&plt),
        plt_p90: median_p90(&plt).1,
        html: Estimate::of(&html),
        n: ok.len(),
        failed: loads.len() - ok.len(),
        connections: median_p90(&conns).0,
        drops: (
            mean(all().map(|l| l.drops_down as f64)),
            mean(all().map(|l| l.drops_up as f64)),
        ),
        sent_recovered,
        steal: all().filter_map(|l| l.steal_ticks).sum(),
    }
}

/// `proto`'s page-load time over HTTP/2's, trial by trial (trials where
/// both loaded the page).
fn paired(loads: &[&Load], proto: Proto) -> Estimate {
    let of = |p: Proto| -> Vec<(usize, f64)> {
        loads
            .iter()
            .filter(|l| l.proto == p && l.error.is_none())
            .map(|l| (l.trial, l.plt_ms))
            .collect()
    };
    Estimate::of(&crate::common::ratio_by_round(
        &of(proto),
        &of(Proto::Http2),
    ))
}

/// The key of a path in `results.json`'s summary.
fn key(plan: &Plan, path: &str) -> String {
    match plan.paths.iter().find(|p| p.name == path) {
        Some(p) if p.trace => "lte".into(),
        Some(p) => format!("loss{}", p.loss_pct),
        None => path.into(),
    }
}

/// The figures of `d`.
pub fn analyse(plan: &Plan, d: &Details) -> Analysis {
    let mut cells = Vec::new();
    let mut ratios = Vec::new();
    for p in &plan.paths {
        let here: Vec<&Load> = d.loads.iter().filter(|l| l.path == p.name).collect();
        if here.is_empty() {
            continue;
        }
        for proto in Proto::ALL {
            let mine: Vec<&Load> = here.iter().copied().filter(|l| l.proto == proto).collect();
            if !mine.is_empty() {
                cells.push(cell(&p.name, proto, &mine));
            }
        }
        ratios.push(Ratio {
            path: p.name.clone(),
            h3: paired(&here, Proto::Http3),
            h1: paired(&here, Proto::Http1),
        });
    }
    let mut summary = Summary::new();
    for c in &cells {
        let k = format!("{}.{}", key(plan, &c.path), c.proto.key());
        summary.insert(format!("{k}.plt_ms"), Figure::Num(c.plt.median));
        summary.insert(format!("{k}.plt_p90_ms"), Figure::Num(c.plt_p90));
        summary.insert(format!("{k}.failed"), Figure::Count(c.failed as u64));
        summary.insert(format!("{k}.drops_down"), Figure::Num(c.drops.0));
        if let Some((_, r)) = c.sent_recovered {
            summary.insert(format!("{k}.recovered"), Figure::Num(r));
        }
    }
    for r in &ratios {
        let k = key(plan, &r.path);
        summary.insert(format!("{k}.h3_over_h2"), Figure::Num(r.h3.median));
        summary.insert(format!("{k}.h1_over_h2"), Figure::Num(r.h1.median));
    }
    let verdict = decide(plan, &cells, &ratios);
    Analysis {
        cells,
        ratios,
        summary,
        verdict,
    }
}

/// Written before the run: without loss HTTP/3's median page-load time
/// within [`NO_LOSS_TOLERANCE`] of HTTP/2's (paired by trial), and at the
/// highest loss rate HTTP/3's median below HTTP/2's with their intervals
/// apart, over at least [`super::TRIALS`] loads each.
fn decide(plan: &Plan, cells: &[Cell], ratios: &[Ratio]) -> Verdict {
    let lossy: Vec<&super::PathPlan> = plan.paths.iter().filter(|p| !p.trace).collect();
    let zero = lossy.iter().find(|p| p.loss_pct == 0.0);
    let worst = lossy
        .iter()
        .filter(|p| p.loss_pct > 0.0)
        .max_by(|a, b| a.loss_pct.total_cmp(&b.loss_pct));
    let find = |path: &str, proto: Proto| cells.iter().find(|c| c.path == path && c.proto == proto);
    let criterion = format!(
        "without loss HTTP/3's median page-load time within {:.0} % of HTTP/2's (paired by trial); at the highest loss rate HTTP/3's median below HTTP/2's with their 95 % intervals apart; at least {} loads a cell",
        NO_LOSS_TOLERANCE * 100.0,
        super::TRIALS
    );
    let (Some(zero), Some(worst)) = (zero, worst) else {
        return Verdict {
            outcome: Outcome::TooFewSamples,
            criterion,
            measured: "the run has no path without loss or none with loss".into(),
        };
    };
    let ratio0 = ratios.iter().find(|r| r.path == zero.name).map(|r| r.h3);
    let (h2w, h3w) = (
        find(&worst.name, Proto::Http2),
        find(&worst.name, Proto::Http3),
    );
    let mut measured = Vec::new();
    if let Some(r) = ratio0 {
        measured.push(format!("at 0 % loss HTTP/3 / HTTP/2 x{}", r.text(2)));
    }
    if let (Some(a), Some(b)) = (h2w, h3w) {
        measured.push(format!(
            "at {} % loss HTTP/2 {} ms, HTTP/3 {} ms",
            worst.loss_pct,
            a.plt.text(0),
            b.plt.text(0)
        ));
    }
    let few = [zero, worst].iter().any(|p| {
        [Proto::Http2, Proto::Http3]
            .iter()
            .any(|&pr| find(&p.name, pr).is_none_or(|c| c.n < super::TRIALS))
    });
    let close = ratio0.is_some_and(|r| (r.median - 1.0).abs() <= NO_LOSS_TOLERANCE);
    let wins = match (
        h2w.and_then(|c| c.plt.interval),
        h3w.and_then(|c| c.plt.interval),
    ) {
        (Some(a), Some(b)) => b.median < a.median && a.apart(&b),
        _ => false,
    };
    let outcome = if few {
        Outcome::TooFewSamples
    } else if close && wins {
        Outcome::Reproduced
    } else if wins {
        Outcome::Differs
    } else {
        Outcome::NotReproduced
    };
    Verdict {
        outcome,
        criterion,
        measured: measured.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LabOptions;

    fn load(path: &str, proto: Proto, trial: usize, plt_ms: f64) -> Load {
        Load {
            path: path.into(),
            proto,
            trial,
            error: None,
            plt_ms,
            html_ms: 300.0,
            bytes: 1,
            connections: 1,
            drops_down: 2,
            drops_up: 0,
            tcp_sent: (proto != Proto::Http3).then_some(1000),
            tcp_retrans: (proto != Proto::Http3).then_some(20),
            quic_sent: if proto == Proto::Http3 { 1100 } else { 0 },
            quic_lost: if proto == Proto::Http3 { 22 } else { 0 },
            steal_ticks: Some(1),
        }
    }

    /// Every path of `plan`: HTTP/2 at `h2` ms (lossy paths `lossy` times
    /// that), HTTP/3 at `h3_zero` times HTTP/2 without loss and `h3_lossy`
    /// times with it.
    fn details(plan: &Plan, lossy: f64, h3_zero: f64, h3_lossy: f64) -> Details {
        let mut loads = Vec::new();
        for p in &plan.paths {
            let h2 = if p.loss_pct > 0.0 {
                1500.0 * lossy
            } else {
                1500.0
            };
            let h3 = h2 * if p.loss_pct > 0.0 { h3_lossy } else { h3_zero };
            for t in 1..=super::super::TRIALS {
                let j = t as f64;
                loads.push(load(&p.name, Proto::Http1, t, h2 * 1.1 + j));
                loads.push(load(&p.name, Proto::Http2, t, h2 + j));
                loads.push(load(&p.name, Proto::Http3, t, h3 + j));
            }
        }
        Details {
            loads,
            paths: Vec::new(),
            page: plan.page.clone(),
            congestion: "cubic".into(),
        }
    }

    #[test]
    fn the_verdict_needs_both_halves_of_the_claim_and_enough_loads() {
        let plan = Plan::new(&LabOptions {
            traces: Some("/nonexistent".into()),
            ..LabOptions::for_tests(false, None)
        })
        .unwrap();
        let a = analyse(&plan, &details(&plan, 2.0, 0.95, 0.6));
        assert_eq!(
            a.verdict.outcome,
            Outcome::Reproduced,
            "{}",
            a.verdict.measured
        );
        let r = &a.ratios[0];
        assert!((r.h3.median - 0.95).abs() < 0.01, "{:?}", r.h3);
        let c = a
            .cells
            .iter()
            .find(|c| c.proto == Proto::Http3 && c.path == plan.paths[3].name)
            .unwrap();
        assert_eq!(
            (c.n, c.failed, c.sent_recovered),
            (super::super::TRIALS, 0, Some((1100.0, 22.0)))
        );
        // 20 % apart without loss: HTTP/3 still wins under loss, so it differs.
        let a = analyse(&plan, &details(&plan, 2.0, 0.8, 0.6));
        assert_eq!(a.verdict.outcome, Outcome::Differs);
        // No gain under loss: not reproduced.
        let a = analyse(&plan, &details(&plan, 2.0, 1.0, 1.0));
        assert_eq!(a.verdict.outcome, Outcome::NotReproduced);
        // A failed load leaves its cell short: too few to decide.
        let mut d = details(&plan, 2.0, 0.95, 0.6);
        d.loads[1].error = Some("timed out".into());
        let a = analyse(&plan, &d);
        assert_eq!(a.verdict.outcome, Outcome::TooFewSamples);
        assert_eq!(a.summary["loss0.h2.failed"], Figure::Count(1));
        // --quick's one load a cell cannot decide.
        let quick = Plan::new(&LabOptions::for_tests(true, None)).unwrap();
        let mut d = details(&quick, 2.0, 0.95, 0.6);
        d.loads.retain(|l| l.trial <= 1);
        assert_eq!(analyse(&quick, &d).verdict.outcome, Outcome::TooFewSamples);
    }
}
