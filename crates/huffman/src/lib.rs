//! HPACK's Huffman code (RFC 7541, Appendix B), the one QPACK uses too
//! (RFC 9204 §4.1.2), table-driven.
//!
//! Why ours: the `h3` crate (0.0.8, the newest) codes every field value of
//! every HTTP/3 request and response with it, one bit window at a time,
//! through three allocations a string, a large share of
//! `tcpwise serve --http3`'s CPU per small request (measured in
//! `docs/get.md`, "QPACK's Huffman coding"). Its `qpack::prefix_string`
//! calls this instead (the vendored copy in `vendor/h3`, see its
//! `TCPWISE.md`). The output is the same bytes h3 wrote, checked against
//! h3's own coder there.
//!
//! Encoding shifts each symbol's code into a 64-bit accumulator and takes
//! whole bytes off it. Decoding uses that the code is canonical (codes of
//! one length are consecutive numbers, and each length's first code
//! follows the last of the length before, shifted): for each length from
//! the shortest, the next bits are a symbol of that length exactly when
//! they are below that length's first code plus its count. Most symbols
//! of header text are 5 to 8 bits long, so most take one to four tries.

#![forbid(unsafe_code)]

/// Each symbol's code and its length in bits, symbols 0 to 255 and EOS
/// (256), RFC 7541 Appendix B.
#[rustfmt::skip]
const CODES: [(u32, u8); 257] = [
    (0x1ff8, 13), (0x7fffd8, 23), (0xfffffe2, 28), (0xfffffe3, 28), // 0..
    (0xfffffe4, 28), (0xfffffe5, 28), (0xfffffe6, 28), (0xfffffe7, 28), // 4..
    (0xfffffe8, 28), (0xffffea, 24), (0x3ffffffc, 30), (0xfffffe9, 28), // 8..
    (0xfffffea, 28), (0x3ffffffd, 30), (0xfffffeb, 28), (0xfffffec, 28), // 12..
    (0xfffffed, 28), (0xfffffee, 28), (0xfffffef, 28), (0xffffff0, 28), // 16..
    (0xffffff1, 28), (0xffffff2, 28), (0x3ffffffe, 30), (0xffffff3, 28), // 20..
    (0xffffff4, 28), (0xffffff5, 28), (0xffffff6, 28), (0xffffff7, 28), // 24..
    (0xffffff8, 28), (0xffffff9, 28), (0xffffffa, 28), (0xffffffb, 28), // 28..
    (0x14, 6), (0x3f8, 10), (0x3f9, 10), (0xffa, 12), // 32..
    (0x1ff9, 13), (0x15, 6), (0xf8, 8), (0x7fa, 11), // 36..
    (0x3fa, 10), (0x3fb, 10), (0xf9, 8), (0x7fb, 11), // 40..
    (0xfa, 8), (0x16, 6), (0x17, 6), (0x18, 6), // 44..
    (0x0, 5), (0x1, 5), (0x2, 5), (0x19, 6), // 48..
    (0x1a, 6), (0x1b, 6), (0x1c, 6), (0x1d, 6), // 52..
    (0x1e, 6), (0x1f, 6), (0x5c, 7), (0xfb, 8), // 56..
    (0x7ffc, 15), (0x20, 6), (0xffb, 12), (0x3fc, 10), // 60..
    (0x1ffa, 13), (0x21, 6), (0x5d, 7), (0x5e, 7), // 64..
    (0x5f, 7), (0x60, 7), (0x61, 7), (0x62, 7), // 68..
    (0x63, 7), (0x64, 7), (0x65, 7), (0x66, 7), // 72..
    (0x67, 7), (0x68, 7), (0x69, 7), (0x6a, 7), // 76..
    (0x6b, 7), (0x6c, 7), (0x6d, 7), (0x6e, 7), // 80..
    (0x6f, 7), (0x70, 7), (0x71, 7), (0x72, 7), // 84..
    (0xfc, 8), (0x73, 7), (0xfd, 8), (0x1ffb, 13), // 88..
    (0x7fff0, 19), (0x1ffc, 13), (0x3ffc, 14), (0x22, 6), // 92..
    (0x7ffd, 15), (0x3, 5), (0x23, 6), (0x4, 5), // 96..
    (0x24, 6), (0x5, 5), (0x25, 6), (0x26, 6), // 100..
    (0x27, 6), (0x6, 5), (0x74, 7), (0x75, 7), // 104..
    (0x28, 6), (0x29, 6), (0x2a, 6), (0x7, 5), // 108..
    (0x2b, 6), (0x76, 7), (0x2c, 6), (0x8, 5), // 112..
    (0x9, 5), (0x2d, 6), (0x77, 7), (0x78, 7), // 116..
    (0x79, 7), (0x7a, 7), (0x7b, 7), (0x7ffe, 15), // 120..
    (0x7fc, 11), (0x3ffd, 14), (0x1ffd, 13), (0xffffffc, 28), // 124..
    (0xfffe6, 20), (0x3fffd2, 22), (0xfffe7, 20), (0xfffe8, 20), // 128..
    (0x3fffd3, 22), (0x3fffd4, 22), (0x3fffd5, 22), (0x7fffd9, 23), // 132..
    (0x3fffd6, 22), (0x7fffda, 23), (0x7fffdb, 23), (0x7fffdc, 23), // 136..
    (0x7fffdd, 23), (0x7fffde, 23), (0xffffeb, 24), (0x7fffdf, 23), // 140..
    (0xffffec, 24), (0xffffed, 24), (0x3fffd7, 22), (0x7fffe0, 23), // 144..
    (0xffffee, 24), (0x7fffe1, 23), (0x7fffe2, 23), (0x7fffe3, 23), // 148..
    (0x7fffe4, 23), (0x1fffdc, 21), (0x3fffd8, 22), (0x7fffe5, 23), // 152..
    (0x3fffd9, 22), (0x7fffe6, 23), (0x7fffe7, 23), (0xffffef, 24), // 156..
    (0x3fffda, 22), (0x1fffdd, 21), (0xfffe9, 20), (0x3fffdb, 22), // 160..
    (0x3fffdc, 22), (0x7fffe8, 23), (0x7fffe9, 23), (0x1fffde, 21), // 164..
    (0x7fffea, 23), (0x3fffdd, 22), (0x3fffde, 22), (0xfffff0, 24), // 168..
    (0x1fffdf, 21), (0x3fffdf, 22), (0x7fffeb, 23), (0x7fffec, 23), // 172..
    (0x1fffe0, 21), (0x1fffe1, 21), (0x3fffe0, 22), (0x1fffe2, 21), // 176..
    (0x7fffed, 23), (0x3fffe1, 22), (0x7fffee, 23), (0x7fffef, 23), // 180..
    (0xfffea, 20), (0x3fffe2, 22), (0x3fffe3, 22), (0x3fffe4, 22), // 184..
    (0x7ffff0, 23), (0x3fffe5, 22), (0x3fffe6, 22), (0x7ffff1, 23), // 188..
    (0x3ffffe0, 26), (0x3ffffe1, 26), (0xfffeb, 20), (0x7fff1, 19), // 192..
    (0x3fffe7, 22), (0x7ffff2, 23), (0x3fffe8, 22), (0x1ffffec, 25), // 196..
    (0x3ffffe2, 26), (0x3ffffe3, 26), (0x3ffffe4, 26), (0x7ffffde, 27), // 200..
    (0x7ffffdf, 27), (0x3ffffe5, 26), (0xfffff1, 24), (0x1ffffed, 25), // 204..
    (0x7fff2, 19), (0x1fffe3, 21), (0x3ffffe6, 26), (0x7ffffe0, 27), // 208..
    (0x7ffffe1, 27), (0x3ffffe7, 26), (0x7ffffe2, 27), (0xfffff2, 24), // 212..
    (0x1fffe4, 21), (0x1fffe5, 21), (0x3ffffe8, 26), (0x3ffffe9, 26), // 216..
    (0xffffffd, 28), (0x7ffffe3, 27), (0x7ffffe4, 27), (0x7ffffe5, 27), // 220..
    (0xfffec, 20), (0xfffff3, 24), (0xfffed, 20), (0x1fffe6, 21), // 224..
    (0x3fffe9, 22), (0x1fffe7, 21), (0x1fffe8, 21), (0x7ffff3, 23), // 228..
    (0x3fffea, 22), (0x3fffeb, 22), (0x1ffffee, 25), (0x1ffffef, 25), // 232..
    (0xfffff4, 24), (0xfffff5, 24), (0x3ffffea, 26), (0x7ffff4, 23), // 236..
    (0x3ffffeb, 26), (0x7ffffe6, 27), (0x3ffffec, 26), (0x3ffffed, 26), // 240..
    (0x7ffffe7, 27), (0x7ffffe8, 27), (0x7ffffe9, 27), (0x7ffffea, 27), // 244..
    (0x7ffffeb, 27), (0xffffffe, 28), (0x7ffffec, 27), (0x7ffffed, 27), // 248..
    (0x7ffffee, 27), (0x7ffffef, 27), (0x7fffff0, 27), (0x3ffffee, 26), // 252..
    (0x3fffffff, 30), // 256..
];

/// The end-of-string symbol: never coded, its first bits pad the last byte.
const EOS: usize = 256;
/// The shortest and longest code lengths in the table.
const MIN_LEN: u32 = 5;
const MAX_LEN: u32 = 30;

/// What decoding a canonical code needs, per length: the first code of
/// that length, how many codes it has, and where its symbols start in
/// [`Canonical::symbols`] (symbols sorted by length, then value).
struct Canonical {
    first: [u32; MAX_LEN as usize + 1],
    count: [u32; MAX_LEN as usize + 1],
    start: [u16; MAX_LEN as usize + 1],
    symbols: [u16; 257],
}

const CANONICAL: Canonical = canonical();

/// Derives [`Canonical`] from [`CODES`] at compile time; a table that is
/// not canonical fails the build.
const fn canonical() -> Canonical {
    let mut c = Canonical {
        first: [0; MAX_LEN as usize + 1],
        count: [0; MAX_LEN as usize + 1],
        start: [0; MAX_LEN as usize + 1],
        symbols: [0; 257],
    };
    let mut at = 0;
    let mut len = MIN_LEN;
    let mut next_code = 0u32;
    while len <= MAX_LEN {
        c.start[len as usize] = at as u16;
        c.first[len as usize] = next_code;
        let mut sym = 0;
        while sym < 257 {
            if CODES[sym].1 as u32 == len {
                assert!(
                    CODES[sym].0 == next_code,
                    "the Huffman table is not canonical"
                );
                c.symbols[at] = sym as u16;
                at += 1;
                next_code += 1;
                c.count[len as usize] += 1;
            }
            sym += 1;
        }
        next_code <<= 1;
        len += 1;
    }
    assert!(at == 257, "a code length outside 5..=30");
    // Complete (Kraft's sum is one): 30 bits always end in a symbol, so
    // `decode` never looks past the longest length.
    assert!(
        next_code == 1 << (MAX_LEN + 1),
        "the Huffman table is not complete"
    );
    c
}

/// Bytes the Huffman coding of `src` takes.
pub fn encoded_len(src: &[u8]) -> usize {
    let bits: usize = src
        .iter()
        .map(|&b| usize::from(CODES[usize::from(b)].1))
        .sum();
    bits.div_ceil(8)
}

/// The Huffman coding of `src`, byte by byte ([`encoded_len`] of them),
/// the last byte padded with ones (EOS's first bits).
pub fn encode(src: &[u8]) -> Encode<'_> {
    Encode {
        src: src.iter(),
        acc: 0,
        bits: 0,
    }
}

/// The iterator [`encode`] returns.
#[derive(Debug, Clone)]
pub struct Encode<'a> {
    src: std::slice::Iter<'a, u8>,
    /// Coded bits not yet taken off, in the low `bits` bits.
    acc: u64,
    bits: u32,
}

impl Iterator for Encode<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        // At most 7 bits wait when a symbol of at most 30 comes in: the
        // accumulator never holds more than 37.
        while self.bits < 8 {
            let Some(&b) = self.src.next() else {
                if self.bits == 0 {
                    return None;
                }
                let pad = 8 - self.bits;
                self.bits = 0;
                return Some(((self.acc << pad) | ((1 << pad) - 1)) as u8);
            };
            let (code, len) = CODES[usize::from(b)];
            self.acc = (self.acc << len) | u64::from(code);
            self.bits += u32::from(len);
        }
        self.bits -= 8;
        Some((self.acc >> self.bits) as u8)
    }
}

/// Why a Huffman-coded string is not one (RFC 7541 §5.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The string codes EOS, which only pads.
    #[error("the string codes EOS")]
    Eos,
    /// More than 7 bits are left at the end, or they are not all ones.
    #[error("the padding is longer than 7 bits or not EOS's first bits")]
    Padding,
}

/// Decodes the Huffman-coded `src`, appending the symbols to `out`.
pub fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    let c = &CANONICAL;
    let mut input = src.iter();
    // Bits not yet decoded, in the low `bits` bits.
    let mut acc: u64 = 0;
    let mut bits: u32 = 0;
    loop {
        // Room for a longest code: 30 bits and up to 7 more waiting.
        while bits <= 56 {
            let Some(&b) = input.next() else { break };
            acc = (acc << 8) | u64::from(b);
            bits += 8;
        }
        let mut len = MIN_LEN;
        loop {
            if len > bits {
                // Only the end's padding is shorter than any code left.
                let mask = (1u64 << bits) - 1;
                return match bits <= 7 && acc & mask == mask {
                    true => Ok(()),
                    false => Err(DecodeError::Padding),
                };
            }
            let code = ((acc >> (bits - len)) & ((1u64 << len) - 1)) as u32;
            let l = len as usize;
            if code < c.first[l] + c.count[l] {
                let sym =
                    usize::from(c.symbols[usize::from(c.start[l]) + (code - c.first[l]) as usize]);
                if sym == EOS {
                    return Err(DecodeError::Eos);
                }
                out.push(sym as u8);
                bits -= len;
                break;
            }
            len += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 7541's examples of Huffman-coded strings (Appendix C.4 and C.6).
    #[test]
    fn the_rfc_examples_code_and_decode_to_the_rfc_bytes() {
        let examples = [
            ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
            ("no-cache", "a8eb 1064 9cbf"),
            ("custom-key", "25a8 49e9 5ba9 7d7f"),
            ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
            ("302", "6402"),
            ("private", "aec3 771a 4b"),
            (
                "Mon, 21 Oct 2013 20:13:21 GMT",
                "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff",
            ),
            (
                "https://www.example.com",
                "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3",
            ),
        ];
        for (text, coded) in examples {
            let coded = hex(coded);
            assert_eq!(encode(text.as_bytes()).collect::<Vec<_>>(), coded, "{text}");
            assert_eq!(encoded_len(text.as_bytes()), coded.len(), "{text}");
            let mut out = Vec::new();
            decode(&coded, &mut out).unwrap();
            assert_eq!(out, text.as_bytes());
        }
    }

    #[test]
    fn every_byte_codes_and_decodes_alone_and_in_a_row() {
        let all: Vec<u8> = (0..=255).collect();
        for s in all.chunks(1).chain([&all[..]]) {
            let coded: Vec<u8> = encode(s).collect();
            let mut out = Vec::new();
            decode(&coded, &mut out).unwrap();
            assert_eq!(out, s);
        }
    }

    #[test]
    fn bad_endings_and_eos_are_refused() {
        let mut out = Vec::new();
        // 16 bits of ones: padding longer than 7 bits.
        assert_eq!(decode(&[0xff, 0xff], &mut out), Err(DecodeError::Padding));
        // 'a' (00011) padded with zeros instead of ones.
        assert_eq!(decode(&[0b0001_1000], &mut out), Err(DecodeError::Padding));
        assert_eq!(out, b"a");
        // EOS itself (30 ones), then two bits of padding.
        out.clear();
        assert_eq!(decode(&[0xff; 4], &mut out), Err(DecodeError::Eos));
        // Nothing at all is the empty string.
        assert_eq!(decode(&[], &mut out), Ok(()));
        assert!(out.is_empty());
    }

    proptest! {
        #[test]
        fn any_bytes_round_trip(s in proptest::collection::vec(any::<u8>(), 0..200)) {
            let coded: Vec<u8> = encode(&s).collect();
            prop_assert_eq!(coded.len(), encoded_len(&s));
            let mut out = Vec::new();
            decode(&coded, &mut out).unwrap();
            prop_assert_eq!(out, s);
        }

        #[test]
        fn what_decodes_codes_back_to_the_same_bytes(s in proptest::collection::vec(any::<u8>(), 0..64)) {
            // A valid coding has one padding only: decoding loses nothing.
            let mut out = Vec::new();
            if decode(&s, &mut out).is_ok() {
                prop_assert_eq!(encode(&out).collect::<Vec<u8>>(), s);
            }
        }
    }
}
