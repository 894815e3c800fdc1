//! The cold-start figures (no I/O): each cell's median time to first byte
//! with its interval, in milliseconds and in round trips beside the
//! arm's floor, the fallbacks counted; the Happy Eyeballs rows; the
//! verdict on the 100 ms path.

use super::measure::{Details, Eyeball, Fetch};
use super::{Arm, Plan};
use crate::verdict::{Estimate, Outcome, Verdict};
use crate::{Figure, Summary};

/// One (path, arm, client) cell.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The path.
    pub path: String,
    /// Its RTT, ms.
    pub rtt_ms: f64,
    /// The arm.
    pub arm: Arm,
    /// `tcpwise`, `curl` or `openssl`.
    pub client: String,
    /// Time to first byte, ms.
    pub ttfb: Estimate,
    /// The median in round trips.
    pub rtts: f64,
    /// Fetches whose mechanism did not happen.
    pub fallbacks: usize,
    /// Fetches.
    pub n: usize,
    /// Steal over the cell's fetches, ticks.
    pub steal: u64,
}

/// One Happy Eyeballs row.
#[derive(Debug, Clone)]
pub struct Row {
    /// Its name.
    pub row: String,
    /// Time to first byte, ms.
    pub ttfb: Estimate,
    /// Fetches, and how many the IPv4 address won.
    pub n: usize,
    /// See `n`.
    pub v4_won: usize,
}

/// Everything the section shows.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The cells, by path, arm, client.
    pub cells: Vec<Cell>,
    /// The Happy Eyeballs rows.
    pub rows: Vec<Row>,
    /// The figures for `results.json`.
    pub summary: Summary,
    /// The verdict.
    pub verdict: Verdict,
}

/// How far a median may sit from its floor (the 10 ms; the
/// emulator's own error is under a millisecond here, shown per path).
pub const TOLERANCE_MS: f64 = 10.0;

/// The Happy Eyeballs bound: the attempt delay, two round trips (connect,
/// request) and 20 ms.
pub fn eyeballs_bound(rtt_ms: f64) -> f64 {
    tcpwise_http::ATTEMPT_DELAY.as_millis() as f64 + 2.0 * rtt_ms + 20.0
}

/// The figures of `fetches` and `eyeballs`.
pub fn analyse(plan: &Plan, d: &Details) -> Analysis {
    let mut cells = Vec::new();
    for p in &plan.paths {
        for arm in Arm::ALL {
            for client in ["tcpwise", "curl", "openssl"] {
                let f: Vec<&Fetch> = d
                    .fetches
                    .iter()
                    .filter(|f| f.path == p.name && f.arm == arm.label() && f.client == client)
                    .collect();
                if f.is_empty() {
                    continue;
                }
                let v: Vec<f64> = f.iter().map(|f| f.ttfb_ms).collect();
                let ttfb = Estimate::of(&v);
                cells.push(Cell {
                    path: p.name.clone(),
                    rtt_ms: p.rtt_ms,
                    arm,
                    client: client.into(),
                    rtts: ttfb.median / p.rtt_ms,
                    ttfb,
                    fallbacks: f.iter().filter(|f| f.fell_back).count(),
                    n: f.len(),
                    steal: f.iter().filter_map(|f| f.steal_ticks).sum(),
                });
            }
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut names: Vec<&str> = d.eyeballs.iter().map(|e| e.row.as_str()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let e: Vec<&Eyeball> = d.eyeballs.iter().filter(|e| e.row == name).collect();
        let v: Vec<f64> = e.iter().map(|e| e.ttfb_ms).collect();
        rows.push(Row {
            row: name.into(),
            ttfb: Estimate::of(&v),
            n: e.len(),
            // An IPv4 address, with or without its port, is the one with dots.
            v4_won: e.iter().filter(|e| e.winner.contains('.')).count(),
        });
    }
    let mut summary = Summary::new();
    for c in &cells {
        let key = format!(
            "{}ms.{}.{}",
            c.rtt_ms,
            format!("{:?}", c.arm).to_lowercase(),
            c.client
        );
        summary.insert(format!("{key}.ttfb_ms"), Figure::Num(c.ttfb.median));
        summary.insert(
            format!("{key}.fallbacks"),
            Figure::Count(c.fallbacks as u64),
        );
    }
    for r in &rows {
        summary.insert(
            format!("eyeballs.{}.ttfb_ms", r.row),
            Figure::Num(r.ttfb.median),
        );
    }
    let verdict = decide(plan, &cells, &rows);
    Analysis {
        cells,
        rows,
        summary,
        verdict,
    }
}

/// On the 100 ms path (or the only one): every tcpwise arm's median
/// within [`TOLERANCE_MS`] of its floor, no fallback, and the raced Happy
/// Eyeballs row within [`eyeballs_bound`].
fn decide(plan: &Plan, cells: &[Cell], rows: &[Row]) -> Verdict {
    let rtt = if plan.paths.iter().any(|p| p.rtt_ms == 100.0) {
        100.0
    } else {
        plan.paths.first().map_or(0.0, |p| p.rtt_ms)
    };
    let ours: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.rtt_ms == rtt && c.client == "tcpwise" && !c.path.contains("trace"))
        .collect();
    let mut measured: Vec<String> = ours
        .iter()
        .map(|c| {
            format!(
                "{} {:.1} ms = {:.2} RTT (floor {})",
                c.arm.label(),
                c.ttfb.median,
                c.rtts,
                c.arm.floor_rtts()
            )
        })
        .collect();
    let at_floor = ours.len() == Arm::ALL.len()
        && ours.iter().all(|c| {
            (c.ttfb.median - c.arm.floor_rtts() * rtt).abs() <= TOLERANCE_MS && c.fallbacks == 0
        });
    let raced = rows.iter().find(|r| r.row.starts_with("tcpwise, attempts"));
    let bound = eyeballs_bound(plan.eyeballs_rtt_ms);
    if let Some(r) = raced {
        measured.push(format!(
            "Happy Eyeballs past a blackholed IPv6 address {:.0} ms (bound {bound:.0} ms)",
            r.ttfb.median
        ));
    }
    let eyes = raced.is_some_and(|r| r.ttfb.median <= bound);
    let outcome = if ours.iter().any(|c| c.n < super::TRIALS) {
        Outcome::TooFewSamples
    } else if at_floor && eyes {
        Outcome::Reproduced
    } else {
        Outcome::NotReproduced
    };
    Verdict {
        outcome,
        criterion: format!(
            "on the {rtt} ms path every tcpwise arm's median time to first byte within {TOLERANCE_MS} ms of its floor (cold and resumed 3 RTT, 0-RTT 2, TFO + 0-RTT 1, warm 1) with no fallback, over at least {} fetches each; Happy Eyeballs past a blackholed IPv6 address within the attempt delay + 2 RTT + 20 ms",
            super::TRIALS
        ),
        measured: measured.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LabOptions;

    fn fetch(path: &str, arm: Arm, ttfb_ms: f64, fell_back: bool) -> Fetch {
        Fetch {
            path: path.into(),
            arm: arm.label().into(),
            client: "tcpwise".into(),
            trial: 1,
            ttfb_ms,
            fell_back,
            steal_ticks: Some(0),
        }
    }

    fn details(plan: &Plan, off: f64, fall: bool, raced_ms: f64) -> Details {
        let p = plan.paths.iter().find(|p| p.rtt_ms == 100.0).unwrap();
        let mut fetches = Vec::new();
        for arm in Arm::ALL {
            for i in 0..super::super::TRIALS {
                let jitter = i as f64 * 0.1;
                fetches.push(fetch(
                    &p.name,
                    arm,
                    arm.floor_rtts() * 100.0 + off + jitter,
                    fall && i == 0,
                ));
            }
        }
        let eyeballs = (0..20)
            .map(|_| Eyeball {
                row: "tcpwise, attempts 250 ms apart (RFC 8305)".into(),
                ttfb_ms: raced_ms,
                winner: "198.18.0.2:80".into(),
            })
            .collect();
        Details {
            fetches,
            eyeballs,
            paths: Vec::new(),
            curl: None,
            openssl: None,
        }
    }

    #[test]
    fn the_verdict_holds_at_the_floors_and_not_off_them_or_with_a_fallback() {
        let plan = Plan::new(&LabOptions::for_tests(false, None)).unwrap();
        let a = analyse(&plan, &details(&plan, 2.5, false, 335.0));
        assert_eq!(
            a.verdict.outcome,
            Outcome::Reproduced,
            "{}",
            a.verdict.measured
        );
        let c = a
            .cells
            .iter()
            .find(|c| c.rtt_ms == 100.0 && c.arm == Arm::ZeroRtt)
            .unwrap();
        assert!((c.rtts - 2.035).abs() < 0.01, "{}", c.rtts);
        assert_eq!(a.rows[0].v4_won, 20);
        // 15 ms above every floor, a fallback, or a slow race: not reproduced.
        for (off, fall, raced) in [
            (15.0, false, 335.0),
            (2.5, true, 335.0),
            (2.5, false, 400.0),
        ] {
            let a = analyse(&plan, &details(&plan, off, fall, raced));
            assert_eq!(
                a.verdict.outcome,
                Outcome::NotReproduced,
                "{off} {fall} {raced}"
            );
        }
        // --quick's three fetches a cell cannot decide.
        let quick = Plan::new(&LabOptions::for_tests(true, None)).unwrap();
        let mut d = details(&plan, 2.5, false, 335.0);
        d.fetches.retain(|f| f.trial == 1);
        d.fetches.truncate(5);
        assert_eq!(analyse(&quick, &d).verdict.outcome, Outcome::TooFewSamples);
    }
}
