//! `tcpwise perf client --iperf3`: a test against an iperf3 server, on
//! iperf3's control protocol ([`super::wire`]), with our own intervals,
//! summary and diagnosis for each data connection.

use super::data::{Flow, drain, read_json, results_since, stream_result};
use super::wire::{self, Params, Results, State};
use super::{Ours, stream_report};
use crate::PerfError;
use crate::client::ClientOptions;
use crate::diagnose::{Asked, Interval};
use crate::net::{connect_with, local_addrs, resolve};
use crate::parallel::{Joined, Line, ParallelReport, sums};
use crate::proto::Sample;
use std::time::{Duration, Instant};
use tcpwise_tcp::BufferPolicy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

/// What `--iperf3` cannot do yet, or does not mean with an iperf3 peer:
/// one line naming the flag, or `None`.
pub fn unsupported(opts: &ClientOptions, udp: bool) -> Option<String> {
    let why = if opts.length.is_some() && !udp {
        "-l for TCP (the block is iperf3's 128 KiB)"
    } else if opts.bytes.is_some() {
        "-n (a byte count)"
    } else if !opts.omit.is_zero() {
        "-O (omitting the start)"
    } else if opts.zerocopy.is_some() {
        "-Z (zero copy)"
    } else if !opts.window_flag && (opts.rcvbuf.is_some() || opts.sndbuf.is_some()) {
        "--rcvbuf/--sndbuf (one end's buffer: the other end is iperf3's; -w sets both, as iperf3's -w)"
    } else if opts.cport.is_some() {
        "--cport"
    } else if opts.duration.subsec_nanos() != 0 || opts.duration.is_zero() {
        "-t other than whole seconds (iperf3's protocol carries seconds)"
    } else {
        return None;
    };
    Some(format!("--iperf3 does not take {why} yet"))
}

/// The first line of a test: which way, where, how long, how many.
pub fn banner(opts: &ClientOptions, n: usize, bidir: bool) -> String {
    format!(
        "tcpwise perf: {} {}:{} for {} s on iperf3's protocol, {} stream(s){}{}",
        match (bidir, opts.reverse) {
            (true, _) => "sending to and receiving from",
            (false, true) => "receiving from",
            (false, false) => "sending to",
        },
        opts.host,
        opts.port,
        opts.duration.as_secs(),
        if bidir { 2 * n } else { n },
        if bidir { ", both directions" } else { "" },
        opts.congestion.as_ref().map_or(String::new(), |c| format!(
            ", congestion control {c} at both ends"
        )),
    )
}

/// The stream labels iperf3 prints: `1`, `2`, ... or `TX-C`/`RX-C`.
fn label(k: usize, n: usize, sends: bool, bidir: bool) -> String {
    let dir = if sends { "TX-C" } else { "RX-C" };
    match (bidir, n) {
        (true, 1) => dir.to_string(),
        (true, _) => format!("{dir} {}", k % n + 1),
        (false, _) => format!("{}", k + 1),
    }
}

pub(crate) fn random_cookie() -> [u8; wire::COOKIE_SIZE] {
    use std::hash::{BuildHasher, Hasher};
    let mut random = [0u8; 36];
    for (i, chunk) in random.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let b = h.finish().to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
    wire::cookie(random)
}

impl Params {
    /// What every test of `opts` asks: its length, direction, the
    /// server's output, and who asks.
    pub(crate) fn asked(opts: &ClientOptions) -> Params {
        Params {
            time: opts.duration.as_secs(),
            parallel: 1,
            reverse: opts.reverse.then_some(true),
            get_server_output: opts.server_output.then_some(1),
            client_version: Some(format!("tcpwise-{}", env!("CARGO_PKG_VERSION"))),
            ..Params::default()
        }
    }
}

/// The control connection. Just after our own protocol's attempt (a
/// client that found an iperf3 server), the server may be between its
/// listeners: refused connections are tried again for up to 2 s.
async fn connect_control(
    opts: &ClientOptions,
    peer: std::net::SocketAddr,
    local: Option<std::net::SocketAddr>,
) -> Result<TcpStream, PerfError> {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match connect_with(peer, BufferPolicy::Auto, opts.connect_timeout, None, local).await {
            Ok((sock, _)) => return Ok(sock),
            Err(PerfError::Refused(_)) if opts.after_probe && Instant::now() < until => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e.of_iperf3()),
        }
    }
}

/// The control connection, with the server's address for messages.
pub(crate) struct Control {
    pub(crate) sock: TcpStream,
    addr: String,
    /// The server.
    pub(crate) peer: std::net::SocketAddr,
    /// `-B`: our address.
    pub(crate) local: Option<std::net::SocketAddr>,
    /// How long the server may take to answer while setting up.
    pub(crate) setup: Duration,
}

impl Control {
    /// Connects, sends the cookie and `params`, and waits for the server
    /// to ask for the data connections; the cookie they must start with.
    pub(crate) async fn open(
        opts: &ClientOptions,
        params: &Params,
    ) -> Result<(Control, [u8; wire::COOKIE_SIZE]), PerfError> {
        let peer = resolve(opts).await.map_err(PerfError::of_iperf3)?;
        let (local, _) = local_addrs(opts, peer)?;
        let setup = opts.connect_timeout.max(Duration::from_secs(3));
        let until = Instant::now() + Duration::from_secs(2);
        // The connection our protocol's probe found silent, if it did:
        // the cookie goes on it, so iperf3 sees one test.
        let mut adopted = opts.adopt.take(peer);
        let (mut ctl, cookie) = loop {
            // A server silent after our probe may be no iperf3 server at
            // all: it gets what set-up gets in our protocol, -t + 0.5 s.
            let (sock, wait) = match adopted.take() {
                Some(s) if !opts.duration.is_zero() => {
                    (s, setup.min(opts.duration + Duration::from_millis(500)))
                }
                Some(s) => (s, setup),
                None => (connect_control(opts, peer, local).await?, setup),
            };
            let mut ctl = Control {
                sock,
                addr: peer.to_string(),
                peer,
                local,
                setup,
            };
            let cookie = random_cookie();
            let greeted = match ctl.sock.write_all(&cookie).await {
                Ok(()) => ctl.expect(State::ParamExchange, wait).await,
                Err(e) => Err(e.into()),
            };
            match greeted {
                Ok(()) => break (ctl, cookie),
                // A connection the old listener took and dropped (see
                // connect_control): once more, as for a refusal.
                Err(_) if opts.after_probe && Instant::now() < until => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => return Err(e),
            }
        };
        ctl.sock.write_all(&wire::frame(params)).await?;
        ctl.expect(State::CreateStreams, setup).await?;
        Ok((ctl, cookie))
    }

    /// Waits for a word from the server during the test, where none is
    /// due: what it means, as an error.
    pub(crate) async fn interrupted(&mut self) -> PerfError {
        let mut b = [0u8; 1];
        match self.sock.read(&mut b).await {
            Ok(1) if State::of(b[0]) == Some(State::ServerTerminate) => {
                PerfError::Refusal("the iperf3 server was stopped during the test".into())
            }
            Ok(1) => self.wrong(format!("state byte {} during the test", b[0] as i8)),
            _ => self.wrong("the server closed the control connection during the test"),
        }
    }

    /// Ends the test: `TEST_END`, our results for the server's, and the
    /// goodbye.
    pub(crate) async fn finish(&mut self, ours: &Results) -> Result<Results, PerfError> {
        self.sock.write_all(&[State::TestEnd.byte()]).await?;
        let late = Duration::from_secs(10);
        self.expect(State::ExchangeResults, late).await?;
        self.sock.write_all(&wire::frame(ours)).await?;
        let theirs: Results = self.read_json(late).await?;
        self.expect(State::DisplayResults, late).await?;
        self.sock.write_all(&[State::IperfDone.byte()]).await?;
        Ok(theirs)
    }

    pub(crate) fn wrong(&self, why: impl Into<String>) -> PerfError {
        PerfError::WrongProtocol(self.addr.clone(), why.into())
    }

    /// The next state byte, within `limit`; the server's refusals and
    /// failures as errors.
    pub(crate) async fn state(&mut self, limit: Duration) -> Result<State, PerfError> {
        let mut b = [0u8; 1];
        match tokio::time::timeout(limit, self.sock.read_exact(&mut b)).await {
            Err(_) => {
                return Err(self.wrong(format!(
                    "no word from the server within {:.0} s",
                    limit.as_secs_f64()
                )));
            }
            Ok(Err(_)) => return Err(self.wrong("the server closed the control connection")),
            Ok(Ok(_)) => {}
        }
        match State::of(b[0]) {
            Some(State::AccessDenied) => Err(PerfError::Refusal(
                "the iperf3 server is busy with another test (iperf3 serves one at a time); try again".into(),
            )),
            Some(State::ServerTerminate) => Err(PerfError::Refusal(
                "the iperf3 server was stopped during the test".into(),
            )),
            Some(State::ServerError) => {
                let mut e = [0u8; 8];
                let _ = tokio::time::timeout(limit, self.sock.read_exact(&mut e)).await;
                let n = i32::from_be_bytes(e[..4].try_into().expect("4 bytes"));
                let errno = i32::from_be_bytes(e[4..].try_into().expect("4 bytes"));
                Err(PerfError::Refusal(format!(
                    "the iperf3 server failed: its error {n} (iperf_api.h's list), errno {errno}"
                )))
            }
            Some(s) => Ok(s),
            None if b[0] == b'{' || b[0] == b'H' => Err(self.wrong(format!(
                "it answered {:?}, not iperf3's protocol",
                b[0] as char
            ))),
            None => Err(self.wrong(format!("state byte {} is not iperf3's", b[0] as i8))),
        }
    }

    pub(crate) async fn expect(&mut self, want: State, limit: Duration) -> Result<(), PerfError> {
        match self.state(limit).await? {
            s if s == want => Ok(()),
            s => Err(self.wrong(format!("{s:?} where {want:?} was due"))),
        }
    }

    async fn read_json<T: for<'de> serde::Deserialize<'de>>(
        &mut self,
        limit: Duration,
    ) -> Result<T, PerfError> {
        match tokio::time::timeout(limit, read_json(&mut self.sock)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.wrong(format!("its results: {e}"))),
            Err(_) => Err(self.wrong("its results did not come")),
        }
    }
}

/// One data connection a stream, each sending the cookie first, with the
/// window `-w` asked for.
async fn open_streams(
    opts: &ClientOptions,
    params: &Params,
    (addr, local): (std::net::SocketAddr, Option<std::net::SocketAddr>),
    cookie: &[u8],
) -> Result<Vec<(TcpStream, Ours)>, PerfError> {
    let window = opts.window_flag.then_some(opts.rcvbuf).flatten();
    let mut conns = Vec::new();
    for k in 0..params.streams() {
        let sends = params.client_sends(k);
        let policy = BufferPolicy::Static {
            rcv: window,
            snd: window,
        };
        let (mut s, buffers) = connect_with(
            addr,
            policy,
            opts.connect_timeout,
            opts.congestion.as_deref(),
            local,
        )
        .await?;
        // --fq-rate: the kernel paces each stream the client sends (-b,
        // the writes' throttle, is the flow's: `spawn_flows`).
        if let (Some(bps), true) = (opts.fq_rate_bps, sends) {
            tcpwise_tcp::set_pacing(&s, bps)?;
        }
        s.write_all(cookie).await?;
        let ends = s.local_addr().ok().zip(s.peer_addr().ok());
        let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
        conns.push((
            s,
            Ours {
                sent: sends,
                buffers,
                ends,
                fd,
                ..Ours::default()
            },
        ));
    }
    Ok(conns)
}

/// Each stream's report, ours beside the server's results for it; the
/// first carries the server's output.
fn stream_reports(
    ours: &[Ours],
    theirs: &Results,
    (window, labels): (Option<u64>, &[String]),
    ctl: &Control,
    opts: &ClientOptions,
) -> Result<Vec<(String, crate::PerfReport)>, PerfError> {
    // What -w asked of both ends.
    let asked = &Asked {
        rcvbuf: window,
        sndbuf: window,
        path_rate_bps: opts.path_rate_bps,
        window_flag: opts.window_flag,
    };
    let mut streams = Vec::new();
    for (k, o) in ours.iter().enumerate() {
        let id = wire::stream_id(k);
        let peer = theirs
            .stream(id)
            .ok_or_else(|| ctl.wrong(format!("its results lack stream {id}")))?;
        let mut r = stream_report(o, peer, asked);
        if let (Some(bps), true) = (opts.pacing_bps, o.sent) {
            r.pacing = crate::diagnose::PacingCheck::of(&r.intervals, bps as f64 / 1e6);
        }
        if k == 0 {
            r.server_output = theirs.server_output_text.clone();
        }
        streams.push((labels[k].clone(), r));
    }
    Ok(streams)
}

/// The data phase's flows, one task each, reporting their samples on
/// `tx` until `stop`.
fn spawn_flows(
    conns: Vec<(TcpStream, Ours)>,
    (interval, held): (Duration, Option<u64>),
    (start, stop): (Instant, watch::Receiver<bool>),
    tx: tokio::sync::mpsc::UnboundedSender<(usize, Sample)>,
) -> (tokio::task::JoinSet<(usize, Sample, TcpStream)>, Vec<Ours>) {
    let mut set = tokio::task::JoinSet::new();
    let mut ours: Vec<Ours> = Vec::new();
    for (k, (sock, o)) in conns.into_iter().enumerate() {
        let flow = Flow {
            k,
            sock,
            report: Some(tx.clone()),
            interval,
            start,
            held: held.filter(|_| o.sent),
            // `-O` is refused against an iperf3 server (`unsupported`).
            omit: Duration::ZERO,
        };
        let stop = stop.clone();
        let sends = o.sent;
        set.spawn(async move {
            let (last, sock) = flow.run(sends, wire::TCP_BLOCK, stop, None).await;
            (k, last, sock)
        });
        ours.push(o);
    }
    drop(tx);
    (set, ours)
}

/// Each flow's end into our results (and its last sample into `ours`);
/// what the server still sends after our end is not counted (as iperf3
/// does not), but read, so its writes never block: the readers returned.
async fn end_flows(
    mut set: tokio::task::JoinSet<(usize, Sample, TcpStream)>,
    ours: &mut [Ours],
    results: &mut Results,
) -> Result<tokio::task::JoinSet<TcpStream>, PerfError> {
    let mut drains = tokio::task::JoinSet::new();
    while let Some(done) = set.join_next().await {
        let (k, last, mut sock) = done.map_err(std::io::Error::other)?;
        let sent = ours[k].sent;
        results.streams.push(stream_result(k, sent, &last));
        if results.congestion_used.is_none() && sent {
            results.congestion_used = tcpwise_tcp::congestion_of(&socket2::SockRef::from(&sock));
        }
        ours[k].samples.push(last);
        drains.spawn(async move {
            drain(&mut sock, Duration::from_secs(5)).await;
            sock
        });
    }
    Ok(drains)
}

/// The test's parameters as the client sends them, with its `-w`.
fn tcp_params(opts: &ClientOptions, n: usize, bidir: bool) -> (Option<u64>, Params) {
    let window = opts.window_flag.then_some(opts.rcvbuf).flatten();
    let params = Params {
        tcp: Some(true),
        parallel: n as u32,
        bidirectional: bidir.then_some(true),
        window,
        len: Some(wire::TCP_BLOCK as u64),
        bandwidth: opts.pacing_bps,
        fqrate: opts.fq_rate_bps,
        congestion: opts.congestion.clone(),
        ..Params::asked(opts)
    };
    (window, params)
}

/// Runs one test against an iperf3 server: `n` streams (`-P`), both ways
/// with `bidir`; `on_line` sees each stream's intervals and the sums as
/// they complete.
pub async fn run_client(
    opts: &ClientOptions,
    n: usize,
    bidir: bool,
    mut on_line: impl FnMut(Line),
) -> Result<ParallelReport, PerfError> {
    opts.validate()?;
    if let Some(why) = unsupported(opts, false) {
        return Err(PerfError::Config(why));
    }
    let (window, params) = tcp_params(opts, n, bidir);
    let (mut ctl, cookie) = Control::open(opts, &params).await?;
    let (addr, local, setup) = (ctl.peer, ctl.local, ctl.setup);
    let conns = open_streams(opts, &params, (addr, local), &cookie).await?;
    ctl.expect(State::TestStart, setup).await?;
    ctl.expect(State::TestRunning, setup).await?;

    // The data phase: every connection at once, our timer ends it.
    let start = Instant::now();
    let cpu0 = tcpwise_sys::cpu_times();
    let (stop_tx, stop) = watch::channel(false);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Sample)>();
    let (set, mut ours) = spawn_flows(conns, (opts.interval, opts.pacing_bps), (start, stop), tx);
    let labels: Vec<String> = ours
        .iter()
        .enumerate()
        .map(|(k, o)| label(k, n, o.sent, bidir))
        .collect();
    announce(&ours, &labels, &mut on_line);
    let mut joined = Joined::new(ours.iter().map(|o| !o.sent).collect());
    let mut prev: Vec<Sample> = vec![Sample::default(); ours.len()];
    // `keep`: the sample joins the stream's own (the flows' last ones are
    // added by `end_flows`).
    let mut show = |k: usize,
                    s: Sample,
                    (ours, prev): (&mut Vec<Ours>, &mut Vec<Sample>),
                    joined: &mut Joined,
                    keep: bool| {
        let o = &mut ours[k];
        let tx = o.sent.then_some((&prev[k], &s));
        let line: Interval =
            crate::diagnose::interval(&prev[k], &s, tx.map(|t| t.0), tx.map(|t| t.1));
        on_line(Line::Stream(&labels[k], &line));
        for sum in joined.push(k, line) {
            on_line(Line::Sum(&sum));
        }
        prev[k] = s.clone();
        if keep {
            o.samples.push(s);
        }
    };
    let timer = tokio::time::sleep(opts.duration);
    tokio::pin!(timer);
    loop {
        tokio::select! {
            _ = &mut timer => break,
            Some((k, s)) = rx.recv() => show(k, s, (&mut ours, &mut prev), &mut joined, true),
            e = ctl.interrupted() => {
                let _ = stop_tx.send(true);
                return Err(e);
            }
        }
    }
    let _ = stop_tx.send(true);
    let wall = start.elapsed().as_secs_f64();
    let mut results = results_since(cpu0, wall);
    if ours.iter().any(|o| o.sent) {
        results.sender_has_retransmits = 1;
    }
    // Samples that came with the end, then each flow's last stretch: the
    // test's last interval line, as iperf3 prints it (its timer and the
    // end fire together, and the end won).
    while let Ok((k, s)) = rx.try_recv() {
        show(k, s, (&mut ours, &mut prev), &mut joined, true);
    }
    let mut drains = end_flows(set, &mut ours, &mut results).await?;
    let tail = opts.interval.as_secs_f64() / 10.0;
    for k in 0..ours.len() {
        if let Some(last) = ours[k].samples.last().cloned()
            && last.t > prev[k].t + tail
        {
            show(k, last, (&mut ours, &mut prev), &mut joined, false);
        }
    }
    results.streams.sort_by_key(|s| s.id);
    let theirs = ctl.finish(&results).await?;
    drains.abort_all();

    let streams = stream_reports(&ours, &theirs, (window, &labels), &ctl, opts)?;
    let mut report = joined_report(streams, &joined);
    report.iperf3 = Some(extras(&cookie, &theirs, &ours));
    Ok(report)
}

/// Each stream's connection, as iperf3 announces it before the test.
fn announce(ours: &[Ours], labels: &[String], on_line: &mut impl FnMut(Line)) {
    for (k, o) in ours.iter().enumerate() {
        if let Some(ends) = o.ends {
            on_line(Line::Connected {
                label: &labels[k],
                fd: o.fd,
                ends,
                sends: o.sent,
            });
        }
    }
}

/// What iperf3's own output shows of the test beyond the streams.
fn extras(cookie: &[u8], theirs: &Results, ours: &[Ours]) -> crate::parallel::Iperf3Extras {
    crate::parallel::Iperf3Extras {
        cookie: String::from_utf8_lossy(&cookie[..wire::COOKIE_SIZE - 1]).into_owned(),
        remote_cpu: [
            theirs.cpu_util_total,
            theirs.cpu_util_user,
            theirs.cpu_util_system,
        ],
        fds: ours.iter().map(|o| o.fd).collect(),
        remote_congestion: theirs.congestion_used.clone(),
    }
}

/// The streams' reports with their sums over time and in all.
fn joined_report(streams: Vec<(String, crate::PerfReport)>, joined: &Joined) -> ParallelReport {
    let sums = sums(
        &streams
            .iter()
            .map(|(_, r)| (r.reverse, r))
            .collect::<Vec<_>>(),
    );
    ParallelReport {
        streams,
        sum_intervals: joined.sum_intervals().to_vec(),
        sums,
        iperf3: None,
    }
}
