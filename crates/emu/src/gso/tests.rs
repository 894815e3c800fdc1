//! The split is checked against segments built here from scratch, with
//! checksums computed the plain big-endian way (RFC 793/768's pseudo
//! header), so a bug shared by `split` and its helpers cannot hide; the
//! link is checked to treat split segments exactly as the kernel's own
//! segments.

use super::*;
use tcpwise_link::{Capacity, Link, LinkConfig, LossModel, QueueLimit};

const SRC4: [u8; 4] = [198, 18, 0, 2];
const DST4: [u8; 4] = [198, 18, 0, 1];

/// The plain checksum: big-endian 16-bit words, folded, complemented.
fn plain(parts: &[&[u8]]) -> u16 {
    let mut all = Vec::new();
    for p in parts {
        all.extend_from_slice(p);
    }
    if all.len() % 2 == 1 {
        all.push(0);
    }
    let mut s: u64 = all
        .chunks(2)
        .map(|w| u64::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// TCP options: NOP NOP timestamps, as Linux sends them.
const TS: [u8; 12] = [1, 1, 8, 10, 0, 0, 0x12, 0x34, 0, 0, 0x56, 0x78];

/// One TCP segment as the wire carries it, checksums complete.
fn tcp(v6: bool, id: u16, seq: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut t = vec![0u8; 20];
    t[0..2].copy_from_slice(&5201u16.to_be_bytes());
    t[2..4].copy_from_slice(&40000u16.to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&777u32.to_be_bytes());
    t[12] = 8 << 4;
    t[13] = flags;
    t[14..16].copy_from_slice(&512u16.to_be_bytes());
    t.extend_from_slice(&TS);
    t.extend_from_slice(payload);
    ip(v6, id, 6, t)
}

/// One UDP datagram, checksums complete.
fn udp(v6: bool, id: u16, payload: &[u8]) -> Vec<u8> {
    let mut t = vec![0u8; 8];
    t[0..2].copy_from_slice(&4433u16.to_be_bytes());
    t[2..4].copy_from_slice(&5000u16.to_be_bytes());
    t[4..6].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    t.extend_from_slice(payload);
    ip(v6, id, 17, t)
}

fn ip(v6: bool, id: u16, proto: u8, mut l4: Vec<u8>) -> Vec<u8> {
    let at = if proto == 6 { 16 } else { 6 };
    let len = (l4.len() as u32).to_be_bytes();
    let mut h;
    let pseudo: Vec<u8>;
    if v6 {
        h = vec![0x60, 0, 0, 0, 0, 0, proto, 64];
        h[4..6].copy_from_slice(&(l4.len() as u16).to_be_bytes());
        let (s, d) = (
            [0x20, 1, 0, 2].repeat(4),
            [0x20, 1, 0, 2, 9, 9].repeat(3)[..16].to_vec(),
        );
        h.extend_from_slice(&s);
        h.extend_from_slice(&d);
        pseudo = [&s[..], &d[..], &len[..], &[0, 0, 0, proto]].concat();
    } else {
        h = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, proto, 0, 0];
        h[2..4].copy_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
        h[4..6].copy_from_slice(&id.to_be_bytes());
        h.extend_from_slice(&SRC4);
        h.extend_from_slice(&DST4);
        let c = plain(&[&h]);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        pseudo = [&SRC4[..], &DST4[..], &[0, proto], &len[2..]].concat();
    }
    let mut c = plain(&[&pseudo, &l4]);
    if c == 0 && proto == 17 {
        c = 0xffff;
    }
    l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(&l4);
    h
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// What a TSO sender hands a TUN device: one header for the whole
/// payload, the L4 checksum field holding the pseudo-header sum (any value
/// does: the split rewrites it).
fn super_tcp(v6: bool, flags: u8, body: &[u8], mss: u16) -> (VnetHdr, Vec<u8>) {
    let p = tcp(v6, 100, 1_000_000, flags, body);
    let ip_len = if v6 { 40 } else { 20 };
    let h = VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type: if v6 { GSO_TCPV6 } else { GSO_TCPV4 },
        hdr_len: (ip_len + 32) as u16,
        gso_size: mss,
        csum_start: ip_len as u16,
        csum_offset: 16,
    };
    (h, p)
}

fn split_all(h: &VnetHdr, data: &[u8]) -> Vec<Packet> {
    let mut out = Vec::new();
    split(h, &read(data), 3..3 + data.len(), Vec::new, &mut out).expect("splits");
    out
}

/// `data` as a read buffer holds it: after some bytes (a virtio-net
/// header's place), with room behind.
fn read(data: &[u8]) -> std::sync::Arc<Vec<u8>> {
    std::sync::Arc::new([&[7u8; 3][..], data, &[9u8; 5][..]].concat())
}

fn try_split(h: &VnetHdr, data: &[u8], out: &mut Vec<Packet>) -> Result<(), &'static str> {
    split(h, &read(data), 3..3 + data.len(), Vec::new, out)
}

#[test]
fn vnet_header_round_trips() {
    let h = VnetHdr {
        flags: 1,
        gso_type: GSO_TCPV6 | GSO_ECN,
        hdr_len: 72,
        gso_size: 1428,
        csum_start: 40,
        csum_offset: 16,
    };
    assert_eq!(VnetHdr::parse(&h.encode()), Some(h));
    assert_eq!(VnetHdr::parse(&[0; 9]), None);
    assert_eq!(h.encode()[4..6], 1428u16.to_le_bytes(), "little-endian");
}

#[test]
fn tcp_super_packets_split_into_the_kernels_segments() {
    for v6 in [false, true] {
        let mss = 1448;
        let body = payload(10 * mss + 321);
        let (h, data) = super_tcp(v6, 0x18, &body, mss as u16); // ACK|PSH
        let got = split_all(&h, &data);
        assert_eq!(got.len(), 11);
        for (i, mut p) in got.into_iter().enumerate() {
            assert!(p.csum.is_some(), "left partial for the receiver");
            assert_eq!(p.head.len(), if v6 { 72 } else { 52 }, "headers only");
            p.finalize_csum();
            let last = i == 10;
            let chunk = &body[i * mss..((i + 1) * mss).min(body.len())];
            let flags = if last { 0x18 } else { 0x10 };
            let want = tcp(
                v6,
                100 + i as u16,
                1_000_000 + (i * mss) as u32,
                flags,
                chunk,
            );
            assert_eq!(p.to_vec(), want, "segment {i} (v6 {v6})");
        }
    }
}

#[test]
fn fin_and_cwr_go_where_the_kernel_puts_them() {
    let body = payload(3000);
    let (mut h, data) = super_tcp(false, 0x80 | 0x10 | 0x01, &body, 1000); // CWR|ACK|FIN
    h.gso_type |= GSO_ECN;
    let flags: Vec<u8> = split_all(&h, &data).iter().map(|p| p.head[33]).collect();
    assert_eq!(
        flags,
        vec![0x90, 0x10, 0x11],
        "CWR on the first, FIN on the last"
    );
}

#[test]
fn udp_super_packets_split_into_datagrams() {
    for v6 in [false, true] {
        let size = 1200;
        let body = payload(5 * size + 17);
        let mut data = udp(v6, 9, &body);
        let ip_len = if v6 { 40 } else { 20 };
        data[ip_len + 6] = 0x55; // whatever the sender left there
        let h = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_UDP_L4,
            hdr_len: (ip_len + 8) as u16,
            gso_size: size as u16,
            csum_start: ip_len as u16,
            csum_offset: 6,
        };
        let got = split_all(&h, &data);
        assert_eq!(got.len(), 6);
        for (i, mut p) in got.into_iter().enumerate() {
            p.finalize_csum();
            let chunk = &body[i * size..((i + 1) * size).min(body.len())];
            assert_eq!(
                p.to_vec(),
                udp(v6, 9 + i as u16, chunk),
                "datagram {i} (v6 {v6})"
            );
        }
    }
}

#[test]
fn plain_packets_pass_as_they_are_and_bad_gso_is_refused() {
    let p = tcp(false, 1, 5, 0x10, b"hello");
    let got = split_all(&VnetHdr::default(), &p);
    assert_eq!(got, vec![Packet::whole(p.clone())]);
    let partial = VnetHdr {
        flags: F_NEEDS_CSUM,
        csum_start: 20,
        csum_offset: 16,
        ..VnetHdr::default()
    };
    assert_eq!(split_all(&partial, &p)[0].csum, Some((20, 16)));
    let mut out = Vec::new();
    let udp_as_tcp = VnetHdr {
        gso_type: GSO_TCPV4,
        gso_size: 100,
        ..VnetHdr::default()
    };
    assert!(try_split(&udp_as_tcp, &udp(false, 1, b"x"), &mut out).is_err());
    assert!(try_split(&udp_as_tcp, &[0x45, 0, 0], &mut out).is_err());
    let no_size = VnetHdr {
        gso_type: GSO_TCPV4,
        ..VnetHdr::default()
    };
    assert!(try_split(&no_size, &p, &mut out).is_err());
    assert!(out.is_empty());
}

/// A run joined as the forwarder writes it, its checksum completed as the
/// receiving kernel would: the virtio-net header and the packet's bytes.
fn rejoin(run: &[Packet]) -> (VnetHdr, Vec<u8>) {
    let mut hdr = Vec::new();
    let vh = joined_header(run, &mut hdr);
    let mut pieces = Vec::new();
    payloads(run, usize::from(vh.hdr_len), &mut pieces);
    for p in &pieces {
        hdr.extend_from_slice(p.as_slice());
    }
    let mut joined = Packet {
        head: hdr,
        body: None,
        csum: Some((vh.csum_start, vh.csum_offset)),
        corrupt: false,
    };
    joined.finalize_csum();
    (vh, joined.head)
}

#[test]
fn split_then_joined_gives_the_super_packet_back() {
    for v6 in [false, true] {
        let body = payload(20 * 1448 + 5);
        let (h, data) = super_tcp(v6, 0x18, &body, 1448);
        let segs = split_all(&h, &data);
        assert_eq!(run_len(&segs, true), segs.len());
        let (vh, joined) = rejoin(&segs);
        assert_eq!(
            (vh.gso_type, vh.gso_size, vh.hdr_len),
            (h.gso_type, 1448, h.hdr_len)
        );
        let mut pieces = Vec::new();
        payloads(&segs, usize::from(vh.hdr_len), &mut pieces);
        assert_eq!(pieces.len(), 1, "adjacent payloads leave as one slice");
        assert_eq!(joined, data, "v6 {v6}");
        // Out of order, pieces stay apart and in the run's order.
        let swapped = [segs[1].clone(), segs[0].clone()];
        payloads(&swapped, usize::from(vh.hdr_len), &mut pieces);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0].as_slice(), &body[1448..2 * 1448]);
    }
}

#[test]
fn runs_stop_where_linux_gro_would() {
    let mss = 1000;
    let body = payload(8 * mss);
    let (h, data) = super_tcp(false, 0x10, &body, mss as u16);
    let segs = split_all(&h, &data);
    assert_eq!(run_len(&segs, true), 8);
    // A gap in the sequence.
    let mut gap = segs.clone();
    gap.remove(3);
    assert_eq!(run_len(&gap, true), 3);
    // A CE mark changes the IP header.
    let mut ce = segs.clone();
    ce[2].head[1] |= 3;
    assert_eq!(run_len(&ce, true), 2);
    // A corrupted one is written alone.
    let mut bad = segs.clone();
    bad[4].corrupt = true;
    assert_eq!(run_len(&bad, true), 4);
    assert_eq!(run_len(&bad[4..], true), 1);
    // Another flow.
    let mut other = segs.clone();
    other[5].head[20] ^= 1;
    assert_eq!(run_len(&other, true), 5);
    // A short segment ends a run; so does PSH.
    let short = split_all(&h, &data[..data.len() - 10]);
    assert_eq!(run_len(&short, true), 8);
    let mut psh = segs.clone();
    psh[1].head[33] |= 0x08;
    assert_eq!(run_len(&psh, true), 2);
    // Pure ACKs never join; a TCP segment and a UDP datagram do not.
    let ack = Packet::whole(tcp(false, 1, 1, 0x10, b""));
    assert_eq!(run_len(&[ack.clone(), ack], true), 1);
    let d = Packet::whole(udp(false, 1, b"abc"));
    assert_eq!(run_len(&[segs[0].clone(), d.clone()], true), 1);
    assert_eq!(run_len(&[d, segs[0].clone()], true), 1);
    // At most MAX_SEGMENTS.
    let many = split_all(
        &super_tcp(false, 0x10, &payload(100 * 600), 600).0,
        &super_tcp(false, 0x10, &payload(100 * 600), 600).1,
    );
    assert_eq!(run_len(&many, true), MAX_SEGMENTS);
}

/// The per-segment equivalence: a link fed the segments split from
/// super-packets departs, drops and marks exactly as one fed the kernel's
/// own segments at the same arrival times (same seed).
/// `body` as the kernel segments it without offload: ECT(0) segments of
/// `mss`, IP ids from `id`, each with its own header checksum.
fn kernel_segments(body: &[u8], mss: usize, id: u16, seq: u32) -> Vec<Packet> {
    body.chunks(mss)
        .enumerate()
        .map(|(i, c)| {
            let mut p = tcp(false, id + i as u16, seq + (i * mss) as u32, 0x10, c);
            p[1] = 2;
            let mut q = p.clone();
            q[10] = 0;
            q[11] = 0;
            let c = plain(&[&q[..20]]);
            p[10..12].copy_from_slice(&c.to_be_bytes());
            Packet::whole(p)
        })
        .collect()
}

#[test]
fn the_link_sees_the_same_segments_with_and_without_offload() {
    let cfg = LinkConfig {
        delay: 10_000_000,
        capacity: Capacity::Rate {
            bits_per_sec: 40_000_000,
            overhead: 0,
        },
        queue: QueueLimit::Bytes(100_000),
        qdisc: "codel:ecn".parse().expect("spec"),
        loss: LossModel::Bernoulli { p: 0.02 },
        seed: 7,
        impairments: tcpwise_link::impair::Impairments {
            netem: tcpwise_link::impair::netem::Params {
                reorder: 0.01,
                duplicate: 0.01,
                corrupt: 0.01,
            },
            ..Default::default()
        },
        ..LinkConfig::default()
    };
    let mss = 1448;
    // 400 bursts of 1 to 44 segments, one every 5 ms, ECT(0).
    let mut offload: Vec<(u64, Vec<Packet>)> = Vec::new();
    let mut kernel: Vec<(u64, Vec<Packet>)> = Vec::new();
    let mut seq = 1u32;
    for b in 0..400u64 {
        let n = 1 + (b * 7 % 44) as usize;
        let body = payload(n * mss);
        let mut data = tcp(false, b as u16, seq, 0x10, &body);
        data[1] = 2;
        let h = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 52,
            gso_size: mss as u16,
            csum_start: 20,
            csum_offset: 16,
        };
        let mut segs = split_all(&h, &data);
        for s in &mut segs {
            s.finalize_csum();
        }
        let own = kernel_segments(&body, mss, b as u16, seq);
        seq = seq.wrapping_add((n * mss) as u32);
        offload.push((b * 5_000_000, segs));
        kernel.push((b * 5_000_000, own));
    }
    let run = |bursts: Vec<(u64, Vec<Packet>)>| {
        let mut link: Link<Packet> = Link::new(cfg.clone(), 0);
        let mut out = Vec::new();
        let mut t_end = 0;
        for (t, segs) in bursts {
            for p in segs {
                let (flow, ecn) = crate::ip::classify(&p.head);
                let size = p.len() as u32;
                if let Err(d) = link.enqueue_flow(t, size, flow, ecn, p) {
                    out.push(format!("drop {t} {:?}", d.cause));
                }
            }
            while let Some(d) = link.dequeue_full(t) {
                out.push(format!(
                    "{} {} {} {} {:?} {}",
                    d.deadline,
                    d.ce,
                    d.duplicate,
                    d.corrupt.is_some(),
                    &d.item.to_vec()[..40],
                    d.item.len()
                ));
            }
            t_end = t;
        }
        while let Some(d) = link.dequeue_full(t_end + 1_000_000_000) {
            out.push(format!("{} {} {:?}", d.deadline, d.ce, d.item.to_vec()));
        }
        for d in link.drain_dropped() {
            out.push(format!("aqm {:?}", d.cause));
        }
        (out, link.report())
    };
    let (a, sa) = run(offload);
    let (b, sb) = run(kernel);
    assert!(a.len() > 1000, "{}", a.len());
    assert_eq!(a, b);
    assert_eq!(format!("{sa:?}"), format!("{sb:?}"));
    assert!(
        sa.dropped_queue + sa.dropped_aqm > 0 && sa.marked_ce > 0 && sa.dropped_loss > 0,
        "{sa:?}"
    );
}

/// A UDP super-packet as a USO sender hands it over: one header for the
/// whole payload, the checksum field holding anything.
fn super_udp(v6: bool, body: &[u8], size: u16) -> (VnetHdr, Vec<u8>) {
    let mut data = udp(v6, 9, body);
    let ip_len = if v6 { 40 } else { 20 };
    data[ip_len + 6] = 0x55;
    let h = VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type: GSO_UDP_L4,
        hdr_len: (ip_len + 8) as u16,
        gso_size: size,
        csum_start: ip_len as u16,
        csum_offset: 6,
    };
    (h, data)
}

#[test]
fn udp_datagrams_split_then_joined_give_the_super_packet_back() {
    for v6 in [false, true] {
        let body = payload(9 * 1452 + 100);
        let (h, data) = super_udp(v6, &body, 1452);
        let segs = split_all(&h, &data);
        assert_eq!(
            run_len(&segs, true),
            10,
            "nine full datagrams and the short last"
        );
        let (vh, joined) = rejoin(&segs);
        assert_eq!(
            (vh.gso_type, vh.gso_size, vh.hdr_len, vh.csum_offset),
            (GSO_UDP_L4, 1452, h.hdr_len, 6)
        );
        // The whole run's length and checksum, the first datagram's IP id:
        // what the sender's own super-packet carried, checksum completed.
        assert_eq!(joined, udp(v6, 9, &body), "v6 {v6}");
    }
}

#[test]
fn udp_runs_stop_where_linux_gro_would() {
    let size = 1200;
    let (h, data) = super_udp(false, &payload(8 * size), size as u16);
    let segs = split_all(&h, &data);
    assert_eq!(run_len(&segs, true), 8);
    // A larger datagram after smaller ones starts a run of its own.
    let mut grown = segs.clone();
    grown[3] = Packet::whole(udp(false, 12, &payload(size + 1)));
    assert_eq!(run_len(&grown, true), 3);
    // A shorter one ends the run, itself included.
    let mut short = segs.clone();
    short[2] = Packet::whole(udp(false, 11, &payload(size - 1)));
    assert_eq!(run_len(&short, true), 3);
    // Another port, a CE mark, an empty or corrupted datagram.
    let mut other = segs.clone();
    other[4].head[21] ^= 1;
    assert_eq!(run_len(&other, true), 4);
    let mut ce = segs.clone();
    ce[5].head[1] |= 3;
    assert_eq!(run_len(&ce, true), 5);
    let empty = Packet::whole(udp(false, 1, b""));
    assert_eq!(run_len(&[empty.clone(), empty], true), 1);
    let mut bad = segs.clone();
    bad[6].corrupt = true;
    assert_eq!(run_len(&bad, true), 6);
    // At most MAX_SEGMENTS, and at most MAX_JOINED bytes.
    let (h, data) = super_udp(false, &payload(100 * 500), 500);
    assert_eq!(run_len(&split_all(&h, &data), true), MAX_SEGMENTS);
    let big: Vec<Packet> = (0..9)
        .map(|i| Packet::whole(udp(false, i, &payload(8_000))))
        .collect();
    assert_eq!(run_len(&big, true), 8, "65,535 bytes hold eight");
    // Where the devices took no USO, datagrams leave one by one; TCP
    // segments still join.
    assert_eq!(run_len(&segs, false), 1);
    let (h, data) = super_tcp(false, 0x10, &payload(4 * 1000), 1000);
    assert_eq!(run_len(&split_all(&h, &data), false), 4);
}

#[test]
fn only_large_udp_datagrams_wait_for_company() {
    assert!(may_grow(
        &Packet::whole(udp(false, 1, &payload(UDP_GROW_MIN))),
        true
    ));
    assert!(!may_grow(
        &Packet::whole(udp(false, 1, &payload(UDP_GROW_MIN - 1))),
        true
    ));
    assert!(!may_grow(&Packet::whole(udp(true, 1, b"")), true));
    assert!(!may_grow(
        &Packet::whole(udp(false, 1, &payload(UDP_GROW_MIN))),
        false
    ));
}
