//! Reading one HTTP/1.1 response off a byte stream, without I/O: the head
//! with `httparse`, then the body by its framing (none, `Content-Length`,
//! chunked, or until the connection closes). The load generator only needs
//! to know where a response ends and whether the connection stays open;
//! body bytes are counted, never copied. The chunked decoder and the
//! header rules are the server's ([`tcpwise_http::h1`]).

use tcpwise_http::h1::{self, Chunked};

/// Why a response could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The head is not HTTP.
    #[error("malformed response head: {0}")]
    Head(String),
    /// A head larger than we accept.
    #[error("response head larger than 64 KiB")]
    HeadTooLarge,
    /// Bad chunked framing.
    #[error("malformed chunked body")]
    Chunked,
    /// A `Content-Length` that is not a number.
    #[error("bad Content-Length")]
    Length,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    Length(u64),
    Chunked(Chunked),
    UntilClose,
}

/// Where one response stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    head_only: bool,
    body: Option<Body>,
    /// Status code, once the head is in.
    pub status: Option<u16>,
    /// The connection may carry another request after this response.
    pub keep_alive: bool,
    /// Body bytes seen.
    pub body_bytes: u64,
}

/// What [`Response::advance`] did with the bytes it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advance {
    /// Bytes used from the front of the buffer.
    pub used: usize,
    /// The response is complete.
    pub done: bool,
}

impl Response {
    /// A response to a request; `head_only` for `HEAD`.
    pub fn new(head_only: bool) -> Response {
        Response {
            head_only,
            body: None,
            status: None,
            keep_alive: true,
            body_bytes: 0,
        }
    }

    /// Consumes what it can of `buf` (unused bytes stay for the next call,
    /// with more data appended).
    pub fn advance(&mut self, buf: &[u8]) -> Result<Advance, ParseError> {
        let mut used = 0;
        if self.body.is_none() {
            match self.head(buf)? {
                None => {
                    return Ok(Advance {
                        used: 0,
                        done: false,
                    });
                }
                Some(n) => used = n,
            }
            if self.body.is_none() {
                // A 1xx interim response: the real one follows.
                let more = self.advance(&buf[used..])?;
                return Ok(Advance {
                    used: used + more.used,
                    done: more.done,
                });
            }
        }
        let rest = &buf[used..];
        let (n, data, done) = match self.body.as_mut().expect("head read") {
            Body::Length(left) => {
                let n = (*left as usize).min(rest.len());
                *left -= n as u64;
                (n, n, *left == 0)
            }
            Body::UntilClose => (rest.len(), rest.len(), false),
            Body::Chunked(d) => {
                let (mut n, mut data) = (0, 0);
                loop {
                    let p = d.next(&rest[n..]).map_err(|_| ParseError::Chunked)?;
                    n += p.used;
                    data += p.data.len();
                    if p.done || p.used == 0 || n == rest.len() {
                        break (n, data, p.done);
                    }
                }
            }
        };
        self.body_bytes += data as u64;
        Ok(Advance {
            used: used + n,
            done,
        })
    }

    /// The connection closed: whether that completes the response.
    pub fn at_eof(&self) -> bool {
        self.body == Some(Body::UntilClose)
    }

    /// Parses the head if it is all there; returns its length.
    fn head(&mut self, buf: &[u8]) -> Result<Option<usize>, ParseError> {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut r = httparse::Response::new(&mut headers);
        let n = match r.parse(buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if buf.len() > h1::MAX_HEAD => {
                return Err(ParseError::HeadTooLarge);
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(ParseError::Head(e.to_string())),
        };
        let status = r.code.unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            return Ok(Some(n));
        }
        let mut length = None;
        let mut chunked = false;
        let mut keep_alive = r.version == Some(1);
        for h in r.headers.iter() {
            let v = std::str::from_utf8(h.value).unwrap_or("").trim();
            if h.name.eq_ignore_ascii_case("content-length") {
                length = Some(v.parse::<u64>().map_err(|_| ParseError::Length)?);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = h1::last_token_is(v, "chunked");
            } else if h.name.eq_ignore_ascii_case("connection") {
                keep_alive = h1::connection_keep_alive(v, keep_alive);
            }
        }
        self.status = Some(status);
        self.keep_alive = keep_alive;
        self.body = Some(if self.head_only || status == 204 || status == 304 {
            Body::Length(0)
        } else if chunked {
            Body::Chunked(Chunked::new())
        } else if let Some(l) = length {
            Body::Length(l)
        } else {
            self.keep_alive = false;
            Body::UntilClose
        });
        Ok(Some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` in pieces of `step` bytes; returns (done, bytes used, response).
    fn feed(wire: &[u8], step: usize, head_only: bool) -> (bool, usize, Response) {
        let mut r = Response::new(head_only);
        let mut buf: Vec<u8> = Vec::new();
        let mut total = 0;
        for piece in wire.chunks(step) {
            buf.extend_from_slice(piece);
            let a = r.advance(&buf).unwrap();
            buf.drain(..a.used);
            total += a.used;
            if a.done {
                return (true, total, r);
            }
        }
        (false, total, r)
    }

    #[test]
    fn content_length_chunked_and_head_end_where_they_should_in_any_split() {
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT";
        let ch = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nhel\r\n2\r\nlo\r\n0\r\nT: 1\r\n\r\nNEXT";
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nNEXT";
        for step in [1, 2, 7, 1000] {
            let (done, used, r) = feed(cl, step, false);
            assert!(done && used == cl.len() - 4 && r.body_bytes == 5 && r.keep_alive);
            let (done, used, r) = feed(ch, step, false);
            assert!(done, "chunked, step {step}");
            assert_eq!(used, ch.len() - 4, "step {step}");
            assert_eq!(r.status, Some(200));
            let (done, used, _) = feed(head, step, true);
            assert!(done && used == head.len() - 4);
        }
    }

    #[test]
    fn interim_close_and_bad_framing() {
        let w = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        let (done, _, r) = feed(w, 3, false);
        assert!(done && r.status == Some(204));
        let w = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc";
        let (done, _, r) = feed(w, 100, false);
        assert!(!done && r.at_eof() && !r.keep_alive && r.body_bytes == 3);
        let w = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
        let (done, _, r) = feed(w, 100, false);
        assert!(done && !r.keep_alive);
        let mut r = Response::new(false);
        assert!(r.advance(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        let mut r = Response::new(false);
        let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(r.advance(bad), Err(ParseError::Chunked));
    }
}
