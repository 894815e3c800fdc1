//! `tcpwise perf server|client`: flags in, `tcpwise_perf` does the work.

use anyhow::Result;
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use tcpwise_perf::{ClientOptions, ServerOptions};
use tcpwise_tcp::ReadSizer;
use tcpwise_units::{Bytes, Rate, Seconds};

#[derive(Debug, Subcommand)]
// Parsed once at start-up: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
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
    ///     -- sh -c 'tcpwise perf client $TCPWISE_PEER -R -t 10 --rcvbuf 278775 --path-rate 151mbit'
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

/// `--json` styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JsonStyle {
    /// tcpwise's own report.
    Tcpwise,
    /// iperf3's `-J` layout.
    Iperf3,
}

#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Server host name or address.
    pub host: String,
    /// Server port.
    #[arg(short, long, default_value_t = tcpwise_perf::proto::DEFAULT_PORT)]
    pub port: u16,
    /// Test length: seconds (10, 2.5) or with a unit (500ms).
    #[arg(
        short = 't',
        long = "time",
        default_value = "10",
        value_name = "SECONDS"
    )]
    pub time: Seconds,
    /// Send this many bytes instead of running for a time (10MB, 1GiB).
    #[arg(short = 'n', long = "bytes", value_name = "BYTES")]
    pub bytes: Option<Bytes>,
    /// Reverse: the server sends, this client receives.
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Pin SO_RCVBUF of the receiving socket (default: autotuned). Linux doubles it.
    #[arg(long, value_name = "SIZE")]
    pub rcvbuf: Option<Bytes>,
    /// Pin SO_SNDBUF of the sending socket (default: autotuned).
    #[arg(long, value_name = "SIZE")]
    pub sndbuf: Option<Bytes>,
    /// Receiver's read sizes: slow-start[:MAX] (1 KiB doubling), fixed:N, adaptive[:MAX].
    #[arg(long, default_value = "slow-start", value_name = "POLICY")]
    pub read_sizing: ReadSizer,
    /// Time between interval lines (iperf3's -i).
    #[arg(short = 'i', long, default_value = "1s", value_name = "TIME")]
    pub interval: Seconds,
    /// Congestion control of both ends, e.g. bbr, cubic (iperf3's -C; TCP_CONGESTION per socket).
    #[arg(short = 'C', long, value_name = "ALGO")]
    pub congestion: Option<String>,
    /// The path's bottleneck rate, if known: the diagnosis then gives its BDP.
    #[arg(long, value_name = "RATE")]
    pub path_rate: Option<Rate>,
    /// Fail when no data moves for this long (a dead path; TCP alone would
    /// retransmit for about 15 minutes). iperf3's --rcv-timeout.
    #[arg(long, value_name = "SECONDS", default_value = "30")]
    pub stall_timeout: Seconds,
    /// Print one JSON object instead of text: ours (intervals, summary,
    /// diagnosis), or with --json=iperf3 iperf3's -J shape (start,
    /// intervals, end), which iperf3's parsers and plotters read.
    #[arg(short = 'J', long, value_name = "STYLE", num_args = 0..=1, require_equals = true,
          default_missing_value = "tcpwise", value_enum)]
    pub json: Option<JsonStyle>,
    /// Pace the sender at RATE (20mbit): SO_MAX_PACING_RATE, so the
    /// kernel holds the rate and the send loop never sleeps (iperf3's -b
    /// for TCP); the summary says whether the pacing held.
    #[arg(short = 'b', long = "bitrate", value_name = "RATE")]
    pub bitrate: Option<Rate>,
    /// Leave the first SECONDS out of the summary (slow start), and say so (iperf3's -O).
    #[arg(
        short = 'O',
        long = "omit",
        value_name = "SECONDS",
        default_value = "0"
    )]
    pub omit: Seconds,
    /// Both socket buffers: SO_RCVBUF of the receiver and SO_SNDBUF of the
    /// sender (iperf3's -w; the diagnosis says what a pinned buffer costs).
    #[arg(short = 'w', long = "window", value_name = "SIZE", conflicts_with_all = ["rcvbuf", "sndbuf"])]
    pub window: Option<Bytes>,
    /// IPv4 only.
    #[arg(short = '4', long = "version4", conflicts_with = "version6")]
    pub version4: bool,
    /// IPv6 only.
    #[arg(short = '6', long = "version6")]
    pub version6: bool,
    /// Local address for both connections (iperf3's -B).
    #[arg(short = 'B', long = "bind", value_name = "ADDRESS")]
    pub bind: Option<std::net::IpAddr>,
    /// Local port of the data connection (iperf3's --cport).
    #[arg(long, value_name = "PORT")]
    pub cport: Option<u16>,
    /// N streams at once, each its own TCP connection: a line per stream,
    /// a [SUM] line per interval, and Jain's fairness index (iperf3's -P).
    #[arg(short = 'P', long = "parallel", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=128))]
    pub parallel: u16,
    /// Both directions at once: the streams asked for, and as many the
    /// other way (iperf3's --bidir).
    #[arg(long)]
    pub bidir: bool,
    /// UDP at -b (default 1 Mbit/s, as iperf3), 1448-byte datagrams:
    /// loss, out-of-order and jitter (RFC 3550) per interval and in all.
    #[arg(short = 'u', long, conflicts_with_all = ["parallel", "bidir", "congestion", "window", "rcvbuf", "sndbuf", "bytes"])]
    pub udp: bool,
    /// A UDP datagram's payload bytes, 20 to 65507 (iperf3's -l; default
    /// 1448, a 1500-byte MTU less IPv6 and UDP headers).
    #[arg(short = 'l', long = "length", value_name = "BYTES", requires = "udp")]
    pub length: Option<usize>,
    /// Print the server's own lines after the summary (iperf3's --get-server-output).
    #[arg(long)]
    pub get_server_output: bool,
    /// Zero copy (iperf3's -Z): `sendfile` from an in-memory file (the
    /// default, as iperf3), or `msg` for send(MSG_ZEROCOPY) from a pinned
    /// buffer, whose summary line says how many sends the kernel copied
    /// after all. Either pays off where a NIC sends straight from the
    /// pages; over loopback and TUN the kernel copies anyway and both cost
    /// more CPU than plain writes (README: sender CPU per GB).
    #[arg(short = 'Z', long = "zerocopy", value_name = "HOW", num_args = 0..=1,
          require_equals = true, default_missing_value = "sendfile", value_enum,
          conflicts_with = "udp")]
    pub zerocopy: Option<ZeroCopyArg>,
}

/// `-Z` methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ZeroCopyArg {
    /// sendfile from an in-memory file.
    Sendfile,
    /// send with MSG_ZEROCOPY, completions from the error queue.
    Msg,
}

pub fn run(cmd: PerfCommand) -> Result<i32> {
    match cmd {
        PerfCommand::Server(a) => server(a),
        PerfCommand::Client(a) => {
            let json = a.json.is_some();
            client(a).inspect_err(|e| {
                if json {
                    crate::print_json_error(e);
                }
            })
        }
    }
}

fn server(a: ServerArgs) -> Result<i32> {
    let mut bind = a.bind;
    if let Some(p) = a.port {
        bind.set_port(p);
    }
    let opts = ServerOptions {
        bind,
        one_off: a.one_off,
        verbose: a.verbose,
    };
    let stop = crate::shutdown_on_signals()?;
    crate::runtime()?.block_on(tcpwise_perf::run_server(opts, stop, |addr| {
        eprintln!("tcpwise perf server listening on {addr}")
    }))?;
    Ok(0)
}

fn client(a: ClientArgs) -> Result<i32> {
    let opts = ClientOptions {
        host: a.host.clone(),
        port: a.port,
        reverse: a.reverse,
        duration: a.time.std(),
        bytes: a.bytes.map(|b| b.0),
        interval: a.interval.std(),
        rcvbuf: a.window.or(a.rcvbuf).map(|b| b.0),
        sndbuf: a.window.or(a.sndbuf).map(|b| b.0),
        window_flag: a.window.is_some(),
        read_sizing: a.read_sizing,
        path_rate_bps: a.path_rate.map(|r| r.0 as f64),
        congestion: a.congestion.clone(),
        stall_timeout: a.stall_timeout.std(),
        pacing_bps: a.bitrate.map(|r| r.0),
        omit: a.omit.std(),
        ipv6: match (a.version4, a.version6) {
            (true, _) => Some(false),
            (_, true) => Some(true),
            _ => None,
        },
        bind: a.bind,
        cport: a.cport,
        server_output: a.get_server_output,
        zerocopy: a.zerocopy.map(|z| match z {
            ZeroCopyArg::Sendfile => tcpwise_perf::proto::ZeroCopy::Sendfile,
            ZeroCopyArg::Msg => tcpwise_perf::proto::ZeroCopy::Msg,
        }),
        length: a.length,
        ..ClientOptions::default()
    };
    opts.validate()?;
    let style = a.json;
    let json = style.is_some();
    if a.udp {
        return udp(&opts, style);
    }
    if a.parallel > 1 || a.bidir {
        return parallel(&opts, a.parallel.into(), a.bidir, style);
    }
    if !json {
        println!("{}", opts.banner());
    }
    // Ctrl-C: what arrived so far, then exit 130 (iperf3 prints its
    // partial summary too).
    let lines = std::sync::Mutex::new(Vec::new());
    let run = tcpwise_perf::run_client(&opts, |i| {
        if !json {
            println!("{i}");
        }
        lines.lock().expect("lock").push(i.clone());
    });
    let Some(report) = until_ctrl_c(run)? else {
        let lines = lines.lock().expect("lock");
        print_partial(json, &lines, tcpwise_perf::diagnose::Partial::of(&lines));
        return Ok(130);
    };
    for w in &report.warnings {
        eprintln!("tcpwise: warning: {w}");
    }
    match style {
        Some(JsonStyle::Iperf3) => println!(
            "{}",
            serde_json::to_string_pretty(&tcpwise_perf::iperf3::single(&opts, &report))?
        ),
        Some(JsonStyle::Tcpwise) => println!("{}", serde_json::to_string_pretty(&report)?),
        None => print!("{report}"),
    }
    Ok(0)
}

/// `-P N` / `--bidir`: the streams at once, joined.
fn parallel(opts: &ClientOptions, n: usize, bidir: bool, style: Option<JsonStyle>) -> Result<i32> {
    use tcpwise_perf::parallel::{Line, run_parallel, streams};
    let json = style.is_some();
    let streams = streams(opts, n, bidir);
    if !json {
        println!(
            "{} ({} streams{})",
            opts.banner(),
            streams.len(),
            if bidir { ", both directions" } else { "" }
        );
    }
    let tag = |dir: &str| match (bidir, dir) {
        (false, _) => "[SUM]".to_string(),
        (true, "send") => "[SUM][TX-C]".to_string(),
        (true, _) => "[SUM][RX-C]".to_string(),
    };
    let report = crate::runtime()?.block_on(run_parallel(streams, |l| {
        if json {
            return;
        }
        match l {
            Line::Stream(label, i) => println!("[{label:>4}] {i}"),
            Line::Sum(s) => println!("{} {s}", tag(s.direction)),
        }
    }))?;
    match style {
        Some(JsonStyle::Iperf3) => {
            let v = tcpwise_perf::iperf3::parallel(opts, &report);
            println!("{}", serde_json::to_string_pretty(&v)?);
            return Ok(0);
        }
        Some(JsonStyle::Tcpwise) => {
            println!("{}", serde_json::to_string_pretty(&report)?);
            return Ok(0);
        }
        None => {}
    }
    for (label, r) in &report.streams {
        for w in &r.warnings {
            eprintln!("tcpwise: warning: stream {label}: {w}");
        }
        for line in r.to_string().lines() {
            println!("[{label:>4}] {line}");
        }
    }
    for s in &report.sums {
        println!("{} {s}", tag(s.direction));
    }
    Ok(0)
}

/// Runs a test to its end, or `None` at Ctrl-C (iperf3 prints its
/// partial summary too; the caller prints ours and exits 130).
fn until_ctrl_c<R>(
    run: impl std::future::Future<Output = Result<R, tcpwise_perf::PerfError>>,
) -> Result<Option<R>> {
    Ok(crate::runtime()?.block_on(async {
        tokio::select! {
            r = run => r.map(Some),
            _ = tokio::signal::ctrl_c() => Ok(None),
        }
    })?)
}

/// An interrupted test's lines so far and their partial summary.
fn print_partial<I: serde::Serialize, P: serde::Serialize + std::fmt::Display>(
    json: bool,
    lines: &[I],
    partial: P,
) {
    if json {
        println!(
            "{}",
            serde_json::json!({ "interrupted": true, "intervals": lines, "partial": partial })
        );
    } else {
        println!("{partial}");
    }
}

/// `-u`: a UDP test.
fn udp(opts: &ClientOptions, style: Option<JsonStyle>) -> Result<i32> {
    use tcpwise_perf::udp;
    let json = style.is_some();
    if !json {
        println!("{}", udp::banner(opts));
    }
    // Ctrl-C: what arrived so far, then exit 130, as for TCP.
    let lines = std::sync::Mutex::new(Vec::new());
    let run = udp::run_udp_client(opts, |i| {
        if !json {
            println!("{i}");
        }
        lines.lock().expect("lock").push(i.clone());
    });
    let Some(report) = until_ctrl_c(run)? else {
        let lines = lines.lock().expect("lock");
        print_partial(json, &lines, udp::UdpPartial::of(&lines));
        return Ok(130);
    };
    match style {
        Some(JsonStyle::Iperf3) => println!(
            "{}",
            serde_json::to_string_pretty(&tcpwise_perf::iperf3::udp(opts, &report))?
        ),
        Some(JsonStyle::Tcpwise) => println!("{}", serde_json::to_string_pretty(&report)?),
        None => print!("{report}"),
    }
    Ok(0)
}
