//! Each impairment's configured rate, measured through the link on virtual
//! time over many packets, inside the binomial 99.9 % interval.

use super::*;
use crate::{Capacity, Link, LinkConfig};

const MS: Nanos = 1_000_000;

fn link(imp: Impairments) -> Link<u32> {
    Link::new(
        LinkConfig {
            delay: 20 * MS,
            capacity: Capacity::Rate {
                bits_per_sec: 1_000_000_000,
                overhead: 0,
            },
            impairments: imp,
            seed: 7,
            ..LinkConfig::default()
        },
        0,
    )
}

/// The 99.9 % normal-approximation interval of a binomial share.
fn within(p: f64, k: u64, n: u64) -> bool {
    let sd = (p * (1.0 - p) / n as f64).sqrt();
    let m = k as f64 / n as f64;
    (m - p).abs() <= 3.29 * sd
}

#[test]
fn netem_shares_are_what_was_asked() {
    let n = 20_000u32;
    let mut l = link(Impairments {
        netem: netem::Params {
            reorder: 0.05,
            duplicate: 0.02,
            corrupt: 0.01,
        },
        ..Impairments::default()
    });
    let mut order = Vec::new();
    for i in 0..n {
        let now = u64::from(i) * 100_000; // 0.1 ms apart, less than the delay
        l.enqueue(now, 1500, i).unwrap();
        while let Some(d) = l.dequeue_full(now) {
            order.push(d.item);
        }
    }
    while let Some(t) = l.next_deadline() {
        while let Some(d) = l.dequeue_full(t) {
            order.push(d.item);
        }
    }
    let s = l.stats().clone();
    assert_eq!(order.len() as u32, n);
    assert!(within(0.05, s.reordered, n.into()), "{s:?}");
    assert!(within(0.02, s.duplicated, n.into()), "{s:?}");
    assert!(within(0.01, s.corrupted, n.into()), "{s:?}");
    // Reordered packets overtook earlier ones.
    let inversions = order.windows(2).filter(|w| w[1] < w[0]).count();
    assert!(inversions as u64 >= s.reordered / 2, "{inversions}");
}

#[test]
fn onoff_drops_the_off_share() {
    // Mean on 900 ms, off 100 ms: 10 % of the time off.
    let mut l = link(Impairments {
        onoff: Some("900ms,100ms".parse().unwrap()),
        ..Impairments::default()
    });
    let n = 200_000u64;
    for i in 0..n {
        let now = i * MS / 2; // 100 s of arrivals
        let _ = l.enqueue(now, 100, 0);
        while l.dequeue(now).is_some() {}
    }
    let share = l.stats().dropped_onoff as f64 / n as f64;
    // Periods are random: over 100 s (~100 cycles) the off share is 10 % give or take.
    assert!((0.05..0.16).contains(&share), "{share}");
    assert!("5s".parse::<onoff::Params>().is_err() && "0s,1s".parse::<onoff::Params>().is_err());
}

#[test]
fn the_policer_passes_its_rate_and_drops_the_rest() {
    // 10 Mbit/s with a 15 KB bucket, offered 20 Mbit/s for 10 s.
    let mut l = link(Impairments {
        police: Some("10mbit,15KB".parse().unwrap()),
        ..Impairments::default()
    });
    let gap = 600_000; // 1500 B every 0.6 ms = 20 Mbit/s
    let n = 10_000_000_000 / gap;
    for i in 0..n {
        let now = i * gap;
        let _ = l.enqueue(now, 1500, 0);
        while l.dequeue(now).is_some() {}
    }
    let passed = (n - l.stats().dropped_police) * 1500 * 8;
    let rate = passed as f64 / 10.0;
    assert!((rate - 10e6).abs() < 0.02e6, "{rate}");
    assert!("10mbit".parse::<police::Params>().is_err());
    assert!("10mbit,100".parse::<police::Params>().is_err());
}
