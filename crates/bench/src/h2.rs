//! HTTP/2 load, as h2load makes it: each connection carries `-m`
//! streams at once, each stream sending its next request when its last
//! response ended (closed loop per stream). h2c with prior knowledge on
//! http://, ALPN `h2` on https:// (a server that does not agree to h2 is
//! a connect error, not a silent fall back to HTTP/1.1).
//!
//! The framing is the `h2` crate's (hyper's own); the latency, status and
//! error accounting is the HTTP/1.1 path's ([`Stats`]), so the two reports
//! read the same. What a stream sends is built once, [`StreamRequests`].

use crate::Errors;
use crate::shared::{Opened, Shared, Stats, StreamRequests, connect, open};
use bytes::Bytes;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How one stream's exchange ended.
pub(crate) enum Outcome {
    Done {
        status: u16,
        first_byte: Instant,
        read: u64,
    },
    /// The connection is gone (every stream on it sees this).
    Failed(fn(&mut Errors) -> &mut u64, String),
}

/// A multiplexed connection's request handle: HTTP/2's here, HTTP/3's in
/// [`crate::h3`]; the streams loop and its accounting are the same.
pub(crate) trait Exchange: Clone + 'static {
    /// One request on a stream: send, then read the whole response.
    async fn exchange(&mut self, plan: &StreamRequests, k: usize) -> Outcome;
}

impl Exchange for h2::client::SendRequest<Bytes> {
    async fn exchange(&mut self, plan: &StreamRequests, k: usize) -> Outcome {
        exchange(self, plan, k).await
    }
}

/// One request on a stream: send, then read the whole response.
async fn exchange(
    client: &mut h2::client::SendRequest<Bytes>,
    plan: &StreamRequests,
    k: usize,
) -> Outcome {
    // A server without HTTP/2 answers the preface with HTTP/1.1 text,
    // which h2 reads as a bad frame: say which protocol was spoken.
    let fail_write = |e: h2::Error| Outcome::Failed(|e| &mut e.write, format!("HTTP/2 send: {e}"));
    let fail_read = |e: h2::Error| {
        Outcome::Failed(
            |e| &mut e.read,
            format!(
                "HTTP/2 read: {e} (does the server speak HTTP/2, h2c with prior knowledge on http://?)"
            ),
        )
    };
    let mut ready = match client.clone().ready().await {
        Ok(r) => r,
        Err(e) => return fail_write(e),
    };
    let (resp, mut send) = match ready.send_request(plan.request(k), plan.body.is_none()) {
        Ok(x) => x,
        Err(e) => return fail_write(e),
    };
    if let Some(b) = &plan.body
        && let Err(e) = send.send_data(b.clone(), true)
    {
        return fail_write(e);
    }
    let resp = match resp.await {
        Ok(r) => r,
        Err(e) => return fail_read(e),
    };
    let first_byte = Instant::now();
    let status = resp.status().as_u16();
    let mut body = resp.into_body();
    let mut read = 0u64;
    while let Some(chunk) = body.data().await {
        match chunk {
            Ok(c) => {
                read += c.len() as u64;
                let _ = body.flow_control().release_capacity(c.len());
            }
            Err(e) => return fail_read(e),
        }
    }
    Outcome::Done {
        status,
        first_byte,
        read,
    }
}

/// One connection: connect (again after a failure), then `-m` streams.
pub(crate) async fn connection(shared: Arc<Shared>, stats: Rc<RefCell<Stats>>) {
    multiplexed(shared, stats, |shared| async move {
        let io = connect(&shared).await.map_err(|e| e.to_string())?;
        h2::client::Builder::new()
            .initial_window_size(1 << 20)
            .initial_connection_window_size(16 << 20)
            .handshake::<_, Bytes>(io)
            .await
            .map_err(|e| format!("HTTP/2 handshake: {e}"))
    })
    .await
}

/// One multiplexed connection (HTTP/2 or HTTP/3): `attempt` opens it
/// (again after a failure) and gives its request handle and the future
/// that drives it; then `-m` streams, each in a closed loop.
pub(crate) async fn multiplexed<C, D, F, Fut>(
    shared: Arc<Shared>,
    stats: Rc<RefCell<Stats>>,
    attempt: F,
) where
    C: Exchange,
    D: std::future::Future + 'static,
    F: Fn(Arc<Shared>) -> Fut,
    Fut: std::future::Future<Output = Result<(C, D), String>>,
{
    let Some(plan) = shared.h2.as_ref() else {
        return;
    };
    let far = shared.start + Duration::from_secs(86400 * 365);
    let end = shared.end.unwrap_or(far);
    let stop = &shared.stop;
    let mut served = false;
    while Instant::now() < end && !stop.is_triggered() {
        let (client, driver) = match open(&shared, &stats, end, attempt(shared.clone())).await {
            Opened::Ready(c) => c,
            Opened::Retry => continue,
            Opened::Stop => break,
        };
        let driver = tokio::task::spawn_local(driver);
        // The streams of this connection; each ends at the end of the run,
        // on -n's budget, or when the connection fails.
        let broken = Rc::new(RefCell::new(false));
        let streams: Vec<_> = (0..plan.streams)
            .map(|_| {
                let (shared, stats, broken) = (shared.clone(), stats.clone(), broken.clone());
                let mut client = client.clone();
                tokio::task::spawn_local(async move {
                    let plan = shared.h2.as_ref().expect("an HTTP/2 run");
                    let mut served = false;
                    while !*broken.borrow() && shared.take_one() {
                        let due = Instant::now();
                        if due >= end || shared.stop.is_triggered() {
                            break;
                        }
                        stats.borrow_mut().sent += 1;
                        let k = shared.next_url();
                        let deadline = end.min(due + shared.timeout);
                        let r = tokio::select! {
                            r = tokio::time::timeout_at(deadline.into(), client.exchange(plan, k)) => r,
                            _ = shared.stop.wait() => break,
                        };
                        let mut st = stats.borrow_mut();
                        match r {
                            Ok(Outcome::Done {
                                status,
                                first_byte,
                                read,
                            }) => {
                                served = true;
                                st.done(&shared, due, first_byte, status, read);
                            }
                            Ok(Outcome::Failed(kind, what)) => {
                                st.error(kind, what);
                                *broken.borrow_mut() = true;
                            }
                            Err(_) => {
                                if Instant::now() < end {
                                    st.error(
                                        |e| &mut e.timeout,
                                        format!("no response within {:?}", shared.timeout),
                                    );
                                }
                            }
                        }
                    }
                    served
                })
            })
            .collect();
        drop(client);
        for s in streams {
            if let Ok(true) = s.await
                && !served
            {
                served = true;
                stats.borrow_mut().served += 1;
            }
        }
        driver.abort();
        if !*broken.borrow() {
            break;
        }
    }
}
