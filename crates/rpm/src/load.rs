//! Load-generating connections: each its own client (so its own
//! connection), fetching the large object or sending to the upload sink
//! without end, counting bytes as they move. Self probes ride on the same
//! client, which multiplexes them onto the same HTTP/2 connection.

use crate::RpmError;
use crate::config::Endpoints;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tcpwise_client::{Client, ClientConfig, HeadAction, Payload, Request};
use tokio::task::JoinHandle;

/// Which way a load goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// The large object, server to client.
    Down,
    /// The upload sink, client to server.
    Up,
}

impl Dir {
    /// `Downlink` or `Uplink`, as networkQuality's summary names them.
    pub fn link(self) -> &'static str {
        match self {
            Dir::Down => "Downlink",
            Dir::Up => "Uplink",
        }
    }

    /// `down` or `up`.
    pub fn word(self) -> &'static str {
        match self {
            Dir::Down => "down",
            Dir::Up => "up",
        }
    }
}

/// One load-generating connection.
pub struct Lgc {
    /// Its direction.
    pub dir: Dir,
    /// Its client: one connection, which self probes share.
    pub client: Client,
    /// Bytes moved so far (uploads: taken by hyper, see [`Lgc::moved`]).
    pub bytes: Arc<AtomicU64>,
    /// The object it loads.
    url: url::Url,
    task: JoinHandle<Result<(), RpmError>>,
}

impl Lgc {
    /// Opens a connection and starts its transfer.
    pub fn open(cfg: &ClientConfig, dir: Dir, ep: &Endpoints) -> Lgc {
        let client = Client::new(cfg.clone());
        let bytes = Arc::new(AtomicU64::new(0));
        let (what, req) = match dir {
            Dir::Down => ("the download load", Request::get(ep.large.clone())),
            Dir::Up => (
                "the upload load",
                Request {
                    method: hyper::Method::POST,
                    headers: vec![("content-type".into(), "application/octet-stream".into())],
                    body: Payload::Endless(bytes.clone()),
                    ..Request::get(ep.upload.clone())
                },
            ),
        };
        let url = req.url.clone();
        let (c, counter) = (client.clone(), bytes.clone());
        let task = tokio::spawn(async move {
            let url = req.url.to_string();
            let r = c
                .request_streaming(
                    &req,
                    |head| expect_ok(head.status),
                    |b| {
                        if dir == Dir::Down {
                            counter.fetch_add(b.len() as u64, Ordering::Relaxed);
                        }
                        Ok(())
                    },
                )
                .await;
            match r {
                Err(source) => Err(RpmError::Http { what, url, source }),
                Ok(_) => Err(RpmError::NoLoad(format!(
                    "{what} ended: the server finished {url} (the large object must outlast the test; the upload sink must not answer before the body ends)"
                ))),
            }
        });
        Lgc {
            dir,
            client,
            bytes,
            url,
            task,
        }
    }

    /// Bytes moved so far. A download counts what arrived; an upload
    /// what the server acknowledged (TCP_INFO of its HTTP/2 connection),
    /// not what hyper took from the body: that includes what still waits
    /// in this client's socket and buffers, and read over the link's rate.
    /// Over HTTP/1.1 (no handle on the connection) it is what hyper took.
    pub fn moved(&self) -> u64 {
        let taken = self.bytes.load(Ordering::Relaxed);
        match self.dir {
            Dir::Down => taken,
            Dir::Up => self
                .client
                .h2_tcp_info(&self.url)
                .and_then(|i| i.bytes_acked)
                .map_or(taken, |acked| acked.min(taken)),
        }
    }

    /// Why it stopped, if it did (a load must run until the test ends).
    pub async fn failure(&mut self) -> Option<RpmError> {
        if !self.task.is_finished() {
            return None;
        }
        match (&mut self.task).await {
            Ok(Err(e)) => Some(e),
            Ok(Ok(())) => None,
            Err(e) => Some(RpmError::NoLoad(format!("a load task failed: {e}"))),
        }
    }

    /// Stops the transfer and closes the connection.
    pub fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for Lgc {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The responsiveness objects answer 200 (the spec: anything else, and a
/// redirect, fails the test).
pub fn expect_ok(status: u16) -> std::io::Result<HeadAction> {
    if status == 200 {
        Ok(HeadAction::Read)
    } else {
        Err(std::io::Error::other(format!(
            "the server answered {status}, not 200"
        )))
    }
}
