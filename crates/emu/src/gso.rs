//! TUN offloads without I/O: the virtio-net header, a super-packet split
//! into the segments the wire would carry, and in-order segments joined
//! back into one super-packet for the receiving kernel.
//!
//! Why: a TUN device without offloads costs a `read`, a `write` and a pass
//! through each kernel's TCP stack for every 1,500-byte packet, which caps
//! the emulator near 2-3 Gbit/s on two cores. With `IFF_VNET_HDR` and
//! TSO/USO the sending kernel hands over 64 KB at a time and, written back
//! with a GSO header, the receiving kernel takes 64 KB at a time (GRO done
//! by us, as wireguard-go and gVisor do). The link model must not see any
//! of this: [`split`] turns a super-packet into exactly the segments the
//! kernel's own software segmentation would have sent (headers, IDs,
//! sequence numbers, flags and lengths), so rate, queues, drops, marks
//! and the log are per segment as before; [`run_len`] joins only after
//! departure, and only what Linux's own GRO would join.
//!
//! Checksums stay lazy, as they do inside the kernel: a segment's L4
//! checksum field holds the pseudo-header sum and [`Packet::csum`] says
//! where to complete it (`CHECKSUM_PARTIAL`); the receiving TUN takes it
//! as such with `VIRTIO_NET_HDR_F_NEEDS_CSUM`. A packet that is corrupted
//! on purpose or captured to a pcap is completed first
//! ([`Packet::finalize_csum`]), so the receiver verifies the one and the
//! capture shows valid checksums.

use crate::ip::{fold, ipv4_checksum, sum};
/// `struct virtio_net_hdr`'s size: what [`VnetHdr::encode`] writes (the
/// size `sys` sets on the device).
pub use crate::sys::VNET_HDR_LEN;
use std::sync::Arc;
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`.
pub const F_NEEDS_CSUM: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_NONE`.
pub const GSO_NONE: u8 = 0;
/// `VIRTIO_NET_HDR_GSO_TCPV4`.
pub const GSO_TCPV4: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_TCPV6`.
pub const GSO_TCPV6: u8 = 4;
/// `VIRTIO_NET_HDR_GSO_UDP_L4` (USO).
pub const GSO_UDP_L4: u8 = 5;
/// `VIRTIO_NET_HDR_GSO_ECN`: the first segment carries CWR.
pub const GSO_ECN: u8 = 0x80;
/// The largest super-packet joined on write, headers included: what an
/// IPv4 total length holds, and no more than the kernel's own 64 KB GSO
/// packets, which therefore leave as they came.
pub const MAX_JOINED: usize = 65_535;
/// The most segments joined into one write.
pub const MAX_SEGMENTS: usize = 64;

const TCP_FIN: u8 = 0x01;
const TCP_SYN: u8 = 0x02;
const TCP_RST: u8 = 0x04;
const TCP_PSH: u8 = 0x08;
const TCP_URG: u8 = 0x20;
const TCP_CWR: u8 = 0x80;

/// The virtio-net header (little-endian, as virtio 1.0 and x86 have it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VnetHdr {
    /// `F_NEEDS_CSUM` or 0.
    pub flags: u8,
    /// `GSO_*`, with `GSO_ECN` or-ed in.
    pub gso_type: u8,
    /// Bytes of headers (IP and transport).
    pub hdr_len: u16,
    /// Payload bytes per segment.
    pub gso_size: u16,
    /// Where the checksummed bytes start.
    pub csum_start: u16,
    /// Where the checksum field is, from `csum_start`.
    pub csum_offset: u16,
}

impl VnetHdr {
    /// Reads a header; `None` when `b` is too short.
    pub fn parse(b: &[u8]) -> Option<VnetHdr> {
        let u = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        (b.len() >= VNET_HDR_LEN).then(|| VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u(2),
            gso_size: u(4),
            csum_start: u(6),
            csum_offset: u(8),
        })
    }

    /// The header's bytes.
    pub fn encode(&self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        for (i, v) in [
            self.hdr_len,
            self.gso_size,
            self.csum_start,
            self.csum_offset,
        ]
        .into_iter()
        .enumerate()
        {
            b[2 + 2 * i..4 + 2 * i].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// The header for one packet written alone.
    pub fn single(p: &Packet) -> VnetHdr {
        match p.csum {
            Some((start, offset)) => VnetHdr {
                flags: F_NEEDS_CSUM,
                csum_start: start,
                csum_offset: offset,
                ..VnetHdr::default()
            },
            None => VnetHdr::default(),
        }
    }
}

/// A segment's payload, shared with the super-packet it was read in:
/// splitting copies only the headers, and the write takes the payload
/// from where the read put it (adjacent payloads of one read leave as
/// one piece).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    buf: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl Body {
    /// The payload's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// `next` continues this body in the same buffer: this one taken
    /// to its end (so a run's payloads are written as one slice).
    pub fn extend(&mut self, next: &Body) -> bool {
        let joins = Arc::ptr_eq(&self.buf, &next.buf) && self.end == next.start;
        if joins {
            self.end = next.end;
        }
        joins
    }
}

/// One packet on the link: its bytes (all in `head`, or the headers in
/// `head` and the payload in `body`) and, while its transport checksum is
/// still to be completed, where that checksum is (start, offset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packet {
    /// The IP packet, or its IP and transport headers when `body` holds
    /// the payload.
    pub head: Vec<u8>,
    /// The payload of a segment split from a super-packet.
    pub body: Option<Body>,
    /// `Some((csum_start, csum_offset))`: the field holds the pseudo-header
    /// sum (`CHECKSUM_PARTIAL`); `None`: the checksum is complete.
    pub csum: Option<(u16, u16)>,
    /// Corrupted on purpose: written alone, with its checksum complete, so
    /// the receiver sees the damage.
    pub corrupt: bool,
}

impl Packet {
    /// A packet whose checksums are complete.
    pub fn whole(bytes: Vec<u8>) -> Packet {
        Packet {
            head: bytes,
            body: None,
            csum: None,
            corrupt: false,
        }
    }

    /// Its size on the wire (IP header on).
    pub fn len(&self) -> usize {
        self.head.len() + self.body.as_ref().map_or(0, |b| b.end - b.start)
    }

    /// Whether it has no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The payload, when it is still the super-packet's.
    pub fn body(&self) -> &[u8] {
        self.body.as_ref().map_or(&[], Body::as_slice)
    }

    /// Every byte in `head` (the payload copied after the headers): for
    /// what changes or captures the whole packet, which is rare (a
    /// corruption, a pcap).
    pub fn make_contiguous(&mut self) -> &mut Vec<u8> {
        if let Some(b) = self.body.take() {
            self.head.extend_from_slice(b.as_slice());
        }
        &mut self.head
    }

    /// Its bytes, copied into one vector.
    pub fn to_vec(&self) -> Vec<u8> {
        [self.head.as_slice(), self.body()].concat()
    }

    /// Completes the transport checksum, if it is still partial.
    pub fn finalize_csum(&mut self) {
        let Some((start, offset)) = self.csum.take() else {
            return;
        };
        let bytes = self.make_contiguous();
        let (start, at) = (usize::from(start), usize::from(start) + usize::from(offset));
        if at + 2 > bytes.len() {
            return;
        }
        let mut c = !fold(sum(0, &bytes[start..]));
        // UDP sends a computed zero as all ones (zero means "no checksum").
        if c == 0 && offset == 6 {
            c = 0xffff;
        }
        bytes[at..at + 2].copy_from_slice(&c.to_ne_bytes());
    }
}

/// The pseudo-header sum (not complemented) for `l4_len` bytes of
/// protocol `proto`, as `CHECKSUM_PARTIAL` leaves it in the field.
fn pseudo(ip: &[u8], proto: u8, l4_len: usize) -> u16 {
    let mut tail = [0u8; 8];
    tail[..4].copy_from_slice(&(l4_len as u32).to_be_bytes());
    tail[7] = proto;
    let addrs = if ip[0] >> 4 == 4 {
        &ip[12..20]
    } else {
        &ip[8..40]
    };
    fold(sum(sum(0, addrs), &tail))
}

/// Where an IP packet's transport header starts and which protocol it is;
/// `None` for anything else (IPv6 extension headers included).
fn l4(p: &[u8]) -> Option<(usize, u8)> {
    match p.first()? >> 4 {
        4 if p.len() >= 20 => {
            let ihl = usize::from(p[0] & 0x0f) * 4;
            (ihl >= 20 && p.len() >= ihl).then_some((ihl, p[9]))
        }
        6 if p.len() >= 40 => Some((40, p[6])),
        _ => None,
    }
}

/// Sets the IP length fields for `l4_len` bytes after the IP header (and
/// IPv4's header checksum).
fn set_ip_len(h: &mut [u8], ip_len: usize, l4_len: usize, id_step: u16) {
    if h[0] >> 4 == 4 {
        h[2..4].copy_from_slice(&((ip_len + l4_len) as u16).to_be_bytes());
        let id = u16::from_be_bytes([h[4], h[5]]).wrapping_add(id_step);
        h[4..6].copy_from_slice(&id.to_be_bytes());
        ipv4_checksum(&mut h[..ip_len]);
    } else {
        h[4..6].copy_from_slice(&(l4_len as u16).to_be_bytes());
    }
}

/// Splits what one TUN read returned (`buf[data]`, after its virtio-net
/// header) into the packets the wire carries, appended to `out`: each
/// segment's headers in a buffer `head` supplies, its payload left where
/// it is in `buf`. A packet without GSO is copied whole. A super-packet
/// this code does not understand is an error (the caller drops it and
/// counts it).
pub fn split(
    h: &VnetHdr,
    buf: &Arc<Vec<u8>>,
    data: std::ops::Range<usize>,
    mut head: impl FnMut() -> Vec<u8>,
    out: &mut Vec<Packet>,
) -> Result<(), &'static str> {
    let partial = (h.flags & F_NEEDS_CSUM != 0).then_some((h.csum_start, h.csum_offset));
    let kind = h.gso_type & !GSO_ECN;
    let base = data.start;
    let data = &buf[data];
    if kind == GSO_NONE {
        let mut b = head();
        b.extend_from_slice(data);
        out.push(Packet {
            head: b,
            body: None,
            csum: partial,
            corrupt: false,
        });
        return Ok(());
    }
    let (ip_len, proto) = l4(data).ok_or("GSO packet without an IP header we read")?;
    let (l4_hdr, csum_offset) = match (kind, proto) {
        (GSO_TCPV4 | GSO_TCPV6, 6) if data.len() >= ip_len + 20 => {
            (usize::from(data[ip_len + 12] >> 4) * 4, 16u16)
        }
        (GSO_UDP_L4, 17) => (8, 6),
        _ => return Err("GSO type and transport protocol disagree"),
    };
    let hdr = ip_len + l4_hdr;
    let mss = usize::from(h.gso_size);
    if l4_hdr < 8 || data.len() < hdr || mss == 0 {
        return Err("GSO packet with a short header or no segment size");
    }
    let payload = data.len() - hdr;
    let n = payload.div_ceil(mss).max(1);
    let seq0 = u32::from_be_bytes(
        data.get(ip_len + 4..ip_len + 8)
            .ok_or("short")?
            .try_into()
            .expect("4"),
    );
    for i in 0..n {
        let (from, to) = (hdr + i * mss, (hdr + (i + 1) * mss).min(data.len()));
        let mut b = head();
        b.extend_from_slice(&data[..hdr]);
        let l4_len = l4_hdr + (to - from);
        set_ip_len(&mut b, ip_len, l4_len, i as u16);
        let t = &mut b[ip_len..];
        if proto == 6 {
            let seq = seq0.wrapping_add((i * mss) as u32);
            t[4..8].copy_from_slice(&seq.to_be_bytes());
            if i + 1 < n {
                t[13] &= !(TCP_FIN | TCP_PSH);
            }
            if i > 0 {
                t[13] &= !TCP_CWR;
            }
        } else {
            t[4..6].copy_from_slice(&(l4_len as u16).to_be_bytes());
        }
        let p = pseudo(&b, proto, l4_len);
        let at = ip_len + usize::from(csum_offset);
        b[at..at + 2].copy_from_slice(&p.to_ne_bytes());
        out.push(Packet {
            head: b,
            body: (to > from).then(|| Body {
                buf: buf.clone(),
                start: base + from,
                end: base + to,
            }),
            csum: Some((ip_len as u16, csum_offset)),
            corrupt: false,
        });
    }
    Ok(())
}

/// A TCP segment's or UDP datagram's fields that decide whether it joins
/// its neighbours.
struct Seg<'a> {
    /// 6 (TCP) or 17 (UDP).
    proto: u8,
    ip_len: usize,
    hdr: usize,
    seq: u32,
    flags: u8,
    payload: usize,
    /// IP header bytes that must match (lengths, ID and checksum left out).
    ip_same: [&'a [u8]; 3],
    /// Ports; ack and offset; window; urgent pointer and options (UDP:
    /// the ports alone).
    tcp_same: [&'a [u8]; 4],
}

fn seg(p: &Packet) -> Option<Seg<'_>> {
    if p.corrupt {
        return None;
    }
    let b = &p.head;
    let (ip_len, proto) = l4(b)?;
    let min = if proto == 17 { 8 } else { 20 };
    if !matches!(proto, 6 | 17) || b.len() < ip_len + min || (b[0] >> 4 == 4 && ip_len != 20) {
        return None;
    }
    // IPv4: never a fragment (MF or an offset).
    if b[0] >> 4 == 4 && (b[6] & 0x3f != 0 || b[7] != 0) {
        return None;
    }
    let t = &b[ip_len..];
    let ip_same = if b[0] >> 4 == 4 {
        [&b[0..2], &b[6..10], &b[12..20]]
    } else {
        [&b[0..4], &b[6..8], &b[8..40]]
    };
    if proto == 17 {
        return Some(Seg {
            proto,
            ip_len,
            hdr: ip_len + 8,
            seq: 0,
            flags: 0,
            payload: t.len() - 8 + p.body().len(),
            ip_same,
            tcp_same: [&t[0..4], &[], &[], &[]],
        });
    }
    let thl = usize::from(t[12] >> 4) * 4;
    if thl < 20 || t.len() < thl {
        return None;
    }
    Some(Seg {
        proto,
        ip_len,
        hdr: ip_len + thl,
        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
        flags: t[13],
        payload: t.len() - thl + p.body().len(),
        ip_same,
        tcp_same: [&t[0..4], &t[8..13], &t[14..16], &t[18..thl]],
    })
}

/// How many packets from the front of `pkts` leave as one super-packet:
/// consecutive TCP segments of one flow, in sequence, the same size but
/// for a shorter last one, with the same IP header fields, ack, window
/// and options, and no flag but PSH or FIN on the last (what Linux's
/// `tcp_gro_receive` joins); or consecutive UDP datagrams of one flow,
/// the same size but for a shorter last one, with the same IP header
/// fields (what `udp_gro_receive_segment` joins for a socket that asked
/// for `UDP_GRO`; the receiving kernel splits the run again for one that
/// did not). UDP only when `udp` (the receiving device takes USO: a
/// kernel without it refuses `GSO_UDP_L4`). 1 when the first cannot join
/// anything.
pub fn run_len(pkts: &[Packet], udp: bool) -> usize {
    let Some(first) = pkts.first().and_then(seg).filter(|s| udp || s.proto == 6) else {
        return 1;
    };
    let mss = first.payload;
    let ends = TCP_SYN | TCP_RST | TCP_URG | TCP_FIN | TCP_PSH | TCP_CWR;
    if mss == 0 || first.flags & ends != 0 {
        return 1;
    }
    // UDP has neither sequence numbers nor flags: [`seg`] gives it 0s.
    let step = |len: usize| if first.proto == 6 { len as u32 } else { 0 };
    let (mut n, mut total, mut next_seq) = (1, first.hdr + mss, first.seq.wrapping_add(step(mss)));
    for p in &pkts[1..] {
        let Some(s) = seg(p) else { break };
        let extra = s.flags & !(TCP_PSH | TCP_FIN);
        if n >= MAX_SEGMENTS
            || s.proto != first.proto
            || s.ip_same != first.ip_same
            || s.tcp_same != first.tcp_same
            || s.hdr != first.hdr
            || s.seq != next_seq
            || extra != first.flags
            || s.payload == 0
            || s.payload > mss
            || total + s.payload > MAX_JOINED
        {
            break;
        }
        n += 1;
        total += s.payload;
        next_seq = next_seq.wrapping_add(step(s.payload));
        if s.payload < mss || s.flags & (TCP_PSH | TCP_FIN) != 0 {
            break;
        }
    }
    n
}

/// Whether `p` is a UDP datagram (what a refused UDP run turns off).
pub fn is_udp(p: &Packet) -> bool {
    l4(&p.head).is_some_and(|(_, proto)| proto == 17)
}

/// The smallest UDP datagram a run waits to grow from ([`may_grow`]):
/// bulk senders (QUIC, iperf3 -u) send datagrams as large as the path
/// takes, while a small one is a request, an acknowledgement or a probe,
/// which must not wait for company.
pub const UDP_GROW_MIN: usize = 1_000;

/// Whether a run ending with `p` could take another segment: a full-size
/// TCP data segment with no flag that ends a run, or (when `udp`, as for
/// [`run_len`]) a UDP datagram of at least [`UDP_GROW_MIN`] bytes.
pub fn may_grow(p: &Packet, udp: bool) -> bool {
    seg(p).is_some_and(|s| match s.proto {
        17 => udp && s.payload >= UDP_GROW_MIN,
        _ => s.payload > 0 && s.flags & (TCP_SYN | TCP_RST | TCP_URG | TCP_FIN | TCP_PSH) == 0,
    })
}

/// The virtio-net header and the IP/TCP or IP/UDP headers of `pkts` (a run that
/// [`run_len`] accepted) joined into one super-packet; its payload is each
/// packet's bytes from `hdr_len` on, in order ([`payloads`]).
pub fn joined_header(pkts: &[Packet], out: &mut Vec<u8>) -> VnetHdr {
    let first = seg(&pkts[0]).expect("run_len accepted it");
    let last = &pkts[pkts.len() - 1].head;
    let payload: usize = pkts.iter().map(|p| p.len() - first.hdr).sum();
    out.clear();
    out.extend_from_slice(&pkts[0].head[..first.hdr]);
    let ip_len = first.ip_len;
    let l4_len = first.hdr - ip_len + payload;
    set_ip_len(out, ip_len, l4_len, 0);
    // The pseudo-header sum goes where the checksum will be completed.
    let (gso_type, csum_offset) = if first.proto == 17 {
        // The whole run's length, as the kernel's own GSO and GRO
        // packets carry it; each datagram gets its own when split.
        out[ip_len + 4..ip_len + 6].copy_from_slice(&(l4_len as u16).to_be_bytes());
        (GSO_UDP_L4, 6)
    } else {
        out[ip_len + 13] |= last[ip_len + 13] & (TCP_PSH | TCP_FIN);
        let t = if out[0] >> 4 == 4 {
            GSO_TCPV4
        } else {
            GSO_TCPV6
        };
        (t, 16)
    };
    let p = pseudo(out, first.proto, l4_len);
    let at = ip_len + usize::from(csum_offset);
    out[at..at + 2].copy_from_slice(&p.to_ne_bytes());
    VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type,
        hdr_len: first.hdr as u16,
        gso_size: first.payload as u16,
        csum_start: ip_len as u16,
        csum_offset,
    }
}

/// The payloads of a run, in order, after `skip` header bytes: the
/// bodies that continue each other in their read buffer as one piece
/// (a 64 KB super-packet split and joined again leaves as one slice).
pub fn payloads<'a>(run: &'a [Packet], skip: usize, out: &mut Vec<Piece<'a>>) {
    out.clear();
    for p in run {
        let head = p.head.get(skip..).unwrap_or(&[]);
        if !head.is_empty() {
            out.push(Piece::Bytes(head));
        }
        if let Some(b) = &p.body {
            let joined = match out.last_mut() {
                Some(Piece::Body(prev)) => prev.extend(b),
                _ => false,
            };
            if !joined {
                out.push(Piece::Body(b.clone()));
            }
        }
    }
}

/// One piece of a write: bytes of a packet's head, or a stretch of a
/// read buffer.
#[derive(Debug)]
pub enum Piece<'a> {
    /// Header or whole-packet bytes.
    Bytes(&'a [u8]),
    /// Payload still in its read buffer.
    Body(Body),
}

impl Piece<'_> {
    /// Its bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Piece::Bytes(b) => b,
            Piece::Body(b) => b.as_slice(),
        }
    }
}

#[cfg(test)]
mod tests;
