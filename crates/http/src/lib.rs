//! # tcpwise-http: what the HTTP client and the origin server share
//!
//! As hyper's `proto`, the layer under both ends: [`h1`], HTTP/1.1 framing
//! without I/O (request and response heads, chunked bodies), which the
//! server and `tcpwise bench` parse in place; and [`tls`], the rustls
//! configurations both ends build (the web's roots plus `--cacert`, `-k`,
//! self-signed certificates for test origins, session resumption).
//!
//! The client is `tcpwise-client`, the server `tcpwise-server`, curl's
//! command-line rules `tcpwise-curl`.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod h1;
pub mod quic;
pub mod tls;
