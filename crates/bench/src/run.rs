//! The load itself (thin glue: framing is in [`crate::response`], the
//! timetable in [`crate::timetable`]). Each thread runs a single-threaded
//! tokio runtime with a `LocalSet`: its connections are tasks that share
//! the thread's statistics without locks.

use crate::response::Response;
use crate::shared::{Io, Opened, Shared, Stats, connect, open};
use crate::timetable::Timetable;
use crate::{BenchError, Errors, Options, Percentiles, Report};
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::time::{Duration, Instant};
use tcpwise_outcome::Shutdown;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Loads the target as `opts` says; `done` counts completed responses as
/// they come (for a progress bar); `stop` ends the run early, and the
/// report covers the time until then (the requests in flight are neither
/// responses nor errors, as at the end of `-d`).
pub fn run(opts: &Options, done: Arc<AtomicU64>, stop: Shutdown) -> Result<Report, BenchError> {
    opts.validate()?;
    let need = opts.connections as u64 + 64;
    let (soft, hard) = tcpwise_sys::fd_limit_for(need);
    if soft < need {
        return Err(BenchError::FdLimit {
            conns: opts.connections,
            need,
            hard,
        });
    }
    let host = opts.url.host_str().unwrap_or_default().to_string();
    let addr = opts
        .url
        .socket_addrs(|| None)
        .map_err(|e| BenchError::Resolve(host.clone(), e))?
        .into_iter()
        .next()
        .ok_or_else(|| BenchError::Resolve(host.clone(), std::io::Error::other("no address")))?;
    let start = Instant::now();
    let shared = Arc::new(Shared {
        addr,
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        // HTTP/2 on https:// is ALPN h2 alone: a server that does not
        // agree fails the handshake instead of falling back to HTTP/1.1.
        tls: opts.tls.clone().map(|c| {
            let c = if opts.http2 {
                let mut c = (*c).clone();
                c.alpn_protocols = vec![b"h2".to_vec()];
                Arc::new(c)
            } else {
                c
            };
            tokio_rustls::TlsConnector::from(c)
        }),
        requests: opts.requests_bytes(),
        turn: Default::default(),
        head_only: opts.method.eq_ignore_ascii_case("HEAD"),
        start,
        end: opts.duration.map(|d| start + d),
        budget: opts.requests.map(|n| AtomicI64::new(n as i64)),
        rate: opts.rate,
        connections: opts.connections,
        timeout: opts.timeout,
        done,
        stop,
        h2: (opts.http2 || opts.http3)
            .then(|| crate::shared::StreamRequests::new(opts))
            .transpose()?,
        h3: match (&opts.tls, opts.http3) {
            (Some(t), true) => Some(crate::h3::client_config(t).map_err(BenchError::Usage)?),
            _ => None,
        },
    });
    let threads = opts.threads.min(opts.connections);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("tw-bench-{t}"))
                .spawn(move || thread_main(t, threads, shared))
        })
        .collect::<Result<_, _>>()?;
    let mut stats = Stats::new();
    for h in handles {
        stats.merge(
            h.join()
                .map_err(|_| std::io::Error::other("a load thread panicked"))??,
        );
    }
    let elapsed = match shared.end {
        Some(end) => end.min(Instant::now()) - start,
        None => start.elapsed(),
    };
    let interrupted = shared.stop.is_triggered();
    if stats.requests == 0 && !interrupted {
        return Err(BenchError::NothingAnswered {
            url: opts.url.to_string(),
            first: stats
                .first_error
                .unwrap_or_else(|| "no response in time".into()),
        });
    }
    let mut r = report(opts, stats, elapsed, soft);
    r.interrupted = interrupted;
    Ok(r)
}

fn thread_main(t: usize, threads: usize, shared: Arc<Shared>) -> Result<Stats, BenchError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stats = Rc::new(RefCell::new(Stats::new()));
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let tasks: Vec<_> = (t..shared.connections)
            .step_by(threads)
            .map(|i| {
                let (shared, stats) = (shared.clone(), stats.clone());
                tokio::task::spawn_local(async move {
                    if shared.h3.is_some() {
                        crate::h3::connection(shared, stats).await;
                    } else if shared.h2.is_some() {
                        crate::h2::connection(shared, stats).await;
                    } else {
                        connection(i, shared, stats).await;
                    }
                })
            })
            .collect();
        for task in tasks {
            let _ = task.await;
        }
    });
    drop(local);
    Ok(Rc::try_unwrap(stats)
        .map(RefCell::into_inner)
        .unwrap_or_else(|rc| std::mem::replace(&mut rc.borrow_mut(), Stats::new())))
}

/// How one request ended.
enum Outcome {
    Done {
        status: u16,
        keep_alive: bool,
        first_byte: Instant,
        read: u64,
    },
    Failed(fn(&mut Errors) -> &mut u64, String),
}

async fn exchange(
    s: &mut Box<dyn Io>,
    request: &[u8],
    shared: &Shared,
    buf: &mut Vec<u8>,
) -> Outcome {
    if let Err(e) = s.write_all(request).await {
        return Outcome::Failed(|e| &mut e.write, format!("write: {e}"));
    }
    let mut resp = Response::new(shared.head_only);
    let mut first_byte = None;
    let mut read = 0u64;
    loop {
        if !buf.is_empty() {
            match resp.advance(buf) {
                Ok(a) => {
                    buf.drain(..a.used);
                    if a.done {
                        break;
                    }
                }
                Err(e) => return Outcome::Failed(|e| &mut e.parse, e.to_string()),
            }
        }
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(16384);
        }
        match s.read_buf(buf).await {
            Ok(0) if resp.at_eof() => break,
            Ok(0) => {
                return Outcome::Failed(|e| &mut e.read, "connection closed mid-response".into());
            }
            Ok(n) => {
                first_byte.get_or_insert_with(Instant::now);
                read += n as u64;
            }
            Err(e) => return Outcome::Failed(|e| &mut e.read, format!("read: {e}")),
        }
    }
    Outcome::Done {
        status: resp.status.unwrap_or(0),
        keep_alive: resp.keep_alive && !resp.at_eof(),
        first_byte: first_byte.unwrap_or_else(Instant::now),
        read,
    }
}

async fn connection(i: usize, shared: Arc<Shared>, stats: Rc<RefCell<Stats>>) {
    let mut timetable = shared
        .rate
        .map(|r| Timetable::new(i, shared.connections, r));
    let mut stream: Option<Box<dyn Io>> = None;
    let mut buf = Vec::with_capacity(16384);
    let far = shared.start + Duration::from_secs(86400 * 365);
    let end = shared.end.unwrap_or(far);
    let mut served = false;
    let stop = &shared.stop;
    loop {
        if stop.is_triggered() {
            break;
        }
        let due = match &mut timetable {
            Some(s) => {
                let due = shared.start + Duration::from_nanos(s.next_due());
                if due >= end {
                    break;
                }
                tokio::select! {
                    _ = tokio::time::sleep_until(due.into()) => {}
                    _ = stop.wait() => break,
                }
                due
            }
            None => Instant::now(),
        };
        if due >= end {
            break;
        }
        if !shared.take_one() {
            break;
        }
        if stream.is_none() {
            match open(&shared, &stats, end, connect(&shared)).await {
                Opened::Ready(s) => stream = Some(s),
                Opened::Retry => continue,
                Opened::Stop => break,
            }
        }
        let Some(s) = stream.as_mut() else { continue };
        stats.borrow_mut().sent += 1;
        let request = &shared.requests[shared.next_url() % shared.requests.len()];
        let deadline = end.min(Instant::now() + shared.timeout);
        let r = tokio::select! {
            r = tokio::time::timeout_at(deadline.into(), exchange(s, request, &shared, &mut buf)) => r,
            // Cut by the signal: not an error, not a response (as at the end of -d).
            _ = stop.wait() => break,
        };
        let now = Instant::now();
        let mut st = stats.borrow_mut();
        st.bytes_written += request.len() as u64;
        match r {
            Ok(Outcome::Done {
                status,
                keep_alive,
                first_byte,
                read,
            }) => {
                if !served {
                    served = true;
                    st.served += 1;
                }
                st.done(&shared, due, first_byte, status, read);
                if !keep_alive {
                    stream = None;
                    buf.clear();
                }
            }
            Ok(Outcome::Failed(kind, what)) => {
                st.error(kind, what);
                stream = None;
                buf.clear();
            }
            Err(_) => {
                // Cut by the end of the run: not an error, not a response.
                if now < end {
                    st.error(
                        |e| &mut e.timeout,
                        format!("no response within {:?}", shared.timeout),
                    );
                }
                stream = None;
                buf.clear();
            }
        }
    }
}

fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let ms = |ns: u64| ns as f64 / 1e6;
    Percentiles {
        p50_ms: ms(h.value_at_quantile(0.5)),
        p75_ms: ms(h.value_at_quantile(0.75)),
        p90_ms: ms(h.value_at_quantile(0.9)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p999_ms: ms(h.value_at_quantile(0.999)),
        p9999_ms: ms(h.value_at_quantile(0.9999)),
        max_ms: ms(h.max()),
        mean_ms: h.mean() / 1e6,
    }
}

fn report(opts: &Options, s: Stats, elapsed: Duration, fd_limit: u64) -> Report {
    let secs = elapsed.as_secs_f64().max(1e-9);
    let latency = percentiles(&s.latency);
    let non_2xx = s
        .status
        .iter()
        .filter(|(c, _)| !(200..300).contains(*c))
        .map(|(_, n)| n)
        .sum();
    let error_responses = s.status.range(400..).map(|(_, n)| n).sum();
    Report {
        url: opts.url.to_string(),
        connections: opts.connections,
        threads: opts.threads.min(opts.connections),
        mode: if opts.rate.is_some() {
            "open"
        } else {
            "closed"
        },
        target_rate: opts.rate,
        protocol: if opts.http3 {
            "HTTP/3"
        } else if opts.http2 {
            "HTTP/2"
        } else {
            "HTTP/1.1"
        },
        streams: if opts.http2 || opts.http3 {
            opts.streams
        } else {
            1
        },
        duration_s: secs,
        requests: s.requests,
        sent: s.sent,
        requests_per_s: s.requests as f64 / secs,
        achieved_rate: opts.rate.map(|_| s.sent as f64 / secs),
        p50_ms: latency.p50_ms,
        p99_ms: latency.p99_ms,
        p999_ms: latency.p999_ms,
        max_ms: latency.max_ms,
        latency,
        ttfb: percentiles(&s.ttfb),
        status: s.status,
        non_2xx,
        error_responses,
        errors: s.errors.total(),
        errors_by_kind: s.errors,
        first_error: s.first_error,
        connects: s.connects,
        connections_served: s.served,
        bytes_read: s.bytes_read,
        bytes_written: s.bytes_written,
        fd_limit,
        interrupted: false,
    }
}
