//! TCP sockets: the kernel's `struct tcp_info` and BBR's estimates,
//! pacing, `sendfile` from a memfd and `MSG_ZEROCOPY` with its
//! completions.

use super::*;

/// `struct tcp_info` as Linux lays it out (include/uapi/linux/tcp.h, up
/// to 6.7); older kernels fill a prefix, which [`tcp_info`] reports.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
pub struct TcpInfoRaw {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
}

/// Reads `TCP_INFO` of a TCP socket: the struct and how many of its bytes
/// the kernel filled (fields past that are zero and must not be trusted).
pub fn tcp_info(fd: RawFd) -> Option<(TcpInfoRaw, usize)> {
    let mut raw = TcpInfoRaw::default();
    let mut len = std::mem::size_of::<TcpInfoRaw>() as libc::socklen_t;
    // SAFETY: raw is a valid, plain-data buffer of len bytes; the kernel
    // writes at most len and every bit pattern is a valid TcpInfoRaw.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut raw as *mut TcpInfoRaw).cast(),
            &mut len,
        )
    };
    (r == 0).then_some((raw, len as usize))
}

/// An anonymous in-memory file of `len` bytes of `byte` (`memfd_create`):
/// the source `sendfile` sends from for `perf -Z`, so the bytes go from
/// the page cache to the socket without a copy through user space.
pub fn memfd_filled(len: usize, byte: u8) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: a NUL-terminated name; the returned fd, if valid, is ours.
    let fd = unsafe { libc::memfd_create(c"tcpwise-perf-zerocopy".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nobody else.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    let mut f = std::fs::File::from(owned);
    f.write_all(&vec![byte; len])?;
    Ok(f.into())
}

/// `sendfile(out, in, &offset, count)`: bytes from a file to a socket in
/// the kernel. Non-blocking sockets answer `WouldBlock` when full.
pub fn sendfile(
    out: RawFd,
    input: RawFd,
    offset: &mut i64,
    count: usize,
) -> std::io::Result<usize> {
    let mut off: libc::off_t = *offset;
    // SAFETY: both fds are open for the duration of the call; off is a
    // valid pointer the kernel updates.
    let n = unsafe { libc::sendfile(out, input, &mut off, count) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    *offset = off;
    Ok(n as usize)
}

/// Turns on `SO_ZEROCOPY`, which `send_zerocopy` needs (Linux 4.14).
pub fn set_so_zerocopy(fd: RawFd) -> std::io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: a valid option pointer and length for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `send(fd, buf, MSG_ZEROCOPY | MSG_DONTWAIT)`: the kernel pins `buf`'s
/// pages instead of copying them, so `buf` must not change until the
/// completion for this send is reaped ([`reap_zerocopy`]); `'static`
/// makes that hold. `ENOBUFS` means too many sends await completion.
pub fn send_zerocopy(fd: RawFd, buf: &'static [u8]) -> std::io::Result<usize> {
    // SAFETY: buf lives for the whole program, so the pinned pages stay valid.
    let n = unsafe {
        libc::send(
            fd,
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_ZEROCOPY | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Whether an error of [`send_zerocopy`] is `ENOBUFS`: too many sends
/// await their completions (the socket's `optmem` is full).
pub fn is_enobufs(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOBUFS)
}

/// Completions of `MSG_ZEROCOPY` sends reaped from a socket's error queue.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ZeroCopyReaped {
    /// Sends completed (the kernel no longer holds their pages).
    pub completed: u64,
    /// Of those, sends the kernel copied after all
    /// (`SO_EE_CODE_ZEROCOPY_COPIED`: loopback, TUN and other paths
    /// that hand the bytes to a local receiver).
    pub copied: u64,
}

/// Reads every completion waiting on `fd`'s error queue (non-blocking).
pub fn reap_zerocopy(fd: RawFd) -> std::io::Result<ZeroCopyReaped> {
    const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
    const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;
    let mut out = ZeroCopyReaped::default();
    loop {
        // u64s keep the control buffer aligned for cmsghdr.
        let mut control = [0u64; 16];
        // SAFETY: zeroed msghdr is valid; its pointers are set below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: msg points at a buffer that outlives the call.
        let r = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            return match e.kind() {
                std::io::ErrorKind::WouldBlock => Ok(out),
                _ => Err(e),
            };
        }
        // SAFETY: walking the control messages recvmsg filled in, with
        // the kernel's own macros.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                let h = &*c;
                let ours = (h.cmsg_level == libc::SOL_IP && h.cmsg_type == libc::IP_RECVERR)
                    || (h.cmsg_level == libc::SOL_IPV6 && h.cmsg_type == libc::IPV6_RECVERR);
                if ours {
                    let e = std::ptr::read_unaligned(
                        libc::CMSG_DATA(c).cast::<libc::sock_extended_err>(),
                    );
                    if e.ee_origin == SO_EE_ORIGIN_ZEROCOPY && e.ee_errno == 0 {
                        let n = u64::from(e.ee_data.wrapping_sub(e.ee_info)) + 1;
                        out.completed += n;
                        if e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                            out.copied += n;
                        }
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
    }
}

/// BBR's state, `struct tcp_bbr_info` (`TCP_CC_INFO` of a BBR socket).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct BbrInfoRaw {
    /// Low 32 bits of its bandwidth estimate, bytes/s.
    pub bw_lo: u32,
    /// High 32 bits.
    pub bw_hi: u32,
    /// Its min RTT estimate, µs.
    pub min_rtt: u32,
    /// Pacing gain, fixed point << 8.
    pub pacing_gain: u32,
    /// Cwnd gain, fixed point << 8.
    pub cwnd_gain: u32,
}

/// BBR's state of a TCP socket, when its congestion control is BBR:
/// `TCP_CC_INFO` answers with `struct tcp_bbr_info` (20 bytes) for BBR,
/// 16 bytes for Vegas/DCTCP and nothing for CUBIC or Reno.
pub fn tcp_bbr_info(fd: RawFd) -> Option<BbrInfoRaw> {
    let mut raw = BbrInfoRaw::default();
    let mut len = std::mem::size_of::<BbrInfoRaw>() as libc::socklen_t;
    // SAFETY: raw is a plain-data buffer of len bytes; the kernel writes at
    // most len and every bit pattern is valid.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CC_INFO,
            (&mut raw as *mut BbrInfoRaw).cast(),
            &mut len,
        )
    };
    (r == 0 && len as usize == std::mem::size_of::<BbrInfoRaw>()).then_some(raw)
}

/// Copies what a socket has received into `buf` without taking it
/// (`recv(MSG_PEEK | MSG_DONTWAIT)`): `WouldBlock` when nothing is there.
/// tokio's `peek` waits for readiness itself and leaves it set after a
/// short peek, so a caller that must sleep until more bytes come peeks
/// with this inside `try_io`.
pub fn peek_now(fd: &impl std::os::fd::AsRawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: a valid socket fd and a buffer of `buf.len()` writable bytes.
    let r = unsafe {
        libc::recv(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    if r >= 0 {
        Ok(r as usize)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Caps a socket's pacing rate (`SO_MAX_PACING_RATE`, bytes per second):
/// the kernel spaces the socket's packets itself (TCP's internal pacing,
/// or the fq qdisc), so a sender needs no sleep loop to hold a rate.
pub fn set_max_pacing_rate(
    fd: &impl std::os::fd::AsRawFd,
    bytes_per_s: u64,
) -> std::io::Result<()> {
    let v: u64 = bytes_per_s;
    // SAFETY: a valid socket fd and a u64 the kernel reads (it takes a u32
    // or, since Linux 4.20, a u64).
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&v as *const u64).cast(),
            std::mem::size_of::<u64>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The receive window the peer last advertised, in bytes (`TCP_INFO`'s
/// `tcpi_snd_wnd`, Linux 5.19 and later; `None` before): it shrinks while
/// the peer's application leaves bytes unread in its receive buffer.
pub fn peer_window(fd: RawFd) -> Option<u32> {
    let (info, len) = tcp_info(fd)?;
    let end = std::mem::offset_of!(TcpInfoRaw, snd_wnd) + std::mem::size_of::<u32>();
    (len >= end).then_some(info.snd_wnd)
}

/// Bytes a TCP socket holds that the peer has not acknowledged yet, sent
/// or not (`ioctl(SIOCOUTQ)`): 0 once the peer has everything, which is
/// when a download really ended (an access log's request time).
pub fn unacked_bytes(fd: RawFd) -> std::io::Result<u32> {
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int through a valid pointer.
    let r = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut n) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n.max(0) as u32)
}

/// An integer `IPPROTO_TCP` option.
fn set_tcp_int(fd: RawFd, opt: libc::c_int, v: libc::c_int) -> std::io::Result<()> {
    // SAFETY: a valid option pointer and length for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `TCP_FASTOPEN_CONNECT` (Linux 4.11): `connect` returns at once and the
/// first write goes out in the SYN when the kernel holds a cookie for the
/// server (otherwise the SYN asks for one and the data follows the
/// handshake).
pub fn set_fastopen_connect(fd: RawFd) -> std::io::Result<()> {
    set_tcp_int(fd, libc::TCP_FASTOPEN_CONNECT, 1)
}

/// `TCP_FASTOPEN` on a listener: up to `qlen` connections may be
/// accepted with data from their SYN before their handshake completes.
pub fn set_fastopen_listen(fd: RawFd, qlen: u32) -> std::io::Result<()> {
    set_tcp_int(
        fd,
        libc::TCP_FASTOPEN,
        qlen.min(i32::MAX as u32) as libc::c_int,
    )
}
