//! The serialiser: when the link is free to start the next packet, at a
//! fixed rate (with per-packet overhead) or at a trace's delivery
//! opportunities (Mahimahi's format: one 1500-byte opportunity per line).

use super::*;

/// Serialiser state.
pub(super) enum Serializer {
    Unlimited,
    Rate {
        bps: u64,
        overhead: u32,
        /// Start of the current busy period and bits sent in it: departures
        /// are computed from these, so rounding never accumulates.
        busy_start: Nanos,
        busy_bits: u128,
        free_at: Nanos,
    },
    Trace {
        trace: Arc<Trace>,
        once: bool,
        start: Nanos,
        cycle: u64,
        idx: usize,
        credit: u32,
        exhausted: bool,
    },
}

impl Serializer {
    pub(super) fn new(c: &Capacity, start: Nanos) -> Serializer {
        match c {
            Capacity::Unlimited => Serializer::Unlimited,
            Capacity::Rate {
                bits_per_sec,
                overhead,
            } => Serializer::Rate {
                bps: *bits_per_sec,
                overhead: *overhead,
                busy_start: start,
                busy_bits: 0,
                free_at: start,
            },
            Capacity::Trace { trace, once } => Serializer::Trace {
                trace: trace.clone(),
                once: *once,
                start,
                cycle: 0,
                idx: 0,
                credit: trace::OPPORTUNITY_BYTES,
                exhausted: false,
            },
        }
    }

    /// When a packet of `size` bytes arriving at `now` has been fully
    /// serialised, given everything admitted before it.
    pub(super) fn departure(&mut self, now: Nanos, size: u32) -> Nanos {
        match self {
            Serializer::Unlimited => now,
            Serializer::Rate {
                bps,
                overhead,
                busy_start,
                busy_bits,
                free_at,
            } => {
                // A packet that starts the moment the last one ends
                // continues the busy period (no rounding per packet).
                if now > *free_at {
                    *busy_start = now;
                    *busy_bits = 0;
                }
                *busy_bits += u128::from(size + *overhead) * 8;
                let ns = (*busy_bits * 1_000_000_000).div_ceil(u128::from(*bps));
                *free_at = *busy_start + ns as Nanos;
                *free_at
            }
            Serializer::Trace {
                trace,
                once,
                start,
                cycle,
                idx,
                credit,
                exhausted,
            } => {
                if *exhausted {
                    return NEVER;
                }
                let period = trace.period_ms();
                let at = |cycle: u64, idx: usize| {
                    *start + (cycle * period + trace.ms_at(idx)) * 1_000_000
                };
                // Credit of an opportunity that passed before this packet
                // arrived is lost to it: skip to the first one at or after now.
                if at(*cycle, *idx) < now {
                    let rel_ms = (now - *start).div_ceil(1_000_000);
                    let c = rel_ms / period;
                    (*cycle, *idx) = match trace.first_at_or_after(rel_ms - c * period) {
                        Some(i) => (c, i),
                        None => (c + 1, 0),
                    };
                    *credit = trace::OPPORTUNITY_BYTES;
                }
                if *once && *cycle > 0 {
                    *exhausted = true;
                    return NEVER;
                }
                let mut remaining = size;
                loop {
                    let take = remaining.min(*credit);
                    remaining -= take;
                    *credit -= take;
                    let t = at(*cycle, *idx);
                    if *credit == 0 {
                        *idx += 1;
                        *credit = trace::OPPORTUNITY_BYTES;
                        if *idx == trace.opportunities() {
                            *idx = 0;
                            *cycle += 1;
                        }
                    }
                    if remaining == 0 {
                        return t;
                    }
                    if *once && *cycle > 0 {
                        *exhausted = true;
                        return NEVER;
                    }
                }
            }
        }
    }
}
