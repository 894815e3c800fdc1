//! Every flag value parser we own: durations, rates, sizes, fractions,
//! queue limits, loss models, pool policies and read sizers. Any string
//! gives a value or an error, never a panic; what parses is in range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcpwise_link::{LossModel, QueueLimit};
use tcpwise_units::{parse_duration, parse_fraction, parse_rate, parse_size};

fuzz_target!(|s: &str| {
    let _ = parse_duration(s);
    let _ = parse_rate(s);
    let _ = parse_size(s);
    if let Ok(f) = parse_fraction(s) {
        assert!((0.0..=1.0).contains(&f), "fraction {f} from {s:?}");
    }
    let _ = s.parse::<QueueLimit>();
    let _ = s.parse::<LossModel>();
    let _ = s.parse::<tcpwise_link::Jitter>();
    let _ = s.parse::<tcpwise_pool::Policy>();
    let _ = s.parse::<tcpwise_tcp::ReadSizer>();
});
