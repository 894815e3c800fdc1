//! The kernel's socket diagnostics (`NETLINK_SOCK_DIAG`, what `ss -ti`
//! reads): every TCP socket of the calling thread's network namespace
//! with its `struct tcp_info` and congestion control, whoever owns it.
//!
//! Why netlink and not `ss`: a topology samples every host's namespace
//! once a second for the whole run, and `ss`'s text is not an interface.
//! The socket belongs to the namespace it was created in, so create it on
//! a thread inside the namespace and read it from anywhere.

use super::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const INET_DIAG_INFO: u16 = 2;
const INET_DIAG_CONG: u16 = 4;
/// `inet_diag_msg`: family, state, timer, retrans, the 48-byte socket id,
/// expires, rqueue, wqueue, uid, inode.
const DIAG_MSG_LEN: usize = 72;
/// Every state but LISTEN (10) and CLOSE (7): sockets that carry data.
const STATES: u32 = !((1 << 10) | (1 << 7));

/// One TCP socket as the kernel's diagnostics show it.
#[derive(Debug, Clone)]
pub struct TcpDiag {
    /// Its own address and port.
    pub local: SocketAddr,
    /// Its peer's.
    pub remote: SocketAddr,
    /// `struct tcp_info` (fields past `info_len` bytes are zero).
    pub info: TcpInfoRaw,
    /// How many bytes of it the kernel filled.
    pub info_len: usize,
    /// Its congestion control ("cubic", "bbr"), when the kernel said.
    pub cc: Option<String>,
}

/// A socket-diagnostics socket of the calling thread's namespace.
pub fn sock_diag_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the fd is owned at once.
    let fd = cvt(unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    })?;
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The dump request for one address family's TCP sockets.
fn request(family: u8, seq: u32) -> Vec<u8> {
    let len = 16 + 56u32;
    let mut b = Vec::with_capacity(len as usize);
    b.extend_from_slice(&len.to_ne_bytes());
    b.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    b.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    b.extend_from_slice(&seq.to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    // inet_diag_req_v2: family, protocol, extensions wanted, pad, states.
    let ext = (1u8 << (INET_DIAG_INFO - 1)) | (1u8 << (INET_DIAG_CONG - 1));
    b.extend_from_slice(&[family, libc::IPPROTO_TCP as u8, ext, 0]);
    b.extend_from_slice(&STATES.to_ne_bytes());
    b.resize(len as usize, 0); // the socket id: zero, every socket
    b
}

/// Every TCP socket (both families) of `fd`'s namespace.
pub fn tcp_sockets(fd: RawFd) -> io::Result<Vec<TcpDiag>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    for (seq, family) in [(1u32, libc::AF_INET), (2, libc::AF_INET6)] {
        let req = request(family as u8, seq);
        // SAFETY: req is a valid buffer of its length; the kernel's
        // netlink address is the zeroed default of a sockaddr_nl.
        let sent = unsafe {
            let mut to: libc::sockaddr_nl = std::mem::zeroed();
            to.nl_family = libc::AF_NETLINK as u16;
            libc::sendto(
                fd,
                req.as_ptr().cast(),
                req.len(),
                0,
                (&to as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        loop {
            // SAFETY: buf is a valid, writable buffer of its length.
            let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            if parse(&buf[..n as usize], &mut out)? {
                break;
            }
        }
    }
    Ok(out)
}

/// Appends the sockets of one datagram of a dump's answer to `out`;
/// `true` once it held the dump's end. Sans-IO.
pub fn parse(mut b: &[u8], out: &mut Vec<TcpDiag>) -> io::Result<bool> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("sock_diag: {what}"));
    while b.len() >= 16 {
        let len = u32::from_ne_bytes(b[0..4].try_into().unwrap_or_default()) as usize;
        let kind = u16::from_ne_bytes([b[4], b[5]]);
        if len < 16 || len > b.len() {
            return Err(bad("a message longer than its datagram"));
        }
        match kind {
            NLMSG_DONE => return Ok(true),
            NLMSG_ERROR => {
                let code = b
                    .get(16..20)
                    .map_or(0, |e| i32::from_ne_bytes(e.try_into().unwrap_or_default()));
                return Err(io::Error::from_raw_os_error(-code));
            }
            _ => out.extend(socket(&b[16..len])),
        }
        b = &b[align(len).min(b.len())..];
    }
    Ok(false)
}

fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// One `inet_diag_msg` and its attributes; `None` when too short.
fn socket(m: &[u8]) -> Option<TcpDiag> {
    let head = m.get(..DIAG_MSG_LEN)?;
    let family = head[0] as i32;
    let port = |at: usize| u16::from_be_bytes([head[at], head[at + 1]]);
    let addr = |at: usize| -> IpAddr {
        let a: [u8; 16] = head[at..at + 16].try_into().unwrap_or_default();
        if family == libc::AF_INET {
            IpAddr::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3]))
        } else {
            IpAddr::V6(Ipv6Addr::from(a))
        }
    };
    let mut d = TcpDiag {
        local: SocketAddr::new(addr(8), port(4)),
        remote: SocketAddr::new(addr(24), port(6)),
        info: TcpInfoRaw::default(),
        info_len: 0,
        cc: None,
    };
    let mut rest = &m[DIAG_MSG_LEN..];
    while rest.len() >= 4 {
        let len = u16::from_ne_bytes([rest[0], rest[1]]) as usize;
        let kind = u16::from_ne_bytes([rest[2], rest[3]]);
        let body = rest.get(4..len.max(4))?;
        match kind {
            INET_DIAG_INFO => d.info_len = info_from(body, &mut d.info),
            INET_DIAG_CONG => {
                let s = body.split(|&c| c == 0).next().unwrap_or_default();
                d.cc = Some(String::from_utf8_lossy(s).into_owned());
            }
            _ => {}
        }
        rest = rest.get(align(len.max(4))..).unwrap_or_default();
    }
    Some(d)
}

/// Copies the kernel's `tcp_info` bytes into `info`; how many it took.
fn info_from(body: &[u8], info: &mut TcpInfoRaw) -> usize {
    let n = body.len().min(std::mem::size_of::<TcpInfoRaw>());
    // SAFETY: info is plain data of at least n bytes, every bit pattern
    // is valid for it, and body holds n bytes; the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(body.as_ptr(), (info as *mut TcpInfoRaw).cast::<u8>(), n);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dump answer of one IPv4 socket with an RTT and a congestion
    /// control, then the end.
    fn answer() -> Vec<u8> {
        let mut msg = vec![0u8; DIAG_MSG_LEN];
        msg[0] = libc::AF_INET as u8;
        msg[4..6].copy_from_slice(&5201u16.to_be_bytes());
        msg[6..8].copy_from_slice(&40000u16.to_be_bytes());
        msg[8..12].copy_from_slice(&[198, 18, 1, 1]);
        msg[24..28].copy_from_slice(&[198, 18, 2, 1]);
        let mut info = TcpInfoRaw {
            rtt: 40_250,
            total_retrans: 7,
            ..TcpInfoRaw::default()
        };
        info.state = 1;
        // SAFETY (test): reading a plain-data struct's bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&info as *const TcpInfoRaw).cast::<u8>(),
                std::mem::size_of::<TcpInfoRaw>(),
            )
        };
        let mut attr = |kind: u16, body: &[u8]| {
            msg.extend_from_slice(&((4 + body.len()) as u16).to_ne_bytes());
            msg.extend_from_slice(&kind.to_ne_bytes());
            msg.extend_from_slice(body);
            msg.resize(align(msg.len()), 0);
        };
        attr(INET_DIAG_CONG, b"cubic\0");
        attr(INET_DIAG_INFO, bytes);
        let mut out = Vec::new();
        out.extend_from_slice(&((16 + msg.len()) as u32).to_ne_bytes());
        out.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        out.extend_from_slice(&[0u8; 10]);
        out.extend_from_slice(&msg);
        out.extend_from_slice(&16u32.to_ne_bytes());
        out.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
        out.extend_from_slice(&[0u8; 10]);
        out
    }

    #[test]
    fn parses_a_socket_and_the_end() {
        let mut out = Vec::new();
        assert!(parse(&answer(), &mut out).unwrap());
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert_eq!(s.local, "198.18.1.1:5201".parse().unwrap());
        assert_eq!(s.remote, "198.18.2.1:40000".parse().unwrap());
        assert_eq!((s.info.rtt, s.info.total_retrans), (40_250, 7));
        assert_eq!(s.info_len, std::mem::size_of::<TcpInfoRaw>());
        assert_eq!(s.cc.as_deref(), Some("cubic"));
    }

    #[test]
    fn refuses_a_message_longer_than_its_datagram() {
        let a = answer();
        assert!(parse(&a[..40], &mut Vec::new()).is_err());
    }

    #[test]
    fn the_kernels_answer_has_this_threads_sockets() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let fd = sock_diag_socket().unwrap();
        let all = tcp_sockets(fd.as_raw_fd()).unwrap();
        let mine = all.iter().find(|d| d.local == c.local_addr().unwrap());
        let mine = mine.expect("the connected socket is in the dump");
        assert_eq!(mine.remote, l.local_addr().unwrap());
        assert!(mine.info_len >= 104 && mine.cc.is_some());
    }
}
