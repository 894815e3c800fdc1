//! Probes: a foreign probe opens a new connection and fetches the small
//! object, its TCP handshake, TLS handshake and request timed apart (each
//! one round trip); a self probe fetches it on a load-generating
//! connection, behind that connection's own queued data.

use crate::load::expect_ok;
use crate::stats::Round;
use std::time::Instant;
use tcpwise_client::{Client, ClientConfig, Request, Response};
use url::Url;

/// A probe round's times and the bytes it moved (to keep probes under
/// their share of the capacity).
#[derive(Debug, Clone, Copy, Default)]
pub struct Probed {
    /// The times.
    pub round: Round,
    /// Bytes on the wire of the foreign connection plus the self probe's.
    pub bytes: u64,
    /// Why a part failed (kept for `-v`; a failed part has no time).
    pub failed: bool,
}

async fn fetch(client: &Client, url: &Url) -> Option<Response> {
    client
        .request_streaming(
            &Request::get(url.clone()),
            |h| expect_ok(h.status),
            |_| Ok(()),
        )
        .await
        .ok()
}

/// A foreign probe on a fresh client: (TCP, TLS, HTTP) ms and its bytes.
pub async fn foreign(cfg: &ClientConfig, small: &Url) -> Option<(Round, u64)> {
    let client = Client::new(cfg.clone());
    let r = fetch(&client, small).await?;
    let t = &r.timings;
    let connected = t.connect_ms?;
    let tcp = connected - t.dns_ms.unwrap_or(0.0);
    let tls = t.tls_ms.map(|tls| tls - connected);
    let http = t.body_done_ms - t.request_written_ms;
    let bytes = r.conn.tcp_info_end.as_ref().map_or(0, |i| {
        i.bytes_acked.unwrap_or(0) + i.bytes_received.unwrap_or(0)
    });
    Some((
        Round {
            tcp_ms: Some(tcp),
            tls_ms: tls,
            http_ms: Some(http),
            ..Round::default()
        },
        bytes,
    ))
}

/// A self probe on `lgc`'s connection: ms and bytes, or `None` when it
/// did not ride on that connection (an HTTP/1.1 load, which cannot
/// multiplex, made the client open another).
pub async fn on_load(lgc: &Client, small: &Url) -> Option<(f64, u64)> {
    let r = fetch(lgc, small).await?;
    if !r.conn.reused {
        return None;
    }
    let ms = r.timings.body_done_ms - r.timings.request_written_ms;
    Some((
        ms,
        r.head_bytes + r.request_head.len() as u64 + r.body_bytes,
    ))
}

/// One round: the foreign and the self probe at once.
pub async fn round(cfg: &ClientConfig, lgc: Option<Client>, small: &Url, start: Instant) -> Probed {
    let at_s = start.elapsed().as_secs_f64();
    let self_probe = async {
        match &lgc {
            Some(c) => on_load(c, small).await,
            None => None,
        }
    };
    let (f, s) = tokio::join!(foreign(cfg, small), self_probe);
    let failed = f.is_none() || (lgc.is_some() && s.is_none());
    let (mut round, fb) = f.unwrap_or_default();
    round.at_s = at_s;
    round.self_ms = s.map(|s| s.0);
    Probed {
        round,
        bytes: fb + s.map_or(0, |s| s.1),
        failed,
    }
}
