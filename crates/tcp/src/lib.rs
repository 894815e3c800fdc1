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
//!
//! The policy parts ([`ReadSizer`], [`BurstMeter`], [`path`]) never touch a
//! socket or a clock: callers pass sizes and `now`.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod buffer;
pub mod burst;
pub mod info;
pub mod path;
pub mod read_sizer;

pub use buffer::{AppliedBuffers, BufferError, BufferPolicy};
pub use burst::BurstMeter;
pub use info::TcpInfo;
pub use read_sizer::{ReadSizer, SizedRead};
