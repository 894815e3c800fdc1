//! The fetches: one testbed per path with `tcpwise serve --tls
//! --tls-earlydata --tfo` (in-process, `net.ipv4.tcp_fastopen=3` in its
//! namespace), each trial fetching once per arm in a rotating order, with
//! tcpwise's client (a fresh client per connection, sessions shared where
//! an arm resumes), curl and openssl. First the decisive rounds: a trial
//! on the 100 ms path and one of each Happy Eyeballs row, until the
//! sequential decision is made; then the other paths with what the
//! budget leaves.

use super::{Arm, BLACKHOLE_V6, OBJECT, Plan};
use crate::common::ServedTestbed;
use crate::sequential::driver::{Budget, drive};
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use std::process::Command;
use std::time::Duration;
use tcpwise_client::{Client, ClientConfig, Request, Response, TlsSessions, Version};
use tcpwise_http::tls::{Resumption, with_resumption};
use tcpwise_server::ServeOptions;
use tcpwise_sys::steal_ticks;

/// One fetch.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Fetch {
    /// The path's name.
    pub path: String,
    /// The arm's name.
    pub arm: String,
    /// `tcpwise`, `curl` or `openssl`.
    pub client: String,
    /// Which trial (1-based).
    pub trial: usize,
    /// Time to the first byte of the response, from the start of the
    /// request (name resolution, connect and handshakes included), ms.
    pub ttfb_ms: f64,
    /// The arm's mechanism did not happen (no resumption, early data
    /// refused, no data in the SYN, the connection not reused): a
    /// fallback, counted, never an error.
    pub fell_back: bool,
    /// Hypervisor steal during the fetch, ticks.
    pub steal_ticks: Option<u64>,
}

/// One Happy Eyeballs fetch.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Eyeball {
    /// The row: `tcpwise, attempts 250 ms apart`, `curl`, ...
    pub row: String,
    /// Time to first byte, ms.
    pub ttfb_ms: f64,
    /// The address that answered.
    pub winner: String,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Details {
    /// Every fetch, in the order they ran.
    pub fetches: Vec<Fetch>,
    /// The Happy Eyeballs fetches.
    pub eyeballs: Vec<Eyeball>,
    /// Each path as the emulator describes it.
    pub paths: Vec<String>,
    /// curl's version line (`None`: not installed, its rows left out).
    pub curl: Option<String>,
    /// OpenSSL's (`None`: not installed, its rows left out).
    pub openssl: Option<String>,
}

/// What [`measure`] returns.
pub type Measured = crate::stages::Measured<Details>;

fn config(sessions: &TlsSessions, early: bool, tfo: bool) -> ClientConfig {
    ClientConfig {
        insecure: true,
        version: Version::Http1,
        sessions: sessions.clone(),
        early_data: early,
        fastopen: tfo,
        ..ClientConfig::default()
    }
}

async fn fetch(c: &Client, url: &url::Url) -> Result<Response, LabError> {
    c.request(&Request::get(url.clone()), |_| Ok(()))
        .await
        .map_err(|e| LabError::Server {
            what: "http",
            source: std::io::Error::other(format!("cold-start fetch of {url}: {e}")),
        })
}

/// One arm's fetch with tcpwise: (time to first byte, fell back).
async fn tcpwise_fetch(arm: Arm, url: &url::Url) -> Result<(f64, bool), LabError> {
    let sessions = TlsSessions::default();
    // A full handshake first for the arms that resume (its tickets, and
    // for TFO the kernel's cookie).
    let tfo = arm == Arm::TfoZeroRtt;
    if matches!(arm, Arm::Resumed | Arm::ZeroRtt | Arm::TfoZeroRtt) {
        fetch(&Client::new(config(&sessions, false, tfo)), url).await?;
    }
    let early = matches!(arm, Arm::ZeroRtt | Arm::TfoZeroRtt);
    let c = Client::new(config(&sessions, early, tfo));
    if arm == Arm::Warm {
        fetch(&c, url).await?;
    }
    let r = fetch(&c, url).await?;
    let tls = r.conn.tls.clone().unwrap_or_default();
    let fell_back = match arm {
        Arm::Cold => tls.resumed,
        Arm::Resumed => !tls.resumed,
        Arm::ZeroRtt => tls.early_data <= 0,
        Arm::TfoZeroRtt => tls.early_data <= 0 || r.conn.fastopen != Some(true),
        Arm::Warm => !r.conn.reused,
    };
    Ok((r.timings.first_byte_ms, fell_back))
}

/// One arm's fetch with curl (`None`: curl has no such mechanism, 0-RTT).
fn curl_fetch(arm: Arm, url: &str) -> Result<Option<(f64, bool)>, LabError> {
    let mut args: Vec<&str> = vec!["-sk", "--http1.1", "-v", "-o", "/dev/null"];
    let twice = match arm {
        Arm::Cold => false,
        Arm::ZeroRtt => return Ok(None),
        Arm::Resumed | Arm::TfoZeroRtt => {
            args.extend(["-H", "Connection: close"]);
            true
        }
        Arm::Warm => true,
    };
    if arm == Arm::TfoZeroRtt {
        args.push("--tcp-fastopen");
    }
    args.extend(["-w", "%{time_starttransfer}\\n", url]);
    if twice {
        args.extend(["-o", "/dev/null", url]);
    }
    let o = Command::new("curl")
        .args(&args)
        .output()
        .map_err(|source| LabError::Server {
            what: "curl",
            source,
        })?;
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let last = out
        .lines()
        .last()
        .and_then(|l| l.trim().parse::<f64>().ok())
        .filter(|_| o.status.success())
        .ok_or_else(|| LabError::Server {
            what: "curl",
            source: std::io::Error::other(format!("curl {}: {}", args.join(" "), err.trim())),
        })?;
    let fell_back = match arm {
        Arm::Resumed | Arm::TfoZeroRtt => !err.contains("SSL re-using session ID"),
        Arm::Warm => !err.contains("Re-using existing connection"),
        _ => false,
    };
    Ok(Some((last * 1e3, fell_back)))
}

/// `openssl s_client` against `addr`, the request written at once (sent
/// after the handshake) or as early data from `early`: (time from the
/// process's start to the response's first byte, ms, and its output).
fn s_client(addr: &str, extra: &[&str], request: Option<&[u8]>) -> Result<(f64, String), LabError> {
    use std::io::{Read, Write};
    let err = |source| LabError::Server {
        what: "openssl",
        source,
    };
    let start = std::time::Instant::now();
    let mut child = Command::new("openssl")
        .args(["s_client", "-connect", addr, "-tls1_3", "-ign_eof"])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(err)?;
    let mut stdin = child.stdin.take().expect("piped");
    if let Some(r) = request {
        stdin.write_all(r).map_err(err)?;
    }
    drop(stdin);
    let mut out = Vec::new();
    let mut first = None;
    let mut stdout = child.stdout.take().expect("piped");
    let mut buf = [0u8; 4096];
    loop {
        let n = stdout.read(&mut buf).map_err(err)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if first.is_none() && out.windows(9).any(|w| w == b"HTTP/1.1 ") {
            first = Some(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    let _ = child.wait();
    let text = String::from_utf8_lossy(&out).to_string();
    let t = first.ok_or_else(|| {
        err(std::io::Error::other(format!(
            "openssl s_client {addr} {}: no response",
            extra.join(" ")
        )))
    })?;
    Ok((t, text))
}

/// One arm's fetch with OpenSSL's client (`None`: no such mechanism in
/// `s_client`: TFO (3.2+) and a second request on one connection).
/// Sessions go through a file (`-sess_out` from a full handshake, then
/// `-sess_in`), as OpenSSL's users keep them across processes.
fn openssl_fetch(
    arm: Arm,
    addr: &str,
    dir: &std::path::Path,
) -> Result<Option<(f64, bool)>, LabError> {
    let request =
        format!("GET /bytes/{OBJECT} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let sess = dir.join("session.pem");
    let early = dir.join("request.txt");
    let (sess, early) = (
        sess.to_string_lossy().to_string(),
        early.to_string_lossy().to_string(),
    );
    let r = match arm {
        Arm::TfoZeroRtt | Arm::Warm => return Ok(None),
        Arm::Cold => {
            let (t, out) = s_client(addr, &[], Some(request.as_bytes()))?;
            (t, out.contains("Reused,"))
        }
        Arm::Resumed | Arm::ZeroRtt => {
            s_client(addr, &["-sess_out", &sess], Some(request.as_bytes()))?;
            if arm == Arm::Resumed {
                let (t, out) = s_client(addr, &["-sess_in", &sess], Some(request.as_bytes()))?;
                (t, !out.contains("Reused,"))
            } else {
                std::fs::write(&early, &request).map_err(|source| LabError::Server {
                    what: "openssl",
                    source,
                })?;
                let (t, out) = s_client(addr, &["-sess_in", &sess, "-early_data", &early], None)?;
                (t, !out.contains("Early data was accepted"))
            }
        }
    };
    Ok(Some(r))
}

/// The installed OpenSSL's version line.
pub fn openssl_version() -> Option<String> {
    let o = Command::new("openssl").arg("version").output().ok()?;
    String::from_utf8_lossy(&o.stdout)
        .split(" (")
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// The installed curl's first version line.
pub fn curl_version() -> Option<String> {
    let o = Command::new("curl").arg("--version").output().ok()?;
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .map(|l| l.split(" (").next().unwrap_or(l).to_string())
}

/// What every path's fetches need: the clients there are, the server's
/// TLS configuration, s_client's scratch directory.
struct Kit<'a> {
    curl: &'a Option<String>,
    openssl: &'a Option<String>,
    scratch: &'a std::path::Path,
    tls: std::sync::Arc<rustls::ServerConfig>,
    values: Values<'a>,
}

/// A decisive round's values, one per part of the criterion, from its
/// fetches and Happy Eyeballs rows (the analysis gives it).
pub type Values<'a> = &'a (dyn Fn(&[Fetch], &[Eyeball]) -> Vec<f64> + Sync);

/// Runs the decisive rounds (the 100 ms path's tcpwise arms and the raced
/// Happy Eyeballs row, until decided), then the other paths with what
/// the budget leaves.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    values: Values<'_>,
) -> Result<Measured, LabError> {
    let curl = curl_version();
    let openssl = openssl_version();
    // s_client's session and early-data files, removed at the end.
    let scratch = std::env::temp_dir().join(format!("tcpwise-cold-start-{}", std::process::id()));
    if openssl.is_some() {
        std::fs::create_dir_all(&scratch).map_err(LabError::Io)?;
    }
    // The server: tickets for every resumed fetch of a trial, early data.
    let tls = crate::common::self_signed()?;
    let tls = with_resumption(
        &tls,
        Resumption {
            tickets: 4,
            early_data: tcpwise_server::command::EARLY_DATA,
        },
    );
    let kit = Kit {
        curl: &curl,
        openssl: &openssl,
        scratch: &scratch,
        tls,
        values,
    };
    let r = measure_in(plan, opts, progress, &kit);
    let _ = std::fs::remove_dir_all(&scratch);
    let (fetches, eyeballs, paths, descs, record) = r?;
    Ok(Measured {
        details: Details {
            fetches,
            eyeballs,
            paths: descs,
            curl,
            openssl,
        },
        paths,
        decision: record,
    })
}

type Fetched = (
    Vec<Fetch>,
    Vec<Eyeball>,
    Vec<PathError>,
    Vec<String>,
    crate::sequential::Record,
);

fn measure_in(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    kit: &Kit<'_>,
) -> Result<Fetched, LabError> {
    let decisive = plan.decisive();
    let main = PathBed::start(&plan.paths[decisive], opts, kit)?;
    let eyes = EyeBed::start(plan, opts)?;
    let rtt = plan.paths[decisive].rtt_ms;
    let budget = Budget::of(opts, super::min_rounds(), super::MAX_ROUNDS);
    let done = drive(
        "cold-start",
        super::parts(rtt, plan.eyeballs_rtt_ms),
        &budget,
        opts,
        progress,
        |i| {
            let f = main.trial(i + 1, opts, kit)?;
            let e = eyes.trial(opts, kit.curl.is_some())?;
            let v = (kit.values)(&f, &e);
            Ok(((f, e), v))
        },
    )?;
    let (mut fetches, mut eyeballs) = (Vec::new(), Vec::new());
    for (f, e) in done.rounds {
        fetches.extend(f);
        eyeballs.extend(e);
    }
    // Each path's description and error, in the plan's order.
    let mut slots: Vec<Option<(String, PathError)>> = vec![None; plan.paths.len()];
    let desc = main.bed.desc.clone();
    slots[decisive] = Some((desc, main.bed.finish(None)?));
    let eyes_desc = format!(
        "{}; {BLACKHOLE_V6} blackholed at the server's end",
        eyes.bed.desc
    );
    let eyes_path = eyes.bed.finish(None)?;
    // The other paths, one after the other, as many trials as the time
    // left holds (each path's share of it), at most the plan's.
    let others: Vec<usize> = (0..plan.paths.len()).filter(|i| *i != decisive).collect();
    for (k, &i) in others.iter().enumerate() {
        let path = &plan.paths[i];
        let trials = plan.fitted_trials(i, opts, others.len() - k);
        if trials == 0 || opts.check().is_err() {
            continue;
        }
        let id = progress.step(&format!("cold-start: {}", path.name), trials as u64);
        let bed = PathBed::start(path, opts, kit)?;
        for trial in 1..=trials {
            if opts.check().is_err() {
                break;
            }
            fetches.extend(bed.trial(trial, opts, kit)?);
            progress.inc(id, 1);
        }
        progress.done(id, &format!("cold-start: {}: {trials} trials", path.name));
        let desc = bed.bed.desc.clone();
        slots[i] = Some((desc, bed.bed.finish(None)?));
    }
    let (mut descs, mut paths): (Vec<String>, Vec<PathError>) = slots.into_iter().flatten().unzip();
    descs.push(eyes_desc);
    paths.push(eyes_path);
    Ok((fetches, eyeballs, paths, descs, done.record))
}

/// One path's testbed with `serve --tls --tls-earlydata --tfo` on it.
struct PathBed {
    bed: ServedTestbed,
    name: String,
    authority: String,
    url: url::Url,
}

impl PathBed {
    fn start(
        path: &super::PathPlan,
        opts: &LabOptions,
        kit: &Kit<'_>,
    ) -> Result<PathBed, LabError> {
        let tfo_sysctl = vec![(tcpwise_tcp::fastopen::SYSCTL.to_string(), "3".to_string())];
        let mut bed = ServedTestbed::start_path(opts, &path.spec, &path.stem, tfo_sysctl)?;
        let port = bed.serve_with(ServeOptions {
            tls: Some(kit.tls.clone()),
            fastopen: Some(tcpwise_tcp::fastopen::LISTEN_QUEUE),
            ..ServeOptions::new("[::]:0".parse().expect("valid"))
        })?;
        let authority = bed.peer(port).to_string();
        let url: url::Url = format!("https://{authority}/bytes/{OBJECT}")
            .parse()
            .expect("a valid URL");
        Ok(PathBed {
            bed,
            name: path.name.clone(),
            authority,
            url,
        })
    }

    /// One trial: every arm once, in an order that rotates with the trial
    /// (drift hits each alike), with tcpwise, curl and openssl.
    fn trial(
        &self,
        trial: usize,
        opts: &LabOptions,
        kit: &Kit<'_>,
    ) -> Result<Vec<Fetch>, LabError> {
        self.bed.in_client(false, || async {
            let mut v = Vec::new();
            opts.check()?;
            for k in 0..Arm::ALL.len() {
                let arm = Arm::ALL[(k + trial) % Arm::ALL.len()];
                let mut one = |client: &str, r: Option<(f64, bool)>, steal: Option<u64>| {
                    if let Some((ttfb_ms, fell_back)) = r {
                        v.push(Fetch {
                            path: self.name.clone(),
                            arm: arm.label().into(),
                            client: client.into(),
                            trial,
                            ttfb_ms,
                            fell_back,
                            steal_ticks: steal,
                        });
                    }
                };
                let s0 = steal_ticks();
                let r = tcpwise_fetch(arm, &self.url).await?;
                one(
                    "tcpwise",
                    Some(r),
                    s0.zip(steal_ticks()).map(|(a, b)| b - a),
                );
                if kit.curl.is_some() {
                    let s0 = steal_ticks();
                    let r = curl_fetch(arm, self.url.as_str())?;
                    one("curl", r, s0.zip(steal_ticks()).map(|(a, b)| b - a));
                }
                if kit.openssl.is_some() {
                    let s0 = steal_ticks();
                    let r = openssl_fetch(arm, &self.authority, kit.scratch)?;
                    one("openssl", r, s0.zip(steal_ticks()).map(|(a, b)| b - a));
                }
            }
            Ok(v)
        })
    }
}

/// The Happy Eyeballs testbed: `dual.test` resolves to a blackholed IPv6
/// address first and the server's IPv4 address second.
struct EyeBed {
    bed: ServedTestbed,
    url: url::Url,
    resolve: tcpwise_client::Resolve,
    resolve_arg: String,
    rows: Vec<(String, Option<Duration>, Duration)>,
}

impl EyeBed {
    fn start(plan: &Plan, opts: &LabOptions) -> Result<EyeBed, LabError> {
        let rtt = (plan.eyeballs_rtt_ms * 1e6) as u64;
        let mut bed = ServedTestbed::start(opts, rtt, 100_000_000, Vec::new())?;
        let ip = |role, args: &[&str]| -> Result<(), LabError> {
            let ns = bed.tb.netns(role).expect("pair has both ends");
            let o = ns.run(|| Command::new("ip").args(args).output())?;
            match o {
                Ok(o) if o.status.success() => Ok(()),
                other => Err(LabError::Server {
                    what: "ip",
                    source: std::io::Error::other(format!("ip {}: {other:?}", args.join(" "))),
                }),
            }
        };
        let host = format!("{BLACKHOLE_V6}/128");
        ip(
            tcpwise_emu::testbed::Role::Server,
            &["-6", "route", "add", "blackhole", &host],
        )?;
        ip(
            tcpwise_emu::testbed::Role::Client,
            &["-6", "route", "add", &host, "dev", "tw0"],
        )?;
        let port = bed.serve_http()?;
        let v4 = bed.peer(port).ip();
        let url: url::Url = format!("http://dual.test:{port}/bytes/{OBJECT}")
            .parse()
            .expect("a valid URL");
        let resolve = tcpwise_client::Resolve {
            host: "dual.test".into(),
            port,
            addrs: vec![BLACKHOLE_V6.parse().expect("valid"), v4],
        };
        let rows = vec![
            (
                super::raced_row(),
                Some(tcpwise_client::ATTEMPT_DELAY),
                Duration::from_secs(10),
            ),
            (
                format!(
                    "tcpwise, no racing (one address after the other, --connect-timeout {} s)",
                    plan.sequential_timeout_s
                ),
                None,
                Duration::from_secs_f64(plan.sequential_timeout_s),
            ),
        ];
        Ok(EyeBed {
            bed,
            url,
            resolve,
            resolve_arg: format!("dual.test:{port}:[{BLACKHOLE_V6}],{v4}"),
            rows,
        })
    }

    /// One fetch of each row, and curl's own when it is there.
    fn trial(&self, opts: &LabOptions, curl: bool) -> Result<Vec<Eyeball>, LabError> {
        self.bed.in_client(false, || async {
            let mut v = Vec::new();
            opts.check()?;
            for (row, delay, timeout) in &self.rows {
                let c = Client::new(ClientConfig {
                    resolve: vec![self.resolve.clone()],
                    happy_eyeballs: *delay,
                    connect_timeout: *timeout,
                    ..ClientConfig::default()
                });
                let r = fetch(&c, &self.url).await?;
                v.push(Eyeball {
                    row: row.clone(),
                    ttfb_ms: r.timings.first_byte_ms,
                    winner: r.conn.peer.map_or("-".into(), |p| p.to_string()),
                });
            }
            if curl {
                v.extend(self.curl()?);
            }
            Ok(v)
        })
    }

    /// curl's own Happy Eyeballs on the same name.
    fn curl(&self) -> Result<Option<Eyeball>, LabError> {
        let o = Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "--resolve",
                &self.resolve_arg,
                "-w",
                "%{time_starttransfer} %{remote_ip}",
                self.url.as_str(),
            ])
            .output()
            .map_err(|source| LabError::Server {
                what: "curl",
                source,
            })?;
        let s = String::from_utf8_lossy(&o.stdout).to_string();
        let mut it = s.split(' ');
        Ok(
            match (it.next().and_then(|t| t.parse::<f64>().ok()), it.next()) {
                (Some(t), Some(ip)) => Some(Eyeball {
                    row: "curl (its own Happy Eyeballs, 200 ms)".into(),
                    ttfb_ms: t * 1e3,
                    winner: ip.to_string(),
                }),
                _ => None,
            },
        )
    }
}
