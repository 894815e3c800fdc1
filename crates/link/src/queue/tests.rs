//! The queue disciplines on virtual time: each against what its RFC says
//! it does, through the [`crate::Link`] that drives them.

use super::*;
use crate::{Capacity, Link, LinkConfig};

const MS: Nanos = 1_000_000;

fn link(spec: &str, rate_bps: u64, limit: QueueLimit) -> Link<u32> {
    Link::new(
        LinkConfig {
            delay: 10 * MS,
            capacity: Capacity::Rate {
                bits_per_sec: rate_bps,
                overhead: 0,
            },
            queue: limit,
            qdisc: spec.parse().unwrap(),
            ..LinkConfig::default()
        },
        0,
    )
}

/// Offers `pps` packets of 1500 B a second for `secs` (flow `flow` for
/// even ids, `flow + 1` for odd ones when `two_flows`), delivering as it
/// goes; returns (delivered, sojourn samples in ms of delivered packets).
fn overload(l: &mut Link<u32>, pps: u64, secs: u64, ecn: Ecn) -> (u64, Vec<f64>) {
    let gap = 1_000_000_000 / pps;
    let mut arrivals = std::collections::HashMap::new();
    let mut delivered = 0;
    let mut sojourn = Vec::new();
    for i in 0..pps * secs {
        let now = i * gap;
        arrivals.insert(i as u32, now);
        let _ = l.enqueue_flow(now, 1500, 7, ecn, i as u32);
        l.drain_dropped().for_each(drop);
        while let Some((d, id)) = l.dequeue(now) {
            delivered += 1;
            // Time in the link less the fixed 10 ms delay and 1.2 ms of
            // serialisation at 10 Mbit/s: the wait in the queue.
            sojourn.push((d - arrivals[&id]) as f64 / 1e6 - 10.0 - 1.2);
        }
    }
    (delivered, sojourn)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[test]
fn parses_kinds_options_and_refuses_what_a_kind_does_not_take() {
    let q: QueueSpec = "codel:target=2ms,interval=50ms,limit=400KB,ecn"
        .parse()
        .unwrap();
    assert_eq!(
        q.kind,
        Kind::Codel(codel::Params {
            target: 2 * MS,
            interval: 50 * MS
        })
    );
    assert!(q.ecn);
    assert_eq!(q.limit, Some(LimitSpec::Fixed(QueueLimit::Bytes(400_000))));
    let q: QueueSpec = "256KB".parse().unwrap();
    assert_eq!(
        (q.kind, q.limit),
        (
            Kind::DropTail,
            Some(LimitSpec::Fixed(QueueLimit::Bytes(256_000)))
        )
    );
    let q: QueueSpec = "fq-codel:flows=64,quantum=300,limit=2bdp".parse().unwrap();
    assert_eq!(q.limit, Some(LimitSpec::Bdp(2.0)));
    assert!(matches!(q.kind, Kind::FqCodel(p) if p.flows == 64 && p.quantum == 300));
    assert_eq!(
        "pie:tupdate=30ms".parse::<QueueSpec>().unwrap().name(),
        "pie"
    );
    assert_eq!(
        "drophead:limit=10pkt".parse::<QueueSpec>().unwrap().name(),
        "drophead"
    );
    for bad in [
        "red",
        "codel:tupdate=1ms",
        "pie:interval=1ms",
        "droptail:ecn",
        "codel:target=0ms",
        "codel:target=5",
        "fq-codel:flows=0",
        "codel:limit=-1bdp",
        "codel:limit=10",
        "1500",
        "droptail:limit=1500",
        "droptail:packets=100pkt",
        "droptail:bytes=",
    ] {
        assert!(bad.parse::<QueueSpec>().is_err(), "{bad}");
    }
}

/// Mahimahi's spellings mean what they mean to `mm-link`
/// (`--downlink-queue=droptail --downlink-queue-args=packets=100`), and a
/// bare number, bytes to tc and packets to Mahimahi, says both readings.
#[test]
fn mahimahi_queue_arguments_and_bare_numbers() {
    let p: QueueSpec = "droptail:packets=100".parse().unwrap();
    assert_eq!(p.limit, Some(LimitSpec::Fixed(QueueLimit::Packets(100))));
    let b: QueueSpec = "drophead:bytes=30000".parse().unwrap();
    assert_eq!(b.limit, Some(LimitSpec::Fixed(QueueLimit::Bytes(30_000))));
    let e = "1500".parse::<QueueSpec>().unwrap_err().to_string();
    assert!(e.contains("1500B") && e.contains("pkt"), "{e}");
    let ok: QueueSpec = "1500B".parse().unwrap();
    assert_eq!(ok.limit, Some(LimitSpec::Fixed(QueueLimit::Bytes(1500))));
}

/// Mahimahi's `packets=N,bytes=M` holds both limits, whichever binds
/// first (`mm-link`'s `good_with`), and a key given twice, or `limit=`
/// beside them, is refused rather than the last one silently winning.
#[test]
fn packets_and_bytes_together_hold_both_limits() {
    let both: QueueSpec = "droptail:packets=20,bytes=60000".parse().unwrap();
    let limit = QueueLimit::Both {
        packets: 20,
        bytes: 60_000,
    };
    assert_eq!(both.limit, Some(LimitSpec::Fixed(limit)));
    let rev: QueueSpec = "droptail:bytes=60000,packets=20".parse().unwrap();
    assert_eq!(rev.limit, both.limit);
    for bad in [
        "droptail:packets=20,packets=30",
        "droptail:limit=20pkt,bytes=60000",
        "droptail:bytes=60000,limit=20pkt",
        "codel:target=5ms,target=6ms",
    ] {
        assert!(bad.parse::<QueueSpec>().is_err(), "{bad}");
    }
    // 1,000-byte packets: 20 of them are 20,000 B, so packets bind.
    // 1,500-byte packets under bytes=24000: 16 fit, so bytes bind.
    for (size, packets, bytes, most_packets, most_bytes) in [
        (1000, 20, 60_000, 20, 20_000),
        (1500, 20, 24_000, 16, 24_000),
    ] {
        let mut l = link("droptail", 1_000_000, QueueLimit::Both { packets, bytes });
        for i in 0..100 {
            let _ = l.enqueue(0, size, i);
        }
        let st = l.stats();
        assert_eq!(
            (st.peak_queue_packets, st.peak_queue_bytes),
            (most_packets, most_bytes),
            "{size} B packets under {packets} pkt and {bytes} B"
        );
    }
}

#[test]
fn drop_head_keeps_the_newest() {
    let mut l = link("drophead", 8_000_000, QueueLimit::Packets(3));
    for i in 0..10 {
        l.enqueue(0, 1500, i).unwrap();
    }
    let dropped: Vec<u32> = l.drain_dropped().map(|d| d.item).collect();
    // Packet 0 went straight to the serialiser; of the rest only the last 3 wait.
    assert_eq!(dropped, vec![1, 2, 3, 4, 5, 6]);
    let mut out = Vec::new();
    while let Some((_, i)) = l.dequeue(1_000 * MS) {
        out.push(i);
    }
    assert_eq!(out, vec![0, 7, 8, 9]);
    assert_eq!(l.stats().dropped_queue, 6);
}

#[test]
fn codel_holds_a_standing_queue_near_target_where_drop_tail_bloats() {
    // 10 Mbit/s = 833 packets/s of 1500 B; offer 900/s for 10 s (an
    // unresponsive 8 % overload: CoDel's drop rate must ramp up to 67/s,
    // which its control law reaches after about 1.3 s) into a 1 MB queue
    // (800 ms at this rate).
    let big = QueueLimit::Bytes(1_000_000);
    let (_, mut tail) = overload(&mut link("droptail", 10_000_000, big), 900, 10, Ecn::NotEct);
    let mut codel = link("codel", 10_000_000, big);
    let (delivered, mut cd) = overload(&mut codel, 900, 10, Ecn::NotEct);
    let (t, c) = (median(&mut tail[4000..]), median(&mut cd[4000..]));
    assert!(t > 400.0, "drop-tail median wait {t} ms");
    assert!(c < 30.0, "codel median wait {c} ms");
    assert!(codel.stats().dropped_aqm > 100 && codel.stats().dropped_queue == 0);
    // Work-conserving: it still sends at the link rate.
    assert!(delivered as f64 > 0.97 * 833.0 * 10.0 - 20.0, "{delivered}");
}

#[test]
fn codel_with_ecn_marks_instead_of_dropping() {
    let mut l = link("codel:ecn", 10_000_000, QueueLimit::Bytes(1_000_000));
    let (_, mut w) = overload(&mut l, 900, 10, Ecn::Ect);
    assert_eq!(l.stats().dropped_aqm, 0);
    assert!(l.stats().marked_ce > 100, "{:?}", l.stats());
    // Marks alone do not slow this sender (it ignores them): the queue
    // grows as with drop-tail. Real senders back off; see the lab.
    assert!(median(&mut w) > 100.0);
    // A not-ECT packet is still dropped.
    let mut l = link("codel:ecn", 10_000_000, QueueLimit::Bytes(1_000_000));
    overload(&mut l, 1000, 3, Ecn::NotEct);
    assert!(l.stats().dropped_aqm > 0 && l.stats().marked_ce == 0);
}

#[test]
fn pie_drives_its_probability_up_under_overload_and_down_after() {
    let mut l = link("pie", 10_000_000, QueueLimit::Bytes(1_000_000));
    let (_, mut w) = overload(&mut l, 900, 10, Ecn::NotEct);
    let m = median(&mut w[4000..]);
    assert!(l.stats().dropped_aqm > 100, "{:?}", l.stats());
    assert!(m < 60.0, "pie median wait {m} ms");
}

#[test]
fn fq_codel_lets_a_sparse_flow_overtake_a_bulk_one() {
    let mut l = link("fq-codel", 10_000_000, QueueLimit::Bytes(1_000_000));
    // A bulk flow at 1000 packets/s, and a probe every 100 ms on flow 99.
    let gap = 1_000_000;
    let mut probe_waits = Vec::new();
    let mut sent_at = std::collections::HashMap::new();
    for i in 0..3000u32 {
        let now = u64::from(i) * gap;
        let _ = l.enqueue_flow(now, 1500, 1, Ecn::NotEct, i);
        if i % 100 == 50 {
            let id = 1_000_000 + i;
            sent_at.insert(id, now);
            l.enqueue_flow(now, 100, 99, Ecn::NotEct, id).unwrap();
        }
        l.drain_dropped().for_each(drop);
        while let Some((d, id)) = l.dequeue(now) {
            if let Some(t) = sent_at.get(&id) {
                probe_waits.push((d - t) as f64 / 1e6 - 10.0);
            }
        }
    }
    let m = median(&mut probe_waits[5..]);
    // Behind at most the one bulk packet being sent (1.2 ms) and its own.
    assert!(m < 3.0, "probe median wait {m} ms");
}

#[test]
fn fq_codel_drops_from_the_fattest_flow_when_full() {
    let mut l = link("fq-codel", 1_000_000, QueueLimit::Packets(10));
    for i in 0..20 {
        let _ = l.enqueue_flow(0, 1500, 1, Ecn::NotEct, i);
    }
    l.enqueue_flow(0, 1500, 2, Ecn::NotEct, 100).unwrap();
    let dropped: Vec<u32> = l.drain_dropped().map(|d| d.item).collect();
    assert!(
        !dropped.contains(&100),
        "the thin flow keeps its packet: {dropped:?}"
    );
    assert_eq!(l.stats().dropped_queue as usize, dropped.len());
}

#[test]
fn a_bare_bdp_limit_is_a_drop_tail_as_limit_bdp_is() {
    let bare: QueueSpec = "2bdp".parse().unwrap();
    let long: QueueSpec = "droptail:limit=2bdp".parse().unwrap();
    assert_eq!(bare, long);
    assert!("0bdp".parse::<QueueSpec>().is_err());
}
