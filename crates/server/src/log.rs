//! The access log: nginx's combined format, then the request time.

use super::*;

/// One access-log line's fields.
pub(super) struct Logged<'a> {
    pub(super) request: &'a str,
    pub(super) minor: u8,
    pub(super) status: u16,
    pub(super) bytes: Option<u64>,
    /// `Referer`, `User-Agent`, `Authorization`.
    pub(super) agent: (&'a str, &'a str, Option<&'a str>),
    pub(super) started: Option<Instant>,
}

/// nginx's `$remote_user`: the user name of `Authorization: Basic`, as
/// sent (not checked), escaped as nginx escapes log fields; `-` without.
pub(super) fn remote_user(authorization: Option<&str>) -> String {
    use base64::Engine;
    let user = authorization
        .and_then(|a| {
            let (scheme, token) = a.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("basic").then_some(token.trim())
        })
        .and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok())
        .map(|raw| {
            let end = raw.iter().position(|&b| b == b':').unwrap_or(raw.len());
            raw[..end].to_vec()
        })
        .filter(|u| !u.is_empty());
    match user {
        None => "-".into(),
        Some(u) => u
            .iter()
            .map(|&b| match b {
                b'"' | b'\\' | 0..0x20 | 0x7f.. => format!("\\x{b:02X}"),
                _ => (b as char).to_string(),
            })
            .collect(),
    }
}

/// nginx's `$time_local` in UTC: `23/Nov/2026:04:34:06 +0000`.
pub(super) fn access_time(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{day:02}/{}/{year}:{:02}:{:02}:{:02} +0000",
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::remote_user;

    /// nginx's `$remote_user`: Basic's user, unchecked; `-` otherwise.
    #[test]
    fn remote_user_is_basics_user_name() {
        assert_eq!(remote_user(Some("Basic dTpw")), "u"); // u:p
        assert_eq!(remote_user(Some("basic YWxpY2U6c2VjcmV0")), "alice");
        assert_eq!(remote_user(Some("Bearer abc")), "-");
        assert_eq!(remote_user(Some("Basic !!!")), "-");
        assert_eq!(remote_user(None), "-");
        assert_eq!(remote_user(Some("Basic YSJiOng=")), "a\\x22b"); // a"b:x
    }
}
