use super::*;

#[test]
fn state_bytes_are_iperf3s() {
    assert_eq!(State::ParamExchange.byte(), 9);
    assert_eq!(State::AccessDenied.byte(), 0xff);
    assert_eq!(State::ServerError.byte(), 0xfe);
    assert_eq!(State::of(16), Some(State::IperfDone));
    assert_eq!(State::of(3), None);
    assert_eq!(State::of(0xfe), Some(State::ServerError));
}

#[test]
fn cookies_use_iperf3s_alphabet_and_end_in_nul() {
    let c = cookie([255; 36]);
    assert_eq!(c[36], 0);
    assert!(c[..36].iter().all(|&b| starts_cookie(b)));
    assert!(!starts_cookie(b'{') && !starts_cookie(b'T'));
}

#[test]
fn params_read_what_iperf3_3_12_writes() {
    // `iperf3 -c H -R -P 2 -t 5 -d`'s send_parameters, unformatted.
    let j = br#"{"tcp":true,"omit":0,"time":5,"num":0,"blockcount":0,"parallel":2,"reverse":true,"len":131072,"pacing_timer":1000,"client_version":"3.12"}"#;
    let p: Params = parse(j).unwrap();
    assert_eq!(
        (p.tcp, p.time, p.parallel, p.len),
        (Some(true), 5, 2, Some(131072))
    );
    assert_eq!(p.streams(), 2);
    assert!(!p.client_sends(0) && !p.client_sends(1));
    let b = Params {
        parallel: 2,
        bidirectional: Some(true),
        ..Params::default()
    };
    assert_eq!(b.streams(), 4);
    assert_eq!(
        (0..4).map(|k| b.client_sends(k)).collect::<Vec<_>>(),
        [true, true, false, false]
    );
}

#[test]
fn frames_are_length_prefixed_and_bounded() {
    let f = frame(&serde_json::json!({"a": 1}));
    assert_eq!(&f[..4], &[0, 0, 0, 7]);
    assert_eq!(&f[4..], br#"{"a":1}"#);
    assert_eq!(json_len([0, 0, 0, 7]), Ok(7));
    assert!(json_len([0xff, 0, 0, 0]).is_err());
}

#[test]
fn stream_ids_skip_two_as_iperf3s_do() {
    assert_eq!((0..4).map(stream_id).collect::<Vec<_>>(), [1, 3, 4, 5]);
}

#[test]
fn results_round_trip_with_iperf3s_keys() {
    let j = br#"{"cpu_util_total":1.5,"cpu_util_user":0.5,"cpu_util_system":1.0,"sender_has_retransmits":1,"congestion_used":"cubic","streams":[{"id":1,"bytes":1000,"retransmits":3,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":5.0001}]}"#;
    let r: Results = parse(j).unwrap();
    assert_eq!(r.stream(1).unwrap().retransmits, 3);
    let back: serde_json::Value = serde_json::to_value(&r).unwrap();
    for k in ["cpu_util_total", "sender_has_retransmits", "streams"] {
        assert!(back.get(k).is_some(), "{k}");
    }
    assert_eq!(ServerErrno::Protocol.message()[..5], [0xfe, 0, 0, 0, 131]);
}

#[test]
fn results_take_cjsons_numbers() {
    // iperf3 3.12's receiving server, as it wrote it.
    let j = br#"{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":8.08498e+09,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":3.000172}]}"#;
    let r: Results = parse(j).unwrap();
    assert_eq!(r.sender_has_retransmits, -1);
    let s = r.stream(1).unwrap();
    assert_eq!((s.retransmits, s.bytes), (-1, 8_084_980_000));
}

#[test]
fn a_test_without_a_time_is_waited_for_an_hour() {
    let p = |time| Params {
        time,
        ..Params::default()
    };
    assert_eq!(p(10).guard().as_secs(), 40);
    assert_eq!(p(0).guard().as_secs(), 3600);
}
