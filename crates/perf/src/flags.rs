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
    /// Address to listen on (port 5301, beside iperf3's 5201: the
    /// protocol is tcpwise's own, so an iperf3 server keeps its port).
    #[arg(long, default_value = "[::]:5301")]
    pub bind: SocketAddr,
    /// Port (overrides the port in --bind).
    #[arg(short, long)]
    pub port: Option<u16>,
    /// Exit after one test.
    #[arg(short = '1', long)]
    pub one_off: bool,
    /// Print a line per test (iperf3's -V; -v is the version, as there).
    #[arg(short = 'V', long)]
    pub verbose: bool,
    /// Print the version (iperf3's -v).
    #[arg(short = 'v', long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
    /// Accepted for iperf3's sake (`iperf3 -s`): this is the server.
    #[arg(short = 's', long = "server")]
    pub server: bool,
    /// Write the server's process id to FILE while it runs (iperf3's -I).
    #[arg(short = 'I', long = "pidfile", value_name = "FILE")]
    pub pidfile: Option<std::path::PathBuf>,
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
    /// Server port: 5301 (where `tcpwise perf server` listens, beside
    /// iperf3's 5201), or 5201 with --iperf3.
    #[arg(short, long)]
    pub port: Option<u16>,
    /// Speak iperf3's protocol from the start (port 5201 by default). A
    /// client pointed at an iperf3 server finds it and does so itself:
    /// TCP (-R, -P, --bidir, -b, -w, -C) and UDP (-u, -R, -b, -l: one
    /// stream), printed as iperf3 prints it (text line for line, -J key
    /// for key); --json=tcpwise gives our own report.
    #[arg(long)]
    pub iperf3: bool,
    /// Set by the caller that found an iperf3 server: see
    /// [`ClientOptions::after_probe`].
    #[arg(skip)]
    pub after_probe: bool,
    /// The probe's control connection, for the iperf3 client
    /// ([`ClientOptions::adopt`]).
    #[arg(skip)]
    pub adopt: crate::options::Adopt,
    /// Test length: seconds (10, 2.5) or with a unit (500ms).
    /// 0 runs until Ctrl-C (at most an hour), as iperf3's -t 0.
    #[arg(
        short = 't',
        long = "time",
        default_value = "10",
        value_name = "SECONDS"
    )]
    pub time: Seconds,
    /// Send this many bytes instead of running for a time: bytes, or K,
    /// M, G as iperf3 reads them (powers of 1024: 10M, 1G; 10MiB too).
    #[arg(short = 'n', long = "bytes", value_name = "BYTES", value_parser = iperf3_size)]
    pub bytes: Option<usize>,
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
    /// Print one JSON object instead of text: -J and --json give iperf3's
    /// -J layout (start, intervals, end), which iperf3's parsers and
    /// plotters read; --json=tcpwise gives ours (intervals, summary,
    /// diagnosis).
    #[arg(short = 'J', long, value_name = "STYLE", num_args = 0..=1, require_equals = true,
          default_missing_value = "iperf3", value_enum)]
    pub json: Option<JsonStyle>,
    /// Hold the sender to RATE (20mbit) on average, as iperf3's -b does
    /// for TCP: the writes wait until their bytes are due, so the sender's
    /// count is what was sent; the summary says whether the rate held
    /// (--fq-rate has the kernel pace instead).
    /// iperf3's spelling works too: 20M, 20m, 1.5G, 500K are bits/s
    /// (powers of 1000), a bare number is bits/s.
    #[arg(short = 'b', long = "bitrate", value_name = "RATE", value_parser = iperf3_rate)]
    pub bitrate: Option<Rate>,
    /// Have the kernel pace the sending socket at RATE (SO_MAX_PACING_RATE,
    /// iperf3's --fq-rate); iperf3's spelling of rates, as -b.
    #[arg(long = "fq-rate", value_name = "RATE", value_parser = iperf3_rate)]
    pub fq_rate: Option<Rate>,
    /// Run SECONDS more first (slow start), each of their intervals marked
    /// (omitted), and leave them out of the summary (iperf3's -O: the test
    /// lasts -O plus -t).
    #[arg(
        short = 'O',
        long = "omit",
        value_name = "SECONDS",
        default_value = "0"
    )]
    pub omit: Seconds,
    /// Both socket buffers: SO_RCVBUF of the receiver and SO_SNDBUF of the
    /// sender (iperf3's -w: 64K is 65536; the diagnosis says what a
    /// pinned buffer costs).
    #[arg(short = 'w', long = "window", value_name = "SIZE", conflicts_with_all = ["rcvbuf", "sndbuf"],
          value_parser = iperf3_size)]
    pub window: Option<usize>,
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
    /// iperf3's K and M (powers of 1024) work: -l 8K.
    #[arg(short = 'l', long = "length", value_name = "BYTES", requires = "udp", value_parser = iperf3_size)]
    pub length: Option<usize>,
    /// iperf3's --rcv-timeout, in milliseconds as iperf3 takes it
    /// (--stall-timeout in seconds is ours).
    #[arg(
        long = "rcv-timeout",
        value_name = "MS",
        conflicts_with = "stall_timeout"
    )]
    pub rcv_timeout: Option<u64>,
    /// Give up connecting after MS milliseconds (iperf3's --connect-timeout).
    #[arg(long = "connect-timeout", value_name = "MS")]
    pub connect_timeout: Option<u64>,
    /// iperf3's verbose: accepted (every interval line carries the
    /// sender's TCP_INFO already). -v is the version, as in iperf3.
    #[arg(short = 'V', long = "verbose")]
    pub verbose: bool,
    /// Print the version (iperf3's -v).
    #[arg(short = 'v', long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
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

/// `-I FILE`: the server's pid, removed when the server ends.
#[derive(Debug)]
pub struct PidFile(std::path::PathBuf);

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl ServerArgs {
    /// Writes `-I FILE` (this process's id), removed when the guard goes.
    pub fn pidfile(&self) -> std::io::Result<Option<PidFile>> {
        let Some(p) = &self.pidfile else {
            return Ok(None);
        };
        std::fs::write(p, format!("{}\n", std::process::id()))?;
        Ok(Some(PidFile(p.clone())))
    }

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

/// iperf3 3.12's options, each with what `tcpwise perf` does with it:
/// the table in `docs/options-iperf3.md` (a test keeps it true).
const OPTIONS_TABLE: &str = include_str!("../../../docs/options-iperf3.md");

/// The first of iperf3's options that `tcpwise perf client|server`
/// refuses in `argv` (the whole command line), as the one line that says
/// so; `None` for any other command line.
pub fn refusal(argv: &[std::ffi::OsString]) -> Option<String> {
    use clap::Args;
    use tcpwise_outcome::peer_options;
    if argv.get(1)? != "perf" {
        return None;
    }
    let sub = argv.get(2)?.to_str()?;
    let cmd = match sub {
        "client" => ClientArgs::augment_args(clap::Command::new("client")),
        "server" => ServerArgs::augment_args(clap::Command::new("server")),
        _ => return None,
    };
    let takes = |o: &str| {
        cmd.get_arguments().any(|a| {
            let named = match o.strip_prefix("--") {
                Some(l) => a.get_long() == Some(l),
                None => o.len() == 2 && a.get_short() == o.chars().nth(1),
            };
            named
                && a.get_action().takes_values()
                && a.get_num_args().is_none_or(|n| n.min_values() > 0)
        })
    };
    let words: Vec<String> = argv[3..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    peer_options::refusal(
        &words,
        &peer_options::refused(OPTIONS_TABLE),
        &takes,
        (
            "iperf3",
            &format!("tcpwise perf {sub}"),
            "docs/options-iperf3.md",
        ),
    )
}

/// `-b` as iperf3 reads it: `20M`, `20m` (bits, powers of 1000), a bare
/// number of bits/s, or ours (`20mbit`). A rate in bytes (`2.5MB/s`) is
/// refused: iperf3 reads it as 2.5 Mbit/s.
pub fn iperf3_rate(s: &str) -> Result<Rate, String> {
    let lower = s.to_ascii_lowercase();
    if lower.contains("b/s")
        || lower.ends_with("kb")
        || lower.ends_with("mb")
        || lower.ends_with("gb")
    {
        return Err(format!(
            "'{s}': iperf3 reads a rate in bytes as bits ({s} is {} bit/s to iperf3): give bits, 20M or 20mbit",
            s.trim_end_matches(['/', 's', 'S', 'B', 'b'])
        ));
    }
    if let Ok(r) = s.parse::<Rate>() {
        return Ok(r);
    }
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        Some('T') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => Ok(Rate((n * mult) as u64)),
        _ => Err(format!(
            "'{s}' is not a rate: 20M or 20m (iperf3's bits/s), 20mbit, 500kbit"
        )),
    }
}

/// `-l`, `-w`, `-n` as iperf3 reads them: `8K`, `1M`, `1G` (powers of
/// 1024) or bytes; `64KiB` too. `64KB` is refused: 64,000 bytes in
/// tcpwise's units, 65,536 to iperf3.
pub fn iperf3_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    if ["KB", "MB", "GB", "TB"].iter().any(|u| upper.ends_with(u)) {
        return Err(format!(
            "'{s}' is {} to iperf3 (K is 1024) and not that to tcpwise (KB is 1000): give {}, or a number of bytes",
            t.trim_end_matches(['B', 'b']),
            t.trim_end_matches(['B', 'b']),
        ));
    }
    let (num, mult) = match upper.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1024.0),
        Some('M') => (&t[..t.len() - 1], 1024.0 * 1024.0),
        Some('G') => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0),
        Some('T') => (&t[..t.len() - 1], 1024.0_f64.powi(4)),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => Ok((n * mult) as usize),
        _ => match s.parse::<Bytes>() {
            Ok(b) => Ok(b.0 as usize),
            Err(_) => Err(format!("'{s}' is not a size: 1448, 8K, 64KiB")),
        },
    }
}

impl ClientArgs {
    /// The test the flags describe.
    pub fn options(&self) -> ClientOptions {
        let a = self;
        ClientOptions {
            host: a.host.clone(),
            port: a.port.unwrap_or(if a.iperf3 {
                crate::interop::wire::DEFAULT_PORT
            } else {
                crate::proto::DEFAULT_PORT
            }),
            reverse: a.reverse,
            // iperf3's -t 0: until stopped (here at most the hour -t allows).
            duration: if a.time.std().is_zero() {
                std::time::Duration::from_secs(3600)
            } else {
                a.time.std()
            },
            bytes: a.bytes.map(|b| b as u64),
            interval: a.interval.std(),
            rcvbuf: a.window.map(|w| w as u64).or(a.rcvbuf.map(|b| b.0)),
            sndbuf: a.window.map(|w| w as u64).or(a.sndbuf.map(|b| b.0)),
            window_flag: a.window.is_some(),
            read_sizing: a.read_sizing,
            path_rate_bps: a.path_rate.map(|r| r.0 as f64),
            congestion: a.congestion.clone(),
            stall_timeout: match a.rcv_timeout {
                Some(ms) => std::time::Duration::from_millis(ms),
                None => a.stall_timeout.std(),
            },
            connect_timeout: a.connect_timeout.map_or(
                ClientOptions::default().connect_timeout,
                std::time::Duration::from_millis,
            ),
            // iperf3's -b 0: no limit.
            pacing_bps: a.bitrate.map(|r| r.0).filter(|&b| b > 0),
            fq_rate_bps: a.fq_rate.map(|r| r.0).filter(|&b| b > 0),
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
            after_probe: a.after_probe,
            adopt: a.adopt.clone(),
        }
    }
}
