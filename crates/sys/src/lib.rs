//! # tcpwise-sys: the OS glue, in one place
//!
//! Thin, safe wrappers over the Linux calls tcpwise needs that std, tokio
//! and socket2 do not offer: TUN devices, named network namespaces,
//! timerfd/eventfd/epoll, process groups and the terminal, real-time
//! scheduling, `TCP_INFO`. **Every `unsafe` block of the workspace lives
//! in this crate**, each with a `SAFETY:` comment that says why it holds;
//! the other crates are `#![forbid(unsafe_code)]`. File descriptors are
//! returned as [`OwnedFd`], so they close exactly once (the mio style).
//!
//! One module per concern, as mio's `sys/unix/`: `time` (clocks, timerfd,
//! eventfd, scheduling), `netns` (namespaces, TUN), `process` (signals,
//! exec, process groups, limits), `fd` (reads, writes, epoll, poll,
//! locks), `diag` (the kernel's socket diagnostics, as `ss` reads them), `tcp` (`TCP_INFO`, BBR, pacing, sendfile, `MSG_ZEROCOPY`) and
//! [`uring`]; everything is re-exported here, so callers write
//! `tcpwise_sys::kill`.

pub mod uring;

mod diag;
mod fd;
mod netns;
mod process;
mod tcp;
mod time;

pub use diag::*;
pub use fd::*;
pub use netns::*;
pub use process::*;
pub use tcp::*;
pub use time::*;

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}
