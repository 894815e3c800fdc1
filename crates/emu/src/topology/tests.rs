use super::*;

const GOOD: &str = r#"
[bottleneck]
rate = "20mbit"
up-queue = "droptail:limit=2bdp"

[[host]]
name = "short"
rtt = "10ms"
cc = "cubic"
command = "sleep 1"

[[host]]
name = "long"
rtt = "50ms"
cc = "bbr"
start = "2s"
sysctl = ["net.ipv4.tcp_ecn=1"]

[[receiver]]
name = "sink"
server = "sleep 5"
"#;

/// The error, which is always one line.
fn err(text: &str) -> String {
    let e = parse(text, Path::new("t.toml")).unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
    e
}

#[test]
fn a_dumbbell_file_resolves_with_the_bottleneck_queue_over_the_longest_path() {
    let spec = parse(GOOD, Path::new("t.toml")).unwrap();
    assert_eq!(spec.hosts.len(), 2);
    assert_eq!(spec.hosts[1].start, 2_000_000_000);
    assert_eq!(spec.hosts[1].cc.as_deref(), Some("bbr"));
    assert_eq!(
        spec.hosts[1].sysctls,
        [("net.ipv4.tcp_ecn".into(), "1".into())]
    );
    assert_eq!(spec.receivers[0].command.as_deref(), Some("sleep 5"));
    let r = spec.resolve().unwrap();
    assert_eq!(r.hosts[0].rtt(), 10_000_000);
    assert_eq!(r.hosts[1].rtt(), 50_000_000);
    assert_eq!(r.hosts[1].v4, Ipv4Addr::new(198, 18, 1, 2));
    assert_eq!(r.receivers[0].v4, Ipv4Addr::new(198, 18, 2, 1));
    // 2 BDP of 20 Mbit/s over 50 ms: 250,000 bytes.
    assert_eq!(
        r.bottleneck.0.queue,
        tcpwise_link::QueueLimit::Bytes(250_000)
    );
    assert_eq!(r.hosts[0].peer, 0);
}

#[test]
fn bad_topologies_are_one_line_naming_file_line_and_key() {
    let e = err(
        "[[host]]\nname = \"a\"\nrtt = \"1ms\"\nbandwidth = \"1mbit\"\n[[receiver]]\nname = \"r\"\n",
    );
    assert!(
        e.starts_with("topology t.toml line 4: host 'a': unknown key 'bandwidth'"),
        "{e}"
    );
    let e = err("[[host]]\nname = \"a\"\nto = \"nowhere\"\n[[receiver]]\nname = \"r\"\n");
    assert!(e.contains("line 3: host 'a' has a path to 'nowhere', which is not a declared receiver (receivers: r)"), "{e}");
    let e = err("[[host]]\nname = \"a\"\n");
    assert!(
        e.contains("line 1: host 'a' is on no path: the topology declares no [[receiver]]"),
        "{e}"
    );
    let e = err(
        "[[host]]\nname = \"a\"\nto = \"r\"\n[[receiver]]\nname = \"r\"\n[[receiver]]\nname = \"q\"\n",
    );
    assert!(e.contains("line 6: receiver 'q' is on no path"), "{e}");
    let e = err("[[host]]\nname = \"a\"\n[[host]]\nname = \"a\"\n[[receiver]]\nname = \"r\"\n");
    assert!(
        e.contains("line 3: two hosts are named 'a' (the host declared at line 1"),
        "{e}"
    );
    let e =
        err("[bottleneck]\nrate = \"fast\"\n[[host]]\nname = \"a\"\n[[receiver]]\nname = \"r\"\n");
    assert!(
        e.starts_with("topology t.toml line 2: the bottleneck: 'rate'"),
        "{e}"
    );
    let e = err("[links]\nx = 1\n");
    assert!(e.contains("line 1: unknown key 'links'"), "{e}");
    let e = err("[[receiver]]\nname = \"r\"\ncommand = \"x\"\n[[host]]\nname = \"a\"\n");
    assert!(
        e.contains("line 3: receiver 'r': 'command' is a key of a host"),
        "{e}"
    );
    let e = err("[[host]]\nname = \"a b\"\n[[receiver]]\nname = \"r\"\n");
    assert!(e.contains("'a b' is not a name"), "{e}");
    let e = err("[[host]]\nname = \"a\"\nstart = \"soon\"\n[[receiver]]\nname = \"r\"\n");
    assert!(e.contains("line 3: host 'a': 'start'"), "{e}");
    let e = err("[[host]\n");
    assert!(e.starts_with("topology t.toml line 1:"), "{e}");
}

#[test]
fn the_short_form_is_hosts_and_one_receiver() {
    let s = from_flags(
        &[
            "a:rtt=10ms,cc=cubic".into(),
            "b:rtt=50ms,cc=bbr,start=1s".into(),
        ],
        PathSpec {
            rate: Some(20_000_000),
            ..path_spec(&[]).unwrap()
        },
        Some("sleep 9".into()),
    )
    .unwrap();
    assert_eq!(s.hosts[1].cc.as_deref(), Some("bbr"));
    assert_eq!(s.receivers[0].name, "receiver");
    let r = s.resolve().unwrap();
    assert_eq!(r.hosts[1].rtt(), 50_000_000);
    let e = from_flags(&["a:speed=1".into()], PathSpec::default(), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--host 'a:speed=1': host 'a': unknown key 'speed'"),
        "{e}"
    );
    let e = from_flags(&["a:rtt".into()], PathSpec::default(), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not key=value"), "{e}");
}
