//! Socket buffer policy. The default, [`BufferPolicy::Auto`], never calls
//! `setsockopt(SO_RCVBUF/SO_SNDBUF)`: setting either disables the kernel's
//! autotuning for that socket, and a static buffer caps throughput at
//! about buffer/RTT (the Windows TCP team's field report: 12.6 Mbit/s on a
//! 151 Mbit/s, 177 ms path with a 278,775-byte buffer). `Static` exists to
//! reproduce and diagnose that mistake.

use serde::{Deserialize, Serialize};
use socket2::Socket;
use thiserror::Error;

/// How a socket's kernel buffers are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferPolicy {
    /// Leave both to kernel autotuning (the default, and the advice).
    #[default]
    Auto,
    /// Pin them: `None` leaves that direction autotuned.
    Static {
        /// `SO_RCVBUF` to ask for.
        rcv: Option<u64>,
        /// `SO_SNDBUF` to ask for.
        snd: Option<u64>,
    },
}

/// Why a buffer policy could not be applied.
#[derive(Debug, Error)]
pub enum BufferError {
    /// A size of zero (or one that does not fit an int).
    #[error("buffer size {0} is not usable: give a positive size such as 256KB")]
    BadSize(u64),
    /// The kernel refused.
    #[error("setting {which} failed: {source}")]
    Sys {
        /// SO_RCVBUF or SO_SNDBUF.
        which: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

/// What the kernel actually holds after applying a policy.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct AppliedBuffers {
    /// Receive buffer asked for, if pinned.
    pub rcv_asked: Option<u64>,
    /// Receive buffer the kernel holds (Linux doubles the request).
    pub rcv_held: u64,
    /// Send buffer asked for, if pinned.
    pub snd_asked: Option<u64>,
    /// Send buffer the kernel holds.
    pub snd_held: u64,
    /// Warnings: requests the kernel silently capped.
    pub warnings: Vec<String>,
    /// Where autotuning stops for this socket's receive buffer: the third
    /// value of `net.ipv4.tcp_rmem` in its namespace.
    #[serde(default)]
    pub rcv_autotune_max: Option<u64>,
    /// The same for the send buffer (`net.ipv4.tcp_wmem`).
    #[serde(default)]
    pub snd_autotune_max: Option<u64>,
}

impl AppliedBuffers {
    /// Fills the autotuning ceilings from the calling thread's namespace.
    pub fn read_ceilings(&mut self) {
        self.rcv_autotune_max = autotune_max("tcp_rmem");
        self.snd_autotune_max = autotune_max("tcp_wmem");
    }
}

/// The third value (the autotuning maximum) of `net.ipv4.tcp_rmem` or
/// `tcp_wmem` in the calling thread's namespace.
pub fn autotune_max(which: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/sys/net/ipv4/{which}"))
        .ok()?
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// `net.core.rmem_max` / `wmem_max` of the calling thread's namespace.
pub fn core_max(which: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/sys/net/core/{which}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl BufferPolicy {
    /// Applies the policy; call before `connect` or `listen` (the window
    /// scale is fixed at the handshake).
    pub fn apply(&self, sock: &Socket) -> Result<AppliedBuffers, BufferError> {
        let mut out = self.apply_sizes(sock)?;
        out.read_ceilings();
        Ok(out)
    }

    /// [`BufferPolicy::apply`] without reading the autotuning ceilings:
    /// a client sets the sizes, starts its connect, and reads them
    /// ([`AppliedBuffers::read_ceilings`]) while the SYN is out, so the
    /// two `/proc` reads do not delay it.
    pub fn apply_sizes(&self, sock: &Socket) -> Result<AppliedBuffers, BufferError> {
        let mut out = AppliedBuffers::default();
        if let BufferPolicy::Static { rcv, snd } = *self {
            for (size, which, max_key) in [
                (rcv, "SO_RCVBUF", "rmem_max"),
                (snd, "SO_SNDBUF", "wmem_max"),
            ] {
                let Some(n) = size else { continue };
                if n == 0 || n > i32::MAX as u64 / 2 {
                    return Err(BufferError::BadSize(n));
                }
                let r = if which == "SO_RCVBUF" {
                    sock.set_recv_buffer_size(n as usize)
                } else {
                    sock.set_send_buffer_size(n as usize)
                };
                r.map_err(|source| BufferError::Sys { which, source })?;
                if let Some(max) = core_max(max_key)
                    && n > max
                {
                    out.warnings.push(format!(
                        "{which} {n} is above net.core.{max_key} ({max}): Linux silently caps it, so the socket holds {} (2 x {max}); raise net.core.{max_key} to get more",
                        2 * max
                    ));
                }
            }
            out.rcv_asked = rcv;
            out.snd_asked = snd;
        }
        out.rcv_held = sock.recv_buffer_size().unwrap_or(0) as u64;
        out.snd_held = sock.send_buffer_size().unwrap_or(0) as u64;
        Ok(out)
    }

    /// Whether any direction is pinned.
    pub fn is_static(&self) -> bool {
        matches!(
            self,
            BufferPolicy::Static { rcv: Some(_), .. } | BufferPolicy::Static { snd: Some(_), .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use socket2::{Domain, Type};

    #[test]
    fn auto_touches_nothing_and_static_is_doubled() {
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        let before = s.recv_buffer_size().unwrap() as u64;
        let a = BufferPolicy::Auto.apply(&s).unwrap();
        assert_eq!(a.rcv_held, before);
        assert_eq!(a.rcv_asked, None);

        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        let a = BufferPolicy::Static {
            rcv: Some(100_000),
            snd: None,
        }
        .apply(&s)
        .unwrap();
        assert_eq!(a.rcv_asked, Some(100_000));
        assert_eq!(a.rcv_held, 200_000, "Linux doubles SO_RCVBUF");
        assert!(
            BufferPolicy::Static {
                rcv: Some(0),
                snd: None
            }
            .apply(&s)
            .is_err()
        );
    }

    #[test]
    fn above_rmem_max_warns_with_the_real_value() {
        let Some(max) = core_max("rmem_max") else {
            return;
        };
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        let a = BufferPolicy::Static {
            rcv: Some(max + 1000),
            snd: None,
        }
        .apply(&s)
        .unwrap();
        assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
        assert!(a.warnings[0].contains(&(2 * max).to_string()));
        assert_eq!(a.rcv_held, 2 * max);
    }
}
