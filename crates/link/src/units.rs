//! Units as people write them: `100ms`, `20mbit`, `256KB`, `1000pkt`, `1%`.
//!
//! Why our own parser: the CLI, the lab and trace tooling all take the same
//! spellings, and the error has to say what *was* accepted so a user can fix
//! the flag without opening the docs. Conventions follow `tc` and iperf3 where
//! they agree and refuse where they disagree (`mbps` is megabits in iperf3 and
//! megabytes in `tc`, so we ask the user to spell it out).

use crate::Nanos;
use thiserror::Error;

/// A value that could not be parsed; the message says what is accepted.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    /// Empty input.
    #[error("empty value: expected {expected}")]
    Empty {
        /// What would have been accepted.
        expected: &'static str,
    },
    /// The number part is not a number, or is negative.
    #[error("'{input}' is not a non-negative number with a unit: expected {expected}")]
    BadNumber {
        /// The whole input.
        input: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// The unit is unknown.
    #[error("unknown unit '{unit}' in '{input}': expected {expected}")]
    BadUnit {
        /// The unit as written.
        unit: String,
        /// The whole input.
        input: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// The unit means different things to different tools.
    #[error("'{input}' is ambiguous ({why}): write {suggest}")]
    Ambiguous {
        /// The whole input.
        input: String,
        /// Why it is ambiguous.
        why: &'static str,
        /// What to write instead.
        suggest: &'static str,
    },
    /// A value outside the range that makes sense.
    #[error("'{input}' is out of range: {why}")]
    Range {
        /// The whole input.
        input: String,
        /// The allowed range.
        why: &'static str,
    },
}

fn split(input: &str, expected: &'static str) -> Result<(f64, String), UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty { expected });
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let value: f64 = num.parse().map_err(|_| UnitError::BadNumber {
        input: input.to_string(),
        expected,
    })?;
    if !value.is_finite() {
        return Err(UnitError::BadNumber {
            input: input.to_string(),
            expected,
        });
    }
    Ok((value, unit.trim().to_string()))
}

const DURATION: &str = "a duration such as 100ms, 1.5s, 250us, 800ns or 0";

/// Parses a duration into nanoseconds. A bare `0` is accepted; any other bare
/// number is refused because people disagree on whether it is ms or s.
pub fn parse_duration(input: &str) -> Result<Nanos, UnitError> {
    let (v, unit) = split(input, DURATION)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" if v == 0.0 => 1.0,
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "" => {
            return Err(UnitError::Ambiguous {
                input: input.to_string(),
                why: "no unit",
                suggest: "for example 100ms or 1s",
            });
        }
        _ => {
            return Err(UnitError::BadUnit {
                unit,
                input: input.to_string(),
                expected: DURATION,
            });
        }
    };
    let ns = v * scale;
    if ns > 1e9 * 86_400.0 * 365.0 {
        return Err(UnitError::Range {
            input: input.to_string(),
            why: "at most a year",
        });
    }
    Ok(ns.round() as Nanos)
}

const RATE: &str = "a rate such as 20mbit, 1.5gbit, 500kbit, 100Mbit/s or 2.5MB/s";

/// Parses a bit rate into bits per second. `kbit`/`mbit`/`gbit` and `…bit/s`
/// are decimal (as in `tc` and iperf3); `KB/s`, `MB/s` are decimal bytes.
pub fn parse_rate(input: &str) -> Result<u64, UnitError> {
    let (v, unit) = split(input, RATE)?;
    let u = unit.replace("/s", "").replace("ps", "PS");
    let bits = match u.as_str() {
        "bit" | "b" => 1.0,
        "kbit" | "Kbit" | "kb" | "Kb" => 1e3,
        "mbit" | "Mbit" | "Mb" => 1e6,
        "gbit" | "Gbit" | "Gb" => 1e9,
        "B" | "Bps" => 8.0,
        "KB" | "kB" => 8e3,
        "MB" => 8e6,
        "GB" => 8e9,
        "mbPS" | "MbPS" | "MBPS" | "kbPS" | "KbPS" | "gbPS" | "GbPS" | "KBPS" | "GBPS" => {
            return Err(UnitError::Ambiguous {
                input: input.to_string(),
                why: "tc reads 'mbps' as megabytes per second, iperf3 as megabits",
                suggest: "20mbit for megabits or 2.5MB/s for megabytes",
            });
        }
        "" => {
            return Err(UnitError::Ambiguous {
                input: input.to_string(),
                why: "no unit",
                suggest: "for example 20mbit",
            });
        }
        _ => {
            return Err(UnitError::BadUnit {
                unit,
                input: input.to_string(),
                expected: RATE,
            });
        }
    };
    let bps = (v * bits).round();
    if !(1000.0..=1e12).contains(&bps) {
        return Err(UnitError::Range {
            input: input.to_string(),
            why: "between 1kbit and 1000gbit",
        });
    }
    Ok(bps as u64)
}

const SIZE: &str = "a size such as 278775, 64KB, 256KiB, 4MB or 1MiB";

/// Parses a byte count. `KB`/`MB`/`GB` are decimal, `KiB`/`MiB`/`GiB`
/// binary; a bare number is bytes.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let (v, unit) = split(input, SIZE)?;
    let scale = match unit.as_str() {
        "" | "B" | "b" => 1.0,
        "K" | "k" | "KB" | "kB" | "kb" => 1e3,
        "M" | "MB" | "mb" => 1e6,
        "G" | "GB" | "gb" => 1e9,
        "KiB" | "Ki" | "kib" => 1024.0,
        "MiB" | "Mi" | "mib" => 1024.0 * 1024.0,
        "GiB" | "Gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(UnitError::BadUnit {
                unit,
                input: input.to_string(),
                expected: SIZE,
            });
        }
    };
    let bytes = v * scale;
    if bytes > 1e15 {
        return Err(UnitError::Range {
            input: input.to_string(),
            why: "at most 1 PB",
        });
    }
    Ok(bytes.round() as u64)
}

const FRACTION: &str = "a probability such as 1%, 0.5% or 0.01";

/// Parses a probability: `1%` or `0.01`.
pub fn parse_fraction(input: &str) -> Result<f64, UnitError> {
    let (v, unit) = split(input, FRACTION)?;
    let p = match unit.as_str() {
        "%" => v / 100.0,
        "" => v,
        _ => {
            return Err(UnitError::BadUnit {
                unit,
                input: input.to_string(),
                expected: FRACTION,
            });
        }
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(UnitError::Range {
            input: input.to_string(),
            why: "a probability lies between 0% and 100%",
        });
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("100ms").unwrap(), 100_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("250us").unwrap(), 250_000);
        assert_eq!(parse_duration("0").unwrap(), 0);
        assert_eq!(parse_duration(" 2 ms ").unwrap(), 2_000_000);
        assert!(matches!(
            parse_duration("100"),
            Err(UnitError::Ambiguous { .. })
        ));
        assert!(matches!(
            parse_duration("-5ms"),
            Err(UnitError::BadNumber { .. })
        ));
        assert!(matches!(
            parse_duration("5parsecs"),
            Err(UnitError::BadUnit { .. })
        ));
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("20mbit").unwrap(), 20_000_000);
        assert_eq!(parse_rate("151Mbit/s").unwrap(), 151_000_000);
        assert_eq!(parse_rate("1.5gbit").unwrap(), 1_500_000_000);
        assert_eq!(parse_rate("2.5MB/s").unwrap(), 20_000_000);
        assert!(matches!(
            parse_rate("20mbps"),
            Err(UnitError::Ambiguous { .. })
        ));
        assert!(matches!(parse_rate("20"), Err(UnitError::Ambiguous { .. })));
        assert!(matches!(parse_rate("0mbit"), Err(UnitError::Range { .. })));
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn sizes_and_fractions() {
        assert_eq!(parse_size("278775").unwrap(), 278_775);
        assert_eq!(parse_size("64KB").unwrap(), 64_000);
        assert_eq!(parse_size("256KiB").unwrap(), 262_144);
        assert_eq!(parse_size("1_000").unwrap(), 1000);
        assert!(parse_size("12 furlongs").is_err());
        assert_eq!(parse_fraction("1%").unwrap(), 0.01);
        assert_eq!(parse_fraction("0.25").unwrap(), 0.25);
        assert!(parse_fraction("150%").is_err());
        assert!(parse_fraction("-1%").is_err());
    }
}
