//! The I/O-free core of an HTTP/1.1 connection: bytes in, answers out.
//! [`Core::consume`] takes what a read returned and writes the answers to
//! every complete request into a buffer, keeping a partial request for
//! the next call; it never touches a socket or a timer, so tests and the
//! fuzzer drive it directly, and [`super::conn::Conn`] is only the glue
//! that reads, writes and waits. (quinn-proto's `Connection` is the model.)

use super::*;

/// A connection's state between reads, without its socket.
pub struct Core {
    pub(super) id: u64,
    pub(super) peer: SocketAddr,
    pub(super) log: bool,
    /// Input not yet consumed (a partial request, or requests not yet answered).
    pub(super) pending: Vec<u8>,
    /// `pending` may hold complete requests: answer them before reading.
    pub(super) more: bool,
    pub(super) lim: Limits,
    /// When the wait for the current request head began: the connection's
    /// start, the end of the last answer, or the first byte of a partial head.
    pub(super) since: Instant,
    /// A partial head is pending (the header timeout runs).
    pub(super) in_head: bool,
    /// Bytes at the front of `pending` known to hold no head's end: a
    /// partial head is parsed again only once its end may have arrived,
    /// not from its start on every read (13,000-line heads sent a line a
    /// read cost a full core at 659 requests/s).
    pub(super) scanned: usize,
    /// Requests answered.
    pub(super) answered: u64,
    /// `--root`: files instead of the routes.
    pub(super) root: Option<Arc<files::Root>>,
    /// `--gzip`.
    pub(super) gzip: bool,
    /// `http` or `https` (the responsiveness config names it).
    pub(super) scheme: &'static str,
    /// TLS: whether the handshake is complete (until it is, requests are
    /// early data, see [`super::zero_rtt`]).
    pub(super) handshake: Option<Handshake>,
}

impl Core {
    /// A new connection's core: no access log, no `--root`, no `--gzip`.
    pub fn new(limits: Limits) -> Core {
        Core::with(0, SocketAddr::from(([0, 0, 0, 0], 0)), false, limits)
    }

    pub(super) fn with(id: u64, peer: SocketAddr, log: bool, lim: Limits) -> Core {
        Core {
            id,
            peer,
            log,
            pending: Vec::new(),
            more: false,
            lim,
            since: Instant::now(),
            in_head: true,
            scanned: 0,
            answered: 0,
            root: None,
            gzip: false,
            scheme: "http",
            handshake: None,
        }
    }

    /// Whether complete requests may be waiting in what it kept: call
    /// [`consume`](Core::consume) with `None` before reading more.
    pub fn has_more(&self) -> bool {
        self.more
    }

    /// When the current wait times out.
    pub(super) fn deadline(&self) -> Instant {
        if self.in_head || self.answered == 0 {
            self.since + self.lim.header_timeout
        } else {
            self.since + self.lim.idle_timeout
        }
    }

    /// Moves the timeout's start after a step that began with `answered`
    /// requests answered: the header timeout runs from a partial head's
    /// first byte and restarts with every answered request; idle time runs
    /// from the last answer.
    pub(super) fn stepped(&mut self, answered: u64) {
        self.stepped_at(answered, Instant::now());
    }

    /// [`stepped`](Core::stepped) with the time already read.
    pub(super) fn stepped_at(&mut self, answered: u64, now: Instant) {
        let was_in_head = self.in_head;
        self.in_head = !self.pending.is_empty();
        if answered != self.answered || !self.in_head || !was_in_head {
            self.since = now;
        }
    }

    /// Logs (with `--access-log`) why a connection past its
    /// [`deadline`](Core::deadline) is closed.
    pub(super) fn timed_out(&self) {
        let what = if self.in_head || self.answered == 0 {
            "request head not complete within --header-timeout"
        } else {
            "idle longer than --idle-timeout"
        };
        if self.log {
            log!("conn={} peer={} closed: {what}", self.id, self.peer);
        }
    }

    /// Takes newly read bytes (`None`: none, answer what is pending) and
    /// answers every complete request into `out`; keeps the rest.
    ///
    /// Its buffers stay bounded whatever the input: what it keeps is at
    /// most the head limit (or what it kept before) plus one read, what
    /// it writes at most the high-water mark plus one inline body (checked
    /// in debug builds, which is what the fuzzer runs).
    pub fn consume(&mut self, data: Option<&[u8]>, out: &mut Vec<u8>) -> Step {
        let (read, before) = (data.map_or(0, <[u8]>::len), out.len());
        // A connection handed over from io_uring may arrive with more kept
        // than one read (input held while its answers waited): never more.
        let kept = self.pending.len().max(self.lim.max_head);
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
        debug_assert!(
            self.pending.len() <= kept + read + READ_BUF,
            "pending {}",
            self.pending.len()
        );
        debug_assert!(
            out.len() - before <= OUT_HIGH + INLINE_BODY as usize + 4096,
            "out {}",
            out.len() - before
        );
        step
    }

    /// A request head that does not parse: 431 or 400, logged, and the
    /// connection closed after it.
    fn refuse_framing(&mut self, e: &FramingError, out: &mut Vec<u8>, date: &[u8]) {
        let status = if *e == FramingError::HeadTooLarge {
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
            agent: ("-", "-", None),
            started: None,
        });
        put_text(out, status, 1, false, None, &msg, false, date);
    }

    /// What a request gets: the route (every file answer reads the disk,
    /// so `--root` is the slow path), 425 for an unsafe method in early
    /// data, 413 for an echo over `--max-body`.
    fn reply_for(&self, req: &h1::RequestHead<'_>) -> Reply {
        let mut reply = if self.root.is_some() {
            Reply {
                status: 200,
                body: Body::File,
                delay_ms: 0,
                allow: None,
                identity: false,
            }
        } else {
            routes::route(req.method, req.target, (self.scheme, req.host), &self.lim)
        };
        if self.handshake.as_ref().is_some_and(|h| !h.complete())
            && let Some(r) = routes::too_early(req.method)
        {
            reply = r;
        }
        if let (Body::Echo, BodyLen::Length(n)) = (&reply.body, req.body)
            && n > self.lim.max_body
        {
            let max = self.lim.max_body;
            reply = Reply::text(
                413,
                format!("/echo takes bodies up to {max} bytes (--max-body)\n"),
            );
        }
        // HTTP/1.0 has no chunked coding (RFC 9112 6.1): a sized body.
        if req.minor == 0
            && let Body::Pattern { chunked, .. } = &mut reply.body
        {
            *chunked = false;
        }
        reply
    }

    /// The request as the async path takes it over, owning its words.
    fn slow(&self, req: &h1::RequestHead<'_>, reply: Reply, gzip: bool) -> Slow {
        let head = req.method == "HEAD";
        Slow {
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
                    req.authorization.map(String::from),
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
                    if_match: c(4),
                    if_unmodified_since: c(5),
                }
            },
        }
    }

    /// Counts an answer of the fast path, and logs it with `--access-log`.
    fn count_inline(
        &mut self,
        req: &h1::RequestHead<'_>,
        reply: &Reply,
        head: bool,
        body_len: usize,
    ) {
        if self.log {
            let bytes = match &reply.body {
                _ if head => 0,
                Body::Text(t) => t.len() as u64,
                Body::Json(t) => t.len() as u64,
                Body::Pattern { len, .. } => *len,
                Body::Echo => body_len as u64,
                Body::File | Body::Sink => 0,
            };
            let request = format!("{} {}", req.method, req.target);
            self.answering(&Logged {
                request: &request,
                minor: req.minor,
                status: reply.status,
                bytes: Some(bytes),
                agent: (
                    req.referer.unwrap_or("-"),
                    req.user_agent.unwrap_or("-"),
                    req.authorization,
                ),
                started: None,
            });
        } else {
            self.answered += 1;
        }
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
            if at == 0 && self.scanned > 0 {
                let seen = std::mem::take(&mut self.scanned);
                if seen <= input.len()
                    && input.len() <= self.lim.max_head
                    && !h1::may_end_head(input, seen)
                {
                    self.scanned = input.len();
                    return (0, Step::Again);
                }
            }
            let req = match h1::parse_request(&input[at..], self.lim.max_head) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    self.scanned = input.len() - at;
                    return (at, Step::Again);
                }
                Err(e) => {
                    self.refuse_framing(&e, out, date);
                    return (input.len(), Step::Close(true));
                }
            };
            let reply = self.reply_for(&req);
            let head = req.method == "HEAD";
            let body_in = &input[at + req.len..];
            let body_ready = match req.body {
                BodyLen::Length(n) => n <= body_in.len() as u64,
                BodyLen::Chunked => false,
            };
            let reply_small = match &reply.body {
                Body::Pattern { len, .. } => head || *len <= INLINE_BODY,
                Body::Echo | Body::Text(_) | Body::Json(_) => true,
                Body::File | Body::Sink => false,
            };
            // Compression streams in chunks: an HTTP/1.1 client only.
            let gzip = self.gzip
                && !reply.identity
                && req.accept_gzip
                && req.minor == 1
                && matches!(
                    reply.body,
                    Body::Text(_) | Body::Pattern { .. } | Body::File
                );
            let inline = reply.delay_ms == 0 && body_ready && reply_small && !gzip;
            if !inline {
                let slow = self.slow(&req, reply, gzip);
                return (at + req.len, Step::Slow(Box::new(slow)));
            }
            let body_len = match req.body {
                BodyLen::Length(n) => n as usize,
                BodyLen::Chunked => unreachable!("chunked bodies take the slow path"),
            };
            self.count_inline(&req, &reply, head, body_len);
            let keep = req.keep_alive;
            put_inline(out, (&req, &reply, head), &body_in[..body_len], date);
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
                "{} - {} [{}] \"{} HTTP/1.{}\" {} {} \"{}\" \"{}\" {secs:.3}",
                self.peer.ip(),
                super::log::remote_user(l.agent.2),
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
        let agent = s.agent.as_ref().map_or(("-", "-", None), |(r, u, a)| {
            (r.as_str(), u.as_str(), a.as_deref())
        });
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

/// Writes an answer of the fast path: a text, an echo of `body`, JSON or
/// the pattern, whole, after its head.
fn put_inline(
    out: &mut Vec<u8>,
    (req, reply, head): (&h1::RequestHead<'_>, &Reply, bool),
    body: &[u8],
    date: &[u8],
) {
    let keep = req.keep_alive;
    let body_len = body.len();
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
                out.extend_from_slice(body);
            }
        }
        Body::Json(t) => put_typed(
            out,
            (reply.status, req.minor, keep, None),
            "application/json",
            t,
            head,
            date,
        ),
        Body::File | Body::Sink => unreachable!("these take the slow path"),
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
}
