//! # tcpwise-perf: a bulk TCP test that says why a transfer is slow
//!
//! In the spirit of iperf3, on our own small protocol: a control
//! connection carries a JSON header and, every interval, the server's
//! `TCP_INFO`; a data connection carries the bulk bytes one way. Each
//! interval line joins the receiver's byte count with the sender's
//! congestion window, RTT, retransmissions and the fractions of time it
//! was limited by the receive window or its send buffer. The summary adds
//! a diagnosis when a static buffer or the receive window is the limit
//! (the Windows TCP team's lesson: a pinned `SO_RCVBUF` caps a flow at
//! about buffer/RTT), with the numbers and the fix, and says nothing of
//! the kind when the flow is not limited by it.
//!
//! Roles: `--rcvbuf` pins the receiving socket, `--sndbuf` the sending
//! one, wherever they are (`-R` makes the server the sender), and
//! `--read-sizing` applies to the receiver's reads.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod client;
pub mod diagnose;
pub mod flags;
pub mod interop;
pub mod iperf3;
pub mod net;
pub mod options;
pub mod pace;
pub mod parallel;
pub mod proto;
pub mod server;
pub mod stream;
pub mod throttle;
pub mod udp;

pub use client::{ClientOptions, run_client};

/// Sets the congestion control of a socket (`TCP_CONGESTION`), with an
/// error that lists what this namespace offers.
pub fn set_congestion(sock: &socket2::SockRef<'_>, algo: &str) -> Result<(), PerfError> {
    tcpwise_tcp::set_congestion(sock, algo).map_err(|e| PerfError::Config(e.to_string()))
}
pub use diagnose::{Interval, PerfReport, Summary};
pub use server::{ServerOptions, run_server};

/// What can go wrong; messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// Nothing listens there.
    #[error(
        "connection refused by {0}: no tcpwise perf server listens there (start one with 'tcpwise perf server')"
    )]
    Refused(String),
    /// No answer.
    #[error("cannot reach {0}: {1} (check the address, and that 'tcpwise perf server' runs there)")]
    Unreachable(String, String),
    /// The peer is not a tcpwise perf server.
    #[error("{0} does not speak the tcpwise perf protocol ({1})")]
    WrongProtocol(String, String),
    /// The peer is an iperf3 server (its first byte says so): the client
    /// speaks iperf3's protocol to it instead.
    #[error("{0} is an iperf3 server (add --iperf3 to speak its protocol)")]
    Iperf3Server(String),
    /// The server cannot be reached, said of an iperf3 server.
    #[error("{0}")]
    Iperf3Unreachable(String),
    /// The server refused the test.
    #[error("the server refused the test: {0}")]
    Refusal(String),
    /// Bad options.
    #[error("{0}")]
    Config(String),
    /// The server cannot listen (address in use, no permission).
    #[error("cannot listen on {addr}")]
    Listen {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Socket buffer policy failed.
    #[error(transparent)]
    Buffer(#[from] tcpwise_tcp::BufferError),
    /// Other I/O failure.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl PerfError {
    /// The same failure said of an iperf3 server (`--iperf3`): its name
    /// and how to start one, not ours.
    pub fn of_iperf3(self) -> PerfError {
        let start = "start one with 'iperf3 -s'";
        match self {
            PerfError::Refused(a) => PerfError::Iperf3Unreachable(format!(
                "connection refused by {a}: no iperf3 server listens there ({start})"
            )),
            PerfError::Unreachable(a, why) => PerfError::Iperf3Unreachable(format!(
                "cannot reach {a}: {why} (check the address, and that an iperf3 server runs there: {start})"
            )),
            e => e,
        }
    }

    /// The address of the iperf3 server `e` met, if that is what it says.
    pub fn iperf3_peer(e: &(dyn std::error::Error + 'static)) -> Option<String> {
        match e.downcast_ref::<PerfError>()? {
            PerfError::Iperf3Server(addr) => Some(addr.clone()),
            _ => None,
        }
    }
}

impl tcpwise_outcome::Classify for PerfError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        // Bad flags are the user's; anything else is the cause's to say.
        matches!(self, PerfError::Config(_)).then_some(tcpwise_outcome::Class::Usage)
    }
}
