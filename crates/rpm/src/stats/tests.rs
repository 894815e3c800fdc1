use super::*;

#[test]
fn trimmed_mean_drops_the_slowest() {
    let v: Vec<f64> = (1..=20).map(f64::from).collect();
    // 95 % of 20 is 19: the mean of 1..=19.
    assert_eq!(trimmed_mean(&v, 95.0), Some(10.0));
    assert_eq!(trimmed_mean(&v, 100.0), Some(10.5));
    // One value is always kept.
    assert_eq!(trimmed_mean(&[7.0], 5.0), Some(7.0));
    assert_eq!(trimmed_mean(&[], 95.0), None);
    // Order does not matter.
    assert_eq!(trimmed_mean(&[3.0, 1.0, 2.0, 100.0], 75.0), Some(2.0));
}

#[test]
fn percentile_is_nearest_rank() {
    let v: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(percentile(&v, 90.0), Some(9.0));
    assert_eq!(percentile(&v, 50.0), Some(5.0));
    assert_eq!(percentile(&[], 90.0), None);
}

#[test]
fn stability_needs_mad_agreeing_averages() {
    let mut s = Stability::new(4, 5.0);
    for v in [100.0, 100.0, 100.0] {
        s.push(v);
        assert!(!s.stable(), "fewer than MAD averages is never stable");
    }
    s.push(100.0);
    assert!(s.stable());
    // A jump: sd of [100, 100, 100, 150] is 21.7, over 5 % of 150.
    s.push(150.0);
    assert!(!s.stable());
    // sd of [100, 150, 151, 152] is 22 > 7.6: still not.
    for v in [151.0, 152.0] {
        s.push(v);
        assert!(!s.stable());
    }
    // [150, 151, 152, 151]: sd 0.7 <= 7.55.
    s.push(151.0);
    assert!(s.stable());
    // Exactly at the tolerance counts as stable: sd of [90, 110, 90, 110]
    // is 10, 5 % of 200 is 10.
    let mut t = Stability::new(4, 5.0);
    for v in [90.0, 110.0, 90.0, 200.0] {
        t.push(v);
    }
    assert!(!t.stable());
}

#[test]
fn window_keeps_the_last_mad_intervals() {
    let mut w = Window::new(2);
    w.push(vec![1]);
    w.push(vec![2, 3]);
    w.push(vec![]);
    assert_eq!(w.samples(), vec![2, 3]);
    assert_eq!(w.len(), 2);
}

#[test]
fn rpm_is_the_drafts_formula() {
    // Foreign parts 30, 30, 30 ms (one round trip each), self 90 ms:
    // (60000 / 30 + 60000 / 90) / 2 = (2000 + 666.7) / 2 = 1333.3 RPM (the
    // -03 draft's 60000 / (1/6 * 90 + 1/2 * 90) made it 1000).
    let r = Round {
        at_s: 0.0,
        tcp_ms: Some(30.0),
        tls_ms: Some(30.0),
        http_ms: Some(30.0),
        self_ms: Some(90.0),
    };
    let s = score(&[r; 10], |v| trimmed_mean(v, 95.0)).expect("score");
    assert!((s.rpm - 4000.0 / 3.0).abs() < 1e-9, "{s:?}");
    assert_eq!(
        (s.foreign_ms, s.self_ms, s.rounds),
        (Some(30.0), Some(90.0), 10)
    );
    // http://: no TLS part, the other two make the foreign round trip.
    let plain = Round { tls_ms: None, ..r };
    let s = score(&[plain], |v| trimmed_mean(v, 95.0)).expect("score");
    assert!((s.rpm - 4000.0 / 3.0).abs() < 1e-9);
    // HTTP/1.1: no self probes, RPM is the foreign round trip's.
    let h1 = Round { self_ms: None, ..r };
    let s = score(&[h1], |v| trimmed_mean(v, 95.0)).expect("score");
    assert!((s.rpm - 2000.0).abs() < 1e-9);
    assert_eq!(score(&[], |v| trimmed_mean(v, 95.0)), None);
}

#[test]
fn bands_are_the_drafts() {
    assert_eq!(band(299.0), "Poor");
    assert_eq!(band(300.0), "Fair");
    assert_eq!(band(999.0), "Fair");
    assert_eq!(band(1000.0), "Good");
    assert_eq!(band(6000.0), "Excellent");
}

#[test]
fn the_percentile_figure_is_goresponsiveness_s_per_probe_round_trip() {
    // Each of three probes has one slow part: per probe, a 40 ms round
    // trip (120 / 3), in 3 of 10 probes; each part alone is slow in 1 of 10.
    let rounds: Vec<Round> = (0..10)
        .map(|i| Round {
            at_s: f64::from(i),
            tcp_ms: Some(if i == 0 { 100.0 } else { 10.0 }),
            tls_ms: Some(if i == 1 { 100.0 } else { 10.0 }),
            http_ms: Some(if i == 2 { 100.0 } else { 10.0 }),
            self_ms: Some(50.0),
        })
        .collect();
    let ours = percentile_score(&rounds, 90.0).unwrap();
    assert_eq!(ours.foreign_ms, Some(40.0));
    assert_eq!(ours.self_ms, Some(50.0));
    assert!((ours.rpm - 60_000.0 / 45.0).abs() < 1e-9, "{ours:?}");
    // The draft's formula with the percentile in each part's place.
    let parts = score(&rounds, |v| percentile(v, 90.0)).unwrap();
    assert_eq!(parts.foreign_ms, Some(10.0));
    // Without self probes (HTTP/1.1) the figure is the foreign one alone.
    let h1: Vec<Round> = rounds
        .iter()
        .map(|r| Round {
            self_ms: None,
            ..*r
        })
        .collect();
    assert!((percentile_score(&h1, 90.0).unwrap().rpm - 1500.0).abs() < 1e-9);
}
