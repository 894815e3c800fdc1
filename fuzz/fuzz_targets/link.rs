//! The link model under arbitrary configurations and arbitrary sequences of
//! arrivals and departures: it never panics, never hands a packet out
//! before its deadline, never reorders, and every packet offered is either
//! dropped, delivered or still inside, under every queue discipline (one
//! flow, so even FQ-CoDel keeps the order).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tcpwise_link::{Capacity, Jitter, Link, LinkConfig, LossModel, QueueLimit};

#[derive(Debug, Arbitrary)]
enum Op {
    /// A packet of this size arrives after `gap` ns.
    Send { gap: u16, size: u16 },
    /// Time passes by `gap` µs and everything due leaves.
    Drain { gap: u16 },
}

#[derive(Debug, Arbitrary)]
struct Case {
    delay_us: u32,
    jitter_us: u16,
    /// Jitter distribution: uniform, normal, pareto, paretonormal.
    dist: u8,
    /// Correlation of jitter (and of loss, when odd), percent.
    corr_percent: u8,
    rate_kbit: u32,
    overhead: u8,
    queue: u32,
    packets: bool,
    loss_permille: u16,
    /// Queue discipline: droptail, drophead, codel, pie, fq-codel.
    kind: u8,
    seed: u64,
    ops: Vec<Op>,
}

fuzz_target!(|c: Case| {
    let cfg = LinkConfig {
        delay: u64::from(c.delay_us) * 1000,
        jitter: (c.jitter_us > 0).then(|| {
            let j = u64::from(c.jitter_us) * 1000;
            use tcpwise_link::jitter::Dist;
            Jitter {
                dist: [
                    Dist::Uniform,
                    Dist::Normal,
                    Dist::Pareto,
                    Dist::ParetoNormal,
                ][usize::from(c.dist % 4)],
                amount: j,
                correlation: f64::from(c.corr_percent % 100) / 100.0,
            }
        }),
        capacity: if c.rate_kbit == 0 {
            Capacity::Unlimited
        } else {
            Capacity::Rate {
                bits_per_sec: u64::from(c.rate_kbit) * 1000,
                overhead: u32::from(c.overhead),
            }
        },
        queue: if c.packets {
            QueueLimit::Packets(u64::from(c.queue % 10_000))
        } else {
            QueueLimit::Bytes(u64::from(c.queue))
        },
        loss: if c.loss_permille == 0 {
            LossModel::None
        } else if c.corr_percent % 2 == 0 {
            LossModel::Bernoulli {
                p: f64::from(c.loss_permille % 1001) / 1000.0,
            }
        } else {
            LossModel::Correlated {
                p: f64::from(c.loss_permille % 1001) / 1000.0,
                rho: f64::from(c.corr_percent % 100) / 100.0,
            }
        },
        seed: c.seed,
        qdisc: ["droptail", "drophead", "codel", "pie", "fq-codel"][usize::from(c.kind % 5)]
            .parse()
            .expect("a kind"),
        ..LinkConfig::default()
    };
    let mut link: Link<u64> = Link::new(cfg, 0);
    let (mut now, mut next_id, mut dropped) = (0u64, 0u64, 0u64);
    let mut last: Option<u64> = None;
    let mut delivered = 0u64;
    let check = |now: u64, link: &mut Link<u64>, last: &mut Option<u64>, delivered: &mut u64| {
        while let Some((deadline, id)) = link.dequeue(now) {
            assert!(
                deadline <= now,
                "out at {now} before its deadline {deadline}"
            );
            assert!(
                last.is_none_or(|l| id > l),
                "reordered: {id} after {last:?}"
            );
            *last = Some(id);
            *delivered += 1;
        }
    };
    for op in c.ops {
        match op {
            Op::Send { gap, size } => {
                now += u64::from(gap);
                let size = u32::from(size).clamp(1, 65_535);
                if link.enqueue(now, size, next_id).is_err() {
                    dropped += 1;
                }
                // Drop-head and the AQMs drop packets already queued.
                dropped += link.drain_dropped().count() as u64;
                next_id += 1;
            }
            Op::Drain { gap } => {
                now += u64::from(gap) * 1000;
                check(now, &mut link, &mut last, &mut delivered);
                dropped += link.drain_dropped().count() as u64;
            }
        }
    }
    // Run out the clock: everything admitted leaves.
    while let Some(d) = link.next_deadline() {
        now = now.max(d);
        check(now, &mut link, &mut last, &mut delivered);
        dropped += link.drain_dropped().count() as u64;
    }
    assert_eq!(dropped + delivered, next_id, "packets lost inside the link");
});
