//! The page loads: one testbed per path with `tcpwise serve --tls
//! --http3 -C cubic` in-process in the server namespace, each trial
//! loading the page once per way in a rotating order, on a fresh client
//! each time (a cold load: handshakes included, as a browser's first
//! visit). Around each load the counters of what the path and the
//! transports did: the link's drops in each direction, the server
//! namespace's TCP segments sent and retransmitted (the kernel's own
//! `RetransSegs`, per namespace), and the QUIC server's packets sent and
//! declared lost (quinn's statistics, this server's connections alone).
//! The paths run at once, each on its own thread and testbed.

use super::{CONGESTION, H1_CONNECTIONS, Plan, Proto};
use crate::common::Bed;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use std::time::{Duration, Instant};
use tcpwise_emu::Role;
use tcpwise_emu::netns::Netns;
use tcpwise_http::server::h3::{QuicBook, QuicTotals};
use tcpwise_http::{Client, ClientConfig, Request, ServeOptions, Version};
use tcpwise_sys::steal_ticks;

/// One page load.
#[derive(Debug, Clone, Serialize)]
pub struct Load {
    /// The path's name.
    pub path: String,
    /// The way it was loaded.
    pub proto: Proto,
    /// Which trial (1-based).
    pub trial: usize,
    /// Why it failed (`None`: every object arrived whole).
    pub error: Option<String>,
    /// Page-load time: from the start (connects and handshakes
    /// included) to the last byte of the last object, ms.
    pub plt_ms: f64,
    /// Until the HTML's last byte, ms.
    pub html_ms: f64,
    /// Body bytes received.
    pub bytes: u64,
    /// Connections the client opened.
    pub connections: u64,
    /// Packets the link dropped, server to client.
    pub drops_down: u64,
    /// Packets the link dropped, client to server.
    pub drops_up: u64,
    /// TCP segments the server sent (its namespace's `OutSegs`).
    pub tcp_sent: Option<u64>,
    /// TCP segments the server retransmitted (`RetransSegs`).
    pub tcp_retrans: Option<u64>,
    /// QUIC packets the server sent.
    pub quic_sent: u64,
    /// QUIC packets the server declared lost.
    pub quic_lost: u64,
    /// Hypervisor steal during the load, ticks.
    pub steal_ticks: Option<u64>,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Details {
    /// Every load, in the order they ran.
    pub loads: Vec<Load>,
    /// Each path as the emulator describes it.
    pub paths: Vec<String>,
    /// The page: the HTML's size, then each object's.
    pub page: Vec<u64>,
    /// The server's TCP congestion control.
    pub congestion: String,
}

/// What [`measure`] returns.
pub struct Measured {
    /// The loads.
    pub details: Details,
    /// The emulator's error on each testbed.
    pub paths: Vec<PathError>,
}

/// The longest a page load may take before it counts as failed (about
/// five times what one connection needs for the page at 5 % loss).
const LOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// What a load's counters read before and after it.
#[derive(Clone, Copy, Default)]
struct Counters {
    drops: [u64; 2],
    tcp: Option<(u64, u64)>,
    quic: QuicTotals,
}

/// The server namespace's TCP `OutSegs` and `RetransSegs`, read on a
/// thread inside it (`/proc/thread-self`: `/proc/self/net` would be the
/// process's namespace, not the thread's).
fn tcp_counters(ns: &Netns) -> Option<(u64, u64)> {
    let text = ns
        .run(|| std::fs::read_to_string("/proc/thread-self/net/snmp"))
        .ok()?
        .ok()?;
    let mut tcp = text.lines().filter(|l| l.starts_with("Tcp:"));
    let (names, values) = (tcp.next()?, tcp.next()?);
    let field = |want: &str| {
        names
            .split_whitespace()
            .zip(values.split_whitespace())
            .find(|(n, _)| *n == want)
            .and_then(|(_, v)| v.parse::<u64>().ok())
    };
    Some((field("OutSegs")?, field("RetransSegs")?))
}

fn client_config(proto: Proto) -> ClientConfig {
    let d = ClientConfig::default();
    ClientConfig {
        insecure: true,
        version: match proto {
            Proto::Http1 => Version::Http1,
            Proto::Http2 => Version::Http2,
            Proto::Http3 => Version::Http3Only,
        },
        max_conns_per_origin: match proto {
            Proto::Http1 => H1_CONNECTIONS,
            _ => d.max_conns_per_origin,
        },
        ..d
    }
}

/// One object: its body bytes and the connection's id.
async fn object(c: &Client, url: url::Url, want: u64) -> Result<(u64, u64), String> {
    let r = c
        .request(&Request::get(url.clone()), |_| Ok(()))
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if r.status != 200 || r.body_bytes != want {
        return Err(format!(
            "{url}: status {}, {} of {want} bytes",
            r.status, r.body_bytes
        ));
    }
    Ok((r.body_bytes, r.conn.id))
}

/// One page load on a fresh client: the HTML, then every object at
/// once (the client's pool decides the connections). Returns (page-load
/// time, HTML time, bytes, connections).
async fn load_page(
    proto: Proto,
    base: &url::Url,
    page: &[u64],
) -> Result<(f64, f64, u64, u64), String> {
    let c = Client::new(client_config(proto));
    let url = |n: u64| base.join(&format!("bytes/{n}")).expect("a valid URL");
    let start = Instant::now();
    let (mut bytes, first) = object(&c, url(page[0]), page[0]).await?;
    let html_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut conns = std::collections::BTreeSet::from([first]);
    let mut set = tokio::task::JoinSet::new();
    for &n in &page[1..] {
        let (c, u) = (c.clone(), url(n));
        set.spawn(async move { object(&c, u, n).await });
    }
    while let Some(r) = set.join_next().await {
        let (b, id) = r.map_err(|e| format!("an object's task ended: {e}"))??;
        bytes += b;
        conns.insert(id);
    }
    let plt_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok((plt_ms, html_ms, bytes, conns.len() as u64))
}

/// One path's loads, its description and the emulator's error on it.
type PathLoads = (Vec<Load>, String, PathError);

/// Loads the page `plan.trials` times each way on one path.
fn one_path(
    plan: &Plan,
    path: &super::PathPlan,
    opts: &LabOptions,
    progress: &dyn Progress,
    tls: std::sync::Arc<rustls::ServerConfig>,
) -> Result<PathLoads, LabError> {
    opts.check()?;
    let mut bed = Bed::start_path(opts, &path.spec, &path.stem, Vec::new())?;
    // Said once the testbed has its slot (it may wait for one).
    let id = progress.step(
        &format!("head-of-line: {}", path.name),
        (plan.trials * Proto::ALL.len()) as u64,
    );
    // This server's QUIC connections alone: other paths' servers run in
    // this process at the same time.
    let book = QuicBook::default();
    let port = bed.serve_with(ServeOptions {
        tls: Some(tls.clone()),
        http3: true,
        quic_book: Some(book.clone()),
        congestion: Some(CONGESTION.into()),
        ..ServeOptions::new("[::]:0".parse().expect("valid"))
    })?;
    let base: url::Url = format!("https://{}/", bed.peer(port))
        .parse()
        .expect("a valid URL");
    let gauges = bed.tb.gauges();
    let server = bed.tb.netns(Role::Server).expect("pair has a server");
    let read = || Counters {
        drops: [gauges[1].read().dropped, gauges[0].read().dropped],
        tcp: tcp_counters(server),
        quic: book.totals(),
    };
    let got = bed.in_client(false, || async {
        let mut v = Vec::new();
        for trial in 1..=plan.trials {
            // The ways in a rotating order: drift hits each alike.
            for k in 0..Proto::ALL.len() {
                opts.check()?;
                let proto = Proto::ALL[(k + trial) % Proto::ALL.len()];
                let (s0, c0) = (steal_ticks(), read());
                let r = tokio::time::timeout(LOAD_TIMEOUT, load_page(proto, &base, &plan.page))
                    .await
                    .unwrap_or_else(|_| Err(format!("no page after {LOAD_TIMEOUT:?}")));
                // The connections close (FINs, QUIC's CONNECTION_CLOSE)
                // before the counters are read again.
                tokio::time::sleep(Duration::from_millis(300)).await;
                let c1 = read();
                let (plt_ms, html_ms, bytes, connections, error) = match r {
                    Ok((p, h, b, c)) => (p, h, b, c, None),
                    Err(e) => (f64::NAN, f64::NAN, 0, 0, Some(e)),
                };
                let tcp = c0.tcp.zip(c1.tcp);
                v.push(Load {
                    path: path.name.clone(),
                    proto,
                    trial,
                    error,
                    plt_ms,
                    html_ms,
                    bytes,
                    connections,
                    drops_down: c1.drops[0] - c0.drops[0],
                    drops_up: c1.drops[1] - c0.drops[1],
                    tcp_sent: tcp.map(|(a, b)| b.0 - a.0),
                    tcp_retrans: tcp.map(|(a, b)| b.1 - a.1),
                    quic_sent: c1.quic.sent_packets - c0.quic.sent_packets,
                    quic_lost: c1.quic.lost_packets - c0.quic.lost_packets,
                    steal_ticks: s0.zip(steal_ticks()).map(|(a, b)| b - a),
                });
                progress.inc(id, 1);
            }
        }
        Ok(v)
    })?;
    // A way that never loaded the page on a path is a failure of the
    // experiment, not a figure.
    for proto in Proto::ALL {
        let mine: Vec<&Load> = got.iter().filter(|l| l.proto == proto).collect();
        if !mine.is_empty() && mine.iter().all(|l| l.error.is_some()) {
            return Err(LabError::Server {
                what: "http",
                source: std::io::Error::other(format!(
                    "head-of-line: {} never loaded the page on {}: {}",
                    proto.label(),
                    path.name,
                    mine[0].error.as_deref().unwrap_or_default()
                )),
            });
        }
    }
    let failed = got.iter().filter(|l| l.error.is_some()).count();
    progress.done(
        id,
        &format!(
            "head-of-line: {}: {} loads, {failed} failed",
            path.name,
            got.len()
        ),
    );
    let desc = bed.desc.clone();
    Ok((got, desc, bed.finish(None)?))
}

/// Loads the page on every path, the paths at once (each its own
/// testbed, within the lab's slots; the ways interleave within each path,
/// so a path's share of the machine hits the three alike). A failing path
/// stops the others ([`crate::together`]).
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let tls = crate::common::self_signed()?;
    let (mut loads, mut paths, mut descs) = (Vec::new(), Vec::new(), Vec::new());
    let parts = plan
        .paths
        .iter()
        .map(|path| {
            let tls = tls.clone();
            Box::new(move |o: &LabOptions| one_path(plan, path, o, progress, tls))
                as crate::together::Part<'_, PathLoads>
        })
        .collect();
    for (got, desc, perr) in crate::together::at_once(opts, "head-of-line", parts)? {
        descs.push(desc);
        loads.extend(got);
        paths.push(perr);
    }
    Ok(Measured {
        details: Details {
            loads,
            paths: descs,
            page: plan.page.clone(),
            congestion: CONGESTION.into(),
        },
        paths,
    })
}
