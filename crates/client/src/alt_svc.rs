//! Alt-Svc (RFC 7838): the HTTP/3 alternatives origins advertise, learned
//! from responses and used for the next request to the origin, and curl's
//! `--alt-svc FILE` cache format, read and written. Sans-IO: header text
//! and file text in, entries out, the time given by the caller.
//!
//! Only `h3` alternatives on the origin's own host are kept (what the
//! client can use; an alternative host would need its certificate checked
//! for the origin's name, which quinn's connect does not do). `clear`
//! forgets the origin's entries, as the RFC says.

use std::collections::HashMap;

/// One alternative: the origin (host, port) may be reached over `h3` on
/// UDP `port` until `expires` (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AltEntry {
    /// The origin's host.
    pub host: String,
    /// The origin's port.
    pub port: u16,
    /// The alternative's UDP port (same host).
    pub h3_port: u16,
    /// Unix seconds after which the entry is stale.
    pub expires: u64,
}

/// RFC 7838's default freshness: 24 hours.
const DEFAULT_MA: u64 = 86_400;

/// What one `Alt-Svc` header value says about h3 on the same host:
/// `Some(Some((port, max_age)))` an alternative, `Some(None)` `clear`,
/// `None` nothing usable.
pub fn parse_header(value: &str) -> Option<Option<(u16, u64)>> {
    if value.trim() == "clear" {
        return Some(None);
    }
    for alt in value.split(',') {
        let mut params = alt.split(';').map(str::trim);
        let Some((proto, authority)) = params.next().and_then(|p| p.split_once('=')) else {
            continue;
        };
        if proto.trim() != "h3" {
            continue;
        }
        let authority = authority.trim().trim_matches('"');
        // ":443" only: the same host.
        let Some(port) = authority.strip_prefix(':').and_then(|p| p.parse().ok()) else {
            continue;
        };
        let ma = params
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim() == "ma")
            .and_then(|(_, v)| v.trim().trim_matches('"').parse().ok())
            .unwrap_or(DEFAULT_MA);
        return Some(Some((port, ma)));
    }
    None
}

/// The alternatives a client knows, per origin (host, port).
#[derive(Debug, Clone, Default)]
pub struct AltCache {
    map: HashMap<(String, u16), AltEntry>,
}

impl AltCache {
    /// Takes what a response from `host:port` said at Unix time `now`.
    pub fn learn(&mut self, host: &str, port: u16, value: &str, now: u64) {
        match parse_header(value) {
            Some(Some((h3_port, ma))) => {
                self.map.insert(
                    (host.to_ascii_lowercase(), port),
                    AltEntry {
                        host: host.to_ascii_lowercase(),
                        port,
                        h3_port,
                        expires: now.saturating_add(ma),
                    },
                );
            }
            Some(None) => {
                self.map.remove(&(host.to_ascii_lowercase(), port));
            }
            None => {}
        }
    }

    /// The fresh h3 alternative of `host:port` at `now`: its UDP port.
    pub fn h3_port(&self, host: &str, port: u16, now: u64) -> Option<u16> {
        self.map
            .get(&(host.to_ascii_lowercase(), port))
            .filter(|e| e.expires > now)
            .map(|e| e.h3_port)
    }

    /// Adds an entry (one read from a file).
    pub fn insert(&mut self, e: AltEntry) {
        self.map.insert((e.host.clone(), e.port), e);
    }

    /// Every entry, in a stable order.
    pub fn entries(&self) -> Vec<AltEntry> {
        let mut v: Vec<AltEntry> = self.map.values().cloned().collect();
        v.sort_by(|a, b| (&a.host, a.port).cmp(&(&b.host, b.port)));
        v
    }
}

/// A line of curl's alt-svc cache that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line} of the alt-svc file is not curl's format: {text}")]
pub struct BadAltFile {
    /// 1-based.
    pub line: usize,
    /// The line.
    pub text: String,
}

/// Reads curl's alt-svc file: `#` comments and lines of
/// `ALPN HOST PORT ALPN HOST PORT "YYYYMMDD HH:MM:SS" PERSIST PRIO`
/// (the expiry in UTC). Entries for another host or another ALPN than
/// h3 are skipped, as this client cannot use them.
pub fn parse_file(text: &str) -> Result<Vec<AltEntry>, BadAltFile> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let bad = || BadAltFile {
            line: i + 1,
            text: l.to_string(),
        };
        let (head, rest) = l.split_once('"').ok_or_else(bad)?;
        let (date, _) = rest.split_once('"').ok_or_else(bad)?;
        let f: Vec<&str> = head.split_whitespace().collect();
        if f.len() != 6 {
            return Err(bad());
        }
        let (sport, dport): (u16, u16) = (
            f[2].parse().map_err(|_| bad())?,
            f[5].parse().map_err(|_| bad())?,
        );
        let expires = parse_date(date).ok_or_else(bad)?;
        if f[3] == "h3" && f[1].eq_ignore_ascii_case(f[4]) {
            out.push(AltEntry {
                host: f[1].to_ascii_lowercase(),
                port: sport,
                h3_port: dport,
                expires,
            });
        }
    }
    Ok(out)
}

/// curl's alt-svc file for `entries` (the source ALPN as h2, as curl
/// writes an entry learned over HTTP/2 or 1.1).
pub fn format_file(entries: &[AltEntry]) -> String {
    let mut s = String::from(
        "# Your alt-svc cache. https://curl.se/docs/alt-svc.html\n# This file was generated by tcpwise! Edit at your own risk.\n",
    );
    for e in entries {
        s.push_str(&format!(
            "h2 {} {} h3 {} {} \"{}\" 0 0\n",
            e.host,
            e.port,
            e.host,
            e.h3_port,
            format_date(e.expires)
        ));
    }
    s
}

/// `YYYYMMDD HH:MM:SS` (UTC) to Unix seconds.
fn parse_date(s: &str) -> Option<u64> {
    let (d, t) = s.trim().split_once(' ')?;
    if d.len() != 8 {
        return None;
    }
    let (y, m, day) = (
        d[..4].parse::<i32>().ok()?,
        d[4..6].parse::<u8>().ok()?,
        d[6..].parse::<u8>().ok()?,
    );
    let mut hms = t.split(':').map(|x| x.parse::<u8>().ok());
    let (h, mi, se) = (hms.next()??, hms.next()??, hms.next()??);
    let date = time::Date::from_calendar_date(y, time::Month::try_from(m).ok()?, day).ok()?;
    let t = time::Time::from_hms(h, mi, se).ok()?;
    u64::try_from(
        time::PrimitiveDateTime::new(date, t)
            .assume_utc()
            .unix_timestamp(),
    )
    .ok()
}

fn format_date(unix: u64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(unix as i64)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}{:02}{:02} {:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_as_rfc_7838_writes_them() {
        assert_eq!(
            parse_header("h3=\":443\"; ma=3600"),
            Some(Some((443, 3600)))
        );
        assert_eq!(parse_header("h3=\":8443\""), Some(Some((8443, 86_400))));
        assert_eq!(
            parse_header("h2=\":443\", h3=\":9443\"; ma=60; persist=1"),
            Some(Some((9443, 60)))
        );
        assert_eq!(parse_header("clear"), Some(None));
        // Another host, another protocol, garbage: nothing to use.
        assert_eq!(parse_header("h3=\"alt.example:443\""), None);
        assert_eq!(parse_header("h2=\":443\""), None);
        assert_eq!(parse_header("h3"), None);
    }

    #[test]
    fn a_cache_learns_expires_and_clears() {
        let mut c = AltCache::default();
        c.learn("Example.org", 443, "h3=\":8443\"; ma=10", 1000);
        assert_eq!(c.h3_port("example.org", 443, 1009), Some(8443));
        assert_eq!(c.h3_port("example.org", 443, 1010), None);
        assert_eq!(c.h3_port("example.org", 8443, 1000), None);
        c.learn("example.org", 443, "clear", 1001);
        assert_eq!(c.h3_port("example.org", 443, 1001), None);
    }

    #[test]
    fn curls_file_format_both_ways() {
        // A line as curl 8 writes it.
        let curl = "# Your alt-svc cache. https://curl.se/docs/alt-svc.html\n\
                    # This file was generated by libcurl! Edit at your own risk.\n\
                    h2 example.org 443 h3 example.org 443 \"20261126 05:00:00\" 0 0\n\
                    h1 example.com 80 h2 example.com 443 \"20261126 05:00:00\" 0 0\n";
        let e = parse_file(curl).unwrap();
        assert_eq!(
            e,
            vec![AltEntry {
                host: "example.org".into(),
                port: 443,
                h3_port: 443,
                expires: 1_795_669_200,
            }]
        );
        assert_eq!(parse_file(&format_file(&e)).unwrap(), e);
        assert!(
            format_file(&e)
                .contains("h2 example.org 443 h3 example.org 443 \"20261126 05:00:00\" 0 0")
        );
        assert_eq!(parse_file("h3 x 1 h3 x\n").unwrap_err().line, 1);
        assert!(parse_file("h2 a 443 h3 a 443 \"2026 05\" 0 0").is_err());
    }
}
