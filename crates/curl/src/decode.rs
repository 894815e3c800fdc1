//! `--compressed`: a response body's content codings undone as it
//! arrives, with bounded memory.
//!
//! Every layer is a read-side decoder pulled into a 64 KiB buffer and
//! handed on at once, so a body that inflates a thousandfold (a 3 KB
//! brotli stream of 4 GiB of zeros) costs the decoders' windows, never its
//! decoded length: until 1 Dec a network chunk was decoded whole into
//! memory (2 GiB of RSS for that bomb; curl: 26 MB). The input of a layer
//! is a [`Feed`] that answers `WouldBlock` when it is empty and the body
//! has not ended; the decoders keep their state across it. Stacked
//! codings (`gzip, gzip, gzip`) are undone in reverse order of listing, as
//! curl does, at most [`MAX_LAYERS`] of them (curl's limit; past it, exit
//! 61).

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};

/// Most codings a `Content-Encoding` may stack (curl 7.88's
/// `MAX_ENCODE_STACK`).
pub const MAX_LAYERS: usize = 5;

/// Bytes a layer hands on at once.
const PIECE: usize = 64 * 1024;

/// Why a `Content-Encoding` cannot be decoded.
#[derive(Debug, thiserror::Error)]
pub enum CodingError {
    /// More than [`MAX_LAYERS`] codings.
    #[error("more than {MAX_LAYERS} stacked content codings")]
    TooMany,
    /// A coding curl does not know.
    #[error("unrecognized content encoding type {0:?}")]
    Unknown(String),
}

/// A layer's input: bytes given, then the end.
#[derive(Debug, Default)]
pub struct Feed {
    buf: VecDeque<u8>,
    ended: bool,
}

impl Read for Feed {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.fill_buf()?.len().min(out.len());
        let (a, b) = self.buf.as_slices();
        let from_a = n.min(a.len());
        out[..from_a].copy_from_slice(&a[..from_a]);
        out[from_a..n].copy_from_slice(&b[..n - from_a]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Feed {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.buf.is_empty() && !self.ended {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(self.buf.as_slices().0)
    }

    fn consume(&mut self, n: usize) {
        self.buf.drain(..n);
    }
}

/// One content coding's decoder, reading from its [`Feed`].
enum Layer {
    Gzip(Box<flate2::bufread::MultiGzDecoder<Feed>>),
    Deflate(Box<flate2::bufread::ZlibDecoder<Feed>>),
    Brotli(Box<brotli_decompressor::Decompressor<Feed>>),
    Zstd(Box<zstd::stream::read::Decoder<'static, Feed>>),
}

impl Layer {
    fn new(coding: &str) -> Result<Option<Layer>, CodingError> {
        let f = Feed::default;
        Ok(Some(match coding.to_ascii_lowercase().as_str() {
            "identity" => return Ok(None),
            "gzip" | "x-gzip" => Layer::Gzip(Box::new(flate2::bufread::MultiGzDecoder::new(f()))),
            "deflate" => Layer::Deflate(Box::new(flate2::bufread::ZlibDecoder::new(f()))),
            "br" => Layer::Brotli(Box::new(brotli_decompressor::Decompressor::new(f(), 4096))),
            "zstd" => Layer::Zstd(Box::new(
                zstd::stream::read::Decoder::with_buffer(f())
                    .map_err(|_| CodingError::Unknown("zstd".into()))?,
            )),
            other => return Err(CodingError::Unknown(other.to_string())),
        }))
    }

    fn feed(&mut self) -> &mut Feed {
        match self {
            Layer::Gzip(d) => d.get_mut(),
            Layer::Deflate(d) => d.get_mut(),
            Layer::Brotli(d) => d.get_mut(),
            Layer::Zstd(d) => d.get_mut(),
        }
    }

    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self {
            Layer::Gzip(d) => d.read(out),
            Layer::Deflate(d) => d.read(out),
            Layer::Brotli(d) => d.read(out),
            Layer::Zstd(d) => d.read(out),
        }
    }
}

/// A body's decoders, outermost coding first to undo.
pub struct Decoder {
    layers: Vec<Layer>,
    piece: Vec<u8>,
}

impl Decoder {
    /// No coding: bytes pass as they are.
    pub fn identity() -> Decoder {
        Decoder {
            layers: Vec::new(),
            piece: Vec::new(),
        }
    }

    /// The decoders a `Content-Encoding` value asks for (`gzip`, `br`,
    /// `gzip, gzip`; `identity` and empty items add none).
    pub fn for_encoding(value: &str) -> Result<Decoder, CodingError> {
        let codings: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        if codings.len() > MAX_LAYERS {
            return Err(CodingError::TooMany);
        }
        let mut layers = Vec::new();
        // The last coding listed was applied last: it is undone first.
        for c in codings.iter().rev() {
            layers.extend(Layer::new(c)?);
        }
        Ok(Decoder {
            layers,
            piece: vec![0; PIECE],
        })
    }

    /// Takes `d` and hands what decodes to `out`, 64 KiB at most at a time.
    pub fn feed(
        &mut self,
        d: &[u8],
        out: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        if self.layers.is_empty() {
            return out(d);
        }
        self.layers[0].feed().buf.extend(d);
        self.pump(0, out)
    }

    /// The body ended: what is left, or an error for a truncated stream.
    pub fn finish(mut self, out: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        for k in 0..self.layers.len() {
            self.layers[k].feed().ended = true;
            self.pump(k, out)?;
        }
        Ok(())
    }

    /// Pulls layer `k` until it needs more input, passing each piece on.
    fn pump(&mut self, k: usize, out: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        loop {
            let n = match self.layers[k].read(&mut self.piece) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if k + 1 == self.layers.len() {
                out(&self.piece[..n])?;
            } else {
                let piece = std::mem::take(&mut self.piece);
                self.layers[k + 1].feed().buf.extend(&piece[..n]);
                self.piece = piece;
                self.pump(k + 1, out)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(d: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(d).unwrap();
        gz.finish().unwrap()
    }

    fn run(enc: &str, data: &[u8], step: usize) -> io::Result<(Vec<u8>, usize)> {
        let mut d = Decoder::for_encoding(enc).unwrap();
        let (mut all, mut largest) = (Vec::new(), 0);
        let mut out = |b: &[u8]| {
            largest = largest.max(b.len());
            all.extend_from_slice(b);
            Ok(())
        };
        for c in data.chunks(step) {
            d.feed(c, &mut out)?;
        }
        d.finish(&mut out)?;
        Ok((all, largest))
    }

    #[test]
    fn every_coding_in_any_split_and_stacked() {
        let text = b"hello hello hello hello".repeat(1000);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&text).unwrap();
        let z = z.finish().unwrap();
        let zs = zstd::stream::encode_all(&text[..], 1).unwrap();
        let three = gzip(&gzip(&gzip(&text)));
        for (enc, data) in [
            ("gzip", gzip(&text)),
            ("deflate", z),
            ("zstd", zs),
            ("gzip, gzip, gzip", three),
        ] {
            for step in [1, 7, 4096] {
                assert_eq!(run(enc, &data, step).unwrap().0, text, "{enc} {step}");
            }
        }
        assert!(matches!(
            Decoder::for_encoding("gzip,gzip,gzip,gzip,gzip,gzip"),
            Err(CodingError::TooMany)
        ));
        assert!(matches!(
            Decoder::for_encoding("compress"),
            Err(CodingError::Unknown(_))
        ));
        assert!(run("gzip", b"not gzip at all", 4).is_err());
        assert!(
            run("gzip", &gzip(&text)[..40], 4).is_err(),
            "a truncated stream is an error"
        );
    }

    #[test]
    fn a_bomb_is_handed_on_in_bounded_pieces() {
        // 64 MiB of zeros in about 64 KB of gzip, fed as one chunk.
        let zeros = vec![0u8; 64 << 20];
        let bomb = gzip(&zeros);
        let (all, largest) = run("gzip", &bomb, bomb.len()).unwrap();
        assert_eq!(all.len(), zeros.len());
        assert!(largest <= PIECE, "{largest}");
    }
}
