//! curl's exit codes, in one table: every failure `tcpwise get` can meet
//! maps to the number curl 7.88 exits with for the same failure (its
//! `libcurl-errors(3)` page), so scripts that test `$?` behave alike.

use super::CurlError;
use super::transfer::TransferError;
use tcpwise_client::HttpError;

/// curl's exit code for a client error.
pub fn http(e: &HttpError) -> i32 {
    match e {
        HttpError::Url { .. } | HttpError::Buffer(_) | HttpError::TlsSetup(_) => 2,
        HttpError::Dns { .. } => 6,
        HttpError::Upload(tcpwise_client::PayloadError::Open { .. }) => 26,
        HttpError::Upload(tcpwise_client::PayloadError::Rewind) => 65,
        HttpError::Connect { source, .. } if source.kind() == std::io::ErrorKind::TimedOut => 28,
        HttpError::Connect { .. } => 7,
        // Not HTTP at all: curl 7.88 takes it for HTTP/0.9, which it
        // refuses as an unsupported protocol (1).
        HttpError::Protocol { source, .. } if source.to_string().contains("HTTP version") => 1,
        HttpError::Protocol { .. } => 8,
        HttpError::Quic {
            connecting: true, ..
        } => 96,
        HttpError::Quic { .. } => 95,
        HttpError::EmptyReply { .. } => 52,
        HttpError::Sink(_) => 23,
        HttpError::Tls { .. } => 35,
        HttpError::Certificate { .. } => 60,
        HttpError::TooLarge { .. } => 63,
        // curl 7.88 with nghttp2: "Flooding was detected", 56.
        HttpError::Flood { .. } => 56,
        HttpError::TooManyRedirects { .. } => 47,
        // curl's 18: the body ended before its length said it would.
        HttpError::Body { .. } if e.is_partial() => 18,
        HttpError::Body { .. } | HttpError::Tunnel { .. } | HttpError::HeadersTooLarge { .. } => 56,
    }
}

/// curl's exit code for a failed transfer.
pub fn transfer(e: &TransferError) -> i32 {
    match e {
        TransferError::Http(h) => http(h),
        TransferError::BadUrl { code, .. } => *code,
        TransferError::Status(_) => 22,
        TransferError::NoResume => 33,
        TransferError::Decode { .. } => 61,
    }
}

/// curl's exit code for words that make no request (bad flags or URL).
pub fn words(e: &CurlError) -> i32 {
    match e {
        CurlError::Glob { .. } | CurlError::Url { .. } => URL_MALFORMAT,
        CurlError::Scheme { .. } => 1,
        CurlError::Upload { .. } | CurlError::Config { .. } | CurlError::FormFile { .. } => 26,
        _ => 2,
    }
}

/// curl's CURLE_URL_MALFORMAT (a bad glob pattern).
pub const URL_MALFORMAT: i32 = 3;

/// `--max-time` ran out.
pub const MAX_TIME: i32 = 28;

/// Whether an error is a refused connection (`--retry-connrefused`).
pub fn refused(e: &TransferError) -> bool {
    matches!(e, TransferError::Http(HttpError::Connect { source, .. })
        if source.kind() == std::io::ErrorKind::ConnectionRefused)
}

// How the binary learns these codes: each error of `get` classifies
// itself as curl's number (bad words as usage, exit 2); a client error
// reaches the binary inside one of them.
impl tcpwise_outcome::Classify for TransferError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        Some(tcpwise_outcome::Class::Tool(transfer(self)))
    }
}

impl tcpwise_outcome::Classify for CurlError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        Some(match words(self) {
            2 => tcpwise_outcome::Class::Usage,
            n => tcpwise_outcome::Class::Tool(n),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_codes_are_curls() {
        assert_eq!(transfer(&TransferError::Status(404)), 22);
        assert_eq!(transfer(&TransferError::NoResume), 33);
        let refused_conn = TransferError::Http(HttpError::Connect {
            target: "x".into(),
            source: std::io::ErrorKind::ConnectionRefused.into(),
        });
        assert_eq!(transfer(&refused_conn), 7);
        assert!(refused(&refused_conn));
        let timed_out = TransferError::Http(HttpError::Connect {
            target: "x".into(),
            source: std::io::ErrorKind::TimedOut.into(),
        });
        assert_eq!(transfer(&timed_out), 28);
        assert!(!refused(&timed_out));
    }
}
