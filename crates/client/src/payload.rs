//! What a request sends, and how it reaches hyper: bytes in memory, or a
//! stream, so `get -T` of a 1 GiB file holds one buffer of it at a time
//! (curl's memory profile) instead of the whole file.
//!
//! - [`Payload::Bytes`]: `-d`, `-F`, `--json` (curl also builds these in
//!   memory);
//! - [`Payload::File`]: `-T FILE`, opened when the request is sent, so a
//!   retry or a 307/308 redirect sends it again from the start;
//! - [`Payload::Stdin`]: `-T -`, read as it is sent, chunked on HTTP/1.1
//!   (its length is unknown, as in curl); it can be sent once only, so a
//!   retry or a redirect that needs it again fails as curl's 65 does;
//! - [`Payload::Endless`]: a load generator's upload (`tcpwise rpm`):
//!   bytes without end, counted as hyper takes them, until the request
//!   is dropped.

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, ReadBuf};

/// The body type every request is sent with.
pub type ReqBody = BoxBody<Bytes, std::io::Error>;

/// How much of a streamed body is read at a time.
const CHUNK: usize = 64 * 1024;

/// A request's body.
#[derive(Debug, Clone)]
pub enum Payload {
    /// In memory (empty: no body).
    Bytes(Bytes),
    /// A file of `len` bytes (its size when the command line was read).
    File {
        /// The file.
        path: PathBuf,
        /// Its length, sent as `Content-Length`.
        len: u64,
    },
    /// Standard input, streamed once.
    Stdin,
    /// Bytes without end (chunked on HTTP/1.1), each one added to the
    /// counter as hyper takes it: what a load-generating upload sent.
    Endless(std::sync::Arc<std::sync::atomic::AtomicU64>),
}

impl Default for Payload {
    fn default() -> Payload {
        Payload::Bytes(Bytes::new())
    }
}

impl From<Bytes> for Payload {
    fn from(b: Bytes) -> Payload {
        Payload::Bytes(b)
    }
}

/// Standard input was streamed already (it cannot be rewound).
static STDIN_SENT: AtomicBool = AtomicBool::new(false);

/// Why a body cannot be sent.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// The file to upload cannot be opened.
    #[error("cannot open {path}")]
    Open {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Standard input would have to be sent twice (a retry, a redirect).
    #[error(
        "standard input was sent already and cannot be sent again (curl's 'necessary data rewind wasn't possible')"
    )]
    Rewind,
}

impl Payload {
    /// The length when known (`None`: standard input).
    pub fn len(&self) -> Option<u64> {
        match self {
            Payload::Bytes(b) => Some(b.len() as u64),
            Payload::File { len, .. } => Some(*len),
            Payload::Stdin | Payload::Endless(_) => None,
        }
    }

    /// The bytes of a body held in memory.
    pub fn bytes(&self) -> Option<&Bytes> {
        match self {
            Payload::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// No body at all.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// hyper's body for one sending of this payload.
    pub fn body(&self) -> Result<ReqBody, PayloadError> {
        Ok(match self {
            Payload::Bytes(b) => http_body_util::Full::new(b.clone())
                .map_err(|never| match never {})
                .boxed(),
            Payload::File { path, len } => {
                let f = std::fs::File::open(path).map_err(|source| PayloadError::Open {
                    path: path.display().to_string(),
                    source,
                })?;
                Streamed {
                    src: Source::File(f),
                    left: Some(*len),
                    buf: vec![0; CHUNK],
                }
                .boxed()
            }
            Payload::Stdin => {
                if STDIN_SENT.swap(true, Ordering::SeqCst) {
                    return Err(PayloadError::Rewind);
                }
                Streamed {
                    src: Source::Async(Box::new(tokio::io::stdin())),
                    left: None,
                    buf: vec![0; CHUNK],
                }
                .boxed()
            }
            Payload::Endless(counter) => Endless {
                chunk: Bytes::from(vec![0u8; CHUNK]),
                counter: counter.clone(),
            }
            .boxed(),
        })
    }
}

/// [`Payload::Endless`]'s body: one shared chunk handed out forever.
struct Endless {
    chunk: Bytes,
    counter: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Body for Endless {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.counter
            .fetch_add(self.chunk.len() as u64, Ordering::Relaxed);
        Poll::Ready(Some(Ok(Frame::data(self.chunk.clone()))))
    }
}

/// A body read from `src` a buffer at a time: exactly `left` bytes when
/// the length was announced (a file that shrank is an error: the server
/// was promised its length), else to the end.
struct Streamed {
    src: Source,
    left: Option<u64>,
    buf: Vec<u8>,
}

/// Where a streamed body comes from.
enum Source {
    /// A file, read in place: from the page cache a read costs less than
    /// handing it to tokio's blocking pool and back (tokio::fs does that
    /// for every read), which halved the upload speed.
    File(std::fs::File),
    /// Anything else (standard input), read asynchronously.
    Async(Box<dyn AsyncRead + Send + Sync + Unpin>),
}

impl Body for Streamed {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = &mut *self;
        let want = match this.left {
            Some(0) => return Poll::Ready(None),
            Some(n) => (n as usize).min(this.buf.len()),
            None => this.buf.len(),
        };
        let n = match &mut this.src {
            Source::File(f) => std::io::Read::read(f, &mut this.buf[..want])?,
            Source::Async(a) => {
                let mut rb = ReadBuf::new(&mut this.buf[..want]);
                ready!(Pin::new(a).poll_read(cx, &mut rb))?;
                rb.filled().len()
            }
        };
        if n == 0 {
            return Poll::Ready(this.left.map(|left| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the file to upload ended {left} bytes early (it shrank)"),
                ))
            }));
        }
        if let Some(l) = &mut this.left {
            *l -= n as u64;
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::copy_from_slice(
            &this.buf[..n],
        )))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == Some(0)
    }

    fn size_hint(&self) -> SizeHint {
        match self.left {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}
