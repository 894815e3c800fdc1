//! An intermittent link, as Mahimahi's `mm-onoff`: on and off periods
//! drawn from exponential distributions of the given means; a packet
//! arriving while the link is off is dropped (and counted), as `mm-onoff`
//! does. The same mechanism as `--outage`, stochastic instead of scheduled.

use super::{Dropper, Impairment, Verdict};
use crate::Nanos;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use tcpwise_units::{UnitError, parse_duration};

/// Mean on and off times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Mean length of an on period.
    pub mean_on: Nanos,
    /// Mean length of an off period.
    pub mean_off: Nanos,
}

impl std::str::FromStr for Params {
    type Err = UnitError;

    /// `MEAN_ON,MEAN_OFF`, e.g. `5s,500ms`.
    fn from_str(s: &str) -> Result<Params, UnitError> {
        let (on, off) = s.split_once(',').ok_or_else(|| UnitError::Range {
            input: s.to_string(),
            why: "--onoff takes MEAN_ON,MEAN_OFF, e.g. 5s,500ms",
        })?;
        let (mean_on, mean_off) = (parse_duration(on)?, parse_duration(off)?);
        if mean_on == 0 || mean_off == 0 {
            return Err(UnitError::Range {
                input: s.to_string(),
                why: "on and off means must be more than 0",
            });
        }
        Ok(Params { mean_on, mean_off })
    }
}

/// The on/off process.
pub struct OnOff {
    p: Params,
    on: bool,
    /// When the current period ends; drawn at the first arrival after start.
    until: Option<Nanos>,
    start: Nanos,
}

impl OnOff {
    /// Starts on, at `start`.
    pub fn new(p: Params, start: Nanos) -> OnOff {
        OnOff {
            p,
            on: true,
            until: None,
            start,
        }
    }

    fn draw(mean: Nanos, rng: &mut ChaCha8Rng) -> Nanos {
        let e = Exp::new(1.0 / mean as f64).expect("positive mean");
        (e.sample(rng) as Nanos).max(1)
    }
}

impl Impairment for OnOff {
    fn arrive(&mut self, now: Nanos, _size: u32, rng: &mut ChaCha8Rng) -> Verdict {
        let mut until = match self.until {
            Some(u) => u,
            None => self.start + OnOff::draw(self.p.mean_on, rng),
        };
        while now >= until {
            self.on = !self.on;
            until += OnOff::draw(
                if self.on {
                    self.p.mean_on
                } else {
                    self.p.mean_off
                },
                rng,
            );
        }
        self.until = Some(until);
        Verdict {
            drop: (!self.on).then_some(Dropper::OnOff),
            ..Verdict::default()
        }
    }
}
