//! `tcpwise bench`: the HTTP load generator (flags as wrk/wrk2 spell them),
//! and `tcpwise rpm`, the load that measures responsiveness.

use anyhow::Result;
use clap::Args;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tcpwise_client::Header;
use tcpwise_units::Seconds;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// URLs to load (http:// or https://; without a scheme, http); several
    /// share one origin and are taken in turn, as h2load takes its URIs.
    #[arg(required = true)]
    pub urls: Vec<String>,
    /// Open connections.
    #[arg(short = 'c', long, default_value_t = 64)]
    pub connections: usize,
    /// Threads, each with its own connections and event loop (default: one per CPU).
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// How long to load (wrk's -d: 10, 10s, 2m, 500ms). Default 10 s
    /// unless -n is given. Ctrl-C or SIGTERM ends the run early and prints
    /// the report of the time so far (exit 0, as wrk).
    #[arg(short = 'd', long, conflicts_with = "requests")]
    pub duration: Option<Seconds>,
    /// Stop after this many responses instead (hey's -n).
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// Open loop at R requests/s in total, latency measured from when each
    /// request was due (wrk2's -R: coordinated-omission correction).
    #[arg(short = 'R', long, value_name = "R")]
    pub rate: Option<f64>,
    /// Extra header, 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<Header>,
    /// Method (default GET, POST with --data).
    #[arg(short = 'X', long)]
    pub method: Option<String>,
    /// Request body, or @FILE (no short form: -d is the duration, as in wrk).
    #[arg(long, value_name = "DATA")]
    pub data: Option<String>,
    /// A request with no complete response after this long counts as a timeout error.
    #[arg(long, default_value = "10s")]
    pub timeout: Seconds,
    /// Also print wrk's "Latency Distribution" table (50, 75, 90, 99 %),
    /// as wrk lays it out (the p50 to p99.99 line is always printed).
    #[arg(long)]
    pub latency: bool,
    /// https: accept any server certificate.
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// https: trust the PEM certificates in FILE too.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<std::path::PathBuf>,
    /// HTTP/2, as h2load loads: h2c with prior knowledge on http://, ALPN
    /// h2 on https://.
    #[arg(long)]
    pub http2: bool,
    /// HTTP/3 over QUIC (https:// only, ALPN h3): each connection a QUIC
    /// connection with its own UDP socket.
    #[arg(long, conflicts_with = "http2")]
    pub http3: bool,
    /// HTTP/2 or HTTP/3 streams in flight per connection (h2load's -m; needs --http2 or --http3).
    #[arg(short = 'm', long = "max-concurrent-streams", default_value_t = 1)]
    pub streams: usize,
    /// Print the report as JSON ({"summary": ...}).
    #[arg(long)]
    pub json: bool,
}

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
    let json = a.json;
    bench(a).inspect_err(|e| {
        if json {
            crate::print_json_error(e);
        }
    })
}

fn bench(a: BenchArgs) -> Result<i32> {
    let (req, more_urls) = tcpwise_bench::request(&a.urls, a.method.clone(), a.data, a.headers)?;
    let tls = tcpwise_bench::tls_config(&req.url, a.insecure, a.cacert.as_deref())?;
    let ten = (a.requests.is_none()).then(|| std::time::Duration::from_secs(10));
    let duration = a.duration.map(Seconds::std).or(ten);
    let opts = tcpwise_bench::Options {
        url: req.url,
        more_urls,
        connections: a.connections,
        threads: a
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
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
    if a.json {
        println!(
            "{}",
            crate::versioned(serde_json::json!({ "summary": report }))
        );
    } else {
        println!("{}", report.text(a.latency));
    }
    Ok(0)
}
