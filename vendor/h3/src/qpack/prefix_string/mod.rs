// tcpwise: the Huffman coding is tcpwise-huffman's, table-driven, in
// place of h3's bit-window coder (kept below for the tests, which check
// that both write the same bytes). Why, and the figures: vendor/h3/TCPWISE.md.
#[cfg(test)]
mod bitwin;
#[cfg(test)]
mod decode;
#[cfg(test)]
mod encode;
#[cfg(test)]
use self::{bitwin::BitWindow, decode::HpackStringDecode, encode::HpackStringEncode};

use std::convert::TryInto;
use std::fmt;
use std::num::TryFromIntError;

use bytes::{Buf, BufMut};

use crate::proto::coding::BufMutExt;
use crate::qpack::prefix_int::{self, Error as IntegerError};

#[derive(Debug, PartialEq)]
pub enum Error {
    UnexpectedEnd,
    Integer(IntegerError),
    HuffmanDecoding(tcpwise_huffman::DecodeError),
    BufSize(TryFromIntError),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnexpectedEnd => write!(f, "unexpected end"),
            Error::Integer(e) => write!(f, "could not parse integer: {}", e),
            Error::HuffmanDecoding(e) => write!(f, "Huffman decode failed: {}", e),
            Error::BufSize(_) => write!(f, "number in buffer wrong size"),
        }
    }
}

pub fn decode<B: Buf>(size: u8, buf: &mut B) -> Result<Vec<u8>, Error> {
    let (flags, len) = prefix_int::decode(size - 1, buf)?;
    let len: usize = len.try_into()?;
    if buf.remaining() < len {
        return Err(Error::UnexpectedEnd);
    }
    // tcpwise: decoded from the buffer in place when it holds the whole
    // string in one chunk (it does for a field section h3 has gathered),
    // instead of copied into two vectors first.
    if buf.chunk().len() >= len {
        let value = string_value(flags, &buf.chunk()[..len])?;
        buf.advance(len);
        return Ok(value);
    }
    string_value(flags, &buf.copy_to_bytes(len))
}

/// A string literal's bytes, Huffman-decoded when its flag says so.
fn string_value(flags: u8, payload: &[u8]) -> Result<Vec<u8>, Error> {
    if flags & 1 == 0 {
        return Ok(payload.to_vec());
    }
    // Huffman coding takes at least 5 bits a byte.
    let mut decoded = Vec::with_capacity(payload.len() * 8 / 5);
    tcpwise_huffman::decode(payload, &mut decoded).map_err(Error::HuffmanDecoding)?;
    Ok(decoded)
}

pub fn encode<B: BufMut>(size: u8, flags: u8, value: &[u8], buf: &mut B) -> Result<(), Error> {
    let len = tcpwise_huffman::encoded_len(value);
    prefix_int::encode(size - 1, flags << 1 | 1, len.try_into()?, buf);
    for byte in tcpwise_huffman::encode(value) {
        buf.write(byte);
    }
    Ok(())
}

impl From<IntegerError> for Error {
    fn from(error: IntegerError) -> Self {
        match error {
            IntegerError::UnexpectedEnd => Error::UnexpectedEnd,
            e => Error::Integer(e),
        }
    }
}

impl From<TryFromIntError> for Error {
    fn from(error: TryFromIntError) -> Self {
        Error::BufSize(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use assert_matches::assert_matches;
    use std::io::Cursor;

    /// tcpwise: tcpwise-huffman writes the bytes h3's own coder wrote,
    /// for every byte alone and for any string.
    #[test]
    fn tcpwise_huffman_codes_as_h3_did() {
        let old = |v: &[u8]| Vec::from(v).hpack_encode().unwrap();
        let new = |v: &[u8]| tcpwise_huffman::encode(v).collect::<Vec<u8>>();
        for b in 0..=255u8 {
            assert_eq!(new(&[b]), old(&[b]), "byte {b}");
        }
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let v: Vec<u8> = (0..rng.usize(0..64)).map(|_| rng.u8(..)).collect();
            assert_eq!(new(&v), old(&v), "{v:?}");
        }
    }

    /// tcpwise: what h3's own decoder took, tcpwise-huffman decodes to the
    /// same bytes, over the codings of random strings and over random
    /// bytes; where they differ, RFC 7541 5.2 decides, and this counts how
    /// often h3 accepted what the RFC refuses.
    #[test]
    fn tcpwise_huffman_decodes_as_h3_did() {
        let old = |v: &[u8]| -> Result<Vec<u8>, ()> {
            Vec::from(v)
                .hpack_decode()
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| ())
        };
        let new = |v: &[u8]| {
            let mut out = Vec::new();
            tcpwise_huffman::decode(v, &mut out).map(|()| out)
        };
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..20_000 {
            let s: Vec<u8> = (0..rng.usize(0..64)).map(|_| rng.u8(..)).collect();
            let coded = Vec::from(&s[..]).hpack_encode().unwrap();
            assert_eq!(new(&coded).as_deref(), Ok(&s[..]));
            assert_eq!(old(&coded).as_deref(), Ok(&s[..]));
        }
        let (mut same, mut h3_only, mut ours_only) = (0, 0, 0);
        for _ in 0..200_000 {
            let v: Vec<u8> = (0..rng.usize(0..8)).map(|_| rng.u8(..)).collect();
            match (old(&v), new(&v)) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{v:?}");
                    same += 1
                }
                (Err(()), Err(_)) => same += 1,
                (Ok(_), Err(e)) => {
                    h3_only += 1;
                    assert_eq!(e, tcpwise_huffman::DecodeError::Padding, "{v:?}");
                }
                (Err(()), Ok(_)) => ours_only += 1,
            }
        }
        println!(
            "random inputs: {same} alike, {h3_only} taken by h3 alone, {ours_only} by ours alone"
        );
        assert_eq!(ours_only, 0);
    }

    #[test]
    fn codec_6() {
        let mut buf = Vec::new();
        encode(6, 0b01, b"name without ref", &mut buf).unwrap();
        let mut read = Cursor::new(&buf);
        assert_eq!(
            &buf,
            &[
                0b0110_1100,
                168,
                116,
                149,
                79,
                6,
                76,
                231,
                181,
                42,
                88,
                89,
                127
            ]
        );
        assert_eq!(decode(6, &mut read).unwrap(), b"name without ref");
    }

    #[test]
    fn codec_8() {
        let mut buf = Vec::new();
        encode(8, 0b01, b"name with ref", &mut buf).unwrap();
        let mut read = Cursor::new(&buf);
        assert_eq!(
            &buf,
            &[0b1000_1010, 168, 116, 149, 79, 6, 76, 234, 88, 89, 127]
        );
        assert_eq!(decode(8, &mut read).unwrap(), b"name with ref");
    }

    #[test]
    fn codec_8_empty() {
        let mut buf = Vec::new();
        encode(8, 0b01, b"", &mut buf).unwrap();
        let mut read = Cursor::new(&buf);
        assert_eq!(&buf, &[0b1000_0000]);
        assert_eq!(decode(8, &mut read).unwrap(), b"");
    }

    #[test]
    fn decode_non_huffman() {
        let buf = vec![0b0100_0011, b'b', b'a', b'r'];
        let mut read = Cursor::new(&buf);
        assert_eq!(decode(6, &mut read).unwrap(), b"bar");
    }

    #[test]
    fn decode_too_short() {
        let buf = vec![0b0100_0011, b'b', b'a'];
        let mut read = Cursor::new(&buf);
        assert_matches!(decode(6, &mut read), Err(Error::UnexpectedEnd));
    }
}
