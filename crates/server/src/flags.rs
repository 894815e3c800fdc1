//! `tcpwise serve`'s flags, parsed once by clap; [`super::command::serve`]
//! runs them. They live beside the server for the reason curl's flags
//! live beside curl's rules (see `curl::flags`): the binary only parses.

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use tcpwise_units::{Bytes, Seconds};

/// `tcpwise serve`'s flags.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on: PORT (all addresses, IPv4 and IPv6),
    /// HOST:PORT (a name is resolved: localhost:8080), IPv4:PORT or
    /// [IPv6]:PORT.
    #[arg(long, default_value = "[::]:8080", value_parser = parse_bind, value_name = "ADDR")]
    pub bind: SocketAddr,
    /// Port on all addresses: the same as --bind PORT.
    #[arg(short = 'p', long, conflicts_with = "bind", value_name = "PORT")]
    pub port: Option<u16>,
    /// Serve HTTPS with a fresh self-signed certificate.
    #[arg(long)]
    pub tls: bool,
    /// With --tls: write the certificate (PEM) here, for the --cacert of curl or of tcpwise get.
    #[arg(long, value_name = "FILE")]
    pub cert_out: Option<PathBuf>,
    /// With --tls: extra names for the certificate (localhost and the bind address are always in).
    #[arg(long = "tls-name", value_name = "NAME")]
    pub tls_names: Vec<String>,
    /// With --tls: accept TLS 1.3 early data (0-RTT) from resumed clients,
    /// up to 16 KiB, and answer it before the handshake completes (the
    /// round trip 0-RTT saves). Early data may be a replay: GET, HEAD,
    /// OPTIONS and TRACE are answered, any other method gets 425 Too Early
    /// (RFC 8470), and each ticket is single-use.
    #[arg(long)]
    pub tls_earlydata: bool,
    /// With --tls: session tickets sent after each handshake (0: no
    /// resumption; each ticket resumes once). A client that closes as soon
    /// as its 0-RTT answer arrives leaves before that handshake's tickets
    /// do, so it resumes as many times as the first handshake gave tickets.
    #[arg(long, value_name = "N", default_value = "2", value_parser = clap::value_parser!(u8).range(0..=16))]
    pub tls_tickets: u8,
    /// TCP Fast Open (RFC 7413): accept data in the SYN of clients that
    /// hold a cookie from an earlier connection (`--tcp-fastopen` in curl
    /// and in get), so their first request arrives with the handshake. The namespace's net.ipv4.tcp_fastopen needs its server
    /// bit (3 = client and server; the start line says what it is).
    #[arg(long)]
    pub tfo: bool,
    /// With --tls: HTTP/3 over QUIC on UDP on the same port (same
    /// certificate, ALPN h3, the same answers as HTTP/1.1 and HTTP/2);
    /// the TCP responses advertise it with Alt-Svc.
    #[arg(long)]
    pub http3: bool,
    /// Log one line per request to stderr in nginx's combined format,
    /// followed by the request time in seconds ($request_time).
    #[arg(long)]
    pub access_log: bool,
    /// Serve the files and directory listings under DIR (as python3 -m
    /// http.server does) instead of /bytes, /delay, /echo and /health:
    /// Content-Type from the extension, ETag/Last-Modified with 304s,
    /// single and multiple Range requests (206, 416), HEAD. No path leaves
    /// DIR: a `..` segment (however encoded) or a symlink out is a 403.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Compress responses (text, /bytes, files and listings) with gzip for
    /// HTTP/1.1 clients whose Accept-Encoding allows it, streamed in
    /// chunks; ETags become weak, ranges and 304s stay uncompressed.
    #[arg(long)]
    pub gzip: bool,
    /// TCP_NOTSENT_LOWAT on every connection: off (the kernel's default), a
    /// size (16KiB), or auto (5 ms of the flow's delivery rate, 16 KiB to
    /// 4 MiB, kept current from TCP_INFO). It bounds the response data
    /// waiting unsent in each socket, and each HTTP/2 stream's send buffer
    /// above it (the mark; 16 KiB for auto; hyper's default is 400 KB), so
    /// an answer on a busy HTTP/2 connection (a responsiveness self probe)
    /// does not queue behind megabytes of another stream. The default,
    /// auto, measured best (docs/rpm.md: on a 20 Mbit/s FQ-CoDel path, RPM
    /// 340 against 90 off, the same goodput; no loss on loopback).
    #[arg(long, value_name = "POLICY", default_value = "auto")]
    pub notsent_lowat: tcpwise_tcp::Lowat,
    /// Congestion control of every connection (iperf3's -C: cubic, bbr,
    /// reno; TCP_CONGESTION per socket, which works for any available
    /// algorithm where a namespace's default may be restricted).
    /// Default: the namespace's.
    #[arg(short = 'C', long, value_name = "ALGO")]
    pub congestion: Option<String>,
    /// Worker threads, each with its own event loop and SO_REUSEPORT listener
    /// (nginx's worker model). Default: one per CPU this process may run on.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// How the threads wait for connections: io_uring for plain HTTP on the
    /// routes where the kernel has it (fewer system calls a request than
    /// epoll; slow requests still go to tokio), epoll otherwise; or either
    /// one forced (uring refuses --tls, --root and --gzip).
    #[arg(long, value_enum, default_value_t = Io::Auto)]
    pub io: Io,
    /// Limit: time to receive a request head, from its first byte (from the
    /// connection's start for the first request); slowloris connections are
    /// closed after it. TLS handshakes get the same time.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "10",
        help_heading = "Limits"
    )]
    pub header_timeout: Seconds,
    /// Limit: close a keep-alive connection idle this long; also the longest
    /// a request body or a response may make no progress.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "60",
        help_heading = "Limits"
    )]
    pub idle_timeout: Seconds,
    /// Limit: largest request head (larger: 431 and close).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "64KiB",
        help_heading = "Limits"
    )]
    pub max_header_size: Bytes,
    /// Limit: largest /echo request body (larger: 413 and close; a chunked
    /// body that grows past it is cut off).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "1GiB",
        help_heading = "Limits"
    )]
    pub max_body: Bytes,
    /// Limit: largest N of /bytes/N (larger: 400).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "100GB",
        help_heading = "Limits"
    )]
    pub max_bytes: Bytes,
    /// Limit: longest MS of /delay/MS (longer: 400).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "600",
        help_heading = "Limits"
    )]
    pub max_delay: Seconds,
    /// Limit: connections open at once (lowered to fit RLIMIT_NOFILE); at
    /// the limit each newcomer closes the connection that moved data longest
    /// ago (TCP_INFO), and a line on stderr says so.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 16_384,
        help_heading = "Limits"
    )]
    pub max_conns: usize,
}

/// `--bind`: `PORT`, `HOST:PORT` (resolved), `IPv4:PORT` or `[IPv6]:PORT`.
fn parse_bind(s: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(p) = s.parse::<u16>() {
        return Ok(SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, p)));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if s.parse::<std::net::IpAddr>().is_ok() || !s.contains(':') {
        return Err(format!(
            "'{s}' has no port: give PORT, HOST:PORT, IPv4:PORT or [IPv6]:PORT"
        ));
    }
    match s.to_socket_addrs() {
        Ok(mut it) => it
            .next()
            .ok_or_else(|| format!("'{s}' resolves to no address")),
        Err(e) => Err(format!(
            "cannot resolve '{s}': {e} (give PORT, HOST:PORT, IPv4:PORT or [IPv6]:PORT)"
        )),
    }
}

/// How [`super::serve_threads`] waits for HTTP/1.1 connections (`--io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Io {
    /// io_uring where this kernel has it and the server answers from its
    /// routes in plain HTTP (no `--tls`, `--root` or `--gzip`, whose
    /// answers take the slow path anyway); epoll otherwise.
    #[default]
    Auto,
    /// tokio on epoll, for every connection.
    Epoll,
    /// A ring per thread for the fast path (`docs/bench.md`, "io_uring"),
    /// tokio for slow requests; plain HTTP on the routes only.
    Uring,
}
