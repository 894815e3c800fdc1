//! A fresh connection's round trips on emulated paths: TCP Fast Open with
//! TLS 1.3 early data (the request leaves in the SYN), its fallbacks, and
//! Happy Eyeballs past a blackholed IPv6 address. The assertions are on
//! what each connection did (`-v`, `-w`), and on lower bounds the path's
//! delay guarantees; how fast is the lab's to measure, not a test's.

use crate::common::*;

/// `get` flags and a `-w` line for four fetches of one small object, each
/// on a new connection (`Connection: close`), sessions kept in-process.
fn four_fetches(extra: &str) -> String {
    let u = "https://$TCPWISE_PEER:5301/bytes/100";
    format!(
        "{BIN} get -k --http1.1 -H 'Connection: close' {extra} -v -o /dev/null -o /dev/null -o /dev/null -o /dev/null {u} {u} {u} {u} \
         -w 'ttfb=%{{time_starttransfer}} resumed=%{{tls_resumed}} early=%{{tls_earlydata}}\\n' 2>&1 | grep -v '^[<>]'"
    )
}

fn ttfbs(out: &str) -> Vec<f64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("ttfb="))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn tfo_with_early_data_carries_the_request_in_the_syn() {
    if !netns_ok("tfo_with_early_data") {
        return;
    }
    let o = testbed_serving(
        // Four tickets: a connection that ends with its 0-RTT answer is
        // gone before the tickets of its own handshake arrive.
        &format!(
            "exec {BIN} serve --tls --tls-earlydata --tls-tickets 4 --tfo --bind 198.18.0.2:5301"
        ),
        &[
            "--rtt",
            "100ms",
            "--server-sysctl",
            "net.ipv4.tcp_fastopen=3",
        ],
        &four_fetches("--tls-earlydata --tcp-fastopen"),
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    // The first connection: a cookie to fetch, a session to make.
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        out.contains("ttfb=")
            && lines
                .iter()
                .filter(|l| l.contains("full handshake"))
                .count()
                == 1,
        "{out}"
    );
    assert!(out.contains("no cookie for this server yet"), "{out}");
    // Every later one: data in the SYN taken, the session resumed, the
    // request sent as early data and accepted.
    assert_eq!(
        out.matches("the server took the data in the SYN").count(),
        3,
        "{out}"
    );
    assert_eq!(
        out.matches("bytes of early data accepted (0-RTT)").count(),
        3,
        "{out}"
    );
    let t = ttfbs(&out);
    assert_eq!(t.len(), 4, "{out}");
    // Lower bounds the path guarantees: a cold HTTPS request takes three
    // round trips, none can take less than one.
    assert!(t[0] >= 0.3, "{out}");
    assert!(t.iter().all(|x| *x >= 0.1), "{out}");
}

#[test]
fn tfo_and_early_data_fall_back_to_a_normal_handshake_when_the_server_refuses() {
    if !netns_ok("tfo_fallback") {
        return;
    }
    // The server's namespace keeps the kernel's default (1: client only)
    // and serve takes no early data: every fetch still works, and says so.
    let o = testbed_serving(
        &format!("exec {BIN} serve --tls --tfo --bind 198.18.0.2:5301"),
        &["--rtt", "20ms"],
        &four_fetches("--tls-earlydata --tcp-fastopen"),
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        stderr(&o).contains("the kernel takes no data in SYNs"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        out.matches("TCP Fast Open: a normal handshake").count(),
        4,
        "{out}"
    );
    assert_eq!(out.matches("ttfb=").count(), 4, "{out}");
    // Resumed without early data (the tickets allow none): the request
    // went after the handshake, never refused.
    assert_eq!(out.matches("resumed=1 early=0").count(), 3, "{out}");
}

#[test]
fn happy_eyeballs_gets_past_a_blackholed_ipv6_address() {
    if !netns_ok("happy_eyeballs") {
        return;
    }
    // 2001:2::99 is routed to the link from the client and dropped
    // silently at the server's end (a blackhole route): its SYNs vanish.
    let get = |flags: &str| {
        format!(
            "{BIN} get {flags} -v -o /dev/null --resolve dual.test:5301:[2001:2::99],198.18.0.2 \
             http://dual.test:5301/bytes/10 -w 'ttfb=%{{time_starttransfer}}\\n' 2>&1 | grep -v '^[<>]'"
        )
    };
    let script = format!(
        "ip -6 route add 2001:2::99 dev tw0 && {} && {}",
        get(""),
        get("--no-happy-eyeballs --connect-timeout 1")
    );
    let o = testbed_serving(
        &format!("ip -6 route add blackhole 2001:2::99/128 && exec {BIN} serve --bind [::]:5301"),
        &["--rtt", "40ms"],
        &script,
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("198.18.0.2:5301 won after")
            && out.contains(
                "[2001:2::99]:5301 had not connected; Happy Eyeballs, attempts 250 ms apart"
            ),
        "{out}"
    );
    assert!(
        out.contains("[2001:2::99]:5301 failed: no answer within 1.0 s (--connect-timeout); addresses tried one after the other"),
        "{out}"
    );
    let t = ttfbs(&out);
    // Raced: at least the attempt delay; one after the other: at least the
    // connect timeout (the stall Happy Eyeballs removes).
    assert!(t.len() == 2 && t[0] >= 0.25 && t[1] >= 1.0, "{out}");
}
