//! The wire protocol: newline-delimited JSON on the control connection,
//! raw bytes on the data connection (preceded by the 8-byte test token).

use serde::{Deserialize, Serialize};
use tcpwise_tcp::{AppliedBuffers, ReadSizer, TcpInfo};

/// Protocol identifier the server answers with.
pub const MAGIC: &str = "tcpwise-perf/1";
/// Default port.
pub const DEFAULT_PORT: u16 = 5301;

/// The client's request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// Must be [`MAGIC`].
    pub magic: String,
    /// Server sends (client receives).
    pub reverse: bool,
    /// Test length, ms (ignored when `bytes` is set).
    pub duration_ms: u64,
    /// Bytes to send instead of a duration.
    pub bytes: Option<u64>,
    /// Interval between samples, ms.
    pub interval_ms: u64,
    /// Static SO_RCVBUF for the server's socket when it receives.
    pub server_rcvbuf: Option<u64>,
    /// Static SO_SNDBUF for the server's socket when it sends.
    pub server_sndbuf: Option<u64>,
    /// Read sizing for the server when it receives.
    pub server_read_sizing: Option<ReadSizer>,
    /// Congestion control for both ends of the data connection (TCP_CONGESTION).
    #[serde(default)]
    pub congestion: Option<String>,
}

/// The server's answer to a header.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Accept {
    /// [`MAGIC`].
    pub magic: String,
    /// Token the data connection must present.
    pub token: Option<u64>,
    /// Why the test was refused, if it was.
    pub error: Option<String>,
}

/// One side's sample at the end of an interval.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Sample {
    /// Interval index, from 0.
    pub index: u32,
    /// Seconds since that side's data start.
    pub t: f64,
    /// Bytes moved (sent or received) up to now.
    pub bytes: u64,
    /// TCP_INFO of the data socket.
    pub info: Option<TcpInfo>,
    /// SO_RCVBUF of the data socket now (what autotuning grew it to; `ss`'s `rb`).
    #[serde(default)]
    pub rcvbuf: Option<u64>,
    /// SO_SNDBUF of the data socket now (`ss`'s `tb`).
    #[serde(default)]
    pub sndbuf: Option<u64>,
}

/// Server-to-client control messages.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ServerMsg {
    /// Buffers the server's data socket holds.
    Buffers {
        /// As applied.
        applied: AppliedBuffers,
    },
    /// An interval sample.
    Sample(Sample),
    /// The test ended on the server.
    Done(Sample),
}
