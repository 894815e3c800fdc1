//! One HTTP/1.1 connection: its state between reads, the fast path that
//! parses and answers every complete request of a read into one write,
//! and the hand-off of long work to [`super::stream`].

use super::*;

/// A request whose answer leaves the fast path (opaque: the glue
/// streams it).
pub struct Slow {
    pub(super) reply: Reply,
    pub(super) method: String,
    pub(super) target: String,
    pub(super) minor: u8,
    pub(super) keep_alive: bool,
    pub(super) head: bool,
    pub(super) body: BodyLen,
    pub(super) expect_continue: bool,
    /// The headers a file answer depends on (`--root`).
    pub(super) cond: files::Conditional,
    /// `Referer` and `User-Agent`, kept only for the access log.
    pub(super) agent: Option<(String, String, Option<String>)>,
    /// When its head was complete.
    pub(super) started: Instant,
    /// Compress the answer (`--gzip`, and the client accepts it).
    pub(super) gzip: bool,
}

/// What one fast step ended with.
pub enum Step {
    /// Every complete request was answered; read more.
    Again,
    /// A request needs the slow path (its head is consumed, its body is not).
    Slow(Box<Slow>),
    /// Close once the output is written (`true`: the client may still be
    /// sending, so drain before closing).
    Close(bool),
}
/// A connection: its socket, what the socket did not take yet, and the
/// I/O-free [`Core`] (reached through `Deref`).
pub(super) struct Conn<S> {
    pub(super) io: S,
    /// Output the socket did not take yet.
    pub(super) unsent: Vec<u8>,
    pub(super) core: Core,
    /// The TCP socket under `io` (TLS too), to see when the client has
    /// acknowledged the last byte of an answer (the access log's time).
    pub(super) fd: Option<std::os::fd::RawFd>,
    /// Bytes `send` handed to the socket, for the access log's byte count.
    pub(super) sent: u64,
    /// The slow path's answer so far: its status and the body length it
    /// promised, and the size of its head (set where the head is built).
    pub(super) answer: Option<(u16, Option<u64>)>,
    pub(super) head_len: u64,
}

impl<S> std::ops::Deref for Conn<S> {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl<S> std::ops::DerefMut for Conn<S> {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<S> {
    pub(super) fn new(io: S, id: u64, peer: SocketAddr, log: bool, lim: Limits) -> Self {
        Conn::with_core(io, Core::with(id, peer, log, lim))
    }

    /// A connection whose core another loop ran so far (the io_uring
    /// fast path hands its slow requests over to tokio).
    pub(super) fn with_core(io: S, core: Core) -> Self {
        Conn {
            io,
            unsent: Vec::new(),
            core,
            fd: None,
            sent: 0,
            answer: None,
            head_len: 0,
        }
    }

    /// The TCP socket's descriptor (see [`Conn::fd`]).
    /// The connection is TLS (the responsiveness config's URLs say https).
    pub(super) fn https(mut self) -> Self {
        self.core.scheme = "https";
        self
    }

    /// The TLS handshake's state: requests before it completes are early data.
    pub(super) fn with_handshake(mut self, h: Handshake) -> Self {
        self.core.handshake = Some(h);
        self
    }

    pub(super) fn with_fd(mut self, fd: std::os::fd::RawFd) -> Self {
        self.fd = Some(fd);
        self
    }

    pub(super) fn with_root(mut self, root: Option<Arc<files::Root>>, gzip: bool) -> Self {
        self.core.root = root;
        self.core.gzip = gzip;
        self
    }

    pub(super) async fn run(mut self, stop: Shutdown) -> io::Result<()> {
        let mut stopped = pin!(stop.wait());
        // One lazy timer per connection: requests move `since` without
        // touching it; when it fires early it is re-armed to the deadline.
        // Only a partial head can bring the deadline forward (re-armed below).
        let mut armed = self.deadline();
        let timer = tokio::time::sleep_until(armed);
        let mut timer = pin!(timer);
        loop {
            let answered = self.answered;
            let step = tokio::select! {
                biased;
                s = poll_fn(|cx| self.poll_step(cx)) => s?,
                _ = &mut stopped => return Ok(()),
                _ = &mut timer => {
                    let due = self.deadline();
                    if Instant::now() >= due {
                        self.timed_out();
                        return Ok(());
                    }
                    armed = due;
                    timer.as_mut().reset(due);
                    continue;
                }
            };
            self.flush().await?;
            match step {
                Step::Again => {}
                Step::Slow(s) => {
                    // Boxed: the slow path's state stays out of every
                    // connection's task (smaller tasks, fewer cache misses).
                    if !Box::pin(self.slow(*s)).await? {
                        return self.close(true).await;
                    }
                }
                Step::Close(drain) => return self.close(drain).await,
            }
            if stop.is_triggered() {
                return Ok(());
            }
            self.stepped(answered);
            if self.deadline() < armed {
                armed = self.deadline();
                timer.as_mut().reset(armed);
            }
        }
    }

    /// One synchronous step on the thread's buffers: read (unless complete
    /// requests are waiting), answer every complete request, write the
    /// answers once. Pending only while waiting to read.
    pub(super) fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Step>> {
        BUFS.with_borrow_mut(|(scratch, out)| {
            let n = if self.more {
                None
            } else {
                let mut rb = ReadBuf::new(scratch);
                ready!(Pin::new(&mut self.io).poll_read(cx, &mut rb))?;
                let n = rb.filled().len();
                if n == 0 {
                    return Poll::Ready(Ok(Step::Close(false)));
                }
                Some(n)
            };
            out.clear();
            let step = self.consume(n.map(|n| &scratch[..n]), out);
            if !out.is_empty() {
                match Pin::new(&mut self.io).poll_write(cx, out) {
                    Poll::Ready(Ok(k)) => self.unsent.extend_from_slice(&out[k..]),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => self.unsent.extend_from_slice(out),
                }
            }
            Poll::Ready(Ok(step))
        })
    }
}
