//! quinn's tokio runtime with a UDP socket that asks epoll for what QUIC
//! waits on, and no more.
//!
//! Why: quinn's own tokio socket registers for reading *and* writing, and
//! a UDP socket signals "writable" each time a datagram it sent leaves
//! the send buffer, so every send woke the next `epoll_wait` for nothing;
//! and it reads until `EAGAIN`, one `recvmmsg` more a wake-up than the
//! datagrams need. On loopback `serve --http3` made 2 `epoll_wait` and
//! 2 `recvmmsg` a wake-up where HTTP/2 made one `epoll_wait` and one read
//! (`perf stat` of 10,000 small requests, `docs/get.md`). Here the socket
//! is registered for reading only; writability is asked of the kernel
//! only after a send found the buffer full, on a duplicate descriptor
//! registered for writing until a send goes through again; and a receive
//! that returns fewer datagrams than it asked for clears the readiness
//! (the queue was empty then; a datagram arriving later is a new edge,
//! which tokio keeps).

use quinn::udp::{BATCH_SIZE, RecvMeta, Transmit, UdpSocketState};
use quinn::{AsyncTimer, AsyncUdpSocket, Runtime, TokioRuntime, UdpPoller};
use std::io::{self, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::Instant;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// [`TokioRuntime`] in everything but the socket.
#[derive(Debug)]
pub struct QuietRuntime;

impl Runtime for QuietRuntime {
    fn new_timer(&self, t: Instant) -> Pin<Box<dyn AsyncTimer>> {
        TokioRuntime.new_timer(t)
    }

    fn spawn(&self, future: Pin<Box<dyn std::future::Future<Output = ()> + Send>>) {
        TokioRuntime.spawn(future)
    }

    fn wrap_udp_socket(&self, sock: UdpSocket) -> io::Result<Arc<dyn AsyncUdpSocket>> {
        Ok(Arc::new(QuietSocket::new(sock)?))
    }

    fn now(&self) -> Instant {
        TokioRuntime.now()
    }
}

#[derive(Debug)]
struct QuietSocket {
    state: UdpSocketState,
    /// The socket, registered for reading only.
    read: AsyncFd<UdpSocket>,
    /// While the send buffer is full: a duplicate of the socket,
    /// registered for writing.
    write: Mutex<Option<AsyncFd<OwnedFd>>>,
    /// Whether `write` holds one: read without the lock before every
    /// send, set and cleared under it.
    blocked: AtomicBool,
}

impl QuietSocket {
    /// Called inside a tokio runtime.
    fn new(sock: UdpSocket) -> io::Result<QuietSocket> {
        sock.set_nonblocking(true)?;
        Ok(QuietSocket {
            state: UdpSocketState::new((&sock).into())?,
            read: tcpwise_sys::async_fd(sock, Interest::READABLE)?,
            write: Mutex::new(None),
            blocked: AtomicBool::new(false),
        })
    }

    fn write(&self) -> MutexGuard<'_, Option<AsyncFd<OwnedFd>>> {
        self.write.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl AsyncUdpSocket for QuietSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Box::pin(Writable(self))
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        let sock = self.read.get_ref();
        let send = || self.state.send(sock.into(), transmit);
        if !self.blocked.load(Ordering::Acquire) {
            match send() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                sent => return sent,
            }
        }
        // The buffer was full: sends go through a registration for
        // writing, whose readiness a full buffer clears, so the next
        // poll waits for the kernel's word; the first one that goes
        // through ends it.
        let mut write = self.write();
        let Some(w) = write.as_ref() else {
            let dup = OwnedFd::from(sock.try_clone()?);
            *write = Some(tcpwise_sys::async_fd(dup, Interest::WRITABLE)?);
            self.blocked.store(true, Ordering::Release);
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let sent = w.try_io(Interest::WRITABLE, |_| send());
        if sent.is_ok() {
            *write = None;
            self.blocked.store(false, Ordering::Release);
        }
        sent
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let asked = bufs.len().min(meta.len()).min(BATCH_SIZE);
        loop {
            let mut ready = ready!(self.read.poll_read_ready(cx))?;
            match self.state.recv(self.read.get_ref().into(), bufs, meta) {
                Ok(n) => {
                    if n < asked {
                        ready.clear_ready();
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => ready.clear_ready(),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.read.get_ref().local_addr()
    }

    fn may_fragment(&self) -> bool {
        self.state.may_fragment()
    }

    fn max_transmit_segments(&self) -> usize {
        self.state.max_gso_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.state.gro_segments()
    }
}

/// quinn asks before every send: ready at once unless a send found the
/// buffer full, then when the kernel says there is room.
#[derive(Debug)]
struct Writable(Arc<QuietSocket>);

impl UdpPoller for Writable {
    fn poll_writable(self: Pin<&mut Self>, cx: &mut Context) -> Poll<io::Result<()>> {
        if !self.0.blocked.load(Ordering::Acquire) {
            return Poll::Ready(Ok(()));
        }
        match self.0.write().as_ref() {
            None => Poll::Ready(Ok(())),
            Some(w) => w.poll_write_ready(cx).map_ok(|_| ()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::time::Duration;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// Receives what is queued: (datagrams, bytes of the first).
    async fn receive(sock: &QuietSocket) -> io::Result<(usize, usize)> {
        let mut space = vec![0u8; 65_536 * 4];
        let mut bufs: Vec<IoSliceMut> = space.chunks_mut(65_536).map(IoSliceMut::new).collect();
        let mut meta = [RecvMeta::default(); 4];
        let n = poll_fn(|cx| sock.poll_recv(cx, &mut bufs, &mut meta)).await?;
        Ok((n, meta[0].len))
    }

    #[test]
    fn a_datagram_after_a_short_read_still_wakes_the_reader() {
        // A receive that got fewer datagrams than it asked for clears the
        // readiness without asking the kernel again: the next datagram
        // must still wake the reader (an edge tokio keeps); one that got
        // all it asked for must not clear it.
        let rt = runtime();
        rt.block_on(async {
            let sock = QuietSocket::new(UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
            let to = sock.local_addr().unwrap();
            let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
            // Six queued, four asked: a full batch keeps the readiness,
            // so the two left come without a new edge.
            for len in [100, 200, 300, 400, 500, 600] {
                peer.send_to(&vec![7u8; len], to).unwrap();
            }
            assert_eq!(receive(&sock).await.unwrap(), (4, 100));
            let rest = tokio::time::timeout(Duration::from_secs(5), receive(&sock)).await;
            assert_eq!(
                rest.expect("a full batch kept the readiness").unwrap(),
                (2, 500)
            );
            // Nothing queued now: a poll waits (no busy loop, no error).
            let waiting = poll_fn(|cx| {
                let mut b = [0u8; 64];
                let mut bufs = [IoSliceMut::new(&mut b)];
                let mut meta = [RecvMeta::default()];
                Poll::Ready(sock.poll_recv(cx, &mut bufs, &mut meta).is_pending())
            })
            .await;
            assert!(waiting);
            let late = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                peer.send_to(&[1u8; 300], to).unwrap();
            });
            let got = tokio::time::timeout(Duration::from_secs(5), receive(&sock)).await;
            late.join().unwrap();
            assert_eq!(
                got.expect("the late datagram woke the reader").unwrap(),
                (1, 300)
            );
        });
    }

    /// Runs `f` on a thread in a network namespace of its own whose
    /// loopback sends through a 1 Mbit/s token bucket; `None` (printed)
    /// without the privilege, unless the CI asks for it.
    fn in_slow_loopback<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> Option<R> {
        std::thread::spawn(move || {
            if let Err(e) = tcpwise_sys::unshare_thread_netns() {
                assert_ne!(
                    std::env::var("TCPWISE_REQUIRE_NETNS").as_deref(),
                    Ok("1"),
                    "a network namespace is required here: {e}"
                );
                eprintln!("skipping: no network namespace ({e})");
                return None;
            }
            let run = |args: &[&str]| {
                let ok = std::process::Command::new(args[0])
                    .args(&args[1..])
                    .status();
                assert!(ok.is_ok_and(|s| s.success()), "{args:?} failed");
            };
            run(&["ip", "link", "set", "lo", "up"]);
            let tbf = "tc qdisc add dev lo root tbf rate 1mbit burst 1600 limit 1000000";
            run(&tbf.split(' ').collect::<Vec<_>>());
            Some(f())
        })
        .join()
        .expect("namespace thread")
    }

    #[test]
    fn a_full_send_buffer_waits_for_room_then_sends() {
        // Datagrams queued in a token bucket stay charged to the socket:
        // a small send buffer fills, a send says WouldBlock, and only then
        // is writability asked of the kernel, until a send goes through.
        let outcome = in_slow_loopback(|| {
            runtime().block_on(async {
                let std_sock = UdpSocket::bind("127.0.0.1:0").unwrap();
                let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
                tcpwise_sys::force_buffer(
                    std::os::fd::AsFd::as_fd(&std_sock),
                    tcpwise_sys::Buffer::Send,
                    4096,
                );
                let sock = Arc::new(QuietSocket::new(std_sock).unwrap());
                let datagram = Transmit {
                    destination: sink.local_addr().unwrap(),
                    ecn: None,
                    contents: &[0u8; 1200],
                    segment_size: None,
                    src_ip: None,
                };
                let mut sent = 0;
                let full = loop {
                    match sock.try_send(&datagram) {
                        Ok(()) => sent += 1,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break true,
                        Err(e) => panic!("send: {e}"),
                    }
                    if sent == 1000 {
                        break false;
                    }
                };
                assert!(full, "1,000 datagrams went without filling the buffer");
                assert!(
                    sock.write().is_some(),
                    "a full buffer registers for writing"
                );
                assert!(sock.blocked.load(Ordering::Acquire));
                let mut poller = sock.clone().create_io_poller();
                let start = Instant::now();
                loop {
                    let wait = poll_fn(|cx| poller.as_mut().poll_writable(cx));
                    tokio::time::timeout(Duration::from_secs(10), wait)
                        .await
                        .expect("room came within 10 s")
                        .unwrap();
                    match sock.try_send(&datagram) {
                        Ok(()) => break,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => panic!("send: {e}"),
                    }
                    assert!(start.elapsed() < Duration::from_secs(10));
                }
                assert!(
                    sock.write().is_none(),
                    "a send that went through unregisters"
                );
                assert!(!sock.blocked.load(Ordering::Acquire));
                (sent, start.elapsed())
            })
        });
        if let Some((sent, waited)) = outcome {
            // 1 Mbit/s: each 1,228-byte datagram takes ~10 ms to leave.
            assert!(sent >= 2, "{sent} datagrams before the buffer filled");
            assert!(waited >= Duration::from_millis(5), "waited {waited:?}");
        }
    }
}
