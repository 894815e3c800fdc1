//! The slow path of a connection: bodies over one frame, delays, files,
//! gzip, `/echo`, and the lingering close, on the connection's own
//! buffers.

use super::*;

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<S> {
    /// Writes what the socket did not take, and flushes (TLS).
    pub(super) async fn flush(&mut self) -> io::Result<()> {
        if !self.unsent.is_empty() {
            let unsent = std::mem::take(&mut self.unsent);
            self.send(&unsent).await?;
        }
        self.io.flush().await
    }

    /// Writes all of `data` (and flushes TLS); a client that takes nothing
    /// for `--idle-timeout` is dropped.
    pub(super) async fn send(&mut self, data: &[u8]) -> io::Result<()> {
        let io = &mut self.io;
        match tokio::time::timeout(self.core.lim.idle_timeout, async {
            io.write_all(data).await?;
            io.flush().await
        })
        .await
        {
            Ok(r) => {
                if r.is_ok() {
                    self.sent += data.len() as u64;
                }
                r
            }
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing for --idle-timeout",
            )),
        }
    }

    /// Waits (with `--access-log` only) until the client has the whole
    /// answer, so the logged time runs to the last byte as nginx's
    /// `$request_time` is meant to (a write that fits in the send buffer
    /// ends long before a slow client has it all), at most
    /// `--idle-timeout`.
    ///
    /// First until it acknowledged every byte. A kernel does not announce
    /// that its application read them, but its advertised window tells
    /// bytes sit unread: if the window is then under half the widest seen
    /// (`since`: when the request came), a client that reads at once
    /// reopens it within milliseconds (Linux sends a window update once
    /// the window can double); one that does not (`curl --limit-rate`
    /// with an autotuned buffer) is waited for until it sends again or
    /// closes, which it does once it read them, provided it can tell the
    /// end without our close (`framed`).
    async fn delivered(&self, since: Option<u32>, framed: bool) {
        let Some(fd) = self.fd.filter(|_| self.core.log) else {
            return;
        };
        let give_up = Instant::now() + self.core.lim.idle_timeout;
        let tick = || tokio::time::sleep(Duration::from_millis(1));
        let window = || tcpwise_sys::peer_window(fd);
        let mut widest = since.unwrap_or(0);
        while matches!(tcpwise_sys::unacked_bytes(fd), Ok(n) if n > 0) && Instant::now() < give_up {
            widest = widest.max(window().unwrap_or(0));
            tick().await;
        }
        let reopened = || window().is_none_or(|w| w >= widest / 2);
        if !framed || reopened() {
            return;
        }
        let prompt = Instant::now() + Duration::from_millis(5);
        while Instant::now() < prompt {
            if reopened() {
                return;
            }
            tick().await;
        }
        while !tcpwise_sys::stirred(fd) && Instant::now() < give_up {
            tick().await;
        }
    }

    /// Answers one request off the fast path (`false`: close afterwards)
    /// and logs it once it ended: the bytes the body promised, or, for
    /// an answer cut short (the client went away), the bytes sent.
    pub(super) async fn slow(&mut self, s: Slow) -> io::Result<bool> {
        let mark = self.sent;
        let window = self.fd.and_then(tcpwise_sys::peer_window);
        self.answer = None;
        self.head_len = 0;
        let r = self.answer_slow(&s).await;
        if let Ok(keep) = r {
            let framed = keep || matches!(self.answer, Some((_, Some(_))));
            self.delivered(window, framed).await;
        }
        if let Some((status, promised)) = self.answer.take() {
            let sent = (self.sent - mark).saturating_sub(self.head_len);
            let bytes = match (&r, promised) {
                (Ok(_), Some(p)) => p,
                _ => sent,
            };
            self.answering_slow(&s, status, Some(bytes));
        }
        r
    }

    /// Reads more into `buf`; a client that sends nothing for
    /// `--idle-timeout` is dropped, and one that closes early is an error.
    pub(super) async fn receive(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        match tokio::time::timeout(self.core.lim.idle_timeout, self.io.read_buf(buf)).await {
            Ok(Ok(0)) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the client closed in the middle of a request body",
            )),
            Ok(r) => r.map(drop),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request body stalled for --idle-timeout",
            )),
        }
    }

    async fn answer_slow(&mut self, s: &Slow) -> io::Result<bool> {
        let Slow { reply, .. } = s;
        if reply.body == Body::File {
            return self.file(s).await;
        }
        if reply.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(reply.delay_ms)).await;
        }
        let bytes = match &reply.body {
            Body::Text(t) => Some(t.len() as u64),
            Body::Json(t) => Some(t.len() as u64),
            Body::Pattern { len, .. } => Some(*len),
            Body::Echo => match s.body {
                BodyLen::Length(n) => Some(n),
                BodyLen::Chunked => None,
            },
            Body::File | Body::Sink => None,
        };
        self.answer = Some((reply.status, bytes));
        if matches!(reply.body, Body::Echo | Body::Sink) {
            return self.echo(s, reply.body == Body::Echo).await;
        }
        // A body this route does not read (and that had not all arrived):
        // answer, then close rather than read it.
        let keep = s.keep_alive && s.body == BodyLen::Length(0);
        let mut head = Vec::new();
        if s.gzip {
            let ct = match &reply.body {
                Body::Text(_) => "text/plain; charset=utf-8",
                _ => "application/octet-stream",
            };
            let allow: Vec<(&str, String)> = reply
                .allow
                .map(|a| ("allow", a.to_string()))
                .into_iter()
                .collect();
            with_date(|d| put_gzip_head(&mut head, reply.status, keep, ct, &allow, d));
            self.head_len = head.len() as u64;
            self.send(&head).await?;
            if !s.head {
                match &reply.body {
                    Body::Text(t) => self.send_gzipped(t.as_bytes()).await?,
                    Body::Pattern { len, .. } => {
                        self.send_gzipped(pattern::Reader::new(*len)).await?;
                    }
                    Body::Json(_) | Body::Echo | Body::File | Body::Sink => {
                        unreachable!("answered above or never compressed")
                    }
                }
            }
            self.io.flush().await?;
            self.more = !self.pending.is_empty();
            return Ok(keep);
        }
        match &reply.body {
            Body::Text(t) => {
                with_date(|d| {
                    put_text(
                        &mut head,
                        reply.status,
                        s.minor,
                        keep,
                        reply.allow,
                        t,
                        s.head,
                        d,
                    )
                });
                self.head_len = head.len() as u64 - if s.head { 0 } else { t.len() as u64 };
                self.send(&head).await?;
            }
            Body::Json(t) => {
                let at = (reply.status, s.minor, keep, None);
                with_date(|d| put_typed(&mut head, at, "application/json", t, s.head, d));
                self.head_len = head.len() as u64 - if s.head { 0 } else { t.len() as u64 };
                self.send(&head).await?;
            }
            Body::Pattern { len, chunked } => {
                let (len, chunked) = (*len, *chunked);
                with_date(|d| {
                    put_pattern_head(&mut head, reply.status, s.minor, keep, len, chunked, d)
                });
                self.head_len = head.len() as u64;
                self.send(&head).await?;
                if !s.head {
                    self.send_pattern(len, chunked).await?;
                }
            }
            Body::Echo | Body::File | Body::Sink => unreachable!("answered above"),
        }
        self.io.flush().await?;
        self.more = !self.pending.is_empty();
        Ok(keep)
    }

    /// Answers a request under `--root`: a file (or its ranges), a
    /// listing, a redirect, a 304 or a refusal, as [`files::plan`] says.
    pub(super) async fn file(&mut self, s: &Slow) -> io::Result<bool> {
        use files::FileAnswer;
        use std::io::{Read, Seek, SeekFrom};
        let Some(root) = self.root.clone() else {
            return Err(io::Error::other("a file answer without --root"));
        };
        let plan = files::plan(&root, &s.method, &s.target, &s.cond);
        self.answer = Some((plan.status(), plan.body_len()));
        // A body this answer does not read (and that had not all arrived):
        // answer, then close rather than read it.
        let keep = s.keep_alive && s.body == BodyLen::Length(0);
        let mut head = Vec::new();
        let gzip = s.gzip && plan.compressible();
        with_date(|d| files::put_head(&mut head, &plan, s.minor, keep, gzip, d));
        self.head_len = head.len() as u64;
        self.send(&head).await?;
        if gzip && !s.head {
            match &plan {
                FileAnswer::Text { body, .. } => self.send_gzipped(body.as_bytes()).await?,
                FileAnswer::File { path, .. } => {
                    self.send_gzipped(std::fs::File::open(path)?).await?
                }
                FileAnswer::NotModified { .. } => {}
            }
        } else if !s.head {
            match &plan {
                FileAnswer::Text { body, .. } => self.send(body.as_bytes()).await?,
                FileAnswer::NotModified { .. } => {}
                FileAnswer::File {
                    path,
                    ranges,
                    boundary,
                    ..
                } => {
                    let mut f = std::fs::File::open(path)?;
                    let mut buf = vec![0u8; pattern::FRAME];
                    for (i, &(a, b)) in ranges.iter().enumerate() {
                        if boundary.is_some() {
                            self.send(plan.part_head(i).as_bytes()).await?;
                        }
                        f.seek(SeekFrom::Start(a))?;
                        let mut left = b - a + 1;
                        while left > 0 {
                            let n = (left as usize).min(buf.len());
                            // A file that shrank under us ends the
                            // connection: its length was promised.
                            f.read_exact(&mut buf[..n])?;
                            self.send(&buf[..n]).await?;
                            left -= n as u64;
                        }
                        if boundary.is_some() {
                            self.send(b"\r\n").await?;
                        }
                    }
                    if boundary.is_some() {
                        self.send(plan.multipart_end().as_bytes()).await?;
                    }
                }
            }
        }
        self.io.flush().await?;
        self.more = !self.pending.is_empty();
        Ok(keep)
    }

    /// Sends `src` gzip-compressed (fast level: a test origin), in chunks.
    pub(super) async fn send_gzipped(&mut self, mut src: impl std::io::Read) -> io::Result<()> {
        use std::io::Write as _;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut buf = vec![0u8; pattern::FRAME];
        let mut framed = Vec::new();
        loop {
            let n = src.read(&mut buf)?;
            if n == 0 {
                break;
            }
            enc.write_all(&buf[..n])?;
            if enc.get_ref().len() >= 16 * 1024 {
                framed.clear();
                h1::put_chunk(&mut framed, enc.get_ref());
                enc.get_mut().clear();
                self.send(&framed).await?;
            }
        }
        let rest = enc.finish()?;
        if !rest.is_empty() {
            framed.clear();
            h1::put_chunk(&mut framed, &rest);
            self.send(&framed).await?;
        }
        self.send(h1::LAST_CHUNK).await
    }

    pub(super) async fn send_pattern(&mut self, len: u64, chunked: bool) -> io::Result<()> {
        let mut off = 0;
        let mut framed = Vec::new();
        while off < len {
            let n = (len - off).min(pattern::FRAME as u64) as usize;
            let data = pattern::slice(off, n);
            if chunked {
                framed.clear();
                h1::put_chunk(&mut framed, data);
                self.send(&framed).await?;
            } else {
                self.send(data).await?;
            }
            off += n as u64;
        }
        if chunked {
            self.send(h1::LAST_CHUNK).await?;
        }
        Ok(())
    }

    /// Streams the request body back, framed as it came (`back`: `/echo`),
    /// or reads and discards it, of any size, and then answers with the
    /// count (`/nq/upload`).
    pub(super) async fn echo(&mut self, s: &Slow, back: bool) -> io::Result<bool> {
        let body = s.body;
        if s.expect_continue && self.pending.is_empty() {
            self.send(h1::CONTINUE).await?;
            self.head_len += h1::CONTINUE.len() as u64;
            self.io.flush().await?;
        }
        let mut out = Vec::new();
        let h = h1::ResponseHead {
            status: 200,
            minor: s.minor,
            keep_alive: s.keep_alive,
            body,
            content_type: Some("application/octet-stream"),
            allow: None,
        };
        if back {
            with_date(|d| h1::put_response_head(&mut out, &h, d));
            self.head_len += out.len() as u64;
            self.send(&out).await?;
        }
        let mut read = 0u64;
        let mut buf = std::mem::take(&mut self.pending);
        let mut decoder = h1::Chunked::new();
        let mut left = match body {
            BodyLen::Length(n) => n,
            BodyLen::Chunked => u64::MAX,
        };
        let mut at = 0;
        loop {
            // Pass on what is buffered.
            while at < buf.len() && left > 0 {
                match body {
                    BodyLen::Length(_) => {
                        let n = (left as usize).min(buf.len() - at);
                        if back && !s.head {
                            self.send(&buf[at..at + n]).await?;
                        }
                        read += n as u64;
                        at += n;
                        left -= n as u64;
                    }
                    BodyLen::Chunked => {
                        let p = decoder.next(&buf[at..]).map_err(io::Error::other)?;
                        out.clear();
                        h1::put_chunk(&mut out, &buf[at..][p.data.clone()]);
                        if p.done {
                            out.extend_from_slice(h1::LAST_CHUNK);
                            left = 0;
                        }
                        read += p.data.len() as u64;
                        if back && read > self.lim.max_body {
                            return Err(io::Error::other(format!(
                                "chunked /echo body over --max-body {} (response cut short)",
                                self.lim.max_body
                            )));
                        }
                        if back && !s.head {
                            self.send(&out).await?;
                        }
                        at += p.used;
                        if p.used == 0 {
                            break;
                        }
                    }
                }
            }
            if left == 0 {
                break;
            }
            buf.drain(..at);
            at = 0;
            if buf.capacity() < READ_BUF {
                buf.reserve(READ_BUF);
            }
            self.receive(&mut buf).await?;
        }
        buf.drain(..at);
        self.pending = if buf.is_empty() { Vec::new() } else { buf };
        self.more = !self.pending.is_empty();
        if !back {
            let text = format!("received {read} bytes\n");
            out.clear();
            let keep = s.keep_alive;
            with_date(|d| put_text(&mut out, 200, s.minor, keep, None, &text, s.head, d));
            self.head_len = (out.len() - text.len()) as u64;
            self.answer = Some((200, Some(text.len() as u64)));
            self.send(&out).await?;
        }
        Ok(s.keep_alive)
    }

    /// Closes after a final response: TLS `close_notify` or TCP FIN, then
    /// (`drain`) reads and drops what the client still sends for up to
    /// [`LINGER`], so the response is not lost to a reset.
    pub(super) async fn close(&mut self, drain: bool) -> io::Result<()> {
        let _ = tokio::time::timeout(LINGER, async {
            self.io.shutdown().await?;
            if drain {
                let mut sink = vec![0u8; 16 * 1024];
                while self.io.read(&mut sink).await? > 0 {}
            }
            Ok::<_, io::Error>(())
        })
        .await;
        Ok(())
    }
}
