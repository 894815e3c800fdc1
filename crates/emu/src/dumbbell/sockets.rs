//! Each flow's round-trip time and retransmissions as its sender's kernel
//! counts them, for any program's flows: once a second the kernel's
//! socket diagnostics (what `ss -ti` reads) of every host's and
//! receiver's namespace, matched to the bottleneck's flows by 5-tuple.
//!
//! Why beside the bottleneck's own count: the bottleneck sees bytes that
//! repeat (retransmitted payload) but not the sender's smoothed RTT, its
//! minimum, or which congestion control it runs; iperf3 reads these from
//! `TCP_INFO` of its own sockets only, and curl not at all.

use crate::flows::FlowKey;
use crate::topology::Side;
use crate::{EmuError, sys};
use serde::Serialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// What the sender's kernel said of one flow over the run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TcpSampled {
    /// Its congestion control, as the kernel named it.
    pub cc: Option<String>,
    /// Samples taken (one a second while the socket was open).
    pub samples: usize,
    /// Median of the sampled smoothed RTTs (`tcpi_rtt`), ms.
    pub srtt_ms_median: f64,
    /// The largest sampled smoothed RTT, ms.
    pub srtt_ms_max: f64,
    /// The smallest RTT the kernel measured (`tcpi_min_rtt`), ms.
    pub min_rtt_ms: f64,
    /// Segments retransmitted (`tcpi_total_retrans`) at the last sample.
    pub retransmits: u32,
    /// The smoothed RTT sampled in each second of the run (ms; `null`
    /// where the socket was not open), the seconds of the flows' goodput.
    pub srtt_ms_per_s: Vec<Option<f64>>,
}

#[derive(Debug, Default)]
struct Track {
    cc: Option<String>,
    srtt_us: Vec<Option<u32>>,
    min_rtt_us: u32,
    total_retrans: u32,
}

/// Samples by socket (local, remote). Sans-IO: samples in, a flow's
/// summary out.
#[derive(Debug, Default)]
pub struct SocketSamples {
    by: HashMap<(SocketAddr, SocketAddr), Track>,
}

impl SocketSamples {
    /// One socket's state in second `second` of the run.
    pub fn add(&mut self, second: usize, d: &sys::TcpDiag) {
        // A socket that has sent nothing yet has no RTT to say.
        if d.info.rtt == 0 {
            return;
        }
        let t = self.by.entry((d.local, d.remote)).or_default();
        if t.srtt_us.len() <= second {
            t.srtt_us.resize(second + 1, None);
        }
        t.srtt_us[second] = Some(d.info.rtt);
        t.min_rtt_us = d.info.min_rtt;
        t.total_retrans = d.info.total_retrans;
        t.cc = d.cc.clone().or(t.cc.take());
    }

    /// The flow's sender socket's summary: the socket whose own address
    /// is the flow's source.
    pub fn of(&self, key: &FlowKey) -> Option<TcpSampled> {
        let local = SocketAddr::new(key.src.0, key.src.1);
        let remote = SocketAddr::new(key.dst.0, key.dst.1);
        let t = self.by.get(&(local, remote))?;
        let mut v: Vec<u32> = t.srtt_us.iter().flatten().copied().collect();
        v.sort_unstable();
        let ms = |us: u32| us as f64 / 1e3;
        Some(TcpSampled {
            cc: t.cc.clone(),
            samples: v.len(),
            srtt_ms_median: ms(*v.get(v.len() / 2)?),
            srtt_ms_max: ms(*v.last()?),
            min_rtt_ms: ms(t.min_rtt_us),
            retransmits: t.total_retrans,
            srtt_ms_per_s: t.srtt_us.iter().map(|s| s.map(ms)).collect(),
        })
    }
}

/// Samples every namespace of a dumbbell once a second, in the middle of
/// each second of the links' clock.
pub struct Sampler {
    socks: Vec<OwnedFd>,
    started: Instant,
    next: Duration,
    /// What was sampled.
    pub samples: SocketSamples,
    /// Sampling that failed (said once at the end, never fatal).
    pub failed: Option<String>,
}

impl Sampler {
    /// A diagnostics socket in each namespace of `d`; `started` is when
    /// its links' clock began.
    pub fn new(d: &super::Dumbbell, started: Instant) -> Result<Sampler, EmuError> {
        let t = d.topology();
        let nodes = (0..t.hosts.len()).map(|i| (Side::Host, i));
        let nodes = nodes.chain((0..t.receivers.len()).map(|j| (Side::Receiver, j)));
        let mut socks = Vec::new();
        for (side, i) in nodes {
            let s = d.netns(side, i).run(sys::sock_diag_socket)?;
            socks.push(s.map_err(|e| EmuError::os("socket(NETLINK_SOCK_DIAG)", e))?);
        }
        Ok(Sampler {
            socks,
            started,
            // The middle of the second the links' clock is in.
            next: Duration::from_secs(started.elapsed().as_secs()) + Duration::from_millis(500),
            samples: SocketSamples::default(),
            failed: None,
        })
    }

    /// Samples when a second's middle has passed; cheap otherwise.
    pub fn tick(&mut self) {
        let now = self.started.elapsed();
        if now < self.next {
            return;
        }
        let second = now.as_secs() as usize;
        self.next = Duration::from_secs(now.as_secs() + 1) + Duration::from_millis(500);
        for s in &self.socks {
            match sys::tcp_sockets(s.as_raw_fd()) {
                Ok(all) => all.iter().for_each(|d| self.samples.add(second, d)),
                Err(e) => {
                    self.failed.get_or_insert_with(|| e.to_string());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(local: &str, remote: &str, rtt: u32, retrans: u32) -> sys::TcpDiag {
        sys::TcpDiag {
            local: local.parse().unwrap(),
            remote: remote.parse().unwrap(),
            info: sys::TcpInfoRaw {
                rtt,
                min_rtt: 40_000,
                total_retrans: retrans,
                ..Default::default()
            },
            info_len: 232,
            cc: Some("bbr".into()),
        }
    }

    #[test]
    fn a_flow_gets_its_senders_socket() {
        let mut s = SocketSamples::default();
        let (h, r) = ("198.18.1.1:40000", "198.18.2.1:5301");
        s.add(1, &diag(h, r, 41_000, 0));
        s.add(2, &diag(h, r, 45_000, 3));
        s.add(4, &diag(h, r, 43_000, 5));
        // The receiver's socket of the same connection is not the sender's.
        s.add(2, &diag(r, h, 90_000, 0));
        let key = FlowKey {
            proto: 6,
            src: ("198.18.1.1".parse().unwrap(), 40000),
            dst: ("198.18.2.1".parse().unwrap(), 5301),
        };
        let t = s.of(&key).unwrap();
        assert_eq!((t.samples, t.retransmits), (3, 5));
        assert_eq!(
            (t.srtt_ms_median, t.srtt_ms_max, t.min_rtt_ms),
            (43.0, 45.0, 40.0)
        );
        assert_eq!(
            t.srtt_ms_per_s,
            vec![None, Some(41.0), Some(45.0), None, Some(43.0)]
        );
        assert_eq!(t.cc.as_deref(), Some("bbr"));
        let other = FlowKey {
            src: key.dst,
            dst: (key.src.0, 1),
            ..key
        };
        assert!(s.of(&other).is_none());
    }

    #[test]
    fn a_socket_with_no_rtt_is_not_sampled() {
        let mut s = SocketSamples::default();
        s.add(0, &diag("198.18.1.1:1", "198.18.2.1:2", 0, 0));
        assert!(s.by.is_empty());
    }
}
