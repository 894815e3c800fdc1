//! The wire protocol: fixed 16-byte requests, replies of the size asked.
//! Small and fixed so the server's cost is the dispatch and the work, not
//! parsing.

/// Request length on the wire.
pub const REQUEST_LEN: usize = 16;
/// First four bytes of every request.
pub const MAGIC: u32 = 0x7477_6470; // "twdp"
/// Largest reply a request may ask for.
pub const MAX_REPLY: u32 = 1 << 20;
/// Largest work a request may ask for, µs.
pub const MAX_WORK_US: u32 = 1_000_000;

/// One request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// CPU work the server does before replying, µs.
    pub work_us: u32,
    /// Reply size, bytes.
    pub reply_bytes: u32,
    /// Sequence number, echoed in the reply's first four bytes.
    pub seq: u32,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// Not our protocol.
    #[error("not a tcpwise dispatch request (bad magic)")]
    Magic,
    /// Asks for too much.
    #[error("request out of range: work {work_us} µs, reply {reply_bytes} B")]
    Range {
        /// Work asked.
        work_us: u32,
        /// Reply asked.
        reply_bytes: u32,
    },
}

impl Request {
    /// The 16 bytes on the wire.
    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        b[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&self.work_us.to_be_bytes());
        b[8..12].copy_from_slice(&self.reply_bytes.to_be_bytes());
        b[12..16].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    /// Parses and checks one request.
    pub fn decode(b: &[u8; REQUEST_LEN]) -> Result<Request, ProtoError> {
        let word = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        if word(0) != MAGIC {
            return Err(ProtoError::Magic);
        }
        let r = Request {
            work_us: word(4),
            reply_bytes: word(8).max(4),
            seq: word(12),
        };
        if r.work_us > MAX_WORK_US || r.reply_bytes > MAX_REPLY {
            return Err(ProtoError::Range {
                work_us: r.work_us,
                reply_bytes: r.reply_bytes,
            });
        }
        Ok(r)
    }

    /// The reply: `reply_bytes` bytes starting with the sequence number.
    pub fn reply(&self) -> Vec<u8> {
        let mut v = vec![0x2a; self.reply_bytes as usize];
        v[0..4].copy_from_slice(&self.seq.to_be_bytes());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let r = Request {
            work_us: 50,
            reply_bytes: 512,
            seq: 7,
        };
        assert_eq!(Request::decode(&r.encode()), Ok(r));
        assert_eq!(&r.reply()[..4], &7u32.to_be_bytes());
        assert_eq!(r.reply().len(), 512);
        let mut bad = r.encode();
        bad[0] = b'G';
        assert_eq!(Request::decode(&bad), Err(ProtoError::Magic));
        let big = Request {
            work_us: MAX_WORK_US + 1,
            ..r
        };
        assert!(matches!(
            Request::decode(&big.encode()),
            Err(ProtoError::Range { .. })
        ));
    }
}
