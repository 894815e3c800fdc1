//! `serve`'s HTTP/2 connection (hyper's framing, our limits and answers):
//! any bytes after the preface end the connection within its timeouts,
//! never a panic, never a hang. Each input runs on a fresh duplex pipe
//! with a 20 ms header and idle timeout; what the server writes back is
//! read and dropped (the client side never holds a window).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let lim = tcpwise_server::Limits {
        header_timeout: Duration::from_millis(20),
        idle_timeout: Duration::from_millis(20),
        max_body: 300,
        max_bytes: 100_000,
        max_delay: Duration::from_millis(5),
        ..Default::default()
    };
    let input = [tcpwise_server::h2::PREFACE, data].concat();
    runtime().block_on(async {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (mut cr, mut cw) = tokio::io::split(client);
        let serve = tcpwise_server::h2::serve_connection(
            server,
            ("http", None, tcpwise_server::zero_rtt::Handshake::done()),
            None,
            lim,
            tcpwise_outcome::Shutdown::new(),
        );
        let feed = async move {
            let _ = cw.write_all(&input).await;
            // Keep the write side open: the server's timers must end it.
            std::future::pending::<()>().await;
        };
        let drain = async move {
            let mut buf = vec![0u8; 64 * 1024];
            while matches!(cr.read(&mut buf).await, Ok(n) if n > 0) {}
        };
        let ended = tokio::time::timeout(Duration::from_secs(2), async {
            tokio::select! {
                _ = serve => {}
                _ = feed => {}
            }
        });
        let (r, ()) = tokio::join!(ended, drain);
        assert!(r.is_ok(), "the connection outlived its timeouts");
    });
});
