//! What `tcpwise serve` answers, without I/O: a request's method and
//! target in, a [`Reply`] out. The HTTP/1.1 glue in [`super`] frames it.
//!
//! - `/bytes/N`: N bytes of [`crate::pattern`] with Content-Length
//!   (`?chunked=1`: chunked transfer coding);
//! - `/delay/MS/bytes/N`: the same after MS milliseconds;
//! - `/echo`: the request body back, framed as it came;
//! - `/health`: `ok`.

use std::borrow::Cow;

/// Largest body `/bytes/N` serves (100 GB).
pub const MAX_BYTES: u64 = 100_000_000_000;
/// Longest `/delay/MS` (10 minutes).
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
    fn text(status: u16, msg: impl Into<Cow<'static, str>>) -> Reply {
        Reply {
            status,
            body: Body::Text(msg.into()),
            delay_ms: 0,
            allow: None,
        }
    }
}

fn parse_n(s: &str) -> Option<u64> {
    s.parse::<u64>().ok().filter(|n| *n <= MAX_BYTES)
}

/// The reply to `method target`.
pub fn route(method: &str, target: &str) -> Reply {
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
            None => Reply::text(400, format!("/bytes/N takes N from 0 to {MAX_BYTES}\n")),
        },
        (["delay", ms, "bytes", n], 4) => {
            match (
                ms.parse::<u64>().ok().filter(|m| *m <= MAX_DELAY_MS),
                parse_n(n),
            ) {
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
        assert_eq!(
            route("GET", "/bytes/100").body,
            Body::Pattern {
                len: 100,
                chunked: false
            }
        );
        let r = route("HEAD", "/delay/20/bytes/5?a=b&chunked=1");
        assert_eq!((r.status, r.delay_ms), (200, 20));
        assert_eq!(
            r.body,
            Body::Pattern {
                len: 5,
                chunked: true
            }
        );
        assert_eq!(route("POST", "/echo").body, Body::Echo);
        assert_eq!(route("GET", "/health").body, Body::Text("ok\n".into()));
        assert_eq!(route("GET", "/bytes/100000000001").status, 400);
        assert_eq!(route("GET", "/bytes/x").status, 400);
        assert_eq!(route("GET", "/delay/600001/bytes/1").status, 400);
        let r = route("POST", "/bytes/1");
        assert_eq!((r.status, r.allow), (405, Some("GET, HEAD")));
        for t in [
            "/",
            "/bytes",
            "/bytes/1/2",
            "/nope",
            "/delay/1/bytes",
            "/health/x",
        ] {
            assert_eq!(route("GET", t).status, 404, "{t}");
        }
    }
}
