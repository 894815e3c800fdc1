//! The curl flags that add a request header or a file beside the body,
//! read before anything is sent: `-H @FILE`, `-z` (time conditions),
//! `--etag-compare`/`--etag-save`, `--limit-rate`'s units. Each follows
//! curl 7.88's tool (`tool_operate.c`, `tool_getparam.c`).

use super::CurlError;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tcpwise_client::Header;

/// `-H` arguments as headers: `Name: value`, or `@FILE` with one header a
/// line (blank lines skipped, CR stripped, as curl reads it; `@-` is
/// standard input, read by `stdin`).
pub fn headers(
    args: &[String],
    stdin: &mut dyn FnMut() -> std::io::Result<Vec<u8>>,
) -> Result<Vec<Header>, CurlError> {
    let mut out = Vec::new();
    let parse = |s: &str| {
        s.parse::<Header>()
            .map_err(|e| CurlError::Usage(format!("-H: {e}")))
    };
    for a in args {
        match a.strip_prefix('@') {
            Some(f) => {
                let text = if f == "-" { stdin() } else { std::fs::read(f) }.map_err(|source| {
                    CurlError::Data {
                        path: f.to_string(),
                        source,
                    }
                })?;
                for line in String::from_utf8_lossy(&text).lines() {
                    let line = line.trim_end_matches('\r');
                    if !line.trim().is_empty() {
                        out.push(parse(line)?);
                    }
                }
            }
            None => out.push(parse(a)?),
        }
    }
    Ok(out)
}

/// `-z`'s condition: a header to send, or `None` with a warning when the
/// argument is neither a date nor a file (curl then sends no condition).
pub fn time_condition(arg: &str) -> (Option<Header>, Option<String>) {
    let (name, rest) = match arg.strip_prefix('-') {
        Some(r) => ("If-Unmodified-Since", r),
        None => ("If-Modified-Since", arg.strip_prefix('+').unwrap_or(arg)),
    };
    let when = parse_date(rest).or_else(|| {
        std::fs::metadata(rest)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| UNIX_EPOCH + Duration::from_secs(secs(t)))
    });
    match when {
        Some(t) => (
            Some(Header(name.to_string(), httpdate::fmt_http_date(t))),
            None,
        ),
        None => (
            None,
            Some(
                "Illegal date format for -z, --time-cond (and not a file name). Disabling time condition. See curl_getdate(3) for valid date syntax."
                    .to_string(),
            ),
        ),
    }
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The date forms `-z` takes here: HTTP's three (RFC 9110), and
/// `YYYYMMDD` / `YYYY-MM-DD` (midnight GMT).
fn parse_date(s: &str) -> Option<SystemTime> {
    if let Ok(t) = httpdate::parse_http_date(s.trim()) {
        return Some(t);
    }
    let digits: String = s.trim().chars().filter(|c| *c != '-').collect();
    if digits.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (
        digits[..4].parse().ok()?,
        digits[4..6].parse().ok()?,
        digits[6..].parse().ok()?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(UNIX_EPOCH + Duration::from_secs(days as u64 * 86_400))
}

/// `--etag-compare FILE`'s header: `If-None-Match` with the file's first
/// line, `""` when it is empty or missing and `--etag-save` will create it;
/// a missing file otherwise is curl's 26.
pub fn etag_compare(file: &Path, saving: bool) -> Result<Header, CurlError> {
    let tag = match std::fs::read_to_string(file) {
        Ok(t) => t.lines().next().unwrap_or("").trim().to_string(),
        Err(_) if saving => String::new(),
        Err(source) => {
            return Err(CurlError::Upload {
                path: file.display().to_string(),
                source,
            });
        }
    };
    let tag = if tag.is_empty() { "\"\"".into() } else { tag };
    Ok(Header("If-None-Match".into(), tag))
}

/// `--limit-rate`'s bytes per second: a number with an optional K, M, G
/// (powers of 1024, either case), as curl reads it.
pub fn rate(s: &str) -> Result<u64, CurlError> {
    size("--limit-rate", s)
}

/// A size as curl reads its numbers with units (`--limit-rate`,
/// `--max-filesize`): K, M, G are powers of 1024, either case.
pub fn size(flag: &str, s: &str) -> Result<u64, CurlError> {
    let bad = || {
        CurlError::Usage(format!(
            "{flag} '{s}' is not a number of bytes (1000, 100K, 2M, 1G: powers of 1024)"
        ))
    };
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        Some('B') => (&t[..t.len() - 1], 1),
        _ => (t, 1),
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    if !n.is_finite() || n < 0.0 {
        return Err(bad());
    }
    Ok((n * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_files_and_rates_read_as_curl_reads_them() {
        let (h, w) = time_condition("Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            h.unwrap(),
            Header(
                "If-Modified-Since".into(),
                "Sun, 06 Nov 1994 08:49:37 GMT".into()
            )
        );
        assert!(w.is_none());
        let (h, _) = time_condition("-19940611");
        assert_eq!(
            h.unwrap(),
            Header(
                "If-Unmodified-Since".into(),
                "Sat, 11 Jun 1994 00:00:00 GMT".into()
            )
        );
        let (h, w) = time_condition("no such file or date");
        assert!(h.is_none() && w.is_some());
        assert_eq!(rate("100K").unwrap(), 102_400);
        assert_eq!(rate("2m").unwrap(), 2 << 20);
        assert_eq!(rate("1000").unwrap(), 1000);
        assert!(rate("fast").is_err());
    }
}
