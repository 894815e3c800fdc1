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
    "referer",
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
        // curl knows the scheme once a connection is made: none before.
        "scheme" => s(last
            .map(|r| r.url.as_str())
            .and_then(|u| u.split_once("://"))
            .map(|(s, _)| s.to_ascii_uppercase())),
        "url" => s(Some(d.url.to_string())),
        // curl 7.88 shows a URL given with non-ASCII characters as given
        // until a redirect replaces it.
        "url_effective" => s(Some(match last {
            Some(r) if d.chain.len() > 1 || d.url.is_ascii() => r.url.clone(),
            _ => d.url.to_string(),
        })),
        "urlnum" => V::I(d.urlnum as i64),
        // The Referer the last request sent (`-e`, or `;auto`'s).
        "referer" => s(last.and_then(|r| {
            r.request_head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("referer")
                    .then(|| v.trim().to_string())
            })
        })),
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

/// curl 7.88's `%{json}` keys, in its order (its variables sorted, then
/// `curl_version`), with what each holds when we have no figure: ours
/// (`%{tcp_rtt_ms}`, ...) are not among them, so the object is curl's.
const CURL_JSON: &[(&str, Fill)] = &[
    ("certs", Fill::Empty),
    ("content_type", Fill::Var),
    ("errormsg", Fill::Var),
    ("exitcode", Fill::Var),
    ("filename_effective", Fill::Var),
    ("ftp_entry_path", Fill::Null),
    ("http_code", Fill::Var),
    ("http_connect", Fill::Zero),
    ("http_version", Fill::Var),
    ("local_ip", Fill::Var),
    ("local_port", Fill::Var),
    ("method", Fill::Var),
    ("num_certs", Fill::Zero),
    ("num_connects", Fill::Var),
    ("num_headers", Fill::Var),
    ("num_redirects", Fill::Var),
    ("proxy_ssl_verify_result", Fill::Zero),
    ("redirect_url", Fill::Var),
    ("referer", Fill::Var),
    ("remote_ip", Fill::Var),
    ("remote_port", Fill::Var),
    ("response_code", Fill::Var),
    ("scheme", Fill::Var),
    ("size_download", Fill::Var),
    ("size_header", Fill::Var),
    ("size_request", Fill::Var),
    ("size_upload", Fill::Var),
    ("speed_download", Fill::Var),
    ("speed_upload", Fill::Var),
    ("ssl_verify_result", Fill::Var),
    ("time_appconnect", Fill::Var),
    ("time_connect", Fill::Var),
    ("time_namelookup", Fill::Var),
    ("time_pretransfer", Fill::Var),
    ("time_redirect", Fill::Var),
    ("time_starttransfer", Fill::Var),
    ("time_total", Fill::Var),
    ("url", Fill::Var),
    ("url_effective", Fill::Var),
    ("urlnum", Fill::Var),
];

/// Where a `%{json}` key's value comes from.
#[derive(Clone, Copy)]
enum Fill {
    /// The variable of that name.
    Var,
    /// An empty string (curl's `certs` without `-w` certificate info).
    Empty,
    /// `null` (FTP's).
    Null,
    /// `0` (proxy TLS and HTTP CONNECT figures, certificates).
    Zero,
}

/// A JSON string as curl's `jsonWriteString` writes it.
fn json_string(s: &str, lower: bool) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if lower => out.push(c.to_ascii_lowercase()),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A value as curl writes it in `%{json}`: a missing string is `null`
/// (the connection's addresses: an empty string), times with six
/// decimals, `http_code` a number.
fn json_value(name: &str, d: &Done) -> String {
    let name = if name == "http_code" {
        "response_code"
    } else {
        name
    };
    match var(name, d) {
        Some(V::S(Some(s))) => json_string(&s, false),
        Some(V::S(None)) if matches!(name, "local_ip" | "remote_ip") => "\"\"".into(),
        Some(V::S(None)) | None => "null".into(),
        Some(V::I(i)) => i.to_string(),
        Some(V::T(t)) => format!("{t:.6}"),
    }
}

/// Every curl variable as one JSON object (`%{json}`), keys, types and
/// order as curl 7.88 writes them.
pub fn json(d: &Done) -> String {
    let mut out = String::from("{");
    for (name, fill) in CURL_JSON {
        out.push_str(&json_string(name, false));
        out.push(':');
        out.push_str(&match fill {
            Fill::Var => json_value(name, d),
            Fill::Empty => "\"\"".into(),
            Fill::Null => "null".into(),
            Fill::Zero => "0".into(),
        });
        out.push(',');
    }
    out.push_str("\"curl_version\":");
    out.push_str(&json_string(
        concat!("tcpwise/", env!("CARGO_PKG_VERSION")),
        false,
    ));
    out.push('}');
    out
}

/// The last response's headers as curl's `%{header_json}`: names
/// lowercased in the order they first came, each with the list of its
/// values, one name a line.
fn header_json(d: &Done) -> String {
    let mut names: Vec<(String, Vec<&str>)> = Vec::new();
    for (k, v) in d.chain.last().map_or(&[][..], |l| &l.headers[..]) {
        let k = k.to_ascii_lowercase();
        match names.iter_mut().find(|(n, _)| *n == k) {
            Some((_, vs)) => vs.push(v),
            None => names.push((k, vec![v])),
        }
    }
    let entries: Vec<String> = names
        .iter()
        .map(|(k, vs)| {
            let vals: Vec<String> = vs.iter().map(|v| json_string(v, false)).collect();
            format!("{}:[{}]", json_string(k, true), vals.join(","))
        })
        .collect();
    format!("{{{}\n}}", entries.join(",\n"))
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
                "json" => push(&mut r, to_err, &json(d)),
                "header_json" => push(&mut r, to_err, &header_json(d)),
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
            "000 7 cannot connect \n\\x\\\\n % %z | 0.000000\t0 0.000000\n"
        );
        assert_eq!(r.stderr, "[e]");
        assert_eq!(r.warnings, vec!["unknown --write-out variable: 'nope'"]);
        // curl's keys in curl's order, times with six decimals, and
        // none of ours (they are variables of their own).
        let j = json(&d);
        assert!(
            j.starts_with("{\"certs\":\"\",\"content_type\":null,\"errormsg\":\"cannot connect\",\"exitcode\":7,"),
            "{j}"
        );
        assert!(
            j.contains(",\"http_code\":0,") && j.contains(",\"local_ip\":\"\","),
            "{j}"
        );
        assert!(j.contains(",\"time_total\":0.000000,"), "{j}");
        assert!(
            j.contains(",\"urlnum\":0,\"curl_version\":\"tcpwise/"),
            "{j}"
        );
        assert!(
            !j.contains("tcp_rtt_ms") && !j.contains("pool_reason"),
            "{j}"
        );
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v.as_object().unwrap().len(), CURL_JSON.len() + 1);
        assert_eq!(header_json(&d), "{\n}");
    }
}
