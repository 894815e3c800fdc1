//! Impairments: what happens to a packet as it enters the link, besides
//! the queue. Each is its own module behind one trait, [`Impairment`], and
//! draws from the link's seeded RNG, so a run repeats exactly:
//!
//! - [`onoff::OnOff`]: an intermittent link as `mm-onoff` (exponentially
//!   distributed on and off periods; arrivals while off are dropped);
//! - [`police::Police`]: an ISP's token-bucket policer (drops what exceeds
//!   RATE with BURST of credit; no queue);
//! - [`netem::Netem`]: netem's `reorder` (that share of packets skips the
//!   delay line and overtakes earlier ones), `duplicate` and `corrupt` (one
//!   random bit flipped after the IP header, so the receiver's checksum
//!   drops it).

pub mod netem;
pub mod onoff;
pub mod police;

use crate::Nanos;
use rand_chacha::ChaCha8Rng;

/// What an impairment decided for one arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verdict {
    /// Dropped: by the on/off process (`true`) or the policer.
    pub drop: Option<Dropper>,
    /// Skip the delay line.
    pub reorder: bool,
    /// Deliver twice.
    pub duplicate: bool,
    /// Flip a bit: this random number picks which one.
    pub corrupt: Option<u32>,
}

/// Which impairment dropped a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropper {
    /// The link was off.
    OnOff,
    /// Over the policed rate.
    Police,
}

impl Verdict {
    /// Combines two verdicts (a drop wins).
    pub fn and(self, o: Verdict) -> Verdict {
        Verdict {
            drop: self.drop.or(o.drop),
            reorder: self.reorder || o.reorder,
            duplicate: self.duplicate || o.duplicate,
            corrupt: self.corrupt.or(o.corrupt),
        }
    }
}

/// An impairment at the link's entrance.
pub trait Impairment: Send {
    /// A packet of `size` bytes arrives at `now`.
    fn arrive(&mut self, now: Nanos, size: u32, rng: &mut ChaCha8Rng) -> Verdict;
}

/// The impairments of one direction, as flags give them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Impairments {
    /// `--onoff MEAN_ON,MEAN_OFF`.
    pub onoff: Option<onoff::Params>,
    /// `--police RATE,BURST`.
    pub police: Option<police::Params>,
    /// `--reorder`, `--duplicate`, `--corrupt`.
    pub netem: netem::Params,
}

impl Impairments {
    /// Builds the configured ones, in the order a packet meets them.
    pub fn build(&self, start: Nanos) -> Vec<Box<dyn Impairment>> {
        let mut v: Vec<Box<dyn Impairment>> = Vec::new();
        if let Some(p) = self.onoff {
            v.push(Box::new(onoff::OnOff::new(p, start)));
        }
        if let Some(p) = self.police {
            v.push(Box::new(police::Police::new(p, start)));
        }
        if !self.netem.is_none() {
            v.push(Box::new(netem::Netem::new(self.netem)));
        }
        v
    }
}

#[cfg(test)]
mod tests;
