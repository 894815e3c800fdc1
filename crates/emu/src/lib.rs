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
pub mod dumbbell;
pub mod flags;
pub mod flows;
pub mod forwarder;
pub mod gso;
pub mod ip;
pub mod meter;
pub mod netns;
pub mod path;
pub mod plot;
pub mod record;
pub mod rootless;
pub mod selftest;
pub mod session;
pub mod testbed;
pub mod testbeds;
pub mod topology;

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
    /// A failure of one of the kinds above with the error that caused it
    /// kept as its source (hyper's `Error { kind, cause }`), not
    /// formatted into the text.
    #[error("{what}")]
    Caused {
        /// Which kind of failure (decides the exit code).
        kind: Kind,
        /// What failed, in the user's terms.
        what: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
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

/// The kind of an [`EmuError::Caused`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Not enough privilege (exit 3).
    Privileges,
    /// A tool or device is missing (exit 3).
    Missing,
    /// Bad input: a file or value that cannot be used (exit 2).
    Config,
    /// A setup step failed (exit 4).
    Setup,
}

impl EmuError {
    /// `what` failed because of `source`.
    pub fn caused(
        kind: Kind,
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> EmuError {
        EmuError::Caused {
            kind,
            what: what.into(),
            source: source.into(),
        }
    }
}

impl tcpwise_outcome::Classify for EmuError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        use tcpwise_outcome::Class;
        Some(match self {
            EmuError::Privileges(_) | EmuError::Missing(_) => Class::Privileges,
            EmuError::Caused { kind, .. } => match kind {
                Kind::Privileges | Kind::Missing => Class::Privileges,
                Kind::Config => Class::Usage,
                Kind::Setup => Class::Emulator,
            },
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
