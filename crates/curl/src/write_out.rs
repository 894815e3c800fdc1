//! `-w/--write-out FORMAT`: curl's variables, sans-IO.
//!
//! The format language is curl's: `%{name}` is a variable, `%header{name}`
//! a response header, `%{stdout}`/`%{stderr}` switch the stream, `%%` is a
//! percent sign, `\n`, `\r`, `\t` are escapes (any other backslash pair is
//! printed as it stands), and an unknown variable prints nothing and a
//! warning; `%{onerror}` drops the rest unless the transfer failed.
//! `%{json}` is every variable as one JSON object. Times are
//! seconds from the start of the whole operation, redirects included, with
//! six decimals; `time_redirect` is the time spent before the last
//! request began. Our own variables sit beside curl's: `tcp_rtt_ms` and
//! `tcp_cwnd` (the kernel's `TCP_INFO` when the body ended), `pool_reason`
//! (why the pool chose the connection), `conn_id`, `conn_reused` and
//! `tls_resumed` (1: the TLS session was resumed from a ticket); curl
//! 8.12's `tls_earlydata` (bytes sent as 0-RTT early data, negative when
//! the server refused them) has curl's meaning.

use serde_json::{Value, json};
use tcpwise_client::Response;

/// What `-w` reports on: one URL's whole operation.
#[derive(Debug, Clone, Copy)]
pub struct Done<'a> {
    /// The URL as given.
    pub url: &'a str,
    /// Every response, redirects first.
    pub chain: &'a [Response],
    /// The exit code of this transfer.
    pub exit_code: i32,
    /// Its error message, if it failed.
    pub error: Option<&'a str>,
    /// Where the body went (`-o`), if to a file.
    pub filename: Option<&'a str>,
    /// The request method of the first request.
    pub method: &'a str,
    /// Index of the URL on the command line, from 0.
    pub urlnum: usize,
}

/// The variables, in curl's order, then ours.
pub const VARIABLES: &[&str] = &[
    "content_type",
    "errormsg",
    "exitcode",
    "filename_effective",
    "http_code",
    "http_connect",
    "http_version",
    "local_ip",
    "local_port",
    "method",
    "num_connects",
    "num_headers",
    "num_redirects",
    "redirect_url",
    "remote_ip",
    "remote_port",
    "response_code",
    "scheme",
    "size_download",
    "size_header",
    "size_request",
    "size_upload",
    "speed_download",
    "speed_upload",
    "time_appconnect",
    "time_connect",
    "time_namelookup",
    "time_pretransfer",
    "time_redirect",
    "time_starttransfer",
    "time_total",
    "url",
    "url_effective",
    "urlnum",
    "tcp_rtt_ms",
    "tcp_cwnd",
    "pool_reason",
    "conn_id",
    "conn_reused",
    "tls_earlydata",
    "tls_resumed",
];

/// A variable's value: seconds print with six decimals.
enum V {
    S(Option<String>),
    I(i64),
    T(f64),
}

impl V {
    fn text(&self) -> String {
        match self {
            V::S(s) => s.clone().unwrap_or_default(),
            V::I(i) => i.to_string(),
            V::T(t) => format!("{t:.6}"),
        }
    }
    fn json(&self) -> Value {
        match self {
            V::S(s) => s.clone().map_or(Value::Null, Value::String),
            V::I(i) => json!(i),
            V::T(t) => serde_json::from_str(&format!("{t:.6}")).unwrap_or(Value::Null),
        }
    }
}

fn var(name: &str, d: &Done) -> Option<V> {
    if let Some(v) = time_var(name, d)
        .or_else(|| size_var(name, d))
        .or_else(|| conn_var(name, d))
    {
        return Some(v);
    }
    let last = d.chain.last();
    let s = |v: Option<String>| V::S(v);
    Some(match name {
        "content_type" => s(last.and_then(|r| r.header("content-type").map(str::to_string))),
        "errormsg" => s(d.error.map(str::to_string)),
        "exitcode" => V::I(i64::from(d.exit_code)),
        "filename_effective" => s(d.filename.map(str::to_string)),
        "http_code" | "response_code" => {
            let c = last.map_or(0, |r| r.status);
            if name == "http_code" {
                V::S(Some(format!("{c:03}")))
            } else {
                V::I(i64::from(c))
            }
        }
        "http_connect" => V::S(Some("000".into())),
        "http_version" => V::S(Some(
            match last.map(|r| r.version.as_str()) {
                Some("HTTP/1.0") => "1",
                Some("HTTP/1.1") => "1.1",
                Some("HTTP/2") => "2",
                Some("HTTP/3") => "3",
                _ => "0",
            }
            .into(),
        )),
        "method" => s(Some(d.method.to_string())),
        "num_headers" => V::I(last.map_or(0, |r| r.headers.len() as i64)),
        "num_redirects" => V::I(d.chain.len().saturating_sub(1) as i64),
        "redirect_url" => s(last.and_then(|r| {
            if !(300..400).contains(&r.status) {
                return None;
            }
            let loc = r.header("location")?;
            url::Url::parse(&r.url)
                .ok()?
                .join(loc)
                .ok()
                .map(|u| u.to_string())
        })),
        "scheme" => s(last
            .map(|r| r.url.as_str())
            .or(Some(d.url))
            .and_then(|u| u.split_once("://"))
            .map(|(s, _)| s.to_ascii_uppercase())),
        "url" => s(Some(d.url.to_string())),
        "url_effective" => s(Some(last.map_or(d.url.to_string(), |r| r.url.clone()))),
        "urlnum" => V::I(d.urlnum as i64),
        // 0: verified, or no TLS; 1 (OpenSSL's "unspecified") when the
        // certificate was refused (curl prints OpenSSL's own reason code,
        // 18 for a self-signed one; rustls has no such numbers).
        "ssl_verify_result" => V::I(i64::from(d.exit_code == 60)),
        _ => return None,
    })
}

/// `time_*`: seconds since the transfer began, the earlier hops' times
/// added as curl adds them.
fn time_var(name: &str, d: &Done) -> Option<V> {
    let last = d.chain.last();
    // A fold from +0.0: `sum()` of no f64 is -0.0, which prints as
    // curl never does (`%{time_redirect}` without redirects: 0.000000).
    let before: f64 = d
        .chain
        .iter()
        .rev()
        .skip(1)
        .map(|r| r.timings.total_ms)
        .fold(0.0, |a, b| a + b);
    let at = |f: &dyn Fn(&Response) -> Option<f64>| {
        V::T(last.and_then(f).map_or(0.0, |ms| (before + ms) / 1e3))
    };
    Some(match name {
        "time_appconnect" => at(&|r| r.timings.tls_ms),
        "time_connect" => at(&|r| r.timings.connect_ms),
        "time_namelookup" => at(&|r| r.timings.dns_ms),
        "time_pretransfer" => at(&|r| Some(r.timings.request_written_ms)),
        "time_starttransfer" => at(&|r| Some(r.timings.first_byte_ms)),
        "time_total" => at(&|r| Some(r.timings.total_ms)),
        "time_redirect" => V::T(before / 1e3),
        _ => return None,
    })
}

/// `size_*` and `speed_*`: bytes of the heads, requests and bodies.
fn size_var(name: &str, d: &Done) -> Option<V> {
    let last = d.chain.last();
    Some(match name {
        "size_download" => V::I(last.map_or(0, |r| r.body_bytes as i64)),
        "size_header" => V::I(d.chain.iter().map(|r| r.head_bytes as i64).sum()),
        "size_request" => V::I(
            d.chain
                .iter()
                .map(|r| (r.request_head.len() as u64 + r.upload_bytes) as i64)
                .sum(),
        ),
        "size_upload" => V::I(d.chain.iter().map(|r| r.upload_bytes as i64).sum()),
        "speed_download" | "speed_upload" => V::I(last.map_or(0, |r| {
            let bytes = if name == "speed_download" {
                r.body_bytes
            } else {
                r.upload_bytes
            };
            let secs = r.timings.total_ms / 1e3;
            if secs > 0.0 {
                (bytes as f64 / secs) as i64
            } else {
                0
            }
        })),
        _ => return None,
    })
}

/// The connection's: addresses, TLS, the kernel's TCP figures, the pool.
fn conn_var(name: &str, d: &Done) -> Option<V> {
    let last = d.chain.last();
    let s = |v: Option<String>| V::S(v);
    Some(match name {
        "local_ip" => s(last.and_then(|r| r.conn.local).map(|a| a.ip().to_string())),
        "local_port" => V::I(
            last.and_then(|r| r.conn.local)
                .map_or(0, |a| i64::from(a.port())),
        ),
        "remote_ip" => s(last.and_then(|r| r.conn.peer).map(|a| a.ip().to_string())),
        "remote_port" => V::I(
            last.and_then(|r| r.conn.peer)
                .map_or(0, |a| i64::from(a.port())),
        ),
        "num_connects" => V::I(d.chain.iter().filter(|r| !r.conn.reused).count() as i64),
        "tls_earlydata" => V::I(
            last.and_then(|r| r.conn.tls.as_ref())
                .map_or(0, |t| t.early_data),
        ),
        "tls_resumed" => V::I(i64::from(
            last.and_then(|r| r.conn.tls.as_ref())
                .is_some_and(|t| t.resumed),
        )),
        "tcp_rtt_ms" => s(last
            .and_then(|r| r.conn.tcp_info_end.as_ref())
            .map(|i| format!("{:.3}", f64::from(i.rtt_us) / 1e3))),
        "tcp_cwnd" => s(last
            .and_then(|r| r.conn.tcp_info_end.as_ref())
            .map(|i| i.snd_cwnd.to_string())),
        "pool_reason" => s(last.map(|r| {
            r.conn
                .reason
                .clone()
                .unwrap_or_else(|| "new connection".into())
        })),
        "conn_id" => V::I(last.map_or(0, |r| r.conn.id as i64)),
        "conn_reused" => V::I(last.map_or(0, |r| i64::from(r.conn.reused))),
        _ => return None,
    })
}

/// Every variable as one JSON object (`%{json}`).
pub fn json(d: &Done) -> Value {
    let mut m = serde_json::Map::new();
    for name in VARIABLES {
        // In JSON the code is a number, as curl writes it.
        let as_var = if *name == "http_code" {
            "response_code"
        } else {
            name
        };
        if let Some(v) = var(as_var, d) {
            m.insert((*name).to_string(), v.json());
        }
    }
    m.insert(
        "curl_version".into(),
        json!(concat!("tcpwise/", env!("CARGO_PKG_VERSION"))),
    );
    Value::Object(m)
}

/// The rendered format: what goes to standard output and to standard
/// error, and warnings for unknown variables.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    /// Text for standard output.
    pub stdout: String,
    /// Text for standard error (after `%{stderr}`).
    pub stderr: String,
    /// `unknown --write-out variable: 'x'`, one per unknown name.
    pub warnings: Vec<String>,
}

/// Renders `fmt` for `d`.
pub fn render(fmt: &str, d: &Done) -> Rendered {
    let mut r = Rendered::default();
    let mut to_err = false;
    let mut rest = fmt;
    let push = |r: &mut Rendered, to_err: bool, s: &str| {
        if to_err {
            r.stderr.push_str(s);
        } else {
            r.stdout.push_str(s);
        }
    };
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("%%") {
            push(&mut r, to_err, "%");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("%{")
            && let Some(end) = after.find('}')
        {
            let name = &after[..end];
            rest = &after[end + 1..];
            match name {
                // The rest is printed only when the transfer failed.
                "onerror" if d.exit_code == 0 => return r,
                "onerror" => {}
                "stdout" => to_err = false,
                "stderr" => to_err = true,
                "json" => push(&mut r, to_err, &json(d).to_string()),
                "header_json" => {
                    let mut m = serde_json::Map::<String, Value>::new();
                    for (k, v) in d.chain.last().map_or(&[][..], |l| &l.headers[..]) {
                        let e = m.entry(k.to_ascii_lowercase()).or_insert(json!([]));
                        if let Value::Array(a) = e {
                            a.push(json!(v));
                        }
                    }
                    push(&mut r, to_err, &Value::Object(m).to_string());
                }
                _ => match var(name, d) {
                    Some(v) => push(&mut r, to_err, &v.text()),
                    None => r
                        .warnings
                        .push(format!("unknown --write-out variable: '{name}'")),
                },
            }
        } else if let Some(after) = rest.strip_prefix("%header{")
            && let Some(end) = after.find('}')
        {
            let name = &after[..end];
            rest = &after[end + 1..];
            if let Some(v) = d.chain.last().and_then(|l| l.header(name)) {
                push(&mut r, to_err, v);
            }
        } else if let Some(after) = rest.strip_prefix('\\')
            && let Some(n) = after.chars().next()
        {
            match n {
                'n' => push(&mut r, to_err, "\n"),
                'r' => push(&mut r, to_err, "\r"),
                't' => push(&mut r, to_err, "\t"),
                other => push(&mut r, to_err, &format!("\\{other}")),
            }
            rest = &after[n.len_utf8()..];
        } else {
            push(&mut r, to_err, &rest[..c.len_utf8()]);
            rest = &rest[c.len_utf8()..];
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done<'a>(chain: &'a [Response]) -> Done<'a> {
        Done {
            url: "http://h/a",
            chain,
            exit_code: 0,
            error: None,
            filename: None,
            method: "GET",
            urlnum: 0,
        }
    }

    #[test]
    fn the_format_language_is_curls() {
        let none: [Response; 0] = [];
        let d = Done {
            exit_code: 7,
            error: Some("cannot connect"),
            ..done(&none)
        };
        let r = render(
            "%{http_code} %{exitcode} %{errormsg}%{stderr}[e]%{stdout} \\n\\x\\\\n %% %z %{nope}|%{scheme} %{time_total}\\t%{num_redirects} %{time_redirect}\n",
            &d,
        );
        assert_eq!(
            r.stdout,
            "000 7 cannot connect \n\\x\\\\n % %z |HTTP 0.000000\t0 0.000000\n"
        );
        assert_eq!(r.stderr, "[e]");
        assert_eq!(r.warnings, vec!["unknown --write-out variable: 'nope'"]);
        let j = json(&d);
        assert_eq!(j["http_code"], json!(0));
        assert_eq!(j["exitcode"], json!(7));
        assert_eq!(j["redirect_url"], Value::Null);
        assert!(j["pool_reason"].is_null() && j.get("tcp_rtt_ms").is_some());
    }
}
