//! TLS 1.3 resumption and early data (0-RTT), client and server: which
//! requests go early, what the server answers to early data (425 for the
//! unsafe methods, RFC 8470), a replayed ClientHello with its early data
//! (answered once), and every way resumption can fail falling back to a
//! full handshake, never to an error.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tcpwise_client::{Client, ClientConfig, Payload, Request, Response, TlsSessions, Version};
use tcpwise_http::tls::{Resumption, self_signed, with_resumption};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An HTTPS origin on `addr` with `r`: (address, stop, its PEM).
async fn origin(
    addr: &str,
    r: Resumption,
) -> (
    SocketAddr,
    tcpwise_outcome::Shutdown,
    String,
    Arc<rustls::ServerConfig>,
) {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let (cfg, pem) = self_signed(&names).unwrap();
    let cfg = with_resumption(&cfg, r);
    let (addr, stop) = origin_with(addr, cfg.clone()).await;
    (addr, stop, pem, cfg)
}

async fn origin_with(
    addr: &str,
    cfg: Arc<rustls::ServerConfig>,
) -> (SocketAddr, tcpwise_outcome::Shutdown) {
    let tx = tcpwise_outcome::Shutdown::new();
    let rx = tx.clone();
    let (atx, arx) = tokio::sync::oneshot::channel();
    let opts = tcpwise_server::ServeOptions {
        tls: Some(cfg),
        ..tcpwise_server::ServeOptions::new(addr.parse().unwrap())
    };
    tokio::spawn(tcpwise_server::serve(opts, rx, move |a| {
        let _ = atx.send(a);
    }));
    (arx.await.unwrap(), tx)
}

const EARLY: Resumption = Resumption {
    tickets: 2,
    early_data: 16 * 1024,
};

/// A fresh client (so a fresh connection) sharing `sessions`.
fn client(pem: &str, sessions: &TlsSessions, version: Version, early: bool) -> Client {
    Client::new(ClientConfig {
        extra_ca: vec![pem.as_bytes().to_vec()],
        sessions: sessions.clone(),
        version,
        early_data: early,
        ..ClientConfig::default()
    })
}

async fn fetch(c: &Client, req: Request) -> (Response, Vec<u8>) {
    let mut body = Vec::new();
    let r = c
        .request(&req, |d| {
            body.extend_from_slice(d);
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{} {}: {e:?}", req.method, req.url));
    (r, body)
}

#[tokio::test]
async fn a_resumed_session_carries_safe_requests_as_early_data_and_never_a_post() {
    let (addr, _stop, pem, _) = origin("127.0.0.1:0", EARLY).await;
    let base = url::Url::parse(&format!("https://127.0.0.1:{}/", addr.port())).unwrap();
    for (version, proto) in [(Version::Http1, "HTTP/1.1"), (Version::Http2, "HTTP/2")] {
        let sessions = TlsSessions::default();
        let (cold, body) = fetch(
            &client(&pem, &sessions, version, true),
            Request::get(base.join("/bytes/1000").unwrap()),
        )
        .await;
        let tls = cold.conn.tls.clone().unwrap();
        assert!(!tls.resumed && tls.early_data == 0, "{proto}: {tls:?}");
        assert_eq!((cold.version.as_str(), body.len()), (proto, 1000));

        let (warm, body) = fetch(
            &client(&pem, &sessions, version, true),
            Request::get(base.join("/bytes/1000").unwrap()),
        )
        .await;
        let tls = warm.conn.tls.clone().unwrap();
        assert!(tls.resumed && tls.early_data > 0, "{proto}: {tls:?}");
        assert_eq!((warm.status, warm.version.as_str()), (200, proto));
        assert!(
            body.iter()
                .enumerate()
                .all(|(i, b)| *b == tcpwise_server::pattern::pattern_byte(i as u64)),
            "{proto}"
        );

        // Without --tls-earlydata: resumed, nothing early.
        let (r, _) = fetch(
            &client(&pem, &sessions, version, false),
            Request::get(base.join("/bytes/10").unwrap()),
        )
        .await;
        let tls = r.conn.tls.clone().unwrap();
        assert!(tls.resumed && tls.early_data == 0, "{proto}: {tls:?}");

        // A POST is never early data, even when asked for.
        let mut post = Request::get(base.join("/echo").unwrap());
        post.method = hyper::Method::POST;
        post.body = Payload::Bytes(bytes::Bytes::from_static(b"hello"));
        let (r, body) = fetch(&client(&pem, &sessions, version, true), post).await;
        let tls = r.conn.tls.clone().unwrap();
        assert!(tls.resumed && tls.early_data == 0, "{proto}: {tls:?}");
        assert_eq!((r.status, body.as_slice()), (200, &b"hello"[..]), "{proto}");
    }
}

/// A rustls client config trusting `pem`, offering `alpn`, early data on,
/// with its own session cache.
fn raw_config(pem: &str, alpn: &[u8]) -> Arc<rustls::ClientConfig> {
    let cfg = tcpwise_http::tls::client_config(&[pem.as_bytes().to_vec()]).unwrap();
    let mut c = (*cfg).clone();
    c.alpn_protocols = vec![alpn.to_vec()];
    c.enable_early_data = true;
    c.resumption = rustls::client::Resumption::in_memory_sessions(8);
    Arc::new(c)
}

/// Connects with `cfg` (early data on), writes `request` (as early data
/// when a ticket allows) and returns everything the server sent back, as
/// plaintext, until it closes or goes quiet.
async fn raw_exchange(
    addr: SocketAddr,
    cfg: &Arc<rustls::ClientConfig>,
    request: &[u8],
) -> (bool, Vec<u8>) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(cfg.clone())
        .early_data(true)
        .connect(name, tcp)
        .await
        .unwrap();
    tls.write_all(request).await.unwrap();
    tls.flush().await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(300), tls.read(&mut buf)).await
    {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    (tls.get_ref().1.is_early_data_accepted(), got)
}

#[tokio::test]
async fn unsafe_methods_in_early_data_get_425_too_early() {
    let (addr, _stop, pem, _) = origin("127.0.0.1:0", EARLY).await;
    let cfg = raw_config(&pem, b"http/1.1");
    let get = b"GET /bytes/5 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    // A full handshake first, for the ticket.
    let (early, got) = raw_exchange(addr, &cfg, get).await;
    assert!(!early && got.starts_with(b"HTTP/1.1 200 OK"));
    let post = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
    let (early, got) = raw_exchange(addr, &cfg, post).await;
    let text = String::from_utf8_lossy(&got);
    assert!(early, "the POST went as early data");
    assert!(text.starts_with("HTTP/1.1 425 Too Early"), "{text}");
    // The same POST after a full handshake (no ticket left in a fresh
    // cache) is answered.
    let (early, got) = raw_exchange(addr, &raw_config(&pem, b"http/1.1"), post).await;
    let text = String::from_utf8_lossy(&got);
    assert!(
        !early && text.starts_with("HTTP/1.1 200 OK") && text.ends_with("hello"),
        "{text}"
    );
}

/// A TCP relay to `to` that keeps what the client sent.
async fn recording_relay(to: SocketAddr) -> (SocketAddr, Arc<std::sync::Mutex<Vec<u8>>>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = l.local_addr().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = seen.clone();
    tokio::spawn(async move {
        let (mut c, _) = l.accept().await.unwrap();
        let mut s = tokio::net::TcpStream::connect(to).await.unwrap();
        let (mut cr, mut cw) = c.split();
        let (mut sr, mut sw) = s.split();
        let up = async {
            let mut buf = [0u8; 65536];
            loop {
                let n = cr.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    let _ = sw.shutdown().await;
                    break;
                }
                keep.lock().unwrap().extend_from_slice(&buf[..n]);
                if sw.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        };
        let down = tokio::io::copy(&mut sr, &mut cw);
        let _ = tokio::join!(up, down);
    });
    (at, seen)
}

/// Sends `bytes` on a fresh connection to `addr` (a replay: it cannot
/// finish the handshake) and counts what comes back within 500 ms.
fn replay(addr: SocketAddr, bytes: &[u8]) -> usize {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(bytes).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let (mut n, mut buf) = (0, [0u8; 65536]);
    while let Ok(k) = s.read(&mut buf) {
        if k == 0 {
            break;
        }
        n += k;
    }
    n
}

#[tokio::test]
async fn a_replayed_early_data_request_is_answered_once() {
    // Two policies: early data accepted (and answered before the
    // handshake completes), and refused (answered after it).
    for (policy, r) in [
        ("early data accepted", EARLY),
        ("early data refused", Resumption::default()),
    ] {
        let (addr, _stop, pem, _) = origin("127.0.0.1:0", r).await;
        let cfg = raw_config(&pem, b"http/1.1");
        let get = b"GET /bytes/20000 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        let (_, got) = raw_exchange(addr, &cfg, get).await;
        assert!(got.starts_with(b"HTTP/1.1 200 OK"), "{policy}");
        let (relay, seen) = recording_relay(addr).await;
        let (early, got) = raw_exchange(relay, &cfg, get).await;
        assert_eq!(early, r.early_data > 0, "{policy}");
        assert!(
            got.starts_with(b"HTTP/1.1 200 OK") && got.len() > 20000,
            "{policy}"
        );
        // The client's first flight: its ClientHello with the early data,
        // as an attacker on the path would have kept it.
        let flight = seen.lock().unwrap().clone();
        assert!(flight.len() > 100, "{policy}");
        let back = replay(addr, &flight);
        assert!(
            back < 20000,
            "{policy}: the replay was answered ({back} bytes came back)"
        );
    }
}

#[tokio::test]
async fn resumption_that_cannot_happen_falls_back_to_a_full_handshake() {
    let base_of = |a: SocketAddr| {
        url::Url::parse(&format!("https://127.0.0.1:{}/bytes/100", a.port())).unwrap()
    };
    // A server that issues no tickets.
    let (addr, _stop, pem, _) = origin(
        "127.0.0.1:0",
        Resumption {
            tickets: 0,
            early_data: 0,
        },
    )
    .await;
    let sessions = TlsSessions::default();
    for _ in 0..2 {
        let (r, body) = fetch(
            &client(&pem, &sessions, Version::Http2, true),
            Request::get(base_of(addr)),
        )
        .await;
        let tls = r.conn.tls.unwrap();
        assert!(
            !tls.resumed && tls.early_data == 0 && body.len() == 100,
            "{tls:?}"
        );
    }
    // A ticket from another server with the same name (another port,
    // the same certificate): that server cannot open it.
    let (a, _sa, pem, cfg) = origin("127.0.0.1:0", EARLY).await;
    let (b, _sb) = origin_with("127.0.0.1:0", with_resumption(&cfg, EARLY)).await;
    let sessions = TlsSessions::default();
    fetch(
        &client(&pem, &sessions, Version::Http1, true),
        Request::get(base_of(a)),
    )
    .await;
    let (r, body) = fetch(
        &client(&pem, &sessions, Version::Http1, true),
        Request::get(base_of(b)),
    )
    .await;
    let tls = r.conn.tls.unwrap();
    assert!(
        !tls.resumed && tls.early_data <= 0 && body.len() == 100,
        "another server: {tls:?}"
    );
    // A ticket the server no longer holds (it restarted on the same port,
    // as an expired or evicted ticket looks to it).
    let (addr, stop, pem, cfg) = origin("127.0.0.1:0", EARLY).await;
    let sessions = TlsSessions::default();
    fetch(
        &client(&pem, &sessions, Version::Http1, true),
        Request::get(base_of(addr)),
    )
    .await;
    stop.trigger();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (again, _s2) = origin_with(&addr.to_string(), with_resumption(&cfg, EARLY)).await;
    let (r, body) = fetch(
        &client(&pem, &sessions, Version::Http1, true),
        Request::get(base_of(again)),
    )
    .await;
    let tls = r.conn.tls.unwrap();
    assert!(
        !tls.resumed && tls.early_data < 0 && body.len() == 100,
        "restarted: {tls:?}"
    );
}
