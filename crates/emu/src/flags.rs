//! `tcpwise emu`'s flags, parsed once by clap: the link (`path::PathSpec`),
//! the record (`record::RecordArgs`) and the `--config` file
//! (`record::ConfigArgs`) flattened into each command's own. They live
//! in this crate because they are its configuration as users write it
//! (the `--config` file is the same flags written down); the binary only
//! parses them and calls [`crate::command`].

use crate::netns::Sysctl;
use crate::path::PathSpec;
use crate::record::{ConfigArgs, RecordArgs};
use clap::Args;
use std::path::PathBuf;
use tcpwise_units::Dur;

/// The flags `shell` and `pair` share.
#[derive(Debug, Args)]
pub struct Common {
    /// The emulated link.
    #[command(flatten)]
    pub link: PathSpec,
    /// What to record of it.
    #[command(flatten)]
    pub record: RecordArgs,
    /// A `--config` file of these flags.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Sysctl for the client namespace (net.* keys), repeatable.
    #[arg(long = "client-sysctl", value_name = "KEY=VALUE")]
    pub client_sysctl: Vec<Sysctl>,
    /// Write per-direction statistics as JSON to FILE on exit.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Print nothing of our own: neither the start notice nor the
    /// per-direction summary on exit (Mahimahi prints neither).
    #[arg(short, long)]
    pub quiet: bool,
    /// A live line a second on stderr: each direction's rate, queue and
    /// drops (Mahimahi's meters, as text).
    #[arg(long)]
    pub meter: bool,
    /// Mahimahi's spelling: --meter for the uplink only.
    #[arg(long)]
    pub meter_uplink: bool,
    /// Mahimahi's spelling: --meter for the downlink only.
    #[arg(long)]
    pub meter_downlink: bool,
    /// Mahimahi's spelling of --meter.
    #[arg(long)]
    pub meter_all: bool,
    /// Leave out only the start notice (the sysctls every testbed
    /// namespace gets), keep the summary.
    #[arg(long)]
    pub no_notice: bool,
    /// Under sudo, run CMD (and --server) as root instead of as the user who
    /// invoked sudo (SUDO_UID/SUDO_GID, supplementary groups dropped, the
    /// default, as Mahimahi does). The forwarder always keeps root.
    #[arg(long)]
    pub as_root: bool,
    /// Open the TUN devices without a virtio-net header or TSO/USO: one
    /// packet per read and write (the mode older kernels get; compare the
    /// two with `emu selftest --no-offload`).
    #[arg(long)]
    pub no_offload: bool,
    /// Forwarder threads: 1 carries both directions (fewer wake-ups: what
    /// lets many slow testbeds share a machine), 2 gives each direction its
    /// own (both cores at multi-gigabit rates); auto picks 1 when neither
    /// direction is ever set faster than 200 Mbit/s.
    #[arg(long, default_value = "auto", value_name = "auto|1|2")]
    pub forwarder_threads: crate::forwarder::Threads,
    /// Make the forwarder panic after N packets (tests of the teardown).
    #[arg(long, hide = true, value_name = "N")]
    pub inject_panic_after: Option<u64>,
}

/// `emu shell`.
#[derive(Debug, Args)]
pub struct ShellArgs {
    /// The flags shell and pair share.
    #[command(flatten)]
    pub common: Common,
    /// Command and arguments (default: $SHELL).
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

/// `emu pair`.
#[derive(Debug, Args)]
pub struct PairArgs {
    /// The flags shell and pair share.
    #[command(flatten)]
    pub common: Common,
    /// Sysctl for the server namespace, e.g. net.ipv4.tcp_slow_start_after_idle=0; repeatable.
    #[arg(long = "server-sysctl", value_name = "KEY=VALUE")]
    pub server_sysctl: Vec<Sysctl>,
    /// Server command, run with `sh -c` in the server namespace.
    #[arg(long, value_name = "CMD")]
    pub server: String,
    /// Start the client once this TCP port listens in the server namespace [default: any port].
    #[arg(long, value_name = "PORT")]
    pub wait_port: Option<u16>,
    /// Give up if the server does not listen within this time.
    #[arg(long, default_value = "10s", value_name = "TIME")]
    pub wait_timeout: Dur,
    /// Run N identical testbeds in this one process, each with its own
    /// namespaces, server and client command (TCPWISE_TESTBED=0..N-1 in
    /// their environment). Their packets share one forwarder thread per
    /// core instead of a thread per testbed: one wake-up serves every
    /// testbed with a packet due, which is what lets dozens of slow paths
    /// share a small machine (docs/emu.md, density); on a machine with no
    /// idle time a thread passes over its testbeds at most once per 100 µs
    /// (packets up to 100 µs late, the summary says so). Exit status: the
    /// first testbed's nonzero one, else 0; --stats-json holds every
    /// testbed. Not with --log, --pcap, --meter or --forwarder-threads.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=256))]
    pub testbeds: u32,
    /// Client command and arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

/// `emu plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Directory holding up.log and/or down.log (or a single log file);
    /// or RUN.json, the --stats-json of `emu dumbbell`: every flow's
    /// goodput and its sender's RTT per second, one chart per direction.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Output: FILE.svg or FILE.html; without it, SVG on standard output
    /// (as Mahimahi's graph scripts write it).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Throughput bin (mm-throughput-graph's MS_PER_BIN).
    #[arg(long, default_value = "100ms", value_name = "TIME")]
    pub bin: Dur,
}

/// `emu selftest`.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// The emulated link.
    #[command(flatten)]
    pub link: PathSpec,
    /// What to record of it.
    #[command(flatten)]
    pub record: RecordArgs,
    /// A `--config` file of these flags.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Idle round trips to time.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub samples: u32,
    /// Length of the bulk download (at least 1s).
    #[arg(long, default_value = "5s", value_name = "TIME")]
    pub bulk: Dur,
    /// Parallel bulk downloads (2 shows whether a fair queue, fq-codel,
    /// keeps the RTT probes' flow apart from the bulk ones).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub flows: u32,
    /// Congestion control of the test's sockets, both ends (TCP_CONGESTION),
    /// e.g. cubic: a namespace may only default to what the host allows
    /// (net.ipv4.tcp_allowed_congestion_control), a socket may use any
    /// available one. BBR keeps its own queue short and hides bufferbloat.
    #[arg(short = 'C', long, value_name = "ALGO")]
    pub congestion: Option<String>,
    /// Sysctl for both namespaces, repeatable, e.g. net.ipv4.tcp_ecn=1.
    #[arg(long = "sysctl", value_name = "KEY=VALUE")]
    pub sysctl: Vec<Sysctl>,
    /// Print the report as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Open the TUN devices without offloads (one packet per read and
    /// write), to compare with the default (TSO/USO, 64 KB super-packets).
    #[arg(long)]
    pub no_offload: bool,
    /// Forwarder threads: 1 carries both directions (fewer wake-ups: what
    /// lets many slow testbeds share a machine), 2 gives each direction its
    /// own (both cores at multi-gigabit rates); auto picks 1 when neither
    /// direction is ever set faster than 200 Mbit/s.
    #[arg(long, default_value = "auto", value_name = "auto|1|2")]
    pub forwarder_threads: crate::forwarder::Threads,
}

/// `tcpwise emu dumbbell`'s flags: the bottleneck is the link flags.
#[derive(Debug, Args)]
pub struct DumbbellArgs {
    /// The bottleneck (the short form's).
    #[command(flatten)]
    pub link: PathSpec,
    /// What to record of every link (a subdirectory per link).
    #[command(flatten)]
    pub record: RecordArgs,
    /// The topology as a TOML file: [bottleneck] (emu pair's --config
    /// keys; "up" is hosts to receivers), [[host]] tables (name, its access
    /// link's keys such as rtt and rate, cc, start, command, to, sysctl) and
    /// [[receiver]] tables (name, server, optional link keys); instead of
    /// --host, --server and the link flags.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["host", "server"])]
    pub topology: Option<PathBuf>,
    /// A sender host of the short form: NAME[:key=value,...] with the keys
    /// of a [[host]] table (rtt=10ms, rate=10mbit, loss=1%, cc=bbr,
    /// start=5s); repeatable, in order. The link flags are the bottleneck's.
    #[arg(long, value_name = "NAME[:KEY=VALUE,...]")]
    pub host: Vec<String>,
    /// The short form's one receiver ("receiver", 198.18.2.1): its server
    /// command, run with `sh -c`.
    #[arg(long, value_name = "CMD")]
    pub server: Option<String>,
    /// Start the hosts' commands once this TCP port listens in every
    /// receiver that runs a server [default: any port].
    #[arg(long, value_name = "PORT")]
    pub wait_port: Option<u16>,
    /// Give up if a server does not listen within this time.
    #[arg(long, default_value = "10s", value_name = "TIME")]
    pub wait_timeout: Dur,
    /// Before the commands, time N idle round trips of 100-byte TCP
    /// messages from each host to its receiver, one host at a time, and
    /// print them beside the round trip its links add up to.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub idle_rtt: Option<u32>,
    /// Write every link's statistics, every flow's goodput per second with
    /// its sender's RTT and retransmits (the kernel's socket diagnostics,
    /// sampled each second in every namespace) and each direction's shares
    /// as JSON to FILE; `tcpwise emu plot FILE` draws every flow.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// No summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Under sudo, run the commands as root instead of as the user who
    /// invoked sudo.
    #[arg(long)]
    pub as_root: bool,
    /// TUN devices without offloads (as emu pair's).
    #[arg(long)]
    pub no_offload: bool,
    /// Forwarder threads: 1 carries every link, 2 splits the directions;
    /// auto picks 1 when the bottleneck is never set faster than 200 Mbit/s
    /// either way.
    #[arg(long, default_value = "auto", value_name = "auto|1|2")]
    pub forwarder_threads: crate::forwarder::Threads,
    /// Each host's command where its table gives none: run with `sh -c`
    /// when it is one word with spaces, else as words; `$TCPWISE_PEER` is
    /// its receiver, `$TCPWISE_HOST` its name.
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}
