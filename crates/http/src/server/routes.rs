//! What `tcpwise serve` answers, without I/O: a request's method and
//! target in, a [`Reply`] out. The HTTP/1.1 glue in [`super`] frames it.
//!
//! - `/bytes/N`: N bytes of [`crate::pattern`] with Content-Length
//!   (`?chunked=1`: chunked transfer coding);
//! - `/delay/MS/bytes/N`: the same after MS milliseconds;
//! - `/echo`: the request body back, framed as it came;
//! - `/health`: `ok`.

use super::Limits;
use std::borrow::Cow;

/// Largest body `/bytes/N` serves by default (100 GB).
pub const MAX_BYTES: u64 = 100_000_000_000;
/// Longest `/delay/MS` by default (10 minutes).
pub const MAX_DELAY_MS: u64 = 600_000;

/// The body of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A short text (`text/plain`).
    Text(Cow<'static, str>),
    /// `len` bytes of the pattern, sized or chunked.
    Pattern {
        /// Body length.
        len: u64,
        /// Send with the chunked transfer coding.
        chunked: bool,
    },
    /// The request body, streamed back.
    Echo,
    /// A file or listing under `serve --root` (decided by [`super::files`]).
    File,
}

/// What to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// The body.
    pub body: Body,
    /// Wait this long before answering.
    pub delay_ms: u64,
    /// `Allow` header (405).
    pub allow: Option<&'static str>,
}

impl Reply {
    /// A short text reply.
    pub fn text(status: u16, msg: impl Into<Cow<'static, str>>) -> Reply {
        Reply {
            status,
            body: Body::Text(msg.into()),
            delay_ms: 0,
            allow: None,
        }
    }
}

/// The reply to `method target`; an N or MS over the limits is a 400
/// (never an allocation or a task parked for a day).
pub fn route(method: &str, target: &str, lim: &Limits) -> Reply {
    let (max_n, max_ms) = (lim.max_bytes, lim.max_delay.as_millis() as u64);
    let parse_n = |s: &str| s.parse::<u64>().ok().filter(|n| *n <= max_n);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let chunked = query.split('&').any(|kv| kv == "chunked=1");
    let get = matches!(method, "GET" | "HEAD");
    let mut parts = path.trim_matches('/').split('/');
    let parts: [&str; 4] = std::array::from_fn(|_| parts.next().unwrap_or(""));
    let extra = path.trim_matches('/').split('/').count();
    let bytes = |len| Reply {
        status: 200,
        body: Body::Pattern { len, chunked },
        delay_ms: 0,
        allow: None,
    };
    let reply = match (parts, extra) {
        (["health", ..], 1) => Reply::text(200, "ok\n"),
        (["bytes", n, ..], 2) => match parse_n(n) {
            Some(n) => bytes(n),
            None => Reply::text(400, format!("/bytes/N takes N from 0 to {max_n}\n")),
        },
        (["delay", ms, "bytes", n], 4) => {
            match (ms.parse::<u64>().ok().filter(|m| *m <= max_ms), parse_n(n)) {
                (Some(ms), Some(n)) => Reply {
                    delay_ms: ms,
                    ..bytes(n)
                },
                _ => Reply::text(
                    400,
                    format!("/delay/MS/bytes/N takes MS up to {MAX_DELAY_MS} and N up to 100 GB\n"),
                ),
            }
        }
        (["echo", ..], 1) => {
            return Reply {
                status: 200,
                body: Body::Echo,
                delay_ms: 0,
                allow: None,
            };
        }
        _ => {
            return Reply::text(
                404,
                "not found: try /bytes/N, /delay/MS/bytes/N, /echo, /health\n",
            );
        }
    };
    if get {
        reply
    } else {
        Reply {
            allow: Some("GET, HEAD"),
            ..Reply::text(405, "use GET or HEAD\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let lim = Limits::default();
        assert_eq!(
            route("GET", "/bytes/100", &lim).body,
            Body::Pattern {
                len: 100,
                chunked: false
            }
        );
        let r = route("HEAD", "/delay/20/bytes/5?a=b&chunked=1", &lim);
        assert_eq!((r.status, r.delay_ms), (200, 20));
        assert_eq!(
            r.body,
            Body::Pattern {
                len: 5,
                chunked: true
            }
        );
        assert_eq!(route("POST", "/echo", &lim).body, Body::Echo);
        assert_eq!(
            route("GET", "/health", &lim).body,
            Body::Text("ok\n".into())
        );
        assert_eq!(route("GET", "/bytes/100000000001", &lim).status, 400);
        assert_eq!(route("GET", "/bytes/x", &lim).status, 400);
        assert_eq!(route("GET", "/delay/600001/bytes/1", &lim).status, 400);
        let r = route("POST", "/bytes/1", &lim);
        assert_eq!((r.status, r.allow), (405, Some("GET, HEAD")));
        for t in [
            "/",
            "/bytes",
            "/bytes/1/2",
            "/nope",
            "/delay/1/bytes",
            "/health/x",
        ] {
            assert_eq!(route("GET", t, &lim).status, 404, "{t}");
        }
    }
}
