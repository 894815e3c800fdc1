//! HTTP/1.1 framing without I/O, shared by `tcpwise serve` and
//! `tcpwise bench`: request heads (with `httparse`), the chunked transfer
//! coding in both directions, and response heads.
//!
//! Why not hyper on these paths: per request, hyper's server allocates a
//! header map, boxes the service future and keeps an 8 KiB read buffer
//! and a write buffer alive for every idle keep-alive connection. At a
//! thousand connections that state falls out of the CPU caches and a
//! request cost 1.4 times nginx's CPU (measured with `scripts/bench-serve`).
//! The server here parses in place, borrows one read buffer per thread,
//! and keeps nothing per idle connection, as nginx does. The client in
//! `tcpwise-client` stays on hyper: there a request's cost is dominated
//! by the network, and hyper's connection API is what the pool drives.

use std::ops::Range;

/// Largest head accepted by default (larger: 431 from the server, an
/// error in the load generator).
pub const MAX_HEAD: usize = 64 * 1024;
/// Header lines parsed in place; a head with more takes a second pass
/// (its size, not its line count, is the limit, as nginx's is).
pub const MAX_HEADERS: usize = 64;

/// Why bytes are not a valid HTTP/1.1 message part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// Not an HTTP/1.x head.
    #[error("malformed head: {0}")]
    Head(String),
    /// The head is larger than the limit.
    #[error("head larger than the limit")]
    HeadTooLarge,
    /// A `Content-Length` that is not one number, or several that differ.
    #[error("bad Content-Length")]
    Length,
    /// A transfer coding other than chunked last, or both
    /// `Transfer-Encoding` and `Content-Length` (request smuggling).
    #[error("unsupported or ambiguous Transfer-Encoding")]
    Coding,
    /// Transfer-Encoding in an HTTP/1.0 request (RFC 9112 6.1).
    #[error("Transfer-Encoding in an HTTP/1.0 request")]
    CodingInHttp10,
    /// A chunk extension longer than [`MAX_CHUNK_EXT`].
    #[error("a chunk extension longer than 16 KiB")]
    ChunkExt,
    /// Bad chunked framing.
    #[error("malformed chunked body")]
    Chunked,
    /// An HTTP/1.1 request without one `Host` header (RFC 9112 §3.2:
    /// answer 400, as nginx does, to none and to several).
    #[error("an HTTP/1.1 request needs exactly one Host header")]
    Host,
}

/// How a message body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLen {
    /// Exactly this many bytes (0: no body).
    Length(u64),
    /// The chunked transfer coding.
    Chunked,
}

/// A parsed request head; strings borrow the buffer it was parsed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// Bytes of the head, including the blank line.
    pub len: usize,
    /// The method, as sent.
    pub method: &'a str,
    /// The request target (`/path?query`), as sent.
    pub target: &'a str,
    /// Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor: u8,
    /// The client allows another request on this connection.
    pub keep_alive: bool,
    /// The request body's framing.
    pub body: BodyLen,
    /// `Expect: 100-continue`.
    pub expect_continue: bool,
    /// `Range`, `If-Range`, `If-None-Match`, `If-Modified-Since`,
    /// `If-Match`, `If-Unmodified-Since`, as sent (what `serve --root`
    /// answers by).
    pub cond: [Option<&'a str>; 6],
    /// `Referer` and `User-Agent` (for the access log).
    pub referer: Option<&'a str>,
    /// `User-Agent`.
    pub user_agent: Option<&'a str>,
    /// `Authorization` (the access log's `$remote_user`).
    pub authorization: Option<&'a str>,
    /// `Accept-Encoding` allows gzip (a `gzip` or `*` token whose q is not 0).
    pub accept_gzip: bool,
    /// `Host` (the authority the responsiveness config's URLs point at).
    pub host: Option<&'a str>,
}

/// Parses a request head at the start of `buf`; `Ok(None)` until it is
/// all there; a head over `max_head` bytes is [`FramingError::HeadTooLarge`].
/// The number of header lines is limited by `max_head` alone, as nginx's
/// is by its buffers: 64 lines are parsed in place, more on a second pass.
pub fn parse_request(buf: &[u8], max_head: usize) -> Result<Option<RequestHead<'_>>, FramingError> {
    // Uninitialised room: filling 64 empty headers before every parse
    // was a memset of 2 KiB a request, on the fast path.
    let mut headers = [const { std::mem::MaybeUninit::uninit() }; MAX_HEADERS];
    match parse_in(buf, max_head, &mut headers) {
        Err(Many) => {
            // At least 3 bytes a line (`a:` and LF): no head of
            // `max_head` bytes holds more.
            let lines = buf.len().min(max_head) / 3 + 1;
            let mut headers = vec![std::mem::MaybeUninit::uninit(); lines];
            parse_in(buf, max_head, &mut headers).unwrap_or(Err(FramingError::HeadTooLarge))
        }
        Ok(r) => r,
    }
}

/// Whether `buf` may hold a complete head, looking only past its first
/// `seen` bytes (which held no head's end): an empty line (LF LF or LF CR
/// LF) that ends at or after `seen`. A false yes costs one parse; a no
/// spares a parse of the whole partial head on every read.
pub fn may_end_head(buf: &[u8], seen: usize) -> bool {
    let from = seen.saturating_sub(2);
    buf[from.min(buf.len())..]
        .windows(2)
        .enumerate()
        .any(|(i, w)| {
            w[0] == b'\n'
                && (w[1] == b'\n' || (w[1] == b'\r' && buf.get(from + i + 2) == Some(&b'\n')))
        })
}

/// More header lines than the array given.
struct Many;

/// [`parse_request`] with `headers` as httparse's room.
fn parse_in<'b>(
    buf: &'b [u8],
    max_head: usize,
    headers: &mut [std::mem::MaybeUninit<httparse::Header<'b>>],
) -> Result<Result<Option<RequestHead<'b>>, FramingError>, Many> {
    let mut r = httparse::Request::new(&mut []);
    let len = match r.parse_with_uninit_headers(buf, headers) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > max_head => {
            return Ok(Err(FramingError::HeadTooLarge));
        }
        Ok(httparse::Status::Partial) => return Ok(Ok(None)),
        Err(httparse::Error::TooManyHeaders) => return Err(Many),
        Err(e) => return Ok(Err(FramingError::Head(e.to_string()))),
    };
    if len > max_head {
        return Ok(Err(FramingError::HeadTooLarge));
    }
    let minor = r.version.unwrap_or(1);
    Ok(read_fields(r.headers, minor).map(|f| {
        Some(RequestHead {
            len,
            method: r.method.unwrap_or(""),
            target: r.path.unwrap_or("/"),
            minor,
            keep_alive: f.keep_alive,
            body: f.body,
            expect_continue: f.expect_continue,
            cond: f.cond,
            referer: f.referer,
            user_agent: f.user_agent,
            authorization: f.authorization,
            accept_gzip: f.accept_gzip,
            host: f.host,
        })
    }))
}

/// What a request's header lines say, checked for framing.
struct Fields<'a> {
    keep_alive: bool,
    body: BodyLen,
    expect_continue: bool,
    cond: [Option<&'a str>; 6],
    referer: Option<&'a str>,
    user_agent: Option<&'a str>,
    authorization: Option<&'a str>,
    accept_gzip: bool,
    host: Option<&'a str>,
}

/// Reads the header lines a server acts on; refuses ambiguous framing.
fn read_fields<'a>(
    headers: &[httparse::Header<'a>],
    minor: u8,
) -> Result<Fields<'a>, FramingError> {
    let mut keep_alive = minor == 1;
    let mut length: Option<u64> = None;
    let mut coding = false;
    let mut expect_continue = false;
    let mut cond: [Option<&str>; 6] = [None; 6];
    let (mut referer, mut user_agent, mut accept_gzip) = (None, None, false);
    let (mut hosts, mut host, mut authorization) = (0, None, None);
    for h in headers {
        let is = |n: &str| h.name.eq_ignore_ascii_case(n);
        // RFC 9110 5.6.3: OWS is SP and HTAB only. `str::trim` also strips
        // U+00A0 and its kin, so "\u{a0}3" read as 3 where a proxy in front
        // reads no length (request smuggling).
        let text = || std::str::from_utf8(h.value).ok().map(trim_ows);
        // Headers we do not read (Host, Accept, ...) cost one look at
        // their first letter: this runs for every request of the fast path.
        match h.name.as_bytes().first().map(|b| b | 0x20) {
            Some(b'c') if is("content-length") => {
                // Digits only: Rust's parse takes "+3", which a proxy in
                // front may read otherwise (request smuggling); nginx 400s.
                let n = text()
                    .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or(FramingError::Length)?;
                if length.is_some_and(|l| l != n) {
                    return Err(FramingError::Length);
                }
                length = Some(n);
            }
            Some(b'c') if is("connection") => {
                keep_alive = connection_keep_alive(text().unwrap_or(""), keep_alive);
            }
            Some(b't') if is("transfer-encoding") => {
                if !last_token_is(text().unwrap_or(""), "chunked") {
                    return Err(FramingError::Coding);
                }
                coding = true;
            }
            Some(b'e') if is("expect") => {
                expect_continue = text().is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
            }
            Some(b'r') if is("range") => cond[0] = text(),
            Some(b'r') if is("referer") => referer = text(),
            Some(b'i') if is("if-range") => cond[1] = text(),
            Some(b'i') if is("if-none-match") => cond[2] = text(),
            Some(b'i') if is("if-modified-since") => cond[3] = text(),
            Some(b'i') if is("if-match") => cond[4] = text(),
            Some(b'i') if is("if-unmodified-since") => cond[5] = text(),
            Some(b'u') if is("user-agent") => user_agent = text(),
            Some(b'a') if is("authorization") => authorization = text(),
            Some(b'h') if is("host") => {
                hosts += 1;
                host = text();
            }
            Some(b'a') if is("accept-encoding") => {
                accept_gzip |= text().is_some_and(accepts_gzip);
            }
            _ => {}
        }
    }
    if coding && length.is_some() {
        return Err(FramingError::Coding);
    }
    if coding && minor == 0 {
        // RFC 9112 6.1: a server that receives Transfer-Encoding in an
        // HTTP/1.0 request must treat the framing as faulty and close.
        return Err(FramingError::CodingInHttp10);
    }
    if hosts > 1 || (minor == 1 && hosts == 0) {
        return Err(FramingError::Host);
    }
    Ok(Fields {
        keep_alive,
        body: if coding {
            BodyLen::Chunked
        } else {
            BodyLen::Length(length.unwrap_or(0))
        },
        expect_continue,
        cond,
        referer,
        user_agent,
        authorization,
        accept_gzip,
        host,
    })
}

/// Whether an `Accept-Encoding` value allows gzip: a `gzip` (or `*`)
/// token without `q=0`.
pub fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|item| {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or("").trim();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f64>().ok())
            .next()
            .unwrap_or(1.0);
        (name.eq_ignore_ascii_case("gzip") || name == "*") && q > 0.0
    })
}

/// A field value without its optional whitespace (SP and HTAB, RFC 9110
/// 5.6.3), and nothing else.
pub fn trim_ows(v: &str) -> &str {
    v.trim_matches([' ', '\t'])
}

/// Whether the last comma-separated token of a header value is `token`.
pub fn last_token_is(value: &str, token: &str) -> bool {
    value
        .rsplit(',')
        .next()
        .is_some_and(|t| trim_ows(t).eq_ignore_ascii_case(token))
}

/// Applies a `Connection` header value to the keep-alive default.
pub fn connection_keep_alive(value: &str, default: bool) -> bool {
    let mut keep = default;
    for t in value.split(',') {
        if t.trim().eq_ignore_ascii_case("close") {
            return false;
        } else if t.trim().eq_ignore_ascii_case("keep-alive") {
            keep = true;
        }
    }
    keep
}

/// Longest chunk extension accepted (a size line's `;...` part): hyper
/// and Node allow a few KiB; past this the body is refused, not buffered.
pub const MAX_CHUNK_EXT: usize = 16 * 1024;

/// Where a chunk-size line is (RFC 9112 7.1: `1*HEXDIG [ BWS ";" ... ]
/// CRLF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SizeAt {
    /// In the hex digits (none yet, or some).
    Digits,
    /// In the whitespace after them: only more of it or `;` may follow.
    Ws,
    /// In the extension: bytes of it so far.
    Ext(usize),
}

/// A chunk-size line read so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SizeLine {
    n: u64,
    digits: bool,
    at: SizeAt,
    /// A CR was read: only LF may follow (a bare CR is refused, never
    /// skipped: `1\r3` is not 0x13).
    cr: bool,
}

impl SizeLine {
    const START: SizeLine = SizeLine {
        n: 0,
        digits: false,
        at: SizeAt::Digits,
        cr: false,
    };

    /// Takes one byte: the line so far, or at its LF the chunk's size.
    fn byte(self, c: u8) -> Result<Result<SizeLine, u64>, FramingError> {
        let mut l = self;
        match (c, l.at) {
            (b'\n', _) if l.digits => return Ok(Err(l.n)),
            (_, _) if l.cr || c == b'\n' => return Err(FramingError::Chunked),
            (b'\r', _) if l.digits => l.cr = true,
            (b';', SizeAt::Digits | SizeAt::Ws) if l.digits => l.at = SizeAt::Ext(1),
            (b' ' | b'\t', SizeAt::Digits | SizeAt::Ws) if l.digits => l.at = SizeAt::Ws,
            (_, SizeAt::Ext(len)) => {
                if (c < 0x20 && c != b'\t') || c == 0x7f {
                    return Err(FramingError::Chunked);
                }
                if len >= MAX_CHUNK_EXT {
                    return Err(FramingError::ChunkExt);
                }
                l.at = SizeAt::Ext(len + 1);
            }
            (_, SizeAt::Digits) => {
                let d = (c as char).to_digit(16).ok_or(FramingError::Chunked)?;
                if l.n > u64::MAX >> 8 {
                    return Err(FramingError::Chunked);
                }
                l.n = l.n * 16 + u64::from(d);
                l.digits = true;
            }
            _ => return Err(FramingError::Chunked),
        }
        Ok(Ok(l))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading the hex size line.
    Size(SizeLine),
    /// Inside a chunk's data; bytes left.
    Data(u64),
    /// The CRLF after a chunk's data (`true`: CR seen).
    DataEnd(bool),
    /// Trailer lines after the last chunk; bytes on the current line.
    Trailer(usize),
    /// The terminating blank line has been read.
    Done,
}

/// A decoder of the chunked transfer coding, fed any split of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunked {
    st: Chunk,
}

/// One step of [`Chunked::next`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// Bytes consumed from the front of the input.
    pub used: usize,
    /// Where in the input the decoded data of this step lies (may be empty).
    pub data: Range<usize>,
    /// The body (with its trailers) has ended.
    pub done: bool,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked::new()
    }
}

impl Chunked {
    /// A decoder at the start of a chunked body.
    pub fn new() -> Chunked {
        Chunked {
            st: Chunk::Size(SizeLine::START),
        }
    }

    /// Whether the body has ended.
    pub fn is_done(&self) -> bool {
        self.st == Chunk::Done
    }

    /// Consumes framing from the front of `b` up to and including the next
    /// run of data (or the end of the body, or of `b`). Call again with the
    /// rest until `used` is 0 or `done`.
    pub fn next(&mut self, b: &[u8]) -> Result<Piece, FramingError> {
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            self.st = match self.st {
                Chunk::Done => break,
                Chunk::Size(line) => match line.byte(c)? {
                    Ok(line) => Chunk::Size(line),
                    Err(0) => Chunk::Trailer(0),
                    Err(n) => Chunk::Data(n),
                },
                Chunk::Data(left) => {
                    let n = (left as usize).min(b.len() - i);
                    self.st = if left == n as u64 {
                        Chunk::DataEnd(false)
                    } else {
                        Chunk::Data(left - n as u64)
                    };
                    return Ok(Piece {
                        used: i + n,
                        data: i..i + n,
                        done: false,
                    });
                }
                Chunk::DataEnd(cr) => match c {
                    b'\r' if !cr => Chunk::DataEnd(true),
                    b'\n' => Chunk::Size(SizeLine::START),
                    _ => return Err(FramingError::Chunked),
                },
                Chunk::Trailer(len) => match c {
                    b'\n' if len == 0 => {
                        self.st = Chunk::Done;
                        return Ok(Piece {
                            used: i + 1,
                            data: i + 1..i + 1,
                            done: true,
                        });
                    }
                    b'\n' => Chunk::Trailer(0),
                    b'\r' => Chunk::Trailer(len),
                    _ if len >= MAX_HEAD => return Err(FramingError::HeadTooLarge),
                    _ => Chunk::Trailer(len + 1),
                },
            };
            i += 1;
        }
        Ok(Piece {
            used: i,
            data: i..i,
            done: self.st == Chunk::Done,
        })
    }
}

/// Appends one chunk (size line, data, CRLF) to `out`; empty data is skipped
/// (an empty chunk would end the body).
pub fn put_chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    put_hex(out, data.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The last chunk and an empty trailer.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

fn put_hex(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[(n & 15) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn put_dec(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// The reason phrase the server uses for `status`.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        206 => "Partial Content",
        301 => "Moved Permanently",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        416 => "Range Not Satisfiable",
        425 => "Too Early",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// What a response head says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead<'a> {
    /// Status code.
    pub status: u16,
    /// Minor version of the request (an HTTP/1.0 client gets `HTTP/1.0`
    /// semantics: keep-alive only when announced).
    pub minor: u8,
    /// The connection stays open after this response.
    pub keep_alive: bool,
    /// The body's framing (for `HEAD`: the framing a `GET` would have).
    pub body: BodyLen,
    /// `Content-Type`, if any.
    pub content_type: Option<&'a str>,
    /// `Allow` (with 405).
    pub allow: Option<&'a str>,
}

/// Appends a response head (with `Date` from `date`, the IMF-fixdate of now).
pub fn put_response_head(out: &mut Vec<u8>, h: &ResponseHead, date: &[u8]) {
    out.extend_from_slice(b"HTTP/1.1 ");
    put_dec(out, u64::from(h.status));
    out.push(b' ');
    out.extend_from_slice(reason(h.status).as_bytes());
    out.extend_from_slice(b"\r\n");
    match h.body {
        BodyLen::Length(n) => {
            out.extend_from_slice(b"content-length: ");
            put_dec(out, n);
            out.extend_from_slice(b"\r\n");
        }
        BodyLen::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
    if let Some(t) = h.content_type {
        out.extend_from_slice(b"content-type: ");
        out.extend_from_slice(t.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(a) = h.allow {
        out.extend_from_slice(b"allow: ");
        out.extend_from_slice(a.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !h.keep_alive {
        out.extend_from_slice(b"connection: close\r\n");
    } else if h.minor == 0 {
        out.extend_from_slice(b"connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"date: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n\r\n");
}

/// The interim response to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_nginx_answers_400_are_refused() {
        fn bad(wire: &[u8]) -> Result<Option<RequestHead<'_>>, FramingError> {
            parse_request(wire, MAX_HEAD)
        }
        assert_eq!(
            bad(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: +3\r\n\r\nabc"),
            Err(FramingError::Length)
        );
        assert_eq!(
            bad(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: -0\r\n\r\n"),
            Err(FramingError::Length)
        );
        assert_eq!(bad(b"GET / HTTP/1.1\r\n\r\n"), Err(FramingError::Host));
        assert_eq!(
            bad(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
            Err(FramingError::Host)
        );
        // HTTP/1.0 needs no Host.
        assert!(bad(b"GET / HTTP/1.0\r\n\r\n").unwrap().is_some());
    }

    #[test]
    fn heads_with_more_lines_than_the_first_room_parse_whole() {
        // 200 lines: past the 64 the first parse has room for, so the
        // second, sized from the head, reads them; a partial one waits.
        let mut wire = b"POST /echo HTTP/1.1\r\n".to_vec();
        for i in 0..200 {
            wire.extend_from_slice(format!("X-Line-{i}: {i}\r\n").as_bytes());
        }
        wire.extend_from_slice(b"Host: h\r\nContent-Length: 2\r\n\r\nhi");
        let r = parse_request(&wire, MAX_HEAD).unwrap().unwrap();
        assert_eq!(
            (r.host, r.body, r.len),
            (Some("h"), BodyLen::Length(2), wire.len() - 2)
        );
        assert_eq!(parse_request(&wire[..wire.len() - 40], MAX_HEAD), Ok(None));
    }

    #[test]
    fn request_heads_and_their_framing() {
        let r = parse_request(
            b"GET /bytes/5?x=1 HTTP/1.1\r\nHost: a\r\n\r\nrest",
            MAX_HEAD,
        )
        .unwrap()
        .unwrap();
        assert_eq!((r.method, r.target, r.minor), ("GET", "/bytes/5?x=1", 1));
        assert!(r.keep_alive && r.body == BodyLen::Length(0) && r.len == 38);
        let r = parse_request(
            b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
            MAX_HEAD,
        )
        .unwrap()
        .unwrap();
        assert!(r.keep_alive && r.minor == 0);
        let r = parse_request(b"GET / HTTP/1.0\r\n\r\n", MAX_HEAD)
            .unwrap()
            .unwrap();
        assert!(!r.keep_alive);
        let r = parse_request(b"POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\nTransfer-Encoding: gzip, chunked\r\nExpect: 100-continue\r\n\r\n", MAX_HEAD).unwrap().unwrap();
        assert!(!r.keep_alive && r.body == BodyLen::Chunked && r.expect_continue);
        assert_eq!(
            parse_request(b"GET / HTTP/1.1\r\nHost: t\r\nHost", MAX_HEAD),
            Ok(None)
        );
        for bad in [
            &b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        ] {
            assert!(parse_request(bad, MAX_HEAD).is_err(), "{bad:?}");
        }
        let mut big = b"GET / HTTP/1.1\r\nHost: t\r\nX: ".to_vec();
        big.resize(MAX_HEAD + 1, b'a');
        assert_eq!(
            parse_request(&big, MAX_HEAD),
            Err(FramingError::HeadTooLarge)
        );
        assert_eq!(
            parse_request(b"GET / HTTP/1.1\r\nHost: t\r\nX: 1234\r\n\r\n", 20),
            Err(FramingError::HeadTooLarge)
        );
        // Many small lines are no larger a head (nginx answers them):
        // 200 of them parse; the size limit still holds.
        let mut many = b"GET / HTTP/1.1\r\nHost: t\r\n".to_vec();
        for i in 0..200 {
            many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"Authorization: Basic dTpw\r\n\r\n");
        let head = parse_request(&many, MAX_HEAD).unwrap().unwrap();
        assert_eq!(head.len, many.len());
        assert_eq!(head.authorization, Some("Basic dTpw"));
        assert_eq!(
            parse_request(&many, many.len() - 1),
            Err(FramingError::HeadTooLarge)
        );
    }

    /// Decodes `wire` fed in pieces of `step` bytes: (data, bytes used, done).
    fn decode(wire: &[u8], step: usize) -> Result<(Vec<u8>, usize, bool), FramingError> {
        let mut d = Chunked::new();
        let (mut data, mut buf, mut used) = (Vec::new(), Vec::new(), 0);
        for piece in wire.chunks(step) {
            buf.extend_from_slice(piece);
            loop {
                let p = d.next(&buf)?;
                data.extend_from_slice(&buf[p.data.clone()]);
                buf.drain(..p.used);
                used += p.used;
                if p.done {
                    return Ok((data, used, true));
                }
                if p.used == 0 || buf.is_empty() {
                    break;
                }
            }
        }
        Ok((data, used, false))
    }

    #[test]
    fn chunked_decodes_in_every_split_and_stops_at_its_end() {
        let wire = b"3;x=y\r\nhel\r\n2 \r\nlo\r\nA\r\n0123456789\r\n0\r\nT: 1\r\n\r\nNEXT";
        for step in 1..wire.len() {
            let (data, used, done) = decode(wire, step).unwrap();
            assert_eq!(data, b"hello0123456789", "step {step}");
            assert!(done && used == wire.len() - 4, "step {step}");
        }
        for bad in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"3\r\nabcX",
            b"ffffffffffffffffff\r\n",
            // The audit's shapes: a bare CR inside the size, a digit after
            // whitespace, a control byte in an extension.
            b"1\r3\r\n",
            b"1 3\r\n",
            b"1;a\x01\r\nx\r\n",
            b"1\r\r\nx\r\n",
        ] {
            assert!(decode(bad, 100).is_err(), "{bad:?}");
        }
        // An extension of 16 KiB is taken; one byte more is refused.
        for (len, ok) in [(MAX_CHUNK_EXT - 1, true), (MAX_CHUNK_EXT, false)] {
            let wire = [&b"1;"[..], &vec![b'e'; len], b"\r\nx\r\n0\r\n\r\n"].concat();
            let r = decode(&wire, 4096);
            assert_eq!(r.is_ok(), ok, "{len}: {r:?}");
            if !ok {
                assert_eq!(r.unwrap_err(), FramingError::ChunkExt);
            }
        }
    }

    #[test]
    fn a_head_end_is_seen_across_any_split() {
        let head = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
        for cut in 0..=head.len() {
            let whole = head.len();
            // Everything before `cut` was seen with no end in it.
            if cut + 3 <= whole {
                assert!(may_end_head(head, cut), "{cut}");
            }
        }
        assert!(!may_end_head(b"GET / HTTP/1.1\r\nHost: t\r\n", 0));
        assert!(may_end_head(b"GET / HTTP/1.1\nHost: t\n\n", 20));
        assert!(!may_end_head(b"GET / HTTP/1.1\r\nHost: t\r\n\r", 10));
    }

    #[test]
    fn framing_fields_take_ascii_whitespace_only_and_no_coding_from_http10() {
        let head =
            |fields: &str, v: &str| format!("POST / HTTP/{v}\r\nHost: t\r\n{fields}\r\n\r\n");
        for bad in [
            "Content-Length: \u{a0}3",
            "Content-Length: 3\u{a0}",
            "Transfer-Encoding: \u{a0}chunked",
        ] {
            let h = head(bad, "1.1");
            assert!(parse_request(h.as_bytes(), MAX_HEAD).is_err(), "{bad:?}");
        }
        let h = head("Content-Length: \t3 ", "1.1");
        let r = parse_request(h.as_bytes(), MAX_HEAD).unwrap().unwrap();
        assert_eq!(r.body, BodyLen::Length(3));
        let h = head("Transfer-Encoding: chunked", "1.0");
        assert_eq!(
            parse_request(h.as_bytes(), MAX_HEAD).unwrap_err(),
            FramingError::CodingInHttp10
        );
    }

    #[test]
    fn encoded_chunks_decode_back() {
        let mut out = Vec::new();
        for part in [&b"a"[..], b"", &[7u8; 300]] {
            put_chunk(&mut out, part);
        }
        out.extend_from_slice(LAST_CHUNK);
        assert!(out.starts_with(b"1\r\na\r\n12c\r\n"));
        let (data, used, done) = decode(&out, 7).unwrap();
        assert!(done && used == out.len() && data.len() == 301);
    }

    #[test]
    fn response_heads() {
        let mut out = Vec::new();
        let h = ResponseHead {
            status: 200,
            minor: 0,
            keep_alive: true,
            body: BodyLen::Length(100),
            content_type: Some("application/octet-stream"),
            allow: None,
        };
        put_response_head(&mut out, &h, b"Sun, 06 Nov 1994 08:49:37 GMT");
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            "HTTP/1.1 200 OK\r\ncontent-length: 100\r\ncontent-type: application/octet-stream\r\nconnection: keep-alive\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"
        );
        let mut out = Vec::new();
        let h = ResponseHead {
            status: 405,
            minor: 1,
            keep_alive: false,
            body: BodyLen::Chunked,
            content_type: None,
            allow: Some("GET, HEAD"),
        };
        put_response_head(&mut out, &h, b"d");
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("transfer-encoding: chunked\r\n") && s.contains("connection: close"));
        assert!(s.contains("allow: GET, HEAD\r\n"));
    }
}
