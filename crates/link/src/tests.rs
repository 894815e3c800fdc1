//! Virtual-time tests of the link model.

use super::*;
use proptest::prelude::*;

const MS: Nanos = 1_000_000;

fn rate_link(bps: u64, delay: Nanos, queue: QueueLimit) -> Link<u32> {
    Link::new(
        LinkConfig {
            delay,
            capacity: Capacity::Rate {
                bits_per_sec: bps,
                overhead: 0,
            },
            queue,
            ..LinkConfig::default()
        },
        0,
    )
}

/// Drains everything, returning (deadline, item) pairs in order.
fn drain<T>(link: &mut Link<T>) -> Vec<(Nanos, T)> {
    let mut out = Vec::new();
    while let Some(d) = link.next_deadline() {
        let (t, item) = link.dequeue(d).expect("due at its deadline");
        assert_eq!(t, d);
        out.push((t, item));
    }
    out
}

#[test]
fn serialisation_is_exact() {
    // 10 Mbit/s: a 1500-byte packet takes exactly 1.2 ms.
    let mut l = rate_link(10_000_000, 5 * MS, QueueLimit::Packets(1000));
    for i in 0..100 {
        l.enqueue(0, 1500, i).unwrap();
    }
    let out = drain(&mut l);
    for (k, (t, i)) in out.iter().enumerate() {
        assert_eq!(*i as usize, k);
        assert_eq!(*t, (k as u64 + 1) * 1_200_000 + 5 * MS);
    }
}

#[test]
fn rounding_does_not_accumulate() {
    // 151 Mbit/s: 1500 B = 79470.198... ns. After 100 000 packets the
    // departure must equal ceil(total bits / rate), not 100 000 rounded steps.
    let mut l = rate_link(151_000_000, 0, QueueLimit::Packets(200_000));
    let n = 100_000u64;
    for i in 0..n {
        l.enqueue(0, 1500, i as u32).unwrap();
    }
    let last = drain(&mut l).last().unwrap().0;
    let exact = (u128::from(n * 1500 * 8) * 1_000_000_000).div_ceil(151_000_000) as u64;
    assert_eq!(last, exact);
}

#[test]
fn idle_link_restarts_serialisation_at_arrival() {
    let mut l = rate_link(8_000_000, 0, QueueLimit::Packets(10));
    l.enqueue(0, 1000, 0).unwrap(); // 1 ms
    l.enqueue(10 * MS, 1000, 1).unwrap(); // idle gap, leaves at 11 ms
    let out = drain(&mut l);
    assert_eq!(out[0].0, MS);
    assert_eq!(out[1].0, 11 * MS);
}

#[test]
fn overhead_counts_in_serialisation() {
    let mut l: Link<u8> = Link::new(
        LinkConfig {
            capacity: Capacity::Rate {
                bits_per_sec: 8_000_000,
                overhead: 500,
            },
            ..LinkConfig::default()
        },
        0,
    );
    l.enqueue(0, 500, 0).unwrap();
    assert_eq!(l.next_deadline(), Some(MS));
}

#[test]
fn drop_tail_in_bytes_and_packets() {
    let mut l = rate_link(10_000_000, 0, QueueLimit::Bytes(64_000));
    let admitted = (0..100).filter(|&i| l.enqueue(0, 1500, i).is_ok()).count();
    // One goes straight to the serialiser (it has left the queue, as in a
    // Linux qdisc or Mahimahi); 42 * 1500 = 63 000 <= 64 000 < 64 500 wait.
    assert_eq!(admitted, 43);
    assert_eq!(l.stats().dropped_queue, 57);
    assert_eq!(l.stats().peak_queue_bytes, 63_000);
    // After one packet time the head has left and one more fits.
    assert!(l.enqueue(1_200_000, 1500, 100).is_ok());
    assert!(l.enqueue(1_200_000, 1500, 101).is_err());

    let mut p = rate_link(10_000_000, 0, QueueLimit::Packets(5));
    let admitted = (0..10).filter(|&i| p.enqueue(0, 64, i).is_ok()).count();
    assert_eq!(admitted, 6);
    let e = p.enqueue(0, 64, 99).unwrap_err();
    assert_eq!(e.cause, DropCause::Queue);
    assert_eq!(e.item, 99);
}

#[test]
fn queue_delay_is_bounded_by_limit_over_rate() {
    // The queue check: no packet waits longer than limit/rate
    // (plus the one being serialised when it arrived).
    let limit = 64_000u64;
    let mut l: Link<Nanos> = Link::new(
        LinkConfig {
            capacity: Capacity::Rate {
                bits_per_sec: 10_000_000,
                overhead: 0,
            },
            queue: QueueLimit::Bytes(limit),
            ..LinkConfig::default()
        },
        0,
    );
    for i in 0..10_000u64 {
        // Offered at 24 Mbit/s, 2.4x the rate, so the queue stays full.
        let _ = l.enqueue(i * 500_000, 1500, i * 500_000);
    }
    let out = drain(&mut l);
    assert!(l.stats().dropped_queue > 5000);
    let bound = (limit + 1500) * 8 * 1_000_000_000 / 10_000_000; // 52.4 ms
    let worst = out.iter().map(|(t, sent)| t - sent).max().unwrap();
    assert!(worst <= bound, "{worst} > {bound}");
    assert!(worst > bound - 2_400_000, "the queue really fills: {worst}");
}

#[test]
fn pure_delay() {
    let mut l: Link<u8> = Link::new(
        LinkConfig {
            delay: 50 * MS,
            ..LinkConfig::default()
        },
        0,
    );
    l.enqueue(7, 100, 1).unwrap();
    assert_eq!(l.next_deadline(), Some(50 * MS + 7));
    assert!(l.dequeue(50 * MS + 6).is_none());
    assert_eq!(l.dequeue(50 * MS + 7), Some((50 * MS + 7, 1)));
}

fn trace_link(text: &str, once: bool) -> Link<u32> {
    Link::new(
        LinkConfig {
            capacity: Capacity::Trace {
                trace: Arc::new(Trace::parse(text, "t").unwrap()),
                once,
            },
            queue: QueueLimit::Packets(1000),
            ..LinkConfig::default()
        },
        0,
    )
}

#[test]
fn trace_bytes_are_accounted_across_opportunities() {
    let mut l = trace_link("1\n2\n3\n4\n", false);
    // Three 500-byte packets share the 1 ms opportunity.
    for i in 0..3 {
        l.enqueue(0, 500, i).unwrap();
    }
    // 1000 + 1000: the first takes 1000 of the 2 ms opportunity, the second
    // 500 of it and 500 of the 3 ms one.
    l.enqueue(0, 1000, 3).unwrap();
    l.enqueue(0, 1000, 4).unwrap();
    let times: Vec<Nanos> = drain(&mut l).iter().map(|x| x.0).collect();
    assert_eq!(times, vec![MS, MS, MS, 2 * MS, 3 * MS]);
}

#[test]
fn trace_unused_credit_is_lost() {
    let mut l = trace_link("1\n2\n3\n4\n", false);
    l.enqueue(0, 500, 0).unwrap(); // uses 500 of the 1 ms opportunity
    // Arrives after the 1 ms opportunity passed: its leftover 1000 bytes
    // are gone, so it waits for 2 ms.
    l.enqueue(MS + MS / 2, 500, 1).unwrap();
    let times: Vec<Nanos> = drain(&mut l).iter().map(|x| x.0).collect();
    assert_eq!(times, vec![MS, 2 * MS]);
    // A long idle period skips ahead (and wraps: period 4 ms).
    l.enqueue(9 * MS + 1, 1500, 2).unwrap();
    assert_eq!(l.next_deadline(), Some(10 * MS));
}

#[test]
fn trace_wraps_or_plays_once() {
    let mut l = trace_link("1\n2\n", false);
    for i in 0..4 {
        l.enqueue(0, 1500, i).unwrap();
    }
    let times: Vec<Nanos> = drain(&mut l).iter().map(|x| x.0).collect();
    assert_eq!(times, vec![MS, 2 * MS, 3 * MS, 4 * MS]);

    let mut once = trace_link("1\n2\n", true);
    for i in 0..4 {
        once.enqueue(0, 1500, i).unwrap();
    }
    assert_eq!(drain(&mut once).len(), 2);
    assert_eq!(once.next_deadline(), None, "nothing leaves after the trace");
    assert_eq!(once.queued(100 * MS), (3000, 2));
}

#[test]
fn trace_mean_rate_over_time() {
    // One opportunity per ms for 10 s: 12 Mbit/s of IP bytes.
    let mut l: Link<()> = Link::new(
        LinkConfig {
            capacity: Capacity::Trace {
                trace: Arc::new(Trace::constant(1, 1000)),
                once: false,
            },
            queue: QueueLimit::Packets(100_000),
            ..LinkConfig::default()
        },
        0,
    );
    for _ in 0..10_000 {
        l.enqueue(0, 1500, ()).unwrap();
    }
    let last = drain(&mut l).last().unwrap().0;
    assert_eq!(last, 10_000 * MS);
}

fn binomial_ok(n: u64, k: u64, p: f64) -> bool {
    // 99.9 % two-sided normal-approximation interval.
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    (k as f64 - mean).abs() <= 3.29 * sd
}

#[test]
fn bernoulli_loss_fraction_within_binomial_bound() {
    for seed in 1..=5 {
        let mut l: Link<()> = Link::new(
            LinkConfig {
                loss: LossModel::Bernoulli { p: 0.01 },
                seed,
                ..LinkConfig::default()
            },
            0,
        );
        let n = 100_000;
        for i in 0..n {
            let _ = l.enqueue(i, 100, ());
        }
        let k = l.stats().dropped_loss;
        assert!(binomial_ok(n, k, 0.01), "seed {seed}: {k} of {n}");
        assert_eq!(l.stats().dropped_queue, 0);
    }
}

fn run_with_seed(seed: u64) -> Vec<(Nanos, u32)> {
    let mut l: Link<u32> = Link::new(
        LinkConfig {
            delay: 20 * MS,
            jitter: Some(Jitter::normal(3 * MS)),
            capacity: Capacity::Rate {
                bits_per_sec: 20_000_000,
                overhead: 0,
            },
            queue: QueueLimit::Bytes(100_000),
            loss: LossModel::Bernoulli { p: 0.05 },
            seed,
            ..LinkConfig::default()
        },
        0,
    );
    for i in 0..2000u32 {
        let _ = l.enqueue(u64::from(i) * 300_000, 1500, i);
    }
    drain(&mut l)
}

#[test]
fn same_seed_same_run() {
    assert_eq!(run_with_seed(42), run_with_seed(42));
    assert_ne!(run_with_seed(42), run_with_seed(43));
}

#[test]
fn jitter_never_reorders() {
    for jitter in [Jitter::uniform(10 * MS), Jitter::normal(10 * MS)] {
        let mut l: Link<u32> = Link::new(
            LinkConfig {
                delay: 20 * MS,
                jitter: Some(jitter),
                ..LinkConfig::default()
            },
            0,
        );
        for i in 0..5000u32 {
            l.enqueue(u64::from(i) * MS, 100, i).unwrap();
        }
        let out = drain(&mut l);
        assert_eq!(out.len(), 5000);
        let mut spread = 0;
        for w in out.windows(2) {
            assert!(w[0].1 < w[1].1 && w[0].0 <= w[1].0);
        }
        for (t, i) in &out {
            let sent = u64::from(*i) * MS;
            assert!(*t >= sent);
            spread = spread.max(t - sent);
        }
        assert!(spread > 25 * MS, "jitter has an effect: {spread}");
    }
}

#[test]
fn default_queue_is_one_bdp_at_least_64kb() {
    assert_eq!(
        QueueLimit::default_for(Some(50e6), 100 * MS),
        QueueLimit::Bytes(625_000)
    );
    assert_eq!(
        QueueLimit::default_for(Some(1e6), 10 * MS),
        QueueLimit::Bytes(MIN_DEFAULT_QUEUE_BYTES)
    );
    assert_eq!(
        "1000pkt".parse::<QueueLimit>().unwrap(),
        QueueLimit::Packets(1000)
    );
    assert_eq!(
        "256KB".parse::<QueueLimit>().unwrap(),
        QueueLimit::Bytes(256_000)
    );
    assert!("0pkt".parse::<QueueLimit>().is_err());
    assert!("10".parse::<QueueLimit>().is_err());
}

proptest! {
    /// Arbitrary arrivals and polls: FIFO, never early, the queue limit
    /// holds, and every offered packet is accounted for.
    #[test]
    fn invariants_hold(
        events in prop::collection::vec((0u64..3_000_000, 40u32..1500, any::<bool>()), 1..400),
        bps in 100_000u64..1_000_000_000,
        delay in 0u64..50_000_000,
        limit in 1500u64..200_000,
        loss in 0.0f64..0.3,
    ) {
        let mut l: Link<(u64, Nanos)> = Link::new(LinkConfig {
            delay,
            capacity: Capacity::Rate { bits_per_sec: bps, overhead: 0 },
            queue: QueueLimit::Bytes(limit),
            loss: LossModel::Bernoulli { p: loss },
            ..LinkConfig::default()
        }, 0);
        let mut now = 0;
        let mut seq = 0;
        let mut out = Vec::new();
        let mut dropped = 0;
        for (gap, size, poll) in events {
            now += gap;
            if poll {
                while let Some(x) = l.dequeue(now) { out.push((now, x)); }
            }
            if l.enqueue(now, size, (seq, now)).is_err() { dropped += 1; }
            seq += 1;
            // Waiting bytes within the limit, plus the packet in service.
            prop_assert!(l.queued(now).0 <= limit + 1500);
        }
        while let Some(d) = l.next_deadline() {
            let x = l.dequeue(d).unwrap();
            out.push((d, x));
        }
        prop_assert_eq!(out.len() as u64 + dropped, seq);
        for w in out.windows(2) {
            prop_assert!(w[0].1.1.0 < w[1].1.1.0);
        }
        for (_, (deadline, (_, sent))) in &out {
            prop_assert!(*deadline >= sent + delay);
        }
    }
}

#[test]
fn an_outage_drops_what_arrives_in_its_window_and_delivers_what_left_before() {
    use crate::outage::{Outage, Outages};
    let o: Outage = "1s@2s".parse().unwrap();
    let start = 5_000 * MS;
    let mut l: Link<u32> = Link::new(
        LinkConfig {
            delay: 50 * MS,
            outages: Outages::for_direction(&[o], true),
            ..LinkConfig::default()
        },
        start,
    );
    let mut delivered = Vec::new();
    // One packet every 100 ms for 4 s of link time.
    for i in 0..40u32 {
        let now = start + u64::from(i) * 100 * MS;
        let r = l.enqueue(now, 1500, i);
        let in_window = (20..30).contains(&i);
        assert_eq!(r.is_err(), in_window, "packet {i}");
        if let Err(d) = r {
            assert_eq!(d.cause, DropCause::Outage);
        }
        while let Some((_, p)) = l.dequeue(now + 60 * MS) {
            delivered.push(p);
        }
    }
    assert_eq!(l.stats().dropped_outage, 10);
    assert_eq!(delivered.len(), 30);
    // A packet that entered just before the window still arrives inside it.
    assert!(delivered.contains(&19));
}

#[test]
fn a_schedule_changes_the_rate_at_its_offset() {
    use crate::schedule::Schedule;
    let sched = Schedule::parse("1s rate=10mbit\n3s rate=50mbit delay=30ms\n").unwrap();
    let start = 7 * MS;
    let mut l: Link<Nanos> = Link::new(
        LinkConfig {
            delay: 10 * MS,
            capacity: Capacity::Rate {
                bits_per_sec: 50_000_000,
                overhead: 0,
            },
            queue: QueueLimit::Bytes(10_000_000),
            schedule: sched.down,
            ..LinkConfig::default()
        },
        start,
    );
    // Offered at 60 Mbit/s for 4 s: the link is always busy.
    let mut out = Vec::new();
    for i in 0..20_000u64 {
        let now = start + i * 200_000;
        let _ = l.enqueue(now, 1500, now);
        while let Some((t, sent)) = l.dequeue(now) {
            out.push((t - start, sent));
        }
    }
    let bytes_between = |a: u64, b: u64| {
        out.iter()
            .filter(|(t, _)| (a * MS..b * MS).contains(t))
            .count() as f64
            * 1500.0
            * 8.0
            / ((b - a) as f64 / 1e3)
    };
    let (before, during) = (bytes_between(200, 900), bytes_between(1_200, 2_900));
    assert!((before - 50e6).abs() < 0.5e6, "{before}");
    assert!((during - 10e6).abs() < 0.2e6, "{during}");
    let applied = &l.stats().schedule_applied;
    assert_eq!(applied.len(), 2);
    assert_eq!((applied[0].line, applied[0].at_ns), (1, 1_000 * MS));
    // Applied by the first call at or after its offset (here every 0.2 ms).
    assert!(applied.iter().all(|a| a.late_ns <= 200_000), "{applied:?}");
    // The forwarder is woken for it.
    let mut idle: Link<u8> = Link::new(
        LinkConfig {
            schedule: Schedule::parse("2s delay=5ms\n").unwrap().up,
            ..LinkConfig::default()
        },
        0,
    );
    assert_eq!(idle.next_deadline(), Some(2_000 * MS));
    assert!(idle.dequeue(2_000 * MS).is_none());
    assert_eq!(idle.stats().schedule_applied[0].late_ns, 0);
    assert_eq!(idle.next_deadline(), None);
}

#[test]
fn sojourn_and_bytes_per_second_are_on_the_link_clock() {
    // 10 Mbit/s = 1250 bytes per ms: ten packets at once wait 0..9 ms.
    let mut l = rate_link(10_000_000, 5 * MS, QueueLimit::Bytes(1_000_000));
    for i in 0..10 {
        l.enqueue(0, 1250, i).unwrap();
    }
    // And one more in the next second.
    l.enqueue(1500 * MS, 1250, 10).unwrap();
    let out = drain(&mut l);
    assert_eq!(out.len(), 11);
    let r = l.report();
    assert_eq!(r.sojourn.samples, 11);
    // Two significant digits (and a little): 9 ms reads as 9.0xx ms.
    assert!(
        (9_000..=9_100).contains(&r.sojourn.max_us),
        "{:?}",
        r.sojourn
    );
    assert!(
        (4_000..=5_000).contains(&r.sojourn.p50_us),
        "{:?}",
        r.sojourn
    );
    assert_eq!(r.delivered_bytes_per_s, vec![12_500, 1_250]);
    // stats() leaves the percentiles to report().
    assert_eq!(l.stats().sojourn, Sojourn::default());
}

#[test]
fn trace_default_queue_is_two_seconds_of_the_mean_rate() {
    assert_eq!(
        QueueLimit::default_for_trace(12e6),
        QueueLimit::Bytes(3_000_000)
    );
    assert_eq!(
        QueueLimit::default_for_trace(1e6),
        QueueLimit::Bytes(TRACE_MIN_DEFAULT_QUEUE_BYTES)
    );
}

#[test]
fn capacity_is_reported_per_millisecond() {
    // 12 Mbit/s = 1500 bytes per ms; 10 Mbit/s carries 1250 exactly; an
    // odd rate carries its fraction so the sum stays exact.
    for (bps, per_ms) in [(12_000_000u64, 1500u64), (10_000_000, 1250)] {
        let mut l = rate_link(bps, 0, QueueLimit::Bytes(100_000));
        let mut out = Vec::new();
        l.capacity_until(10 * MS + 1, &mut out);
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|&(_, b)| b == per_ms), "{out:?}");
        assert_eq!(out[9].0, 9);
        l.capacity_until(10 * MS + 5, &mut out);
        assert_eq!(out.len(), 10, "nothing twice");
    }
    let mut l = rate_link(1_000_001, 0, QueueLimit::Bytes(100_000));
    let mut out = Vec::new();
    l.capacity_until(8_000 * MS, &mut out);
    let total: u64 = out.iter().map(|x| x.1).sum();
    assert_eq!(total, 1_000_001, "8 s of 1,000,001 bit/s");
    // A trace: opportunities at 1, 1, 3 ms of a 3 ms period repeat, and
    // the period's end falls on the next cycle's 0.
    let t = Trace::parse("1\n1\n3\n", "t").unwrap();
    let cfg = LinkConfig {
        capacity: Capacity::Trace {
            trace: Arc::new(t),
            once: false,
        },
        ..LinkConfig::default()
    };
    let mut l: Link<u32> = Link::new(cfg, 0);
    let mut out = Vec::new();
    l.capacity_until(7 * MS, &mut out);
    assert_eq!(out, vec![(1, 3000), (3, 1500), (4, 3000), (6, 1500)]);
}

#[test]
fn peak_rate_is_the_highest_a_direction_is_ever_set_to() {
    let unlimited = LinkConfig::default();
    assert_eq!(unlimited.peak_bps(), None);
    let mut cfg = LinkConfig {
        capacity: Capacity::Rate {
            bits_per_sec: 16_000_000,
            overhead: 0,
        },
        ..LinkConfig::default()
    };
    assert_eq!(cfg.peak_bps(), Some(16e6));
    // A schedule that speeds the link up later counts; one that slows it
    // down does not lower the peak.
    let step = |at, r| schedule::Step {
        at,
        line: 1,
        changes: vec![schedule::Change::Delay(MS), schedule::Change::Rate(r)],
    };
    cfg.schedule = vec![step(MS, 1_000_000), step(2 * MS, 300_000_000)];
    assert_eq!(cfg.peak_bps(), Some(300e6));
    cfg.schedule = vec![step(MS, 1_000_000)];
    assert_eq!(cfg.peak_bps(), Some(16e6));
}
