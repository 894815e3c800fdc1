use super::*;

fn sample(index: u32, t: f64, bytes: u64, info: Option<TcpInfo>) -> Sample {
    Sample {
        index,
        t,
        bytes,
        info,
        ..Sample::default()
    }
}

fn info(rtt_us: u32, busy: u64, rwnd: u64) -> TcpInfo {
    TcpInfo {
        rtt_us,
        snd_cwnd: 100,
        snd_mss: 1448,
        min_rtt_us: Some(rtt_us),
        busy_time_us: Some(busy),
        rwnd_limited_us: Some(rwnd),
        sndbuf_limited_us: Some(0),
        ..TcpInfo::default()
    }
}

fn line(start: f64, end: f64, mbit: f64) -> Interval {
    Interval {
        start_s: start,
        end_s: end,
        bytes: (mbit * 1e6 / 8.0 * (end - start)) as u64,
        mbit,
        ..Interval::default()
    }
}

#[test]
fn pacing_check_skips_the_first_and_partial_intervals_and_omit_recounts() {
    let lines = vec![
        line(0.0, 1.0, 12.0),
        line(1.0, 2.0, 19.5),
        line(2.0, 3.0, 20.4),
        line(3.0, 3.2, 5.0),
    ];
    let p = PacingCheck::of(&lines, 20.0).unwrap();
    assert_eq!(p.intervals, 2);
    assert!((p.worst_pct - 2.5).abs() < 1e-9, "{p:?}");
    assert_eq!((p.min_mbit, p.max_mbit), (19.5, 20.4));
    assert!(PacingCheck::of(&lines[..1], 20.0).is_none());
    let mut s = run(None, 131_072, 1_000_000, 65_535);
    s.sent_bytes = Some(5_000_000);
    s.sent_seconds = Some(3.2);
    // The sender's samples: its line starts where the receiver's does.
    let tx = [
        sample(1, 1.0, 1_500_000, None),
        sample(2, 2.0, 3_000_000, None),
    ];
    omit(&mut s, &lines, &tx, 1.0);
    assert_eq!(s.omitted_s, Some(1.0));
    assert_eq!((s.sent_bytes, s.sent_seconds), (Some(3_500_000), Some(2.2)));
    assert!((s.seconds - 2.2).abs() < 1e-9);
    let want = (lines[1].bytes + lines[2].bytes + lines[3].bytes) as f64 * 8.0 / 2.2 / 1e6;
    assert!((s.goodput_mbit - want).abs() < 1e-9);
}

#[test]
fn interval_joins_receiver_bytes_and_sender_info() {
    let rx0 = sample(0, 0.0, 0, None);
    let rx1 = sample(1, 1.0, 1_250_000, None);
    let tx0 = sample(0, 0.0, 0, Some(info(177_000, 0, 0)));
    let tx1 = sample(1, 1.0, 1_300_000, Some(info(177_000, 1_000_000, 900_000)));
    let i = interval(&rx0, &rx1, Some(&tx0), Some(&tx1));
    assert_eq!(i.mbit, 10.0);
    assert_eq!(i.rtt_ms, Some(177.0));
    assert_eq!(i.cwnd_bytes, Some(144_800));
    assert_eq!(i.rwnd_limited_pct, Some(90.0));
}

fn run(rcvbuf: Option<u64>, held: u64, goodput_bytes: u64, rwnd: u64) -> Summary {
    let rx = sample(10, 10.0, goodput_bytes, None);
    let tx = sample(
        10,
        10.0,
        goodput_bytes,
        Some(info(177_000, 10_000_000, rwnd)),
    );
    let iv = vec![interval(&sample(0, 0.0, 0, None), &rx, None, Some(&tx))];
    let rxb = AppliedBuffers {
        rcv_asked: rcvbuf,
        rcv_held: held,
        ..AppliedBuffers::default()
    };
    summarize(
        None,
        &iv,
        &rx,
        Some(&tx),
        &rxb,
        &AppliedBuffers::default(),
        &Asked {
            rcvbuf,
            sndbuf: None,
            path_rate_bps: Some(151e6),
            window_flag: false,
        },
    )
}

#[test]
fn static_buffer_at_its_cap_is_diagnosed_with_numbers() {
    // 278,775 asked, 557,550 held, 348,469 advertised: 15.75 Mbit/s at 177 ms.
    let s = run(Some(278_775), 557_550, 18_000_000, 9_500_000);
    assert!(s.buffer_limited);
    let cap = s.predicted_cap_mbit.unwrap();
    assert!((cap - 15.75).abs() < 0.05, "{cap}");
    let d = s.diagnosis.unwrap();
    for needle in [
        "--rcvbuf 278775",
        "557550",
        "177.0 ms",
        "3.34 MB",
        "drop --rcvbuf",
    ] {
        assert!(d.contains(needle), "{needle} missing from: {d}");
    }
}

#[test]
fn autotuned_unlimited_flow_gets_no_diagnosis() {
    let s = run(None, 6_000_000, 180_000_000, 10_000);
    assert!(!s.buffer_limited);
    assert_eq!(s.diagnosis, None);
    assert_eq!(s.predicted_cap_mbit, None);
}

#[test]
fn static_buffer_above_the_path_says_nothing() {
    // A large pinned buffer that the flow never fills is not the limit.
    let s = run(Some(8_000_000), 16_000_000, 180_000_000, 0);
    assert!(!s.buffer_limited, "{:?}", s.diagnosis);
    assert!(s.predicted_cap_mbit.unwrap() > 300.0);
}

#[test]
fn autotuned_but_window_bound_names_tcp_rmem() {
    let s = run(None, 6_000_000, 50_000_000, 9_000_000);
    assert!(s.diagnosis.unwrap().contains("tcp_rmem"));
}

#[test]
fn slow_reader_is_not_blamed_on_buffers() {
    // 40 Mbit/s through a window that allowed 180 Mbit/s at 177 ms.
    let rx = sample(10, 10.0, 50_000_000, None);
    let tx = sample(
        10,
        10.0,
        50_000_000,
        Some(info(177_000, 10_000_000, 9_000_000)),
    );
    let iv = vec![interval(&sample(0, 0.0, 0, None), &rx, None, Some(&tx))];
    let s = summarize(
        Some(4_000_000),
        &iv,
        &rx,
        Some(&tx),
        &AppliedBuffers::default(),
        &AppliedBuffers::default(),
        &Asked::default(),
    );
    assert!(!s.buffer_limited);
    assert!(s.diagnosis.unwrap().contains("did not read fast enough"));
}

#[test]
fn a_small_pinned_buffer_takes_turns_with_the_cwnd_and_still_holds_the_flow() {
    // The shares measured on 100 ms, 50 Mbit/s (4 Dec): pinned 64 KB to
    // 400 KB, 33-47 % rwnd-limited (35 % on a loaded CI machine); 2 MB,
    // the path's limit, 4 %.
    for held in [33.0, 35.0, 47.0] {
        assert!(held_by_window(Some(held)), "{held}");
    }
    assert!(!held_by_window(Some(4.0)));
    assert!(!held_by_window(None));
}
