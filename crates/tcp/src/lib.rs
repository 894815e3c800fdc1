//! # tcpwise-tcp: socket policy and measurement
//!
//! Two of tcpwise's four lessons live at the socket, and a third needs a
//! connection's history:
//!
//! - [`BufferPolicy`]: never pin `SO_RCVBUF`/`SO_SNDBUF` by default
//!   (Windows TCP team: a static buffer caps throughput at about
//!   buffer/RTT; autotuning reaches line rate). `Static` exists to
//!   reproduce the mistake and reads back what the kernel really holds.
//! - [`path`]: the bandwidth-delay product and the cap a static receive
//!   buffer puts on a path, as Linux really advertises it.
//! - [`TcpInfo`]: Linux `TCP_INFO`, tolerant of older and newer kernels.
//! - [`ReadSizer`] and [`SizedRead`]: Chromium's read slow start (first
//!   read 1 KiB, doubling after every read that fills its request).
//! - [`BurstMeter`]: the largest burst a connection has moved (Firefox's
//!   proxy for the server's congestion window).
//! - [`Lowat`]: `TCP_NOTSENT_LOWAT`, how much unsent data a sender keeps
//!   queued in its own socket (off, fixed, or a few ms of its rate).
//!
//! The policy parts ([`ReadSizer`], [`BurstMeter`], [`path`]) never touch a
//! socket or a clock: callers pass sizes and `now`.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod buffer;
pub mod burst;
pub mod fastopen;
pub mod info;
pub mod lowat;
pub mod path;
pub mod read_sizer;

pub use buffer::{AppliedBuffers, BufferError, BufferPolicy};
pub use lowat::{Lowat, LowatError, LowatStream};

/// The runtime every tcpwise client and server runs on: tokio's
/// multi-thread runtime, one epoll driver and work-stealing workers, so
/// any worker runs any ready connection (the completion-port lesson of
/// the MariaDB seed; the lab's completion experiment measures it against
/// the alternatives). One definition for the binary and the lab.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}
/// A runtime on the calling thread only, for a client that moves one
/// transfer's bytes (curl's shape): the connection and the body reader
/// wake each other without crossing threads, which costs a bulk download
/// on loopback most of its speed on a multi-threaded runtime (futex
/// wake-ups and task switches for every frame).
pub fn runtime_one_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
pub use burst::BurstMeter;
pub use info::TcpInfo;
pub use read_sizer::{ReadSizer, SizedRead};

/// An algorithm the kernel would not set.
#[derive(Debug, thiserror::Error)]
#[error(
    "congestion control '{algo}' is not available here ({source}): net.ipv4.tcp_available_congestion_control lists {available}"
)]
pub struct CongestionError {
    /// What was asked for.
    pub algo: String,
    /// What this namespace offers.
    pub available: String,
    /// The kernel's refusal.
    #[source]
    pub source: std::io::Error,
}

/// Sets the congestion control of a socket (`TCP_CONGESTION`). Per socket,
/// any available algorithm works, where a namespace may only default to
/// one the host allows (`net.ipv4.tcp_allowed_congestion_control`).
pub fn set_congestion(sock: &socket2::SockRef<'_>, algo: &str) -> Result<(), CongestionError> {
    sock.set_tcp_congestion(algo.as_bytes())
        .map_err(|source| CongestionError {
            algo: algo.to_string(),
            available: std::fs::read_to_string(
                "/proc/sys/net/ipv4/tcp_available_congestion_control",
            )
            .unwrap_or_default()
            .trim()
            .to_string(),
            source,
        })
}

/// Whether `algo` can be set on a socket here (a flag is checked at
/// start-up, before anything connects), on a throwaway socket.
pub fn check_congestion(algo: &str) -> Result<(), CongestionError> {
    let probe = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).map_err(
        |source| CongestionError {
            algo: algo.to_string(),
            available: String::new(),
            source,
        },
    )?;
    set_congestion(&socket2::SockRef::from(&probe), algo)
}

/// The congestion control a socket uses (`TCP_CONGESTION`), as iperf3
/// reports it (`congestion_used`).
pub fn congestion_of(sock: &socket2::SockRef<'_>) -> Option<String> {
    let name = sock.tcp_congestion().ok()?;
    let name = String::from_utf8_lossy(&name);
    Some(name.trim_end_matches('\0').to_string())
}

/// Paces a socket at `bits_per_s` (`SO_MAX_PACING_RATE`): the kernel holds
/// the rate, not an application sleep loop (iperf3's `-b` for TCP).
pub fn set_pacing(sock: &impl std::os::fd::AsRawFd, bits_per_s: u64) -> std::io::Result<()> {
    tcpwise_sys::set_max_pacing_rate(sock, bits_per_s.div_ceil(8))
}

/// The source of zero-copy sends: `len` bytes of `byte` in an in-memory
/// file, for [`sendfile`].
pub fn zerocopy_source(len: usize, byte: u8) -> std::io::Result<std::os::fd::OwnedFd> {
    tcpwise_sys::memfd_filled(len, byte)
}

/// Sends up to `count` bytes of `input` from `offset` to the socket `out`
/// in the kernel (`sendfile`).
pub fn sendfile(
    out: std::os::fd::RawFd,
    input: std::os::fd::RawFd,
    offset: &mut i64,
    count: usize,
) -> std::io::Result<usize> {
    tcpwise_sys::sendfile(out, input, offset, count)
}

/// `MSG_ZEROCOPY` sending: turn it on for a socket, send from a buffer
/// that lives as long as the program, and reap the kernel's completions
/// (which also say whether it copied after all).
pub use tcpwise_sys::{ZeroCopyReaped, is_enobufs, reap_zerocopy, send_zerocopy, set_so_zerocopy};

/// 1 ns timer slack for this thread, so a sender that sleeps until each
/// packet is due wakes within microseconds instead of the default 50 µs
/// slack (or tokio's 1 ms timer wheel).
pub use tcpwise_sys::set_timer_slack_1ns;

/// How a listener shares its port with others (`SO_REUSEPORT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortShare {
    /// Alone: no other socket may listen on the port.
    Alone,
    /// The first of a group this process builds: the bind itself is
    /// exclusive (`SO_REUSEPORT` is set only after it, before `listen`), so a
    /// port some other process listens on, with `SO_REUSEPORT` or without,
    /// in either address family, refuses with `EADDRINUSE`; then the group's
    /// other listeners can [`PortShare::Join`]. No window opens between the
    /// check and the group: the check is the group's own bind.
    First,
    /// Another listener of a group whose first was bound with
    /// [`PortShare::First`]; the kernel spreads connections among them.
    Join,
}

/// A listening socket the way tcpwise's servers want one: `SO_REUSEADDR`,
/// shared as `share` says (several listeners on one port, one per
/// thread), dual-stack for `[::]`, and a `backlog` that a burst of
/// connections does not overflow (std's `TcpListener::bind` asks for 128;
/// the kernel caps it at `net.core.somaxconn`).
pub fn listen(
    addr: std::net::SocketAddr,
    backlog: i32,
    share: PortShare,
) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    if share == PortShare::Join {
        s.set_reuse_port(true)?;
    }
    if addr.is_ipv6() {
        // [::] takes IPv4 too, as std's bind does on Linux by default.
        let _ = s.set_only_v6(false);
    }
    s.bind(&addr.into())?;
    if share == PortShare::First {
        s.set_reuse_port(true)?;
    }
    s.listen(backlog)?;
    Ok(s.into())
}
