//! Outages: windows of time in which a direction is a blackhole, for link
//! flaps (`--outage 3s@10s`). Every packet offered during a window is
//! dropped at the link's entrance, as when a cable is pulled or a radio
//! loses its cell; packets already on the wire when it starts still arrive
//! (they left before the fault). Times count from the link's start (the
//! testbed's), on the caller's clock, like everything in this crate.

use tcpwise_units::{Nanos, UnitError, parse_duration};

/// Which directions an outage affects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Both (the default).
    #[default]
    Both,
    /// Client to server only.
    Up,
    /// Server to client only.
    Down,
}

/// One blackhole window: `len` from `at` after the link starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outage {
    /// Start, from the link's start.
    pub at: Nanos,
    /// Length.
    pub len: Nanos,
    /// Directions it affects.
    pub direction: Direction,
}

impl std::str::FromStr for Outage {
    type Err = UnitError;

    /// `DURATION@AT[:up|down]`, e.g. `3s@10s` or `500ms@2s:down`.
    fn from_str(s: &str) -> Result<Outage, UnitError> {
        let bad = |why: &'static str| UnitError::Range {
            input: s.to_string(),
            why,
        };
        let (spec, direction) = match s.rsplit_once(':') {
            Some((spec, "up")) => (spec, Direction::Up),
            Some((spec, "down")) => (spec, Direction::Down),
            Some((spec, "both")) => (spec, Direction::Both),
            Some(_) => return Err(bad("an outage is DURATION@AT, optionally :up or :down")),
            None => (s, Direction::Both),
        };
        let (len, at) = spec
            .split_once('@')
            .ok_or_else(|| bad("an outage is DURATION@AT, e.g. 3s@10s"))?;
        let (len, at) = (parse_duration(len)?, parse_duration(at)?);
        if len == 0 {
            return Err(bad("an outage lasts more than 0"));
        }
        at.checked_add(len)
            .ok_or_else(|| bad("the outage ends too far in the future"))?;
        Ok(Outage { at, len, direction })
    }
}

impl Outage {
    /// Whether it affects the direction `up` (client to server) or not.
    pub fn affects(&self, up: bool) -> bool {
        match self.direction {
            Direction::Both => true,
            Direction::Up => up,
            Direction::Down => !up,
        }
    }
}

/// The windows of one direction, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outages {
    windows: Vec<(Nanos, Nanos)>,
}

impl Outages {
    /// The windows of `outages` that affect direction `up`.
    pub fn for_direction(outages: &[Outage], up: bool) -> Outages {
        let mut windows: Vec<_> = outages
            .iter()
            .filter(|o| o.affects(up))
            .map(|o| (o.at, o.at + o.len))
            .collect();
        windows.sort_unstable();
        Outages { windows }
    }

    /// Whether `t` (from the link's start) falls in a window.
    pub fn blackholed(&self, t: Nanos) -> bool {
        // Few windows: a scan is cheaper than anything cleverer.
        self.windows.iter().any(|&(a, b)| (a..b).contains(&t))
    }

    /// Whether there are no windows.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    #[test]
    fn parses_and_windows() {
        let o: Outage = "3s@10s".parse().unwrap();
        assert_eq!((o.len, o.at, o.direction), (3 * S, 10 * S, Direction::Both));
        let d: Outage = "500ms@2s:down".parse().unwrap();
        assert_eq!(d.direction, Direction::Down);
        for bad in ["3s", "0s@1s", "3s@x", "3s@1s:sideways", "3@1s"] {
            assert!(bad.parse::<Outage>().is_err(), "{bad}");
        }
        let w = Outages::for_direction(&[o, d], true);
        assert!(!w.blackholed(10 * S - 1) && w.blackholed(10 * S) && w.blackholed(13 * S - 1));
        assert!(
            !w.blackholed(13 * S) && !w.blackholed(2 * S + 1),
            "the down window is not up's"
        );
        assert!(Outages::for_direction(&[o, d], false).blackholed(2 * S + 1));
    }
}
