//! Each flow's goodput as the bottleneck sees it, without I/O: packets
//! are counted by 5-tuple as they leave the link, so any program's flows
//! count (iperf3's, curl's, ours), and nothing in the hosts is asked.
//!
//! Goodput is payload that advances the flow: a TCP segment counts only
//! the bytes past the highest sequence number seen leaving the link, so a
//! retransmission that repeats delivered bytes adds nothing (what the
//! receiver's application gets, as iperf3's receiver reports it). UDP
//! counts its payload. Bytes are binned per second since the link started,
//! by when they left it, as `mm-throughput-graph` bins a link's.

use serde::Serialize;
use std::collections::HashMap;
use std::net::IpAddr;

/// Flows that carried less are left out of shares and fairness (a
/// control connection's few hundred bytes are no competitor).
pub const BULK_MIN_BYTES: u64 = 64 * 1024;

/// A flow: protocol and both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FlowKey {
    /// 6 (TCP) or 17 (UDP).
    pub proto: u8,
    /// Sender's address and port.
    pub src: (IpAddr, u16),
    /// Receiver's address and port.
    pub dst: (IpAddr, u16),
}

/// What the headers of one packet say, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// Its flow.
    pub key: FlowKey,
    /// TCP sequence number of its first payload byte (UDP: none).
    pub seq: Option<u32>,
    /// Payload bytes.
    pub payload: u32,
}

/// Reads a packet's IP and TCP/UDP headers; `total` is its length on the
/// wire (the head may hold headers only). `None`: not TCP or UDP over IP.
pub fn parse(head: &[u8], total: usize) -> Option<Seen> {
    let (proto, src, dst, l4) = match head.first()? >> 4 {
        4 if head.len() >= 20 => {
            let ihl = usize::from(head[0] & 0x0f) * 4;
            let a = |i: usize| -> Option<IpAddr> {
                Some(IpAddr::from(<[u8; 4]>::try_from(head.get(i..i + 4)?).ok()?))
            };
            (head[9], a(12)?, a(16)?, ihl)
        }
        6 if head.len() >= 40 => {
            let a = |i: usize| -> Option<IpAddr> {
                Some(IpAddr::from(
                    <[u8; 16]>::try_from(head.get(i..i + 16)?).ok()?,
                ))
            };
            (head[6], a(8)?, a(24)?, 40)
        }
        _ => return None,
    };
    let port = |i: usize| Some(u16::from_be_bytes([*head.get(i)?, *head.get(i + 1)?]));
    let key = FlowKey {
        proto,
        src: (src, port(l4)?),
        dst: (dst, port(l4 + 2)?),
    };
    match proto {
        6 => {
            let off = usize::from(head.get(l4 + 12)? >> 4) * 4;
            let seq = u32::from_be_bytes(head.get(l4 + 4..l4 + 8)?.try_into().ok()?);
            let payload = total.saturating_sub(l4 + off) as u32;
            Some(Seen {
                key,
                seq: Some(seq),
                payload,
            })
        }
        17 => Some(Seen {
            key,
            seq: None,
            payload: total.saturating_sub(l4 + 8) as u32,
        }),
        _ => None,
    }
}

/// A packet's destination address, read from its IP header.
pub fn destination(head: &[u8]) -> Option<IpAddr> {
    match head.first()? >> 4 {
        4 => Some(IpAddr::from(<[u8; 4]>::try_from(head.get(16..20)?).ok()?)),
        6 => Some(IpAddr::from(<[u8; 16]>::try_from(head.get(24..40)?).ok()?)),
        _ => None,
    }
}

/// One flow's counters.
#[derive(Debug, Clone, Default)]
struct Counters {
    /// Highest sequence number past the last byte seen (TCP).
    top: Option<u32>,
    goodput: u64,
    packets: u64,
    /// Payload bytes that repeated bytes already seen.
    repeated: u64,
    first_ns: u64,
    last_ns: u64,
    per_s: Vec<u64>,
}

/// Counts flows leaving one link.
#[derive(Debug, Clone, Default)]
pub struct FlowMeter {
    start: u64,
    flows: HashMap<FlowKey, Counters>,
}

/// At most this many flows are told apart (the rest are not counted): a
/// topology's flows are a handful; a port scan's would be memory.
pub const MAX_FLOWS: usize = 4096;

impl FlowMeter {
    /// A meter whose seconds count from `start` (the link's start), ns.
    pub fn new(start: u64) -> FlowMeter {
        FlowMeter {
            start,
            flows: HashMap::new(),
        }
    }

    /// Counts a packet of `total` bytes leaving the link at `at`.
    pub fn record(&mut self, at: u64, head: &[u8], total: usize) {
        let Some(s) = parse(head, total) else { return };
        if s.payload == 0 && s.key.proto == 6 {
            // Pure ACKs and handshakes: not data, and flows of their own
            // in the reverse direction would only crowd the report.
            return;
        }
        if !self.flows.contains_key(&s.key) && self.flows.len() >= MAX_FLOWS {
            return;
        }
        let c = self.flows.entry(s.key).or_insert_with(|| Counters {
            first_ns: at,
            ..Counters::default()
        });
        c.packets += 1;
        c.last_ns = at;
        let new = match (s.seq, c.top) {
            (Some(seq), Some(top)) => {
                let end = seq.wrapping_add(s.payload);
                // Serial-number arithmetic (RFC 1982): ahead of the top?
                let ahead = end.wrapping_sub(top) as i32;
                if ahead > 0 {
                    c.top = Some(end);
                    (ahead as u32).min(s.payload)
                } else {
                    0
                }
            }
            (Some(seq), None) => {
                c.top = Some(seq.wrapping_add(s.payload));
                s.payload
            }
            (None, _) => s.payload,
        };
        c.repeated += u64::from(s.payload - new);
        c.goodput += u64::from(new);
        let sec = (at.saturating_sub(self.start) / 1_000_000_000) as usize;
        if c.per_s.len() <= sec {
            c.per_s.resize(sec + 1, 0);
        }
        c.per_s[sec] += u64::from(new);
    }

    /// Every flow, in key order.
    pub fn report(&self) -> Vec<FlowReport> {
        let mut v: Vec<FlowReport> = self
            .flows
            .iter()
            .map(|(k, c)| FlowReport {
                key: *k,
                goodput_bytes: c.goodput,
                repeated_bytes: c.repeated,
                packets: c.packets,
                first_s: c.first_ns.saturating_sub(self.start) as f64 / 1e9,
                last_s: c.last_ns.saturating_sub(self.start) as f64 / 1e9,
                goodput_bytes_per_s: c.per_s.clone(),
            })
            .collect();
        v.sort_by_key(|f| f.key);
        v
    }
}

/// One flow as the bottleneck saw it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowReport {
    /// Its 5-tuple.
    #[serde(flatten)]
    pub key: FlowKey,
    /// Payload that advanced the flow, bytes.
    pub goodput_bytes: u64,
    /// Payload that repeated bytes already through (retransmissions).
    pub repeated_bytes: u64,
    /// Data packets.
    pub packets: u64,
    /// When its first and last data left the link, s since the link started.
    pub first_s: f64,
    /// See `first_s`.
    pub last_s: f64,
    /// Goodput in each whole second since the link started.
    pub goodput_bytes_per_s: Vec<u64>,
}

impl FlowReport {
    /// Mean goodput over seconds `[from, to)` of the link, bit/s.
    pub fn goodput_bps(&self, from: usize, to: usize) -> f64 {
        let n = to.saturating_sub(from).max(1);
        let bytes: u64 = (from..to)
            .filter_map(|s| self.goodput_bytes_per_s.get(s))
            .sum();
        bytes as f64 * 8.0 / n as f64
    }
}

/// Jain's fairness index of `x`: (Σx)² / (n·Σx²), 1 when all are equal,
/// 1/n when one takes everything (Jain, Chiu and Hawe, DEC-TR-301, 1984).
pub fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || sq == 0.0 {
        return 1.0;
    }
    sum * sum / (x.len() as f64 * sq)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 TCP segment's headers: 20 + 20 bytes.
    fn tcp4(src: [u8; 4], sport: u16, seq: u32) -> Vec<u8> {
        let mut h = vec![0u8; 40];
        h[0] = 0x45;
        h[9] = 6;
        h[12..16].copy_from_slice(&src);
        h[16..20].copy_from_slice(&[198, 18, 2, 1]);
        h[20..22].copy_from_slice(&sport.to_be_bytes());
        h[22..24].copy_from_slice(&5201u16.to_be_bytes());
        h[24..28].copy_from_slice(&seq.to_be_bytes());
        h[32] = 5 << 4;
        h
    }

    #[test]
    fn goodput_counts_new_bytes_once_per_flow_and_second() {
        let mut m = FlowMeter::new(1_000);
        let a = tcp4([198, 18, 1, 1], 40000, 1_000);
        m.record(1_000, &a, 40 + 1448);
        // A retransmission of the same bytes adds nothing; the next adds.
        m.record(2_000, &a, 40 + 1448);
        m.record(
            1_000_001_000,
            &tcp4([198, 18, 1, 1], 40000, 2_448),
            40 + 1448,
        );
        // Another host's flow, and a pure ACK (not counted).
        m.record(3_000, &tcp4([198, 18, 1, 2], 40000, 7), 40 + 100);
        m.record(3_000, &tcp4([198, 18, 1, 3], 40000, 7), 40);
        let r = m.report();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].goodput_bytes, 2 * 1448);
        assert_eq!(r[0].repeated_bytes, 1448);
        assert_eq!(r[0].goodput_bytes_per_s, vec![1448, 1448]);
        assert_eq!(r[0].key.src.1, 40000);
        assert_eq!(r[1].goodput_bytes, 100);
        assert_eq!(r[0].goodput_bps(0, 2), 1448.0 * 8.0);
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut m = FlowMeter::new(0);
        m.record(0, &tcp4([198, 18, 1, 1], 1, u32::MAX - 99), 40 + 100);
        m.record(1, &tcp4([198, 18, 1, 1], 1, 0), 40 + 100);
        assert_eq!(m.report()[0].goodput_bytes, 200);
    }

    #[test]
    fn not_ip_is_not_counted_and_jain_is_one_for_equal_shares() {
        assert_eq!(parse(&[0u8; 10], 10), None);
        assert!((jain(&[5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert_eq!(jain(&[]), 1.0);
    }
}
