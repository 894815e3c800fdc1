//! `tcpwise perf`'s control framing: any bytes give checked headers,
//! refusals, server messages or errors, never a panic; a data hello gives a
//! token only when it starts with the data prefix.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcpwise_perf::proto::{self, Accept, ServerMsg};

fuzz_target!(|data: &[u8]| {
    if let Some(t) = proto::parse_hello(data) {
        assert!(
            data.starts_with(proto::DATA_PREFIX) && data.len() == 12,
            "token {t}"
        );
    }
    let text = String::from_utf8_lossy(data);
    for line in text.split('\n') {
        if let Ok(h) = proto::check_header(line) {
            assert!(h.magic == proto::MAGIC && h.interval_ms > 0);
            assert!(h.duration_ms <= proto::MAX_DURATION_MS);
        }
        let _ = serde_json::from_str::<ServerMsg>(line);
        let _ = serde_json::from_str::<Accept>(line);
    }
});
