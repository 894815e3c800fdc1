//! Mahimahi trace files: any bytes either parse into a trace whose mean
//! rate is finite and positive, or give an error; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcpwise_link::trace::Trace;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = Trace::parse(text, "fuzz") {
        let r = t.mean_rate_bps();
        assert!(r.is_finite() && r > 0.0, "mean rate {r}");
    }
});
