//! `tcpwise perf server|client`.

use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::time::Duration;
use tcpwise_link::units::{parse_duration, parse_rate, parse_size};
use tcpwise_perf::{ClientOptions, Interval, PerfReport, ServerOptions};
use tcpwise_tcp::ReadSizer;

#[derive(Debug, Subcommand)]
pub enum PerfCommand {
    /// Serve tests (any number at once) until stopped.
    Server(ServerArgs),
    /// Run one test against a `tcpwise perf server`.
    ///
    /// Prints one line per interval (receiver's goodput; the sender's retransmits,
    /// cwnd, RTT and the time it was limited by the receive window or its send
    /// buffer), then a summary and, when a buffer or the receive window limited the
    /// flow, a diagnosis with the numbers and the fix.
    ///
    /// Example (the Windows TCP team's experiment on an emulated path):
    ///   tcpwise emu pair --rtt 177ms --rate 151mbit --server 'tcpwise perf server' \
    ///     -- tcpwise perf client '$TCPWISE_PEER' -R -t 10 --rcvbuf 278775 --path-rate 151mbit
    #[command(verbatim_doc_comment)]
    Client(ClientArgs),
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on.
    #[arg(long, default_value = "[::]:5301")]
    pub bind: SocketAddr,
    /// Port (overrides the port in --bind).
    #[arg(short, long)]
    pub port: Option<u16>,
    /// Exit after one test.
    #[arg(short = '1', long)]
    pub one_off: bool,
    /// Print a line per test.
    #[arg(short, long)]
    pub verbose: bool,
}

fn seconds(s: &str) -> Result<Duration, String> {
    if let Ok(v) = s.parse::<f64>() {
        if v.is_finite() && v > 0.0 && v <= 3600.0 {
            return Ok(Duration::from_secs_f64(v));
        }
        return Err(format!(
            "'{s}': the test length must be between 0 and 3600 seconds"
        ));
    }
    let ns = parse_duration(s).map_err(|e| e.to_string())?;
    if ns == 0 || ns > 3_600_000_000_000 {
        return Err(format!(
            "'{s}': the test length must be between 0 and 3600 seconds"
        ));
    }
    Ok(Duration::from_nanos(ns))
}

fn positive_size(s: &str) -> Result<u64, String> {
    match parse_size(s).map_err(|e| e.to_string())? {
        0 => Err(format!("'{s}': a size must be positive")),
        n if n > (i32::MAX / 2) as u64 => Err(format!(
            "'{s}': too large for a socket buffer (at most 1 GiB)"
        )),
        n => Ok(n),
    }
}

fn read_sizing(s: &str) -> Result<ReadSizer, String> {
    ReadSizer::parse(s, |x| parse_size(x).map_err(|e| e.to_string()))
}

#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Server host name or address.
    pub host: String,
    /// Server port.
    #[arg(short, long, default_value_t = tcpwise_perf::proto::DEFAULT_PORT)]
    pub port: u16,
    /// Test length in seconds (10, 2.5, 500ms).
    #[arg(short = 't', long = "time", default_value = "10", value_parser = seconds, value_name = "SECONDS")]
    pub time: Duration,
    /// Send this many bytes instead of running for a time (10MB, 1GiB).
    #[arg(short = 'n', long = "bytes", value_parser = positive_size, value_name = "BYTES")]
    pub bytes: Option<u64>,
    /// Reverse: the server sends, this client receives.
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Pin SO_RCVBUF of the receiving socket (default: autotuned). Linux doubles it.
    #[arg(long, value_parser = positive_size, value_name = "SIZE")]
    pub rcvbuf: Option<u64>,
    /// Pin SO_SNDBUF of the sending socket (default: autotuned).
    #[arg(long, value_parser = positive_size, value_name = "SIZE")]
    pub sndbuf: Option<u64>,
    /// Receiver's read sizes: slow-start[:MAX] (1 KiB doubling), fixed:N, adaptive[:MAX].
    #[arg(long, default_value = "slow-start", value_parser = read_sizing, value_name = "POLICY")]
    pub read_sizing: ReadSizer,
    /// Seconds between interval lines.
    #[arg(long, default_value = "1s", value_parser = seconds, value_name = "TIME")]
    pub interval: Duration,
    /// The path's bottleneck rate, if known: the diagnosis then gives its BDP.
    #[arg(long, value_parser = |s: &str| parse_rate(s).map_err(|e| e.to_string()), value_name = "RATE")]
    pub path_rate: Option<u64>,
    /// Print one JSON object (intervals and summary) instead of text.
    #[arg(long)]
    pub json: bool,
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

pub fn run(cmd: PerfCommand) -> i32 {
    let r = match cmd {
        PerfCommand::Server(a) => server(a),
        PerfCommand::Client(a) => client(a),
    };
    match r {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tcpwise: error: {e:#}");
            match e.downcast_ref::<tcpwise_perf::PerfError>() {
                Some(tcpwise_perf::PerfError::Config(_)) => crate::exit::USAGE,
                _ => crate::exit::FAILURE,
            }
        }
    }
}

fn server(a: ServerArgs) -> anyhow::Result<i32> {
    let mut bind = a.bind;
    if let Some(p) = a.port {
        bind.set_port(p);
    }
    let opts = ServerOptions {
        bind,
        one_off: a.one_off,
        verbose: a.verbose,
    };
    runtime()?.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = tcpwise_perf::run_server(opts, |addr| eprintln!("tcpwise perf server listening on {addr}")) => r?,
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        Ok(0)
    })
}

fn fmt_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000 => format!("{:.2} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} KB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

fn line(i: &Interval) -> String {
    let opt = |v: Option<f64>, unit: &str| v.map_or("-".to_string(), |x| format!("{x:.0}{unit}"));
    format!(
        "[{:5.1}-{:5.1} s] {:>10} {:>8.2} Mbit/s  retr {:>4}  cwnd {:>9}  rtt {:>7}  rwnd-limited {:>4}  sndbuf-limited {:>4}",
        i.start_s,
        i.end_s,
        fmt_bytes(i.bytes),
        i.mbit,
        i.retransmits.map_or("-".into(), |r| r.to_string()),
        i.cwnd_bytes.map_or("-".into(), fmt_bytes),
        i.rtt_ms.map_or("-".into(), |r| format!("{r:.1}ms")),
        opt(i.rwnd_limited_pct, "%"),
        opt(i.sndbuf_limited_pct, "%"),
    )
}

fn client(a: ClientArgs) -> anyhow::Result<i32> {
    let opts = ClientOptions {
        host: a.host.clone(),
        port: a.port,
        reverse: a.reverse,
        duration: a.time,
        bytes: a.bytes,
        interval: a.interval,
        rcvbuf: a.rcvbuf,
        sndbuf: a.sndbuf,
        read_sizing: a.read_sizing,
        path_rate_bps: a.path_rate.map(|r| r as f64),
        ..ClientOptions::default()
    };
    let json = a.json;
    if !json {
        println!(
            "tcpwise perf: {} {}:{} for {}, receiver reads {:?}",
            if a.reverse {
                "receiving from"
            } else {
                "sending to"
            },
            a.host,
            a.port,
            a.bytes
                .map_or(format!("{:.1} s", a.time.as_secs_f64()), fmt_bytes),
            a.read_sizing
        );
    }
    let report: PerfReport = runtime()?.block_on(tcpwise_perf::run_client(&opts, |i| {
        if !json {
            println!("{}", line(i));
        }
    }))?;
    for w in &report.warnings {
        eprintln!("tcpwise: warning: {w}");
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    let s = &report.summary;
    println!(
        "summary: {} in {:.2} s = {:.2} Mbit/s goodput; rtt {} (min {}); retransmits {}",
        fmt_bytes(s.bytes),
        s.seconds,
        s.goodput_mbit,
        s.rtt_ms.map_or("-".into(), |r| format!("{r:.1} ms")),
        s.min_rtt_ms.map_or("-".into(), |r| format!("{r:.1} ms")),
        s.retransmits.map_or("-".into(), |r| r.to_string()),
    );
    println!(
        "buffers: receiver holds {} B ({}), sender holds {} B ({}); receive-window-limited {}, send-buffer-limited {} of the sender's busy time",
        report.receiver_buffers.rcv_held,
        report
            .receiver_buffers
            .rcv_asked
            .map_or("autotuned".into(), |n| format!("asked {n}")),
        report.sender_buffers.snd_held,
        report
            .sender_buffers
            .snd_asked
            .map_or("autotuned".into(), |n| format!("asked {n}")),
        s.rwnd_limited_pct
            .map_or("-".into(), |p| format!("{p:.0}%")),
        s.sndbuf_limited_pct
            .map_or("-".into(), |p| format!("{p:.0}%")),
    );
    if let Some(d) = &s.diagnosis {
        println!("diagnosis: {d}");
    }
    Ok(0)
}
