//! The fetches: one testbed per path with `tcpwise serve --tls
//! --tls-earlydata --tfo` (in-process, `net.ipv4.tcp_fastopen=3` in its
//! namespace), each trial fetching once per arm in a rotating order, with
//! tcpwise's client (a fresh client per connection, sessions shared where
//! an arm resumes) and with curl; then the Happy Eyeballs rows.

use super::{Arm, BLACKHOLE_V6, OBJECT, Plan};
use crate::common::Bed;
use crate::{LabError, LabOptions, PathError, Progress};
use serde::Serialize;
use std::process::Command;
use std::time::Duration;
use tcpwise_http::tls::{Resumption, with_resumption};
use tcpwise_http::{Client, ClientConfig, Request, Response, ServeOptions, TlsSessions, Version};
use tcpwise_sys::steal_ticks;

/// One fetch.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct Eyeball {
    /// The row: `tcpwise, attempts 250 ms apart`, `curl`, ...
    pub row: String,
    /// Time to first byte, ms.
    pub ttfb_ms: f64,
    /// The address that answered.
    pub winner: String,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
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
pub struct Measured {
    /// The fetches.
    pub details: Details,
    /// The emulator's error on each testbed.
    pub paths: Vec<PathError>,
}

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

/// Runs every fetch of the plan.
pub fn measure(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
) -> Result<Measured, LabError> {
    let curl = curl_version();
    let openssl = openssl_version();
    // s_client's session and early-data files, removed at the end.
    let scratch = std::env::temp_dir().join(format!("tcpwise-cold-start-{}", std::process::id()));
    if openssl.is_some() {
        std::fs::create_dir_all(&scratch).map_err(LabError::Io)?;
    }
    let r = measure_in(plan, opts, progress, (&curl, &openssl, &scratch));
    let _ = std::fs::remove_dir_all(&scratch);
    let (fetches, mut paths, mut descs) = r?;
    let (eyeballs, desc, perr) = eyeballs(plan, opts, progress, curl.is_some())?;
    descs.push(desc);
    paths.push(perr);
    Ok(Measured {
        details: Details {
            fetches,
            eyeballs,
            paths: descs,
            curl,
            openssl,
        },
        paths,
    })
}

type Fetched = (Vec<Fetch>, Vec<PathError>, Vec<String>);

fn measure_in(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    (curl, openssl, scratch): (&Option<String>, &Option<String>, &std::path::Path),
) -> Result<Fetched, LabError> {
    // The server: tickets for every resumed fetch of a trial, early data.
    let tls = crate::common::self_signed()?;
    let tls = with_resumption(
        &tls,
        Resumption {
            tickets: 4,
            early_data: tcpwise_http::server::command::EARLY_DATA,
        },
    );
    let (mut fetches, mut paths, mut descs) = (Vec::new(), Vec::new(), Vec::new());
    let tfo_sysctl = vec![(tcpwise_tcp::fastopen::SYSCTL.to_string(), "3".to_string())];
    for path in &plan.paths {
        opts.check()?;
        let id = progress.step(&format!("cold-start: {}", path.name), plan.trials as u64);
        let mut bed = Bed::start_path(opts, &path.spec, &path.stem, tfo_sysctl.clone())?;
        let port = bed.serve_with(ServeOptions {
            tls: Some(tls.clone()),
            fastopen: Some(tcpwise_tcp::fastopen::LISTEN_QUEUE),
            ..ServeOptions::new("[::]:0".parse().expect("valid"))
        })?;
        let authority = bed.peer(port).to_string();
        let url: url::Url = format!("https://{authority}/bytes/{OBJECT}")
            .parse()
            .expect("a valid URL");
        let got = bed.in_client(false, || async {
            let mut v = Vec::new();
            for trial in 1..=plan.trials {
                opts.check()?;
                // The arms in a rotating order: drift hits each alike.
                for k in 0..Arm::ALL.len() {
                    let arm = Arm::ALL[(k + trial) % Arm::ALL.len()];
                    let mut one = |client: &str, r: Option<(f64, bool)>, steal: Option<u64>| {
                        if let Some((ttfb_ms, fell_back)) = r {
                            v.push(Fetch {
                                path: path.name.clone(),
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
                    let r = tcpwise_fetch(arm, &url).await?;
                    one(
                        "tcpwise",
                        Some(r),
                        s0.zip(steal_ticks()).map(|(a, b)| b - a),
                    );
                    if curl.is_some() {
                        let s0 = steal_ticks();
                        let r = curl_fetch(arm, url.as_str())?;
                        one("curl", r, s0.zip(steal_ticks()).map(|(a, b)| b - a));
                    }
                    if openssl.is_some() {
                        let s0 = steal_ticks();
                        let r = openssl_fetch(arm, &authority, scratch)?;
                        one("openssl", r, s0.zip(steal_ticks()).map(|(a, b)| b - a));
                    }
                }
                progress.inc(id, 1);
            }
            Ok(v)
        })?;
        let tfo_taken = got
            .iter()
            .filter(|f| f.client == "tcpwise" && f.arm == Arm::TfoZeroRtt.label() && !f.fell_back)
            .count();
        progress.done(
            id,
            &format!(
                "cold-start: {}: {} fetches, TFO + 0-RTT taken {tfo_taken}/{}",
                path.name,
                got.len(),
                plan.trials
            ),
        );
        descs.push(bed.desc.clone());
        fetches.extend(got);
        paths.push(bed.finish(None)?);
    }
    Ok((fetches, paths, descs))
}

/// The Happy Eyeballs rows: `dual.test` resolves to a blackholed IPv6
/// address first and the server's IPv4 address second.
fn eyeballs(
    plan: &Plan,
    opts: &LabOptions,
    progress: &dyn Progress,
    curl: bool,
) -> Result<(Vec<Eyeball>, String, PathError), LabError> {
    let rtt = (plan.eyeballs_rtt_ms * 1e6) as u64;
    let mut bed = Bed::start(opts, rtt, 100_000_000, Vec::new())?;
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
    let resolve = tcpwise_http::Resolve {
        host: "dual.test".into(),
        port,
        addrs: vec![BLACKHOLE_V6.parse().expect("valid"), v4],
    };
    let rows: Vec<(String, Option<Duration>, Duration)> = vec![
        (
            format!(
                "tcpwise, attempts {} ms apart (RFC 8305)",
                tcpwise_http::ATTEMPT_DELAY.as_millis()
            ),
            Some(tcpwise_http::ATTEMPT_DELAY),
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
    let id = progress.step("cold-start: Happy Eyeballs", plan.eyeballs_trials as u64);
    let resolve_arg = format!("dual.test:{port}:[{BLACKHOLE_V6}],{v4}");
    let out = bed.in_client(false, || async {
        let mut v = Vec::new();
        for _ in 0..plan.eyeballs_trials {
            opts.check()?;
            for (row, delay, timeout) in &rows {
                let c = Client::new(ClientConfig {
                    resolve: vec![resolve.clone()],
                    happy_eyeballs: *delay,
                    connect_timeout: *timeout,
                    ..ClientConfig::default()
                });
                let r = fetch(&c, &url).await?;
                v.push(Eyeball {
                    row: row.clone(),
                    ttfb_ms: r.timings.first_byte_ms,
                    winner: r.conn.peer.map_or("-".into(), |p| p.to_string()),
                });
            }
            if curl {
                let o = Command::new("curl")
                    .args([
                        "-s",
                        "-o",
                        "/dev/null",
                        "--resolve",
                        &resolve_arg,
                        "-w",
                        "%{time_starttransfer} %{remote_ip}",
                        url.as_str(),
                    ])
                    .output()
                    .map_err(|source| LabError::Server {
                        what: "curl",
                        source,
                    })?;
                let s = String::from_utf8_lossy(&o.stdout).to_string();
                let mut it = s.split(' ');
                if let (Some(t), Some(ip)) =
                    (it.next().and_then(|t| t.parse::<f64>().ok()), it.next())
                {
                    v.push(Eyeball {
                        row: "curl (its own Happy Eyeballs, 200 ms)".into(),
                        ttfb_ms: t * 1e3,
                        winner: ip.to_string(),
                    });
                }
            }
            progress.inc(id, 1);
        }
        Ok(v)
    })?;
    progress.done(id, "cold-start: Happy Eyeballs done");
    let desc = format!(
        "{}; {BLACKHOLE_V6} blackholed at the server's end",
        bed.desc
    );
    let perr = bed.finish(None)?;
    Ok((out, desc, perr))
}
