//! Figures from the tests (pure): each cell's medians, the ratios the
//! verdict is decided by, and what a server operator should pick.

use super::measure::Run;
use super::{BLOATED, FQ_CODEL, Plan};
use crate::verdict::{Estimate, Verdict};
use crate::{Figure, Summary};
use tcpwise_tcp::Lowat;

/// One cell: a path, a queue and a server setting, over its runs.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The path's name.
    pub path: String,
    /// The queue's name.
    pub queue: String,
    /// The server's setting.
    pub arm: String,
    /// RPM (trimmed means).
    pub rpm: Estimate,
    /// RPM from 90th percentiles.
    pub rpm_p90: Estimate,
    /// Foreign round trip, ms.
    pub foreign_ms: Estimate,
    /// Self probe, ms.
    pub self_ms: Estimate,
    /// Idle round trip, ms.
    pub idle_ms: Estimate,
    /// Goodput, Mbit/s.
    pub goodput: Estimate,
    /// Load-generating connections (median).
    pub flows: f64,
    /// Runs that reached stability.
    pub stable: usize,
    /// Runs.
    pub n: usize,
    /// Steal over its runs, ticks.
    pub steal: u64,
}

/// What the report says.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Every cell, in plan order (path, queue, setting).
    pub cells: Vec<Cell>,
    /// FQ-CoDel with the mark (auto) over the bloated drop-tail without
    /// it, CUBIC, first path: RPM, round by round.
    pub fixed_over_bloated: Estimate,
    /// The same pair's goodput ratio.
    pub goodput_ratio: Estimate,
    /// FQ-CoDel over the bloated drop-tail, both with the mark, CUBIC:
    /// what the network's queue alone is worth.
    pub queue_alone: Estimate,
    /// Under FQ-CoDel, CUBIC: self probe with the mark over without it.
    pub lowat_self: Estimate,
    /// What a server operator should pick, in words.
    pub advice: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The named figures.
    pub summary: Summary,
}

fn values(runs: &[&Run], f: fn(&Run) -> f64) -> Vec<f64> {
    runs.iter()
        .map(|r| f(r))
        .filter(|x| x.is_finite())
        .collect()
}

/// `a` over `b`, round by round.
fn ratio(a: &[&Run], b: &[&Run], f: fn(&Run) -> f64) -> Estimate {
    let v: Vec<f64> = a
        .iter()
        .filter_map(|x| {
            let y = b.iter().find(|y| y.round == x.round)?;
            let r = f(x) / f(y);
            r.is_finite().then_some(r)
        })
        .collect();
    Estimate::of(&v)
}

/// The runs of one cell.
fn cell_runs<'a>(runs: &'a [Run], path: &str, queue: &str, arm: &str) -> Vec<&'a Run> {
    runs.iter()
        .filter(|r| r.path == path && r.queue == queue && r.arm == arm)
        .collect()
}

/// Figures from the tests.
pub fn analyse(plan: &Plan, runs: &[Run], record: &crate::sequential::Record) -> Analysis {
    let mut cells = Vec::new();
    for p in &plan.paths {
        for q in &plan.queues {
            for a in &plan.arms {
                let v = cell_runs(runs, &p.name, q.label, &a.label());
                if v.is_empty() {
                    continue;
                }
                let mut flows: Vec<f64> = v.iter().map(|r| r.flows as f64).collect();
                flows.sort_by(f64::total_cmp);
                cells.push(Cell {
                    path: p.name.clone(),
                    queue: q.label.into(),
                    arm: a.label(),
                    rpm: Estimate::of(&values(&v, |r| r.rpm)),
                    rpm_p90: Estimate::of(&values(&v, |r| r.rpm_p90)),
                    foreign_ms: Estimate::of(&values(&v, |r| r.foreign_ms)),
                    self_ms: Estimate::of(&values(&v, |r| r.self_ms)),
                    idle_ms: Estimate::of(&values(&v, |r| r.idle_ms)),
                    goodput: Estimate::of(&values(&v, |r| r.goodput_mbit)),
                    flows: tcpwise_units::nearest_rank(&flows, 0.5),
                    stable: v.iter().filter(|r| r.stable).count(),
                    n: v.len(),
                    steal: v.iter().filter_map(|r| r.steal_ticks).sum(),
                });
            }
        }
    }
    let first = plan.paths.first().map_or("", |p| p.name.as_str());
    let label = |lowat: Lowat| super::Arm { lowat, cc: "cubic" }.label();
    let (off, auto) = (label(Lowat::Off), label(Lowat::Adaptive));
    let bloated = super::QUEUES[BLOATED].label;
    let fq = super::QUEUES[FQ_CODEL].label;
    let dt_off = cell_runs(runs, first, bloated, &off);
    let dt_auto = cell_runs(runs, first, bloated, &auto);
    let fq_off = cell_runs(runs, first, fq, &off);
    let fq_auto = cell_runs(runs, first, fq, &auto);
    let fixed_over_bloated = ratio(&fq_auto, &dt_off, |r| r.rpm);
    let goodput_ratio = ratio(&fq_auto, &dt_off, |r| r.goodput_mbit);
    let queue_alone = ratio(&fq_auto, &dt_auto, |r| r.rpm);
    let lowat_self = ratio(&fq_auto, &fq_off, |r| r.self_ms);
    // The advice rests on the decided part about the mark (its self
    // probes), never on the matrix's cells alone.
    let mark = record
        .parts
        .iter()
        .find(|p| p.name.starts_with("self probe"))
        .map(|p| p.state);
    let advice = advice(plan, runs, mark);
    let verdict = verdict(
        record,
        &fixed_over_bloated,
        &goodput_ratio,
        &queue_alone,
        &lowat_self,
    );
    let mut summary = Summary::new();
    for c in cells
        .iter()
        .filter(|c| c.path == first && c.arm.ends_with("cubic"))
    {
        let q = c.queue.split(' ').next().unwrap_or("").to_lowercase();
        let q = if c.queue.contains("bloated") {
            "droptail_4bdp".to_string()
        } else if c.queue.contains("1 BDP") {
            "droptail_1bdp".to_string()
        } else {
            q.replace('-', "_")
        };
        let l = if c.arm.contains("off") { "off" } else { "auto" };
        summary.insert(format!("rpm_{q}_lowat_{l}"), Figure::Num(c.rpm.median));
    }
    for (k, e) in [
        ("rpm_fq_codel_auto_over_droptail_off", &fixed_over_bloated),
        ("goodput_fq_codel_auto_over_droptail_off", &goodput_ratio),
        ("rpm_fq_codel_over_droptail_both_auto", &queue_alone),
        ("self_probe_auto_over_off_fq_codel", &lowat_self),
    ] {
        summary.insert(k.into(), Figure::Num(e.median));
    }
    Analysis {
        cells,
        fixed_over_bloated,
        goodput_ratio,
        queue_alone,
        lowat_self,
        advice,
        verdict,
        summary,
    }
}

/// What the verdict is decided by, stated before anything runs.
pub const CRITERION: &str = "on the first path with CUBIC, round by round (the bloated drop-tail with the mark off, FQ-CoDel with it auto and off, in a rotating order): the median of FQ-CoDel with TCP_NOTSENT_LOWAT auto over a bloated drop-tail queue (4 BDP) with it off is at least 3x in RPM, and the mark shortens the self probes under FQ-CoDel (their median ratio under 1); its goodput at least 0.9 of the drop-tail's, or the verdict says the difference; each median decided by its indifference zone (the decision table)";

/// A decisive round's values, one per part ([`super::parts`]): RPM of
/// FQ-CoDel with the mark over the bloated drop-tail without, the self
/// probe with the mark over without under FQ-CoDel, and the goodput
/// ratio of the first pair.
pub fn round_values(dt_off: &Run, fq_auto: &Run, fq_off: &Run) -> Vec<f64> {
    vec![
        fq_auto.rpm / dt_off.rpm,
        fq_auto.self_ms / fq_off.self_ms,
        fq_auto.goodput_mbit / dt_off.goodput_mbit,
    ]
}

/// The verdict: the sequential decision (RPM and self probes are the
/// claim, goodput its detail), with the paired medians beside.
pub fn verdict(
    record: &crate::sequential::Record,
    fixed: &Estimate,
    goodput: &Estimate,
    queue_alone: &Estimate,
    lowat_self: &Estimate,
) -> Verdict {
    let measured = format!(
        "RPM {} at goodput {}; FQ-CoDel alone (both with the mark) {}; self probe with the mark over without, under FQ-CoDel, {}; {}",
        fixed.times(2),
        goodput.times(2),
        queue_alone.times(2),
        lowat_self.times(2),
        record.line()
    );
    Verdict {
        outcome: crate::sequential::outcome(&record.parts, crate::sequential::Combine::Main(2)),
        criterion: CRITERION.into(),
        measured,
    }
}

/// What a server operator should pick: the mark's effect on RPM and on
/// goodput in every (path, queue, congestion control), in words. A cell
/// costs goodput when its runs with the mark and without are apart (their
/// intervals share no value) and the mark's median is over 5 % lower: a
/// trace-driven path's goodput spreads too widely for its medians alone
/// to say. A recommendation needs the mark's part of the criterion
/// (`mark`, its self probes) confirmed and more than one cell.
pub fn advice(plan: &Plan, runs: &[Run], mark: Option<crate::sequential::State>) -> String {
    let (mut better, mut total, mut costly) = (0, 0, Vec::new());
    let (mut rpm_x, mut gp_x) = (Vec::new(), Vec::new());
    for p in &plan.paths {
        for q in &plan.queues {
            for cc in ["cubic", "bbr"] {
                let arm = |lowat| super::Arm { lowat, cc }.label();
                let off = cell_runs(runs, &p.name, q.label, &arm(Lowat::Off));
                let on = cell_runs(runs, &p.name, q.label, &arm(Lowat::Adaptive));
                if off.is_empty() || on.is_empty() {
                    continue;
                }
                let r = ratio(&on, &off, |r| r.rpm).median;
                let g = ratio(&on, &off, |r| r.goodput_mbit).median;
                if !(r.is_finite() && g.is_finite()) {
                    continue;
                }
                total += 1;
                better += usize::from(r > 1.0);
                rpm_x.push(r);
                gp_x.push(g);
                let (g_on, g_off) = (
                    Estimate::of(&values(&on, |r| r.goodput_mbit)),
                    Estimate::of(&values(&off, |r| r.goodput_mbit)),
                );
                let apart = match (g_on.interval, g_off.interval) {
                    (Some(a), Some(b)) => a.apart(&b),
                    // One run each: the medians alone decide.
                    _ => true,
                };
                if apart && g_on.median < 0.95 * g_off.median {
                    costly.push(format!("{}, {}, {cc}", p.name, q.label));
                }
            }
        }
    }
    if total < 2 {
        return format!(
            "No advice: {total} cell(s) with and without the mark ran, too few to advise from."
        );
    }
    rpm_x.sort_by(f64::total_cmp);
    gp_x.sort_by(f64::total_cmp);
    let med = |v: &[f64]| tcpwise_units::nearest_rank(v, 0.5);
    let confirmed = mark == Some(crate::sequential::State::Holds);
    let pick = match (better * 2 > total, costly.is_empty()) {
        _ if !confirmed => format!(
            "no advice, since the criterion's part on the mark (its self probes under FQ-CoDel) was {}",
            match mark {
                Some(crate::sequential::State::Fails) => "refuted",
                Some(_) => "not decided",
                None => "not measured",
            }
        ),
        (true, true) => "**set `--notsent-lowat auto`** (tcpwise serve's default)".to_string(),
        (true, false) => format!(
            "set `--notsent-lowat auto`, except where it cost goodput beyond its runs' spread ({})",
            costly.join("; ")
        ),
        (false, _) => "leave `TCP_NOTSENT_LOWAT` off: it did not raise RPM in most cells".into(),
    };
    format!(
        "TCP_NOTSENT_LOWAT auto at the server raised RPM in {better} of {total} cells (path, queue, congestion control; median x{:.2} over off, from x{:.2} to x{:.2}) at a goodput of x{:.3} (from x{:.3} to x{:.3}; {} cell(s) lower by over 5 % beyond the runs' spread): {pick}. The network's queue decides the foreign probes; the mark only shortens what waits in the server's own buffers, so it helps most where the network's queue is already short (FQ-CoDel), and nothing replaces a short network queue for a new connection.",
        med(&rpm_x),
        rpm_x[0],
        rpm_x[rpm_x.len() - 1],
        med(&gp_x),
        gp_x[0],
        gp_x[gp_x.len() - 1],
        costly.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Outcome;

    /// The decision the driver would make from rounds of (RPM ratio,
    /// self-probe ratio, goodput ratio).
    fn record(rounds: &[[f64; 3]]) -> crate::sequential::Record {
        use crate::sequential::{Record, Stop};
        let v: Vec<Vec<f64>> = rounds.iter().map(|r| r.to_vec()).collect();
        Record {
            secs: 100.0,
            ..Record::of_rounds(super::super::parts(), &v, Stop::Decided)
        }
    }

    #[test]
    fn the_verdict_needs_three_times_the_rpm_the_goodput_and_shorter_self_probes() {
        let e = |v: &[f64]| Estimate::of(v);
        let (x, g, q, l) = (e(&[3.5]), e(&[1.0]), e(&[1.8]), e(&[0.3]));
        let ok = verdict(&record(&[[3.5, 0.3, 1.0]; 7]), &x, &g, &q, &l);
        assert_eq!(ok.outcome, Outcome::Reproduced, "{ok:?}");
        assert!(ok.measured.contains("x3.50"), "{}", ok.measured);
        assert!(
            ok.measured.contains("decided after 7 rounds"),
            "{}",
            ok.measured
        );
        let slow = verdict(&record(&[[3.5, 0.3, 0.8]; 7]), &x, &g, &q, &l);
        assert_eq!(slow.outcome, Outcome::Differs);
        let no = verdict(&record(&[[1.8, 0.3, 1.0]; 7]), &x, &g, &q, &l);
        assert_eq!(no.outcome, Outcome::NotReproduced);
        let longer = verdict(&record(&[[3.5, 1.2, 1.0]; 7]), &x, &g, &q, &l);
        assert_eq!(longer.outcome, Outcome::NotReproduced);
        let short = verdict(&record(&[[3.5, 0.3, 1.0]; 3]), &x, &g, &q, &l);
        assert_eq!(short.outcome, Outcome::Undecided);
    }

    fn run(plan: &Plan, q: usize, lowat: Lowat, round: usize, rpm: f64, mbit: f64) -> Run {
        Run {
            path: plan.paths[0].name.clone(),
            queue: plan.queues[q].label.into(),
            arm: super::super::Arm { lowat, cc: "cubic" }.label(),
            round,
            rpm,
            rpm_p90: rpm,
            foreign_ms: 50.0,
            self_ms: 60000.0 / rpm,
            idle_ms: 40.0,
            idle_tcp_min_ms: 40.0,
            goodput_mbit: mbit,
            flows: 5,
            stable: true,
            duration_s: 10.0,
            rounds: 100,
            steal_ticks: Some(0),
            per_second: Vec::new(),
        }
    }

    #[test]
    fn the_advice_counts_a_goodput_cost_only_beyond_the_runs_spread() {
        let opts = crate::LabOptions::for_tests(true, Some(3));
        let plan = Plan::new(&opts).unwrap();
        let cells = |fq_on_mbit: [f64; 3]| {
            let mut v = Vec::new();
            for (i, on) in fq_on_mbit.into_iter().enumerate() {
                v.push(run(&plan, BLOATED, Lowat::Off, i + 1, 100.0, 18.4));
                v.push(run(&plan, BLOATED, Lowat::Adaptive, i + 1, 200.0, 18.4));
                v.push(run(
                    &plan,
                    FQ_CODEL,
                    Lowat::Off,
                    i + 1,
                    100.0,
                    18.0 + i as f64,
                ));
                v.push(run(&plan, FQ_CODEL, Lowat::Adaptive, i + 1, 340.0, on));
            }
            v
        };
        // Lower at the median but within the spread: no cost.
        use crate::sequential::State;
        let a = advice(&plan, &cells([17.5, 18.5, 19.5]), Some(State::Holds));
        assert!(a.contains("in 2 of 2 cells"), "{a}");
        assert!(a.contains("**set `--notsent-lowat auto`**"), "{a}");
        // The mark's part undecided or refuted: no recommendation.
        let a = advice(&plan, &cells([17.5, 18.5, 19.5]), Some(State::Undecided));
        assert!(
            a.contains("no advice") && !a.contains("set `--notsent"),
            "{a}"
        );
        // Lower by over 5 % and apart: named.
        let a = advice(&plan, &cells([14.0, 14.5, 15.0]), Some(State::Holds));
        assert!(a.contains("except where it cost goodput"), "{a}");
        assert!(a.contains("FQ-CoDel, cubic"), "{a}");
        let r = analyse(
            &plan,
            &cells([18.0, 18.5, 19.0]),
            &record(&[[3.4, 0.3, 1.0]; 7]),
        );
        assert_eq!(r.verdict.outcome, Outcome::Reproduced, "{:?}", r.verdict);
        assert!((r.fixed_over_bloated.median - 3.4).abs() < 1e-9);
    }
}
