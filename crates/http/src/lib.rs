//! # tcpwise-http: HTTP/1.1 and HTTP/2 client with a warm-connection pool, and an origin server
//!
//! The client puts [`tcpwise_pool::IdlePool`] in front of hyper's
//! connection-level HTTP/1.1 API, so which idle connection a request reuses
//! is a deliberate, reported choice (Firefox's lesson: the one that moved
//! the largest burst has the largest server-side congestion window). Each
//! connection reads through [`tcpwise_tcp::SizedRead`] (read slow start by
//! default), leaves socket buffers to autotuning by default, sets
//! `TCP_NODELAY`, and records its burst history and `TCP_INFO`. Every
//! response carries its timings and a connection report.
//!
//! The server answers `/bytes/N`, `/delay/MS/bytes/N`, `/echo` and
//! `/health`, for tests, curl, wrk and the lab, on a lean HTTP/1.1 path
//! ([`h1`], shared with `tcpwise bench`) that costs no more CPU per
//! request than nginx.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod client;
pub mod curl;
pub mod h1;
pub mod pattern;
pub mod scenario;
pub mod server;
pub mod tls;

pub use client::{
    ATTEMPT_DELAY, Client, ClientConfig, ConnReport, Family, Head, HeadAction, Header, HttpError,
    Payload, Proxy, Request, Resolve, Response, Timings, TlsReport, TlsSessions, Version,
};
pub use server::{Limits, ServeOptions, serve, serve_threads};
