//! The pool glue: which connection a request goes on (the origin's
//! HTTP/2 one, an idle HTTP/1.1 one the policy picks, or a new one
//! within the per-origin limit), and how it goes back with what it moved.

use super::*;

/// A live connection.
#[derive(Clone)]
pub(super) struct Conn {
    pub(super) sender: Sender,
    /// A duplicate of the socket's fd, for TCP_INFO.
    pub(super) fd: Arc<OwnedFd>,
    pub(super) history: History,
    pub(super) burst: BurstMeter,
    pub(super) local: Option<SocketAddr>,
    pub(super) peer: Option<SocketAddr>,
    pub(super) peak_read: Arc<std::sync::atomic::AtomicUsize>,
    /// What the kernel held after the buffer policy, and its warnings.
    pub(super) buffers: tcpwise_tcp::AppliedBuffers,
    /// The raw response head, HTTP/1.x.
    pub(super) tap: Arc<Mutex<TapState>>,
    /// How the connection was made when it was not the first address
    /// (Happy Eyeballs).
    pub(super) note: Option<String>,
}

/// Where a connection goes: scheme, host, port, and the proxy it goes
/// through.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Origin {
    pub(super) scheme: String,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) via: Option<Proxy>,
}

impl Conn {
    /// The frames counted, when a control-frame flood stopped this
    /// connection ([`crate::h2frames`]).
    pub(super) fn flood(&self) -> Option<u32> {
        self.tap.lock().ok()?.flood
    }
}

impl Origin {
    pub(super) fn target(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Most payload delivered within any window of one RTT (the receiver's
/// view of a congestion window's worth).
pub(super) struct PerRtt {
    pub(super) window: u64,
    /// (arrival time, bytes before this frame) of frames within one window.
    pub(super) samples: VecDeque<(u64, u64)>,
    pub(super) max: u64,
}

impl PerRtt {
    pub(super) fn record(&mut self, now: u64, before: u64, after: u64) {
        self.samples.push_back((now, before));
        while let Some(&(t, _)) = self.samples.front() {
            if now.saturating_sub(t) > self.window {
                self.samples.pop_front();
            } else {
                break;
            }
        }
        let base = self.samples.front().map_or(before, |s| s.1);
        self.max = self.max.max(after - base);
    }
}

impl Client {
    pub(super) fn semaphore(&self, origin: &Origin) -> Arc<Semaphore> {
        self.inner
            .limits
            .lock()
            .expect("lock")
            .entry(origin.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(self.inner.cfg.max_conns_per_origin.max(1))))
            .clone()
    }
}

impl Client {
    pub(super) fn report(&self, conn: &Conn, choice: Option<tcpwise_pool::Choice>) -> ConnReport {
        let choice_is_none = choice.is_none();
        ConnReport {
            id: conn.history.id,
            reused: choice.is_some(),
            policy: self.inner.cfg.policy.name().to_string(),
            reason: choice.as_ref().map(|c| c.reason.clone()),
            candidates: choice.map(|c| c.candidates).unwrap_or_default(),
            history: conn.history.clone(),
            max_burst: conn.burst.max_activation,
            burst_before: conn.history.max_burst,
            tcp_info_start: None,
            tcp_info_end: None,
            local: conn.local,
            peer: conn.peer,
            max_read: conn.peak_read.load(std::sync::atomic::Ordering::Relaxed),
            buffers: conn.buffers.clone(),
            tls: conn.tap.lock().expect("lock").tls.facts(),
            fastopen: None,
            connect_note: conn.note.clone().filter(|_| choice_is_none),
            quic: None,
        }
    }

    /// TCP_INFO of the HTTP/2 connection this client holds to `url`'s
    /// origin, while it is open (`None` over HTTP/1.1, whose connections
    /// are checked out while in use): a load generator reads what the
    /// peer acknowledged from it.
    pub fn h2_tcp_info(&self, url: &Url) -> Option<TcpInfo> {
        let origin = Self::origin(&Request::get(url.clone())).ok()?;
        let map = self.inner.h2.lock().expect("lock");
        map.get(&origin).and_then(|c| TcpInfo::of(&*c.fd))
    }

    /// The origin's HTTP/2 connection, when it is open, reported as reused.
    pub(super) fn h2_conn(&self, origin: &Origin) -> Option<(Conn, ConnReport)> {
        let mut map = self.inner.h2.lock().expect("lock");
        let conn = map.get(origin)?.clone();
        if conn.sender.is_closed() {
            map.remove(origin);
            return None;
        }
        let mut report = self.report(&conn, None);
        report.reused = true;
        report.reason = Some(
            "HTTP/2: the origin's one connection, shared by every stream (the pool policy applies to HTTP/1.1 connections)"
                .into(),
        );
        Some((conn, report))
    }

    pub(super) async fn take(
        &self,
        origin: &Origin,
        start: Instant,
        t: &mut Timings,
        early: bool,
    ) -> Result<(Conn, ConnReport), HttpError> {
        // With HTTP/2 on offer, one connection per origin: whoever comes
        // first opens it, the others wait and share it.
        let _opening = if self.inner.cfg.version != Version::Http1 {
            if let Some(c) = self.h2_conn(origin) {
                return Ok(c);
            }
            let lock = self
                .inner
                .opening
                .lock()
                .expect("lock")
                .entry(origin.clone())
                .or_default()
                .clone();
            let g = lock.lock_owned().await;
            if let Some(c) = self.h2_conn(origin) {
                return Ok(c);
            }
            Some(g)
        } else {
            None
        };
        let now = self.now();
        let (got, closed) =
            self.inner
                .pool
                .lock()
                .expect("lock")
                .checkout(now, origin, |c: &Conn| !c.sender.is_closed());
        drop(closed);
        if let Some((mut conn, history, choice)) = got {
            conn.history = history;
            let report = self.report(&conn, Some(choice));
            return Ok((conn, report));
        }
        let conn = self.connect_new(origin, start, t, early).await?;
        let report = self.report(&conn, None);
        Ok((conn, report))
    }

    /// A new connection to `origin`; an HTTP/2 one becomes the origin's
    /// one, shared by every stream.
    pub(super) async fn connect_new(
        &self,
        origin: &Origin,
        start: Instant,
        t: &mut Timings,
        early: bool,
    ) -> Result<Conn, HttpError> {
        let conn = self.connect(origin, start, t, early).await?;
        if conn.sender.h2() {
            self.inner
                .h2
                .lock()
                .expect("lock")
                .insert(origin.clone(), conn.clone());
        }
        Ok(conn)
    }

    pub(super) fn give_back(&self, origin: Origin, conn: Conn, got: u64, per_rtt: u64) {
        if conn.sender.h2() {
            // Streams run at once: add this one's share to the shared record.
            if let Some(c) = self.inner.h2.lock().expect("lock").get_mut(&origin) {
                c.history.requests += 1;
                c.history.bytes_read += got;
                c.history.max_burst = c.history.max_burst.max(conn.history.max_burst);
                c.history.max_per_rtt = c.history.max_per_rtt.max(per_rtt);
                c.history.srtt = conn.history.srtt;
                c.history.rto = conn.history.rto;
            }
            return;
        }
        if conn.sender.is_closed() {
            return;
        }
        let history = conn.history.clone();
        let closed =
            self.inner
                .pool
                .lock()
                .expect("lock")
                .checkin(self.now(), origin, conn, history);
        drop(closed);
    }
}
