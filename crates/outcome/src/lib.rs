//! How an operation ends, in one vocabulary for every crate.
//!
//! - **The class of a failure** ([`Class`]): each library's error type
//!   says what kind of failure it is ([`Classify`]), the binary maps the
//!   classes to exit codes in one place ([`Class::exit_code`]) and never
//!   looks at a library's variants. A new variant is classified where it
//!   is defined; the binary does not change. This is hyper's
//!   `Error { kind, cause }` with predicates (`is_timeout()`) turned
//!   outward: the predicate the binary needs is "which exit code".
//! - **Shutdown** (`shutdown`): the one signal every server (perf, http,
//!   dispatch) takes to stop, whoever sends it (a signal handler, the
//!   lab, a test).
//!
//! - **The version string** (`version`): set once by the binary, read
//!   by every report.
//! - **An error's text** ([`chain_text`]): the error and its causes on
//!   one line.
//!
//! Nothing here touches the OS: it is vocabulary.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod peer_options;
pub mod shutdown;
pub mod version;

pub use shutdown::Shutdown;
pub use version::{set_version, version};

/// What kind of failure an error is, as far as the caller is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Bad flags or input: the user can fix the command (exit 2).
    Usage,
    /// Missing privileges or system support: root, `/dev/net/tun`,
    /// iproute2, io_uring (exit 3).
    Privileges,
    /// The emulator could not be set up or stopped working (exit 4).
    Emulator,
    /// A measurement, transfer or server failed (exit 1).
    Failed,
    /// Interrupted by a signal (exit 128 + N; Ctrl-C is 130).
    Interrupted(i32),
    /// A command to run was found but could not be executed (exit 126,
    /// as the shell's).
    CannotExecute,
    /// A command to run was not found (exit 127, as the shell's).
    NotFound,
    /// A tool's own number for the failure, as the tool it imitates
    /// exits with it (curl's 6, 7, 22, 28, ...).
    Tool(i32),
}

/// `tcpwise --help`'s closing text: the units every flag takes and the
/// exit statuses of [`Class::exit_code`].
pub const EXIT_HELP: &str = "\
Units, in every flag: durations need a unit (100ms, 1.5s, 250us, 2min, 1h; a bare 0
is fine), except -t of perf and -m of get, where a bare number is seconds as in iperf3
and curl; sizes are bytes (278775, 64KB = 64000, 256KiB = 262144); rates are bits per
second (20mbit, 1.5gbit) or bytes per second (2.5MB/s); 'mbps' is refused as ambiguous.

Exit status:
  0    success (for `emu shell` and `emu pair`: the command's own status)
  1    a measurement or transfer failed, or a server cannot listen (address in use)
  2    bad flags or input (unknown unit, unreadable trace, ...)
  3    missing privileges or system support (root, /dev/net/tun, iproute2)
  4    the emulator could not be set up or stopped working
  126  `emu shell/pair`: the command could not be executed; 127: not found
  128+N  interrupted by signal N (130 for Ctrl-C); everything is torn down first
  `tcpwise get` uses curl's numbers (see `tcpwise get --help`).";

/// An error and its causes on one line, `: `-separated (anyhow's
/// `{:#}`): the one formatter every command's messages use.
pub fn chain_text(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// SIGINT's number: Ctrl-C.
pub const SIGINT: i32 = 2;

impl Class {
    /// The exit status for this class: the documented table of
    /// `tcpwise --help`.
    pub fn exit_code(self) -> i32 {
        match self {
            Class::Usage => 2,
            Class::Privileges => 3,
            Class::Emulator => 4,
            Class::Failed => 1,
            Class::Interrupted(sig) => 128 + sig,
            Class::CannotExecute => 126,
            Class::NotFound => 127,
            Class::Tool(n) => n,
        }
    }
}

/// An error that knows its class. `None` means "not mine to say": the
/// class is that of the error's cause (its `source()`), or
/// [`Class::Failed`] when no error in the chain has one.
pub trait Classify {
    /// This error's class, if it decides one.
    fn class(&self) -> Option<Class>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_the_documented_ones() {
        let table = [
            (Class::Failed, 1),
            (Class::Usage, 2),
            (Class::Privileges, 3),
            (Class::Emulator, 4),
            (Class::CannotExecute, 126),
            (Class::NotFound, 127),
            (Class::Interrupted(SIGINT), 130),
            (Class::Interrupted(15), 143),
            (Class::Tool(22), 22),
        ];
        for (c, code) in table {
            assert_eq!(c.exit_code(), code, "{c:?}");
        }
    }
}
