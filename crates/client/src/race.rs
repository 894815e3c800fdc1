//! Happy Eyeballs v2 (RFC 8305): connection attempts to a name's
//! addresses, interleaved by family and started one connection-attempt
//! delay apart (or at once when the one before fails), the first to
//! connect wins and the others are dropped (their sockets closed). A name
//! whose IPv6 path is broken (blackholed) then costs one delay, not a
//! connect timeout.
//!
//! Resolution: the system's resolver (glibc's `getaddrinfo`) already
//! sends the AAAA and A queries in parallel and answers once with both,
//! sorted by RFC 6724, so the RFC's 50 ms resolution delay never applies;
//! `--resolve` gives the addresses directly.

use super::*;

/// RFC 8305's recommended connection-attempt delay. curl uses 200 ms,
/// Chromium 300 ms: the delay is what a broken first family costs, and a
/// healthy path slower than it gets a duplicate attempt (see docs).
pub const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// The order to try: the first address's family first (the resolver's
/// preference), then alternating families, each family in its own order
/// (RFC 8305 §4, First Address Family Count 1).
pub fn interleave(addrs: &[SocketAddr]) -> Vec<SocketAddr> {
    let Some(first) = addrs.first() else {
        return Vec::new();
    };
    let (mut a, mut b): (VecDeque<SocketAddr>, VecDeque<SocketAddr>) = addrs
        .iter()
        .copied()
        .partition(|x| x.is_ipv6() == first.is_ipv6());
    let mut out = Vec::with_capacity(addrs.len());
    while !a.is_empty() || !b.is_empty() {
        out.extend(a.pop_front());
        out.extend(b.pop_front());
    }
    out
}

/// A connected socket, the buffers the policy left on it, its address,
/// and how the race went when it was one.
pub(super) struct Won {
    pub(super) stream: TcpStream,
    pub(super) buffers: tcpwise_tcp::AppliedBuffers,
    pub(super) addr: SocketAddr,
    pub(super) note: Option<String>,
    /// When the attempt saw its socket connected: curl's `time_connect`
    /// instant (the race's bookkeeping after it is not the handshake's).
    pub(super) at: Instant,
}

impl Client {
    /// Connects to one of `addrs`: raced with `delay` between attempts
    /// (`None`: one after the other, each until it fails or times out).
    pub(super) async fn race(
        &self,
        addrs: &[SocketAddr],
        dial: &str,
        delay: Option<Duration>,
    ) -> Result<Won, HttpError> {
        let order = match delay {
            Some(_) => interleave(addrs),
            None => addrs.to_vec(),
        };
        let mut attempts = tokio::task::JoinSet::new();
        let mut next = 0;
        let mut failed: Vec<String> = Vec::new();
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        let start = tokio::time::Instant::now();
        // Attempts start at once, not through a timer due now: tokio's
        // timer rounds a deadline up to its next 1 ms tick, which made
        // every connection's time_connect 1.2-1.4 ms on loopback where
        // curl's is 0.25 ms (2 Dec). The timer runs only for the delay.
        let far = start + Duration::from_secs(86_400 * 365);
        // The next attempt: one delay on (or when this one fails).
        let due = || delay.map_or(far, |d| tokio::time::Instant::now() + d);
        let timer = tokio::time::sleep_until(far);
        tokio::pin!(timer);
        let limit = self.inner.cfg.connect_timeout;
        let launch = |attempts: &mut tokio::task::JoinSet<_>, next: &mut usize| {
            let addr = order[*next];
            *next += 1;
            // The SYN leaves here, before the task hop to the waiter.
            let opened = self.open(addr);
            attempts.spawn(async move { (addr, connected(opened, limit).await) });
        };
        if !order.is_empty() {
            launch(&mut attempts, &mut next);
            timer.as_mut().reset(due());
        }
        loop {
            let more = next < order.len();
            tokio::select! {
                _ = &mut timer, if more => {
                    launch(&mut attempts, &mut next);
                    timer.as_mut().reset(due());
                }
                Some(done) = attempts.join_next() => {
                    let (addr, r) = done.map_err(|e| HttpError::connect(dial, std::io::Error::other(e)))?;
                    match r {
                        // A setting no address can take (the buffer policy):
                        // the same for every attempt, so the error as it is.
                        Err(Fail::Fatal(e)) => return Err(e),
                        Ok((stream, buffers, at)) => {
                            // Dropping the set cancels the other attempts.
                            attempts.abort_all();
                            let note = (addr != order[0]).then(|| {
                                let pending = order[..next]
                                    .iter()
                                    .filter(|a| **a != addr && !failed.iter().any(|f| f.starts_with(&a.to_string())))
                                    .map(|a| format!("{a} had not connected"))
                                    .collect::<Vec<_>>();
                                let mut why = failed.clone();
                                why.extend(pending);
                                format!(
                                    "{addr} won after {:.0} ms ({}; {})",
                                    start.elapsed().as_secs_f64() * 1e3,
                                    why.join(", "),
                                    delay.map_or("addresses tried one after the other".to_string(), |d| {
                                        format!("Happy Eyeballs, attempts {} ms apart", d.as_millis())
                                    }),
                                )
                            });
                            return Ok(Won {
                                stream,
                                buffers,
                                addr,
                                note,
                                at,
                            });
                        }
                        Err(Fail::Io(e)) => {
                            failed.push(format!("{addr} failed: {e}"));
                            last = std::io::Error::new(e.kind(), format!("{addr}: {e}"));
                            // A failure starts the next attempt at once.
                            if more {
                                launch(&mut attempts, &mut next);
                                timer.as_mut().reset(due());
                            } else if attempts.is_empty() {
                                return Err(HttpError::connect(dial, last));
                            }
                        }
                    }
                }
                else => return Err(HttpError::connect(dial, last)),
            }
        }
    }

    /// One attempt's start: a socket with the policy's sizes set and its
    /// connect issued (non-blocking: `EINPROGRESS`, or done at once under
    /// TCP Fast Open, whose SYN leaves with the first write).
    fn open(
        &self,
        addr: SocketAddr,
    ) -> Result<(socket2::Socket, tcpwise_tcp::AppliedBuffers), Fail> {
        let cfg = &self.inner.cfg;
        let raw = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )?;
        let applied = cfg
            .buffers
            .apply_sizes(&raw)
            .map_err(|e| Fail::Fatal(e.into()))?;
        if let Some(cc) = &cfg.congestion {
            tcpwise_tcp::set_congestion(&socket2::SockRef::from(&raw), cc)
                .map_err(std::io::Error::other)?;
        }
        if let Some(t) = cfg.tcp_keepalive {
            raw.set_tcp_keepalive(&socket2::TcpKeepalive::new().with_time(t).with_interval(t))?;
        }
        if cfg.fastopen {
            tcpwise_tcp::fastopen::enable_connect(&raw)?;
        }
        raw.set_nonblocking(true)?;
        match raw.connect(&addr.into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(Fail::Io(e)),
        }
        Ok((raw, applied))
    }
}

/// An opened attempt, connected within `limit`: the stream, its buffers
/// (their autotuning ceilings are read after the first byte, out of every
/// clock of `-w`) and when it connected.
async fn connected(
    opened: Result<(socket2::Socket, tcpwise_tcp::AppliedBuffers), Fail>,
    limit: Duration,
) -> Result<(TcpStream, tcpwise_tcp::AppliedBuffers, Instant), Fail> {
    let (raw, applied) = opened?;
    let stream = TcpStream::from_std(std::net::TcpStream::from(raw))?;
    // What tokio's own connect does: writable, then the socket's error.
    let done = async {
        stream.writable().await?;
        match stream.take_error()? {
            Some(e) => Err(e),
            None => Ok(Instant::now()),
        }
    };
    match tokio::time::timeout(limit, done).await {
        Ok(r) => Ok((stream, applied, r?)),
        Err(_) => Err(Fail::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "no answer within {:.1} s (--connect-timeout)",
                limit.as_secs_f64()
            ),
        ))),
    }
}

/// Why an attempt failed: this address (try the next), or the settings.
enum Fail {
    Io(std::io::Error),
    Fatal(HttpError),
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Fail {
        Fail::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_alternate_from_the_resolvers_first() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        let got = interleave(&[
            a("[2001:2::1]:80"),
            a("[2001:2::2]:80"),
            a("[2001:2::3]:80"),
            a("198.18.0.1:80"),
            a("198.18.0.2:80"),
        ]);
        let want = [
            "[2001:2::1]:80",
            "198.18.0.1:80",
            "[2001:2::2]:80",
            "198.18.0.2:80",
            "[2001:2::3]:80",
        ];
        assert_eq!(got, want.map(a));
        // IPv4 first when the resolver put it first; one family alone
        // keeps its order.
        let got = interleave(&[a("198.18.0.1:80"), a("[2001:2::1]:80"), a("198.18.0.2:80")]);
        assert_eq!(
            got,
            ["198.18.0.1:80", "[2001:2::1]:80", "198.18.0.2:80"].map(a)
        );
        assert_eq!(
            interleave(&[a("198.18.0.2:80"), a("198.18.0.1:80")]),
            [a("198.18.0.2:80"), a("198.18.0.1:80")]
        );
        assert!(interleave(&[]).is_empty());
    }
}
