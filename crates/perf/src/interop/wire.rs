//! iperf3's control protocol, without I/O: the state bytes, the cookie,
//! the length-prefixed JSON of the parameters and the results, and which
//! end sends on which stream. Read from iperf3 3.12's `iperf_api.c` and
//! `iperf_server_api.c` (facts of the protocol, not its code).
//!
//! A test, from the client's side: connect, send the 37-byte cookie; the
//! server sends `PARAM_EXCHANGE`, the client its [`Params`]; the server
//! sends `CREATE_STREAMS` and the client opens the data connections, each
//! starting with the same cookie; the server sends `TEST_START` and
//! `TEST_RUNNING`; the data flows until the client's timer ends and it
//! sends `TEST_END`; the server closes the data connections and sends
//! `EXCHANGE_RESULTS`: the client sends its [`Results`], the server its
//! own; the server sends `DISPLAY_RESULTS` and the client `IPERF_DONE`.

use serde::{Deserialize, Serialize};

/// iperf3's port.
pub const DEFAULT_PORT: u16 = 5201;
/// The cookie: 36 characters of `[a-z2-7]` and a NUL.
pub const COOKIE_SIZE: usize = 37;
/// Longest JSON message either end accepts (a results message with
/// `--get-server-output` is the largest iperf3 sends).
pub const MAX_JSON: u32 = 16 << 20;
/// iperf3's default TCP block (`-l`), which the client announces as `len`.
pub const TCP_BLOCK: usize = 128 * 1024;

/// A state byte on the control connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The server set the test up.
    TestStart,
    /// The data may flow.
    TestRunning,
    /// The client's timer ended (client to server).
    TestEnd,
    /// The server asks for the parameters.
    ParamExchange,
    /// The server asks for the data connections.
    CreateStreams,
    /// The server stopped (a signal).
    ServerTerminate,
    /// The client stopped (a signal).
    ClientTerminate,
    /// Results go both ways: the client's first.
    ExchangeResults,
    /// The server is done.
    DisplayResults,
    /// The client is done (client to server).
    IperfDone,
    /// The server runs another test (iperf3 runs one at a time).
    AccessDenied,
    /// The server failed; two network-order `i32`s follow (its error
    /// number and `errno`).
    ServerError,
}

impl State {
    /// The byte on the wire.
    pub fn byte(self) -> u8 {
        let v: i8 = match self {
            State::TestStart => 1,
            State::TestRunning => 2,
            State::TestEnd => 4,
            State::ParamExchange => 9,
            State::CreateStreams => 10,
            State::ServerTerminate => 11,
            State::ClientTerminate => 12,
            State::ExchangeResults => 13,
            State::DisplayResults => 14,
            State::IperfDone => 16,
            State::AccessDenied => -1,
            State::ServerError => -2,
        };
        v as u8
    }

    /// The state a byte names, if it names one this end acts on.
    pub fn of(b: u8) -> Option<State> {
        [
            State::TestStart,
            State::TestRunning,
            State::TestEnd,
            State::ParamExchange,
            State::CreateStreams,
            State::ServerTerminate,
            State::ClientTerminate,
            State::ExchangeResults,
            State::DisplayResults,
            State::IperfDone,
            State::AccessDenied,
            State::ServerError,
        ]
        .into_iter()
        .find(|s| s.byte() == b)
    }
}

/// Whether a byte can start an iperf3 cookie (a connection that starts
/// with anything else speaks tcpwise's own protocol: `{` or `T`).
pub fn starts_cookie(b: u8) -> bool {
    b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b)
}

/// A cookie from 36 random values (any `u8`s; each picks a character).
pub fn cookie(random: [u8; 36]) -> [u8; COOKIE_SIZE] {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut c = [0u8; COOKIE_SIZE];
    for (o, r) in c.iter_mut().zip(random) {
        *o = ALPHABET[usize::from(r) % ALPHABET.len()];
    }
    c
}

/// The test's parameters, as the client sends them (keys iperf3 3.12
/// writes; the ones it omits when unset are optional here).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// A TCP test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<bool>,
    /// A UDP test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<bool>,
    /// `-O`, seconds.
    #[serde(default)]
    pub omit: u64,
    /// `-t`, seconds.
    #[serde(default)]
    pub time: u64,
    /// `-n`, bytes (0: none).
    #[serde(default)]
    pub num: u64,
    /// `-k`, blocks (0: none).
    #[serde(default)]
    pub blockcount: u64,
    /// `-P`.
    #[serde(default = "one")]
    pub parallel: u32,
    /// `-R`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<bool>,
    /// `--bidir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bidirectional: Option<bool>,
    /// `-w`: both buffers of every data socket, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// `-l`: the block, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<u64>,
    /// `-b`, bits/s: each sending stream's writes held to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<u64>,
    /// `--fq-rate`, bits/s: each sending socket paced by the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fqrate: Option<u64>,
    /// `-C`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion: Option<String>,
    /// `--udp-counters-64bit`: 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_counters_64bit: Option<u32>,
    /// `--get-server-output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_server_output: Option<u32>,
    /// The sender's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_version: Option<String>,
}

fn one() -> u32 {
    1
}

impl Params {
    /// Data connections the test has: `-P` of them, twice with `--bidir`.
    pub fn streams(&self) -> usize {
        let n = self.parallel.max(1) as usize;
        if self.bidirectional == Some(true) {
            2 * n
        } else {
            n
        }
    }

    /// How long the server waits for `TEST_END` before it gives the
    /// client up: the test's length and 30 s, or an hour when it has none
    /// (`-t 0`, iperf3's "until stopped", and `-n`, which iperf3 sends
    /// with a time of 0; iperf3 itself waits for ever).
    pub fn guard(&self) -> std::time::Duration {
        let secs = if self.time == 0 { 3600 } else { self.time + 30 };
        std::time::Duration::from_secs(secs)
    }

    /// Whether the client sends on data connection `k` (0-based, in the
    /// order they were opened): all with neither `-R` nor `--bidir`, none
    /// with `-R`, the first `-P` with `--bidir` (iperf3's server takes
    /// its receiving streams first).
    pub fn client_sends(&self, k: usize) -> bool {
        if self.bidirectional == Some(true) {
            k < self.parallel.max(1) as usize
        } else {
            self.reverse != Some(true)
        }
    }
}

/// iperf3's id of data connection `k` (0-based): 1, 3, 4, 5, ... (iperf3
/// numbers from 2 after the first, and keeps it so for compatibility).
pub fn stream_id(k: usize) -> i64 {
    if k == 0 { 1 } else { k as i64 + 2 }
}

/// An integer as cJSON writes one: iperf3 3.12 writes a stream's
/// retransmissions of -1 as 18446744073709551615, and large counts as
/// floating point (`1.2e+16`).
fn int<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    Ok(n.as_i64()
        .or(n.as_u64().map(|u| u as i64))
        .or(n.as_f64().map(|f| f as i64))
        .unwrap_or(0))
}

fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    Ok(n.as_u64()
        .or(n.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0))
}

/// One end's results for one stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    /// [`stream_id`].
    #[serde(deserialize_with = "int")]
    pub id: i64,
    /// Bytes sent (a sending stream) or received.
    #[serde(deserialize_with = "count")]
    pub bytes: u64,
    /// The sender's retransmissions, -1 when not the sender.
    #[serde(deserialize_with = "int")]
    pub retransmits: i64,
    /// UDP jitter, ms (0 for TCP).
    #[serde(default)]
    pub jitter: f64,
    /// UDP datagrams lost (0 for TCP).
    #[serde(default, deserialize_with = "int")]
    pub errors: i64,
    /// UDP datagrams (0 for TCP).
    #[serde(default, deserialize_with = "int")]
    pub packets: i64,
    /// Seconds from the test's start.
    #[serde(default)]
    pub start_time: f64,
    /// Seconds from the test's start.
    #[serde(default)]
    pub end_time: f64,
}

/// One end's results, exchanged after `TEST_END`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// This process's CPU over the test, percent.
    pub cpu_util_total: f64,
    /// User part.
    pub cpu_util_user: f64,
    /// System part.
    pub cpu_util_system: f64,
    /// 1 when this end sent and can count retransmissions, 0 when it
    /// cannot, -1 when it only received.
    #[serde(deserialize_with = "int")]
    pub sender_has_retransmits: i64,
    /// The congestion control this end used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_used: Option<String>,
    /// Per data connection.
    pub streams: Vec<StreamResult>,
    /// `--get-server-output`: the server's lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_output_text: Option<String>,
}

impl Results {
    /// The stream with iperf3 id `id`.
    pub fn stream(&self, id: i64) -> Option<&StreamResult> {
        self.streams.iter().find(|s| s.id == id)
    }
}

/// A JSON message as iperf3 frames it: its length (4 bytes, network
/// order), then the JSON.
pub fn frame(msg: &impl Serialize) -> Vec<u8> {
    let json = serde_json::to_vec(msg).expect("plain data serializes");
    let mut out = (json.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&json);
    out
}

/// Why a message or a state is not what the protocol allows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// A length over [`MAX_JSON`].
    #[error("a JSON message of {0} bytes (at most {MAX_JSON})")]
    TooLong(u32),
    /// Not the JSON expected.
    #[error("bad JSON: {0}")]
    Json(String),
    /// A state byte this end does not know or does not expect now.
    #[error("unexpected state {0} {1}")]
    State(i8, &'static str),
}

/// The length a message's 4-byte prefix announces, if allowed.
pub fn json_len(prefix: [u8; 4]) -> Result<u32, WireError> {
    let n = u32::from_be_bytes(prefix);
    if n > MAX_JSON {
        return Err(WireError::TooLong(n));
    }
    Ok(n)
}

/// Parses a message's JSON.
pub fn parse<T: for<'de> Deserialize<'de>>(json: &[u8]) -> Result<T, WireError> {
    serde_json::from_slice(json).map_err(|e| WireError::Json(e.to_string()))
}

/// iperf3's error numbers this server sends with `SERVER_ERROR`, and the
/// text an iperf3 3.12 client prints for each (`iperf_error.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerErrno {
    /// `IEPROTOCOL` (131): the client asked for a protocol we do not serve.
    Protocol,
    /// `IERECVPARAMS` (114): the parameters did not arrive or parse.
    RecvParams,
    /// `IEACCEPT` (104): a data connection did not come.
    Accept,
}

impl ServerErrno {
    /// The number on the wire.
    pub fn number(self) -> i32 {
        match self {
            ServerErrno::Protocol => 131,
            ServerErrno::RecvParams => 114,
            ServerErrno::Accept => 104,
        }
    }

    /// `SERVER_ERROR`, the error number and an `errno` of 0.
    pub fn message(self) -> Vec<u8> {
        let mut m = vec![State::ServerError.byte()];
        m.extend_from_slice(&self.number().to_be_bytes());
        m.extend_from_slice(&0i32.to_be_bytes());
        m
    }
}

#[cfg(test)]
mod tests;
