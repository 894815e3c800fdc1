//! HTTP/3 load (`--http3`): each connection is a QUIC connection (its own
//! UDP socket, as each TCP connection has its own port) carrying `-m`
//! streams, in the same closed loop per stream and with the same
//! accounting as HTTP/2 ([`crate::h2::multiplexed`]); quinn and the `h3`
//! crate do QUIC and HTTP/3, ALPN `h3` alone.

use crate::h2::{Exchange, Outcome, multiplexed};
use crate::shared::{Shared, Stats, StreamRequests};
use bytes::{Buf, Bytes};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

type Send = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// The QUIC client config from the run's TLS config: ALPN `h3`.
pub(crate) fn client_config(tls: &rustls::ClientConfig) -> Result<quinn::ClientConfig, String> {
    let mut c = tls.clone();
    c.alpn_protocols = vec![b"h3".to_vec()];
    c.enable_early_data = false;
    let q = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::new(c))
        .map_err(|e| format!("the TLS config cannot do QUIC: {e}"))?;
    Ok(quinn::ClientConfig::new(Arc::new(q)))
}

impl Exchange for Send {
    async fn exchange(&mut self, plan: &StreamRequests, k: usize) -> Outcome {
        let fail_write = |e: &dyn std::fmt::Display| {
            Outcome::Failed(|e| &mut e.write, format!("HTTP/3 send: {e}"))
        };
        let fail_read = |e: &dyn std::fmt::Display| {
            Outcome::Failed(|e| &mut e.read, format!("HTTP/3 read: {e}"))
        };
        let mut stream = match self.send_request(plan.request(k)).await {
            Ok(s) => s,
            Err(e) => return fail_write(&e),
        };
        if let Some(b) = &plan.body
            && let Err(e) = stream.send_data(b.clone()).await
        {
            return fail_write(&e);
        }
        if let Err(e) = stream.finish().await {
            return fail_write(&e);
        }
        let resp = match stream.recv_response().await {
            Ok(r) => r,
            Err(e) => return fail_read(&e),
        };
        let first_byte = Instant::now();
        let mut read = 0u64;
        loop {
            match stream.recv_data().await {
                Ok(Some(d)) => read += d.remaining() as u64,
                Ok(None) => break,
                Err(e) => return fail_read(&e),
            }
        }
        Outcome::Done {
            status: resp.status().as_u16(),
            first_byte,
            read,
        }
    }
}

/// One QUIC connection: connect (again after a failure), then `-m` streams.
pub(crate) async fn connection(shared: Arc<Shared>, stats: Rc<RefCell<Stats>>) {
    multiplexed(shared, stats, |shared| async move {
        let cfg = shared.h3.clone().ok_or("no QUIC config")?;
        let any: std::net::SocketAddr = if shared.addr.is_ipv6() {
            "[::]:0".parse().expect("an address")
        } else {
            "0.0.0.0:0".parse().expect("an address")
        };
        let ep = quinn::Endpoint::client(any).map_err(|e| format!("UDP socket: {e}"))?;
        let conn = ep
            .connect_with(cfg, shared.addr, &shared.host)
            .map_err(|e| e.to_string())?
            .await
            .map_err(|e| format!("QUIC handshake: {e}"))?;
        let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(conn))
            .await
            .map_err(|e| format!("HTTP/3 set-up: {e}"))?;
        // The endpoint lives as long as the connection's driver.
        let drive = async move {
            let _ep = ep;
            std::future::poll_fn(|cx| driver.poll_close(cx)).await
        };
        Ok::<_, String>((send, drive))
    })
    .await
}
