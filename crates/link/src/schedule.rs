//! Parameters that change over time: `--schedule FILE` with lines
//! `AT key=value...` (`0s rate=50mbit`, `5s rate=5mbit delay=80ms
//! loss=1%`, `12s down-rate=20mbit`), each applied at its offset from the
//! link's start, on the link's own clock, so a handover, a rate drop or a
//! delay spike replays exactly. Keys: `rate`, `delay` (one-way), `loss`,
//! each also as `up-KEY` / `down-KEY` for one direction. Parsing is
//! all-or-nothing: a bad line is one error naming its line and column.

use crate::{LossModel, Nanos};
use tcpwise_units::{parse_duration, parse_rate};

/// One change to one direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Serialisation rate, bits per second.
    Rate(u64),
    /// One-way delay.
    Delay(Nanos),
    /// Random loss.
    Loss(LossModel),
}

/// The changes of one direction at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Offset from the link's start.
    pub at: Nanos,
    /// Line of the schedule file (for the statistics).
    pub line: usize,
    /// What changes.
    pub changes: Vec<Change>,
}

/// A parsed schedule: the steps of each direction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schedule {
    /// Client to server.
    pub up: Vec<Step>,
    /// Server to client.
    pub down: Vec<Step>,
}

/// Why a schedule is refused: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {why}")]
pub struct ScheduleError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub why: String,
}

impl Schedule {
    /// Parses a schedule file's text.
    pub fn parse(text: &str) -> Result<Schedule, ScheduleError> {
        let mut s = Schedule::default();
        let mut last: Option<Nanos> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.split('#').next().unwrap_or("");
            // Each word with its 1-based column.
            let base = content.as_ptr() as usize;
            let mut words = content
                .split_whitespace()
                .map(|w| (w.as_ptr() as usize - base + 1, w));
            let Some((col, at)) = words.next() else {
                continue;
            };
            let err = |column: usize, why: String| ScheduleError { line, column, why };
            let at = parse_duration(at).map_err(|e| err(col, e.to_string()))?;
            if last.is_some_and(|l| at < l) {
                return Err(err(col, "times must not go backwards".into()));
            }
            last = Some(at);
            let (mut up, mut down) = (Vec::new(), Vec::new());
            let mut any = false;
            for (col, w) in words {
                any = true;
                let (k, v) = w
                    .split_once('=')
                    .ok_or_else(|| err(col, format!("'{w}' is not key=value")))?;
                let (dirs, key) = match k.split_once('-') {
                    Some(("up", key)) => ((true, false), key),
                    Some(("down", key)) => ((false, true), key),
                    _ => ((true, true), k),
                };
                let vcol = col + k.len() + 1;
                let change = match key {
                    "rate" => Change::Rate(parse_rate(v).map_err(|e| err(vcol, e.to_string()))?),
                    "delay" => {
                        Change::Delay(parse_duration(v).map_err(|e| err(vcol, e.to_string()))?)
                    }
                    "loss" => Change::Loss(
                        v.parse()
                            .map_err(|e: tcpwise_units::UnitError| err(vcol, e.to_string()))?,
                    ),
                    _ => {
                        return Err(err(
                            col,
                            format!(
                                "unknown key '{k}' (rate, delay, loss, each also up-KEY or down-KEY)"
                            ),
                        ));
                    }
                };
                if matches!(change, Change::Rate(0)) {
                    return Err(err(vcol, "a rate must be more than 0".into()));
                }
                if dirs.0 {
                    up.push(change);
                }
                if dirs.1 {
                    down.push(change);
                }
            }
            if !any {
                return Err(err(col, "a time needs at least one key=value".into()));
            }
            if !up.is_empty() {
                s.up.push(Step {
                    at,
                    line,
                    changes: up,
                });
            }
            if !down.is_empty() {
                s.down.push(Step {
                    at,
                    line,
                    changes: down,
                });
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    #[test]
    fn parses_and_refuses_with_line_and_column() {
        let s = Schedule::parse(
            "# rate drop\n0s rate=50mbit\n\n4s rate=10mbit delay=40ms  # then\n12s down-loss=1%\n",
        )
        .unwrap();
        assert_eq!(s.up.len(), 2);
        assert_eq!(s.down.len(), 3);
        assert_eq!(s.up[1].at, 4 * S);
        assert_eq!(s.up[1].line, 4);
        assert_eq!(
            s.up[1].changes,
            vec![Change::Rate(10_000_000), Change::Delay(40_000_000)]
        );
        assert_eq!(
            s.down[2].changes,
            vec![Change::Loss(LossModel::Bernoulli { p: 0.01 })]
        );
        let e = Schedule::parse("1s rate=5mbit\n0s rate=1mbit\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        let e = Schedule::parse("1s rate=5mbit speed=3\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 15));
        let e = Schedule::parse("1s rate=5mbps\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 9), "{e}");
        assert!(Schedule::parse("banana rate=1mbit\n").is_err());
        assert!(Schedule::parse("1s\n").is_err());
        assert!(Schedule::parse("1s rate=0mbit\n").is_err());
    }
}
