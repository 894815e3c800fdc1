//! netem's per-packet coin flips: `reorder` (the packet skips the delay
//! line, so it overtakes the ones ahead of it: netem's meaning, which needs
//! a delay to show), `duplicate` (it is delivered twice) and `corrupt` (a
//! random bit after the IP header is flipped, so the receiving kernel's
//! checksum drops it). Independent draws per packet, from the link's RNG.

use super::{Impairment, Verdict};
use crate::Nanos;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Probabilities, each from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Params {
    /// Share of packets that skip the delay.
    pub reorder: f64,
    /// Share delivered twice.
    pub duplicate: f64,
    /// Share with a bit flipped.
    pub corrupt: f64,
}

impl Params {
    /// No effect at all.
    pub fn is_none(&self) -> bool {
        self.reorder == 0.0 && self.duplicate == 0.0 && self.corrupt == 0.0
    }
}

/// The coin flips.
pub struct Netem {
    p: Params,
}

impl Netem {
    /// With probabilities `p`.
    pub fn new(p: Params) -> Netem {
        Netem { p }
    }
}

impl Impairment for Netem {
    fn arrive(&mut self, _now: Nanos, _size: u32, rng: &mut ChaCha8Rng) -> Verdict {
        let mut flip = |p: f64| p > 0.0 && rng.random::<f64>() < p;
        let reorder = flip(self.p.reorder);
        let duplicate = flip(self.p.duplicate);
        let corrupt = flip(self.p.corrupt).then(|| rng.random::<u32>());
        Verdict {
            drop: None,
            reorder,
            duplicate,
            corrupt,
        }
    }
}
