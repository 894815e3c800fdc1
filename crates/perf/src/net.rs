//! Reaching the server: the name resolved (`-4`/`-6`), the local
//! addresses (`-B`, `--cport`), the control and data connections made
//! with the socket policy applied before `connect`.

use crate::PerfError;
use crate::options::ClientOptions;
use std::net::SocketAddr;
use std::time::Duration;
use tcpwise_tcp::{AppliedBuffers, BufferPolicy};
use tokio::net::{TcpSocket, TcpStream};

pub(crate) async fn connect_with(
    addr: SocketAddr,
    policy: BufferPolicy,
    timeout: Duration,
    congestion: Option<&str>,
    local: Option<SocketAddr>,
) -> Result<(TcpStream, AppliedBuffers), PerfError> {
    let domain = socket2::Domain::for_address(addr);
    let raw = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    if let Some(l) = local {
        raw.set_reuse_address(true)?;
        raw.bind(&l.into())
            .map_err(|e| PerfError::Config(format!("cannot bind to {l} (-B/--cport): {e}")))?;
    }
    let applied = policy.apply(&raw)?;
    if let Some(algo) = congestion {
        crate::set_congestion(&socket2::SockRef::from(&raw), algo)?;
    }
    raw.set_nonblocking(true)?;
    let sock = TcpSocket::from_std_stream(std::net::TcpStream::from(raw));
    let s = match tokio::time::timeout(timeout, sock.connect(addr)).await {
        Err(_) => {
            return Err(PerfError::Unreachable(
                addr.to_string(),
                format!("no answer within {:.0} s", timeout.as_secs_f64()),
            ));
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(PerfError::Refused(addr.to_string()));
        }
        Ok(Err(e)) => return Err(PerfError::Unreachable(addr.to_string(), e.to_string())),
        Ok(Ok(s)) => s,
    };
    s.set_nodelay(true)?;
    Ok((s, applied))
}

/// The server's address, of the family `-4`/`-6` asks for.
pub(crate) async fn resolve(opts: &ClientOptions) -> Result<SocketAddr, PerfError> {
    let target = format!("{}:{}", opts.host, opts.port);
    let addr = tokio::net::lookup_host(if opts.host.contains(':') && !opts.host.starts_with('[') {
        format!("[{}]:{}", opts.host, opts.port)
    } else {
        target.clone()
    })
    .await
    .map_err(|e| PerfError::Unreachable(target.clone(), format!("cannot resolve: {e}")))?
    .find(|a| opts.ipv6.is_none_or(|v6| a.is_ipv6() == v6))
    .ok_or_else(|| {
        let which = match opts.ipv6 {
            Some(true) => "no IPv6 address (-6)",
            Some(false) => "no IPv4 address (-4)",
            None => "no address",
        };
        PerfError::Unreachable(target.clone(), which.into())
    })?;
    Ok(addr)
}

/// The local addresses `-B` and `--cport` ask for: the control
/// connection's (any port) and the data connection's.
pub(crate) fn local_addrs(
    opts: &ClientOptions,
    addr: SocketAddr,
) -> Result<(Option<SocketAddr>, Option<SocketAddr>), PerfError> {
    if let Some(ip) = opts.bind
        && ip.is_ipv6() != addr.is_ipv6()
    {
        return Err(PerfError::Config(format!(
            "-B {ip} and the server's address {addr} are of different families"
        )));
    }
    let ctl = opts.bind.map(|ip| SocketAddr::new(ip, 0));
    let data = match (opts.bind, opts.cport) {
        (_, None) => ctl,
        (Some(ip), Some(p)) => Some(SocketAddr::new(ip, p)),
        (None, Some(p)) => Some(if addr.is_ipv6() {
            SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), p)
        } else {
            SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), p)
        }),
    };
    Ok((ctl, data))
}
