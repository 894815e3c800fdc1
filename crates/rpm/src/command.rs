//! `tcpwise rpm` as one call: check the flags, fetch the config, measure
//! idle latency, run the phases, print.

use crate::RpmError;
use crate::config;
use crate::flags::{Direction, RpmArgs};
use crate::load::{Dir, expect_ok};
use crate::report::{self, Report};
use crate::run::Test;
use std::io::Write;
use std::time::Duration;
use tcpwise_http::{Client, ClientConfig, Request, Version};

/// Runs `tcpwise rpm`, printing to `out`; the report (for `--json` the
/// binary adds its version).
pub fn run(a: &RpmArgs, out: &mut dyn Write) -> Result<Report, RpmError> {
    let params = a.params();
    params.check().map_err(RpmError::Usage)?;
    let given = a.config_url.as_deref().or(a.url.as_deref()).unwrap_or("");
    let url = config::config_url(given).map_err(RpmError::Usage)?;
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
        version: match (a.http1, url.scheme()) {
            (true, _) => Version::Http1,
            (false, "https") => Version::Http2,
            (false, _) => Version::Http2PriorKnowledge,
        },
        insecure: a.insecure,
        extra_ca,
        resolve: a.resolve.clone(),
        connect_timeout: a.connect_timeout.std(),
        // Self probes share the load's connection: never wait for a slot.
        max_conns_per_origin: 1 << 16,
        tcp_keepalive: None,
        notsent_lowat: a.notsent_lowat,
        congestion: a.congestion.clone(),
        ..ClientConfig::default()
    };
    let rt = tcpwise_tcp::runtime().map_err(RpmError::Runtime)?;
    rt.block_on(async {
        let endpoints = fetch_config(&client, &url, a.connect_timeout.std() * 2).await?;
        let test = Test {
            params: params.clone(),
            endpoints: endpoints.clone(),
            client,
            self_probes: !a.http1,
        };
        let idle = test.idle().await;
        let phases: Vec<Vec<Dir>> = match (a.sequential, a.direction) {
            (true, _) => vec![vec![Dir::Down], vec![Dir::Up]],
            (false, Direction::Bidir) => vec![vec![Dir::Down, Dir::Up]],
            (false, Direction::Down) => vec![vec![Dir::Down]],
            (false, Direction::Up) => vec![vec![Dir::Up]],
        };
        let mut done = Vec::new();
        for dirs in phases {
            let phase = test
                .phase(&dirs, |iv| {
                    if !a.json {
                        let _ = writeln!(out, "{}", report::interval_line(iv, a.verbose));
                        let _ = out.flush();
                    }
                })
                .await?;
            done.push(phase);
        }
        let r = Report {
            config_url: url.to_string(),
            endpoints,
            http: if a.http1 { "HTTP/1.1" } else { "HTTP/2" }.into(),
            notsent_lowat: a.notsent_lowat.to_string(),
            congestion: a
                .congestion
                .clone()
                .unwrap_or_else(|| "the namespace's default".into()),
            params: (&params).into(),
            idle,
            phases: done,
        };
        if !a.json {
            let _ = write!(out, "{}", report::summary(&r));
        }
        Ok(r)
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
        Ok(Err(e)) => Err(bad(tcpwise_http::curl::run::chain_text(&e))),
        Ok(Ok(_)) => config::parse(&body).map_err(bad),
    }
}
