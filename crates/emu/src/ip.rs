//! What the link needs from an IP packet, without I/O: its flow (the
//! 5-tuple, hashed, for FQ-CoDel) and its ECN codepoint, and the CE mark
//! written back (RFC 3168; IPv4's header checksum recomputed). Anything
//! that is not a well-formed IPv4 or IPv6 header is flow 0, not ECN-capable.

use std::hash::{Hash, Hasher};
use tcpwise_link::Ecn;

/// (flow hash, ECN codepoint) of a packet.
pub fn classify(p: &[u8]) -> (u64, Ecn) {
    let ecn_of = |bits: u8| match bits & 3 {
        0 => Ecn::NotEct,
        3 => Ecn::Ce,
        _ => Ecn::Ect,
    };
    // A fixed-key hasher: the same flows hash alike in every run (seeded runs repeat).
    let mut h = std::hash::DefaultHasher::new();
    match p.first().map(|b| b >> 4) {
        Some(4) if p.len() >= 20 => {
            let ihl = usize::from(p[0] & 0x0f) * 4;
            let proto = p[9];
            (proto, &p[12..20]).hash(&mut h);
            if matches!(proto, 6 | 17) && p.len() >= ihl + 4 && ihl >= 20 {
                p[ihl..ihl + 4].hash(&mut h);
            }
            (h.finish(), ecn_of(p[1]))
        }
        Some(6) if p.len() >= 40 => {
            let next = p[6];
            (next, &p[8..40]).hash(&mut h);
            if matches!(next, 6 | 17) && p.len() >= 44 {
                p[40..44].hash(&mut h);
            }
            (h.finish(), ecn_of(p[1] >> 4))
        }
        _ => (0, Ecn::NotEct),
    }
}

/// Marks the packet CE (it was ECN-capable), fixing IPv4's checksum.
pub fn set_ce(p: &mut [u8]) {
    match p.first().map(|b| b >> 4) {
        Some(4) if p.len() >= 20 => {
            p[1] |= 3;
            let ihl = (usize::from(p[0] & 0x0f) * 4).clamp(20, p.len());
            ipv4_checksum(&mut p[..ihl]);
        }
        Some(6) if p.len() >= 40 => p[1] |= 0x30,
        _ => {}
    }
}

/// Flips one bit after the IP header (chosen by `r`), so the transport
/// checksum fails at the receiver, as netem's `corrupt`. A packet with
/// nothing after its header is left alone.
pub fn flip_bit(p: &mut [u8], r: u32) {
    let hdr = match p.first().map(|b| b >> 4) {
        Some(4) => usize::from(p[0] & 0x0f) * 4,
        Some(6) => 40,
        _ => return,
    };
    let rest = p.len().saturating_sub(hdr);
    if hdr < 20 || rest == 0 {
        return;
    }
    let bit = r as usize % (rest * 8);
    p[hdr + bit / 8] ^= 1 << (bit % 8);
}

/// The ones'-complement sum of `data` added to `acc`, in native byte
/// order (RFC 1071: the order does not matter as long as it is the same).
pub(crate) fn sum(mut acc: u64, data: &[u8]) -> u64 {
    let mut it = data.chunks_exact(4);
    for w in &mut it {
        acc += u64::from(u32::from_ne_bytes([w[0], w[1], w[2], w[3]]));
    }
    let r = it.remainder();
    let mut last = [0u8; 4];
    last[..r.len()].copy_from_slice(r);
    acc + u64::from(u32::from_ne_bytes(last))
}

pub(crate) fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// IPv4's header checksum, written into the header.
pub(crate) fn ipv4_checksum(h: &mut [u8]) {
    h[10] = 0;
    h[11] = 0;
    let c = !fold(sum(0, h));
    h[10..12].copy_from_slice(&c.to_ne_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP/IPv4 header with `tos`, checksum filled in.
    fn v4(tos: u8, sport: u16) -> Vec<u8> {
        let mut p = vec![
            0x45, tos, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
        ];
        p.extend_from_slice(&sport.to_be_bytes());
        p.extend_from_slice(&[0x1f, 0x90]);
        p.resize(40, 0);
        set_ce(&mut p); // computes a checksum...
        p[1] = tos; // ...then restore the codepoint and recompute honestly:
        let mut q = p.clone();
        q[10] = 0;
        q[11] = 0;
        let sum = checksum(&q[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    }

    fn checksum(h: &[u8]) -> u16 {
        let mut s: u32 = h
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn flows_ecn_and_marks() {
        let (a, e) = classify(&v4(0x02, 1000));
        assert_eq!(e, Ecn::Ect);
        assert_eq!(
            classify(&v4(0x00, 1000)),
            (a, Ecn::NotEct),
            "ECN bits are not part of the flow"
        );
        assert_ne!(classify(&v4(0x02, 1001)).0, a);
        let mut p = v4(0x01, 1000);
        set_ce(&mut p);
        assert_eq!(classify(&p).1, Ecn::Ce);
        assert_eq!(checksum(&p[..20]), 0, "a valid header sums to zero");
        let mut v6 = vec![0x60, 0x20, 0, 0, 0, 20, 6, 64];
        v6.resize(44, 9);
        assert_eq!(classify(&v6).1, Ecn::Ect);
        set_ce(&mut v6);
        assert_eq!(classify(&v6).1, Ecn::Ce);
        assert_eq!(classify(&[0x45, 0]), (0, Ecn::NotEct));
        let orig = v4(0, 1000);
        let mut c = orig.clone();
        flip_bit(&mut c, 12345);
        let diff: Vec<usize> = (0..40).filter(|&i| c[i] != orig[i]).collect();
        assert_eq!(diff.len(), 1);
        assert!(diff[0] >= 20, "never the IP header");
    }
}
