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
use crate::common::ServedTestbed;
use crate::sequential::driver::{Budget, drive};
use crate::together::Part;
use crate::{LabError, LabOptions, Progress};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use tcpwise_client::{Client, ClientConfig, Request, Version};
use tcpwise_emu::Role;
use tcpwise_emu::netns::Netns;
use tcpwise_server::ServeOptions;
use tcpwise_server::h3::{QuicBook, QuicTotals};
use tcpwise_sys::steal_ticks;

/// One page load.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// Loaded at once with the other way on the same link (the decision's
    /// rounds at the highest loss): the link's drops are then the pair's,
    /// and the transport counters each way's own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beside: bool,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
pub type Measured = crate::stages::Measured<Details>;

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

/// A path's testbed with its origin, ready for loads.
struct PathBed<'p> {
    path: &'p super::PathPlan,
    bed: ServedTestbed,
    base: url::Url,
    book: QuicBook,
}

/// Starts `path`'s testbed and its origin (`tcpwise serve --tls --http3
/// -C cubic`, in-process in the server namespace).
fn start<'p>(
    path: &'p super::PathPlan,
    tls: std::sync::Arc<rustls::ServerConfig>,
    opts: &LabOptions,
) -> Result<PathBed<'p>, LabError> {
    opts.check()?;
    let mut bed = ServedTestbed::start_path(opts, &path.spec, &path.stem, Vec::new())?;
    // This server's QUIC connections alone: other paths' servers run in
    // this process at the same time.
    let book = QuicBook::default();
    let port = bed.serve_with(ServeOptions {
        tls: Some(tls),
        http3: true,
        quic_book: Some(book.clone()),
        congestion: Some(CONGESTION.into()),
        ..ServeOptions::new("[::]:0".parse().expect("valid"))
    })?;
    let base: url::Url = format!("https://{}/", bed.peer(port))
        .parse()
        .expect("a valid URL");
    Ok(PathBed {
        path,
        bed,
        base,
        book,
    })
}

/// One load's outcome: (page-load time, HTML time, bytes, connections).
type Loaded = Result<(f64, f64, u64, u64), String>;

/// A page load under the load timeout.
async fn timed_load(proto: Proto, base: &url::Url, page: &[u64]) -> Loaded {
    tokio::time::timeout(LOAD_TIMEOUT, load_page(proto, base, page))
        .await
        .unwrap_or_else(|_| Err(format!("no page after {LOAD_TIMEOUT:?}")))
}

impl PathBed<'_> {
    /// The counters a load is measured by, now.
    fn read(&self) -> Counters {
        let gauges = self.bed.tb.gauges();
        let server = self.bed.tb.netns(Role::Server).expect("pair has a server");
        Counters {
            drops: [gauges[1].read().dropped, gauges[0].read().dropped],
            tcp: tcp_counters(server),
            quic: self.book.totals(),
        }
    }

    /// A load's record from its outcome and the counters around it
    /// (`beside`: the other way loaded at once, so only this way's own
    /// transport counters are its).
    fn record(
        &self,
        proto: Proto,
        trial: usize,
        r: Loaded,
        (c0, c1): (Counters, Counters),
        steal: Option<u64>,
        beside: bool,
    ) -> Load {
        let (plt_ms, html_ms, bytes, connections, error) = match r {
            Ok((p, h, b, c)) => (p, h, b, c, None),
            Err(e) => (f64::NAN, f64::NAN, 0, 0, Some(e)),
        };
        let tcp = c0
            .tcp
            .zip(c1.tcp)
            .filter(|_| !beside || proto != Proto::Http3);
        let quic = !beside || proto == Proto::Http3;
        Load {
            path: self.path.name.clone(),
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
            quic_sent: if quic {
                c1.quic.sent_packets - c0.quic.sent_packets
            } else {
                0
            },
            quic_lost: if quic {
                c1.quic.lost_packets - c0.quic.lost_packets
            } else {
                0
            },
            steal_ticks: steal,
            beside,
        }
    }

    /// Loads the page once each way of `protos`, in an order rotating
    /// with `trial` (drift hits each alike), each on a fresh client (a
    /// cold load: handshakes included, as a browser's first visit).
    fn trial(
        &self,
        page: &[u64],
        protos: &[Proto],
        trial: usize,
        opts: &LabOptions,
    ) -> Result<Vec<Load>, LabError> {
        self.bed.in_client(false, || async {
            let mut v = Vec::new();
            for k in 0..protos.len() {
                opts.check()?;
                let proto = protos[(k + trial) % protos.len()];
                let (s0, c0) = (steal_ticks(), self.read());
                let r = timed_load(proto, &self.base, page).await;
                // The connections close (FINs, QUIC's CONNECTION_CLOSE)
                // before the counters are read again.
                tokio::time::sleep(Duration::from_millis(300)).await;
                let steal = s0.zip(steal_ticks()).map(|(a, b)| b - a);
                v.push(self.record(proto, trial, r, (c0, self.read()), steal, false));
            }
            Ok(v)
        })
    }

    /// Loads the page over HTTP/2 and HTTP/3 at once, each on a fresh
    /// client: the decision's rounds at the highest loss, where one
    /// connection moves about 0.6 Mbit/s (Mathis et al.) of the link's
    /// 20, so the two barely share it (the section prints the pairs'
    /// largest share of the rate).
    fn pair_at_once(
        &self,
        page: &[u64],
        trial: usize,
        opts: &LabOptions,
    ) -> Result<Vec<Load>, LabError> {
        opts.check()?;
        self.bed.in_client(false, || async {
            let (s0, c0) = (steal_ticks(), self.read());
            let (h2, h3) = tokio::join!(
                timed_load(Proto::Http2, &self.base, page),
                timed_load(Proto::Http3, &self.base, page)
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
            let (steal, c1) = (s0.zip(steal_ticks()).map(|(a, b)| b - a), self.read());
            Ok(vec![
                self.record(Proto::Http2, trial, h2, (c0, c1), steal, true),
                self.record(Proto::Http3, trial, h3, (c0, c1), steal, true),
            ])
        })
    }
}

/// A way that never loaded the page on a path is a failure of the
/// experiment, not a figure.
fn never_loaded(path: &super::PathPlan, got: &[Load]) -> Result<(), LabError> {
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
    Ok(())
}

/// A decision round's loads in (the highest-loss path's, then the
/// lossless path's), one value per part of the criterion out.
pub type Values<'a> = &'a (dyn Fn(&[Load], &[Load]) -> Vec<f64> + Sync);

/// The decision's rounds until it is made (on the lossless path HTTP/2
/// and HTTP/3 back to back; on the highest-loss path, each of
/// [`super::REPLICAS`] testbeds loading the two at once; every testbed
/// at once), then, with the share left, the tables: every way on every
/// path, the paths at once (each its own testbed, within the lab's
/// slots; the ways interleave within each path, so a path's share of the
/// machine hits them alike). A failing path stops the others
/// ([`crate::together`]).
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    values: Values<'_>,
) -> Result<Measured, LabError> {
    let tls = crate::common::self_signed()?;
    let (zero, worst) = plan.decisive().ok_or_else(|| {
        LabError::Usage("head-of-line: no path without loss and none with loss".into())
    })?;
    let spares: Vec<super::PathPlan> = (1..super::REPLICAS)
        .map(|r| super::replica(&plan.paths[worst], r))
        .collect();
    let starts = |paths| starts(paths, &tls);
    let first: Vec<&super::PathPlan> = [&plan.paths[zero], &plan.paths[worst]]
        .into_iter()
        .chain(&spares)
        .collect();
    let mut beds = crate::together::at_once(opts, "head-of-line", starts(first))?;
    let done = decide(plan, &beds, opts, progress, values)?;
    let mut loads: Vec<Load> = done.rounds.into_iter().flatten().collect();
    // The spares' links end with the decision; the tables load the
    // highest-loss path on its own testbed.
    let mut ended = Vec::new();
    for b in beds.drain(2..) {
        ended.push((b.bed.desc.clone(), b.bed.finish(None)?));
    }
    // The tables, with what the share left: the other paths join.
    let trials = plan.fitted_trials(opts);
    if trials > 0 {
        let others = (0..plan.paths.len())
            .filter(|&i| i != zero && i != worst)
            .map(|i| &plan.paths[i])
            .collect();
        beds.extend(crate::together::at_once(
            opts,
            "head-of-line",
            starts(others),
        )?);
        let ran = done.record.rounds + done.record.discarded;
        let parts = beds
            .iter()
            .map(|b| {
                let offset = if b.path.name == plan.paths[zero].name {
                    ran
                } else if b.path.name == plan.paths[worst].name {
                    ran * super::REPLICAS
                } else {
                    0
                };
                Box::new(move |o: &LabOptions| table(b, plan, offset, trials, o, progress))
                    as Part<'_, _>
            })
            .collect();
        loads.extend(crate::together::at_once(opts, "head-of-line", parts)?.concat());
    }
    // In the plan's order, as the report lists them.
    beds.sort_by_key(|b| plan.paths.iter().position(|p| p.name == b.path.name));
    let (mut descs, mut paths) = (Vec::new(), Vec::new());
    for b in beds {
        let mine: Vec<Load> = loads
            .iter()
            .filter(|l| l.path == b.path.name)
            .cloned()
            .collect();
        never_loaded(b.path, &mine)?;
        descs.push(b.bed.desc.clone());
        paths.push(b.bed.finish(None)?);
    }
    for (desc, path) in ended {
        descs.push(desc);
        paths.push(path);
    }
    Ok(Measured {
        details: Details {
            loads,
            paths: descs,
            page: plan.page.clone(),
            congestion: CONGESTION.into(),
        },
        paths,
        decision: done.record,
    })
}

/// The parts that start `paths`' testbeds.
fn starts<'p>(
    paths: Vec<&'p super::PathPlan>,
    tls: &std::sync::Arc<rustls::ServerConfig>,
) -> Vec<Part<'p, PathBed<'p>>> {
    paths
        .into_iter()
        .map(|path| {
            let tls = tls.clone();
            Box::new(move |o: &LabOptions| start(path, tls, o)) as Part<'p, _>
        })
        .collect()
}

/// The decision's rounds on `beds` (the lossless path's, then the
/// highest-loss path's replicas): round `k`'s replica `i` (1-based) is
/// trial `k * REPLICAS + i` there, so pairs never share a number.
fn decide(
    plan: &Plan,
    beds: &[PathBed<'_>],
    opts: &LabOptions,
    progress: &dyn Progress,
    values: Values<'_>,
) -> Result<crate::sequential::driver::Rounds<Vec<Load>>, LabError> {
    let budget = Budget::of(opts, super::min_rounds(), super::MAX_ROUNDS);
    drive(
        "head-of-line",
        super::parts(),
        &budget,
        opts,
        progress,
        |round| {
            let parts = beds
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    Box::new(move |o: &LabOptions| match i {
                        0 => b.trial(&plan.page, &[Proto::Http2, Proto::Http3], round + 1, o),
                        _ => b.pair_at_once(&plan.page, round * super::REPLICAS + i, o),
                    }) as Part<'_, Vec<Load>>
                })
                .collect();
            let got: Vec<Vec<Load>> = crate::together::at_once(opts, "head-of-line", parts)?;
            let v = values(&got[1..].concat(), &got[0]);
            Ok((got.concat(), v))
        },
    )
}

/// One path's table: `trials` loads of every way, numbered after the
/// decision's `offset` rounds.
fn table(
    b: &PathBed<'_>,
    plan: &Plan,
    offset: usize,
    trials: usize,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Vec<Load>, LabError> {
    let id = progress.step(
        &format!("head-of-line: {}", b.path.name),
        (trials * Proto::ALL.len()) as u64,
    );
    let mut got = Vec::new();
    for t in 1..=trials {
        got.extend(b.trial(&plan.page, &Proto::ALL, offset + t, opts)?);
        progress.inc(id, Proto::ALL.len() as u64);
    }
    let failed = got.iter().filter(|l| l.error.is_some()).count();
    progress.done(
        id,
        &format!(
            "head-of-line: {}: {} loads, {failed} failed",
            b.path.name,
            got.len()
        ),
    );
    Ok(got)
}
