//! A testbed: namespaces, TUN devices, addresses and the two forwarders.
//!
//! Two shapes:
//! - **Pair**: a client namespace (198.18.0.1, 2001:2::1) and a server
//!   namespace (198.18.0.2, 2001:2::2), each with a TUN device `tw0`.
//! - **Shell**: a client namespace whose far end is this host: the host
//!   side gets a TUN device `tw-<pid>-<n>` and its own /30 (and /64) from
//!   198.18.0.0/15 (2001:2::/48), allocated under a lock so several shells
//!   can run at once.
//!
//! Only the peer's address is routed through the link, never a default
//! route, so nothing in a testbed can reach beyond it.

use crate::forwarder::{Direction, DirectionStats, Ends, Forwarder, ForwarderOptions, Phase};
use crate::netns::{self, Netns};
use crate::{EmuError, Kind, sys};
use serde::Serialize;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::OwnedFd;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use tcpwise_link::{Link, LinkConfig};

/// Which shape of testbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topology {
    /// Client namespace to this host.
    Shell,
    /// Client namespace to server namespace.
    Pair,
}

/// Which end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The client namespace.
    Client,
    /// The server namespace (pairs only).
    Server,
}

/// Everything needed to build a testbed.
#[derive(Debug, Clone)]
pub struct TestbedConfig {
    /// Shape.
    pub topology: Topology,
    /// Client to server.
    pub up: LinkConfig,
    /// Server to client.
    pub down: LinkConfig,
    /// Extra sysctls for the client namespace.
    pub client_sysctls: Vec<(String, String)>,
    /// Extra sysctls for the server namespace.
    pub server_sysctls: Vec<(String, String)>,
    /// How the forwarders run (real-time priority, injected faults).
    pub forwarder: ForwarderOptions,
    /// Link logs and packet captures (`--log`, `--pcap`).
    pub record: crate::record::RecordOptions,
}

impl TestbedConfig {
    /// A pair testbed over `up`/`down` with no extra sysctls.
    pub fn pair(up: LinkConfig, down: LinkConfig) -> TestbedConfig {
        TestbedConfig {
            topology: Topology::Pair,
            up,
            down,
            client_sysctls: Vec::new(),
            server_sysctls: Vec::new(),
            forwarder: ForwarderOptions::default(),
            record: Default::default(),
        }
    }
}

/// Sysctls every testbed namespace gets before the user's: autotuning
/// maxima large enough for the paths we emulate, and no IPv6 router
/// solicitations. 128 MiB: the receive window reaches about half of
/// `tcp_rmem`'s maximum, so one flow can keep 64 MB in flight, 25 Gbit/s at
/// 20 ms (32 MiB capped the selftest's unlimited path at 6 Gbit/s, the
/// sender limited by the window 30 % of its time: that was buffer/RTT,
/// not the forwarder). Autotuning grows a buffer only as far as its
/// path's BDP asks, so slow paths use what they did with 6 MB (the
/// namespace default, which a 177 ms, 151 Mbit/s path's 3.3 MB BDP
/// already half fills).
pub const DEFAULT_SYSCTLS: &[(&str, &str)] = &[
    ("net.ipv4.tcp_rmem", "4096 131072 134217728"),
    ("net.ipv4.tcp_wmem", "4096 16384 134217728"),
    ("net.ipv6.conf.default.router_solicitations", "0"),
    ("net.ipv6.conf.default.accept_ra", "0"),
];

/// The value [`DEFAULT_SYSCTLS`] gives `key`, if it sets it.
pub fn default_sysctl(key: &str) -> Option<&'static str> {
    DEFAULT_SYSCTLS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
}

/// The testbed's `tcp_rmem` maximum, bytes (what [`DEFAULT_SYSCTLS`] sets).
pub fn tcp_mem_max() -> u64 {
    default_sysctl("net.ipv4.tcp_rmem")
        .and_then(|v| v.split_whitespace().last()?.parse().ok())
        .unwrap_or(0)
}

/// Linux's boot-time `tcp_rmem`/`tcp_wmem` (`tcp_init`; the maxima are
/// 6 MiB and 4 MiB on a host of more than a few GB,
/// Documentation/networking/ip-sysctl.rst): what a stock host has. It is
/// not what a new namespace gets: since Linux 4.15 a namespace copies its
/// host's values (this VM's `tcp_rmem` is `4096 131072 33554432`), so a
/// testbed that wants the stock values sets them ([`host_tcp_mem`] reads
/// the host's).
pub const LINUX_DEFAULT_TCP_MEM: &[(&str, &str)] = &[
    ("net.ipv4.tcp_rmem", "4096 131072 6291456"),
    ("net.ipv4.tcp_wmem", "4096 16384 4194304"),
];

/// Sysctls as one line, `key="value", ...`, for reports and notices
/// ([`DEFAULT_SYSCTLS`], [`LINUX_DEFAULT_TCP_MEM`]).
pub fn sysctls_text(sysctls: &[(&str, &str)]) -> String {
    sysctls
        .iter()
        .map(|(k, v)| format!("{k}=\"{v}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// This host's `tcp_rmem` and `tcp_wmem` (what a new namespace copies),
/// each value as the sysctl prints it with single spaces; a value that
/// cannot be read is left out.
pub fn host_tcp_mem() -> Vec<(&'static str, String)> {
    ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]
        .into_iter()
        .filter_map(|k| {
            let file = format!("/proc/sys/{}", k.replace('.', "/"));
            let v = std::fs::read_to_string(file).ok()?;
            Some((k, v.split_whitespace().collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// What a new namespace inherits on this host, read from one made for
/// the purpose and removed at once: its `tcp_rmem` and `tcp_wmem` (since
/// Linux 4.15 the host's values, not the boot-time
/// [`LINUX_DEFAULT_TCP_MEM`]). Read at measure time so a report names the
/// values the run had, not a constant.
pub fn fresh_namespace_tcp_mem() -> Result<Vec<(String, String)>, EmuError> {
    check_privileges()?;
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    let ns = Netns::create(&format!("tw-{}-f{n}", std::process::id()))?;
    ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]
        .into_iter()
        .map(|k| Ok((k.to_string(), ns.read_sysctl(k)?)))
        .collect()
}

/// What every testbed changes and why, for `tcpwise emu` to say on start.
pub fn sysctl_notice() -> String {
    let read = host_tcp_mem();
    let host: Vec<(&str, &str)> = read.iter().map(|(k, v)| (*k, v.as_str())).collect();
    format!(
        "every testbed namespace gets {} (autotuning ceilings above a long fat path's BDP; a new namespace would copy this host's {}; Linux's boot-time defaults are {}); --client-sysctl/--server-sysctl override them",
        sysctls_text(DEFAULT_SYSCTLS),
        sysctls_text(&host),
        sysctls_text(LINUX_DEFAULT_TCP_MEM)
    )
}

static SERIAL: AtomicU32 = AtomicU32::new(0);
const ALLOC_LOCK: &str = "/run/tcpwise-alloc.lock";
pub(crate) const TUN_NAME: &str = "tw0";

/// A live testbed. Dropping it tears everything down.
pub struct Testbed {
    topology: Topology,
    client: Netns,
    server: Option<Netns>,
    client_v4: Ipv4Addr,
    peer_v4: Ipv4Addr,
    client_v6: Ipv6Addr,
    peer_v6: Ipv6Addr,
    host_tun: Option<String>,
    forwarders: Vec<Forwarder>,
    phase: Phase,
    /// What the forwarders publish for `--meter` (up, down).
    gauges: [Arc<crate::meter::Gauge>; 2],
    _latency: sys::DmaLatencyGuard,
    /// Keeps the TUN fds open (they vanish when closed).
    _tuns: Vec<Arc<OwnedFd>>,
}

/// Addresses of a shell's /30 and /64.
fn shell_addrs(k: u32) -> (Ipv4Addr, Ipv4Addr, Ipv6Addr, Ipv6Addr) {
    let base = u32::from(Ipv4Addr::new(198, 18, 0, 0)) + 4 * k;
    let v6 = |h: u16| Ipv6Addr::new(0x2001, 0x2, 0, k as u16, 0, 0, 0, h);
    (
        Ipv4Addr::from(base + 1),
        Ipv4Addr::from(base + 2),
        v6(1),
        v6(2),
    )
}

/// What a topology needs beyond [`check_privileges`], checked before
/// anything is set up: a shell's far end is this host's own network
/// namespace, which only root may wire up (a pair can live in a
/// rootless user namespace).
pub fn check_privileges_for(topology: Topology) -> Result<(), EmuError> {
    if topology == Topology::Shell && sys::euid() != 0 {
        return Err(EmuError::Privileges(
            "tcpwise emu shell needs root: its far end is this host's own network namespace (run it with sudo, or use 'tcpwise emu pair', which works rootless where the kernel allows)".into(),
        ));
    }
    Ok(())
}

/// Checks what the emulator needs before touching anything.
pub fn check_privileges() -> Result<(), EmuError> {
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(EmuError::Missing(
            "/dev/net/tun is missing: load the tun module (modprobe tun) or, in a container, pass --device /dev/net/tun".into(),
        ));
    }
    if sys::euid() != 0 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let caps = status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
            .unwrap_or(0);
        let need = (1u64 << 12) | (1u64 << 21); // CAP_NET_ADMIN, CAP_SYS_ADMIN
        if caps & need != need {
            return Err(EmuError::Privileges(
                "tcpwise emu needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces and TUN devices: run it with sudo".into(),
            ));
        }
    }
    Ok(())
}

impl Testbed {
    /// Builds a testbed with its forwarder threads; on any failure
    /// everything made so far is removed.
    pub fn start(cfg: &TestbedConfig) -> Result<Testbed, EmuError> {
        let (mut tb, [up, down]) = Testbed::build(cfg)?;
        let shared = cfg
            .forwarder
            .threads
            .shared(cfg.up.peak_bps(), cfg.down.peak_bps());
        let threads = if shared {
            vec![vec![up, down]]
        } else {
            vec![vec![up], vec![down]]
        };
        tb.forwarders = threads
            .into_iter()
            .map(|dirs| Forwarder::spawn(dirs, tb.phase.clone(), cfg.forwarder))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| EmuError::os("cannot start forwarder", e))?;
        Ok(tb)
    }

    /// Builds a testbed and its two directions (up, down), which no
    /// thread carries yet: [`Testbed::start`] gives them threads of their
    /// own, [`crate::testbeds::Testbeds`] shares threads among testbeds.
    pub(crate) fn build(cfg: &TestbedConfig) -> Result<(Testbed, [Direction; 2]), EmuError> {
        check_privileges()?;
        // Files first: an unwritable --log/--pcap is one error, nothing set up.
        let [up_files, down_files] = if cfg.record.any() {
            cfg.record.open()?.map(Some)
        } else {
            [None, None]
        };
        let pid = std::process::id();
        let n = SERIAL.fetch_add(1, Ordering::Relaxed);
        let client = Netns::create(&format!("tw-{pid}-c{n}"))?;
        apply_sysctls(&client, &cfg.client_sysctls)?;
        let want = cfg.forwarder.offload;
        let client_tun = client.run(|| open_tun(TUN_NAME, want))?.map_err(tun_err)?;

        let ServerEnd {
            server,
            tun: server_tun,
            host_tun,
            addrs,
            lock,
        } = server_end(cfg, &format!("{pid}-{n}"), client_tun.1.is_ok())?;
        let (client_tun, client_mode) = client_tun;
        let (server_tun, server_mode) = server_tun;
        let (client_tun, mode) = agree_offload(&client, client_tun, client_mode, server_mode)?;
        let (client_tun, server_tun) = (Arc::new(client_tun), Arc::new(server_tun));
        configure(
            Some(client.name()),
            TUN_NAME,
            addrs.0,
            addrs.1,
            addrs.2,
            addrs.3,
        )?;
        drop(lock);

        let words = mode_words(&mode);
        let start = sys::mono_ns();
        let phase = Phase::default();
        let gauges: [Arc<crate::meter::Gauge>; 2] = Default::default();
        let record = |files: Option<crate::record::Files>| {
            files
                .map(|f| crate::record::Recorder::start(f, start))
                .transpose()
                .map_err(|e| EmuError::os("cannot start the record writer", e))
        };
        let up = Direction {
            name: "up".into(),
            ends: Ends {
                input: client_tun.clone(),
                output: server_tun.clone(),
                offload: words.0,
                note: words.1.clone(),
                routes: Vec::new(),
                hop_in: false,
                hop_out: false,
            },
            link: Link::new(cfg.up.clone(), start),
            rec: record(up_files)?,
            gauge: gauges[0].clone(),
            flows: None,
        };
        let down = Direction {
            name: "down".into(),
            ends: Ends {
                input: server_tun.clone(),
                output: client_tun.clone(),
                offload: words.0,
                note: words.1.clone(),
                routes: Vec::new(),
                hop_in: false,
                hop_out: false,
            },
            link: Link::new(cfg.down.clone(), start),
            rec: record(down_files)?,
            gauge: gauges[1].clone(),
            flows: None,
        };
        let tb = Testbed {
            topology: cfg.topology,
            client,
            server,
            client_v4: addrs.0,
            peer_v4: addrs.1,
            client_v6: addrs.2,
            peer_v6: addrs.3,
            host_tun,
            forwarders: Vec::new(),
            phase,
            gauges,
            _latency: sys::DmaLatencyGuard::zero(),
            _tuns: vec![client_tun, server_tun],
        };
        Ok((tb, [up, down]))
    }

    /// The live counters of each direction (up, down), for `--meter`.
    pub fn gauges(&self) -> [Arc<crate::meter::Gauge>; 2] {
        self.gauges.clone()
    }

    /// Shape of this testbed.
    pub fn topology(&self) -> Topology {
        self.topology
    }

    /// The client's IPv4 address.
    pub fn client_v4(&self) -> Ipv4Addr {
        self.client_v4
    }

    /// The far end's IPv4 address (server namespace or host).
    pub fn peer_v4(&self) -> Ipv4Addr {
        self.peer_v4
    }

    /// The client's IPv6 address.
    pub fn client_v6(&self) -> Ipv6Addr {
        self.client_v6
    }

    /// The far end's IPv6 address.
    pub fn peer_v6(&self) -> Ipv6Addr {
        self.peer_v6
    }

    /// Name of the host-side TUN device (shells only).
    pub fn host_tun(&self) -> Option<&str> {
        self.host_tun.as_deref()
    }

    /// The namespace of `role`.
    pub fn netns(&self, role: Role) -> Option<&Netns> {
        match role {
            Role::Client => Some(&self.client),
            Role::Server => self.server.as_ref(),
        }
    }

    /// A command that will run inside `role`'s namespace, with
    /// `TCPWISE_PEER`/`TCPWISE_PEER6` naming the other end.
    pub fn command(&self, role: Role, program: &str) -> Result<Command, EmuError> {
        let ns = self
            .netns(role)
            .ok_or_else(|| EmuError::Config("this testbed has no server namespace".into()))?;
        let (me4, peer4, me6, peer6) = match role {
            Role::Client => (self.client_v4, self.peer_v4, self.client_v6, self.peer_v6),
            Role::Server => (self.peer_v4, self.client_v4, self.peer_v6, self.client_v6),
        };
        let mut cmd = Command::new(program);
        cmd.env("TCPWISE_PEER", peer4.to_string())
            .env("TCPWISE_PEER6", peer6.to_string())
            .env("TCPWISE_ADDR", me4.to_string())
            .env("TCPWISE_ADDR6", me6.to_string())
            .env("TCPWISE_NETNS", ns.name());
        crate::sys::exec_in_netns(&mut cmd, ns.raw_fd());
        Ok(cmd)
    }

    /// Runs `f` on a new named thread that has entered `role`'s namespace,
    /// for servers and clients that live in this process (the lab's): every
    /// socket it opens belongs to that namespace.
    pub fn spawn_in<R: Send + 'static>(
        &self,
        role: Role,
        name: &str,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> Result<netns::SpawnedIn<R>, EmuError> {
        let ns = self
            .netns(role)
            .ok_or_else(|| EmuError::Config("this testbed has no server namespace".into()))?;
        ns.spawn(name, f)
    }

    /// Files lateness from now on under phase `n` (see [`Phase`]).
    pub fn mark_phase(&self, n: usize) {
        self.phase.store(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a forwarder thread has died (the testbed no longer works).
    pub fn failed(&self) -> bool {
        self.forwarders.iter().any(|f| f.is_finished())
    }

    /// Stops the forwarders, removes the namespaces, returns the statistics.
    pub fn shutdown(mut self) -> Result<[DirectionStats; 2], EmuError> {
        let mut stats = self.forwarders.drain(..).flat_map(Forwarder::stop);
        let up = stats.next().unwrap_or_default();
        let down = stats.next().unwrap_or_default();
        drop(stats);
        self.finish_with(up, down)
    }

    /// Removes the namespaces once the threads that carried this
    /// testbed's directions have stopped and handed back `up` and `down`.
    pub(crate) fn finish_with(
        mut self,
        mut up: DirectionStats,
        mut down: DirectionStats,
    ) -> Result<[DirectionStats; 2], EmuError> {
        // What the sending kernels dropped before a forwarder read it.
        up.input_dropped = self.client.tx_dropped(TUN_NAME).unwrap_or(0);
        down.input_dropped = match (&self.server, &self.host_tun) {
            (Some(s), _) => s.tx_dropped(TUN_NAME),
            (None, Some(h)) => crate::netns::tx_dropped_here(h),
            _ => None,
        }
        .unwrap_or(0);
        if let Some(s) = self.server.as_mut() {
            s.delete()?;
        }
        self.client.delete()?;
        Ok([up, down])
    }
}

/// A TUN device with offloads when asked and the kernel agrees; `Err`
/// says why it has none.
pub(crate) type TunMode = Result<sys::TunOffload, String>;

/// The testbed's far end: the server's namespace (`emu pair`) or this
/// host (`emu shell`), with its TUN device, the addresses of both ends,
/// and the allocation lock a shell holds until its addresses are set.
struct ServerEnd {
    server: Option<Netns>,
    tun: (OwnedFd, TunMode),
    host_tun: Option<String>,
    addrs: (Ipv4Addr, Ipv4Addr, Ipv6Addr, Ipv6Addr),
    lock: Option<sys::FileLock>,
}

/// Sets up the far end; `id` is `PID-N`, `offload` whether the client's
/// TUN took offloads (the far end asks for them only then).
fn server_end(cfg: &TestbedConfig, id: &str, offload: bool) -> Result<ServerEnd, EmuError> {
    Ok(match cfg.topology {
        Topology::Pair => {
            let server = Netns::create(&format!("tw-{}", id.replacen('-', "-s", 1)))?;
            apply_sysctls(&server, &cfg.server_sysctls)?;
            let tun = server
                .run(|| open_tun(TUN_NAME, offload))?
                .map_err(tun_err)?;
            let addrs = (
                Ipv4Addr::new(198, 18, 0, 1),
                Ipv4Addr::new(198, 18, 0, 2),
                "2001:2::1".parse().expect("valid"),
                "2001:2::2".parse().expect("valid"),
            );
            configure(
                Some(server.name()),
                TUN_NAME,
                addrs.1,
                addrs.0,
                addrs.3,
                addrs.2,
            )?;
            ServerEnd {
                server: Some(server),
                tun,
                host_tun: None,
                addrs,
                lock: None,
            }
        }
        Topology::Shell => {
            if !cfg.server_sysctls.is_empty() {
                return Err(EmuError::Config(
                    "--server-sysctl applies to 'emu pair' only: in 'emu shell' the server is this host".into(),
                ));
            }
            let lock = sys::FileLock::acquire(ALLOC_LOCK)
                .map_err(|e| EmuError::os(format!("cannot lock {ALLOC_LOCK}"), e))?;
            let k = free_subnet()?;
            let addrs = shell_addrs(k);
            let name = format!("tw-{id}");
            let tun = open_tun(&name, offload).map_err(tun_err)?;
            configure(None, &name, addrs.1, addrs.0, addrs.3, addrs.2)?;
            ServerEnd {
                server: None,
                tun,
                host_tun: Some(name),
                addrs,
                lock: Some(lock),
            }
        }
    })
}

/// Both ends offload or neither does (a TUN without the header cannot
/// take a super-packet): the client's TUN, opened again without offload
/// when the far end has none (it is not configured yet).
fn agree_offload(
    client: &Netns,
    client_tun: OwnedFd,
    client_mode: TunMode,
    server_mode: TunMode,
) -> Result<(OwnedFd, TunMode), EmuError> {
    Ok(match (client_mode, server_mode) {
        (Ok(a), Ok(b)) => (
            client_tun,
            Ok(sys::TunOffload {
                tso: true,
                uso: a.uso && b.uso,
            }),
        ),
        (Ok(_), off) => {
            drop(client_tun);
            let fd = client.run(|| sys::create_tun(TUN_NAME))?.map_err(tun_err)?;
            (fd, off)
        }
        (off, _) => (client_tun, off),
    })
}

pub(crate) fn open_tun(name: &str, want: bool) -> std::io::Result<(OwnedFd, TunMode)> {
    if !want {
        return Ok((sys::create_tun(name)?, Err("--no-offload".into())));
    }
    match sys::create_tun_offload(name) {
        Ok((fd, o)) => Ok((fd, Ok(o))),
        Err(e) => Ok((
            sys::create_tun(name)?,
            Err(format!(
                "the kernel refused TUN offloads ({e}): one packet per read and write"
            )),
        )),
    }
}

/// The mode's name and why it is off, as [`Ends`] carries them.
pub(crate) fn mode_words(m: &TunMode) -> (Option<&'static str>, Option<String>) {
    match m {
        Ok(o) if o.uso => (Some("tso+uso"), None),
        Ok(_) => (Some("tso"), None),
        Err(why) => (None, Some(why.clone())),
    }
}

pub(crate) fn tun_err(e: std::io::Error) -> EmuError {
    EmuError::os("cannot create TUN device", e)
}

pub(crate) fn apply_sysctls(ns: &Netns, extra: &[(String, String)]) -> Result<(), EmuError> {
    for (k, v) in DEFAULT_SYSCTLS {
        ns.sysctl(k, v)?;
    }
    for (k, v) in extra {
        ns.sysctl(k, v)?;
    }
    Ok(())
}

/// Brings `dev` up with addresses `me` and a host route to `peer`.
fn configure(
    ns: Option<&str>,
    dev: &str,
    me: Ipv4Addr,
    peer: Ipv4Addr,
    me6: Ipv6Addr,
    peer6: Ipv6Addr,
) -> Result<(), EmuError> {
    let batch = format!(
        "link set {dev} mtu 1500 txqueuelen 10000 up\n\
         addr add {me}/32 peer {peer}/32 dev {dev}\n\
         addr add {me6}/128 peer {peer6}/128 dev {dev} nodad\n"
    );
    match ns {
        Some(ns) => netns::ip_stdin(&["-n", ns, "-batch", "-"], Some(&batch)),
        None => netns::ip_stdin(&["-batch", "-"], Some(&batch)),
    }
}

/// First /30 index whose host-side address is not in use on this host.
fn free_subnet() -> Result<u32, EmuError> {
    let out = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .map_err(|e| EmuError::caused(Kind::Missing, "cannot run ip (install iproute2)", e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    (1..16_384)
        .find(|&k| {
            let (_, host, _, _) = shell_addrs(k);
            !text.contains(&format!("inet {host}/")) && !text.contains(&format!("inet {host} "))
        })
        .ok_or_else(|| {
            EmuError::Setup("all 16383 shell subnets of 198.18.0.0/15 are in use".into())
        })
}
