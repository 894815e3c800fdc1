//! Responsiveness under working conditions: `tcpwise rpm`, the method of
//! draft-ietf-ippm-responsiveness (Apple's `networkQuality`,
//! goresponsiveness), against any server that keeps network-quality's
//! `SERVER_SPEC.md` contract (`tcpwise serve` does, at `/.well-known/nq`).
//!
//! Why a crate: the method is more than a load and a ping. It adds
//! load-generating connections one interval at a time until goodput is
//! stable by the draft's test (moving averages over MAD intervals within
//! SDT), then keeps probing until responsiveness is stable by the same
//! test, and scores the probes with the draft's formula: foreign probes
//! on new connections (TCP, TLS and HTTP timed apart) and self probes on
//! the loaded connections (which see the sender's own socket buffer).
//!
//! Floors inside: `params` (the draft's parameters) and `stats` (its
//! arithmetic, sans-IO, unit-tested) at the bottom; `config` (the
//! server's JSON); `load` and `probe` (the HTTP glue, on
//! `tcpwise-http`'s client); `run` (the phases); `report` (what is
//! printed: networkQuality's summary, interval lines, JSON); `flags`
//! (clap) and `command` (`tcpwise rpm` as one call).
#![forbid(unsafe_code)]

pub mod command;
pub mod config;
pub mod flags;
pub mod load;
pub mod params;
pub mod probe;
pub mod report;
pub mod run;
pub mod stats;

pub use params::Params;

use tcpwise_outcome::{Class, Classify};

/// Why a responsiveness test could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum RpmError {
    /// Bad flags or a bad URL.
    #[error("{0}")]
    Usage(String),
    /// The config could not be fetched or read.
    #[error("the responsiveness config at {url}: {why}")]
    Config {
        /// Where it was asked for.
        url: String,
        /// What was wrong.
        why: String,
    },
    /// A request of the test failed.
    #[error("{what} ({url})")]
    Http {
        /// Which request.
        what: &'static str,
        /// Its URL.
        url: String,
        /// Why.
        #[source]
        source: tcpwise_client::HttpError,
    },
    /// The load moved nothing for a whole phase.
    #[error("{0}")]
    NoLoad(String),
    /// The runtime could not start.
    #[error("cannot start the runtime")]
    Runtime(#[source] std::io::Error),
}

impl Classify for RpmError {
    fn class(&self) -> Option<Class> {
        Some(match self {
            RpmError::Usage(_) => Class::Usage,
            _ => Class::Failed,
        })
    }
}
