//! Alt-Svc, as servers send it and as curl's cache file holds it (both
//! are input from elsewhere): any header value and any file text is taken
//! or refused without a panic, an entry learned is one the header named,
//! and the file format reads back what it wrote.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcpwise_client::alt_svc::{AltCache, format_file, parse_file, parse_header};

fuzz_target!(|data: (&str, &str, u16, u32)| {
    let (header, file, port, now) = data;
    let now = u64::from(now);
    let mut c = AltCache::default();
    c.learn("example.org", port, header, now);
    match parse_header(header) {
        Some(Some((p, ma))) => {
            let fresh = now.saturating_add(ma) > now;
            assert_eq!(c.h3_port("example.org", port, now), fresh.then_some(p));
        }
        _ => assert_eq!(c.h3_port("example.org", port, now), None),
    }
    if let Ok(entries) = parse_file(file) {
        // Dates before 1970 or past 9999 do not survive the format.
        if entries.iter().all(|e| e.expires < 253_402_300_800) {
            assert_eq!(parse_file(&format_file(&entries)).as_ref(), Ok(&entries));
        }
    }
});
