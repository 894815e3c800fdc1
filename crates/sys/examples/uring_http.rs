//! A measurement sketch, not a server: how little CPU a plain HTTP/1.1
//! keep-alive responder can spend per request on io_uring, to compare
//! with nginx and `tcpwise serve` (`scripts/bench-serve --uring-sketch`,
//! figures in `docs/bench.md`, "io_uring"). One thread, one ring: a
//! multishot accept, a multishot receive per connection into provided
//! buffers, and every answer of a loop turn submitted with the next wait,
//! so one `io_uring_enter` serves many connections. It answers every
//! request head with the same 100-byte body and a fixed `Date` (`serve`
//! formats its own once a second) and has no routes, timeouts, limits or
//! slow path: what `serve` would add around it.
//!
//! usage: uring_http [ADDR] [--plain] [--legacy-buffers]  (`--plain`:
//! without `Ring::single_issuer`'s deferred task work; `--legacy-buffers`:
//! receive buffers given back by a submission each instead of through
//! `Ring::provide_buffer_ring`)

use std::collections::HashMap;
use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use tcpwise_sys::uring::{Event, Ring, SharedFd};

/// The accept's token; connections count up from 0.
const ACCEPT: u64 = u64::MAX;

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let addr = args
        .first()
        .filter(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:18083".into());
    let l = TcpListener::bind(&addr)?;
    // The ring polls a non-blocking listener rather than parking a thread.
    l.set_nonblocking(true)?;
    let l: SharedFd = Arc::new(l);
    let ring = if flag("--plain") {
        Ring::new(4096)
    } else {
        Ring::single_issuer(4096)
    };
    let mut ring = ring.map_err(io::Error::other)?;
    if flag("--legacy-buffers") {
        ring.provide_buffers(4096, 2048)?;
    } else {
        ring.provide_buffer_ring(4096, 2048)?;
    }
    ring.accept_multi(&l, ACCEPT)?;
    let answer = answer();
    let mut conns: HashMap<u64, (SharedFd, Vec<u8>)> = HashMap::new();
    let (mut next, mut events) = (0u64, Vec::new());
    loop {
        ring.submit_and_wait(1, 1000)?;
        ring.reap(&mut events);
        for ev in events.drain(..) {
            match ev {
                Event::Accepted {
                    result: Ok(fd),
                    more,
                    ..
                } => {
                    let s: SharedFd = Arc::new(TcpStream::from(fd));
                    ring.recv_multi(&s, next)?;
                    conns.insert(next, (s, Vec::new()));
                    next += 1;
                    if !more {
                        ring.accept_multi(&l, ACCEPT)?;
                    }
                }
                Event::Received {
                    token,
                    result: Ok(Some((bid, len))),
                    more,
                } => {
                    let Some((s, pending)) = conns.get_mut(&token) else {
                        ring.recycle(bid)?;
                        continue;
                    };
                    pending.extend_from_slice(ring.provided(bid, len));
                    ring.recycle(bid)?;
                    let out = answers(pending, &answer);
                    let s = s.clone();
                    if !out.is_empty() {
                        ring.send(&s, out, token)?;
                    }
                    if !more {
                        ring.recv_multi(&s, token)?;
                    }
                }
                // End of stream or an error: the ring drops its own
                // reference to the socket when the receive completes.
                Event::Received { token, .. } => {
                    conns.remove(&token);
                }
                _ => {}
            }
        }
    }
}

/// The one answer, with the headers `serve` sends for `/bytes/100`.
fn answer() -> Vec<u8> {
    let body = "x".repeat(100);
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n\
         content-length: 100\r\ndate: Sat, 28 Nov 2026 23:40:00 GMT\r\n\r\n{body}"
    )
    .into_bytes()
}

/// One answer for every complete request head in `pending`, which keeps
/// what follows the last one.
fn answers(pending: &mut Vec<u8>, answer: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
        pending.drain(..i + 4);
        out.extend_from_slice(answer);
    }
    out
}
