//! Response heads written straight into the thread's buffer on the fast
//! path: the cached `Date`, text, gzip and pattern heads.

use super::*;

tokio::task_local! {
    /// The `Alt-Svc` value of the server a connection's task belongs to
    /// (`serve --http3`: `h3=":PORT"; ma=86400`), set around each TCP
    /// connection's task: every HTTP/1.1 head carries it, and HTTP/2's
    /// service reads it once. Outside a connection (the fuzzer driving
    /// [`Core`]) there is none.
    pub(super) static ALT_SVC: Option<Arc<str>>;
}

/// The value of the `Date` header line, and with `serve --http3` the
/// `Alt-Svc` line after it (every head writer puts `date: ` before this
/// and CRLF after it: the two lines every response of the server has).
pub(super) fn with_date<R>(f: impl FnOnce(&[u8]) -> R) -> R {
    let now = TURN_CLOCK.get().unwrap_or_else(SystemTime::now);
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with_borrow_mut(|(at, s)| {
        if *at != secs {
            *at = secs;
            *s = httpdate::fmt_http_date(now);
        }
        match ALT_SVC.try_with(|a| a.clone()) {
            Ok(Some(alt)) => f(format!("{s}\r\nalt-svc: {alt}").as_bytes()),
            _ => f(s.as_bytes()),
        }
    })
}

thread_local! {
    /// The time of the io_uring loop's current turn (it serves many
    /// requests, all within microseconds): a `Date` to the second needs
    /// no clock read per request.
    static TURN_CLOCK: std::cell::Cell<Option<SystemTime>> = const { std::cell::Cell::new(None) };
}

/// Sets the time `Date` headers use on this thread (the io_uring
/// loop's; the epoll threads never set it and read the clock).
pub(super) fn set_turn_clock(now: SystemTime) {
    TURN_CLOCK.set(Some(now));
}

/// The `Alt-Svc` value that advertises HTTP/3 on UDP `port` for a day.
pub(super) fn alt_svc_h3(port: u16) -> Arc<str> {
    format!("h3=\":{port}\"; ma=86400").into()
}

/// Appends a text response (`text/plain`).
#[allow(clippy::too_many_arguments)]
pub(super) fn put_text(
    out: &mut Vec<u8>,
    status: u16,
    minor: u8,
    keep_alive: bool,
    allow: Option<&str>,
    text: &str,
    head_only: bool,
    date: &[u8],
) {
    let plain = "text/plain; charset=utf-8";
    put_typed(
        out,
        (status, minor, keep_alive, allow),
        plain,
        text,
        head_only,
        date,
    );
}

/// A complete response of `text` as `content_type`: (status, minor
/// version, keep-alive, `Allow`) and the body.
pub(super) fn put_typed(
    out: &mut Vec<u8>,
    (status, minor, keep_alive, allow): (u16, u8, bool, Option<&str>),
    content_type: &str,
    text: &str,
    head_only: bool,
    date: &[u8],
) {
    let h = h1::ResponseHead {
        status,
        minor,
        keep_alive,
        body: BodyLen::Length(text.len() as u64),
        content_type: Some(content_type),
        allow,
    };
    h1::put_response_head(out, &h, date);
    if !head_only {
        out.extend_from_slice(text.as_bytes());
    }
}

/// A head for a gzip-compressed, chunked body.
pub(super) fn put_gzip_head(
    out: &mut Vec<u8>,
    status: u16,
    keep_alive: bool,
    content_type: &str,
    headers: &[(&str, String)],
    date: &[u8],
) {
    use std::io::Write as _;
    let _ = write!(
        out,
        "HTTP/1.1 {status} {}\r\ntransfer-encoding: chunked\r\ncontent-type: {content_type}\r\ncontent-encoding: gzip\r\nvary: accept-encoding\r\n",
        h1::reason(status)
    );
    for (k, v) in headers {
        let _ = write!(out, "{k}: {v}\r\n");
    }
    if !keep_alive {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"date: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n\r\n");
}

pub(super) fn put_pattern_head(
    out: &mut Vec<u8>,
    status: u16,
    minor: u8,
    keep_alive: bool,
    len: u64,
    chunked: bool,
    date: &[u8],
) {
    let h = h1::ResponseHead {
        status,
        minor,
        keep_alive,
        body: if chunked {
            BodyLen::Chunked
        } else {
            BodyLen::Length(len)
        },
        content_type: Some("application/octet-stream"),
        allow: None,
    };
    h1::put_response_head(out, &h, date);
}
