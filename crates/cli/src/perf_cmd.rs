//! `tcpwise perf server|client`: flags in, `tcpwise_perf` does the work.

use anyhow::Result;
use clap::Subcommand;
use tcpwise_perf::ClientOptions;
pub use tcpwise_perf::flags::{ClientArgs, JsonStyle, ServerArgs};

#[derive(Debug, Subcommand)]
// Parsed once at start-up: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum PerfCommand {
    /// Serve tests (any number at once) until stopped.
    ///
    /// A client's header is checked field by field before anything is sized
    /// from it; a field out of range refuses the test with the reason.
    #[command(disable_version_flag = true,
              after_long_help = format!("A client's header fields, as bounded:\n{}", tcpwise_perf::proto::bounds_text()))]
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
    #[command(verbatim_doc_comment, disable_version_flag = true)]
    Client(ClientArgs),
}

pub fn run(cmd: PerfCommand) -> Result<i32> {
    match cmd {
        PerfCommand::Server(a) => server(a),
        PerfCommand::Client(mut a) => {
            let style = a.json;
            let first = client(&a);
            let e = first.as_ref().err();
            match e.and_then(|e| tcpwise_perf::PerfError::iperf3_peer(e.as_ref())) {
                // An iperf3 server: speak its protocol, as iperf3 would.
                Some(addr) if !a.iperf3 => {
                    eprintln!("tcpwise perf: {addr} is an iperf3 server, or none of ours (it did not greet): speaking iperf3's protocol (--iperf3)");
                    (a.iperf3, a.after_probe) = (true, true);
                    client(&a)
                }
                _ => first,
            }
            .inspect_err(|e| match style {
                // iperf3 -J writes its error as a string.
                Some(JsonStyle::Iperf3) => {
                    println!("{}", serde_json::json!({ "error": format!("{e:#}") }))
                }
                Some(JsonStyle::Tcpwise) => crate::print_json_error(e),
                None => {}
            })
        }
    }
}

fn server(a: ServerArgs) -> Result<i32> {
    let _pid = a.pidfile()?;
    let opts = a.options();
    let stop = crate::shutdown_on_signals()?;
    crate::runtime()?.block_on(tcpwise_perf::run_server(opts, stop, |addr| {
        eprintln!("tcpwise perf server listening on {addr}")
    }))?;
    Ok(0)
}

fn client(a: &ClientArgs) -> Result<i32> {
    let opts = a.options();
    opts.validate()?;
    let style = a.json;
    let json = style.is_some();
    if a.udp {
        return udp(&opts, a.iperf3, style);
    }
    if a.iperf3 || a.parallel > 1 || a.bidir {
        return parallel(&opts, a.parallel.into(), a.bidir, a.iperf3, style);
    }
    // The banner waits for the first line: a server that turns out to be
    // iperf3's gets iperf3's text instead.
    let banner = std::sync::Once::new();
    let say = |line: &dyn std::fmt::Display| {
        if !json {
            banner.call_once(|| println!("{}", opts.banner()));
            println!("{line}");
        }
    };
    // Ctrl-C: what arrived so far, then exit 130 (iperf3 prints its
    // partial summary too).
    let lines = std::sync::Mutex::new(Vec::new());
    let run = tcpwise_perf::run_client(&opts, |i| {
        say(i);
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
        Some(JsonStyle::Tcpwise) => println!("{}", crate::versioned_pretty(&report)?),
        None => say(&format_args!("{}", report.to_string().trim_end())),
    }
    Ok(0)
}

/// `-P N` / `--bidir`: the streams at once, joined.
fn parallel(
    opts: &ClientOptions,
    n: usize,
    bidir: bool,
    iperf3: bool,
    style: Option<JsonStyle>,
) -> Result<i32> {
    use tcpwise_perf::parallel::{Line, run_parallel, streams};
    let json = style.is_some();
    if iperf3 && !json {
        // iperf3's protocol, iperf3's text, line for line.
        let run = tcpwise_perf::interop::text::run(opts, n, bidir, |s| print!("{s}"));
        return warn(&crate::runtime()?.block_on(run)?);
    }
    let streams = streams(opts, n, bidir);
    // The banner waits for the first line (an iperf3 server gets iperf3's text).
    let (banner, count) = (std::sync::Once::new(), streams.len());
    let head = || {
        let both = if bidir { ", both directions" } else { "" };
        banner.call_once(|| println!("{} ({count} streams{both})", opts.banner()));
    };
    let tag = |dir: &str| match (bidir, dir) {
        (false, _) => "[SUM]".to_string(),
        (true, "send") => "[SUM][TX-C]".to_string(),
        (true, _) => "[SUM][RX-C]".to_string(),
    };
    let show = |l: Line| match l {
        Line::Stream(label, i) if !json => {
            head();
            println!("[{label:>4}] {i}");
        }
        Line::Sum(s) if !json => println!("{} {s}", tag(s.direction)),
        _ => {}
    };
    let report = if iperf3 {
        let run = tcpwise_perf::interop::client::run_client(opts, n, bidir, show);
        crate::runtime()?.block_on(run)?
    } else {
        crate::runtime()?.block_on(run_parallel(streams, show))?
    };
    match style {
        Some(JsonStyle::Iperf3) => {
            let v = tcpwise_perf::iperf3::parallel(opts, &report);
            println!("{}", serde_json::to_string_pretty(&v)?);
            return Ok(0);
        }
        Some(JsonStyle::Tcpwise) => {
            println!("{}", crate::versioned_pretty(&report)?);
            return Ok(0);
        }
        None => {}
    }
    warn(&report)?;
    head();
    for (label, r) in &report.streams {
        for line in r.to_string().lines() {
            println!("[{label:>4}] {line}");
        }
    }
    for s in &report.sums {
        println!("{} {s}", tag(s.direction));
    }
    Ok(0)
}

/// Each stream's warnings, on standard error.
fn warn(report: &tcpwise_perf::parallel::ParallelReport) -> Result<i32> {
    for (label, r) in &report.streams {
        for w in &r.warnings {
            eprintln!("tcpwise: warning: stream {label}: {w}");
        }
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
            crate::versioned(
                serde_json::json!({ "interrupted": true, "intervals": lines, "partial": partial })
            )
        );
    } else {
        println!("{partial}");
    }
}

/// `-u`: a UDP test.
fn udp(opts: &ClientOptions, iperf3: bool, style: Option<JsonStyle>) -> Result<i32> {
    use tcpwise_perf::udp;
    let json = style.is_some();
    // The banner waits for the first line, as for TCP.
    let banner = std::sync::Once::new();
    let say = |line: &dyn std::fmt::Display| {
        if !json {
            banner.call_once(|| println!("{}", udp::banner(opts)));
            println!("{line}");
        }
    };
    // Ctrl-C: what arrived so far, then exit 130, as for TCP.
    let lines = std::sync::Mutex::new(Vec::new());
    let show = |i: &udp::UdpInterval| {
        say(i);
        lines.lock().expect("lock").push(i.clone());
    };
    let report = if iperf3 {
        until_ctrl_c(tcpwise_perf::interop::udp::run_client(opts, show))?
    } else {
        until_ctrl_c(udp::run_udp_client(opts, show))?
    };
    let Some(report) = report else {
        let lines = lines.lock().expect("lock");
        print_partial(json, &lines, udp::UdpPartial::of(&lines));
        return Ok(130);
    };
    match style {
        Some(JsonStyle::Iperf3) => println!(
            "{}",
            serde_json::to_string_pretty(&tcpwise_perf::iperf3::udp(opts, &report))?
        ),
        Some(JsonStyle::Tcpwise) => println!("{}", crate::versioned_pretty(&report)?),
        None => say(&format_args!("{}", report.to_string().trim_end())),
    }
    Ok(0)
}
