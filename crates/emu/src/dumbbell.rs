//! A running dumbbell ([`crate::topology`]): a namespace and TUN device per
//! host and receiver, and one forwarder pass that carries every link.
//!
//! Packets cross a topology as they cross a pair: read from a host's TUN
//! device, through its access link, the bottleneck, the receiver's access
//! link, written into the receiver's TUN device (ACKs the other way).
//! Between two links inside the forwarder a packet travels through a
//! connected pair of Unix datagram sockets (a *hop*), read by the next
//! link's loop exactly as a TUN device would be, so each link is the
//! `Link` and loop a pair's direction is: the same model, the same
//! lateness recorded per link, the same `--log`/`--pcap` per link. The
//! bottleneck's output goes by destination address to the right
//! receiver's hop (and its reverse to the right host's), and counts each
//! flow by 5-tuple as it leaves ([`crate::flows`]).
//!
//! Why hops and not one composed link: a hop costs a socket write and read
//! (microseconds, counted in the next link's lateness) and keeps every
//! link's code the code that `emu pair` runs and `emu selftest` holds to
//! its model; a composed link would need its own proof.
//!
//! Addresses: host i is 198.18.1.(i+1) and 2001:2:0:1::(i+1), receiver j
//! 198.18.2.(j+1) and 2001:2:0:2::(j+1); each namespace routes only the
//! other side's /24 (/64) into its TUN device, never a default route.

use crate::forwarder::{Direction, DirectionStats, Ends, Forwarder, ForwarderOptions, Phase};
use crate::netns::{self, Netns};
use crate::record::RecordOptions;
use crate::testbed::{TUN_NAME, TunMode, apply_sysctls, check_privileges, mode_words, open_tun};
use crate::topology::{Node, Resolved, Side};
use crate::{EmuError, sys};
use std::os::fd::OwnedFd;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use tcpwise_link::{Link, LinkConfig};

mod probe;
mod report;
pub mod run;
pub mod sockets;
pub use probe::{IdleRtt, idle_rtts};
pub use report::*;

/// Bytes a hop may hold between two passes: a pass delivers what is due,
/// and eight hosts' 64 KB super-packets at once must not meet a full hop.
const HOP_BUFFER: usize = 64 << 20;

static SERIAL: AtomicU32 = AtomicU32::new(0);

/// Everything needed to build a dumbbell.
#[derive(Debug, Clone)]
pub struct DumbbellConfig {
    /// The topology, resolved.
    pub topology: Resolved,
    /// How the forwarder runs.
    pub forwarder: ForwarderOptions,
    /// `--log`/`--pcap`: each link in a subdirectory of its name.
    pub record: RecordOptions,
}

/// A live dumbbell. Dropping it tears everything down.
pub struct Dumbbell {
    topology: Resolved,
    /// Hosts' namespaces, then receivers'.
    nets: Vec<Netns>,
    forwarders: Vec<Forwarder>,
    _latency: sys::DmaLatencyGuard,
    /// Keeps the TUN devices and hops open.
    _fds: Vec<Arc<OwnedFd>>,
}

/// A node's namespace and TUN device while the dumbbell is built.
struct Built {
    ns: Netns,
    tun: Arc<OwnedFd>,
}

impl Dumbbell {
    /// Builds the namespaces, links and forwarder threads; on any failure
    /// everything made so far is removed.
    pub fn start(cfg: &DumbbellConfig) -> Result<Dumbbell, EmuError> {
        check_privileges()?;
        let t = &cfg.topology;
        let pid = std::process::id();
        let n = SERIAL.fetch_add(1, Ordering::Relaxed);
        let mut built = Vec::new();
        let mut mode: Option<TunMode> = None;
        let nodes = t
            .hosts
            .iter()
            .map(|h| (h, 'h'))
            .chain(t.receivers.iter().map(|r| (r, 'r')));
        for (i, (node, c)) in nodes.enumerate() {
            let ns = Netns::create(&format!("tw-{pid}-d{n}{c}{i}"))?;
            let tun = node_namespace(&ns, node, &mut mode, cfg.forwarder.offload)?;
            built.push(Built {
                ns,
                tun: Arc::new(tun),
            });
        }
        let words = mode_words(mode.as_ref().expect("at least one host"));
        let start = sys::mono_ns();
        let mut fds: Vec<Arc<OwnedFd>> = built.iter().map(|b| b.tun.clone()).collect();
        let dirs = directions(t, &built, &cfg.record, start, (words.0, words.1), &mut fds)?;
        let phase = Phase::default();
        let shared = cfg
            .forwarder
            .threads
            .shared(t.bottleneck.0.peak_bps(), t.bottleneck.1.peak_bps());
        let groups: Vec<Vec<Direction>> = if shared {
            vec![dirs]
        } else {
            let (ups, downs) = dirs.into_iter().partition(|d| d.name.ends_with(" up"));
            vec![ups, downs]
        };
        let forwarders = groups
            .into_iter()
            .map(|g| Forwarder::spawn(g, phase.clone(), cfg.forwarder))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| EmuError::os("cannot start forwarder", e))?;
        Ok(Dumbbell {
            topology: t.clone(),
            nets: built.into_iter().map(|b| b.ns).collect(),
            forwarders,
            _latency: sys::DmaLatencyGuard::zero(),
            _fds: fds,
        })
    }

    /// The topology it runs.
    pub fn topology(&self) -> &Resolved {
        &self.topology
    }

    /// The node `i` of `side`.
    pub fn node(&self, side: Side, i: usize) -> &Node {
        match side {
            Side::Host => &self.topology.hosts[i],
            Side::Receiver => &self.topology.receivers[i],
        }
    }

    /// The namespace of node `i` of `side`.
    pub fn netns(&self, side: Side, i: usize) -> &Netns {
        match side {
            Side::Host => &self.nets[i],
            Side::Receiver => &self.nets[self.topology.hosts.len() + i],
        }
    }

    /// A command to run in node `i`'s namespace, with `TCPWISE_PEER` (a
    /// host's receiver, a receiver's first host), `TCPWISE_ADDR`,
    /// `TCPWISE_HOST` (its name) and `TCPWISE_NETNS` set.
    pub fn command(&self, side: Side, i: usize, program: &str) -> Command {
        let me = self.node(side, i);
        let peer = match side {
            Side::Host => &self.topology.receivers[me.peer],
            Side::Receiver => &self.topology.hosts[me.peer],
        };
        let ns = self.netns(side, i);
        let mut cmd = Command::new(program);
        cmd.env("TCPWISE_PEER", peer.v4.to_string())
            .env("TCPWISE_PEER6", peer.v6.to_string())
            .env("TCPWISE_ADDR", me.v4.to_string())
            .env("TCPWISE_ADDR6", me.v6.to_string())
            .env("TCPWISE_HOST", &me.spec.name)
            .env("TCPWISE_NETNS", ns.name());
        sys::exec_in_netns(&mut cmd, ns.raw_fd());
        cmd
    }

    /// Runs `f` on a new thread inside node `i`'s namespace (the lab's
    /// in-process senders and receivers).
    pub fn spawn_in<R: Send + 'static>(
        &self,
        side: Side,
        i: usize,
        name: &str,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> Result<netns::SpawnedIn<R>, EmuError> {
        self.netns(side, i).spawn(name, f)
    }

    /// Whether a forwarder thread has died.
    pub fn failed(&self) -> bool {
        self.forwarders.iter().any(|f| f.is_finished())
    }

    /// Stops the forwarders, removes the namespaces, returns every link's
    /// statistics and each flow's share.
    pub fn shutdown(mut self) -> Result<TopologyReport, EmuError> {
        let mut links: Vec<DirectionStats> = self
            .forwarders
            .drain(..)
            .flat_map(Forwarder::stop)
            .collect();
        let h = self.topology.hosts.len();
        for st in &mut links {
            // One topology, however many links its thread carried.
            st.thread_testbeds = 1;
            // What a sending kernel dropped before the forwarder read it.
            let (name, dir) = st.direction.rsplit_once(' ').unwrap_or(("", ""));
            let input = match dir {
                "up" => self.topology.hosts.iter().position(|n| n.spec.name == name),
                _ => (self.topology.receivers.iter())
                    .position(|n| n.spec.name == name)
                    .map(|j| h + j),
            };
            if let Some(k) = input {
                st.input_dropped = self.nets[k].tx_dropped(TUN_NAME).unwrap_or(0);
            }
        }
        links.sort_by_key(|d| link_order(&self.topology, &d.direction));
        for ns in &mut self.nets {
            ns.delete()?;
        }
        Ok(TopologyReport::new(&self.topology, links))
    }
}

/// Where a link's direction sorts in reports: hosts, the bottleneck,
/// receivers; up before down.
fn link_order(t: &Resolved, name: &str) -> (usize, bool) {
    let (node, dir) = name.rsplit_once(' ').unwrap_or((name, ""));
    let h = t.hosts.len();
    let k = if node == "bottleneck" {
        h
    } else if let Some(i) = t.hosts.iter().position(|n| n.spec.name == node) {
        i
    } else {
        h + 1
            + t.receivers
                .iter()
                .position(|n| n.spec.name == node)
                .unwrap_or(0)
    };
    (k, dir == "down")
}

/// Sets up a node's namespace: sysctls (its congestion control among
/// them), its TUN device (offloads as the first node's), addresses and
/// routes to the other side.
fn node_namespace(
    ns: &Netns,
    node: &Node,
    mode: &mut Option<TunMode>,
    want: bool,
) -> Result<OwnedFd, EmuError> {
    let what = match node.spec.side {
        Side::Host => "host",
        Side::Receiver => "receiver",
    };
    let mut sysctls = Vec::new();
    if let Some(cc) = &node.spec.cc {
        let read = |k: &str| std::fs::read_to_string(format!("/proc/sys/net/ipv4/{k}"));
        let (avail, allowed) = (
            read("tcp_available_congestion_control"),
            read("tcp_allowed_congestion_control"),
        );
        cc_allowed(cc, &avail.unwrap_or_default(), &allowed.unwrap_or_default())
            .map_err(|e| EmuError::Config(format!("{what} '{}': {e}", node.spec.name)))?;
        sysctls.push(("net.ipv4.tcp_congestion_control".to_string(), cc.clone()));
    }
    sysctls.extend(node.spec.sysctls.iter().cloned());
    apply_sysctls(ns, &sysctls)
        .map_err(|e| EmuError::Config(format!("{what} '{}': {e}", node.spec.name)))?;
    let want = mode.as_ref().map_or(want, Result::is_ok);
    let (fd, m) = ns
        .run(|| open_tun(TUN_NAME, want))?
        .map_err(crate::testbed::tun_err)?;
    if mode
        .as_ref()
        .is_some_and(|first| first.is_ok() != m.is_ok())
    {
        return Err(EmuError::Setup(
            "the kernel gave one namespace's TUN device offloads and refused another's: run with --no-offload".into(),
        ));
    }
    mode.get_or_insert(m);
    let (other, other6) = match node.spec.side {
        Side::Host => ("198.18.2.0/24", "2001:2:0:2::/64"),
        Side::Receiver => ("198.18.1.0/24", "2001:2:0:1::/64"),
    };
    let (v4, v6) = (node.v4, node.v6);
    let batch = format!(
        "link set {TUN_NAME} mtu 1500 txqueuelen 10000 up\n\
         addr add {v4}/32 dev {TUN_NAME}\n\
         route add {other} dev {TUN_NAME} src {v4}\n\
         addr add {v6}/128 dev {TUN_NAME} nodad\n\
         route add {other6} dev {TUN_NAME} src {v6}\n"
    );
    netns::ip_stdin(&["-n", ns.name(), "-batch", "-"], Some(&batch))?;
    Ok(fd)
}

/// Whether a namespace may default to `cc`: the kernel lets a namespace
/// other than the host's pick only an algorithm it has and the host
/// allows (`tcp_allowed_congestion_control`, set only from the host), and
/// answers anything else with EPERM or ENOENT, which would say nothing.
fn cc_allowed(cc: &str, available: &str, allowed: &str) -> Result<(), String> {
    let has = |list: &str| list.split_whitespace().any(|a| a == cc);
    if !has(available) {
        return Err(format!(
            "cc = \"{cc}\": this kernel has no such congestion control (it has: {}; modprobe tcp_{cc} if it is a module)",
            available.trim()
        ));
    }
    if !has(allowed) {
        return Err(format!(
            "cc = \"{cc}\": a namespace may default only to what the host allows, and net.ipv4.tcp_allowed_congestion_control is '{}': allow it on the host (sysctl -w net.ipv4.tcp_allowed_congestion_control='{} {cc}'), or choose it per socket (iperf3 -C {cc}, tcpwise perf -C {cc})",
            allowed.trim(),
            allowed.trim()
        ));
    }
    Ok(())
}

/// A hop between two links: (write end, read end).
fn hop(fds: &mut Vec<Arc<OwnedFd>>) -> Result<(Arc<OwnedFd>, Arc<OwnedFd>), EmuError> {
    let (w, r) = sys::hop_pair(HOP_BUFFER).map_err(|e| EmuError::os("cannot make a hop", e))?;
    let (w, r) = (Arc::new(w), Arc::new(r));
    fds.extend([w.clone(), r.clone()]);
    Ok((w, r))
}

/// What every direction of a topology shares when it is made.
struct Maker<'a> {
    record: &'a RecordOptions,
    start: u64,
    offload: (Option<&'static str>, Option<String>),
}

impl Maker<'_> {
    /// The link `name`'s two directions' recorders (up, down).
    fn recorders(&self, name: &str) -> Result<[Option<crate::record::Recorder>; 2], EmuError> {
        if !self.record.any() {
            return Ok([None, None]);
        }
        let sub = |d: &Option<std::path::PathBuf>| d.as_ref().map(|d| d.join(name));
        let opts = RecordOptions {
            log_dir: sub(&self.record.log_dir),
            pcap_dir: sub(&self.record.pcap_dir),
            command: self.record.command.clone(),
        };
        let start = |f| {
            crate::record::Recorder::start(f, self.start)
                .map_err(|e| EmuError::os("cannot start the record writer", e))
        };
        let [up, down] = opts.open()?;
        Ok([Some(start(up)?), Some(start(down)?)])
    }

    /// A direction from `input` to `output`; `hops` says which of them
    /// are hops (in, out).
    fn make(
        &self,
        name: String,
        (input, output): (Arc<OwnedFd>, Arc<OwnedFd>),
        hops: (bool, bool),
        link: &LinkConfig,
        rec: Option<crate::record::Recorder>,
    ) -> Direction {
        let mut d = Direction {
            name,
            ends: Ends {
                input,
                output,
                offload: self.offload.0,
                note: self.offload.1.clone(),
                routes: Vec::new(),
                hop_in: false,
                hop_out: false,
            },
            link: Link::new(link.clone(), self.start),
            rec,
            gauge: Default::default(),
            flows: None,
        };
        (d.ends.hop_in, d.ends.hop_out) = hops;
        d
    }
}

/// Every direction of every link, wired through hops.
fn directions(
    t: &Resolved,
    built: &[Built],
    record: &RecordOptions,
    start: u64,
    offload: (Option<&'static str>, Option<String>),
    fds: &mut Vec<Arc<OwnedFd>>,
) -> Result<Vec<Direction>, EmuError> {
    let mk = Maker {
        record,
        start,
        offload,
    };
    let (fwd_w, fwd_r) = hop(fds)?;
    let (rev_w, rev_r) = hop(fds)?;
    let (mut dirs, mut to_hosts, mut to_receivers) = (Vec::new(), Vec::new(), Vec::new());
    for (i, h) in t.hosts.iter().enumerate() {
        let (w, r) = hop(fds)?;
        let tun = built[i].tun.clone();
        let [up, down] = mk.recorders(&h.spec.name)?;
        let name = &h.spec.name;
        dirs.push(mk.make(
            format!("{name} up"),
            (tun.clone(), fwd_w.clone()),
            (false, true),
            &h.out,
            up,
        ));
        dirs.push(mk.make(
            format!("{name} down"),
            (r, tun),
            (true, false),
            &h.back,
            down,
        ));
        to_hosts.extend(h.addrs().map(|a| (a, w.clone())));
    }
    for (j, rv) in t.receivers.iter().enumerate() {
        let (w, r) = hop(fds)?;
        let tun = built[t.hosts.len() + j].tun.clone();
        let [up, down] = mk.recorders(&rv.spec.name)?;
        let name = &rv.spec.name;
        dirs.push(mk.make(
            format!("{name} up"),
            (r, tun.clone()),
            (true, false),
            &rv.back,
            up,
        ));
        dirs.push(mk.make(
            format!("{name} down"),
            (tun, rev_w.clone()),
            (false, true),
            &rv.out,
            down,
        ));
        to_receivers.extend(rv.addrs().map(|a| (a, w.clone())));
    }
    let [up, down] = mk.recorders("bottleneck")?;
    let mut bup = mk.make(
        "bottleneck up".into(),
        (fwd_r, fwd_w),
        (true, true),
        &t.bottleneck.0,
        up,
    );
    // One receiver takes everything through the bottleneck, so a network
    // it routes to (a reference bottleneck of the kernel's own behind
    // it) is reached too; several are told apart by address.
    match t.receivers.as_slice() {
        [_] => bup.ends.output = to_receivers[0].1.clone(),
        _ => bup.ends.routes = to_receivers,
    }
    bup.flows = Some(crate::flows::FlowMeter::new(start));
    let mut bdown = mk.make(
        "bottleneck down".into(),
        (rev_r, rev_w),
        (true, true),
        &t.bottleneck.1,
        down,
    );
    bdown.ends.routes = to_hosts;
    bdown.flows = Some(crate::flows::FlowMeter::new(start));
    dirs.extend([bup, bdown]);
    Ok(dirs)
}
