//! `tcpwise perf server` answering `iperf3 -c`: the server's side of
//! iperf3's control protocol ([`super::wire`]), for connections that open
//! with an iperf3 cookie. Unlike iperf3's server, several tests may run
//! at once (each keyed by its cookie).

use super::data::{Flow, exchange, fail, read_json, results_since, state, stream_result};
use super::wire::{self, Params, ServerErrno, State};
use crate::PerfError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcpwise_tcp::BufferPolicy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

/// A data connection and its place in the server's accept order.
type Arrived = (u64, TcpStream);

/// Tests waiting for their data connections, by cookie.
pub type Waiting = Arc<Mutex<HashMap<[u8; wire::COOKIE_SIZE], mpsc::UnboundedSender<Arrived>>>>;

/// A connection that opened with a cookie (the `order`-th the server
/// accepted): a data connection of a test that waits for it (handed
/// over, `Ok(None)`), or a new test's control connection, run to its end
/// (`Ok(Some(summary))`).
pub async fn handle(
    mut sock: TcpStream,
    order: u64,
    waiting: Waiting,
) -> Result<Option<String>, PerfError> {
    let mut cookie = [0u8; wire::COOKIE_SIZE];
    tokio::time::timeout(Duration::from_secs(10), sock.read_exact(&mut cookie))
        .await
        .map_err(|_| {
            PerfError::WrongProtocol("iperf3 client".into(), "a cookie cut short".into())
        })??;
    let waiter = waiting.lock().expect("lock").get(&cookie).cloned();
    if let Some(w) = waiter {
        let _ = w.send((order, sock));
        return Ok(None);
    }
    let (tx, rx) = mpsc::unbounded_channel();
    waiting.lock().expect("lock").insert(cookie, tx);
    let r = control(sock, rx).await;
    waiting.lock().expect("lock").remove(&cookie);
    r.map(Some)
}

async fn read_params(sock: &mut TcpStream) -> Result<Params, PerfError> {
    match tokio::time::timeout(Duration::from_secs(10), read_json::<Params>(sock)).await {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(PerfError::WrongProtocol(
            "iperf3 client".into(),
            format!("its parameters: {e}"),
        )),
        Err(_) => Err(PerfError::WrongProtocol(
            "iperf3 client".into(),
            "no parameters within 10 s".into(),
        )),
    }
}

/// The test's data connections, in the order the client opened them,
/// each with the window and congestion control it asked for.
async fn data_connections(
    ctl: &mut TcpStream,
    streams: &mut mpsc::UnboundedReceiver<Arrived>,
    params: &Params,
) -> Result<Vec<TcpStream>, PerfError> {
    let total = params.streams();
    let mut socks = Vec::new();
    while socks.len() < total {
        match tokio::time::timeout(Duration::from_secs(10), streams.recv()).await {
            Ok(Some(s)) => socks.push(s),
            _ => {
                let _ = ctl.write_all(&ServerErrno::Accept.message()).await;
                return Err(fail("its data connections did not all come within 10 s"));
            }
        }
    }
    // Read in parallel, the cookies may arrive out of the accept order.
    socks.sort_by_key(|(order, _)| *order);
    let socks: Vec<TcpStream> = socks.into_iter().map(|(_, s)| s).collect();
    for s in &socks {
        let r = socket2::SockRef::from(s);
        if let Some(w) = params.window {
            BufferPolicy::Static {
                rcv: Some(w),
                snd: Some(w),
            }
            .apply(&r)?;
        }
        if let Some(c) = &params.congestion {
            crate::set_congestion(&r, c)?;
        }
        // An iperf3 client's --fq-rate: the kernel paces each stream this
        // end sends (its -b, per stream too, holds the flows' writes).
        if let Some(bps) = params.fqrate.filter(|b| *b > 0) {
            tcpwise_tcp::set_pacing(s, bps)?;
        }
    }
    Ok(socks)
}

async fn control(
    mut ctl: TcpStream,
    mut streams: mpsc::UnboundedReceiver<Arrived>,
) -> Result<String, PerfError> {
    ctl.set_nodelay(true)?;
    ctl.write_all(&[State::ParamExchange.byte()]).await?;
    let params = match read_params(&mut ctl).await {
        Ok(p) => p,
        Err(e) => {
            let _ = ctl.write_all(&ServerErrno::RecvParams.message()).await;
            return Err(e);
        }
    };
    if params.udp == Some(true) && params.streams() == 1 {
        return super::udp::serve(ctl, &params).await;
    }
    if params.tcp != Some(true) {
        let _ = ctl.write_all(&ServerErrno::Protocol.message()).await;
        return Err(fail(
            "asked for a UDP test of several streams or both ways, or SCTP; this server runs iperf3's TCP tests and one-stream UDP",
        ));
    }
    let total = params.streams();
    if total > 128 {
        let _ = ctl.write_all(&ServerErrno::RecvParams.message()).await;
        return Err(fail("asked for more than 128 streams"));
    }
    if let Some(w) = params.window.filter(|&w| w > crate::proto::MAX_BUFFER) {
        // iperf3's own server refuses past the same cap (MAX_TCP_BUFFER).
        let _ = ctl.write_all(&ServerErrno::RecvParams.message()).await;
        return Err(fail(&format!(
            "asked for a {w}-byte window; at most 512 MiB"
        )));
    }
    // iperf3's own bounds on the fields this end acts on: its omit cap
    // (MAX_OMIT_TIME), and rates a socket can be held or paced to.
    let rate_ok = |r: Option<u64>| r.is_none_or(|r| r <= 1_000_000_000_000);
    if params.omit > 600 || !rate_ok(params.bandwidth) || !rate_ok(params.fqrate) {
        let _ = ctl.write_all(&ServerErrno::RecvParams.message()).await;
        return Err(fail(
            "asked for -O over 600 s, or -b or --fq-rate over 1 Tbit/s",
        ));
    }
    ctl.write_all(&[State::CreateStreams.byte()]).await?;
    let socks = data_connections(&mut ctl, &mut streams, &params).await?;
    ctl.write_all(&[State::TestStart.byte(), State::TestRunning.byte()])
        .await?;

    let start = Instant::now();
    let cpu0 = tcpwise_sys::cpu_times();
    let (stop_tx, stop) = watch::channel(false);
    let mut set = spawn_flows(socks, &params, start, &stop);
    // The client's timer ends the test; ours only guards against a client
    // that never says so.
    let guard = params.guard();
    let end = state(&mut ctl, guard).await;
    let _ = stop_tx.send(true);
    let wall = start.elapsed().as_secs_f64();
    let mut results = results_since(cpu0, wall);
    let mut moved = 0u64;
    while let Some(done) = set.join_next().await {
        let (k, sends, last, sock) = done.map_err(std::io::Error::other)?;
        moved += last.bytes;
        if sends {
            results.sender_has_retransmits = 1;
            results.congestion_used = tcpwise_tcp::congestion_of(&socket2::SockRef::from(&sock));
        }
        let mut r = stream_result(k, sends, &last);
        // A byte-limited sender's last write lands in its socket long
        // before the bytes arrive: iperf3's server ends its stream's
        // time at the test's end, and its client's sender line reads it
        // so (iperf3 -R -n 5M -P 2: our writes' own end read 65-76
        // Mbit/s sent against 46 received).
        if sends && params.num > 0 {
            r.end_time = wall;
        }
        results.streams.push(r);
        // iperf3's server closes the data connections at TEST_END.
        drop(sock);
    }
    results.streams.sort_by_key(|s| s.id);
    if end != Some(State::TestEnd) {
        return Err(fail("the client went away before the end of the test"));
    }
    exchange(&mut ctl, &results).await?;
    Ok(format!(
        "iperf3 test, {total} stream(s){}: {moved} bytes in {wall:.2} s",
        if params.reverse == Some(true) {
            ", reverse"
        } else if params.bidirectional == Some(true) {
            ", both ways"
        } else {
            ""
        }
    ))
}

/// One task per data connection from `start` until `stop`, sending or
/// receiving as `params` say, with iperf3's `-b`, `-O` and `-n`: each
/// gives back its index, whether this end sent, its last sample and its
/// socket.
fn spawn_flows(
    socks: Vec<TcpStream>,
    params: &Params,
    start: Instant,
    stop: &watch::Receiver<bool>,
) -> tokio::task::JoinSet<(usize, bool, crate::proto::Sample, TcpStream)> {
    let mut set = tokio::task::JoinSet::new();
    let block = params
        .len
        .map_or(wire::TCP_BLOCK, |l| l.clamp(1, 1 << 24) as usize);
    // iperf3's -n is the test's total, not each stream's: shared among
    // the streams this end sends, in equal parts.
    let senders = (0..socks.len())
        .filter(|&k| !params.client_sends(k))
        .count();
    let limits = crate::parallel::shares((params.num > 0).then_some(params.num), senders);
    let mut mine = limits.into_iter();
    for (k, sock) in socks.into_iter().enumerate() {
        let sends = !params.client_sends(k);
        let limit = if sends { mine.next().flatten() } else { None };
        let flow = Flow {
            k,
            sock,
            report: None,
            interval: Duration::from_secs(1),
            start,
            held: params.bandwidth.filter(|b| *b > 0 && sends),
            omit: Duration::from_secs(params.omit),
        };
        let stop = stop.clone();
        set.spawn(async move {
            let (last, sock) = flow.run(sends, block, stop, limit).await;
            (k, sends, last, sock)
        });
    }
    set
}
