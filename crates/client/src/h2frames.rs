//! A bound on HTTP/2 control-frame floods, counted off the wire under
//! hyper. hyper's HTTP/2 answers every PING and applies every SETTINGS,
//! so a server that sends them without end (or empty DATA, WINDOW_UPDATE,
//! PRIORITY, unknown frames) kept a request busy until `-m`. nghttp2,
//! curl's HTTP/2, gives up on a peer once 1,000 frames it must answer are
//! queued (`NGHTTP2_DEFAULT_MAX_OBQ_FLOOD_ITEM`); hyper queues one PONG
//! at most, so the same number is counted here as frames in a row that
//! carry nothing of a response. A frame that does (HEADERS, CONTINUATION,
//! DATA with payload) starts the count again, so a long download with
//! keep-alive PINGs is never stopped.

/// Frames in a row without a response's bytes before the connection is
/// given up (nghttp2's flood limit; curl 7.88 then exits 56, as `get` does).
pub const FLOOD_MAX: u32 = 1000;

/// Follows the frame headers in the bytes read on one HTTP/2 connection.
#[derive(Debug, Default)]
pub struct Frames {
    head: [u8; 9],
    have: usize,
    /// Payload bytes of the current frame still to pass.
    skip: u64,
    /// Frames in a row that carried nothing of a response.
    run: u32,
}

impl Frames {
    /// Takes the next bytes read; `Err(n)` once `n` frames in a row
    /// (more than [`FLOOD_MAX`]) carried nothing of a response.
    pub fn feed(&mut self, mut buf: &[u8]) -> Result<(), u32> {
        while !buf.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(buf.len() as u64);
                self.skip -= n;
                buf = &buf[n as usize..];
                continue;
            }
            let n = (9 - self.have).min(buf.len());
            self.head[self.have..self.have + n].copy_from_slice(&buf[..n]);
            self.have += n;
            buf = &buf[n..];
            if self.have == 9 {
                self.have = 0;
                self.frame()?;
            }
        }
        Ok(())
    }

    /// One complete frame header.
    fn frame(&mut self) -> Result<(), u32> {
        let h = self.head;
        let len = u64::from(u32::from_be_bytes([0, h[0], h[1], h[2]]));
        self.skip = len;
        // DATA with payload, HEADERS, CONTINUATION: a response moves.
        let progress = matches!((h[3], len), (0x0, 1..) | (0x1 | 0x9, _));
        self.run = if progress { 0 } else { self.run + 1 };
        if self.run > FLOOD_MAX {
            return Err(self.run);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let n = payload.len() as u32;
        let mut v = n.to_be_bytes()[1..].to_vec();
        v.extend([kind, flags, 0, 0, 0, 0]);
        v.extend(payload);
        v
    }

    #[test]
    fn pings_without_a_response_stop_at_the_limit_even_split_byte_by_byte() {
        let mut f = Frames::default();
        let ping = frame(0x6, 0, &[0; 8]);
        for _ in 0..FLOOD_MAX {
            for b in &ping {
                assert_eq!(f.feed(std::slice::from_ref(b)), Ok(()));
            }
        }
        assert_eq!(f.feed(&ping), Err(FLOOD_MAX + 1));
    }

    #[test]
    fn a_response_between_them_starts_the_count_again() {
        let mut f = Frames::default();
        let mut wire = Vec::new();
        for _ in 0..10 {
            for _ in 0..FLOOD_MAX {
                wire.extend(frame(0x4, 0, &[0, 3, 0, 0, 0, 100]));
            }
            wire.extend(frame(0x0, 0, b"payload"));
        }
        assert_eq!(f.feed(&wire), Ok(()));
        // Empty DATA frames carry nothing: they count.
        let empty: Vec<u8> = (0..=FLOOD_MAX).flat_map(|_| frame(0x0, 0, b"")).collect();
        assert_eq!(f.feed(&empty), Err(FLOOD_MAX + 1));
    }
}
