//! The 16 KiB page format: a header that says which page this is and
//! which write made it, a checksum over everything else, and a trailer
//! that repeats the version (InnoDB's `FIL_PAGE_END_LSN` idea), so a lost
//! write (old version), a misdirected one (wrong page number) and a torn
//! one (sectors of two versions) are each caught when the file is checked.
//!
//! ```text
//! 0..8    magic  "TCPWAIO\x01"
//! 8..16   page number (u64 LE)
//! 16..24  version: how many times the page was written (u64 LE)
//! 24..28  CRC-32 of bytes 0..24 and 28..PAGE
//! 32..    rows (a pattern seeded by the page number)
//! PAGE-8  version again
//! ```

/// Page size, as InnoDB's default.
pub const PAGE: usize = 16 * 1024;

const MAGIC: &[u8; 8] = b"TCPWAIO\x01";
const ROW: usize = 64;
const ROWS_START: usize = 32;
const ROWS_END: usize = PAGE - 8;

/// What is wrong with a page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// Not a tcpwise page at all.
    #[error("no tcpwise page header")]
    Magic,
    /// The header names another page: a misdirected write.
    #[error("header says page {0}")]
    WrongPage(u64),
    /// Checksum or trailer mismatch: a torn or corrupted write.
    #[error("checksum mismatch (torn or corrupted write)")]
    Checksum,
    /// Intact, but not the version last written: a lost write.
    #[error("version {found}, but the last write was version {expected} (lost write)")]
    Stale {
        /// Version on disk.
        found: u64,
        /// Version of the last completed write.
        expected: u64,
    },
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn crc(b: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&b[..24]);
    h.update(&b[28..PAGE]);
    h.finalize()
}

fn seal(b: &mut [u8], version: u64) {
    b[16..24].copy_from_slice(&version.to_le_bytes());
    b[ROWS_END..PAGE].copy_from_slice(&version.to_le_bytes());
    let c = crc(b);
    b[24..28].copy_from_slice(&c.to_le_bytes());
}

/// The version in a page's header (no checking: for a page this run just
/// sealed).
pub fn version_of(b: &[u8]) -> u64 {
    u64_at(b, 16)
}

/// Writes page `no`, version 0, into `b` (`PAGE` bytes).
pub fn format(b: &mut [u8], no: u64) {
    b[..PAGE].fill(0);
    b[..8].copy_from_slice(MAGIC);
    b[8..16].copy_from_slice(&no.to_le_bytes());
    let mut x = no.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in b[ROWS_START..ROWS_END].chunks_exact_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    seal(b, 0);
}

/// Checks page `no` in `b` and returns its version.
pub fn check(b: &[u8], no: u64) -> Result<u64, PageError> {
    if &b[..8] != MAGIC {
        return Err(PageError::Magic);
    }
    if u64_at(b, 8) != no {
        return Err(PageError::WrongPage(u64_at(b, 8)));
    }
    let version = u64_at(b, 16);
    let stored = u32::from_le_bytes(b[24..28].try_into().expect("4 bytes"));
    if stored != crc(b) || u64_at(b, ROWS_END) != version {
        return Err(PageError::Checksum);
    }
    Ok(version)
}

/// The transaction's work on a page it read: check it, update one row
/// (an `UPDATE ... WHERE id = ?` without an index change), bump the
/// version and reseal. Returns the new version.
pub fn update(b: &mut [u8], no: u64) -> Result<u64, PageError> {
    let version = check(b, no)? + 1;
    let rows = (ROWS_END - ROWS_START) / ROW;
    let at = ROWS_START + (version as usize % rows) * ROW;
    for (i, chunk) in b[at..at + ROW].chunks_exact_mut(8).enumerate() {
        let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        chunk.copy_from_slice(&(v.wrapping_add(version) ^ i as u64).to_le_bytes());
    }
    seal(b, version);
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formatted_page_checks_and_updates_bump_the_version() {
        let mut b = vec![0u8; PAGE];
        format(&mut b, 42);
        assert_eq!(check(&b, 42), Ok(0));
        assert_eq!(check(&b, 41), Err(PageError::WrongPage(42)));
        assert_eq!(update(&mut b, 42), Ok(1));
        assert_eq!(update(&mut b, 42), Ok(2));
        assert_eq!(check(&b, 42), Ok(2));
    }

    #[test]
    fn torn_and_foreign_pages_are_caught() {
        let mut old = vec![0u8; PAGE];
        format(&mut old, 7);
        let mut new = old.clone();
        update(&mut new, 7).unwrap();
        // First 4 KiB sector of the new version, the rest of the old one.
        let mut torn = old.clone();
        torn[..4096].copy_from_slice(&new[..4096]);
        assert_eq!(check(&torn, 7), Err(PageError::Checksum));
        let mut flipped = new.clone();
        flipped[9000] ^= 1;
        assert_eq!(check(&flipped, 7), Err(PageError::Checksum));
        assert_eq!(check(&vec![0u8; PAGE], 7), Err(PageError::Magic));
    }
}
