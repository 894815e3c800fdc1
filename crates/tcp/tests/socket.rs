//! The tcp crate on real sockets: read slow start on a 1 MB download (the
//! sequence of read sizes, not just the last), the wrapper under a hyper
//! HTTP/1.1 connection, and TCP_INFO against `ss -ti` on a live socket.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use std::process::Command;
use tcpwise_tcp::{ReadSizer, SizedRead, TcpInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MB: usize = 1_000_000;

/// Checks the slow-start rule read by read: start at 1 KiB, double after
/// each read that filled its request, never above `max`.
fn assert_slow_start(history: &[(usize, usize)], max: usize) {
    assert_eq!(history[0].0, 1024, "first read asks for 1 KiB");
    let mut expect = 1024;
    for (i, &(asked, got)) in history.iter().enumerate() {
        assert_eq!(asked, expect, "read {i}: {history:?}");
        if got == asked {
            expect = (expect * 2).min(max);
        }
    }
    assert!(
        history.iter().any(|&(a, _)| a == max),
        "reaches the cap: {history:?}"
    );
}

#[tokio::test]
async fn slow_start_sequence_on_a_real_download() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        s.write_all(&vec![7u8; MB]).await.unwrap();
    });
    let s = TcpStream::connect(addr).await.unwrap();
    // Let the whole megabyte arrive so every read can fill its request.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let mut r = SizedRead::new(s, ReadSizer::slow_start(64 * 1024));
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0;
    loop {
        let n = r.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        total += n;
    }
    server.await.unwrap();
    assert_eq!(total, MB);
    let h = r.history();
    assert_slow_start(h, 64 * 1024);
    let sizes: Vec<usize> = h.iter().take(8).map(|x| x.0).collect();
    assert_eq!(
        sizes,
        vec![1024, 2048, 4096, 8192, 16384, 32768, 65536, 65536]
    );
}

#[tokio::test]
async fn slow_start_works_under_hyper() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let body = Bytes::from(vec![42u8; MB]);
    let server = tokio::spawn(async move {
        let (s, _) = l.accept().await.unwrap();
        let svc = hyper::service::service_fn(move |_req| {
            let body = body.clone();
            async move { Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(body))) }
        });
        hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(s), svc)
            .await
            .unwrap();
    });
    let s = TcpStream::connect(addr).await.unwrap();
    let io = SizedRead::new(s, ReadSizer::slow_start(32 * 1024));
    let (mut send, conn) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(io))
            .await
            .unwrap();
    let conn = tokio::spawn(async move { conn.without_shutdown().await });
    let req = hyper::Request::get("/")
        .header("host", "x")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let resp = send.send_request(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let got = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(got.len(), MB);
    assert!(got.iter().all(|&b| b == 42));
    drop(send);
    let parts = conn.await.unwrap().unwrap();
    let io = parts.io.into_inner();
    assert!(
        io.bytes_read() as usize > MB,
        "headers and body went through the wrapper"
    );
    assert_eq!(
        io.history()[0].0,
        1024,
        "hyper's first read was slow-started"
    );
    assert!(io.history().iter().all(|&(a, _)| a <= 32 * 1024));
    assert!(
        io.history().iter().any(|&(a, _)| a == 32 * 1024),
        "{:?}",
        io.history()
    );
    server.abort();
}

/// Parses `key:value` from ss's detail line.
fn ss_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix(':')))
}

#[test]
fn tcp_info_agrees_with_ss() {
    if Command::new("ss").arg("-V").output().is_err() {
        eprintln!("skipping tcp_info_agrees_with_ss: ss (iproute2) is not installed");
        return;
    }
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (mut s, _) = l.accept().unwrap();
    let data = vec![1u8; 4 * MB];
    let t = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut n = 0;
        while n < 4 * MB {
            n += s.read(&mut buf).unwrap();
        }
        s
    });
    c.write_all(&data).unwrap();
    let _s = t.join().unwrap();
    // Quiescent socket: both readings see the same state.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let ours = TcpInfo::of(&c).unwrap();
    let local = c.local_addr().unwrap().port();
    let out = Command::new("ss")
        .args([
            "-tinH",
            "state",
            "established",
            &format!("( sport = :{local} )"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let detail = text
        .lines()
        .nth(1)
        .unwrap_or_else(|| panic!("ss output: {text}"));
    let after = TcpInfo::of(&c).unwrap();
    let rtt = ss_field(detail, "rtt").unwrap().split('/').next().unwrap();
    let rtt_ms: f64 = rtt.parse().unwrap();
    let lo = ours.rtt_us.min(after.rtt_us) as f64 / 1000.0;
    let hi = ours.rtt_us.max(after.rtt_us) as f64 / 1000.0;
    assert!(
        rtt_ms >= lo - 0.001 && rtt_ms <= hi + 0.001,
        "ss rtt {rtt_ms} vs {lo}..{hi}"
    );
    let cwnd: u32 = ss_field(detail, "cwnd").unwrap().parse().unwrap();
    assert_eq!(cwnd, ours.snd_cwnd, "{detail}");
    let mss: u32 = ss_field(detail, "mss").unwrap().parse().unwrap();
    assert_eq!(mss, ours.snd_mss, "{detail}");
    let retrans_total = ss_field(detail, "retrans")
        .map_or(0, |r| r.split('/').nth(1).unwrap().parse::<u32>().unwrap());
    assert_eq!(retrans_total, ours.total_retrans, "{detail}");
    let acked: u64 = ss_field(detail, "bytes_acked").unwrap().parse().unwrap();
    assert_eq!(Some(acked), ours.bytes_acked);
}
