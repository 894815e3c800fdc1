//! A token-bucket policer, as an ISP's (tc's `police`): tokens accrue at
//! RATE up to BURST bytes; a packet that finds fewer tokens than its size
//! is dropped, never queued (which is what tells a policer from a shaper).

use super::{Dropper, Impairment, Verdict};
use crate::Nanos;
use rand_chacha::ChaCha8Rng;
use tcpwise_units::{UnitError, parse_rate, parse_size};

/// Rate and bucket depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Bits per second.
    pub rate_bps: u64,
    /// Bucket depth, bytes.
    pub burst: u64,
}

impl std::str::FromStr for Params {
    type Err = UnitError;

    /// `RATE,BURST`, e.g. `10mbit,64KB`.
    fn from_str(s: &str) -> Result<Params, UnitError> {
        let (r, b) = s.split_once(',').ok_or_else(|| UnitError::Range {
            input: s.to_string(),
            why: "--police takes RATE,BURST, e.g. 10mbit,64KB",
        })?;
        let (rate_bps, burst) = (parse_rate(r)?, parse_size(b)?);
        if rate_bps == 0 || burst < 1500 {
            return Err(UnitError::Range {
                input: s.to_string(),
                why: "a policer needs a positive rate and a burst of at least one 1500-byte packet",
            });
        }
        Ok(Params { rate_bps, burst })
    }
}

/// The bucket.
pub struct Police {
    p: Params,
    /// Tokens, in bits (so accrual never rounds away).
    bits: u128,
    at: Nanos,
}

impl Police {
    /// A full bucket at `start`.
    pub fn new(p: Params, start: Nanos) -> Police {
        Police {
            p,
            bits: u128::from(p.burst) * 8,
            at: start,
        }
    }
}

impl Impairment for Police {
    fn arrive(&mut self, now: Nanos, size: u32, _rng: &mut ChaCha8Rng) -> Verdict {
        let dt = now.saturating_sub(self.at);
        self.at = self.at.max(now);
        let cap = u128::from(self.p.burst) * 8;
        self.bits =
            (self.bits + u128::from(dt) * u128::from(self.p.rate_bps) / 1_000_000_000).min(cap);
        let need = u128::from(size) * 8;
        if self.bits >= need {
            self.bits -= need;
            Verdict::default()
        } else {
            Verdict {
                drop: Some(Dropper::Police),
                ..Verdict::default()
            }
        }
    }
}
