use super::*;

fn sample(t: f64, bytes: u64) -> Sample {
    Sample {
        t,
        bytes,
        ..Sample::default()
    }
}

fn peer(bytes: u64, retransmits: i64) -> wire::StreamResult {
    wire::StreamResult {
        id: 1,
        bytes,
        retransmits,
        start_time: 0.0,
        end_time: 2.0,
        ..wire::StreamResult::default()
    }
}

#[test]
fn a_stream_we_sent_counts_what_the_peer_received() {
    let ours = Ours {
        sent: true,
        samples: vec![sample(1.0, 1_000_000), sample(2.0, 2_000_000)],
        ..Ours::default()
    };
    let r = stream_report(&ours, &peer(1_900_000, -1), &Asked::default());
    assert_eq!(r.intervals.len(), 2);
    assert_eq!(r.intervals[1].bytes, 1_000_000);
    assert_eq!(r.summary.bytes, 1_900_000);
    assert!((r.summary.goodput_mbit - 7.6).abs() < 1e-9);
    assert_eq!(r.summary.sent_bytes, Some(2_000_000));
    assert!(!r.reverse);
}

#[test]
fn a_stream_we_received_takes_the_peers_retransmissions() {
    let ours = Ours {
        sent: false,
        samples: vec![sample(1.0, 500_000), sample(2.0, 1_000_000)],
        ..Ours::default()
    };
    let r = stream_report(&ours, &peer(1_100_000, 7), &Asked::default());
    assert_eq!(r.summary.bytes, 1_000_000);
    assert_eq!(r.summary.sent_bytes, Some(1_100_000));
    assert_eq!(r.summary.retransmits, Some(7));
    assert!(r.reverse);
    // A peer that did not send reports -1: no figure, not a huge one.
    let r = stream_report(&ours, &peer(1_100_000, -1), &Asked::default());
    assert_eq!(r.summary.retransmits, None);
}
