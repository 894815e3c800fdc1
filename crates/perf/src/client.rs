//! `tcpwise perf client`, and the data loops both ends share.

use crate::PerfError;
use crate::diagnose::{self, Asked, Interval, PerfReport};
use crate::proto::{Accept, DEFAULT_PORT, Header, MAGIC, Sample, ServerMsg};
use crate::server::DATA_PREFIX;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tcpwise_tcp::{AppliedBuffers, BufferPolicy, ReadSizer, SizedRead, TcpInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::mpsc::UnboundedSender;

/// Client configuration.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Server host (name or address).
    pub host: String,
    /// Server port.
    pub port: u16,
    /// The server sends (`-R`).
    pub reverse: bool,
    /// Test length.
    pub duration: Duration,
    /// Bytes to send instead of a duration.
    pub bytes: Option<u64>,
    /// Sampling interval.
    pub interval: Duration,
    /// Static SO_RCVBUF for the receiving socket.
    pub rcvbuf: Option<u64>,
    /// Static SO_SNDBUF for the sending socket.
    pub sndbuf: Option<u64>,
    /// Read sizing for the receiver.
    pub read_sizing: ReadSizer,
    /// The path's rate if known (for the BDP in the diagnosis).
    pub path_rate_bps: Option<f64>,
    /// How long to wait for the connection.
    pub connect_timeout: Duration,
    /// Congestion control of both ends (`-C`), or the namespace default.
    pub congestion: Option<String>,
    /// Give up when no data moves for this long (a dead path: TCP alone
    /// would retransmit for about 15 minutes); iperf3's `--rcv-timeout`.
    pub stall_timeout: Duration,
    /// `-b`: pace the sender at this many bits/s (`SO_MAX_PACING_RATE`: the
    /// kernel paces, the send loop never sleeps).
    pub pacing_bps: Option<u64>,
    /// `-O`: leave this much of the start out of the summary.
    pub omit: Duration,
    /// `-4`/`-6`: only addresses of this family (`None`: the first the
    /// resolver gives).
    pub ipv6: Option<bool>,
    /// `-B`: the local address both connections use.
    pub bind: Option<std::net::IpAddr>,
    /// `--cport`: the data connection's local port.
    pub cport: Option<u16>,
    /// `--get-server-output`: ask the server for its own lines.
    pub server_output: bool,
    /// `-Z`: send without copying through user space (sendfile or
    /// `MSG_ZEROCOPY`).
    pub zerocopy: Option<crate::proto::ZeroCopy>,
    /// `-l`: a UDP datagram's payload bytes (default 1448).
    pub length: Option<usize>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            host: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            reverse: false,
            duration: Duration::from_secs(10),
            bytes: None,
            interval: Duration::from_secs(1),
            rcvbuf: None,
            sndbuf: None,
            read_sizing: ReadSizer::default(),
            path_rate_bps: None,
            connect_timeout: Duration::from_secs(5),
            congestion: None,
            stall_timeout: Duration::from_secs(30),
            pacing_bps: None,
            omit: Duration::ZERO,
            ipv6: None,
            bind: None,
            cport: None,
            length: None,
            server_output: false,
            zerocopy: None,
        }
    }
}

impl ClientOptions {
    /// The first line `tcpwise perf client` prints: what it is about to do.
    pub fn banner(&self) -> String {
        format!(
            "tcpwise perf: {} {}:{} for {}, receiver reads {}{}",
            if self.reverse {
                "receiving from"
            } else {
                "sending to"
            },
            self.host,
            self.port,
            self.bytes.map_or(
                format!("{:.1} s", self.duration.as_secs_f64()),
                crate::diagnose::human_bytes
            ),
            self.read_sizing,
            self.congestion.as_ref().map_or(String::new(), |c| format!(
                ", congestion control {c} at both ends"
            )) + &self.pacing_bps.map_or(String::new(), |b| format!(
                ", sender paced at {:.2} Mbit/s by the kernel",
                b as f64 / 1e6
            ))
        )
    }

    /// Refuses what cannot be run, with the flag's name in the message.
    pub fn validate(&self) -> Result<(), PerfError> {
        let bad = |m: String| Err(PerfError::Config(m));
        if self.duration.is_zero() || self.duration > Duration::from_secs(3600) {
            return bad("-t: the test length must be between 0 and 3600 seconds".into());
        }
        if self.interval.is_zero() {
            return bad("--interval must be positive".into());
        }
        if self.bytes == Some(0) {
            return bad("-n: a size must be positive".into());
        }
        if self.pacing_bps == Some(0) {
            return bad("-b: a rate must be positive".into());
        }
        if let Some(n) = self.length
            && !(crate::udp::HEADER_LEN..=crate::udp::MAX_LEN).contains(&n)
        {
            return bad(format!(
                "-l {n}: a datagram carries {} to {} bytes",
                crate::udp::HEADER_LEN,
                crate::udp::MAX_LEN
            ));
        }
        if self.omit >= self.duration && self.bytes.is_none() {
            return bad("-O: the time omitted must be shorter than -t".into());
        }
        if let Some(algo) = &self.congestion {
            let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
            crate::set_congestion(&socket2::SockRef::from(&sock), algo)?;
        }
        for (flag, v) in [("--rcvbuf", self.rcvbuf), ("--sndbuf", self.sndbuf)] {
            match v {
                Some(0) => return bad(format!("{flag}: a size must be positive")),
                Some(n) if n > (i32::MAX / 2) as u64 => {
                    return bad(format!(
                        "{flag} {n}: too large for a socket buffer (at most 1 GiB)"
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// When the sender stops.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// After this long.
    Time(Duration),
    /// After this many bytes.
    Bytes(u64),
}

impl Limit {
    /// From a test header.
    pub fn from_header(h: &Header) -> Limit {
        match h.bytes {
            Some(b) => Limit::Bytes(b),
            None => Limit::Time(Duration::from_millis(h.duration_ms)),
        }
    }
}

const CHUNK: usize = 128 * 1024;

/// Unsent bytes the sender keeps queued in its socket at most (TCP_NOTSENT_LOWAT).
const NOTSENT_LOWAT: u32 = 256 * 1024;

fn sample(index: u32, start: Instant, bytes: u64, s: &impl std::os::fd::AsFd) -> Sample {
    let sock = socket2::SockRef::from(s);
    Sample {
        index,
        t: start.elapsed().as_secs_f64(),
        bytes,
        info: TcpInfo::of(&s.as_fd()),
        rcvbuf: sock.recv_buffer_size().ok().map(|n| n as u64),
        sndbuf: sock.send_buffer_size().ok().map(|n| n as u64),
        zerocopy: None,
    }
}

/// Size of the in-memory file `-Z` sends from, in a loop.
const ZC_FILE: usize = 4 << 20;

/// Where a sender's bytes come from.
enum Source {
    /// A buffer, copied into the socket by `write`.
    Copy,
    /// An in-memory file, by `sendfile` from `offset`.
    Sendfile(std::os::fd::OwnedFd, i64),
    /// A buffer that lives as long as the program, by `MSG_ZEROCOPY`.
    Msg(&'static [u8], crate::proto::ZeroCopyCount),
}

/// The buffer `MSG_ZEROCOPY` sends from: made once, never freed or
/// written again, so no send can see it change before its completion.
fn pinned_chunk() -> &'static [u8] {
    static CHUNK_BUF: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    CHUNK_BUF.get_or_init(|| vec![0x5a; CHUNK])
}

impl Source {
    fn new(s: &TcpStream, zerocopy: Option<crate::proto::ZeroCopy>) -> std::io::Result<Source> {
        use std::os::fd::AsRawFd;
        Ok(match zerocopy {
            None => Source::Copy,
            Some(crate::proto::ZeroCopy::Sendfile) => {
                Source::Sendfile(tcpwise_tcp::zerocopy_source(ZC_FILE, 0x5a)?, 0)
            }
            Some(crate::proto::ZeroCopy::Msg) => {
                tcpwise_tcp::set_so_zerocopy(s.as_raw_fd())?;
                Source::Msg(pinned_chunk(), Default::default())
            }
        })
    }

    /// Completions waiting on the error queue, counted.
    fn reap(&mut self, s: &TcpStream) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        if let Source::Msg(_, count) = self {
            let r = tcpwise_tcp::reap_zerocopy(s.as_raw_fd())?;
            count.completed += r.completed;
            count.copied += r.copied;
        }
        Ok(())
    }

    fn count(&self) -> Option<crate::proto::ZeroCopyCount> {
        match self {
            Source::Msg(_, c) => Some(*c),
            _ => None,
        }
    }

    /// One write of up to `want` bytes.
    async fn send(
        &mut self,
        s: &mut TcpStream,
        chunk: &[u8],
        want: usize,
    ) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let fd = s.as_raw_fd();
        loop {
            match self {
                Source::Copy => return s.write(&chunk[..want]).await,
                Source::Sendfile(src, offset) => {
                    s.writable().await?;
                    if *offset as usize >= ZC_FILE {
                        *offset = 0;
                    }
                    let n = want.min(ZC_FILE - *offset as usize);
                    match s.try_io(tokio::io::Interest::WRITABLE, || {
                        tcpwise_tcp::sendfile(fd, src.as_raw_fd(), offset, n)
                    }) {
                        Ok(n) => return Ok(n),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        Err(e) => return Err(e),
                    }
                }
                Source::Msg(buf, count) => {
                    s.writable().await?;
                    let b: &'static [u8] = &buf[..want];
                    match s.try_io(tokio::io::Interest::WRITABLE, || {
                        tcpwise_tcp::send_zerocopy(fd, b)
                    }) {
                        // Completions are reaped per interval and when
                        // the error queue fills (ENOBUFS), not per send:
                        // a recvmsg per write would be the cost measured.
                        Ok(n) => {
                            count.sends += 1;
                            return Ok(n);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        // Too many sends await their completions (the
                        // socket's optmem): reap, give the ACKs a moment.
                        Err(e) if tcpwise_tcp::is_enobufs(&e) => {
                            self.reap(s)?;
                            tokio::time::sleep(Duration::from_micros(200)).await;
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
}

/// Sends until the limit, sampling every interval; returns the last sample.
pub async fn run_sender(
    mut s: TcpStream,
    limit: Limit,
    interval: Duration,
    out: &UnboundedSender<Sample>,
    zerocopy: Option<crate::proto::ZeroCopy>,
) -> Result<Sample, PerfError> {
    // Keep little unsent data in the socket, so the transfer ends close to
    // -t instead of draining a multi-megabyte send buffer afterwards (iperf3
    // stops within tens of ms of -t); in-flight data is not limited by it.
    if matches!(limit, Limit::Time(_)) {
        let _ = socket2::SockRef::from(&s).set_tcp_notsent_lowat(NOTSENT_LOWAT);
    }
    let chunk = vec![0x5au8; CHUNK];
    // -Z: the same bytes from a memfd by sendfile, or from a pinned buffer
    // by MSG_ZEROCOPY: no copy through here.
    let mut source = Source::new(&s, zerocopy)?;
    let start = Instant::now();
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    let (mut bytes, mut index) = (0u64, 0u32);
    loop {
        let want = match limit {
            Limit::Time(d) if start.elapsed() >= d => break,
            Limit::Bytes(b) if bytes >= b => break,
            Limit::Bytes(b) => ((b - bytes) as usize).min(CHUNK),
            Limit::Time(_) => CHUNK,
        };
        tokio::select! {
            r = source.send(&mut s, &chunk, want) => bytes += r? as u64,
            _ = tick.tick() => {
                index += 1;
                source.reap(&s)?;
                let mut smp = sample(index, start, bytes, &s);
                smp.zerocopy = source.count();
                let _ = out.send(smp);
            }
        }
    }
    s.shutdown().await?;
    // Wait for the receiver to close so the last sample sees the tail acknowledged.
    let mut sink = [0u8; 64];
    let _ = tokio::time::timeout(Duration::from_secs(30), s.read(&mut sink)).await;
    source.reap(&s)?;
    let mut last = sample(index + 1, start, bytes, &s);
    last.zerocopy = source.count();
    Ok(last)
}

/// Receives until EOF, sampling every interval; returns the last sample.
/// With a time limit, only bytes that arrive within it (from the first
/// byte) count, as iperf3 counts: what was in flight when the sender
/// stopped is drained but not reported, so the summary lasts -t.
pub async fn run_receiver(
    s: TcpStream,
    sizer: ReadSizer,
    interval: Duration,
    limit: Limit,
    out: &UnboundedSender<Sample>,
) -> Result<Sample, PerfError> {
    let mut r = SizedRead::new(s, sizer);
    let mut buf = vec![0u8; sizer.max_size().max(CHUNK)];
    // The clock starts at the first byte, so the receiver's intervals line
    // up with the sender's (one one-way delay later) instead of counting
    // the handshake's round trip as idle time.
    let first = r.read(&mut buf).await?;
    let start = Instant::now();
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    let (mut bytes, mut index, mut last_byte) = (first as u64, 0u32, 0.0f64);
    let count_for = match limit {
        Limit::Time(d) => d.as_secs_f64(),
        Limit::Bytes(_) => f64::INFINITY,
    };
    let mut open = first > 0;
    // Set once the report ends: what was counted, at the last counted byte.
    let mut reported: Option<(u32, u64, f64)> = None;
    while open {
        let counting = reported.is_none();
        tokio::select! {
            n = r.read(&mut buf) => {
                let n = n?;
                open = n > 0;
                let now = start.elapsed().as_secs_f64();
                if counting && now > count_for {
                    // The report ends here; the rest is drained unreported.
                    reported = Some((index + 1, bytes, last_byte));
                } else if counting {
                    bytes += n as u64;
                    if open {
                        last_byte = now;
                    }
                }
            }
            _ = tick.tick(), if counting => {
                index += 1;
                let _ = out.send(sample(index, start, bytes, r.get_ref()));
            }
        }
    }
    let (index, bytes, at) = reported.unwrap_or((index + 1, bytes, last_byte));
    let mut last = sample(index, start, bytes, r.get_ref());
    last.t = at.max(1e-9);
    Ok(last)
}

pub(crate) async fn connect_with(
    addr: SocketAddr,
    policy: BufferPolicy,
    timeout: Duration,
    congestion: Option<&str>,
    local: Option<SocketAddr>,
) -> Result<(TcpStream, AppliedBuffers), PerfError> {
    let domain = socket2::Domain::for_address(addr);
    let raw = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    if let Some(l) = local {
        raw.set_reuse_address(true)?;
        raw.bind(&l.into())
            .map_err(|e| PerfError::Config(format!("cannot bind to {l} (-B/--cport): {e}")))?;
    }
    let applied = policy.apply(&raw)?;
    if let Some(algo) = congestion {
        crate::set_congestion(&socket2::SockRef::from(&raw), algo)?;
    }
    raw.set_nonblocking(true)?;
    let sock = TcpSocket::from_std_stream(std::net::TcpStream::from(raw));
    let s = match tokio::time::timeout(timeout, sock.connect(addr)).await {
        Err(_) => {
            return Err(PerfError::Unreachable(
                addr.to_string(),
                format!("no answer within {:.0} s", timeout.as_secs_f64()),
            ));
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(PerfError::Refused(addr.to_string()));
        }
        Ok(Err(e)) => return Err(PerfError::Unreachable(addr.to_string(), e.to_string())),
        Ok(Ok(s)) => s,
    };
    s.set_nodelay(true)?;
    Ok((s, applied))
}

/// The server's address, of the family `-4`/`-6` asks for.
pub(crate) async fn resolve(opts: &ClientOptions) -> Result<SocketAddr, PerfError> {
    let target = format!("{}:{}", opts.host, opts.port);
    let addr = tokio::net::lookup_host(if opts.host.contains(':') && !opts.host.starts_with('[') {
        format!("[{}]:{}", opts.host, opts.port)
    } else {
        target.clone()
    })
    .await
    .map_err(|e| PerfError::Unreachable(target.clone(), format!("cannot resolve: {e}")))?
    .find(|a| opts.ipv6.is_none_or(|v6| a.is_ipv6() == v6))
    .ok_or_else(|| {
        let which = match opts.ipv6 {
            Some(true) => "no IPv6 address (-6)",
            Some(false) => "no IPv4 address (-4)",
            None => "no address",
        };
        PerfError::Unreachable(target.clone(), which.into())
    })?;
    Ok(addr)
}

/// The local addresses `-B` and `--cport` ask for: the control
/// connection's (any port) and the data connection's.
pub(crate) fn local_addrs(
    opts: &ClientOptions,
    addr: SocketAddr,
) -> Result<(Option<SocketAddr>, Option<SocketAddr>), PerfError> {
    if let Some(ip) = opts.bind
        && ip.is_ipv6() != addr.is_ipv6()
    {
        return Err(PerfError::Config(format!(
            "-B {ip} and the server's address {addr} are of different families"
        )));
    }
    let ctl = opts.bind.map(|ip| SocketAddr::new(ip, 0));
    let data = match (opts.bind, opts.cport) {
        (_, None) => ctl,
        (Some(ip), Some(p)) => Some(SocketAddr::new(ip, p)),
        (None, Some(p)) => Some(if addr.is_ipv6() {
            SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), p)
        } else {
            SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), p)
        }),
    };
    Ok((ctl, data))
}

/// Runs one test; `on_interval` sees each interval as soon as both sides
/// have reported it.
pub async fn run_client(
    opts: &ClientOptions,
    mut on_interval: impl FnMut(&Interval),
) -> Result<PerfReport, PerfError> {
    opts.validate()?;
    let addr = resolve(opts).await?;
    let (ctl_local, data_local) = local_addrs(opts, addr)?;

    // Nothing may hold the run much past -t, whatever the server does:
    // setting up gets at most -t + 0.5 s, the data phase ends by -t plus
    // 1 s plus a few set-up times (the drain and the server's last words
    // take round trips).
    let began = Instant::now();
    let setup_limit = (opts.duration + Duration::from_millis(500)).min(opts.connect_timeout * 2);
    let setup_deadline = tokio::time::Instant::now() + setup_limit;
    let stalled = |what: &str| {
        PerfError::Unreachable(
            addr.to_string(),
            format!("{what} within {:.1} s", setup_limit.as_secs_f64()),
        )
    };
    let connect_limit = opts.connect_timeout.min(setup_limit);
    let (ctl, _) = connect_with(addr, BufferPolicy::Auto, connect_limit, None, ctl_local).await?;
    let (r, mut w) = ctl.into_split();
    let mut r = BufReader::new(r);
    let header = Header {
        magic: MAGIC.into(),
        reverse: opts.reverse,
        duration_ms: opts.duration.as_millis() as u64,
        bytes: opts.bytes,
        interval_ms: opts.interval.as_millis().max(1) as u64,
        server_rcvbuf: if opts.reverse { None } else { opts.rcvbuf },
        server_sndbuf: if opts.reverse { opts.sndbuf } else { None },
        server_read_sizing: Some(opts.read_sizing),
        congestion: opts.congestion.clone(),
        pacing_bps: if opts.reverse { opts.pacing_bps } else { None },
        udp: None,
        server_output: opts.server_output,
        zerocopy: opts.zerocopy,
    };
    let mut line = serde_json::to_vec(&header).map_err(|e| PerfError::Config(e.to_string()))?;
    line.push(b'\n');
    w.write_all(&line).await?;
    let mut reply = String::new();
    let wrong = |why: String| PerfError::WrongProtocol(addr.to_string(), why);
    match tokio::time::timeout_at(setup_deadline, crate::proto::read_line(&mut r, &mut reply)).await
    {
        Err(_) => {
            return Err(wrong(format!(
                "no answer to the test header within {:.1} s",
                setup_limit.as_secs_f64()
            )));
        }
        Ok(Err(e)) => return Err(wrong(format!("the connection failed: {e}"))),
        Ok(Ok(0)) => return Err(wrong("it closed the connection without answering".into())),
        Ok(Ok(_)) => {}
    }
    let accept: Accept = serde_json::from_str(reply.trim()).map_err(|_| {
        let shown: String = reply.trim().chars().take(60).collect();
        wrong(format!("it answered {shown:?}"))
    })?;
    if accept.magic != MAGIC {
        return Err(wrong(format!("it speaks {}", accept.magic)));
    }
    if let Some(e) = accept.error {
        return Err(PerfError::Refusal(e));
    }
    let token = accept.token.ok_or_else(|| wrong("no test token".into()))?;

    let policy = if opts.reverse {
        BufferPolicy::Static {
            rcv: opts.rcvbuf,
            snd: None,
        }
    } else {
        BufferPolicy::Static {
            rcv: None,
            snd: opts.sndbuf,
        }
    };
    let left = setup_deadline.saturating_duration_since(tokio::time::Instant::now());
    let cc = opts.congestion.as_deref();
    let (mut data, local_buffers) = connect_with(
        addr,
        policy,
        left.max(Duration::from_millis(1)),
        cc,
        data_local,
    )
    .await
    .map_err(|e| match e {
        PerfError::Unreachable(..) => stalled("the data connection was not accepted"),
        e => e,
    })?;
    if let (Some(bps), false) = (opts.pacing_bps, opts.reverse) {
        tcpwise_tcp::set_pacing(&data, bps)?;
    }
    let mut hello = DATA_PREFIX.to_vec();
    hello.extend_from_slice(&token.to_be_bytes());
    data.write_all(&hello).await?;
    let setup = began.elapsed();
    // A byte count (-n) has no time limit.
    let data_deadline = tokio::time::Instant::now()
        + match opts.bytes {
            Some(_) => Duration::from_secs(86_400),
            None => {
                opts.duration + Duration::from_secs(1) + (setup * 3).min(Duration::from_secs(5))
            }
        };

    // Server messages arrive on their own task.
    let (mtx, mut mrx) = tokio::sync::mpsc::unbounded_channel::<ServerMsg>();
    let reader = tokio::spawn(async move {
        let mut line = String::new();
        loop {
            line.clear();
            match crate::proto::read_line(&mut r, &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if let Ok(m) = serde_json::from_str::<ServerMsg>(line.trim()) {
                        let _ = mtx.send(m);
                    }
                }
            }
        }
    });

    let (stx, mut srx) = tokio::sync::mpsc::unbounded_channel::<Sample>();
    let limit = opts.bytes.map_or(Limit::Time(opts.duration), Limit::Bytes);
    let local = async {
        let r = if opts.reverse {
            run_receiver(data, opts.read_sizing, opts.interval, limit, &stx).await
        } else {
            run_sender(data, limit, opts.interval, &stx, opts.zerocopy).await
        };
        drop(stx);
        r
    };
    let mut st = Joiner::new(opts.reverse);
    let mut remote_buffers = AppliedBuffers::default();
    let mut remote_done: Option<Sample> = None;
    let mut server_output: Option<String> = None;
    let stall = opts.stall_timeout;
    let mut progress = (0u64, tokio::time::Instant::now());
    let pump = async {
        loop {
            tokio::select! {
                s = srx.recv() => match s {
                    Some(s) => {
                        if s.bytes > progress.0 {
                            progress = (s.bytes, tokio::time::Instant::now());
                        }
                        st.local.push(s);
                    }
                    None => break,
                },
                _ = tokio::time::sleep_until(progress.1 + stall) => {
                    return Err(PerfError::Unreachable(
                        addr.to_string(),
                        format!(
                            "no data moved for {:.0} s (--stall-timeout): the path is down or the peer stopped",
                            stall.as_secs_f64()
                        ),
                    ));
                }
                m = mrx.recv() => match m {
                    Some(ServerMsg::Sample(s)) => st.remote.push(s),
                    Some(ServerMsg::Buffers { applied }) => remote_buffers = applied,
                    Some(ServerMsg::Done(s)) => remote_done = Some(s),
                    Some(ServerMsg::Output { text }) => server_output = Some(text),
                    None => {}
                },
            }
            st.emit(&mut on_interval);
        }
        Ok(())
    };
    // A stall ends the pump with an error, and the transfer is dropped with it.
    let joined = tokio::time::timeout_at(data_deadline, async { tokio::try_join!(local, pump) });
    let Ok(joined) = joined.await else {
        return Err(PerfError::Unreachable(
            addr.to_string(),
            "the transfer did not finish in time: the peer stopped reading or sending".into(),
        ));
    };
    let (local_last, ()) = joined?;
    // The server's last words.
    let deadline = data_deadline
        .min(tokio::time::Instant::now() + Duration::from_secs(15))
        .max(tokio::time::Instant::now() + Duration::from_millis(200));
    while remote_done.is_none() {
        match tokio::time::timeout_at(deadline, mrx.recv()).await {
            Ok(Some(ServerMsg::Sample(s))) => st.remote.push(s),
            Ok(Some(ServerMsg::Buffers { applied })) => remote_buffers = applied,
            Ok(Some(ServerMsg::Done(s))) => remote_done = Some(s),
            Ok(Some(ServerMsg::Output { text })) => server_output = Some(text),
            Ok(None) | Err(_) => break,
        }
    }
    reader.abort();
    let remote_last =
        remote_done.ok_or_else(|| wrong("the server did not report the end of the test".into()))?;
    st.emit(&mut on_interval);
    st.local.push(local_last.clone());
    st.remote.push(remote_last.clone());
    st.emit_final(&mut on_interval);

    let (rx_last, tx_last) = if opts.reverse {
        (local_last, remote_last)
    } else {
        (remote_last, local_last)
    };
    let (rx_buf, tx_buf) = if opts.reverse {
        (local_buffers, remote_buffers)
    } else {
        (remote_buffers, local_buffers)
    };
    let asked = Asked {
        rcvbuf: opts.rcvbuf,
        sndbuf: opts.sndbuf,
        path_rate_bps: opts.path_rate_bps,
    };
    let rx_samples = if opts.reverse { &st.local } else { &st.remote };
    let max_rcv_wnd = rx_samples
        .iter()
        .filter_map(|s| s.info.as_ref().and_then(|i| i.rcv_wnd))
        .max();
    let mut summary = diagnose::summarize(
        max_rcv_wnd,
        &st.lines,
        &rx_last,
        Some(&tx_last),
        &rx_buf,
        &tx_buf,
        &asked,
    );
    if !opts.omit.is_zero() {
        diagnose::omit(&mut summary, &st.lines, opts.omit.as_secs_f64());
    }
    let pacing = opts
        .pacing_bps
        .and_then(|b| diagnose::PacingCheck::of(&st.lines, b as f64 / 1e6));
    let mut warnings = rx_buf.warnings.clone();
    warnings.extend(tx_buf.warnings.iter().cloned());
    let tx_samples = if opts.reverse { &st.remote } else { &st.local };
    let zerocopy = opts.zerocopy.map(|method| diagnose::ZeroCopyReport {
        method,
        counts: tx_last.zerocopy,
    });
    let grown = diagnose::Grown::from_samples(rx_samples, tx_samples);
    Ok(PerfReport {
        grown,
        intervals: st.lines,
        summary,
        receiver_buffers: rx_buf,
        sender_buffers: tx_buf,
        reverse: opts.reverse,
        warnings,
        pacing,
        server_output,
        zerocopy,
    })
}

/// Pairs local and remote samples by index into interval lines.
struct Joiner {
    reverse: bool,
    local: Vec<Sample>,
    remote: Vec<Sample>,
    lines: Vec<Interval>,
}

impl Joiner {
    fn new(reverse: bool) -> Joiner {
        Joiner {
            reverse,
            local: Vec::new(),
            remote: Vec::new(),
            lines: Vec::new(),
        }
    }

    fn sides(&self) -> (&[Sample], &[Sample]) {
        if self.reverse {
            (&self.local, &self.remote)
        } else {
            (&self.remote, &self.local)
        }
    }

    fn emit(&mut self, f: &mut impl FnMut(&Interval)) {
        loop {
            let i = self.lines.len();
            let (rx, tx) = self.sides();
            let (Some(r1), Some(t1)) = (rx.get(i), tx.get(i)) else {
                return;
            };
            let zero = Sample::default();
            let r0 = if i == 0 { &zero } else { &rx[i - 1] };
            let t0 = if i == 0 { None } else { tx.get(i - 1) };
            let line = diagnose::interval(r0, r1, t0, Some(t1));
            f(&line);
            self.lines.push(line);
        }
    }

    /// The last, partial interval: the receiver's final sample against the
    /// sender's last one.
    fn emit_final(&mut self, f: &mut impl FnMut(&Interval)) {
        loop {
            let i = self.lines.len();
            let (rx, tx) = self.sides();
            let Some(r1) = rx.get(i) else { return };
            let zero = Sample::default();
            let r0 = if i == 0 { &zero } else { &rx[i - 1] };
            if r1.t - r0.t < 0.05 && i + 1 >= rx.len() {
                return;
            }
            let t1 = tx.get(i).or(tx.last());
            let t0 = if i == 0 {
                None
            } else {
                tx.get(i - 1).or(tx.last())
            };
            let line = diagnose::interval(r0, r1, t0, t1);
            f(&line);
            self.lines.push(line);
        }
    }
}
