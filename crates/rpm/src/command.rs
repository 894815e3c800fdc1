//! `tcpwise rpm` as one call: check the flags, fetch the config, measure
//! idle latency, run the phases, print.

use crate::RpmError;
use crate::config;
use crate::flags::{Direction, RpmArgs};
use crate::load::{Dir, expect_ok};
use crate::report::{self, Report};
use crate::run::{Interval, Test};
use std::io::Write;
use std::time::Duration;
use tcpwise_client::{Client, ClientConfig, Request, Version};

/// A test as the library runs it, typed: what `tcpwise rpm`'s flags say
/// (built by [`options`]), or what a program (the lab) asks for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The config's URL.
    pub config_url: url::Url,
    /// The draft's parameters.
    pub params: crate::Params,
    /// Every connection's client configuration (from [`client_config`]).
    pub client: ClientConfig,
    /// The phases in order, each the directions it loads at once.
    pub phases: Vec<Vec<Dir>>,
    /// How long the config may take.
    pub config_timeout: Duration,
}

/// The client configuration a test needs for `version`: self probes
/// share a load's connection, so no per-origin limit makes them wait, and
/// no keep-alive probes are sent on the loads.
pub fn client_config(version: Version) -> ClientConfig {
    ClientConfig {
        version,
        max_conns_per_origin: 1 << 16,
        tcp_keepalive: None,
        ..ClientConfig::default()
    }
}

/// The typed test `tcpwise rpm`'s flags ask for, checked.
pub fn options(a: &RpmArgs) -> Result<Options, RpmError> {
    let params = a.params();
    params.check()?;
    let given = a.config_url.as_deref().or(a.url.as_deref()).unwrap_or("");
    let url = config::config_url(given)?;
    let mut extra_ca = Vec::new();
    if let Some(path) = &a.cacert {
        extra_ca.push(
            std::fs::read(path)
                .map_err(|e| RpmError::Usage(format!("--cacert {}: {e}", path.display())))?,
        );
    }
    if let Some(cc) = &a.congestion {
        tcpwise_tcp::check_congestion(cc)
            .map_err(|e| RpmError::Usage(format!("--congestion: {e}")))?;
    }
    let client = ClientConfig {
        insecure: a.insecure,
        extra_ca,
        resolve: a.resolve.clone(),
        connect_timeout: a.connect_timeout.std(),
        notsent_lowat: a.notsent_lowat,
        congestion: a.congestion.clone(),
        ..client_config(match (a.http1, url.scheme()) {
            (true, _) => Version::Http1,
            (false, "https") => Version::Http2,
            (false, _) => Version::Http2PriorKnowledge,
        })
    };
    Ok(Options {
        config_url: url,
        params,
        client,
        phases: match (a.sequential, a.direction) {
            (true, _) => vec![vec![Dir::Down], vec![Dir::Up]],
            (false, Direction::Bidir) => vec![vec![Dir::Down, Dir::Up]],
            (false, Direction::Down) => vec![vec![Dir::Down]],
            (false, Direction::Up) => vec![vec![Dir::Up]],
        },
        config_timeout: a.connect_timeout.std() * 2,
    })
}

/// Runs `tcpwise rpm`, printing to `out`; the report (for `--json` the
/// binary adds its version).
pub fn run(a: &RpmArgs, out: &mut dyn Write) -> Result<Report, RpmError> {
    let o = options(a)?;
    let rt = tcpwise_tcp::runtime().map_err(RpmError::Runtime)?;
    let r = rt.block_on(measure(&o, |iv| {
        if !a.json {
            let _ = writeln!(out, "{}", report::interval_line(iv, a.verbose));
            let _ = out.flush();
        }
    }))?;
    if !a.json {
        let _ = write!(out, "{}", report::summary(&r));
    }
    Ok(r)
}

/// One whole test on the current runtime: the config, idle latency, the
/// phases; `each` sees every interval as it closes.
pub async fn measure(o: &Options, mut each: impl FnMut(&Interval)) -> Result<Report, RpmError> {
    let endpoints = fetch_config(&o.client, &o.config_url, o.config_timeout).await?;
    let http1 = o.client.version == Version::Http1;
    let test = Test {
        params: o.params.clone(),
        endpoints: endpoints.clone(),
        client: o.client.clone(),
        self_probes: !http1,
    };
    let idle = test.idle().await;
    let mut done = Vec::new();
    for dirs in &o.phases {
        done.push(test.phase(dirs, &mut each).await?);
    }
    Ok(Report {
        config_url: o.config_url.to_string(),
        endpoints,
        http: if http1 { "HTTP/1.1" } else { "HTTP/2" }.into(),
        notsent_lowat: o.client.notsent_lowat.to_string(),
        congestion: o
            .client
            .congestion
            .clone()
            .unwrap_or_else(|| "the namespace's default".into()),
        params: (&o.params).into(),
        idle,
        phases: done,
    })
}

/// Fetches and reads the config, within `limit`.
async fn fetch_config(
    cfg: &ClientConfig,
    url: &url::Url,
    limit: Duration,
) -> Result<config::Endpoints, RpmError> {
    let bad = |why: String| RpmError::Config {
        url: url.to_string(),
        why,
    };
    let client = Client::new(cfg.clone());
    let mut body = Vec::new();
    let req = Request::get(url.clone());
    let fetch = client.request_streaming(
        &req,
        |h| expect_ok(h.status),
        |b| {
            body.extend_from_slice(b);
            if body.len() > 1 << 20 {
                return Err(std::io::Error::other("over 1 MiB: not a config"));
            }
            Ok(())
        },
    );
    match tokio::time::timeout(limit, fetch).await {
        Err(_) => Err(bad(format!(
            "no answer in {:.1} s (the server accepted but stalled)",
            limit.as_secs_f64()
        ))),
        Ok(Err(e)) => Err(bad(tcpwise_outcome::chain_text(&e))),
        Ok(Ok(_)) => config::parse(&body).map_err(|e| bad(e.to_string())),
    }
}
