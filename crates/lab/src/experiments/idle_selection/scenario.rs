//! Firefox's idle-connection experiment as a reusable scenario: load a
//! "base page" of objects in parallel (one per connection), pause, then
//! fetch one more object on an idle connection chosen by the pool policy,
//! and time it from request written to last byte. Over HTTP/2 (prior
//! knowledge) or HTTP/3 (one QUIC connection) the page and the object
//! share the origin's one connection: the comparison a reader asks for
//! beside the HTTP/1.1 policies.

use serde::Serialize;
use std::time::Duration;
use tcpwise_client::{Client, ClientConfig, HttpError, Request};
use url::Url;

/// The scenario's shape.
#[derive(Debug, Clone)]
pub struct IdleSelection {
    /// Server base URL (`http://host:port`; `https://` for HTTP/3).
    pub base: Url,
    /// Sizes of the base page's objects, fetched in parallel.
    pub page: Vec<u64>,
    /// Idle time before the target object.
    pub pause: Duration,
    /// Size of the target object.
    pub target: u64,
}

impl IdleSelection {
    /// The field report's page: five small images and one of 2 MB, then a 25 KB
    /// object after a one-second pause.
    pub fn seed(base: Url) -> IdleSelection {
        IdleSelection {
            base,
            page: vec![3_000, 5_000, 8_000, 12_000, 20_000, 2_000_000],
            pause: Duration::from_secs(1),
            target: 25_000,
        }
    }
}

/// One run's outcome.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct IdleRun {
    /// Policy name.
    pub policy: String,
    /// Target load time: request written to last byte, ms.
    pub load_ms: f64,
    /// Connection id the target went on.
    pub conn: u64,
    /// Largest burst that connection had moved before, bytes.
    pub chosen_burst: u64,
    /// The pool's reason.
    pub reason: Option<String>,
    /// Smoothed RTT of the chosen connection before the request, ms
    /// (HTTP/3: QUIC's, after it).
    pub rtt_ms: Option<f64>,
    /// Congestion window of the chosen connection as the client sees it (its own), segments.
    pub client_cwnd: Option<u32>,
}

/// Runs the scenario once on a fresh client.
pub async fn run_idle_selection(
    cfg: ClientConfig,
    s: &IdleSelection,
) -> Result<IdleRun, HttpError> {
    // With HTTP/2 and HTTP/3 the page shares one connection by
    // construction: there is no choice for a policy to make.
    use tcpwise_client::Version;
    let one_conn = cfg.version != Version::Http1;
    let policy = match cfg.version {
        Version::Http1 => cfg.policy.name().to_string(),
        Version::Http3 | Version::Http3Only => "http3".to_string(),
        _ => "http2".to_string(),
    };
    let client = Client::new(ClientConfig {
        max_conns_per_origin: s.page.len().max(1),
        ..cfg
    });
    let url = |n: u64| {
        s.base
            .join(&format!("/bytes/{n}"))
            .map_err(|e| HttpError::Url {
                url: s.base.to_string(),
                why: e.to_string(),
            })
    };
    let mut tasks = Vec::new();
    for &n in &s.page {
        let c = client.clone();
        let req = Request::get(url(n)?);
        tasks.push(tokio::spawn(
            async move { c.request(&req, |_| Ok(())).await },
        ));
    }
    for t in tasks {
        t.await.expect("task")?;
    }
    tokio::time::sleep(s.pause).await;
    let before = client.idle_count(&s.base);
    let r = client
        .request(&Request::get(url(s.target)?), |_| Ok(()))
        .await?;
    debug_assert!(one_conn || before > 0);
    Ok(IdleRun {
        policy,
        load_ms: r.timings.load_ms(),
        conn: r.conn.id,
        chosen_burst: r.conn.burst_before,
        reason: r.conn.reason.clone(),
        rtt_ms: r
            .conn
            .tcp_info_start
            .as_ref()
            .map(|i| f64::from(i.rtt_us) / 1e3)
            .or(r.conn.quic.as_ref().map(|q| q.rtt_ms)),
        client_cwnd: r.conn.tcp_info_start.as_ref().map(|i| i.snd_cwnd),
    })
}
