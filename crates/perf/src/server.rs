//! `tcpwise perf server`: accepts tests, one control and one data
//! connection each, any number at once (tokio tasks).

use crate::PerfError;
use crate::proto::{self, Accept, MAGIC, Sample, ServerMsg};
use crate::stream::{Limit, run_receiver, run_sender};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tcpwise_outcome::Shutdown;
use tcpwise_tcp::BufferPolicy;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

pub use crate::proto::DATA_PREFIX;

/// Server configuration.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// Exit after one test.
    pub one_off: bool,
    /// Print one line per test to stderr.
    pub verbose: bool,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<TcpStream>>>>;

/// Serves until `stop` is triggered or the task is dropped (or after one
/// test with `one_off`). `ready` gets the bound address once listening.
pub async fn run_server(
    opts: ServerOptions,
    stop: Shutdown,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), PerfError> {
    let listener = TcpListener::bind(opts.bind)
        .await
        .map_err(|source| PerfError::Listen {
            addr: opts.bind,
            source,
        })?;
    ready(listener.local_addr()?);
    let pending: Pending = Arc::default();
    let waiting: crate::interop::server::Waiting = Arc::default();
    // Accept order: an iperf3 client opens its data connections one after
    // the other, and their order says which way each one flows.
    let mut seq = 0u64;
    let (done_tx, mut done_rx) = tokio::sync::mpsc::channel::<()>(4);
    loop {
        tokio::select! {
            acc = listener.accept() => {
                let (sock, peer) = acc?;
                seq += 1;
                let order = seq;
                let pending = pending.clone();
                let waiting = waiting.clone();
                let done = done_tx.clone();
                let verbose = opts.verbose;
                tokio::spawn(async move {
                    match handle(sock, order, pending, waiting).await {
                        Ok(Some(summary)) => {
                            if verbose {
                                eprintln!("tcpwise perf server: test from {peer}: {summary}");
                            }
                            let _ = done.send(()).await;
                        }
                        Ok(None) => {}
                        Err(e) => eprintln!("tcpwise perf server: {peer}: {e}"),
                    }
                });
            }
            _ = done_rx.recv(), if opts.one_off => return Ok(()),
            _ = stop.wait() => return Ok(()),
        }
    }
}

async fn handle(
    mut sock: TcpStream,
    order: u64,
    pending: Pending,
    waiting: crate::interop::server::Waiting,
) -> Result<Option<String>, PerfError> {
    sock.set_nodelay(true)?;
    let mut first = [0u8; 1];
    // A client silent for GREET_AFTER is ours waiting to be greeted (an
    // iperf3 client and our data connections speak first).
    let n = match tokio::time::timeout(proto::GREET_AFTER, sock.peek(&mut first)).await {
        Ok(n) => n?,
        Err(_) => {
            sock.write_all(proto::GREETING).await?;
            tokio::time::timeout(Duration::from_secs(10), sock.peek(&mut first))
                .await
                .map_err(|_| {
                    PerfError::WrongProtocol("client".into(), "sent nothing for 10 s".into())
                })??
        }
    };
    if n == 0 {
        return Ok(None);
    }
    if crate::interop::wire::starts_cookie(first[0]) {
        return crate::interop::server::handle(sock, order, waiting).await;
    }
    if first[0] == DATA_PREFIX[0] {
        let mut hello = [0u8; 12];
        sock.read_exact(&mut hello).await?;
        let Some(token) = proto::parse_hello(&hello) else {
            return Err(PerfError::WrongProtocol(
                "client".into(),
                "bad data prefix".into(),
            ));
        };
        let waiter = pending.lock().expect("lock").remove(&token);
        match waiter {
            Some(w) => {
                let _ = w.send(sock);
            }
            None => {
                return Err(PerfError::WrongProtocol(
                    "client".into(),
                    "unknown test token".into(),
                ));
            }
        }
        return Ok(None);
    }
    control(sock, pending).await.map(Some)
}

async fn send(
    w: &mut (impl AsyncWriteExt + Unpin),
    msg: &impl serde::Serialize,
) -> Result<(), PerfError> {
    let mut line = serde_json::to_vec(msg).map_err(|e| PerfError::Config(e.to_string()))?;
    line.push(b'\n');
    w.write_all(&line).await?;
    Ok(())
}

fn refuse(why: &str) -> Accept {
    Accept {
        magic: MAGIC.into(),
        token: None,
        error: Some(why.into()),
        udp_port: None,
    }
}

/// The data connection's settings from the header: the buffer the
/// client asked of our side, its congestion control, its pacing.
fn data_settings(
    header: &crate::proto::Header,
    data: &TcpStream,
) -> Result<tcpwise_tcp::AppliedBuffers, PerfError> {
    let policy = if header.reverse {
        BufferPolicy::Static {
            rcv: None,
            snd: header.server_sndbuf,
        }
    } else {
        BufferPolicy::Static {
            rcv: header.server_rcvbuf,
            snd: None,
        }
    };
    let applied = policy.apply(&socket2::SockRef::from(data))?;
    if let Some(algo) = &header.congestion {
        // The client checked its own side; a server without the algorithm
        // ends the test with the reason on the control connection.
        crate::set_congestion(&socket2::SockRef::from(data), algo)?;
    }
    if let (Some(bps), true) = (header.fq_rate_bps, header.reverse) {
        tcpwise_tcp::set_pacing(data, bps)?;
    }
    Ok(applied)
}

async fn control(sock: TcpStream, pending: Pending) -> Result<String, PerfError> {
    let local_ip = sock.local_addr()?.ip();
    let (r, mut w) = sock.into_split();
    let mut r = BufReader::new(r);
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(10), proto::read_line(&mut r, &mut line))
        .await
        .map_err(|_| PerfError::WrongProtocol("client".into(), "no header within 10 s".into()))??;
    let header = match proto::check_header(&line) {
        Ok(h) => h,
        Err(why) => {
            let why = why.to_string();
            send(&mut w, &refuse(&why)).await?;
            return Err(PerfError::WrongProtocol("client".into(), why));
        }
    };
    if header.udp.is_some() {
        // A UDP test: a socket of its own on the address the client reached.
        let udp = tokio::net::UdpSocket::bind(SocketAddr::new(local_ip, 0)).await?;
        let port = udp.local_addr()?.port();
        send(
            &mut w,
            &Accept {
                magic: MAGIC.into(),
                token: None,
                error: None,
                udp_port: Some(port),
            },
        )
        .await?;
        return crate::udp::serve(&header, udp, w).await;
    }
    let token = rand_token();
    let (tx, rx) = oneshot::channel();
    pending.lock().expect("lock").insert(token, tx);
    send(
        &mut w,
        &Accept {
            magic: MAGIC.into(),
            token: Some(token),
            error: None,
            udp_port: None,
        },
    )
    .await?;
    let data = match tokio::time::timeout(Duration::from_secs(10), rx).await {
        Ok(Ok(d)) => d,
        _ => {
            pending.lock().expect("lock").remove(&token);
            return Err(PerfError::WrongProtocol(
                "client".into(),
                "no data connection within 10 s".into(),
            ));
        }
    };
    let applied = data_settings(&header, &data)?;
    send(&mut w, &ServerMsg::Buffers { applied }).await?;
    let (stx, mut srx) = tokio::sync::mpsc::unbounded_channel::<Sample>();
    let interval = Duration::from_millis(header.interval_ms);
    let reverse = header.reverse;
    let server_output = header.server_output;
    let work = async move {
        let r = if header.reverse {
            let limit = Limit::from_header(&header);
            let held = header.pacing_bps;
            run_sender(data, limit, interval, &stx, (header.zerocopy, held)).await
        } else {
            let sizer = header.server_read_sizing.unwrap_or_default();
            let limit = Limit::from_header(&header);
            run_receiver(data, sizer, interval, limit, &stx).await
        };
        drop(stx);
        r
    };
    let mut seen = Vec::new();
    let forward = async {
        while let Some(s) = srx.recv().await {
            seen.push(s.clone());
            if send(&mut w, &ServerMsg::Sample(s)).await.is_err() {
                break;
            }
        }
    };
    let (last, ()) = tokio::join!(work, forward);
    let last = last?;
    if server_output {
        seen.push(last.clone());
        let text = crate::diagnose::server_text(&seen, reverse);
        send(&mut w, &ServerMsg::Output { text }).await?;
    }
    send(&mut w, &ServerMsg::Done(last.clone())).await?;
    let _ = w.shutdown().await;
    Ok(format!(
        "{} {} bytes in {:.1} s",
        if reverse { "sent" } else { "received" },
        last.bytes,
        last.t
    ))
}

fn rand_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}
