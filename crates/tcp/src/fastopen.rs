//! TCP Fast Open (RFC 7413): data in the SYN, so a request (or a TLS
//! ClientHello) leaves with the handshake and a fresh connection costs one
//! round trip less. The first connection to a server fetches a cookie;
//! later ones carry data in their SYN, which the server takes only if
//! `net.ipv4.tcp_fastopen` has its server bit (2) and the listener asked
//! for it (`TCP_FASTOPEN`). Middleboxes that drop such SYNs are why it is
//! opt-in: the kernel retransmits without the data, which a client sees
//! as a fallback, [`syn_data_acked`] `false`.

use std::os::fd::AsRawFd;

/// Where the kernel's switch lives (per network namespace): bit 1 lets
/// clients send data in the SYN, bit 2 lets servers accept it.
pub const SYSCTL: &str = "net.ipv4.tcp_fastopen";

/// Connections a listener may accept from SYN data before their handshake
/// completes (nginx's `fastopen=` takes such a number; 256 is a common
/// choice).
pub const LISTEN_QUEUE: u32 = 256;

/// Makes `connect` on `sock` deferred: the first write goes in the SYN.
pub fn enable_connect(sock: &impl AsRawFd) -> std::io::Result<()> {
    tcpwise_sys::set_fastopen_connect(sock.as_raw_fd())
}

/// Lets a listener accept data in SYNs.
pub fn enable_listen(sock: &impl AsRawFd, qlen: u32) -> std::io::Result<()> {
    tcpwise_sys::set_fastopen_listen(sock.as_raw_fd(), qlen)
}

/// `TCPI_OPT_SYN_DATA`: the server acknowledged the data our SYN carried.
const TCPI_OPT_SYN_DATA: u8 = 32;

/// Whether the data in the SYN of this (client) connection was taken by
/// the server; `false` after a fallback (no cookie yet, a server without
/// Fast Open, a middlebox that dropped the SYN). `None` without `TCP_INFO`.
pub fn syn_data_acked(sock: &impl AsRawFd) -> Option<bool> {
    tcpwise_sys::tcp_info(sock.as_raw_fd()).map(|(raw, _)| raw.options & TCPI_OPT_SYN_DATA != 0)
}

/// The namespace's `net.ipv4.tcp_fastopen` (`None`: unreadable).
pub fn sysctl_value() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_fastopen")
        .ok()?
        .trim()
        .parse()
        .ok()
}
