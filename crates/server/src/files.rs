//! `tcpwise serve --root DIR`: files and directory listings, as
//! `python3 -m http.server` serves them, plus what a test origin needs and
//! it lacks: `ETag`/`Last-Modified` with 304s, single and multiple byte
//! ranges (206, 416), and no way out of the root.
//!
//! What to answer is decided here ([`plan`]: method, target and the
//! conditional headers in, a [`FileAnswer`] out); the server glue writes it.
//! Why refuse rather than clean up a path: python's server silently drops
//! `..` segments, which hides a client's mistake and makes a traversal
//! attempt look like a normal request. Here a `..` segment (however
//! encoded) is a 403, a path that resolves outside the root (a symlink
//! out) a 403, a NUL or invalid UTF-8 after decoding a 400, and each
//! segment is joined one at a time, so an absolute path cannot replace the
//! root.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The directory served, canonical.
#[derive(Debug, Clone)]
pub struct Root {
    dir: PathBuf,
    /// Files HTTP/2 and HTTP/3 streams may hold open at once, server-wide:
    /// a connection of those holds one descriptor a stream it sends a
    /// file on, not one a connection ([`Root::with_file_budget`]).
    files: Arc<tokio::sync::Semaphore>,
}

/// [`Root::new`]'s file budget, before `serve` fits it to the descriptor limit.
pub const DEFAULT_FILE_BUDGET: usize = 1024;

impl Root {
    /// Checks that `dir` is a readable directory and remembers its
    /// canonical path.
    pub fn new(dir: &Path) -> io::Result<Root> {
        let dir = fs::canonicalize(dir)?;
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", dir.display()),
            ));
        }
        fs::read_dir(&dir)?;
        Ok(Root {
            dir,
            files: Arc::new(tokio::sync::Semaphore::new(DEFAULT_FILE_BUDGET)),
        })
    }

    /// At most `n` files open at once for HTTP/2 and HTTP/3 streams.
    pub fn with_file_budget(self, n: usize) -> Root {
        Root {
            files: Arc::new(tokio::sync::Semaphore::new(
                n.clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
            )),
            ..self
        }
    }

    /// A descriptor of the budget for one stream's file, if one is free.
    pub(crate) fn file_permit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.files.clone().try_acquire_owned().ok()
    }

    /// The canonical directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The request headers a file answer depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conditional {
    /// `Range`.
    pub range: Option<String>,
    /// `If-Range`.
    pub if_range: Option<String>,
    /// `If-None-Match`.
    pub if_none_match: Option<String>,
    /// `If-Modified-Since`.
    pub if_modified_since: Option<String>,
    /// `If-Match`.
    pub if_match: Option<String>,
    /// `If-Unmodified-Since`.
    pub if_unmodified_since: Option<String>,
}

/// What to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileAnswer {
    /// A generated body: a listing, an error, a redirect.
    Text {
        /// Status.
        status: u16,
        /// `Content-Type`.
        content_type: &'static str,
        /// Other headers.
        headers: Vec<(&'static str, String)>,
        /// The body.
        body: String,
    },
    /// `304 Not Modified`.
    NotModified {
        /// `ETag`, `Last-Modified`.
        headers: Vec<(&'static str, String)>,
    },
    /// (Parts of) a file.
    File {
        /// 200 or 206.
        status: u16,
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// Inclusive byte ranges to send; one range of the whole file for 200.
        ranges: Vec<(u64, u64)>,
        /// The file's type.
        content_type: String,
        /// `ETag`, `Last-Modified`, `Accept-Ranges`, `Content-Range`.
        headers: Vec<(&'static str, String)>,
        /// Several ranges: the multipart boundary.
        boundary: Option<String>,
    },
}

impl FileAnswer {
    fn text(status: u16, body: impl Into<String>) -> FileAnswer {
        FileAnswer::Text {
            status,
            content_type: "text/plain; charset=utf-8",
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// `Content-Type` (none for a 304) and the other headers, as both
    /// HTTP/1.1 and HTTP/2 send them.
    pub fn type_and_headers(&self) -> (Option<String>, &[(&'static str, String)]) {
        match self {
            FileAnswer::Text {
                content_type,
                headers,
                ..
            } => (Some(content_type.to_string()), headers),
            FileAnswer::NotModified { headers } => (None, headers),
            FileAnswer::File {
                content_type,
                headers,
                boundary,
                ..
            } => (
                Some(match boundary {
                    Some(b) => format!("multipart/byteranges; boundary={b}"),
                    None => content_type.clone(),
                }),
                headers,
            ),
        }
    }

    /// Whether `--gzip` compresses this answer: a 200 whose type is not
    /// compressed already (images but SVG, audio, video, archives, fonts
    /// in WOFF, PDF): gzip on a PNG only costs CPU and adds bytes, and
    /// nginx's `gzip_types` leaves such types out.
    pub fn compressible(&self) -> bool {
        let ty = match self {
            FileAnswer::Text { status: 200, .. } => return true,
            FileAnswer::File {
                status: 200,
                content_type,
                ..
            } => content_type.to_ascii_lowercase(),
            _ => return false,
        };
        let (top, sub) = ty.split_once('/').unwrap_or((&ty, ""));
        let sub = sub.split(';').next().unwrap_or("").trim();
        match top {
            "image" => sub == "svg+xml" || sub == "bmp" || sub == "x-icon",
            "audio" | "video" => false,
            "font" => !matches!(sub, "woff" | "woff2"),
            "application" => !matches!(
                sub,
                "zip"
                    | "gzip"
                    | "x-gzip"
                    | "x-bzip2"
                    | "x-xz"
                    | "zstd"
                    | "x-7z-compressed"
                    | "vnd.rar"
                    | "x-rar-compressed"
                    | "pdf"
                    | "font-woff"
                    | "java-archive"
                    | "epub+zip"
                    | "x-compress"
                    | "x-lzip"
            ),
            _ => true,
        }
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        match self {
            FileAnswer::Text { status, .. } | FileAnswer::File { status, .. } => *status,
            FileAnswer::NotModified { .. } => 304,
        }
    }

    /// The body's length, as `Content-Length` says it (`None` for 304).
    pub fn body_len(&self) -> Option<u64> {
        match self {
            FileAnswer::Text { body, .. } => Some(body.len() as u64),
            FileAnswer::NotModified { .. } => None,
            FileAnswer::File {
                ranges,
                boundary: None,
                ..
            } => Some(ranges.iter().map(|(a, b)| b - a + 1).sum()),
            FileAnswer::File {
                ranges,
                boundary: Some(_),
                ..
            } => Some(
                (0..ranges.len())
                    .map(|i| self.part_head(i).len() as u64 + ranges[i].1 - ranges[i].0 + 1 + 2)
                    .sum::<u64>()
                    + self.multipart_end().len() as u64,
            ),
        }
    }

    /// Multipart: the head of part `i` (before its bytes).
    pub fn part_head(&self, i: usize) -> String {
        match self {
            FileAnswer::File {
                ranges,
                size,
                content_type,
                boundary: Some(b),
                ..
            } => format!(
                "--{b}\r\ncontent-type: {content_type}\r\ncontent-range: bytes {}-{}/{size}\r\n\r\n",
                ranges[i].0, ranges[i].1
            ),
            _ => String::new(),
        }
    }

    /// Multipart: what closes the body.
    pub fn multipart_end(&self) -> String {
        match self {
            FileAnswer::File {
                boundary: Some(b), ..
            } => format!("--{b}--\r\n"),
            _ => String::new(),
        }
    }
}

/// Why a path was refused.
fn refuse(status: u16, why: &str) -> FileAnswer {
    FileAnswer::text(status, format!("{why}\n"))
}

/// Percent-decodes a path; `None` for invalid UTF-8 or a NUL.
fn decode(path: &str) -> Option<String> {
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
    let s = String::from_utf8(bytes).ok()?;
    (!s.contains('\0')).then_some(s)
}

/// The answer to `method target` under `root`.
pub fn plan(root: &Root, method: &str, target: &str, c: &Conditional) -> FileAnswer {
    if method != "GET" && method != "HEAD" {
        let mut p = refuse(405, "serve --root answers GET and HEAD");
        if let FileAnswer::Text { headers, .. } = &mut p {
            headers.push(("allow", "GET, HEAD".into()));
        }
        return p;
    }
    // Absolute-form (a proxy's request line) keeps only its path.
    let target = match target.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    let (raw_path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let raw_path = raw_path.split('#').next().unwrap_or("");
    if !raw_path.starts_with('/') {
        return refuse(400, "the request target must start with /");
    }
    let Some(path) = decode(raw_path) else {
        return refuse(400, "the path is not valid UTF-8 or holds a NUL");
    };
    let mut file = root.dir.clone();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return refuse(403, "a path with .. would leave the served directory"),
            s => file.push(s),
        }
    }
    let real = match fs::canonicalize(&file) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return refuse(403, "permission denied");
        }
        Err(_) => return refuse(404, "not found"),
    };
    if !real.starts_with(&root.dir) {
        return refuse(403, "the path resolves outside the served directory");
    }
    let Ok(meta) = fs::metadata(&real) else {
        return refuse(404, "not found");
    };
    if meta.is_dir() {
        if !path.ends_with('/') {
            // One leading slash: `//evil.com` would be a network-path
            // reference, a redirect to another host (python's http.server
            // had this hole, CVE-2021-28861, and fixed it the same way).
            let mut loc = format!("/{}/", raw_path.trim_start_matches('/'));
            if let Some(q) = query {
                loc = format!("{loc}?{q}");
            }
            return FileAnswer::Text {
                status: 301,
                content_type: "text/plain; charset=utf-8",
                headers: vec![("location", loc)],
                body: "moved: the directory's address ends with /\n".into(),
            };
        }
        let index = real.join("index.html");
        if index.is_file() && fs::canonicalize(&index).is_ok_and(|i| i.starts_with(&root.dir)) {
            return file_plan(&index, c);
        }
        return listing(&real, &path);
    }
    if !meta.is_file() {
        return refuse(403, "not a regular file");
    }
    file_plan(&real, c)
}

fn http_date(t: SystemTime) -> String {
    httpdate::fmt_http_date(t)
}

/// Seconds since the epoch of an HTTP date, if it is one.
fn date_secs(text: &str) -> Option<u64> {
    let d = httpdate::parse_http_date(text).ok()?;
    Some(d.duration_since(UNIX_EPOCH).ok()?.as_secs())
}

/// RFC 9110, 13.2.2: If-Match first, else If-Unmodified-Since; either
/// failing is 412 (nginx's answer too: a PUT or a resumed download must
/// not mix two versions of the file).
fn precondition_failed(c: &Conditional, etag: &str, secs: u64) -> bool {
    match (&c.if_match, &c.if_unmodified_since) {
        (Some(im), _) => !im.split(',').map(str::trim).any(|t| t == "*" || t == etag),
        (None, Some(ius)) => date_secs(ius).is_some_and(|d| secs > d),
        (None, None) => false,
    }
}

/// If-None-Match wins over If-Modified-Since (RFC 9110, 13.2.2).
fn not_modified(c: &Conditional, etag: &str, secs: u64) -> bool {
    match (&c.if_none_match, &c.if_modified_since) {
        (Some(inm), _) => inm
            .split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || t == etag),
        (None, Some(ims)) => date_secs(ims).is_some_and(|d| secs <= d),
        (None, None) => false,
    }
}

fn file_plan(path: &Path, c: &Conditional) -> FileAnswer {
    let Ok(meta) = fs::metadata(path) else {
        return refuse(404, "not found");
    };
    if fs::File::open(path).is_err() {
        return refuse(403, "permission denied");
    }
    let size = meta.len();
    let mtime = meta.modified().unwrap_or(UNIX_EPOCH);
    let secs = mtime.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // nginx's form: seconds of the modification time and the size, in hex.
    let etag = format!("\"{secs:x}-{size:x}\"");
    let last_modified = http_date(UNIX_EPOCH + std::time::Duration::from_secs(secs));
    let mut headers = vec![
        ("etag", etag.clone()),
        ("last-modified", last_modified.clone()),
    ];
    if precondition_failed(c, &etag, secs) {
        return FileAnswer::Text {
            status: 412,
            content_type: "text/plain; charset=utf-8",
            headers,
            body: "precondition failed: the file is not the version the request names\n".into(),
        };
    }
    if not_modified(c, &etag, secs) {
        return FileAnswer::NotModified { headers };
    }
    headers.push(("accept-ranges", "bytes".into()));
    let content_type = mime_guess::from_path(path)
        .first_raw()
        .unwrap_or("application/octet-stream")
        .to_string();
    let whole = FileAnswer::File {
        status: 200,
        path: path.to_path_buf(),
        size,
        ranges: if size == 0 {
            vec![]
        } else {
            vec![(0, size - 1)]
        },
        content_type: content_type.clone(),
        headers: headers.clone(),
        boundary: None,
    };
    let Some(range) = &c.range else {
        return whole;
    };
    // If-Range: the ranges only if the representation is still this one.
    if let Some(ir) = &c.if_range
        && ir.trim() != etag
        && ir.trim() != last_modified
    {
        return whole;
    }
    match parse_ranges(range, size) {
        Ranges::Ignore => whole,
        Ranges::Unsatisfiable => {
            headers.push(("content-range", format!("bytes */{size}")));
            FileAnswer::Text {
                status: 416,
                content_type: "text/plain; charset=utf-8",
                headers,
                body: format!("no requested range is inside the file's {size} bytes\n"),
            }
        }
        Ranges::Some(r) => {
            // One range says where it is in a header; several, in the
            // multipart body.
            let boundary = if let [(a, b)] = r[..] {
                headers.push(("content-range", format!("bytes {a}-{b}/{size}")));
                None
            } else {
                Some(format!("tcpwise-{secs:x}{size:x}"))
            };
            FileAnswer::File {
                status: 206,
                path: path.to_path_buf(),
                size,
                ranges: r,
                content_type,
                headers,
                boundary,
            }
        }
    }
}

/// A `Range` header against a file of `size` bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Ranges {
    /// Not a byte range we serve (malformed, another unit, too many):
    /// answer with the whole file, as RFC 9110 allows.
    Ignore,
    /// No range overlaps the file: 416.
    Unsatisfiable,
    /// Inclusive ranges, in the order asked.
    Some(Vec<(u64, u64)>),
}

/// Most ranges one request may ask for (more: the whole file).
const MAX_RANGES: usize = 64;

/// Parses `bytes=0-99,200-,-50` for a file of `size` bytes.
pub fn parse_ranges(header: &str, size: u64) -> Ranges {
    let Some(spec) = header.trim().strip_prefix("bytes=") else {
        return Ranges::Ignore;
    };
    let mut out = Vec::new();
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    if parts.len() > MAX_RANGES {
        return Ranges::Ignore;
    }
    for p in parts {
        let Some((a, b)) = p.split_once('-') else {
            return Ranges::Ignore;
        };
        let num = |s: &str| s.trim().parse::<u64>().ok();
        let r = match (a.trim().is_empty(), b.trim().is_empty()) {
            (true, true) => return Ranges::Ignore,
            // Suffix: the last N bytes.
            (true, false) => match num(b) {
                Some(0) => None,
                Some(n) if size > 0 => Some((size.saturating_sub(n), size - 1)),
                Some(_) => None,
                None => return Ranges::Ignore,
            },
            (false, true) => match num(a) {
                Some(s) if s < size => Some((s, size - 1)),
                Some(_) => None,
                None => return Ranges::Ignore,
            },
            (false, false) => match (num(a), num(b)) {
                (Some(s), Some(e)) if s > e => return Ranges::Ignore,
                (Some(s), Some(e)) if s < size => Some((s, e.min(size - 1))),
                (Some(_), Some(_)) => None,
                _ => return Ranges::Ignore,
            },
        };
        if let Some(r) = r {
            out.push(r);
        }
    }
    if out.is_empty() {
        Ranges::Unsatisfiable
    } else {
        Ranges::Some(out)
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Characters a listing's links leave as they are (python's `quote`).
const LINK: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// A directory listing in `python3 -m http.server`'s form.
fn listing(dir: &Path, path: &str) -> FileAnswer {
    let Ok(rd) = fs::read_dir(dir) else {
        return refuse(403, "the directory cannot be listed");
    };
    let mut names: Vec<(String, String)> = rd
        .filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let ft = e.file_type().ok();
            let (shown, link) = match ft {
                Some(t) if t.is_dir() => (format!("{name}/"), format!("{name}/")),
                Some(t) if t.is_symlink() => (format!("{name}@"), name.clone()),
                _ => (name.clone(), name),
            };
            (shown, link)
        })
        .collect();
    names.sort_by_key(|(shown, _)| shown.to_lowercase());
    let title = html_escape(&format!("Directory listing for {path}"));
    let mut body = format!(
        "<!DOCTYPE HTML>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n<hr>\n<ul>\n"
    );
    for (shown, link) in names {
        let href = percent_encoding::utf8_percent_encode(&link, LINK).to_string();
        body.push_str(&format!(
            "<li><a href=\"{}\">{}</a></li>\n",
            html_escape(&href),
            html_escape(&shown)
        ));
    }
    body.push_str("</ul>\n<hr>\n</body>\n</html>\n");
    FileAnswer::Text {
        status: 200,
        content_type: "text/html; charset=utf-8",
        headers: Vec::new(),
        body,
    }
}

/// Writes a response head for a plan; `gzip`: the body follows
/// gzip-compressed in chunks (and the ETag becomes weak, as nginx makes it).
pub fn put_head(
    out: &mut Vec<u8>,
    plan: &FileAnswer,
    minor: u8,
    keep_alive: bool,
    gzip: bool,
    date: &[u8],
) {
    use std::io::Write as _;
    let status = plan.status();
    let _ = write!(
        out,
        "HTTP/1.1 {status} {}\r\n",
        tcpwise_http::h1::reason(status)
    );
    if gzip {
        out.extend_from_slice(
            b"transfer-encoding: chunked\r\ncontent-encoding: gzip\r\nvary: accept-encoding\r\n",
        );
    } else if let Some(n) = plan.body_len() {
        let _ = write!(out, "content-length: {n}\r\n");
    }
    let (ct, headers) = plan.type_and_headers();
    if let Some(ct) = ct {
        let _ = write!(out, "content-type: {ct}\r\n");
    }
    for (k, v) in headers {
        if gzip && *k == "etag" {
            let _ = write!(out, "etag: W/{v}\r\n");
        } else if gzip && *k == "accept-ranges" {
            continue;
        } else {
            let _ = write!(out, "{k}: {v}\r\n");
        }
    }
    if !keep_alive {
        out.extend_from_slice(b"connection: close\r\n");
    } else if minor == 0 {
        out.extend_from_slice(b"connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"date: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n\r\n");
}

#[cfg(test)]
mod tests;
