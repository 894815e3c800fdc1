//! # tcpwise-emu: emulated links between network namespaces, no netem
//!
//! This is the Linux glue around [`tcpwise_link`]: it makes named network
//! namespaces (`tw-<pid>-<role>`), puts a TUN device in each end, and runs
//! a forwarder that moves every IP packet through the sans-IO link model,
//! so both ends run real kernel TCP over a path with the configured delay,
//! rate or trace, queue and loss. The kernel needs no `sch_netem`.
//!
//! Contract:
//! - a [`Testbed`] removes its namespaces and devices when dropped or shut
//!   down, and kills what still runs inside; processes killed outright
//!   leave only namespaces, which [`clean::clean_stale`] removes;
//! - addresses come from the benchmarking ranges 198.18.0.0/15 and
//!   2001:2::/48 only, and only the peer is routed through the link;
//! - every run reports the emulator's own error: how late each packet left
//!   its link relative to the model's deadline.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// The OS glue (every `unsafe` call lives in `tcpwise-sys`).
pub use tcpwise_sys as sys;

pub mod clean;
pub mod command;
pub mod config;
pub mod flags;
pub mod forwarder;
pub mod ip;
pub mod netns;
pub mod path;
pub mod plot;
pub mod record;
pub mod rootless;
pub mod selftest;
pub mod session;
pub mod testbed;

pub use forwarder::{DirectionStats, Lateness};
pub use testbed::{Role, Testbed, TestbedConfig, Topology};

/// What can go wrong setting up or running a testbed. Messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// Not enough privilege.
    #[error("{0}")]
    Privileges(String),
    /// A tool or device is missing.
    #[error("{0}")]
    Missing(String),
    /// The configuration cannot be applied.
    #[error("{0}")]
    Config(String),
    /// A setup step failed.
    #[error("{0}")]
    Setup(String),
    /// A system call of a setup step failed.
    #[error("{what}")]
    Os {
        /// The step.
        what: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A command could not be started in the testbed.
    #[error("cannot run '{program}'")]
    Spawn {
        /// The program.
        program: String,
        /// Why (not found, not executable).
        #[source]
        source: std::io::Error,
    },
    /// Stopped by a signal.
    #[error("interrupted")]
    Interrupted,
    /// An I/O error while measuring.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A result could not be written (`--stats-json`, `plot -o`).
    #[error("{what}")]
    Output {
        /// What was being written.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl EmuError {
    /// A failed system call of a setup step, cause kept.
    pub fn os(what: impl Into<String>, source: std::io::Error) -> EmuError {
        EmuError::Os {
            what: what.into(),
            source,
        }
    }
}

impl tcpwise_outcome::Classify for EmuError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        use tcpwise_outcome::Class;
        Some(match self {
            EmuError::Privileges(_) | EmuError::Missing(_) => Class::Privileges,
            EmuError::Config(_) => Class::Usage,
            EmuError::Setup(_) | EmuError::Os { .. } => Class::Emulator,
            EmuError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Class::NotFound
            }
            EmuError::Spawn { .. } => Class::CannotExecute,
            EmuError::Interrupted => Class::Interrupted(tcpwise_outcome::SIGINT),
            EmuError::Io(_) | EmuError::Output { .. } => Class::Failed,
        })
    }
}
