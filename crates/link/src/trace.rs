//! Mahimahi-format capacity traces.
//!
//! A trace file has one integer per line: a millisecond timestamp at which
//! the link may deliver one 1500-byte packet's worth of bytes (a *delivery
//! opportunity*). Repeated timestamps mean several opportunities in that
//! millisecond; timestamps never decrease. When the trace ends it repeats
//! with a period equal to its last timestamp, exactly as Mahimahi's
//! `mm-link` does, unless the link is told to play it once.
//!
//! Bytes are accounted across opportunities (Mahimahi's semantics): a
//! packet smaller than 1500 bytes leaves the rest of the opportunity to the
//! packets queued behind it, a larger one spans opportunities, and credit
//! that no queued packet can use is lost.

use std::path::Path;
use thiserror::Error;

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// Why a trace could not be read.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("cannot read trace {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A line is not a non-negative integer.
    #[error(
        "trace {path} line {line}: '{text}' is not a millisecond timestamp (one integer per line, Mahimahi format)"
    )]
    NotANumber {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The offending text.
        text: String,
    },
    /// A timestamp is smaller than the one before it.
    #[error(
        "trace {path} line {line}: timestamp {value} is smaller than the previous one ({prev}); timestamps must not decrease"
    )]
    Decreasing {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// This timestamp.
        value: u64,
        /// The previous one.
        prev: u64,
    },
    /// Nothing usable in the file.
    #[error(
        "trace {path} is empty or lasts 0 ms; a trace needs at least one opportunity after time 0"
    )]
    Empty {
        /// The file.
        path: String,
    },
}

/// A parsed trace: sorted opportunity timestamps in ms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    ms: Vec<u64>,
    /// Where it came from, for reports.
    pub name: String,
}

impl Trace {
    /// Parses trace text; `name` is used in errors and reports.
    pub fn parse(text: &str, name: &str) -> Result<Trace, TraceError> {
        let mut ms = Vec::new();
        let mut prev = 0u64;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let value: u64 = line.parse().map_err(|_| TraceError::NotANumber {
                path: name.to_string(),
                line: i + 1,
                text: line.chars().take(40).collect(),
            })?;
            if value < prev {
                return Err(TraceError::Decreasing {
                    path: name.to_string(),
                    line: i + 1,
                    value,
                    prev,
                });
            }
            prev = value;
            ms.push(value);
        }
        if ms.last().copied().unwrap_or(0) == 0
            || ms.last().copied().unwrap_or(0) > u64::MAX / 4_000_000
        {
            return Err(TraceError::Empty {
                path: name.to_string(),
            });
        }
        Ok(Trace {
            ms,
            name: name.to_string(),
        })
    }

    /// Reads and parses a trace file.
    pub fn load(path: &Path) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
            path: name.clone(),
            source,
        })?;
        Trace::parse(&text, &name)
    }

    /// A trace of `per_ms` opportunities every millisecond for `len_ms` ms.
    pub fn constant(per_ms: usize, len_ms: u64) -> Trace {
        let ms = (1..=len_ms)
            .flat_map(|t| std::iter::repeat_n(t, per_ms))
            .collect();
        Trace {
            ms,
            name: format!("constant-{per_ms}-per-ms"),
        }
    }

    /// The repeat period in ms (the last timestamp).
    pub fn period_ms(&self) -> u64 {
        *self.ms.last().expect("parse guarantees a non-empty trace")
    }

    /// Number of opportunities in one period.
    pub fn opportunities(&self) -> usize {
        self.ms.len()
    }

    /// Mean capacity in bit/s over one period.
    pub fn mean_rate_bps(&self) -> f64 {
        self.ms.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0 * 1000.0 / self.period_ms() as f64
    }

    pub(crate) fn ms_at(&self, idx: usize) -> u64 {
        self.ms[idx]
    }

    /// Opportunities at `ms` milliseconds after the start, over repeats
    /// (an opportunity at the period's end falls on the next cycle's 0).
    pub fn count_at(&self, ms: u64) -> usize {
        let p = self.period_ms();
        let count =
            |v: u64| self.ms.partition_point(|&t| t <= v) - self.ms.partition_point(|&t| t < v);
        let (c, m) = (ms / p, ms % p);
        count(m) + if m == 0 && c > 0 { count(p) } else { 0 }
    }

    /// Index of the first opportunity with timestamp >= `ms` within a
    /// period, or `None` if there is none in this period.
    pub(crate) fn first_at_or_after(&self, ms: u64) -> Option<usize> {
        let i = self.ms.partition_point(|&t| t < ms);
        (i < self.ms.len()).then_some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let t = Trace::parse("0\n0\n1\n\n2\n", "t").unwrap();
        assert_eq!(t.opportunities(), 4);
        assert_eq!(t.period_ms(), 2);
        assert!(matches!(
            Trace::parse("1\nx\n", "t"),
            Err(TraceError::NotANumber { line: 2, .. })
        ));
        assert!(matches!(
            Trace::parse("5\n3\n", "t"),
            Err(TraceError::Decreasing { line: 2, .. })
        ));
        assert!(matches!(
            Trace::parse("", "t"),
            Err(TraceError::Empty { .. })
        ));
        assert!(matches!(
            Trace::parse("0\n0\n", "t"),
            Err(TraceError::Empty { .. })
        ));
        assert!(matches!(
            Trace::parse("-1\n", "t"),
            Err(TraceError::NotANumber { .. })
        ));
    }

    #[test]
    fn constant_trace_rate() {
        let t = Trace::constant(1, 1000);
        assert_eq!(t.period_ms(), 1000);
        assert!((t.mean_rate_bps() - 12e6).abs() < 1.0);
    }

    #[test]
    fn real_traces_parse_when_present() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        if !dir.exists() {
            eprintln!("skipping: {} is absent", dir.display());
            return;
        }
        let t = Trace::load(&dir.join("ATT-LTE-driving-2016.down")).unwrap();
        // The README gives 4.6 Mbit/s for this trace.
        assert!(
            (t.mean_rate_bps() / 1e6 - 4.6).abs() < 0.2,
            "{}",
            t.mean_rate_bps()
        );
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(s in "\\PC{0,200}") {
            let _ = Trace::parse(&s, "fuzz");
        }
    }
}
