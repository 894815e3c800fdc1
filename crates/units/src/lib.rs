//! # tcpwise-units: units as people write them
//!
//! `100ms`, `20mbit`, `256KB`, `1000pkt`, `1%`: one set of rules for every
//! crate and every flag. The newtypes ([`Dur`], [`Seconds`], [`Bytes`],
//! [`Rate`], [`Fraction`]) implement `FromStr`, so clap takes them
//! directly and a flag can never grow a parser of its own.
//!
//! Why our own parser: the CLI, the lab and trace tooling all take the same
//! spellings, and the error has to say what *was* accepted so a user can fix
//! the flag without opening the docs. Conventions follow `tc` and iperf3 where
//! they agree and refuse where they disagree (`mbps` is megabits in iperf3 and
//! megabytes in `tc`, so we ask the user to spell it out).
//!
//! The rules, once:
//! - durations need a unit (`ns`, `us`, `ms`, `s`, `min`, `h`), except `0`;
//!   [`Seconds`] also takes a bare number as seconds, for the flags that
//!   mirror iperf3's `-t` and curl's `-m`;
//! - sizes are bytes; `KB`/`MB`/`GB` decimal, `KiB`/`MiB`/`GiB` binary;
//! - rates are bits per second, `kbit`/`mbit`/`gbit` decimal, or bytes per
//!   second as `KB/s`/`MB/s`; `mbps` is refused as ambiguous;
//! - probabilities are `1%` or `0.01`; where netem's and Mahimahi's words
//!   are taken (`emu`), [`Percent`] refuses a bare number other than `0`
//!   (netem reads `loss 1` as 1 %, Mahimahi's `mm-loss` as 100 %).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Nanoseconds on a monotonic clock: the one time type of every sans-IO core.
pub type Nanos = u64;
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

const DURATION: &str = "a duration such as 100ms, 1.5s, 250us, 800ns, 2min, 1h or 0";

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
        "h" => 3600e9,
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

/// Parses a probability as `emu` takes it, where netem's and Mahimahi's
/// readings of a bare number differ (netem's `loss 1` is 1 %, Mahimahi's
/// `mm-loss uplink 1` is 100 %): `1%`, or a bare `0`; any other bare
/// number is refused with both readings.
pub fn parse_percent(input: &str) -> Result<f64, UnitError> {
    let (v, unit) = split(input, PERCENT)?;
    if unit.is_empty() && v != 0.0 {
        return Err(UnitError::Range {
            input: input.to_string(),
            why: "a bare number is a percentage to netem (loss 1 = 1%) and a fraction to Mahimahi (mm-loss 1 = 100%): write the percent sign, 1% or 100%",
        });
    }
    parse_fraction(input).map_err(|e| match e {
        UnitError::BadUnit { unit, input, .. } => UnitError::BadUnit {
            unit,
            input,
            expected: PERCENT,
        },
        other => other,
    })
}

const PERCENT: &str = "a percentage such as 1%, 0.5% or 100%";

macro_rules! newtype {
    ($(#[$m:meta])* $name:ident($inner:ty), $parse:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl FromStr for $name {
            type Err = UnitError;
            fn from_str(s: &str) -> Result<Self, UnitError> {
                $parse(s).map($name)
            }
        }
    };
}

newtype!(
    /// A duration that needs a unit (`100ms`, `1.5s`; a bare `0` is fine).
    Dur(Nanos),
    parse_duration
);
newtype!(
    /// A duration where a bare number means seconds (iperf3's `-t 10`,
    /// curl's `-m 2.5`); units work too (`500ms`).
    Seconds(Nanos),
    parse_seconds
);
newtype!(
    /// A byte count (`278775`, `64KB`, `256KiB`).
    Bytes(u64),
    parse_size
);
newtype!(
    /// A rate in bits per second (`20mbit`, `2.5MB/s`).
    Rate(u64),
    parse_rate
);
newtype!(
    /// A probability (`1%`, `0.01`).
    Fraction(f64),
    parse_fraction
);
newtype!(
    /// A probability with its percent sign (`1%`; a bare `0`): netem's
    /// and Mahimahi's words, which read a bare number differently.
    Percent(f64),
    parse_percent
);

impl Dur {
    /// As a `std` duration.
    pub fn std(self) -> Duration {
        Duration::from_nanos(self.0)
    }
}

impl Seconds {
    /// As a `std` duration.
    pub fn std(self) -> Duration {
        Duration::from_nanos(self.0)
    }
}

/// Writes nanoseconds the way a user would type them: `100ms`, `1.5s`, `250us`.
pub fn fmt_nanos(ns: Nanos) -> String {
    if ns == 0 {
        return "0".into();
    }
    // The largest unit that writes it exactly with at most three decimals.
    for (scale, unit) in [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns >= scale && ns.is_multiple_of(scale / 1000) {
            return format!("{}{unit}", trim(ns as f64 / scale as f64));
        }
    }
    format!("{ns}ns")
}

/// Writes a byte count as a user would type it: `32KiB`, `64KB`, `1500`.
pub fn fmt_bytes(b: u64) -> String {
    for (scale, unit) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= scale && b.is_multiple_of(scale) {
            return format!("{}{unit}", b / scale);
        }
    }
    for (scale, unit) in [(1_000_000_000u64, "GB"), (1_000_000, "MB"), (1_000, "KB")] {
        if b >= scale && b.is_multiple_of(scale) {
            return format!("{}{unit}", b / scale);
        }
    }
    b.to_string()
}

/// Writes bits per second as a user would type them: `20mbit`, `1.5gbit`.
pub fn fmt_rate(bps: u64) -> String {
    let (v, unit) = match bps {
        b if b >= 1_000_000_000 => (b as f64 / 1e9, "gbit"),
        b if b >= 1_000_000 => (b as f64 / 1e6, "mbit"),
        b if b >= 1_000 => (b as f64 / 1e3, "kbit"),
        b => (b as f64, "bit"),
    };
    format!("{}{unit}", trim(v))
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_nanos(self.0))
    }
}
impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_nanos(self.0))
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_bytes(self.0))
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_rate(self.0))
    }
}
impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", trim(self.0 * 100.0))
    }
}

/// Parses a duration where a bare number is seconds (`10`, `2.5`), as
/// iperf3's `-t` and curl's `-m` take it; with a unit, as [`parse_duration`].
pub fn parse_seconds(input: &str) -> Result<Nanos, UnitError> {
    match input.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => {
            if v > 86_400.0 * 365.0 {
                return Err(UnitError::Range {
                    input: input.to_string(),
                    why: "at most a year",
                });
            }
            Ok((v * 1e9).round() as Nanos)
        }
        Ok(_) => Err(UnitError::BadNumber {
            input: input.to_string(),
            expected: DURATION,
        }),
        Err(_) => parse_duration(input),
    }
}

/// The nearest-rank `p`-quantile (`p` from 0 to 1) of an ascending
/// slice: the smallest value with at least `p` of the values at or below
/// it (NaN for an empty slice). One definition for every percentile the
/// lab, the emulator's selftest and the examples print.
pub fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[nearest_rank_index(sorted.len(), p)]
}

/// The index [`nearest_rank`] reads in an ascending slice of `n > 0`.
pub fn nearest_rank_index(n: usize, p: f64) -> usize {
    ((p * n as f64).ceil() as usize).clamp(1, n) - 1
}

/// splitmix64 (Steele, Lea and Flood): a seeded, replayable stream of
/// 64-bit values, the one every replayable choice (request mixes, trial
/// arms, object sizes) draws from. Not for anything secret.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next value as a uniform `f64` in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
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
        assert_eq!(parse_duration("1h").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_seconds("2.5").unwrap(), 2_500_000_000);
        assert_eq!(parse_seconds("500ms").unwrap(), 500_000_000);
        assert!(parse_seconds("-1").is_err());
        assert_eq!("100ms".parse::<Dur>().unwrap(), Dur(100_000_000));
    }

    #[test]
    fn written_as_typed() {
        assert_eq!(fmt_nanos(100_000_000), "100ms");
        assert_eq!(fmt_nanos(1_500_000_000), "1.5s");
        assert_eq!(fmt_bytes(32 * 1024), "32KiB");
        assert_eq!(fmt_bytes(64_000), "64KB");
        assert_eq!(fmt_bytes(278_775), "278775");
        assert_eq!(fmt_rate(151_000_000), "151mbit");
        for s in ["100ms", "1.5s", "250us", "20mbit", "32KiB", "278775"] {
            let again = |t: &str| -> String {
                if let Ok(d) = t.parse::<Dur>() {
                    d.to_string()
                } else if let Ok(r) = t.parse::<Rate>() {
                    r.to_string()
                } else {
                    t.parse::<Bytes>().unwrap().to_string()
                }
            };
            assert_eq!(again(s), s, "round trip");
        }
    }

    #[test]
    fn nearest_rank_and_splitmix() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(nearest_rank(&v, 0.5), 5.0);
        assert_eq!(nearest_rank(&v, 0.9), 9.0);
        assert_eq!(nearest_rank(&v, 0.99), 10.0);
        assert_eq!(nearest_rank(&v, 0.0), 1.0);
        assert!(nearest_rank(&[], 0.5).is_nan());
        // splitmix64's published first output for seed 0.
        assert_eq!(SplitMix64(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = SplitMix64(7);
        assert!((0..1000).map(|_| r.unit()).all(|u| (0.0..1.0).contains(&u)));
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
        assert_eq!(parse_percent("25%").unwrap(), 0.25);
        assert_eq!(parse_percent("0").unwrap(), 0.0);
        // netem's 1 % and Mahimahi's 100 %: refused, with both spellings.
        let e = parse_percent("1").unwrap_err().to_string();
        assert!(e.contains("1%") && e.contains("100%"), "{e}");
        assert!(parse_percent("0.25").is_err());
        assert!(parse_fraction("150%").is_err());
        assert!(parse_fraction("-1%").is_err());
    }
}
