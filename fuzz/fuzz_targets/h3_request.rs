//! `serve --http3`'s request path behind QUIC: any request h3 could hand
//! over (any method, authority, path and fields, any body) is answered
//! with a status or refused as h3 would refuse it, never a panic, and a
//! body never runs past the limits it was served with. The same
//! `respond` a served QUIC stream gets (`server::h3::answer_decoded`),
//! without a connection: QUIC and HTTP/3 framing are quinn's and h3's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::Duration;
use tcpwise_server::h3::{Decoded, answer_decoded};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}

type Input = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>);

fuzz_target!(|i: Input| {
    let (method, authority, path, fields, body) = i;
    let lim = tcpwise_server::Limits {
        max_body: 300,
        max_bytes: 100_000,
        max_delay: Duration::from_millis(5),
        ..Default::default()
    };
    let d = Decoded {
        method,
        authority,
        path,
        fields,
        body,
    };
    // `/nq/large` never ends by design: a load's client stops it. Here
    // time does (the answer is what is fuzzed, not the transfer).
    let got = runtime().block_on(async {
        tokio::time::timeout(Duration::from_millis(200), answer_decoded(d, lim)).await
    });
    if let Ok(Some(Ok((status, bytes)))) = got {
        assert!((100..600).contains(&status), "status {status}");
        assert!(bytes <= 100_000, "{status}: {bytes} bytes");
    }
});
