//! HTTP/3, client and server in one process on loopback: the same
//! answers as HTTP/2 (bodies, an echo, a 404), one connection shared by
//! every request to an origin, and bad input on both sides: garbage
//! datagrams at the server, a client offering another ALPN, a server
//! offering another ALPN, a server speaking no QUIC version we do. Each
//! failure is one line and nothing panics.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;
use tcpwise_client::{Client, ClientConfig, HttpError, Payload, Request, Version};
use tcpwise_http::tls::self_signed;

/// An HTTPS origin with HTTP/3 on `127.0.0.1`: (address, stop, its PEM).
async fn origin() -> (SocketAddr, tcpwise_outcome::Shutdown, String) {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let (cfg, pem) = self_signed(&names).unwrap();
    let tx = tcpwise_outcome::Shutdown::new();
    let (atx, arx) = tokio::sync::oneshot::channel();
    let opts = tcpwise_server::ServeOptions {
        tls: Some(cfg),
        http3: true,
        ..tcpwise_server::ServeOptions::new("127.0.0.1:0".parse().unwrap())
    };
    tokio::spawn(tcpwise_server::serve(opts, tx.clone(), move |a| {
        let _ = atx.send(a);
    }));
    (arx.await.unwrap(), tx, pem)
}

fn client(pem: &str, version: Version) -> Client {
    Client::new(ClientConfig {
        extra_ca: vec![pem.as_bytes().to_vec()],
        version,
        connect_timeout: Duration::from_secs(3),
        ..ClientConfig::default()
    })
}

async fn fetch(
    c: &Client,
    req: &Request,
) -> Result<(tcpwise_client::Response, Vec<u8>), HttpError> {
    let mut body = Vec::new();
    let r = c
        .request(req, |d| {
            body.extend_from_slice(d);
            Ok(())
        })
        .await?;
    Ok((r, body))
}

fn url(addr: SocketAddr, path: &str) -> url::Url {
    url::Url::parse(&format!("https://127.0.0.1:{}{path}", addr.port())).unwrap()
}

#[tokio::test]
async fn same_answers_as_http2_on_one_shared_connection() {
    let (addr, _stop, pem) = origin().await;
    let before = tcpwise_server::h3::totals();
    let h3 = client(&pem, Version::Http3Only);
    let h2 = client(&pem, Version::Http2);
    for path in ["/bytes/0", "/bytes/1", "/bytes/1000000", "/health", "/nope"] {
        let req = Request::get(url(addr, path));
        let (a, x) = fetch(&h3, &req).await.unwrap();
        let (b, y) = fetch(&h2, &req).await.unwrap();
        assert_eq!(a.version, "HTTP/3");
        assert_eq!(b.version, "HTTP/2");
        assert_eq!((a.status, &x), (b.status, &y), "{path}");
        let q = a.conn.quic.as_ref().expect("quinn's statistics");
        assert!(q.rtt_ms > 0.0 && q.cwnd > 0, "{q:?}");
    }
    // Every request went on the first QUIC connection.
    let (r, _) = fetch(&h3, &Request::get(url(addr, "/bytes/10")))
        .await
        .unwrap();
    assert!(r.conn.reused && r.conn.id == 1, "{:?}", r.conn);
    assert_eq!(r.conn.history.requests, 6);
    // The server's loss-recovery counters count the live connection: it
    // sent the megabyte's packets, each at most the largest datagram (a
    // test beside this one may add its own).
    let now = tcpwise_server::h3::totals();
    assert!(now.connections > before.connections, "{now:?}");
    let fewest = 1_000_000 / u64::from(tcpwise_http::quic::DATAGRAM_MAX);
    assert!(now.sent_packets >= before.sent_packets + fewest, "{now:?}");
    // A body goes up and comes back.
    let mut post = Request::get(url(addr, "/echo"));
    post.method = hyper::Method::POST;
    post.body = Payload::Bytes(bytes::Bytes::from(vec![7u8; 300_000]));
    let (r, body) = fetch(&h3, &post).await.unwrap();
    assert_eq!((r.status, r.upload_bytes), (200, 300_000));
    assert_eq!(body, vec![7u8; 300_000]);
}

#[tokio::test]
async fn garbage_datagrams_and_a_wrong_alpn_leave_the_server_serving() {
    let (addr, _stop, pem) = origin().await;
    // Garbage: short, long-header-looking, a QUIC Initial's first byte
    // with nonsense after it.
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for n in [1usize, 7, 40, 1200, 1350, 1500] {
        let pkt: Vec<u8> = (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i == 0 { 0xc3 } else { x as u8 }
            })
            .collect();
        s.send_to(&pkt, addr).unwrap();
    }
    // A QUIC client offering only `h2`: the handshake fails with
    // no_application_protocol.
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .unwrap()
    .with_root_certificates({
        let mut r = rustls::RootCertStore::empty();
        for c in rustls_pki_types::pem::PemObject::pem_slice_iter(pem.as_bytes()) {
            r.add(c.unwrap()).unwrap();
        }
        r
    })
    .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let qc = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::new(tls)).unwrap();
    let ep = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    let r = ep
        .connect_with(quinn::ClientConfig::new(Arc::new(qc)), addr, "127.0.0.1")
        .unwrap()
        .await;
    let e = r.expect_err("no h3 in ALPN: refused").to_string();
    assert!(
        e.contains("no_application_protocol") || e.contains("120"),
        "{e}"
    );
    // Still serving.
    let (r, body) = fetch(
        &client(&pem, Version::Http3Only),
        &Request::get(url(addr, "/bytes/5")),
    )
    .await
    .unwrap();
    assert_eq!((r.status, body.len()), (200, 5));
}

#[tokio::test]
async fn a_server_with_another_alpn_or_no_common_version_is_one_line() {
    // A QUIC server that offers only `hq-interop`.
    let names = vec!["127.0.0.1".to_string()];
    let (cfg, pem) = self_signed(&names).unwrap();
    let mut tls = (*cfg).clone();
    tls.alpn_protocols = vec![b"hq-interop".to_vec()];
    tls.max_early_data_size = 0;
    let sc = quinn::ServerConfig::with_crypto(Arc::new(
        quinn::crypto::rustls::QuicServerConfig::try_from(Arc::new(tls)).unwrap(),
    ));
    let ep = quinn::Endpoint::server(sc, "127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = ep.local_addr().unwrap();
    tokio::spawn(async move {
        while let Some(i) = ep.accept().await {
            let _ = i.await;
        }
    });
    let e = fetch(
        &client(&pem, Version::Http3Only),
        &Request::get(url(addr, "/")),
    )
    .await
    .expect_err("no common ALPN");
    let line = format!(
        "{e}: {}",
        std::error::Error::source(&e).map_or(String::new(), |s| s.to_string())
    );
    assert!(matches!(e, HttpError::Tls { .. }), "{line}");
    assert!(!line.contains('\n'), "{line}");

    // A "server" that answers every packet with a Version Negotiation
    // listing only a version we do not speak (draft-29).
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let vaddr = udp.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut b = [0u8; 1500];
        udp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        while let Ok((n, from)) = udp.recv_from(&mut b) {
            if n < 7 || b[0] & 0x80 == 0 {
                continue;
            }
            let dl = b[5] as usize;
            let (dcid, rest) = (&b[6..6 + dl], &b[6 + dl..n]);
            let scid = &rest[1..1 + rest[0] as usize];
            let mut vn = vec![0x80 | 0x2a, 0, 0, 0, 0, scid.len() as u8];
            vn.extend_from_slice(scid);
            vn.push(dcid.len() as u8);
            vn.extend_from_slice(dcid);
            vn.extend_from_slice(&[0xff, 0, 0, 0x1d]);
            let _ = udp.send_to(&vn, from);
        }
    });
    let e = fetch(
        &client(&pem, Version::Http3Only),
        &Request::get(url(vaddr, "/")),
    )
    .await
    .expect_err("no common version");
    let line = e.to_string();
    assert!(line.contains("no QUIC version we do"), "{line}");
    assert!(
        matches!(
            e,
            HttpError::Quic {
                connecting: true,
                ..
            }
        ),
        "{e:?}"
    );
}
