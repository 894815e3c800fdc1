//! The client against raw sockets serving malformed responses, against
//! nginx closing idle connections, and against our own server.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;
use tcpwise_client::{Client, ClientConfig, HttpError, Request};
use tcpwise_pool::Policy;

/// Serves `reply` (then `after`) to every connection on a raw socket.
fn raw_server(reply: &'static [u8], reset: bool) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().take(4) {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(reply);
            if reset {
                // SO_LINGER 0: close sends RST.
                let sock = socket2::SockRef::from(&s);
                let _ = sock.set_linger(Some(Duration::ZERO));
            }
            drop(s);
        }
    });
    port
}

async fn get(
    port: u16,
    path: &str,
) -> (
    Client,
    Result<tcpwise_client::Response, HttpError>,
    url::Url,
) {
    let c = Client::new(ClientConfig::default());
    let url = url::Url::parse(&format!("http://127.0.0.1:{port}{path}")).unwrap();
    let r = c.request(&Request::get(url.clone()), |_| Ok(())).await;
    (c, r, url)
}

#[tokio::test]
async fn malformed_responses_are_clear_errors_and_the_connection_is_dropped() {
    let cases: &[(&[u8], bool, &str)] = &[
        (b"HTTP/1.1 two hundred OK\r\n\r\n", false, "bad response"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello",
            false,
            "bad response",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly a few",
            false,
            "failed after",
        ),
        (
            b"\x16\x03\x01garbage that is not HTTP at all\r\n\r\n",
            false,
            "bad response",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\npartial body",
            true,
            "failed after",
        ),
    ];
    for (reply, reset, needle) in cases {
        let port = raw_server(reply, *reset);
        let (c, r, url) = get(port, "/").await;
        let e = r.expect_err("malformed response must fail");
        let msg = e.to_string();
        assert!(
            msg.contains(needle) && msg.contains("127.0.0.1"),
            "{reply:?}: {msg}"
        );
        assert_eq!(c.idle_count(&url), 0, "a broken connection is never pooled");
    }
}

#[tokio::test]
async fn reuses_by_policy_and_reports_why() {
    let tx = tcpwise_outcome::Shutdown::new();
    let rx = tx.clone();
    let (atx, arx) = tokio::sync::oneshot::channel();
    let opts = tcpwise_server::ServeOptions::new("127.0.0.1:0".parse().unwrap());
    let srv = tokio::spawn(tcpwise_server::serve(opts, rx, move |a| {
        let _ = atx.send(a);
    }));
    let addr = arx.await.unwrap();
    let base = url::Url::parse(&format!("http://{addr}")).unwrap();
    let c = Client::new(ClientConfig {
        policy: Policy::MaxBurst,
        ..ClientConfig::default()
    });
    // Two connections at once: one moves 1 MB, the other 1 KB.
    let (big, small) = (
        Request::get(base.join("/bytes/1000000").unwrap()),
        Request::get(base.join("/delay/50/bytes/1000").unwrap()),
    );
    let (a, b) = tokio::join!(c.request(&big, |_| Ok(())), c.request(&small, |_| Ok(())));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_ne!(a.conn.id, b.conn.id);
    assert_eq!(c.idle_count(&base), 2);
    let r = c
        .request(&Request::get(base.join("/bytes/10").unwrap()), |_| Ok(()))
        .await
        .unwrap();
    assert!(r.conn.reused);
    assert_eq!(r.conn.id, a.conn.id, "max-burst takes the 1 MB connection");
    assert!(
        r.conn.reason.as_deref().unwrap().contains("1000000"),
        "{:?}",
        r.conn.reason
    );
    assert_eq!(r.conn.candidates.len(), 2);
    assert!(r.timings.first_byte_ms >= r.timings.request_written_ms);
    assert!(r.conn.tcp_info_end.is_some());
    tx.trigger();
    srv.await.unwrap().unwrap();
}

fn nginx_available() -> bool {
    let ok = std::process::Command::new("nginx")
        .arg("-v")
        .output()
        .is_ok();
    if !ok {
        if std::env::var("TCPWISE_REQUIRE_NETNS").as_deref() == Ok("1") {
            panic!("nginx is required in CI (.ci/run installs nginx-light)");
        }
        eprintln!("skipping: nginx is not installed");
    }
    ok
}

#[tokio::test]
async fn nginx_closing_idle_connections_causes_no_error() {
    if !nginx_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tcpwise-nginx-ka-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("www")).unwrap();
    std::fs::write(dir.join("www/a.txt"), "hello\n").unwrap();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let d = dir.display();
    let conf = format!(
        "daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         events {{}}\n\
         http {{ access_log {d}/access.log; client_body_temp_path {d}; keepalive_timeout 1s;\n\
           server {{ listen 127.0.0.1:{port}; root {d}/www; }} }}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let mut ng = std::process::Command::new("nginx")
        .args(["-c", &format!("{d}/nginx.conf"), "-p", &d.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let c = Client::new(ClientConfig::default());
    let url = url::Url::parse(&format!("http://127.0.0.1:{port}/a.txt")).unwrap();
    let first = c
        .request(&Request::get(url.clone()), |_| Ok(()))
        .await
        .unwrap();
    assert_eq!(first.status, 200);
    // nginx closes the idle connection after 1 s.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let second = c.request(&Request::get(url.clone()), |_| Ok(())).await;
    // SIGTERM: the master stops its workers too (SIGKILL would orphan them).
    tcpwise_sys::kill(ng.id() as i32, libc::SIGTERM);
    let _ = ng.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let second = second.expect("a closed idle connection must not fail the request");
    assert_eq!(second.status, 200);
    assert!(
        !second.conn.reused || second.retried,
        "the dead connection was not handed out as alive"
    );
}

/// An HTTPS origin with `cfg` on an ephemeral port: (address, stop).
async fn tls_origin(
    cfg: std::sync::Arc<rustls::ServerConfig>,
) -> (std::net::SocketAddr, tcpwise_outcome::Shutdown) {
    let tx = tcpwise_outcome::Shutdown::new();
    let rx = tx.clone();
    let (atx, arx) = tokio::sync::oneshot::channel();
    let opts = tcpwise_server::ServeOptions {
        tls: Some(cfg),
        ..tcpwise_server::ServeOptions::new("127.0.0.1:0".parse().unwrap())
    };
    tokio::spawn(tcpwise_server::serve(opts, rx, move |a| {
        let _ = atx.send(a);
    }));
    (arx.await.unwrap(), tx)
}

#[tokio::test]
async fn untrusted_certificates_are_refused_with_the_reason_and_insecure_is_explicit() {
    use tcpwise_http::tls::self_signed_between;
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let (fresh, fresh_pem) = self_signed_between(&names, None).unwrap();
    let (expired, expired_pem) =
        self_signed_between(&names, Some(((2020, 1, 1), (2021, 1, 1)))).unwrap();
    let (other, other_pem) = self_signed_between(&["example.org".to_string()], None).unwrap();
    for (cfg, pem, trusted, why) in [
        (
            fresh.clone(),
            fresh_pem.clone(),
            false,
            "issued by an authority this client does not know",
        ),
        (expired, expired_pem, true, "it expired on "),
        (
            other,
            other_pem,
            true,
            "it is for example.org, not 127.0.0.1",
        ),
        (fresh, fresh_pem, true, ""),
    ] {
        let (addr, _stop) = tls_origin(cfg).await;
        let url = url::Url::parse(&format!("https://127.0.0.1:{}/health", addr.port())).unwrap();
        let extra_ca = if trusted {
            vec![pem.into_bytes()]
        } else {
            Vec::new()
        };
        let c = Client::new(ClientConfig {
            extra_ca: extra_ca.clone(),
            ..ClientConfig::default()
        });
        let r = c.request(&Request::get(url.clone()), |_| Ok(())).await;
        if why.is_empty() {
            assert_eq!(r.unwrap().status, 200);
            continue;
        }
        match r {
            Err(tcpwise_client::HttpError::Certificate { why: w, .. }) => {
                assert!(w.contains(why), "{why}: {w}");
                assert!(!w.contains('{'), "a sentence, not a structure: {w}");
            }
            other => panic!("{why}: {other:?}"),
        }
        // -k: accepted, explicitly.
        let k = Client::new(ClientConfig {
            insecure: true,
            ..ClientConfig::default()
        });
        let r = k.request(&Request::get(url), |_| Ok(())).await.unwrap();
        assert_eq!(r.status, 200, "{why} with -k");
    }
}
