//! `tcpwise perf client`: one test from set-up to summary, on the modules
//! below it (`options`, `net`, `stream`, `proto`, `diagnose`).

use crate::PerfError;
use crate::diagnose::{self, Asked, Interval, PerfReport};
use crate::net::{connect_with, local_addrs, resolve};
pub use crate::options::ClientOptions;
use crate::proto::{Accept, Header, MAGIC, Sample, ServerMsg};
use crate::proto::{DATA_PREFIX, GREET_AFTER, GREETING};
use crate::stream::{Limit, NOTSENT_LOWAT, run_receiver, run_sender};
use std::time::{Duration, Instant};
use tcpwise_tcp::{AppliedBuffers, BufferPolicy};
use tokio::io::{AsyncWriteExt, BufReader};

/// Runs one test; `on_interval` sees each interval as soon as both sides
/// have reported it. Three steps: [`set_up`] (control connection, the
/// header and the server's answer, the data connection), [`data_phase`]
/// (the transfer, both sides' samples joined into intervals as they
/// arrive, then the server's last words), and [`summarize`] (the summary
/// and the diagnosis, no I/O).
pub async fn run_client(
    opts: &ClientOptions,
    mut on_interval: impl FnMut(&Interval),
) -> Result<PerfReport, PerfError> {
    opts.validate()?;
    let setup = set_up(opts).await?;
    let local_buffers = setup.local_buffers.clone();
    let phase = data_phase(opts, setup, &mut on_interval).await?;
    Ok(summarize(opts, local_buffers, phase))
}

/// A test set up: both connections open, the server ready.
struct Setup {
    addr: std::net::SocketAddr,
    /// The control connection's halves (the write half stays open until
    /// the test ends: closing it would tell the server we are gone).
    r: BufReader<tokio::net::tcp::OwnedReadHalf>,
    _w: tokio::net::tcp::OwnedWriteHalf,
    data: tokio::net::TcpStream,
    /// The data connection's two ends (local, remote).
    ends: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
    local_buffers: AppliedBuffers,
    /// When the data phase must be over, whatever the server does.
    data_deadline: tokio::time::Instant,
}

/// The test header the server reads: the run's direction, length and
/// the server side's socket settings.
fn test_header(opts: &ClientOptions) -> Header {
    Header {
        magic: MAGIC.into(),
        reverse: opts.reverse,
        duration_ms: opts.run_time().as_millis() as u64,
        bytes: opts.bytes,
        interval_ms: opts.interval.as_millis().max(1) as u64,
        server_rcvbuf: if opts.reverse { None } else { opts.rcvbuf },
        server_sndbuf: if opts.reverse { opts.sndbuf } else { None },
        server_read_sizing: Some(opts.read_sizing),
        congestion: opts.congestion.clone(),
        pacing_bps: if opts.reverse { opts.pacing_bps } else { None },
        fq_rate_bps: if opts.reverse { opts.fq_rate_bps } else { None },
        udp: None,
        server_output: opts.server_output,
        zerocopy: opts.zerocopy,
    }
}

/// Waits for our server's greeting on a new control connection. It is
/// written [`GREET_AFTER`] after the server accepted, which is about half
/// a round trip after our connect returned, and takes half a round trip
/// more: the wait is that, a whole round trip (`rtt`, the connect's time)
/// more and 20 ms of slack, 40 ms and 2 round trips in all. Silence is an
/// iperf3 server (it reads a cookie before it writes anything): the
/// connection is kept in `opts.adopt` for the iperf3 client to go on
/// with, so iperf3's log shows one test, and no failed one before it.
pub(crate) async fn greeted(
    mut sock: tokio::net::TcpStream,
    addr: std::net::SocketAddr,
    rtt: Duration,
    opts: &ClientOptions,
) -> Result<tokio::net::TcpStream, PerfError> {
    use tokio::io::AsyncReadExt;
    let wait = GREET_AFTER + rtt * 2 + Duration::from_millis(20);
    let deadline = tokio::time::Instant::now() + wait;
    let wrong = |why: String| PerfError::WrongProtocol(addr.to_string(), why);
    // Room for more than the greeting: what another server says instead
    // is shown in the error.
    let mut got = [0u8; 64];
    let mut have = 0;
    while have < GREETING.len() {
        match tokio::time::timeout_at(deadline, sock.read(&mut got[have..])).await {
            Err(_) if have == 0 => {
                opts.adopt.keep(addr, sock);
                return Err(PerfError::Iperf3Server(addr.to_string()));
            }
            Err(_) => return Err(wrong(format!("it sent {have} byte(s) of no greeting"))),
            Ok(Err(e)) => return Err(wrong(format!("the connection failed: {e}"))),
            Ok(Ok(0)) => return Err(wrong("it closed the connection without a word".into())),
            Ok(Ok(n)) => have += n,
        }
        // iperf3 answers a second client at once (ACCESS_DENIED).
        if matches!(got[0], 9 | 0xfe | 0xff) {
            return Err(PerfError::Iperf3Server(addr.to_string()));
        }
        if have > GREETING.len() || got[..have] != GREETING[..have] {
            let shown = String::from_utf8_lossy(&got[..have]).into_owned();
            return Err(wrong(format!("it answered {shown:?}")));
        }
    }
    Ok(sock)
}

/// Reads the server's answer to the test header, by `deadline`: its
/// token, or why it is no tcpwise perf server (an iperf3 server was
/// found before, by [`greeted`]).
async fn read_accept(
    r: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    addr: std::net::SocketAddr,
    deadline: tokio::time::Instant,
    limit: Duration,
) -> Result<u64, PerfError> {
    let mut reply = String::new();
    let wrong = |why: String| PerfError::WrongProtocol(addr.to_string(), why);
    match tokio::time::timeout_at(deadline, crate::proto::read_line(&mut *r, &mut reply)).await {
        Err(_) => {
            return Err(wrong(format!(
                "no answer to the test header within {:.1} s",
                limit.as_secs_f64()
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
    accept.token.ok_or_else(|| wrong("no test token".into()))
}

/// Resolves, connects, sends the header, reads the server's answer and
/// opens the data connection, within -t + 0.5 s.
async fn set_up(opts: &ClientOptions) -> Result<Setup, PerfError> {
    let addr = resolve(opts).await?;
    let (ctl_local, data_local) = local_addrs(opts, addr)?;

    // Nothing may hold the run much past -t, whatever the server does:
    // setting up gets at most -t + 0.5 s, the data phase ends by -t plus
    // 1 s plus a few set-up times plus what the path still has to deliver
    // when the sender stops (`Drain`: its unsent bytes at the rate seen,
    // two of the longest round trips measured, queueing included).
    let began = Instant::now();
    let setup_limit = (opts.run_time() + Duration::from_millis(500)).min(opts.connect_timeout * 2);
    let setup_deadline = tokio::time::Instant::now() + setup_limit;
    let stalled = |what: &str| {
        PerfError::Unreachable(
            addr.to_string(),
            format!("{what} within {:.1} s", setup_limit.as_secs_f64()),
        )
    };
    let connect_limit = opts.connect_timeout.min(setup_limit);
    let dialled = Instant::now();
    let (ctl, _) = connect_with(addr, BufferPolicy::Auto, connect_limit, None, ctl_local).await?;
    let ctl = greeted(ctl, addr, dialled.elapsed(), opts).await?;
    let (r, mut w) = ctl.into_split();
    let mut r = BufReader::new(r);
    let header = test_header(opts);
    let mut line = serde_json::to_vec(&header).map_err(|e| PerfError::Config(e.to_string()))?;
    line.push(b'\n');
    w.write_all(&line).await?;
    let token = read_accept(&mut r, addr, setup_deadline, setup_limit).await?;

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
    if let (Some(bps), false) = (opts.fq_rate_bps, opts.reverse) {
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
                opts.run_time() + Duration::from_secs(1) + (setup * 3).min(Duration::from_secs(5))
            }
        };

    let ends = data.local_addr().ok().zip(data.peer_addr().ok());
    Ok(Setup {
        addr,
        r,
        _w: w,
        ends,
        data,
        local_buffers,
        data_deadline,
    })
}

/// What the data phase saw.
struct Phase {
    st: Joiner,
    local_last: Sample,
    remote_last: Sample,
    remote_buffers: AppliedBuffers,
    server_output: Option<String>,
    ends: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
}

/// What the server says besides its samples: its buffers, its last
/// sample, its output (`--get-server-output`).
#[derive(Default)]
struct Words {
    buffers: AppliedBuffers,
    done: Option<Sample>,
    output: Option<String>,
}

impl Words {
    /// Keeps what a message says; a sample is handed back.
    fn take(&mut self, m: ServerMsg) -> Option<Sample> {
        match m {
            ServerMsg::Sample(s) => return Some(s),
            ServerMsg::Buffers { applied } => self.buffers = applied,
            ServerMsg::Done(s) => self.done = Some(s),
            ServerMsg::Output { text } => self.output = Some(text),
        }
        None
    }
}

/// The server's messages, read on a task of their own.
fn server_messages(
    mut r: BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::sync::mpsc::UnboundedReceiver<ServerMsg>,
) {
    let (mtx, mrx) = tokio::sync::mpsc::unbounded_channel::<ServerMsg>();
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
    (reader, mrx)
}

/// The transfer outlived its deadline.
fn late(addr: std::net::SocketAddr, drain: &Drain) -> PerfError {
    PerfError::Unreachable(
        addr.to_string(),
        format!(
            "the transfer did not end in time after -t (1 s, a few set-up times and {:.1} s for what was left to deliver at its rate and two round trips of {:.0} ms): the peer stopped reading or sending",
            drain.time().as_secs_f64(),
            drain.rtt.as_secs_f64() * 1e3
        ),
    )
}

/// No byte moved for `--stall-timeout`.
fn stalled(addr: std::net::SocketAddr, stall: Duration) -> PerfError {
    PerfError::Unreachable(
        addr.to_string(),
        format!(
            "no data moved for {:.0} s (--stall-timeout): the path is down or the peer stopped",
            stall.as_secs_f64()
        ),
    )
}

/// The transfer and the server's last words.
async fn data_phase(
    opts: &ClientOptions,
    setup: Setup,
    on_interval: &mut impl FnMut(&Interval),
) -> Result<Phase, PerfError> {
    let Setup {
        addr,
        r,
        _w,
        data,
        data_deadline,
        ends,
        ..
    } = setup;
    let wrong = |why: String| PerfError::WrongProtocol(addr.to_string(), why);
    let (reader, mut mrx) = server_messages(r);

    let (stx, mut srx) = tokio::sync::mpsc::unbounded_channel::<Sample>();
    let limit = opts
        .bytes
        .map_or(Limit::Time(opts.run_time()), Limit::Bytes);
    let local = async {
        let r = if opts.reverse {
            run_receiver(data, opts.read_sizing, opts.interval, limit, &stx).await
        } else {
            let held = opts.pacing_bps;
            run_sender(data, limit, opts.interval, &stx, (opts.zerocopy, held)).await
        };
        drop(stx);
        r
    };
    let mut st = Joiner::new(opts.reverse, opts.omit.as_secs_f64());
    let mut words = Words::default();
    let stall = opts.stall_timeout;
    let mut progress = (0u64, tokio::time::Instant::now());
    // What the path still has to deliver when the sender stops: the end of
    // the test waits for it past -t.
    let mut drain = Drain::default();
    let pump = async {
        loop {
            let deadline = data_deadline + drain.time();
            tokio::select! {
                s = srx.recv() => match s {
                    Some(s) => {
                        if s.bytes > progress.0 {
                            progress = (s.bytes, tokio::time::Instant::now());
                        }
                        drain.see(&s);
                        st.local.push(s);
                    }
                    None => break,
                },
                _ = tokio::time::sleep_until(deadline) => return Err(late(addr, &drain)),
                _ = tokio::time::sleep_until(progress.1 + stall) => return Err(stalled(addr, stall)),
                Some(m) = mrx.recv() => {
                    if let Some(s) = words.take(m) {
                        drain.see(&s);
                        st.remote.push(s);
                    }
                }
            }
            st.emit(on_interval);
        }
        Ok(())
    };
    // A stall or the deadline ends the pump with an error, and the
    // transfer is dropped with it.
    let (local_last, ()) = tokio::try_join!(local, pump)?;
    // The server's last words (one loaded round trip away at most).
    let now = tokio::time::Instant::now();
    let deadline = (data_deadline + drain.time())
        .min(now + Duration::from_secs(15))
        .max(now + Duration::from_millis(200) + drain.rtt);
    while words.done.is_none() {
        match tokio::time::timeout_at(deadline, mrx.recv()).await {
            Ok(Some(m)) => st.remote.extend(words.take(m)),
            Ok(None) | Err(_) => break,
        }
    }
    reader.abort();
    let remote_last = words
        .done
        .ok_or_else(|| wrong("the server did not report the end of the test".into()))?;
    st.emit(on_interval);
    st.local.push(local_last.clone());
    st.remote.push(remote_last.clone());
    st.emit_final(on_interval);
    Ok(Phase {
        st,
        local_last,
        remote_last,
        remote_buffers: words.buffers,
        server_output: words.output,
        ends,
    })
}

/// How long past -t the end of a test may take, from what the samples
/// say: the sender stops writing at -t, but up to [`NOTSENT_LOWAT`] bytes
/// it wrote are still unsent in its socket and a window's worth in
/// flight, queueing included. At 500 kbit/s that is over 4 s: a deadline
/// blind to it failed a working path as unreachable.
#[derive(Debug, Default, Clone, Copy)]
struct Drain {
    /// The largest round trip either end measured (the sender's smoothed
    /// RTT, or the receiver's own estimate): the data in flight and the
    /// close each take up to one.
    rtt: Duration,
    /// The time to send the unsent bytes at the rate seen so far.
    backlog: Duration,
}

impl Drain {
    fn see(&mut self, s: &Sample) {
        let us = s.info.as_ref().map_or(0, |i| i.rtt_us.max(i.rcv_rtt_us));
        self.rtt = self.rtt.max(Duration::from_micros(u64::from(us)));
        if s.bytes > 0 && s.t > 0.0 {
            let secs = f64::from(NOTSENT_LOWAT) * s.t / s.bytes as f64;
            self.backlog = Duration::from_secs_f64(secs.min(60.0));
        }
    }

    /// At most a minute (a stall is caught sooner, by `--stall-timeout`).
    fn time(&self) -> Duration {
        (self.rtt * 2 + self.backlog).min(Duration::from_secs(60))
    }
}

/// The summary, diagnosis and report of a finished test (no I/O).
fn summarize(opts: &ClientOptions, local_buffers: AppliedBuffers, phase: Phase) -> PerfReport {
    let Phase {
        st,
        local_last,
        remote_last,
        remote_buffers,
        server_output,
        ends,
    } = phase;
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
        window_flag: opts.window_flag,
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
        let tx = if opts.reverse { &st.remote } else { &st.local };
        diagnose::omit(&mut summary, &st.lines, tx, opts.omit.as_secs_f64());
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
    let mss = st
        .local
        .iter()
        .find_map(|s| s.info.as_ref().map(|i| i.snd_mss));
    PerfReport {
        mss,
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
        ends,
    }
}

/// Pairs local and remote samples by index into interval lines.
struct Joiner {
    reverse: bool,
    /// `-O`: lines that start before this are marked omitted.
    omit_s: f64,
    local: Vec<Sample>,
    remote: Vec<Sample>,
    lines: Vec<Interval>,
}

impl Joiner {
    fn new(reverse: bool, omit_s: f64) -> Joiner {
        Joiner {
            reverse,
            omit_s,
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
            let mut line = diagnose::interval(r0, r1, t0, Some(t1));
            line.omitted = line.start_s < self.omit_s - 1e-6;
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
            let mut line = diagnose::interval(r0, r1, t0, t1);
            line.omitted = line.start_s < self.omit_s - 1e-6;
            f(&line);
            self.lines.push(line);
        }
    }
}
