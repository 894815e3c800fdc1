//! QPACK's and HPACK's Huffman decoding (`tcpwise-huffman`, which the
//! vendored h3 decodes every HTTP/3 field with): any bytes decode or are
//! refused, never a panic; what decodes codes back to the same bytes (a
//! valid coding has one padding only, so decoding loses nothing); and any
//! bytes, coded, decode back to themselves.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    if tcpwise_huffman::decode(data, &mut out).is_ok() {
        let again: Vec<u8> = tcpwise_huffman::encode(&out).collect();
        assert_eq!(again, data, "decoded {out:?}");
    }
    let coded: Vec<u8> = tcpwise_huffman::encode(data).collect();
    assert_eq!(coded.len(), tcpwise_huffman::encoded_len(data));
    let mut back = Vec::new();
    tcpwise_huffman::decode(&coded, &mut back).expect("a coding decodes");
    assert_eq!(back, data);
});
