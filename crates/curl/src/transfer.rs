//! One URL's transfer as curl performs it: redirects under curl's rules,
//! the body to its destination, and what curl does with heads and errors.
//!
//! - `-o FILE` is created when the final response's head arrives, not
//!   before: with `-f` an error status reads no body and leaves no file
//!   (curl's), with `--fail-with-body` the body is written and the exit
//!   is still 22; `-C` appends, and a 200 to a resume request is curl's
//!   exit 33 (the server ignored the range), nothing written.
//! - `-i` heads (every hop's, as curl prints them under `-L`) go where
//!   the body goes, `-o` file included; `-D FILE` gets them too.
//! - `--compressed` decodes the final body by its `Content-Encoding`
//!   (deflate, gzip, br, zstd); a body that does not decode is curl's 61.
//! - Redirects: 301, 302, 303, 307, 308 with a `Location`, at most
//!   `--max-redirs` (curl's 50); a 303, and a 301/302 after a POST, turn
//!   into a GET without a body; `Authorization` and `Cookie` (from `-H`
//!   or `-u`) go only to the first request's scheme, host and port.
//! - `-v` lines go to a caller's log as each head arrives.
//! - curl's progress meter, for a terminal, once a transfer has run for a
//!   second ([`meter_line`]).

use super::meter::Meter;
use crate::decode::Decoder;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tcpwise_client::{Client, HttpError, Request, Response};
use tcpwise_client::{Head, HeadAction};

/// `-f` and `--fail-with-body`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fail {
    /// Any status is a success.
    #[default]
    Never,
    /// 400 and above: exit 22, no body read or written.
    Fail,
    /// 400 and above: exit 22 after writing the body.
    WithBody,
}

/// Where the final body goes.
#[derive(Clone)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A buffer, for a parallel transfer printed in URL order when done.
    Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>),
    /// A file, created (or appended to, with `-C`) at the final head.
    File(PathBuf),
    /// Nowhere (`--json`).
    Null,
}

/// Where `-v` lines go.
pub type Log = Box<dyn FnMut(&str) + Send + Sync>;

/// A transfer's settings.
#[derive(Default)]
pub struct Options {
    /// Follow redirects (`-L`).
    pub follow: bool,
    /// `--max-redirs` (curl's default 50).
    pub max_redirs: usize,
    /// `-f`, `--fail-with-body`.
    pub fail: Fail,
    /// `-i`/`-I`: heads go with the body.
    pub include: bool,
    /// `-D FILE`: heads go here too (`-` for standard output).
    pub dump_header: Option<PathBuf>,
    /// `--compressed`: decode the body.
    pub compressed: bool,
    /// The offset `-C` asked from.
    pub resume_from: Option<u64>,
    /// `-v`: each line with curl's marker (`*`, `>`, `<`).
    pub verbose: Option<Log>,
    /// curl's progress meter on standard error.
    pub progress: bool,
    /// Where standard output and error go.
    pub sink: super::sink::Sink,
    /// `--create-dirs`: make an `-o` file's missing directories.
    pub create_dirs: bool,
    /// `-R`: the file takes the response's `Last-Modified` time.
    pub remote_time: bool,
    /// `--etag-save FILE`: the final response's `ETag` goes there.
    pub etag_save: Option<PathBuf>,
    /// `--limit-rate`: at most this many body bytes a second.
    pub limit_rate: Option<u64>,
    /// `-#`: a bar of `#`s instead of the meter.
    pub progress_bar: bool,
    /// `-J`: name the `-O` file by the response's `Content-Disposition`.
    pub remote_header_name: bool,
    /// `.netrc` credentials, looked up again for each host a redirect
    /// goes to (curl's); `None` when `-u` or the URL gave credentials.
    pub netrc: Option<super::netrc::Netrc>,
    /// `--trace`/`--trace-ascii`.
    pub trace: Option<super::trace::Trace>,
    /// The cookie engine (`-b FILE`, `-c`), shared by the run's URLs.
    pub jar: Option<std::sync::Arc<std::sync::Mutex<super::cookies::Jar>>>,
    /// `-b 'NAME=VALUE'`: sent as it is after the engine's cookies.
    pub cookie: Option<String>,
    /// How redirects change the request (`-X`, `--post30x`, `-e ';auto'`).
    pub redirect: Redirects,
    /// `--max-filesize`, in bytes.
    pub max_filesize: Option<u64>,
    /// `-z`: the condition a 2xx response's `Last-Modified` must meet too.
    pub time_cond: Option<TimeCond>,
}

/// `-z`'s condition as curl also checks it on the response
/// (`Curl_meets_timecondition`): a server that ignores the request
/// header and answers 200 with a `Last-Modified` that fails the
/// condition gets its body left unread and unwritten, exit 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeCond {
    /// `If-Modified-Since` (else `If-Unmodified-Since`).
    pub modified_since: bool,
    /// The time asked.
    pub at: std::time::SystemTime,
}

impl TimeCond {
    /// The condition a `-z` header states.
    pub fn of(h: &tcpwise_client::Header) -> Option<TimeCond> {
        Some(TimeCond {
            modified_since: h.0.eq_ignore_ascii_case("If-Modified-Since"),
            at: httpdate::parse_http_date(&h.1).ok()?,
        })
    }

    /// Why a document of time `doc` fails the condition, as curl's
    /// verbose output says it, or `None` when it meets it.
    pub fn fails(&self, doc: std::time::SystemTime) -> Option<&'static str> {
        match self.modified_since {
            true if doc <= self.at => Some("The requested document is not new enough"),
            false if doc >= self.at => Some("The requested document is not old enough"),
            _ => None,
        }
    }
}

/// What kind of request curl thinks it sends (its `httpreq`), which
/// decides what a redirect keeps; `-X` only renames the method.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kind {
    /// No body.
    #[default]
    Get,
    /// `-d`, `-F`, `--json`: a POST's body.
    Post,
    /// `-T`: an upload.
    Put,
    /// `-I`.
    Head,
}

/// curl's redirect rules for one transfer.
#[derive(Debug, Clone, Default)]
pub struct Redirects {
    /// The request's kind at the start.
    pub kind: Kind,
    /// `-X`: the method every hop is sent with.
    pub custom: Option<hyper::Method>,
    /// `--post301`, `--post302`, `--post303`.
    pub keep_post: [bool; 3],
    /// `-e ';auto'`: each hop's Referer is the URL it came from.
    pub auto_referer: bool,
}

impl Redirects {
    /// Whether a `status` redirect turns a request of `kind` into a GET
    /// (curl's `Curl_follow`): a POST after 301 and 302, anything but a
    /// GET or HEAD after 303, unless `--post30x` keeps the POST.
    fn switches(&self, status: u16, kind: Kind) -> bool {
        match status {
            301 => kind == Kind::Post && !self.keep_post[0],
            302 => kind == Kind::Post && !self.keep_post[1],
            303 => {
                !(matches!(kind, Kind::Get | Kind::Head) || kind == Kind::Post && self.keep_post[2])
            }
            _ => false,
        }
    }
}

/// Why a transfer failed, beside the client's errors.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// The client's error.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// A URL that cannot be sent: its message and curl's code (3, or 1
    /// for another scheme).
    #[error("{message}")]
    BadUrl {
        /// What is wrong with it.
        message: String,
        /// curl's exit code.
        code: i32,
    },
    /// `-f`/`--fail-with-body` and a status of 400 or more (curl's 22).
    #[error("the requested URL returned error: {0}")]
    Status(u16),
    /// `-C` and a server that ignored the range (curl's 33).
    #[error("the server does not support byte ranges: cannot resume")]
    NoResume,
    /// `--compressed` and a body that does not decode (curl's 61).
    #[error("cannot decode the {encoding} body")]
    Decode {
        /// The `Content-Encoding`.
        encoding: String,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
}

/// The `-o` file's buffer: writes of a body's pieces smaller than this
/// are gathered; larger ones go straight through.
const OUTPUT_BUFFER: usize = 64 * 1024;

/// The destination, opened when the final head arrives.
struct Dest {
    sink: super::sink::Sink,
    output: Output,
    /// The `-o` file, buffered as curl's stdio stream is: HTTP/3 hands
    /// the body over a QUIC packet's payload at a time, and a write per
    /// 1.4 KB cost the client a tenth of its CPU at loopback rates.
    file: Option<std::io::BufWriter<std::fs::File>>,
    append: bool,
    create_dirs: bool,
    /// `-J`: the name the server gave; the file must not exist yet.
    renamed: Option<PathBuf>,
}

impl Dest {
    fn write(&mut self, d: &[u8]) -> std::io::Result<()> {
        if d.is_empty() {
            return Ok(());
        }
        self.put(d)
    }
    fn put(&mut self, d: &[u8]) -> std::io::Result<()> {
        match &mut self.output {
            Output::Stdout => self.sink.write_out(d),
            Output::Buffer(b) => {
                b.lock().expect("lock").extend_from_slice(d);
                Ok(())
            }
            Output::Null => Ok(()),
            Output::File(path) => {
                if self.file.is_none() {
                    if self.create_dirs
                        && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
                    {
                        std::fs::create_dir_all(dir)?;
                    }
                    self.file = Some(std::io::BufWriter::with_capacity(
                        OUTPUT_BUFFER,
                        std::fs::OpenOptions::new()
                            .write(true)
                            .create(true)
                            .append(self.append)
                            .truncate(!self.append)
                            .open(&*path)?,
                    ));
                }
                self.file.as_mut().expect("opened").write_all(d)
            }
        }
    }
    fn open(&mut self) -> std::io::Result<()> {
        self.put(&[])
    }
    /// `-J`: the file takes `name` in the directory it would have been
    /// in; an existing file is not overwritten (curl refuses too).
    fn rename(&mut self, name: &str) -> std::io::Result<()> {
        let Output::File(path) = &mut self.output else {
            return Ok(());
        };
        let to = path.with_file_name(name);
        if to.exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("refusing to overwrite {}", to.display()),
            ));
        }
        *path = to.clone();
        self.renamed = Some(to);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match (&mut self.output, &mut self.file) {
            (Output::Stdout, _) => self.sink.flush_out(),
            (Output::File(_), Some(f)) => f.flush(),
            _ => Ok(()),
        }
    }
}

/// `-R` and `--etag-save` once the final body is written: the file takes
/// the response's `Last-Modified`; the `ETag` (or nothing) goes to its file.
fn finish_files(opts: &Options, dest: &mut Dest, last: Option<&Response>) -> std::io::Result<()> {
    if let Some(p) = &opts.etag_save {
        let tag = last.and_then(|r| r.header("etag")).unwrap_or("");
        let line = if tag.is_empty() {
            String::new()
        } else {
            format!("{tag}\n")
        };
        std::fs::write(p, line)?;
    }
    if opts.remote_time
        && let (Some(f), Some(lm)) = (&dest.file, last.and_then(|r| r.header("last-modified")))
        && let Ok(t) = httpdate::parse_http_date(lm)
    {
        f.get_ref().set_modified(t)?;
    }
    Ok(())
}

/// The file name in a `Content-Disposition` (`filename="x"` or
/// `filename=x`), without any directory (curl strips them: a server must
/// not write outside the directory), `None` when there is none.
pub fn disposition_name(v: &str) -> Option<String> {
    let lower = v.to_ascii_lowercase();
    let at = lower.find("filename=")?;
    let rest = &v[at + "filename=".len()..];
    let name = match rest.strip_prefix('"') {
        Some(q) => q.split('"').next().unwrap_or(""),
        None => rest.split(';').next().unwrap_or("").trim(),
    };
    let base = name.rsplit(['/', '\\']).next().unwrap_or("");
    (!base.is_empty() && base != "." && base != "..").then(|| base.to_string())
}

/// What [`transfer`] did: every response (redirects first) and, if it
/// failed, why.
pub struct Transferred {
    /// The responses.
    pub chain: Vec<Response>,
    /// The failure.
    pub error: Option<TransferError>,
    /// The file the body went to, when `-J` renamed it.
    pub renamed: Option<PathBuf>,
}

/// Headers that carry credentials: sent to the first request's target
/// only, never across a redirect to another scheme, host or port.
pub fn is_credential(name: &str) -> bool {
    name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("cookie")
}

/// Whether `b` is the same scheme, host and port as `a` (curl's
/// `Curl_auth_allowed_to_host`: a default port is the scheme's).
pub fn same_target(a: &url::Url, b: &url::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && a.port_or_known_default() == b.port_or_known_default()
}

fn redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// curl's `-v` lines for a head: the connection, the request, the response.
pub fn verbose_lines(h: &Head) -> String {
    let mut out = String::new();
    let peer = h.conn.peer.map_or("-".to_string(), |p| p.to_string());
    if h.conn.reused {
        out.push_str(&format!(
            "* Re-using existing connection #{} to {peer} ({})\n",
            h.conn.id,
            h.conn.reason.as_deref().unwrap_or("")
        ));
    } else {
        out.push_str(&format!(
            "* Connected to {} ({peer}) (#{}, new connection)\n",
            h.url.host_str().unwrap_or(""),
            h.conn.id
        ));
        if let Some(t) = &h.conn.tls {
            let how = if t.resumed {
                "session resumed from a ticket"
            } else {
                "full handshake"
            };
            let early = match t.early_data {
                0 => String::new(),
                n if n > 0 => format!(", {n} bytes of early data accepted (0-RTT)"),
                n => format!(
                    ", {} bytes of early data refused (sent again after the handshake)",
                    -n
                ),
            };
            out.push_str(&format!("* TLS: {how}{early}\n"));
        }
        if let Some(n) = &h.conn.connect_note {
            out.push_str(&format!("* {n}\n"));
        }
        if let Some(q) = &h.conn.quic {
            out.push_str(&format!(
                "* QUIC: TLS 1.3 and ALPN h3 in the QUIC handshake; RTT {:.1} ms, congestion window {} bytes; {}\n",
                q.rtt_ms,
                q.cwnd,
                q.datapath()
            ));
        }
        match h.conn.fastopen {
            Some(true) => out.push_str("* TCP Fast Open: the server took the data in the SYN\n"),
            Some(false) => out.push_str(
                "* TCP Fast Open: a normal handshake (no cookie for this server yet, or it took no data in the SYN)\n",
            ),
            None => {}
        }
    }
    for line in h.request_head.split("\r\n").take_while(|l| !l.is_empty()) {
        out.push_str(&format!("> {line}\n"));
    }
    out.push_str(">\n");
    for line in h.text().split("\r\n").take_while(|l| !l.is_empty()) {
        out.push_str(&format!("< {line}\n"));
    }
    out.push_str("<\n");
    out
}

/// Runs one URL's transfer: `req` and its redirects, the final body to
/// `output`.
pub async fn transfer(
    client: &Client,
    req: Request,
    output: Output,
    opts: &mut Options,
) -> Transferred {
    let dest = Dest {
        sink: opts.sink.clone(),
        output,
        file: None,
        append: opts.resume_from.is_some_and(|n| n > 0),
        create_dirs: opts.create_dirs,
        renamed: None,
    };
    let dump = match open_dump(opts) {
        Ok(d) => d,
        Err(e) => {
            return Transferred {
                chain: Vec::new(),
                error: Some(HttpError::Sink(e).into()),
                renamed: None,
            };
        }
    };
    let mut req = req;
    let first = req.url.clone();
    let mut headers = req.headers.clone();
    let mut chain: Vec<Response> = Vec::new();
    let start = Instant::now();
    let state = std::sync::Mutex::new(Sinks {
        dest,
        dump,
        meter: Meter::new(opts.progress, start, opts.sink.clone()).with_bar(opts.progress_bar),
        hop: Hop::default(),
    });
    // A Cookie header of the user's own (-H) replaces the engine's and -b's (curl's).
    let own_cookie = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("cookie"));
    let mut verbose = opts.verbose.take();
    let mut kind = opts.redirect.kind;
    let error = loop {
        state.lock().expect("lock").hop = Hop::default();
        if !own_cookie {
            set_cookies(&mut req, opts);
        }
        let sent_body = req.body.bytes().filter(|b| !b.is_empty()).cloned();
        let r = client
            .request_streaming(
                &req,
                |h: &Head| on_head(h, opts, &state, &mut verbose, sent_body.as_deref()),
                |d| on_data(d, opts, &state, start),
            )
            .await;
        let mut st = state.lock().expect("lock");
        let st = &mut *st;
        let hop = std::mem::take(&mut st.hop);
        let resp = match hop_response(&hop, opts, r) {
            Ok(r) => r,
            Err(e) => break Some(e),
        };
        let status = resp.status;
        let location = resp.header("location").map(str::to_string);
        chain.push(resp);
        if hop.no_resume {
            break Some(TransferError::NoResume);
        }
        if let Some(max) = hop.too_large {
            let target = chain.last().map_or(String::new(), |r| r.url.clone());
            break Some(TransferError::Http(HttpError::TooLarge { target, max }));
        }
        if hop.is_final {
            break finish_final(opts, &mut st.dest, hop, chain.last());
        }
        let hops = chain.len();
        if let Err(e) = next_hop(
            &mut req,
            &mut kind,
            (&first, &mut headers),
            (status, location, hops),
            opts,
        ) {
            break Some(e);
        }
    };
    opts.verbose = verbose;
    state.lock().expect("lock").meter.done();
    let renamed = state.lock().expect("lock").dest.renamed.clone();
    Transferred {
        chain,
        error,
        renamed,
    }
}

/// `-D FILE`: the file the heads go to (`-` is standard output, no file).
fn open_dump(opts: &Options) -> std::io::Result<Option<std::fs::File>> {
    match &opts.dump_header {
        Some(p) if p.as_os_str() != "-" => std::fs::File::create(p).map(Some),
        _ => Ok(None),
    }
}

/// This hop's Cookie header: the engine's cookies for its URL, then `-b`'s.
fn set_cookies(req: &mut Request, opts: &Options) {
    let engine = opts
        .jar
        .as_ref()
        .and_then(|j| j.lock().ok().and_then(|j| j.header(&req.url)));
    let line: Vec<String> = engine.into_iter().chain(opts.cookie.clone()).collect();
    req.headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("cookie"));
    if !line.is_empty() {
        req.headers.push(("Cookie".into(), line.join("; ")));
    }
}

/// A hop's response as the run counts it: `--trace`'s last info line
/// written, an unmet `-z` reported as 304 (curl's `%{http_code}` then
/// says 304, as if the server had).
fn hop_response(
    hop: &Hop,
    opts: &Options,
    r: Result<Response, HttpError>,
) -> Result<Response, TransferError> {
    if let (Some(t), Some((host, id, closes))) = (&opts.trace, &hop.conn) {
        t.closing(host, *id, *closes);
    }
    let mut resp = r.map_err(TransferError::Http)?;
    if hop.time_cond_unmet {
        resp.status = 304;
    }
    Ok(resp)
}

/// `--trace`'s lines for a head: the connection (`host`, curl's number
/// for it), what was sent, what came back.
fn trace_head(
    t: &super::trace::Trace,
    h: &Head,
    (host, id): (&str, u64),
    sent_body: Option<&[u8]>,
) {
    t.opening(host, h.conn.peer, id, h.conn.reused);
    t.block("=> Send header", h.request_head.as_bytes());
    if let Some(b) = sent_body {
        t.block("=> Send data", b);
    }
    if h.version == "HTTP/1.0" {
        t.info("HTTP 1.0, assume close after body");
    }
    t.recv_head(&h.text());
}

/// Why a 2xx response's `Last-Modified` fails `-z`'s condition, if it does.
fn time_cond_fails(opts: &Options, h: &Head) -> Option<&'static str> {
    let (c, lm) = opts
        .time_cond
        .filter(|_| (200..300).contains(&h.status))
        .zip(h.header("last-modified"))?;
    c.fails(httpdate::parse_http_date(lm.trim()).ok()?)
}

/// A hop's head: `-v` and `--trace` lines, cookies into the engine, `-D`
/// and `-i`; then, on the final hop, what becomes of the body (`-f`, a
/// refused `-C`, `-J`'s name, `--compressed`'s decoder, the meter's total).
fn on_head(
    h: &Head,
    opts: &Options,
    state: &std::sync::Mutex<Sinks>,
    verbose: &mut Option<Log>,
    sent_body: Option<&[u8]>,
) -> std::io::Result<HeadAction> {
    if let Some(v) = verbose.as_mut() {
        v(&verbose_lines(h));
    }
    let host = h.url.host_str().unwrap_or("");
    let id = h.conn.id.saturating_sub(1);
    if let Some(t) = &opts.trace {
        trace_head(t, h, (host, id), sent_body);
    }
    if let Some(j) = &opts.jar
        && let Ok(mut j) = j.lock()
    {
        for (k, v) in h.headers {
            if k.eq_ignore_ascii_case("set-cookie") {
                j.add(v, h.url);
            }
        }
    }
    let mut st = state.lock().expect("lock");
    let st = &mut *st;
    let is_final = !(opts.follow && redirect(h.status) && h.header("location").is_some());
    st.hop.is_final = is_final;
    let closes = h.version == "HTTP/1.0"
        || h.header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
    st.hop.conn = Some((host.to_string(), id, closes));
    let text = h.text();
    if let Some(f) = st.dump.as_mut() {
        f.write_all(text.as_bytes())?;
    } else if opts.dump_header.is_some() {
        opts.sink.write_out(text.as_bytes())?;
    }
    if !is_final {
        if opts.include {
            st.dest.write(text.as_bytes())?;
        }
        return Ok(HeadAction::Read);
    }
    if h.status >= 400 && opts.fail != Fail::Never {
        st.hop.failed_status = Some(h.status);
        if opts.fail == Fail::Fail {
            return Ok(HeadAction::Discard);
        }
    }
    if opts.resume_from.is_some_and(|n| n > 0) && h.status == 200 {
        st.hop.no_resume = true;
        return Ok(HeadAction::Discard);
    }
    if opts.include {
        st.dest.write(text.as_bytes())?;
    }
    // A body announced larger than --max-filesize is not written at all
    // (curl checks the length before it creates the file).
    if let Some(max) = opts.max_filesize
        && h.header("content-length")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .is_some_and(|n| n > max)
    {
        st.hop.too_large = Some(max);
        return Ok(HeadAction::Discard);
    }
    if let Some(why) = time_cond_fails(opts, h) {
        if let Some(v) = verbose.as_mut() {
            v(&format!("* {why}\n"));
        }
        st.hop.time_cond_unmet = true;
        return Ok(HeadAction::Discard);
    }
    if opts.remote_header_name
        && let Some(name) = h.header("content-disposition").and_then(disposition_name)
    {
        st.dest.rename(&name)?;
    }
    st.dest.open()?;
    st.meter.total = h
        .header("content-length")
        .and_then(|v| v.trim().parse().ok());
    if opts.compressed
        && let Some(e) = h.header("content-encoding")
    {
        st.hop.encoding = e.to_string();
        match Decoder::for_encoding(e) {
            Ok(d) => st.hop.decoder = d,
            // The body is read and dropped; the transfer ends with 61.
            Err(why) => st.hop.decode_error = Some(std::io::Error::other(why)),
        }
    }
    Ok(HeadAction::Read)
}

/// A piece of a hop's body: `--trace`, then, on the final hop, the
/// meter, `--limit-rate`'s wait and the decoder, into the destination.
fn on_data(
    d: &[u8],
    opts: &Options,
    state: &std::sync::Mutex<Sinks>,
    start: Instant,
) -> std::io::Result<()> {
    if let Some(t) = &opts.trace {
        t.block("<= Recv data", d);
    }
    let mut st = state.lock().expect("lock");
    let st = &mut *st;
    if !st.hop.is_final {
        return Ok(());
    }
    st.meter.add(d.len() as u64);
    if let Some(rate) = opts.limit_rate.filter(|&r| r > 0) {
        // curl's --limit-rate: no faster than RATE on average since the
        // start (the socket waits too).
        let due = Duration::from_secs_f64(st.meter.got as f64 / rate as f64);
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    if st.hop.decode_error.is_some() {
        return Ok(());
    }
    // What the destination refused, told apart from what did not decode.
    let mut sink_error = None;
    let dest = &mut st.dest;
    let r = st.hop.decoder.feed(d, &mut |b| {
        dest.write(b).inspect_err(|e| sink_error = Some(e.kind()))
    });
    match (r, sink_error) {
        (Err(e), Some(_)) => Err(e),
        (Err(e), None) => {
            st.hop.decode_error = Some(e);
            Ok(())
        }
        (Ok(()), _) => Ok(()),
    }
}

/// The final hop's end: the decoder's rest, the file flushed and given
/// its time and ETag; what failed, or `-f`'s status.
fn finish_final(
    opts: &Options,
    dest: &mut Dest,
    hop: Hop,
    last: Option<&Response>,
) -> Option<TransferError> {
    let mut decode_error = hop.decode_error;
    if decode_error.is_none() {
        let mut sink_error = None;
        let r = hop
            .decoder
            .finish(&mut |b| dest.write(b).inspect_err(|e| sink_error = Some(e.kind())));
        match (r, sink_error) {
            (Err(e), Some(_)) => return Some(HttpError::Sink(e).into()),
            (Err(e), None) => decode_error = Some(e),
            (Ok(()), _) => {}
        }
    }
    if let Some(source) = decode_error {
        return Some(TransferError::Decode {
            encoding: hop.encoding,
            source,
        });
    }
    if let Err(e) = dest.flush() {
        return Some(HttpError::Sink(e).into());
    }
    if let Err(e) = finish_files(opts, dest, last) {
        return Some(HttpError::Sink(e).into());
    }
    hop.failed_status.map(TransferError::Status)
}

/// Turns `req` into the redirect's next request: its URL (refused past
/// `--max-redirs`), a GET after 303 or a POST's 301/302, and the
/// credentials only where they were given.
fn next_hop(
    req: &mut Request,
    kind: &mut Kind,
    (first, headers): (&url::Url, &mut Vec<(String, String)>),
    (status, location, hops): (u16, Option<String>, usize),
    opts: &Options,
) -> Result<(), TransferError> {
    let loc = location.unwrap_or_default();
    let next = req.url.join(&loc).map_err(|e| HttpError::Url {
        url: loc,
        why: e.to_string(),
    })?;
    if hops > opts.max_redirs {
        return Err(HttpError::TooManyRedirects {
            max: opts.max_redirs,
            url: next.to_string(),
        }
        .into());
    }
    if opts.redirect.switches(status, *kind) {
        *kind = Kind::Get;
        req.method = opts.redirect.custom.clone().unwrap_or(hyper::Method::GET);
        req.body = tcpwise_client::Payload::default();
        headers.retain(|(k, _)| {
            !k.eq_ignore_ascii_case("content-type") && !k.eq_ignore_ascii_case("content-length")
        });
        // No body: no Content-Length, even for a -X POST (curl sends none).
        headers.push(("Content-Length".into(), tcpwise_client::REMOVE.into()));
    }
    if opts.redirect.auto_referer {
        let mut from = req.url.clone();
        from.set_fragment(None);
        let _ = from.set_username("");
        let _ = from.set_password(None);
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case("referer"));
        headers.push(("Referer".into(), from.to_string()));
    }
    // Credentials go only where they were given (curl's rule since
    // 7.83.1, CVE-2022-27776): each hop is compared with the first
    // request's scheme, host and port, so they come back on a return.
    req.headers = if same_target(first, &next) {
        headers.clone()
    } else {
        let mut h: Vec<(String, String)> = headers
            .iter()
            .filter(|(k, _)| !is_credential(k))
            .cloned()
            .collect();
        if let Some(up) = opts
            .netrc
            .as_ref()
            .and_then(|n| n.credentials(next.host_str()?))
        {
            use base64::Engine;
            let b64 = base64::engine::general_purpose::STANDARD.encode(up);
            h.push(("Authorization".into(), format!("Basic {b64}")));
        }
        h
    };
    if let Some(t) = &opts.trace {
        t.info(&format!("Issue another request to this URL: '{next}'"));
    }
    req.url = next;
    req.target = None;
    Ok(())
}

/// What one hop's callbacks share.
struct Sinks {
    dest: Dest,
    dump: Option<std::fs::File>,
    meter: Meter,
    hop: Hop,
}

/// What one hop learned from its head and body.
struct Hop {
    is_final: bool,
    decoder: Decoder,
    failed_status: Option<u16>,
    no_resume: bool,
    /// `--max-filesize` and a larger Content-Length: no file, curl's 63.
    too_large: Option<u64>,
    decode_error: Option<std::io::Error>,
    encoding: String,
    /// The connection's host, curl's number for it, and whether the
    /// response closes it (`--trace`'s last info line).
    conn: Option<(String, u64, bool)>,
    /// `-z` and a `Last-Modified` that fails it: curl reports 304.
    time_cond_unmet: bool,
}

impl Default for Hop {
    fn default() -> Hop {
        Hop {
            is_final: true,
            decoder: Decoder::identity(),
            failed_status: None,
            no_resume: false,
            too_large: None,
            decode_error: None,
            encoding: String::new(),
            conn: None,
            time_cond_unmet: false,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn credentials_stay_with_the_first_scheme_host_and_port() {
        let u = |s: &str| url::Url::parse(s).expect("url");
        let a = u("http://127.0.0.1:8080/x");
        assert!(same_target(&a, &u("http://127.0.0.1:8080/y?z")));
        assert!(same_target(&u("http://h/"), &u("http://H:80/other")));
        assert!(!same_target(&a, &u("http://127.0.0.1:8081/x")), "port");
        assert!(!same_target(&a, &u("http://localhost:8080/x")), "host");
        assert!(!same_target(&u("http://h/"), &u("https://h:80/")), "scheme");
        assert!(is_credential("Cookie") && is_credential("AUTHORIZATION"));
        assert!(!is_credential("cookie2") && !is_credential("x-auth"));
    }

    use super::*;
}
