//! The deterministic body the server sends: byte `i` of every response is
//! `pattern_byte(i)`, so clients can check bodies without storing them.
//! The pattern repeats every 251 bytes, so any run of it up to [`FRAME`]
//! bytes is a slice of one table built once.

use std::sync::OnceLock;

/// Byte `i` of every `/bytes/N` body.
pub fn pattern_byte(i: u64) -> u8 {
    (i.wrapping_mul(31).wrapping_add(7) % 251) as u8
}

/// Fills `buf` with the pattern starting at offset `at`.
pub fn fill(buf: &mut [u8], at: u64) {
    for (k, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(at + k as u64);
    }
}

/// Largest run [`slice`] returns (and the server's write size for bodies).
pub const FRAME: usize = 64 * 1024;

const PERIOD: u64 = 251;

/// The pattern from offset `at`, `len` bytes (at most [`FRAME`]).
pub fn slice(at: u64, len: usize) -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut v = vec![0; FRAME + PERIOD as usize];
        fill(&mut v, 0);
        v
    });
    let start = (at % PERIOD) as usize;
    &t[start..start + len.min(FRAME)]
}

/// The first `len` bytes of the pattern as a reader.
pub struct Reader {
    off: u64,
    len: u64,
}

impl Reader {
    /// `len` bytes from the start.
    pub fn new(len: u64) -> Reader {
        Reader { off: 0, len }
    }
}

impl std::io::Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (self.len - self.off).min(buf.len().min(FRAME) as u64) as usize;
        buf[..n].copy_from_slice(slice(self.off, n));
        self.off += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_match_the_pattern_anywhere() {
        for at in [0u64, 1, 250, 251, 1_000_003, 99_999_999_999] {
            let s = slice(at, FRAME);
            assert_eq!(s.len(), FRAME);
            for (k, b) in s.iter().enumerate().step_by(97) {
                assert_eq!(*b, pattern_byte(at + k as u64), "at {at} + {k}");
            }
        }
        assert_eq!(slice(5, FRAME + 10).len(), FRAME);
    }
}
