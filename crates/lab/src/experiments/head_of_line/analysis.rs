//! The head-of-line figures (no I/O): each (path, way) cell's median
//! page-load time with its interval and its 90th percentile, the loads
//! that failed, and per load the link's drops and each transport's
//! packets sent and recovered; HTTP/3 and HTTP/1.1 over HTTP/2 paired
//! trial by trial; the verdict.

use super::measure::{Details, Load};
use super::{Plan, Proto};
use crate::sequential::Record;
use crate::verdict::{Estimate, Verdict};
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
    /// Per load, means: link drops server to client and client to server
    /// (of the loads that had the link alone, where any did).
    pub drops: (f64, f64),
    /// Whether every load of the cell shared its link with the other way
    /// (the decision's pairs at once), so `drops` are the pairs'.
    pub drops_of_pairs: bool,
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
    /// Of the pairs loaded at once on one link, the largest share of its
    /// rate the two used together (their bytes over the slower's time).
    pub pair_share: Option<f64>,
    /// The highest-loss path's testbeds in each decision round.
    pub replicas: usize,
}

/// The largest share of its link's rate any pair loaded at once used.
fn pair_share(plan: &Plan, d: &Details) -> Option<f64> {
    let mut most: Option<f64> = None;
    for l in d
        .loads
        .iter()
        .filter(|l| l.beside && l.proto == Proto::Http2)
    {
        let Some(rate) = plan
            .paths
            .iter()
            .find(|p| p.name == l.path)
            .and_then(|p| p.spec.rate)
        else {
            continue;
        };
        let Some(o) = d.loads.iter().find(|o| {
            o.beside && o.proto == Proto::Http3 && o.path == l.path && o.trial == l.trial
        }) else {
            continue;
        };
        let secs = l.plt_ms.max(o.plt_ms) / 1e3;
        if l.error.is_none() && o.error.is_none() && secs > 0.0 {
            let share = (l.bytes + o.bytes) as f64 * 8.0 / secs / rate as f64;
            most = Some(most.map_or(share, |m| m.max(share)));
        }
    }
    most
}

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
    // A pair's drops are both ways': a cell's are its own loads' where
    // any had the link alone.
    let drops_of_pairs = loads.iter().all(|l| l.beside);
    let own = || loads.iter().filter(move |l| drops_of_pairs || !l.beside);
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
            mean(own().map(|l| l.drops_down as f64)),
            mean(own().map(|l| l.drops_up as f64)),
        ),
        drops_of_pairs,
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

/// The figures of `d`, and the verdict `record` gives.
pub fn analyse(plan: &Plan, d: &Details, record: &Record) -> Analysis {
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
    let replicas = replicas(d, record);
    let verdict = decide(plan, &cells, record, replicas);
    let pair_share = pair_share(plan, d);
    if let Some(x) = pair_share {
        summary.insert("pairs_largest_rate_share".into(), Figure::Num(x));
    }
    Analysis {
        cells,
        ratios,
        summary,
        verdict,
        pair_share,
        replicas,
    }
}

/// HTTP/3's page-load time over HTTP/2's in one trial's loads (NaN where
/// either failed or is missing).
fn trial_ratio(loads: &[&Load]) -> f64 {
    let plt = |p: Proto| {
        loads
            .iter()
            .find(|l| l.proto == p && l.error.is_none())
            .map_or(f64::NAN, |l| l.plt_ms)
    };
    plt(Proto::Http3) / plt(Proto::Http2)
}

/// A decision round's values from its loads: on the highest-loss path
/// the median of its replicas' HTTP/3 over HTTP/2 ratios (one a trial),
/// then the ratio on the path without loss (NaN, counted for nothing,
/// where a load failed: a median of the replicas left would be another
/// statistic).
pub fn round_values(worst: &[Load], zero: &[Load]) -> Vec<f64> {
    let ratios = |loads: &[Load]| -> Vec<f64> {
        let mut trials: Vec<usize> = loads.iter().map(|l| l.trial).collect();
        trials.sort_unstable();
        trials.dedup();
        trials
            .iter()
            .map(|t| trial_ratio(&loads.iter().filter(|l| l.trial == *t).collect::<Vec<_>>()))
            .collect()
    };
    let median = |mut v: Vec<f64>| {
        if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
            return f64::NAN;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    vec![median(ratios(worst)), median(ratios(zero))]
}

/// The field report's claim as this experiment decides it, fixed before
/// the run, for rounds of `replicas` testbeds at the highest loss.
pub fn criterion(replicas: usize) -> String {
    let lossy = match replicas {
        0 | 1 => "back to back as well".to_string(),
        n => format!(
            "at once on each of {n} testbeds (the round's value there the median of their {n} ratios, whose median is one ratio's)"
        ),
    };
    format!(
        "each round loads the page over HTTP/2 and over HTTP/3: on the path without loss back to back, on the highest-loss path {lossy}, the two paths at once; at the highest loss the median of HTTP/3's page-load time over HTTP/2's is below 1 (the claim) and without loss within 10 % of 1 (a detail), each median decided by its indifference zone (the decision table)"
    )
}

/// The highest-loss path's testbeds in each decision round of `d`: its
/// pairs loaded at once over the rounds that ran (1 in records from
/// before the replicas, whose rounds loaded one pair back to back).
pub fn replicas(d: &Details, record: &Record) -> usize {
    let ran = record.rounds + record.discarded;
    let pairs = d
        .loads
        .iter()
        .filter(|l| l.beside && l.proto == Proto::Http2)
        .count();
    if ran == 0 || pairs == 0 {
        1
    } else {
        pairs / ran
    }
}

/// The verdict: the sequential decision, with the cells' medians beside
/// it.
fn decide(plan: &Plan, cells: &[Cell], record: &Record, replicas: usize) -> Verdict {
    let worst = plan.decisive().map(|(_, w)| &plan.paths[w]);
    let find = |path: &str, proto: Proto| cells.iter().find(|c| c.path == path && c.proto == proto);
    let mut measured = vec![record.line()];
    if let Some(w) = worst
        && let (Some(a), Some(b)) = (find(&w.name, Proto::Http2), find(&w.name, Proto::Http3))
    {
        measured.push(format!(
            "at {} % loss HTTP/2 {} ms, HTTP/3 {} ms",
            w.loss_pct,
            a.plt.text(0),
            b.plt.text(0)
        ));
    }
    Verdict {
        outcome: crate::sequential::outcome(&record.parts, crate::sequential::Combine::Main(1)),
        criterion: criterion(replicas),
        measured: measured.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LabOptions;
    use crate::verdict::Outcome;

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
            beside: false,
        }
    }

    #[test]
    fn a_round_at_the_highest_loss_is_the_median_of_its_replicas() {
        let p = "5 %";
        let pair = |t: usize, h2: f64, h3: f64| {
            [load(p, Proto::Http2, t, h2), load(p, Proto::Http3, t, h3)]
        };
        let worst: Vec<Load> = [
            pair(1, 100.0, 50.0),
            pair(2, 100.0, 120.0),
            pair(3, 200.0, 160.0),
        ]
        .concat();
        let zero = pair(1, 100.0, 95.0);
        let v = round_values(&worst, &zero);
        assert!((v[0] - 0.8).abs() < 1e-9, "{v:?}");
        assert!((v[1] - 0.95).abs() < 1e-9, "{v:?}");
        // A replica that failed leaves the round counted for nothing.
        let mut w = worst.clone();
        w[3].error = Some("timed out".into());
        assert!(round_values(&w, &zero)[0].is_nan());
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

    /// The decision `details` make, read round by round.
    fn record(plan: &Plan, d: &Details, rounds: usize) -> Record {
        let (zero, worst) = plan.decisive().unwrap();
        let on = |p: usize, t: usize| -> Vec<Load> {
            d.loads
                .iter()
                .filter(|l| l.path == plan.paths[p].name && l.trial == t)
                .cloned()
                .collect()
        };
        let v: Vec<Vec<f64>> = (1..=rounds)
            .map(|t| round_values(&on(worst, t), &on(zero, t)))
            .collect();
        Record::of_rounds(super::super::parts(), &v, crate::sequential::Stop::Decided)
    }

    #[test]
    fn the_verdict_reads_the_decision_on_both_halves_of_the_claim() {
        let plan = Plan::new(&LabOptions {
            traces: Some("/nonexistent".into()),
            ..LabOptions::for_tests(false, None)
        })
        .unwrap();
        let judge = |d: &Details| analyse(&plan, d, &record(&plan, d, super::super::TRIALS));
        let a = judge(&details(&plan, 2.0, 0.95, 0.6));
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
        // 25 % apart without loss (past the outer band): HTTP/3 still wins
        // under loss, so it differs.
        assert_eq!(
            judge(&details(&plan, 2.0, 0.75, 0.6)).verdict.outcome,
            Outcome::Differs
        );
        // No gain under loss: not reproduced.
        assert_eq!(
            judge(&details(&plan, 2.0, 1.0, 1.3)).verdict.outcome,
            Outcome::NotReproduced
        );
        // A failed load counts for nothing; the cell says it failed.
        let mut d = details(&plan, 2.0, 0.95, 0.6);
        d.loads[1].error = Some("timed out".into());
        let a = judge(&d);
        assert_eq!(a.summary["loss0.h2.failed"], Figure::Count(1));
        assert_eq!(a.verdict.outcome, Outcome::Reproduced);
        // Three rounds bound nothing: undecided at budget.
        let d = details(&plan, 2.0, 0.95, 0.6);
        assert_eq!(
            analyse(&plan, &d, &record(&plan, &d, 3)).verdict.outcome,
            Outcome::Undecided
        );
    }
}
