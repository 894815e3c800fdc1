//! The selftest's server side in the server namespace: the echo and
//! bulk TCP server, and the UDP echo for the probes.

use super::{MSG, SenderInfos};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Accepts the selftest's connections until `stop`, each on its thread.
pub(super) fn server_loop(listener: TcpListener, stop: Arc<AtomicBool>, infos: SenderInfos) {
    listener.set_nonblocking(true).ok();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).ok();
                let infos = infos.clone();
                std::thread::spawn(move || serve(s, &infos));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn serve(mut s: TcpStream, infos: &SenderInfos) {
    s.set_nodelay(true).ok();
    let mut kind = [0u8; 9];
    if s.read_exact(&mut kind).is_err() {
        return;
    }
    if kind[0] == b'B' {
        // An ordinary task, as the receiver and every endpoint the lab
        // runs: a real-time sender that never blocks would take a CPU from
        // the receiver and measure the scheduler's favour.
        let ms = u64::from_be_bytes(kind[1..9].try_into().unwrap_or_default());
        let end = Instant::now() + Duration::from_millis(ms);
        let chunk = vec![0x5au8; 128 * 1024];
        while Instant::now() < end {
            if s.write_all(&chunk).is_err() {
                return;
            }
        }
        // Before the last bytes drain: what limited this sender.
        if let (Some(i), Ok(mut v)) = (tcpwise_tcp::TcpInfo::of(&s), infos.lock()) {
            v.push(i);
        }
        let _ = s.shutdown(std::net::Shutdown::Write);
        let _ = s.read(&mut [0u8; 1]);
    } else {
        echo(s);
    }
}

/// Echoes [`MSG`]-byte messages until the peer closes (the selftest's
/// idle probe, and a topology's `--idle-rtt`). The probe measures the
/// emulator, not the scheduler: real-time priority keeps ordinary tasks
/// from delaying the echo.
pub(crate) fn echo(mut s: TcpStream) {
    crate::sys::set_realtime(5);
    let mut buf = [0u8; MSG];
    while s.read_exact(&mut buf).is_ok() {
        if s.write_all(&buf).is_err() {
            return;
        }
    }
}

/// Echoes UDP probes until `stop`.
pub(super) fn udp_echo(s: UdpSocket, stop: Arc<AtomicBool>) {
    crate::sys::set_realtime(5);
    s.set_read_timeout(Some(Duration::from_millis(100))).ok();
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = s.recv_from(&mut buf) {
            let _ = s.send_to(&buf[..n], from);
        }
    }
}
