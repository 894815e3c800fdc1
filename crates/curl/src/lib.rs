//! curl's rules for turning command-line words into requests, so `tcpwise
//! get` behaves like the curl its users know. Each rule is curl 7.88's, as
//! its manual and source state it:
//! - a URL without a scheme is `http://`; credentials in it become Basic
//!   authorization (as `-u` does) and leave the URL;
//! - `-d`/`--data-binary`/`--data-raw`/`--data-urlencode` join their parts
//!   with `&` into a POST with a form content type unless one is given;
//!   `--json` joins with nothing and says `application/json` (Content-Type
//!   and Accept);
//!   `-d @FILE` strips CR and LF (curl does), `--data-binary @FILE` keeps
//!   them, `@-` reads standard input; `-G` moves the data into the query;
//! - `-F` builds a `multipart/form-data` body with curl's boundary form;
//!   `-T FILE` is a PUT of the file, appended to a URL ending in `/`;
//! - `-I` is HEAD, and asking for two methods at once (`-I -d`, `-d -F`)
//!   is refused with curl's message;
//! - `-A`, `-e`, `-r`, `-C`, `--compressed` set their headers;
//! - proxies come from `-x` or curl's environment variables
//!   (`http_proxy` in lower case only, `https_proxy`/`HTTPS_PROXY`,
//!   `all_proxy`, with `no_proxy`/`--noproxy` exceptions).
//!
//! What happens to the response is [`transfer`]; `-w` is [`write_out`];
//! `--retry` is [`retry`]; the exit codes are [`exit`]'s one table; a
//! whole command line, every URL, is [`run`], its flags [`flags`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod cookies;
pub mod decode;
pub mod exit;
pub mod extra;
pub mod flags;
pub mod form;
pub mod glob;
pub mod meter;
pub mod netrc;
pub mod retry;
pub mod run;
pub mod sink;
pub mod trace;
pub mod transfer;
pub mod write_out;

use base64::Engine;
use bytes::Bytes;
use std::path::{Path, PathBuf};
use tcpwise_client::{Header, Request};
use tcpwise_client::{Payload, Proxy};
use url::Url;

/// Why the words do not make a request (curl's exit 2 or 3).
#[derive(Debug, thiserror::Error)]
pub enum CurlError {
    /// Not a URL (curl's exit 3).
    #[error("'{url}' is not a valid URL{why}")]
    Url {
        /// As given.
        url: String,
        /// The parser's complaint, if any.
        why: String,
    },
    /// A malformed `[..]` or `{..}` pattern (curl's exit 3; `-g` sends
    /// the URL as it is).
    #[error("'{url}': {why} (-g/--globoff sends brackets and braces as they are)")]
    Glob {
        /// As given.
        url: String,
        /// curl's complaint, with the position.
        why: String,
    },
    /// A scheme other than http and https (curl's exit 1: "Protocol not
    /// supported").
    #[error("'{url}': only http:// and https:// are spoken here, not {scheme}://")]
    Scheme {
        /// As given.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// `-X` with something that is not a method.
    #[error("'{0}' is not an HTTP method")]
    Method(String),
    /// A file named by `@FILE`, `-T` or `-F` cannot be read.
    #[error("cannot read {path}")]
    Data {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file `-F` names cannot be read (curl's 26).
    #[error("cannot read {path} for -F")]
    FormFile {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `-K` file cannot be read (curl's 26).
    #[error("cannot read the config file {path}")]
    Config {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The `-T` file cannot be opened (curl's 26).
    #[error("cannot open {path} to upload it")]
    Upload {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Two request methods asked for at once (curl refuses, exit 2).
    #[error("you can only select one HTTP request method: you asked for both {0} and {1}")]
    Methods(&'static str, &'static str),
    /// A flag's value that curl would refuse.
    #[error("{0}")]
    Usage(String),
    /// A proxy that is not `[http://][user:pw@]host[:port]`.
    #[error("'{0}' is not an http:// proxy ([http://][USER:PASSWORD@]HOST[:PORT])")]
    Proxy(String),
}

/// One `-d`-family argument, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// `-d`/`--data`: `@FILE` is read with CR and LF removed.
    Ascii(String),
    /// `--data-binary`: `@FILE` is read as is.
    Binary(String),
    /// `--data-raw`: no `@` meaning.
    Raw(String),
    /// `--data-urlencode`: `content`, `=content`, `name=content`,
    /// `@file`, `name@file`, the content percent-encoded.
    UrlEncode(String),
    /// `--json`: as `--data-binary`, joined to what precedes it with
    /// nothing between, and the request says `application/json`.
    Json(String),
}

/// The request-shaping flags of `tcpwise get`.
#[derive(Debug, Clone, Default)]
pub struct CurlArgs {
    /// `-X`.
    pub method: Option<String>,
    /// `-I`.
    pub head: bool,
    /// `-d` and friends, in order.
    pub data: Vec<Data>,
    /// `-G`: the data goes into the query of a GET.
    pub get: bool,
    /// `-F` and `--form-string`, in order ([`form`]).
    pub form: Vec<form::FormArg>,
    /// `-T FILE` (`-` for standard input): PUT the file.
    pub upload: Option<PathBuf>,
    /// `-H`, in order.
    pub headers: Vec<Header>,
    /// `-u USER:PASSWORD`.
    pub user: Option<String>,
    /// `-A`.
    pub user_agent: Option<String>,
    /// `-e`.
    pub referer: Option<String>,
    /// `-r`: `0-499`, `500-`, `-500`, `0-0,-1`.
    pub range: Option<String>,
    /// `-C N` or the resolved `-C -`: ask for the body from this offset.
    pub resume_from: Option<u64>,
    /// `--compressed`: ask for deflate, gzip, br and zstd.
    pub compressed: bool,
    /// `-x`: `Some("")` disables proxies; `None` reads the environment.
    pub proxy: Option<String>,
    /// `--noproxy LIST`.
    pub noproxy: Option<String>,
    /// `-n`/`--netrc-file`: credentials when neither `-u` nor the URL
    /// gives any.
    pub netrc: Option<netrc::Netrc>,
    /// `--path-as-is`: the path goes out as typed, dot segments and all.
    pub path_as_is: bool,
    /// `--request-target`: sent instead of the URL's path and query.
    pub request_target: Option<String>,
}

/// What `--compressed` asks for, curl's order.
pub const ACCEPT_ENCODING: &str = "deflate, gzip, br, zstd";

impl CurlArgs {
    /// Refuses combinations curl refuses, before anything is sent.
    pub fn check(&self) -> Result<(), CurlError> {
        let post = !self.data.is_empty() && !self.get;
        let mut methods: Vec<&'static str> = Vec::new();
        if self.head {
            methods.push("HEAD (-I, --head)");
        }
        if post {
            methods.push("POST (-d, --data)");
        }
        if !self.form.is_empty() {
            methods.push("multipart formpost (-F, --form)");
        }
        if self.upload.is_some() {
            methods.push("PUT (-T, --upload-file)");
        }
        if methods.len() > 1 {
            return Err(CurlError::Methods(methods[0], methods[1]));
        }
        if let Some(u) = &self.user
            && !u.contains(':')
        {
            return Err(CurlError::Usage(format!(
                "-u '{u}' has no password: give -u USER:PASSWORD (there is no password prompt)"
            )));
        }
        if let Some(r) = &self.range {
            let ok = r.split(',').all(|p| {
                let (a, b) = p.split_once('-').unwrap_or(("x", ""));
                (a.is_empty() || a.parse::<u64>().is_ok())
                    && (b.is_empty() || b.parse::<u64>().is_ok())
                    && !(a.is_empty() && b.is_empty())
            });
            if !ok {
                return Err(CurlError::Usage(format!(
                    "-r '{r}' is not a byte range (0-499, 500-, -500, 0-0,-1)"
                )));
            }
        }
        Ok(())
    }

    /// The URL as curl sends it (`-G`'s data in the query, `-T FILE`'s
    /// name after a trailing `/`, no credentials in it) and the
    /// credentials: `-u`'s, else the URL's, else `.netrc`'s for its host.
    fn url_and_user(
        &self,
        url: &str,
        data: Option<&[u8]>,
    ) -> Result<(url::Url, Option<String>), CurlError> {
        let mut parsed = parse_url(url)?;
        if self.get
            && let Some(d) = data
        {
            let q = String::from_utf8_lossy(d).to_string();
            let joined = match parsed.query() {
                Some(old) if !old.is_empty() => format!("{old}&{q}"),
                _ => q,
            };
            parsed.set_query(Some(&joined));
        }
        if let Some(file) = &self.upload
            && parsed.path().ends_with('/')
            && file.as_os_str() != "-"
            && let Some(name) = file.file_name()
        {
            let joined = parsed
                .join(
                    &percent_encoding::utf8_percent_encode(&name.to_string_lossy(), UNRESERVED)
                        .to_string(),
                )
                .map_err(|e| CurlError::Url {
                    url: url.to_string(),
                    why: format!(": {e}"),
                })?;
            parsed = joined;
        }
        // Credentials: -u wins over the URL's; either way not in the URL.
        let url_user = (!parsed.username().is_empty()).then(|| {
            let dec = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .to_string()
            };
            format!(
                "{}:{}",
                dec(parsed.username()),
                dec(parsed.password().unwrap_or(""))
            )
        });
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        let user = self.user.clone().or(url_user).or_else(|| {
            let n = self.netrc.as_ref()?;
            n.credentials(parsed.host_str()?)
        });
        Ok((parsed, user))
    }

    /// The request for `url` as curl would send it. `stdin` is read when
    /// an argument names `-` (`-d @-`, `-T -`).
    pub fn request(
        &self,
        url: &str,
        stdin: &mut dyn FnMut() -> std::io::Result<Vec<u8>>,
    ) -> Result<Request, CurlError> {
        self.check()?;
        let data = self.data_body(stdin)?;
        let (parsed, user) = self.url_and_user(url, data.as_deref())?;
        let mut form = None;
        if !self.form.is_empty() {
            let (ty, body, _) = form::multipart(&self.form, &boundary(), stdin)?;
            form = Some((ty, body));
        }
        let method = match &self.method {
            Some(m) => {
                hyper::Method::from_bytes(m.as_bytes()).map_err(|_| CurlError::Method(m.clone()))?
            }
            None if self.head => hyper::Method::HEAD,
            None if self.upload.is_some() => hyper::Method::PUT,
            None if form.is_some() || (data.is_some() && !self.get) => hyper::Method::POST,
            None => hyper::Method::GET,
        };
        let mut headers = self.early_headers(user.as_deref());
        let (body, late) = self.body_and_late_headers(form.as_ref(), data.as_deref())?;
        // A -X method without a body goes without Content-Length, as
        // curl sends it (not the 0 a POST would get).
        let posts = data.is_some() && !self.get;
        if self.method.is_some()
            && form.is_none()
            && self.upload.is_none()
            && !posts
            && !self.given("content-length")
        {
            headers.push(("Content-Length".into(), tcpwise_client::REMOVE.into()));
        }
        headers.extend(self.headers.iter().map(|h| (h.0.clone(), h.1.clone())));
        headers.extend(late);
        let proxy = proxy_for(
            &parsed,
            self.proxy.as_deref(),
            self.noproxy.as_deref(),
            &|k| std::env::var(k).ok(),
        )?;
        let target = self.request_target.clone().or_else(|| {
            self.path_as_is.then(|| {
                let q = parsed.query().map(|q| format!("?{q}")).unwrap_or_default();
                format!("{}{q}", raw_path(url))
            })
        });
        Ok(Request {
            method,
            url: parsed,
            headers,
            body,
            proxy,
            target,
        })
    }

    /// Whether `-H` gives header `name` (which then replaces ours).
    fn given(&self, name: &str) -> bool {
        self.headers.iter().any(|h| h.0.eq_ignore_ascii_case(name))
    }

    /// The headers curl sends before the `-H` ones, in its order:
    /// credentials, range, User-Agent, Referer, Accept-Encoding.
    fn early_headers(&self, user: Option<&str>) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        let mut add = |k: &str, v: String| {
            if !self.given(k) {
                headers.push((k.to_string(), v));
            }
        };
        if let Some(u) = user {
            let b64 = base64::engine::general_purpose::STANDARD.encode(u.as_bytes());
            add("Authorization", format!("Basic {b64}"));
        }
        if let Some(r) = &self.range {
            add("Range", format!("bytes={r}"));
        } else if let Some(n) = self.resume_from.filter(|&n| n > 0) {
            add("Range", format!("bytes={n}-"));
        }
        if let Some(a) = &self.user_agent {
            add("User-Agent", a.clone());
        }
        if let Some(e) = &self.referer {
            add("Referer", e.clone());
        }
        if self.compressed {
            add("Accept-Encoding", ACCEPT_ENCODING.into());
        }
        headers
    }

    /// The body, and what curl sends after the `-H` headers, in its
    /// order: --json's two (its tool appends them to -H's list), or a
    /// form's or -d's Content-Length and Content-Type (its http_body).
    fn body_and_late_headers(
        &self,
        form: Option<&(String, Vec<u8>)>,
        data: Option<&[u8]>,
    ) -> Result<(Payload, Vec<(String, String)>), CurlError> {
        let mut late = Vec::new();
        let mut add = |k: &str, v: String| {
            if !self.given(k) {
                late.push((k.to_string(), v));
            }
        };
        let json = self.data.iter().any(|d| matches!(d, Data::Json(_)));
        if json {
            // Even with -G, as curl 7.88 does.
            add("Content-Type", "application/json".into());
            add("Accept", "application/json".into());
        }
        let body = match (form, data, &self.upload) {
            (Some((ty, body)), _, _) => {
                add("Content-Length", body.len().to_string());
                add("Content-Type", ty.clone());
                Payload::Bytes(Bytes::from(body.clone()))
            }
            (None, Some(d), _) if !self.get => {
                if !json {
                    add("Content-Length", d.len().to_string());
                }
                add("Content-Type", "application/x-www-form-urlencoded".into());
                Payload::Bytes(Bytes::copy_from_slice(d))
            }
            // -T streams: the file when it is sent, standard input as it comes.
            (None, _, Some(f)) if f.as_os_str() == "-" => Payload::Stdin,
            (None, _, Some(f)) => Payload::File {
                path: f.clone(),
                len: upload_len(f)?,
            },
            _ => Payload::default(),
        };
        Ok((body, late))
    }

    /// The joined `-d`-family data, or `None` when there is none.
    fn data_body(
        &self,
        stdin: &mut dyn FnMut() -> std::io::Result<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>, CurlError> {
        if self.data.is_empty() {
            return Ok(None);
        }
        let mut out = Vec::new();
        for (i, d) in self.data.iter().enumerate() {
            if i > 0 && !matches!(d, Data::Json(_)) {
                out.push(b'&');
            }
            match d {
                Data::Ascii(s) => match s.strip_prefix('@') {
                    Some(f) => {
                        let mut v = read_arg(Path::new(f), stdin)?;
                        v.retain(|&b| b != b'\r' && b != b'\n');
                        out.extend(v);
                    }
                    None => out.extend_from_slice(s.as_bytes()),
                },
                Data::Binary(s) | Data::Json(s) => match s.strip_prefix('@') {
                    Some(f) => out.extend(read_arg(Path::new(f), stdin)?),
                    None => out.extend_from_slice(s.as_bytes()),
                },
                Data::Raw(s) => out.extend_from_slice(s.as_bytes()),
                Data::UrlEncode(s) => {
                    let (name, content) = if let Some(c) = s.strip_prefix('=') {
                        (None, c.as_bytes().to_vec())
                    } else if let Some((n, c)) = s.split_once('=') {
                        (Some(n), c.as_bytes().to_vec())
                    } else if let Some((n, f)) = s.split_once('@') {
                        ((!n.is_empty()).then_some(n), read_arg(Path::new(f), stdin)?)
                    } else {
                        (None, s.as_bytes().to_vec())
                    };
                    if let Some(n) = name {
                        out.extend_from_slice(n.as_bytes());
                        out.push(b'=');
                    }
                    out.extend_from_slice(urlencode(&content).as_bytes());
                }
            }
        }
        Ok(Some(out))
    }
}

/// Everything but RFC 3986's unreserved characters is encoded.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// curl's form encoding for `--data-urlencode`: a space is `+`, letters,
/// digits and `-._~` stay, everything else is `%XX`.
pub fn urlencode(b: &[u8]) -> String {
    b.split(|&c| c == b' ')
        .map(|part| percent_encoding::percent_encode(part, UNRESERVED).to_string())
        .collect::<Vec<_>>()
        .join("+")
}

/// The path of `url` as typed: after the authority, before `?` or `#`
/// (`/` when there is none).
fn raw_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let from = rest.find('/').unwrap_or(rest.len());
    let end = rest[from..]
        .find(['?', '#'])
        .map_or(rest.len(), |i| from + i);
    let p = &rest[from..end];
    if p.is_empty() { "/".into() } else { p.into() }
}

/// Non-ASCII bytes after the authority as curl 7.88 sends them:
/// percent-encoded in lower-case hex (`/été` is `/%c3%a9t%c3%a9`); the
/// host is left to IDNA.
fn encode_non_ascii(url: &str) -> String {
    let after = url.find("://").map_or(0, |i| i + 3);
    let path_at = url[after..].find('/').map_or(url.len(), |i| after + i);
    let mut out = url[..path_at].to_string();
    for c in url[path_at..].chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02x}"));
            }
        }
    }
    out
}

/// A URL as curl takes it: `http://` when there is no scheme.
pub fn parse_url(url: &str) -> Result<Url, CurlError> {
    let with_scheme = if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    };
    let bad = |why: String| CurlError::Url {
        url: url.to_string(),
        why,
    };
    // curl 7.88 refuses a space or a backslash in a URL given to it
    // (its exit 3); the url crate would encode the one, turn the other.
    if let Some(c) = url
        .chars()
        .find(|c| *c == ' ' || *c == '\\' || c.is_control())
    {
        return Err(bad(format!(": {c:?} is not allowed in a URL (encode it)")));
    }
    let parsed = Url::parse(&encode_non_ascii(&with_scheme)).map_err(|e| bad(format!(": {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(CurlError::Scheme {
            url: url.to_string(),
            scheme: parsed.scheme().to_string(),
        });
    }
    if parsed.host_str().is_none() {
        return Err(bad(String::new()));
    }
    Ok(parsed)
}

/// The size of a file to upload (it must be a readable regular file).
fn upload_len(path: &Path) -> Result<u64, CurlError> {
    let bad = |source| CurlError::Upload {
        path: path.display().to_string(),
        source,
    };
    std::fs::File::open(path).map_err(bad)?;
    let m = std::fs::metadata(path).map_err(bad)?;
    if !m.is_file() {
        return Err(bad(std::io::Error::other("not a regular file")));
    }
    Ok(m.len())
}

fn read_arg(
    path: &Path,
    stdin: &mut dyn FnMut() -> std::io::Result<Vec<u8>>,
) -> Result<Vec<u8>, CurlError> {
    let r = if path.as_os_str() == "-" {
        stdin()
    } else {
        std::fs::read(path)
    };
    r.map_err(|source| CurlError::Data {
        path: path.display().to_string(),
        source,
    })
}

/// A boundary in curl's form: 24 dashes and 16 random hex digits.
fn boundary() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("------------------------{:016x}", h.finish())
}

/// A proxy URL as curl takes it: `[http://][user:pw@]host[:port]`, port
/// 1080 by default.
pub fn parse_proxy(s: &str) -> Result<Proxy, CurlError> {
    let with = if s.contains("://") {
        s.to_string()
    } else {
        format!("http://{s}")
    };
    let u = Url::parse(&with).map_err(|_| CurlError::Proxy(s.to_string()))?;
    if u.scheme() != "http" {
        return Err(CurlError::Proxy(s.to_string()));
    }
    let host = match u.host() {
        Some(url::Host::Ipv6(a)) => a.to_string(),
        Some(h) => h.to_string(),
        None => return Err(CurlError::Proxy(s.to_string())),
    };
    let auth = (!u.username().is_empty()).then(|| {
        let dec = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .to_string()
        };
        let pair = format!("{}:{}", dec(u.username()), dec(u.password().unwrap_or("")));
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    });
    Ok(Proxy {
        host,
        port: u.port().unwrap_or(1080),
        auth,
    })
}

/// Whether `host` is exempt by a `no_proxy` list: `*`, an exact name or
/// address, or a domain (`example.com` and `.example.com` both cover
/// `www.example.com`).
pub fn no_proxy_matches(list: &str, host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    list.split(',').map(str::trim).any(|e| {
        let e = e.trim_start_matches('.');
        e == "*"
            || (!e.is_empty()
                && (host.eq_ignore_ascii_case(e)
                    || host
                        .to_ascii_lowercase()
                        .ends_with(&format!(".{}", e.to_ascii_lowercase()))))
    })
}

/// The proxy curl would use for `url`: `-x` when given (an empty one means
/// none), else `http_proxy` (lower case only: curl ignores `HTTP_PROXY`,
/// which a CGI request could set), `https_proxy`/`HTTPS_PROXY`, then
/// `all_proxy`/`ALL_PROXY`; none for a host `--noproxy`/`no_proxy`/
/// `NO_PROXY` exempts.
pub fn proxy_for(
    url: &Url,
    explicit: Option<&str>,
    noproxy: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Proxy>, CurlError> {
    let host = url.host_str().unwrap_or("");
    let exempt = noproxy
        .map(str::to_string)
        .or_else(|| env("no_proxy"))
        .or_else(|| env("NO_PROXY"));
    if exempt.is_some_and(|l| no_proxy_matches(&l, host)) {
        return Ok(None);
    }
    let chosen = match explicit {
        Some(p) => Some(p.to_string()),
        None => {
            let by_scheme = if url.scheme() == "https" {
                env("https_proxy").or_else(|| env("HTTPS_PROXY"))
            } else {
                env("http_proxy")
            };
            by_scheme
                .or_else(|| env("all_proxy"))
                .or_else(|| env("ALL_PROXY"))
        }
    };
    match chosen {
        Some(p) if !p.is_empty() => parse_proxy(&p).map(Some),
        _ => Ok(None),
    }
}

/// The file `-O` writes `url` to: its last path segment, or `index.html`.
pub fn remote_name(url: &Url) -> PathBuf {
    let name = url.path_segments().and_then(|mut s| s.next_back());
    PathBuf::from(name.filter(|s| !s.is_empty()).unwrap_or("index.html"))
}

#[cfg(test)]
mod tests;
