//! One HTTP/1.1 connection: its state between reads, the fast path that
//! parses and answers every complete request of a read into one write,
//! and the hand-off of long work to [`super::stream`].

use super::*;

/// A request whose answer leaves the fast path.
pub(super) struct Slow {
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
    pub(super) agent: Option<(String, String)>,
    /// When its head was complete.
    pub(super) started: Instant,
    /// Compress the answer (`--gzip`, and the client accepts it).
    pub(super) gzip: bool,
}

/// What one fast step ended with.
pub(super) enum Step {
    /// Every complete request was answered; read more.
    Again,
    /// A request needs the slow path (its head is consumed, its body is not).
    Slow(Box<Slow>),
    /// Close once the output is written (`true`: the client may still be
    /// sending, so drain before closing).
    Close(bool),
}

pub(super) struct Conn<S> {
    pub(super) io: S,
    pub(super) id: u64,
    pub(super) peer: SocketAddr,
    pub(super) log: bool,
    /// Input not yet consumed (a partial request, or requests not yet answered).
    pub(super) pending: Vec<u8>,
    /// `pending` may hold complete requests: answer them before reading.
    pub(super) more: bool,
    /// Output the socket did not take yet.
    pub(super) unsent: Vec<u8>,
    pub(super) lim: Limits,
    /// When the wait for the current request head began: the connection's
    /// start, the end of the last answer, or the first byte of a partial head.
    pub(super) since: Instant,
    /// A partial head is pending (the header timeout runs).
    pub(super) in_head: bool,
    /// Requests answered.
    pub(super) answered: u64,
    /// `--root`: files instead of the routes.
    pub(super) root: Option<Arc<files::Root>>,
    /// `--gzip`.
    pub(super) gzip: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<S> {
    pub(super) fn new(io: S, id: u64, peer: SocketAddr, log: bool, lim: Limits) -> Self {
        Conn {
            io,
            id,
            peer,
            log,
            pending: Vec::new(),
            more: false,
            unsent: Vec::new(),
            lim,
            since: Instant::now(),
            in_head: true,
            answered: 0,
            root: None,
            gzip: false,
        }
    }

    pub(super) fn with_root(mut self, root: Option<Arc<files::Root>>, gzip: bool) -> Self {
        self.root = root;
        self.gzip = gzip;
        self
    }

    /// When the current wait times out.
    pub(super) fn deadline(&self) -> Instant {
        if self.in_head || self.answered == 0 {
            self.since + self.lim.header_timeout
        } else {
            self.since + self.lim.idle_timeout
        }
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
                        let what = if self.in_head || self.answered == 0 {
                            "request head not complete within --header-timeout"
                        } else {
                            "idle longer than --idle-timeout"
                        };
                        if self.log {
                            log!("conn={} peer={} closed: {what}", self.id, self.peer);
                        }
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
            // The header timeout runs from a partial head's first byte and
            // restarts with every answered request; idle time runs from the
            // last answer.
            let was_in_head = self.in_head;
            self.in_head = !self.pending.is_empty();
            if answered != self.answered || !self.in_head || !was_in_head {
                self.since = Instant::now();
            }
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

    /// Takes newly read bytes (`None`: none, answer what is pending) and
    /// answers every complete request into `out`; keeps the rest.
    pub(super) fn consume(&mut self, data: Option<&[u8]>, out: &mut Vec<u8>) -> Step {
        let mut pend = std::mem::take(&mut self.pending);
        let direct = match data {
            // The common case: nothing pending, parse the read in place.
            Some(d) if pend.is_empty() => Some(d),
            Some(d) => {
                pend.extend_from_slice(d);
                None
            }
            None => None,
        };
        let input = direct.unwrap_or(&pend);
        let (used, step) = with_date(|date| self.answer(input, out, date));
        match direct {
            Some(d) => self.pending.extend_from_slice(&d[used..]),
            None => {
                pend.drain(..used);
                if !pend.is_empty() {
                    self.pending = pend;
                }
            }
        }
        step
    }

    /// Answers the complete requests at the front of `input` into `out`:
    /// (bytes consumed, what next). Sets `self.more` when it stopped with
    /// complete requests possibly left.
    pub(super) fn answer(&mut self, input: &[u8], out: &mut Vec<u8>, date: &[u8]) -> (usize, Step) {
        let mut at = 0;
        self.more = false;
        loop {
            if out.len() >= OUT_HIGH {
                self.more = at < input.len();
                return (at, Step::Again);
            }
            let req = match h1::parse_request(&input[at..], self.lim.max_head) {
                Ok(Some(r)) => r,
                Ok(None) => return (at, Step::Again),
                Err(e) => {
                    let status = if e == FramingError::HeadTooLarge {
                        431
                    } else {
                        400
                    };
                    let msg = format!("{e}\n");
                    self.answering(&Logged {
                        request: "-",
                        minor: 1,
                        status,
                        bytes: Some(msg.len() as u64),
                        agent: ("-", "-"),
                        started: None,
                    });
                    put_text(out, status, 1, false, None, &msg, false, date);
                    return (input.len(), Step::Close(true));
                }
            };
            let mut reply = if self.root.is_some() {
                // Every file answer reads the disk: the slow path.
                Reply {
                    status: 200,
                    body: Body::File,
                    delay_ms: 0,
                    allow: None,
                }
            } else {
                routes::route(req.method, req.target, &self.lim)
            };
            if let (Body::Echo, BodyLen::Length(n)) = (&reply.body, req.body)
                && n > self.lim.max_body
            {
                let max = self.lim.max_body;
                reply = Reply::text(
                    413,
                    format!("/echo takes bodies up to {max} bytes (--max-body)\n"),
                );
            }
            let head = req.method == "HEAD";
            let body_in = &input[at + req.len..];
            let body_ready = match req.body {
                BodyLen::Length(n) => n <= body_in.len() as u64,
                BodyLen::Chunked => false,
            };
            let reply_small = match &reply.body {
                Body::Pattern { len, .. } => head || *len <= INLINE_BODY,
                Body::Echo | Body::Text(_) => true,
                Body::File => false,
            };
            // Compression streams in chunks: an HTTP/1.1 client only.
            let gzip = self.gzip
                && req.accept_gzip
                && req.minor == 1
                && matches!(
                    reply.body,
                    Body::Text(_) | Body::Pattern { .. } | Body::File
                );
            let inline = reply.delay_ms == 0 && body_ready && reply_small && !gzip;
            if !inline {
                let slow = Slow {
                    reply,
                    method: req.method.to_string(),
                    target: req.target.to_string(),
                    minor: req.minor,
                    keep_alive: req.keep_alive,
                    head,
                    body: req.body,
                    expect_continue: req.expect_continue,
                    agent: self.log.then(|| {
                        (
                            req.referer.unwrap_or("-").to_string(),
                            req.user_agent.unwrap_or("-").to_string(),
                        )
                    }),
                    started: Instant::now(),
                    gzip,
                    cond: {
                        let c = |i: usize| req.cond[i].map(String::from);
                        files::Conditional {
                            range: c(0),
                            if_range: c(1),
                            if_none_match: c(2),
                            if_modified_since: c(3),
                        }
                    },
                };
                return (at + req.len, Step::Slow(Box::new(slow)));
            }
            let body_len = match req.body {
                BodyLen::Length(n) => n as usize,
                BodyLen::Chunked => unreachable!("chunked bodies take the slow path"),
            };
            if self.log {
                let bytes = match &reply.body {
                    _ if head => 0,
                    Body::Text(t) => t.len() as u64,
                    Body::Pattern { len, .. } => *len,
                    Body::Echo => body_len as u64,
                    Body::File => 0,
                };
                let request = format!("{} {}", req.method, req.target);
                self.answering(&Logged {
                    request: &request,
                    minor: req.minor,
                    status: reply.status,
                    bytes: Some(bytes),
                    agent: (req.referer.unwrap_or("-"), req.user_agent.unwrap_or("-")),
                    started: None,
                });
            } else {
                self.answered += 1;
            }
            let keep = req.keep_alive;
            match &reply.body {
                Body::Text(t) => put_text(
                    out,
                    reply.status,
                    req.minor,
                    keep,
                    reply.allow,
                    t,
                    head,
                    date,
                ),
                Body::Echo => {
                    let h = h1::ResponseHead {
                        status: 200,
                        minor: req.minor,
                        keep_alive: keep,
                        body: BodyLen::Length(body_len as u64),
                        content_type: Some("application/octet-stream"),
                        allow: None,
                    };
                    h1::put_response_head(out, &h, date);
                    if !head {
                        out.extend_from_slice(&body_in[..body_len]);
                    }
                }
                Body::File => unreachable!("file answers take the slow path"),
                Body::Pattern { len, chunked } => {
                    put_pattern_head(out, reply.status, req.minor, keep, *len, *chunked, date);
                    if !head {
                        let data = pattern::slice(0, *len as usize);
                        if *chunked {
                            h1::put_chunk(out, data);
                            out.extend_from_slice(h1::LAST_CHUNK);
                        } else {
                            out.extend_from_slice(data);
                        }
                    }
                }
            }
            at += req.len + body_len;
            if !keep {
                return (input.len(), Step::Close(at < input.len()));
            }
        }
    }

    /// Counts an answer and, with `--access-log`, writes its line in
    /// nginx's `combined` format followed by the request time in seconds
    /// (nginx's `$request_time`), quotes in strings escaped as nginx does.
    pub(super) fn answering(&mut self, l: &Logged) {
        self.answered += 1;
        if self.log {
            let q = |s: &str| s.replace('"', "\\x22");
            let secs = l.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
            log!(
                "{} - - [{}] \"{} HTTP/1.{}\" {} {} \"{}\" \"{}\" {secs:.3}",
                self.peer.ip(),
                access_time(SystemTime::now()),
                q(l.request),
                l.minor,
                l.status,
                l.bytes.map_or_else(|| "-".to_string(), |b| b.to_string()),
                q(l.agent.0),
                q(l.agent.1)
            );
        }
    }

    /// `answering` for a request off the fast path.
    pub(super) fn answering_slow(&mut self, s: &Slow, status: u16, bytes: Option<u64>) {
        let request = format!("{} {}", s.method, s.target);
        let agent = s
            .agent
            .as_ref()
            .map_or(("-", "-"), |(r, u)| (r.as_str(), u.as_str()));
        self.answering(&Logged {
            request: &request,
            minor: s.minor,
            status,
            bytes: if s.head { Some(0) } else { bytes },
            agent,
            started: Some(s.started),
        });
    }
}
