//! `tcpwise bench`: the HTTP load generator (flags as wrk/wrk2 spell them),
//! and `tcpwise rpm`, the load that measures responsiveness.

use anyhow::Result;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tcpwise_units::Seconds;

pub use tcpwise_bench::flags::BenchArgs;

/// `tcpwise rpm`: the text as it runs, or the JSON report at the end.
pub fn rpm(a: tcpwise_rpm::flags::RpmArgs) -> Result<i32> {
    let r = tcpwise_rpm::command::run(&a, &mut std::io::stdout());
    match r {
        Ok(r) if a.json => {
            let v = crate::versioned(serde_json::to_value(&r)?);
            println!("{}", serde_json::to_string_pretty(&v)?);
            Ok(0)
        }
        Ok(_) => Ok(0),
        Err(e) => {
            let e = anyhow::Error::from(e);
            if a.json {
                crate::print_json_error(&e);
            }
            Err(e)
        }
    }
}

pub fn run(a: BenchArgs) -> Result<i32> {
    let (json, latency) = (a.json, a.latency);
    let report = bench(a).inspect_err(|e| {
        if json {
            crate::print_json_error(e);
        }
    })?;
    // The report first, then the run's answer on it (an error when most
    // responses were error pages): one JSON document either way.
    let outcome = report.outcome().map_err(anyhow::Error::from);
    if json {
        let mut v = serde_json::json!({ "summary": report });
        if let Err(e) = &outcome {
            v["error"] = serde_json::json!({ "message": format!("{e:#}"), "exit_code": crate::exit_code(e) });
        }
        println!("{}", crate::versioned(v));
    } else {
        println!("{}", report.text(latency));
    }
    outcome.map(|()| 0)
}

fn bench(a: BenchArgs) -> Result<tcpwise_bench::Report> {
    let (req, more_urls) = tcpwise_bench::request(&a.urls, a.method.clone(), a.data, a.headers)?;
    let tls = tcpwise_bench::tls_config(&req.url, a.insecure, a.cacert.as_deref())?;
    let ten = (a.requests.is_none()).then(|| std::time::Duration::from_secs(10));
    let duration = a.duration.map(Seconds::std).or(ten);
    let opts = tcpwise_bench::Options {
        url: req.url,
        more_urls,
        connections: a.connections,
        threads: a.threads,
        duration,
        requests: a.requests,
        rate: a.rate,
        method: req.method.to_string(),
        headers: req.headers,
        body: req
            .body
            .bytes()
            .filter(|b| !b.is_empty())
            .map(|b| b.to_vec()),
        timeout: a.timeout.std(),
        tls,
        http2: a.http2,
        http3: a.http3,
        streams: a.streams,
    };
    opts.validate()?;
    let stop = crate::shutdown_on_signals()?;
    let done = Arc::new(AtomicU64::new(0));
    let bar = (!a.json && std::io::stderr().is_terminal()).then(|| {
        let (len, unit) = match (opts.requests, opts.duration) {
            (Some(n), _) => (n, "requests"),
            (None, d) => (d.map_or(0, |d| d.as_millis() as u64), "ms"),
        };
        let b = indicatif::ProgressBar::new(len);
        b.set_style(
            indicatif::ProgressStyle::with_template(&format!(
                "{{bar:40}} {{pos}}/{{len}} {unit} {{msg}}"
            ))
            .expect("template"),
        );
        b
    });
    let report = std::thread::scope(|s| {
        let worker = s.spawn(|| tcpwise_bench::run(&opts, done.clone(), stop));
        let t0 = std::time::Instant::now();
        while !worker.is_finished() {
            if let Some(b) = &bar {
                let n = done.load(std::sync::atomic::Ordering::Relaxed);
                if opts.requests.is_some() {
                    b.set_position(n);
                } else {
                    b.set_position(t0.elapsed().as_millis() as u64);
                }
                b.set_message(format!("{n} responses"));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        worker
            .join()
            .map_err(|_| anyhow::anyhow!("the load thread panicked"))?
            .map_err(anyhow::Error::from)
    })?;
    Ok(report)
}
