//! `tcpwise serve`'s request path: any bytes, cut into any reads, are
//! answered or refused (400/431/413 and a close), never a panic, and the
//! connection's buffers stay bounded (debug assertions inside
//! `Core::consume`, the connection's I/O-free core, driven here as the
//! socket glue drives it). Also the framing underneath: request heads and
//! the chunked decoder on their own.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcpwise_http::h1::{Chunked, parse_request};
use tcpwise_server::{Core, Step};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the read size (1..=256) and a small head limit
    // half the time, so limits are hit too.
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let step = usize::from(k % 128) + 1;
    let limits = tcpwise_server::Limits {
        max_head: if k & 0x80 != 0 {
            200
        } else {
            tcpwise_http::h1::MAX_HEAD
        },
        max_body: 300,
        max_bytes: 100_000,
        ..Default::default()
    };
    let mut core = Core::new(limits);
    let (mut out, mut buf) = (Vec::new(), Vec::new());
    let mut feed = rest.chunks(step);
    loop {
        let read = if core.has_more() { None } else { feed.next() };
        if read.is_none() && !core.has_more() {
            break;
        }
        buf.clear();
        let next = core.consume(read, &mut buf);
        out.extend_from_slice(&buf);
        if !matches!(next, Step::Again) {
            break;
        }
    }
    // Whatever was answered starts like a response.
    assert!(
        out.is_empty() || out.starts_with(b"HTTP/1.1 "),
        "{:?}",
        &out[..out.len().min(40)]
    );

    let _ = parse_request(rest, 1024);
    let mut d = Chunked::new();
    let mut at = 0;
    while at < rest.len() {
        match d.next(&rest[at..]) {
            Ok(p) => {
                assert!(p.used <= rest.len() - at && p.data.end <= p.used);
                if p.done || p.used == 0 {
                    break;
                }
                at += p.used;
            }
            Err(_) => break,
        }
    }
});
