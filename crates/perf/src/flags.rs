//! `tcpwise perf`'s flags, as iperf3 spells them, parsed once by clap
//! beside what they mean ([`ClientArgs::options`]): the binary only
//! parses and prints. (The clap dependency of this crate is confined to
//! this module; the architecture test checks that.)

use crate::{ClientOptions, ServerOptions};
use clap::Args;
use std::net::SocketAddr;
use tcpwise_tcp::ReadSizer;
use tcpwise_units::{Bytes, Rate, Seconds};

/// `tcpwise perf server`'s flags.
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

/// `tcpwise perf client`'s flags, as iperf3 spells them.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Server host name or address.
    pub host: String,
    /// Server port.
    #[arg(short, long, default_value_t = crate::proto::DEFAULT_PORT)]
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

impl ServerArgs {
    /// What the flags ask the server for.
    pub fn options(&self) -> ServerOptions {
        let a = self;
        let mut bind = a.bind;
        if let Some(p) = a.port {
            bind.set_port(p);
        }
        ServerOptions {
            bind,
            one_off: a.one_off,
            verbose: a.verbose,
        }
    }
}

impl ClientArgs {
    /// The test the flags describe.
    pub fn options(&self) -> ClientOptions {
        let a = self;
        ClientOptions {
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
                ZeroCopyArg::Sendfile => crate::proto::ZeroCopy::Sendfile,
                ZeroCopyArg::Msg => crate::proto::ZeroCopy::Msg,
            }),
            length: a.length,
            ..ClientOptions::default()
        }
    }
}
