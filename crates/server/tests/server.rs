//! `tcpwise serve` on the wire: pipelining, HTTP/1.0, HEAD, chunked and
//! sized echo (with `Expect: 100-continue`), bodies on routes that take
//! none, bad and oversized heads, large bodies in every framing, and
//! graceful shutdown. Raw sockets, so nothing a client library smooths over
//! hides a framing error.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use tcpwise_http::h1::{Chunked, MAX_HEAD};
use tcpwise_server::pattern::pattern_byte;
use tcpwise_server::{Core, Io, Step};

/// Each test on both of `serve`'s engines: `serve --io epoll` and `--io uring`.
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn epoll() {
                super::$name(super::Io::Epoll)
            }
            #[test]
            fn uring() {
                super::$name(super::Io::Uring)
            }
        }
    )*};
}

on_both_engines!(
    pipelined_requests_are_answered_in_order_in_any_split,
    http_1_0_closes_unless_kept_alive_and_connection_close_is_honoured,
    echo_streams_sized_and_chunked_bodies_and_answers_expect_continue,
    bad_heads_get_400_or_431_and_a_close,
    a_body_on_a_route_that_takes_none_is_skipped_or_the_connection_closed,
    large_bodies_in_both_framings_are_exact,
    shutdown_finishes_a_response_in_flight_and_closes_idle_connections,
    slowloris_connections_are_closed_after_the_header_timeout_and_do_not_delay_others,
    idle_keep_alive_connections_are_closed_after_the_idle_timeout,
    echo_bodies_over_the_limit_get_413_or_are_cut_off,
    at_the_connection_limit_a_newcomer_closes_the_stalest,
    a_slow_request_hands_over_with_what_follows_it,
    a_client_that_pipelines_without_reading_gets_every_answer,
    http2_prior_knowledge_is_found_in_a_split_preface,
);

struct Server {
    addr: SocketAddr,
    stop: tcpwise_outcome::Shutdown,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(io: Io) -> Option<Server> {
        Server::with(io, tcpwise_server::Limits::default())
    }

    /// A server on `io`, or `None` (said on stderr) where this kernel has
    /// no io_uring for it.
    fn with(io: Io, limits: tcpwise_server::Limits) -> Option<Server> {
        let tx = tcpwise_outcome::Shutdown::new();
        let rx = tx.clone();
        let (atx, arx) = std::sync::mpsc::channel();
        let opts = tcpwise_server::ServeOptions {
            limits,
            io,
            ..tcpwise_server::ServeOptions::new("127.0.0.1:0".parse().unwrap())
        };
        if let Err(e) = Io::resolve(&opts) {
            if std::env::var("TCPWISE_REQUIRE_IO_URING").as_deref() == Ok("1") {
                panic!("TCPWISE_REQUIRE_IO_URING=1 but {e}");
            }
            eprintln!("skipped on {io:?}: {e}");
            return None;
        }
        let thread = std::thread::spawn(move || {
            tcpwise_server::serve_threads(opts, 1, rx, move |a| atx.send(a).unwrap()).unwrap();
        });
        Some(Server {
            addr: arx.recv().unwrap(),
            stop: tx,
            thread: Some(thread),
        })
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.trigger();
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// A response read off the wire.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one response (`head_only` for HEAD) from `s`, with `buf` holding
/// bytes already read.
fn read_response(s: &mut TcpStream, buf: &mut Vec<u8>, head_only: bool) -> Resp {
    let fill = |s: &mut TcpStream, buf: &mut Vec<u8>| {
        let mut b = [0u8; 65536];
        let n = s.read(&mut b).expect("read");
        assert!(n > 0, "connection closed mid-response: {buf:?}");
        buf.extend_from_slice(&b[..n]);
    };
    let (status, headers, len) = loop {
        let mut h = [httparse::EMPTY_HEADER; 32];
        let mut r = httparse::Response::new(&mut h);
        if let httparse::Status::Complete(n) = r.parse(buf).unwrap() {
            let hs = r
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_string(),
                        String::from_utf8_lossy(h.value).to_string(),
                    )
                })
                .collect();
            break (r.code.unwrap(), hs, n);
        }
        fill(s, buf);
    };
    buf.drain(..len);
    let mut resp = Resp {
        status,
        headers,
        body: Vec::new(),
    };
    if head_only || status == 100 {
        return resp;
    }
    if resp.header("transfer-encoding") == Some("chunked") {
        let mut d = Chunked::new();
        loop {
            let p = d.next(buf).unwrap();
            resp.body.extend_from_slice(&buf[p.data.clone()]);
            buf.drain(..p.used);
            if p.done {
                return resp;
            }
            if buf.is_empty() {
                fill(s, buf);
            }
        }
    }
    let n: usize = resp.header("content-length").unwrap().parse().unwrap();
    while buf.len() < n {
        fill(s, buf);
    }
    resp.body = buf.drain(..n).collect();
    resp
}

fn is_pattern(b: &[u8]) -> bool {
    b.iter()
        .enumerate()
        .all(|(i, x)| *x == pattern_byte(i as u64))
}

/// Reads until the server closes; returns what came.
fn read_to_close(s: &mut TcpStream, mut buf: Vec<u8>) -> Vec<u8> {
    s.read_to_end(&mut buf).expect("server closes");
    buf
}

fn pipelined_requests_are_answered_in_order_in_any_split(io: Io) {
    let Some(srv) = Server::start(io) else {
        return;
    };
    let wire = b"GET /bytes/10 HTTP/1.1\r\nHost: x\r\n\r\nHEAD /bytes/70000?chunked=1 HTTP/1.1\r\nHost: t\r\n\r\nPOST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhelloGET /health HTTP/1.1\r\nHost: t\r\n\r\nGET /bytes/100000 HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\n\r\n";
    for step in [1, 7, wire.len()] {
        let mut s = srv.connect();
        for piece in wire.chunks(step) {
            s.write_all(piece).unwrap();
        }
        let mut buf = Vec::new();
        let r = read_response(&mut s, &mut buf, false);
        assert_eq!((r.status, r.body.len()), (200, 10));
        assert!(is_pattern(&r.body));
        let r = read_response(&mut s, &mut buf, true);
        assert_eq!(
            r.header("transfer-encoding"),
            Some("chunked"),
            "HEAD says how GET frames"
        );
        let r = read_response(&mut s, &mut buf, false);
        assert_eq!(r.body, b"hello");
        let r = read_response(&mut s, &mut buf, false);
        assert_eq!(r.body, b"ok\n");
        let r = read_response(&mut s, &mut buf, false);
        assert!(r.body.len() == 100_000 && is_pattern(&r.body));
        let r = read_response(&mut s, &mut buf, false);
        assert_eq!(r.status, 404);
        assert!(buf.is_empty(), "nothing after the last response: {buf:?}");
    }
}

fn http_1_0_closes_unless_kept_alive_and_connection_close_is_honoured(io: Io) {
    let Some(srv) = Server::start(io) else {
        return;
    };
    let mut s = srv.connect();
    s.write_all(b"GET /bytes/3 HTTP/1.0\r\n\r\n").unwrap();
    let out = read_to_close(&mut s, Vec::new());
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("connection: close") && out.ends_with(&[7, 38, 69]),
        "{text}"
    );

    let mut s = srv.connect();
    s.write_all(b"GET /bytes/3 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let mut buf = Vec::new();
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.header("connection"), Some("keep-alive"));
    s.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let out = read_to_close(&mut s, buf);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(
        text.matches("HTTP/1.1 200").count(),
        1,
        "nothing after close: {text}"
    );
}

fn echo_streams_sized_and_chunked_bodies_and_answers_expect_continue(io: Io) {
    let Some(srv) = Server::start(io) else {
        return;
    };
    // A sized body of 3 MB sent after 100 Continue.
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
    let mut s = srv.connect();
    let head = format!(
        "PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.status, 100);
    let mut w = s.try_clone().unwrap();
    let sent = body.clone();
    let writer = std::thread::spawn(move || w.write_all(&sent).unwrap());
    let r = read_response(&mut s, &mut buf, false);
    writer.join().unwrap();
    assert_eq!(r.header("content-length"), Some("3000000"));
    assert!(r.body == body, "sized echo differs");

    // Chunked in odd pieces, then a request on the same connection.
    let mut wire = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for part in body.chunks(77_777) {
        tcpwise_http::h1::put_chunk(&mut wire, part);
    }
    wire.extend_from_slice(b"0\r\nX-Trailer: 1\r\n\r\nGET /health HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        for piece in wire.chunks(50_001) {
            w.write_all(piece).unwrap();
        }
    });
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert!(r.body == body, "chunked echo differs");
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.body, b"ok\n");
    writer.join().unwrap();
}

fn bad_heads_get_400_or_431_and_a_close(io: Io) {
    let Some(srv) = Server::start(io) else {
        return;
    };
    for (wire, status) in [
        (b"\x16\x03\x01\x00\x05hello\r\n\r\n".to_vec(), 400),
        (
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"
                .to_vec(),
            400,
        ),
        (
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n".to_vec(),
            400,
        ),
        (
            {
                let mut v = b"GET / HTTP/1.1\r\nHost: t\r\nX: ".to_vec();
                v.resize(MAX_HEAD + 100, b'a');
                v
            },
            431,
        ),
    ] {
        let mut s = srv.connect();
        s.write_all(&wire).unwrap();
        let out = read_to_close(&mut s, Vec::new());
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.starts_with(&format!("HTTP/1.1 {status} ")) && text.contains("connection: close"),
            "{text}"
        );
    }
}

fn a_body_on_a_route_that_takes_none_is_skipped_or_the_connection_closed(io: Io) {
    let Some(srv) = Server::start(io) else {
        return;
    };
    // Small and all there: skipped, the connection stays usable.
    let mut s = srv.connect();
    s.write_all(
        b"POST /bytes/4 HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabcGET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n",
    )
    .unwrap();
    let mut buf = Vec::new();
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.body, [7, 38]);
    // Large and still arriving: answered, then closed (never read as a request).
    let mut s = srv.connect();
    s.write_all(b"GET /bytes/4 HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\nGET /x")
        .unwrap();
    let mut buf = Vec::new();
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.body, [7, 38, 69, 100]);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(read_to_close(&mut s, buf).is_empty());
}

fn large_bodies_in_both_framings_are_exact(io: Io) {
    let Some(srv) = Server::start(io) else {
        return;
    };
    let mut s = srv.connect();
    let mut buf = Vec::new();
    for (target, len) in [
        ("/bytes/5000000", 5_000_000),
        ("/bytes/5000000?chunked=1", 5_000_000),
        ("/delay/30/bytes/65537", 65_537),
        ("/bytes/0?chunked=1", 0),
        ("/bytes/0", 0),
    ] {
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
            .unwrap();
        let r = read_response(&mut s, &mut buf, false);
        assert_eq!(r.body.len(), len, "{target}");
        assert!(is_pattern(&r.body), "{target}");
    }
}

fn shutdown_finishes_a_response_in_flight_and_closes_idle_connections(io: Io) {
    let Some(mut srv) = Server::start(io) else {
        return;
    };
    let mut idle = srv.connect();
    let mut busy = srv.connect();
    busy.write_all(b"GET /delay/300/bytes/1000 HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    srv.stop.trigger();
    let mut buf = Vec::new();
    let r = read_response(&mut busy, &mut buf, false);
    assert!(r.status == 200 && r.body.len() == 1000 && is_pattern(&r.body));
    assert!(read_to_close(&mut busy, buf).is_empty());
    assert!(read_to_close(&mut idle, Vec::new()).is_empty());
    srv.thread.take().unwrap().join().unwrap();
}

fn limits() -> tcpwise_server::Limits {
    tcpwise_server::Limits::default()
}

fn slowloris_connections_are_closed_after_the_header_timeout_and_do_not_delay_others(io: Io) {
    let Some(srv) = Server::with(
        io,
        tcpwise_server::Limits {
            header_timeout: Duration::from_millis(1500),
            ..limits()
        },
    ) else {
        return;
    };
    let t0 = std::time::Instant::now();
    // 300 connections trickling one header byte every 200 ms, and one that
    // sends nothing at all.
    let mut slow: Vec<TcpStream> = (0..300).map(|_| srv.connect()).collect();
    let mut silent = srv.connect();
    let head =
        b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut closed = vec![None; slow.len()];
    for (k, byte) in head.iter().enumerate() {
        for (i, s) in slow.iter_mut().enumerate() {
            if closed[i].is_none() && s.write_all(&[*byte]).is_err() {
                closed[i] = Some(t0.elapsed());
            }
        }
        if k == 3 {
            // A normal client is answered while they trickle.
            let mut s = srv.connect();
            s.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            let r = read_response(&mut s, &mut Vec::new(), false);
            assert_eq!(r.body, b"ok\n");
        }
        std::thread::sleep(Duration::from_millis(200));
        if t0.elapsed() > Duration::from_secs(4) {
            break;
        }
    }
    // The server closed every trickling connection after about 1.5 s: a read
    // sees the end (or a reset), never a response.
    for s in slow.iter_mut().chain(std::iter::once(&mut silent)) {
        let mut b = [0u8; 64];
        match s.read(&mut b) {
            Ok(0) | Err(_) => {}
            Ok(n) => panic!("a slowloris connection got {:?}", &b[..n]),
        }
    }
    let elapsed = t0.elapsed();
    assert!(elapsed >= Duration::from_millis(1500), "{elapsed:?}");
    // Not closed early: a write fails only after the server closed, so the
    // first failure of each comes after the 1.5 s header timeout.
    for c in closed.iter().flatten() {
        assert!(*c >= Duration::from_millis(1500), "closed after {c:?}");
    }
    assert!(
        closed.iter().any(Option::is_some),
        "the writes saw the closes"
    );
}

fn idle_keep_alive_connections_are_closed_after_the_idle_timeout(io: Io) {
    let Some(srv) = Server::with(
        io,
        tcpwise_server::Limits {
            idle_timeout: Duration::from_millis(400),
            ..limits()
        },
    ) else {
        return;
    };
    let mut s = srv.connect();
    let t0 = std::time::Instant::now();
    let mut buf = Vec::new();
    for _ in 0..3 {
        // Requests 250 ms apart keep it open (each restarts the idle clock).
        s.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        assert_eq!(read_response(&mut s, &mut buf, false).status, 200);
        std::thread::sleep(Duration::from_millis(250));
    }
    // Closed about 400 ms after the last answer (at about 500 ms), not
    // 400 ms after the first.
    assert!(read_to_close(&mut s, buf).is_empty());
    assert!(
        t0.elapsed() >= Duration::from_millis(850),
        "{:?}",
        t0.elapsed()
    );
}

fn echo_bodies_over_the_limit_get_413_or_are_cut_off(io: Io) {
    let Some(srv) = Server::with(
        io,
        tcpwise_server::Limits {
            max_body: 1000,
            max_head: 200,
            ..limits()
        },
    ) else {
        return;
    };
    // Declared too large: 413 without reading it, then a close.
    let mut s = srv.connect();
    s.write_all(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n",
    )
    .unwrap();
    let out = read_to_close(&mut s, Vec::new());
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 413 ") && !text.contains("100 Continue"),
        "{text}"
    );
    // At the limit: echoed.
    let mut s = srv.connect();
    let mut wire = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n".to_vec();
    wire.extend_from_slice(&[b'x'; 1000]);
    s.write_all(&wire).unwrap();
    assert_eq!(
        read_response(&mut s, &mut Vec::new(), false).body.len(),
        1000
    );
    // Chunked, growing past it: the response is cut off and the connection closed.
    let mut s = srv.connect();
    let mut wire = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        tcpwise_http::h1::put_chunk(&mut wire, &[b'y'; 600]);
    }
    s.write_all(&wire).unwrap();
    let out = read_to_close(&mut s, Vec::new());
    assert!(
        !out.ends_with(b"0\r\n\r\n"),
        "a cut-off body must not look complete"
    );
    // A head over --max-header-size: 431.
    let mut s = srv.connect();
    let mut wire = b"GET /health HTTP/1.1\r\nHost: t\r\nX: ".to_vec();
    wire.resize(300, b'a');
    s.write_all(&wire).unwrap();
    let out = read_to_close(&mut s, Vec::new());
    assert!(out.starts_with(b"HTTP/1.1 431 "));
}

fn at_the_connection_limit_a_newcomer_closes_the_stalest(io: Io) {
    let Some(srv) = Server::with(
        io,
        tcpwise_server::Limits {
            max_conns: 2,
            ..limits()
        },
    ) else {
        return;
    };
    let mut a = srv.connect();
    let mut b = srv.connect();
    let mut buf = Vec::new();
    for s in [&mut a, &mut b] {
        s.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        assert_eq!(read_response(s, &mut buf, false).status, 200);
        // Apart in time, so the first is the one idle longest.
        std::thread::sleep(Duration::from_millis(50));
    }
    // The third is answered: it closes the connection that moved data
    // longest ago (a), and b stays.
    let mut c = srv.connect();
    c.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(read_response(&mut c, &mut buf, false).status, 200);
    a.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut byte = [0u8; 1];
    assert!(matches!(a.read(&mut byte), Ok(0) | Err(_)), "a was closed");
    b.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    b.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(read_response(&mut b, &mut buf, false).status, 200);
}

/// Feeds `pieces` to a connection's I/O-free core as successive reads,
/// as the socket glue does: everything answered on the fast path, up to
/// where a request would leave it.
fn answers(pieces: &[&[u8]], limits: tcpwise_server::Limits) -> (Vec<u8>, Step) {
    let mut core = Core::new(limits);
    let (mut all, mut out) = (Vec::new(), Vec::new());
    let mut feed = pieces.iter();
    loop {
        let data = if core.has_more() {
            None
        } else {
            feed.next().copied()
        };
        if data.is_none() && !core.has_more() {
            return (all, Step::Again);
        }
        out.clear();
        let step = core.consume(data, &mut out);
        all.extend_from_slice(&out);
        if !matches!(step, Step::Again) {
            return (all, step);
        }
    }
}

#[test]
fn the_io_free_core_answers_pipelined_reads_like_the_socket_path() {
    let wire =
        b"GET /health HTTP/1.1\r\nHost: t\r\n\r\nGET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\nGET /he";
    let (out, step) = answers(&[&wire[..10], &wire[10..]], limits());
    let text = String::from_utf8_lossy(&out);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 2, "{text}");
    assert!(
        matches!(step, Step::Again),
        "the partial third request waits"
    );
    let (out, step) = answers(&[&b"BAD\r\n\r\n"[..]], limits());
    assert!(out.starts_with(b"HTTP/1.1 400 "));
    assert!(matches!(step, Step::Close(_)));
    // A request that leaves the fast path (a delay) is handed over.
    let (_, step) = answers(
        &[&b"GET /delay/10/bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n"[..]],
        limits(),
    );
    assert!(matches!(step, Step::Slow(_)));
}

fn a_slow_request_hands_over_with_what_follows_it(io: Io) {
    // A delayed answer leaves the fast path (on io_uring: the connection
    // moves to tokio), and the requests read with it must go along.
    let Some(srv) = Server::start(io) else {
        return;
    };
    let mut s = srv.connect();
    s.write_all(
        b"GET /delay/50/bytes/7 HTTP/1.1\r\nHost: t\r\n\r\nGET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n\
          POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi",
    )
    .unwrap();
    let mut buf = Vec::new();
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!((r.status, r.body.len()), (200, 7));
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!((r.status, r.body.len()), (200, 3));
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.body, b"hi");
    // And the connection goes on after it.
    s.write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!(r.body, b"ok\n");
}

fn a_client_that_pipelines_without_reading_gets_every_answer(io: Io) {
    // 2,000 requests of 16 KB answers (32 MB) sent before reading any:
    // far more than the socket buffers hold, so the server must stop
    // answering while its answers wait, and lose none; then a slow one
    // (on io_uring it hands the connection over with the input it held,
    // here more than one parse takes) and 2,000 more.
    let Some(srv) = Server::start(io) else {
        return;
    };
    let s = srv.connect();
    let mut w = s.try_clone().unwrap();
    let n = 2000;
    let writer = std::thread::spawn(move || {
        let mut req = b"GET /bytes/16000 HTTP/1.1\r\nHost: t\r\n\r\n".repeat(n);
        req.extend_from_slice(b"GET /delay/10/bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n");
        req.extend_from_slice(&b"GET /bytes/5 HTTP/1.1\r\nHost: t\r\n\r\n".repeat(n));
        w.write_all(&req).unwrap();
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut s = s;
    let mut buf = Vec::new();
    for i in 0..n {
        let r = read_response(&mut s, &mut buf, false);
        assert_eq!((r.status, r.body.len()), (200, 16000), "answer {i}");
    }
    let r = read_response(&mut s, &mut buf, false);
    assert_eq!((r.status, r.body.len()), (200, 3));
    for i in 0..n {
        let r = read_response(&mut s, &mut buf, false);
        assert_eq!((r.status, r.body.len()), (200, 5), "small answer {i}");
    }
    writer.join().unwrap();
    assert!(buf.is_empty());
}

fn http2_prior_knowledge_is_found_in_a_split_preface(io: Io) {
    // The preface's first bytes alone do not decide it: `PR`, then the rest.
    let Some(srv) = Server::start(io) else {
        return;
    };
    let mut s = srv.connect();
    s.write_all(b"PR").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    s.write_all(b"I * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    // An empty SETTINGS frame of ours.
    s.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
    let mut head = [0u8; 9];
    s.read_exact(&mut head).unwrap();
    assert_eq!(head[3], 4, "the server's first frame is SETTINGS: {head:?}");
}
