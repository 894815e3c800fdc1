//! What `tcpwise serve` answers, without I/O: a request's method and
//! target in, a [`Reply`] out. The HTTP/1.1 glue in [`super`] frames it.
//!
//! - `/bytes/N`: N bytes of [`crate::pattern`] with Content-Length
//!   (`?chunked=1`: chunked transfer coding);
//! - `/delay/MS/bytes/N`: the same after MS milliseconds;
//! - `/echo`: the request body back, framed as it came;
//! - `/health`: `ok`;
//! - the responsiveness test's four (draft-ietf-ippm-responsiveness, the
//!   contract of network-quality/server's `SERVER_SPEC.md`, which Apple's
//!   `networkQuality -C URL` and goresponsiveness speak):
//!   `/.well-known/nq` (the config: JSON naming the other three at the
//!   authority the client asked for), `/nq/small` (1 byte), `/nq/large`
//!   (an object no client finishes) and `/nq/upload` (a sink that reads
//!   and discards a body of any size); never compressed, never redirected.

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
    /// JSON (`application/json`).
    Json(String),
    /// The request body read and discarded (`/nq/upload`); the answer,
    /// a short text, comes after its last byte.
    Sink,
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
    /// Send as it is, never compressed (`--gzip`): the responsiveness
    /// objects, whose spec forbids a content coding.
    pub identity: bool,
}

impl Reply {
    /// A short text reply.
    pub fn text(status: u16, msg: impl Into<Cow<'static, str>>) -> Reply {
        Reply {
            status,
            body: Body::Text(msg.into()),
            delay_ms: 0,
            allow: None,
            identity: false,
        }
    }
}

/// The responsiveness config's path (Apple's `networkQuality -C` takes
/// any URL; this is the one `tcpwise rpm HOST` asks first).
pub const NQ_CONFIG: &str = "/.well-known/nq";
/// The large object's length: a petabyte (a day at 100 Gbit/s; the spec
/// asks for at least 8 GB and a client never finishes it).
pub const NQ_LARGE_LEN: u64 = 1_000_000_000_000_000;

/// Whether a Host value is an authority (RFC 3986 3.2: reg-name or IP
/// literal, optional port): the config writes it into JSON and URLs, so
/// a quote, a backslash or a control byte is refused, not escaped.
fn is_authority(host: &str) -> bool {
    !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:[]".contains(&b))
}

/// The config `/.well-known/nq` answers: the spec's three URLs under both
/// names clients read (`small_download_url`, as the spec writes it, and
/// `small_https_download_url`, as Apple's servers and goresponsiveness
/// do), at the authority the request named.
pub fn nq_config(scheme: &str, host: &str) -> String {
    let u = |path: &str| format!("{scheme}://{host}/nq/{path}");
    let (small, large, upload) = (u("small"), u("large"), u("upload"));
    format!(
        "{{\"version\":1,\"urls\":{{\"small_download_url\":\"{small}\",\"large_download_url\":\"{large}\",\"upload_url\":\"{upload}\",\"small_https_download_url\":\"{small}\",\"large_https_download_url\":\"{large}\",\"https_upload_url\":\"{upload}\"}}}}\n"
    )
}

/// The reply to a request that came as TLS early data (0-RTT) and may be
/// a replay (RFC 8470): `None` for the safe methods (RFC 9110 §9.2.1:
/// answering a copy twice changes nothing), 425 Too Early for the rest,
/// which the client may send again once its handshake is complete.
pub fn too_early(method: &str) -> Option<Reply> {
    (!matches!(method, "GET" | "HEAD" | "OPTIONS" | "TRACE")).then(|| {
        Reply::text(
            425,
            "this request came as TLS early data, which may be replayed: send it again after the handshake\n",
        )
    })
}

/// The reply to `method target`; an N or MS over the limits is a 400
/// (never an allocation or a task parked for a day). `at` is the scheme
/// and the request's `Host` (or `:authority`), which only the
/// responsiveness config uses.
pub fn route(method: &str, target: &str, at: (&str, Option<&str>), lim: &Limits) -> Reply {
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
        identity: false,
    };
    let nq = |body| Reply {
        status: 200,
        body,
        delay_ms: 0,
        allow: None,
        identity: true,
    };
    let reply = match (parts, extra) {
        ([".well-known", "nq", ..], 2) => match at.1 {
            Some(host) if is_authority(host) => nq(Body::Json(nq_config(at.0, host))),
            Some(_) => Reply::text(400, "the Host header is not a host[:port]\n"),
            None => Reply::text(400, "the responsiveness config needs a Host header\n"),
        },
        (["nq", "small", ..], 2) => nq(Body::Pattern {
            len: 1,
            chunked: false,
        }),
        (["nq", "large", ..], 2) => nq(Body::Pattern {
            len: NQ_LARGE_LEN,
            chunked: false,
        }),
        (["nq", "upload", ..], 2) => {
            return if matches!(method, "POST" | "PUT") {
                nq(Body::Sink)
            } else {
                Reply {
                    allow: Some("POST, PUT"),
                    ..Reply::text(405, "use POST or PUT\n")
                }
            };
        }
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
                identity: false,
            };
        }
        _ => {
            return Reply::text(
                404,
                "not found: try /bytes/N, /delay/MS/bytes/N, /echo, /health, /.well-known/nq\n",
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

    const AT: (&str, Option<&str>) = ("http", Some("h:1"));

    #[test]
    fn responsiveness_routes() {
        let lim = Limits::default();
        let r = route(
            "GET",
            "/.well-known/nq",
            ("https", Some("[::1]:8443")),
            &lim,
        );
        let Body::Json(j) = &r.body else {
            panic!("{r:?}")
        };
        assert!(r.identity);
        let v: serde_json::Value = serde_json::from_str(j).expect("json");
        assert_eq!(v["version"], 1);
        for (k, p) in [
            ("small_download_url", "small"),
            ("large_https_download_url", "large"),
            ("upload_url", "upload"),
            ("https_upload_url", "upload"),
        ] {
            assert_eq!(v["urls"][k], format!("https://[::1]:8443/nq/{p}"), "{k}");
        }
        assert_eq!(
            route("GET", "/.well-known/nq", ("http", None), &lim).status,
            400
        );
        // A Host that would break the JSON or the URLs is refused.
        for bad in ["a\",\"x\":\"", "a\\b", "a b", "a\u{1}"] {
            let r = route("GET", "/.well-known/nq", ("http", Some(bad)), &lim);
            assert_eq!(r.status, 400, "{bad:?}");
        }
        let small = route("GET", "/nq/small", AT, &lim);
        assert_eq!((small.status, small.identity), (200, true));
        assert_eq!(
            small.body,
            Body::Pattern {
                len: 1,
                chunked: false
            }
        );
        // The large object ignores --max-bytes (the spec asks >= 8 GB).
        let tight = Limits {
            max_bytes: 10,
            ..Limits::default()
        };
        let large = route("GET", "/nq/large?x=1", AT, &tight);
        assert_eq!(
            large.body,
            Body::Pattern {
                len: NQ_LARGE_LEN,
                chunked: false
            }
        );
        assert_eq!(route("POST", "/nq/upload", AT, &lim).body, Body::Sink);
        assert_eq!(route("PUT", "/nq/upload", AT, &lim).body, Body::Sink);
        let get = route("GET", "/nq/upload", AT, &lim);
        assert_eq!((get.status, get.allow), (405, Some("POST, PUT")));
        assert_eq!(route("POST", "/nq/small", AT, &lim).status, 405);
        assert_eq!(route("GET", "/nq/other", AT, &lim).status, 404);
    }

    #[test]
    fn routes() {
        let lim = Limits::default();
        assert_eq!(
            route("GET", "/bytes/100", AT, &lim).body,
            Body::Pattern {
                len: 100,
                chunked: false
            }
        );
        let r = route("HEAD", "/delay/20/bytes/5?a=b&chunked=1", AT, &lim);
        assert_eq!((r.status, r.delay_ms), (200, 20));
        assert_eq!(
            r.body,
            Body::Pattern {
                len: 5,
                chunked: true
            }
        );
        assert_eq!(route("POST", "/echo", AT, &lim).body, Body::Echo);
        assert_eq!(
            route("GET", "/health", AT, &lim).body,
            Body::Text("ok\n".into())
        );
        assert_eq!(route("GET", "/bytes/100000000001", AT, &lim).status, 400);
        assert_eq!(route("GET", "/bytes/x", AT, &lim).status, 400);
        assert_eq!(route("GET", "/delay/600001/bytes/1", AT, &lim).status, 400);
        let r = route("POST", "/bytes/1", AT, &lim);
        assert_eq!((r.status, r.allow), (405, Some("GET, HEAD")));
        for t in [
            "/",
            "/bytes",
            "/bytes/1/2",
            "/nope",
            "/delay/1/bytes",
            "/health/x",
        ] {
            assert_eq!(route("GET", t, AT, &lim).status, 404, "{t}");
        }
    }
}
