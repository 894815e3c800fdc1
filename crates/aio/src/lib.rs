//! # tcpwise-aio: MariaDB's completion-port report on its own workload
//!
//! The report (`shared/seeds/mariadb-iocp.txt`) is about InnoDB's
//! asynchronous *file* I/O on Windows: every I/O was bound at submission
//! to one I/O thread's fixed *segment* of event handles
//! (`WaitForMultipleObjects` takes at most 64), and only that thread could
//! reap it. With one completion port that any I/O thread drains, sysbench
//! `update_no_key` stayed flat from 4 to 1024 clients (25,925 ops/s at
//! 1024, against 6,043 with segments).
//!
//! This crate runs that workload on Linux's completion queue, io_uring,
//! under three disciplines ([`Model`]):
//!
//! - [`Model::Segments`]: T threads, each owning its own ring with at most
//!   N (64) I/Os in flight; an I/O is bound at submission to segment
//!   `hash(page) mod T`, queues there for a free slot, and only the owner
//!   reaps it.
//! - [`Model::Shared`]: one ring; one reaper thread moves its completions
//!   to one queue that any of the T worker threads drains (MariaDB's
//!   `tpool` does this on Linux today). No limit but the ring's size, as
//!   a completion port has none; `shared:DEPTH` caps the I/Os in flight,
//!   to tell the discipline apart from the queue depth it allows. The leader/follower variant, where
//!   whichever thread is free reaps the ring itself, was not built.
//! - [`Model::Sync`]: T threads doing `pread`/`pwrite`, what a naive
//!   server does.
//! - [`Model::Innodb`]: segments as InnoDB built them on Windows: the
//!   clients' own threads reserve a slot in one array of T segments of 32
//!   and hand the I/O to that segment's reaper, which takes one completion
//!   a wait, the smallest slot first; a request that finds every slot
//!   taken waits on one manual-reset event that wakes every waiter. Each
//!   of those [`Semantic`]s can be left out (`innodb:without=spill`).
//!   Pages map to segments as InnoDB maps them (64 neighbouring pages a
//!   segment), not by the hash the fair model uses.
//!
//! The workload ([`txn`]) is sysbench's `update_no_key` reduced to its
//! I/O: C closed-loop clients, each transaction reads one 16 KiB page at a
//! random key (uniform, or Zipf-skewed: then segments get unequal load,
//! the mechanism the report describes) with `O_DIRECT`, updates a row and
//! writes the page back. **No fsync**: the report's author turned
//! durability off to stress the I/O path, and so do we. Pages carry a
//! checksummed header ([`page`]) and the whole file is checked after each
//! run against the version of each page's last write: no lost, torn or
//! misdirected write goes unnoticed.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod engine;
pub mod file;
pub mod page;
pub mod txn;

pub use file::DataFile;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
pub use tcpwise_sys::uring::UringError;

/// How completions reach the thread that handles them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// One completion queue that any worker drains.
    Shared {
        /// Most I/Os in the ring at once ([`SHARED_DEPTH`] unless told:
        /// a completion port has no per-thread limit).
        depth: usize,
    },
    /// Each I/O bound to one thread's ring with at most `slots` in flight.
    Segments {
        /// I/Os a segment holds at once (64, as WaitForMultipleObjects).
        slots: usize,
    },
    /// Blocking `pread`/`pwrite` on a thread pool.
    Sync,
    /// Segments with InnoDB's own semantics on Windows (`os0file.c`),
    /// each of which can be left out to see what it costs.
    Innodb {
        /// The semantics in force.
        semantics: Semantics,
    },
}

/// One of InnoDB's Windows segment semantics (`os0file.c` of MariaDB 5.2
/// and MySQL 5.5, the builds of the field report). Left out, each falls
/// back to what the fair [`Model::Segments`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Semantic {
    /// 32 slots a segment (`OS_AIO_N_PENDING_IOS_PER_THREAD`: "Win NT
    /// does not allow more than 64" handles a wait); without it, 64.
    Slots32,
    /// A reaper handles one completion a wait, the smallest slot index
    /// first (`WaitForMultipleObjects` returns the lowest signalled
    /// handle); without it, every ready completion in arrival order.
    LowestFirst,
    /// A request takes the first free slot from its preferred segment's
    /// first slot over the whole array (`os_aio_array_reserve_slot`), so it
    /// may be reaped by another segment's thread; without it, it waits for
    /// a slot of its own segment.
    Spill,
    /// Requests that find every slot taken wait on one manual-reset
    /// `not_full` event, set when a slot frees in a full array: it wakes
    /// every waiter and all but one find it full again; without it, one
    /// waiter is woken a freed slot.
    WakeAll,
}

impl Semantic {
    /// All four, in the order they are named.
    pub const ALL: [Semantic; 4] = [
        Semantic::Slots32,
        Semantic::LowestFirst,
        Semantic::Spill,
        Semantic::WakeAll,
    ];

    /// The name in a model's spelling (`innodb:without=spill`).
    pub fn name(self) -> &'static str {
        match self {
            Semantic::Slots32 => "slots32",
            Semantic::LowestFirst => "lowest-first",
            Semantic::Spill => "spill",
            Semantic::WakeAll => "wake-all",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`Semantic`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Semantics(u8);

impl Semantics {
    /// Every semantic InnoDB has.
    pub const ALL: Semantics = Semantics(0b1111);

    /// This set less `s`.
    pub fn without(self, s: Semantic) -> Semantics {
        Semantics(self.0 & !s.bit())
    }

    /// Whether `s` is in force.
    pub fn has(self, s: Semantic) -> bool {
        self.0 & s.bit() != 0
    }

    /// The semantics left out of [`Semantics::ALL`].
    pub fn missing(self) -> Vec<Semantic> {
        Semantic::ALL
            .into_iter()
            .filter(|&s| !self.has(s))
            .collect()
    }

    /// Slots a segment.
    pub fn slots(self) -> usize {
        if self.has(Semantic::Slots32) { 32 } else { 64 }
    }
}

/// `innodb` or `innodb:without=A+B`.
fn parse_innodb(rest: Option<&str>, s: &str) -> Result<Model, ModelError> {
    let mut semantics = Semantics::ALL;
    if let Some(rest) = rest {
        let list = rest
            .strip_prefix("without=")
            .ok_or_else(|| ModelError::Semantic(s.to_string()))?;
        for name in list.split('+') {
            let one = Semantic::ALL
                .into_iter()
                .find(|m| m.name() == name)
                .ok_or_else(|| ModelError::Semantic(s.to_string()))?;
            semantics = semantics.without(one);
        }
    }
    Ok(Model::Innodb { semantics })
}

/// The shared ring's default depth: room for every client's I/O.
pub const SHARED_DEPTH: usize = 4095;

/// A model that could not be parsed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Not a model.
    #[error(
        "unknown file-I/O model '{0}': use shared[:DEPTH], segments[:SLOTS], innodb[:without=S+S] or sync"
    )]
    Unknown(String),
    /// `innodb:` with something else than `without=` and known names.
    #[error(
        "'{0}': use innodb or innodb:without= with some of slots32, lowest-first, spill and wake-all joined by +"
    )]
    Semantic(String),
    /// `segments:N` or `shared:N` with a bad N.
    #[error("'{0}': the slot count (depth) must be a whole number from 1 to 4095")]
    Slots(String),
}

impl std::str::FromStr for Model {
    type Err = ModelError;

    /// `shared[:DEPTH]` (default 4095), `segments[:N]` (default 64) or `sync`.
    fn from_str(s: &str) -> Result<Model, ModelError> {
        match s.split_once(':') {
            None if s == "shared" => Ok(Model::Shared {
                depth: SHARED_DEPTH,
            }),
            Some(("shared", n)) => match n.parse::<usize>() {
                Ok(v) if (1..=SHARED_DEPTH).contains(&v) => Ok(Model::Shared { depth: v }),
                _ => Err(ModelError::Slots(s.to_string())),
            },
            None if s == "sync" => Ok(Model::Sync),
            None if s == "innodb" => parse_innodb(None, s),
            Some(("innodb", rest)) => parse_innodb(Some(rest), s),
            None if s == "segments" => Ok(Model::Segments { slots: 64 }),
            Some(("segments", n)) => match n.parse::<usize>() {
                Ok(v) if (1..=SHARED_DEPTH).contains(&v) => Ok(Model::Segments { slots: v }),
                _ => Err(ModelError::Slots(s.to_string())),
            },
            _ => Err(ModelError::Unknown(s.to_string())),
        }
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Model::Shared {
                depth: SHARED_DEPTH,
            } => f.write_str("shared"),
            Model::Shared { depth } => write!(f, "shared:{depth}"),
            Model::Segments { slots: 64 } => f.write_str("segments"),
            Model::Segments { slots } => write!(f, "segments:{slots}"),
            Model::Sync => f.write_str("sync"),
            Model::Innodb { semantics } if *semantics == Semantics::ALL => f.write_str("innodb"),
            Model::Innodb { semantics } => {
                let names: Vec<&str> = semantics.missing().iter().map(|m| m.name()).collect();
                write!(f, "innodb:without={}", names.join("+"))
            }
        }
    }
}

/// How transactions pick their page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keys {
    /// Every page equally likely.
    Uniform,
    /// Zipf with this exponent: page k (from 1) drawn with weight k^-s.
    Zipf(f64),
}

/// A key distribution that could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error("'{0}': use uniform or zipf:S with 0 < S <= 5 (zipf:0.99)")]
pub struct KeysError(String);

impl std::str::FromStr for Keys {
    type Err = KeysError;

    fn from_str(s: &str) -> Result<Keys, KeysError> {
        match s.split_once(':') {
            None if s == "uniform" => Ok(Keys::Uniform),
            Some(("zipf", v)) => match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 5.0 => Ok(Keys::Zipf(x)),
                _ => Err(KeysError(s.into())),
            },
            _ => Err(KeysError(s.into())),
        }
    }
}

impl std::fmt::Display for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Keys::Uniform => f.write_str("uniform"),
            Keys::Zipf(s) => write!(f, "zipf:{s}"),
        }
    }
}

/// One run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Dispatch discipline.
    pub model: Model,
    /// Closed-loop clients (transactions in progress at once).
    pub clients: u32,
    /// I/O threads (segments: rings; shared: workers beside the reaper).
    pub threads: u32,
    /// How long transactions start.
    pub duration: Duration,
    /// Key distribution.
    pub keys: Keys,
    /// Seed of the key stream.
    pub seed: u64,
}

/// Default data file size.
pub const DEFAULT_FILE_BYTES: u64 = 1 << 30;

/// Where the data file lives unless told: a disk-backed directory that
/// survives reboots, so it is created once (`/tmp` may be tmpfs, which
/// refuses `O_DIRECT`).
pub fn default_file(bytes: u64) -> PathBuf {
    PathBuf::from(format!(
        "/var/tmp/tcpwise/aio-{}.dat",
        tcpwise_units::fmt_bytes(bytes).replace(' ', "")
    ))
}

/// Why a run could not be made or went wrong.
#[derive(Debug, thiserror::Error)]
pub enum AioError {
    /// Options that cannot run.
    #[error("{0}")]
    Config(String),
    /// io_uring is unavailable.
    #[error(transparent)]
    Uring(#[from] UringError),
    /// The filesystem refuses O_DIRECT.
    #[error(
        "--file {0}: the filesystem refuses O_DIRECT (ramfs, some FUSE and older tmpfs do); put the data file on a disk filesystem"
    )]
    NoDirect(PathBuf),
    /// No space for the file.
    #[error("--file {0}: no space left on the device")]
    NoSpace(PathBuf),
    /// A file of another size is there.
    #[error("--file {path}: has {found} bytes, not {want}; remove it or pass --size {found}")]
    Size {
        /// The file.
        path: PathBuf,
        /// Its size.
        found: u64,
        /// The size asked for.
        want: u64,
    },
    /// Something that is not our data file is there.
    #[error("--file {0}: {1}; refusing to overwrite it")]
    NotOurs(PathBuf, &'static str),
    /// An I/O error on the data file.
    #[error("--file {}: {what} it", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A page failed its check.
    #[error("--file {}: page {page}: {error}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The page.
        page: u32,
        /// What is wrong.
        error: page::PageError,
    },
    /// The engine did not drain after the run (a bug).
    #[error("the run did not drain: {0} transactions still in progress 30 s after the end")]
    Stuck(usize),
}

/// Pages in a file of `bytes` bytes.
pub fn pages_in(bytes: u64) -> Result<u32, AioError> {
    let page = page::PAGE as u64;
    if !bytes.is_multiple_of(page) || bytes < 64 * page || bytes / page > u64::from(u32::MAX) {
        return Err(AioError::Config(format!(
            "--size {bytes}: must be a multiple of 16 KiB from 1 MiB to 64 TiB"
        )));
    }
    Ok((bytes / page) as u32)
}

impl Options {
    /// Refuses a run that cannot be made.
    pub fn validate(&self) -> Result<(), AioError> {
        if self.clients == 0 || self.clients > 100_000 {
            return Err(AioError::Config(
                "--clients must be from 1 to 100000".into(),
            ));
        }
        if self.threads == 0 || self.threads > 256 {
            return Err(AioError::Config("--threads must be from 1 to 256".into()));
        }
        if self.duration.is_zero() || self.duration > Duration::from_secs(3600) {
            return Err(AioError::Config(
                "-t must be longer than 0 and at most 1h".into(),
            ));
        }
        Ok(())
    }
}

/// What a run measured.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct AioReport {
    /// Model name.
    pub model: String,
    /// Key distribution.
    pub keys: String,
    /// Clients.
    pub clients: u32,
    /// I/O threads.
    pub threads: u32,
    /// Measured time, s.
    pub duration_s: f64,
    /// Transactions committed in it.
    pub txns: u64,
    /// Transactions per second.
    pub tps: f64,
    /// Median transaction latency, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Largest, ms.
    pub max_ms: f64,
    /// Most I/Os in the kernel at once.
    pub inflight_peak: u64,
    /// Median time one I/O spent in the kernel (submission to completion), ms.
    pub io_p50_ms: f64,
    /// 99th percentile of it, ms.
    pub io_p99_ms: f64,
    /// I/O completions each thread handled.
    pub per_thread_completions: Vec<u64>,
    /// CPU time each of those threads used, ms.
    pub per_thread_cpu_ms: Vec<u64>,
    /// The busiest thread's CPU time (the reaper's too) over the run's wall
    /// time (1.0: one core saturated): whether a thread, rather than the
    /// disk, was the limit.
    pub busiest_thread_cpu: f64,
    /// CPU time of the shared model's reaper thread, ms.
    pub reaper_cpu_ms: Option<u64>,
    /// Most I/Os queued for a slot (segments), ring room (shared) or a
    /// free thread (sync) at once.
    pub queued_peak: u64,
    /// I/Os that waited because every slot of their segment (every
    /// thread, for sync) was busy.
    pub slot_waits: u64,
    /// 99th percentile of those waits, ms.
    pub slot_wait_p99_ms: f64,
    /// Transactions that found their page latched by another.
    pub latch_waits: u64,
    /// The data file.
    pub file: String,
    /// Its size.
    pub file_bytes: u64,
    /// Page size.
    pub page_bytes: u64,
    /// Always true: reads and writes bypass the page cache.
    pub o_direct: bool,
    /// The file is on tmpfs/ramfs: the I/O reached memory, not a disk.
    pub in_memory: bool,
    /// Always false: durability is off, as in the report.
    pub fsync: bool,
    /// Pages checked after the run (all of them).
    pub verified_pages: u64,
    /// Hypervisor steal during the run, ticks of 10 ms of one CPU (a
    /// starved run shows here; `None` without `/proc/stat`).
    pub steal_ticks: Option<u64>,
}

impl std::fmt::Display for AioReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} model, {} threads, {} clients, {} keys, {:.1} s: {} transactions, {:.0} tps",
            self.model, self.threads, self.clients, self.keys, self.duration_s, self.txns, self.tps
        )?;
        writeln!(
            f,
            "latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            self.p50_ms, self.p99_ms, self.max_ms
        )?;
        writeln!(
            f,
            "in flight at most {} (each I/O p50 {:.2} ms, p99 {:.2} ms in the kernel), queued at most {}, slot waits {} (p99 {:.2} ms), latch waits {}",
            self.inflight_peak,
            self.io_p50_ms,
            self.io_p99_ms,
            self.queued_peak,
            self.slot_waits,
            self.slot_wait_p99_ms,
            self.latch_waits
        )?;
        writeln!(
            f,
            "completions per thread: {:?}, CPU ms per thread: {:?}{}; hypervisor steal {} ticks",
            self.per_thread_completions,
            self.per_thread_cpu_ms,
            self.reaper_cpu_ms
                .map(|r| format!(" (reaper {r})"))
                .unwrap_or_default(),
            self.steal_ticks.map_or("?".into(), |t| t.to_string())
        )?;
        write!(
            f,
            "file {} ({}, {} KiB pages, O_DIRECT{}, no fsync): all {} pages verified",
            self.file,
            tcpwise_units::fmt_bytes(self.file_bytes),
            self.page_bytes / 1024,
            if self.in_memory {
                " to a memory filesystem"
            } else {
                ""
            },
            self.verified_pages
        )
    }
}

/// Whether io_uring can be used here (the `shared` and `segments`
/// models need it), and if not, why.
pub fn probe() -> Result<(), AioError> {
    Ok(tcpwise_sys::uring::probe()?)
}

/// Runs the workload on `file` and checks the file afterwards.
pub fn run(opts: &Options, file: &DataFile) -> Result<AioReport, AioError> {
    opts.validate()?;
    if opts.model != Model::Sync {
        probe()?;
    }
    let steal0 = tcpwise_sys::steal_ticks();
    let out = engine::run(opts, file)?;
    let steal_ticks = tcpwise_sys::steal_ticks()
        .zip(steal0)
        .map(|(b, a)| b.saturating_sub(a));
    let verified_pages = file.verify(&out.expected)?;
    let ms = |ns: u64| ns as f64 / 1e6;
    let secs = opts.duration.as_secs_f64();
    let lat = &out.latency;
    Ok(AioReport {
        model: opts.model.to_string(),
        keys: opts.keys.to_string(),
        clients: opts.clients,
        threads: opts.threads,
        duration_s: secs,
        txns: out.txns,
        tps: out.txns as f64 / secs,
        p50_ms: ms(lat.value_at_quantile(0.5)),
        p99_ms: ms(lat.value_at_quantile(0.99)),
        max_ms: ms(lat.max()),
        inflight_peak: out.inflight_peak,
        io_p50_ms: ms(out.io_latency.value_at_quantile(0.5)),
        io_p99_ms: ms(out.io_latency.value_at_quantile(0.99)),
        per_thread_completions: out.per_thread,
        busiest_thread_cpu: out
            .per_thread_cpu_ns
            .iter()
            .chain(&out.reaper_cpu_ns)
            .copied()
            .max()
            .unwrap_or(0) as f64
            / out.wall_ns.max(1) as f64,
        per_thread_cpu_ms: out
            .per_thread_cpu_ns
            .iter()
            .map(|n| n / 1_000_000)
            .collect(),
        reaper_cpu_ms: out.reaper_cpu_ns.map(|n| n / 1_000_000),
        queued_peak: out.queued_peak,
        slot_waits: out.slot_waits,
        slot_wait_p99_ms: ms(out.slot_wait.value_at_quantile(0.99)),
        latch_waits: out.latch_waits,
        file: file.path.display().to_string(),
        file_bytes: u64::from(file.pages) * page::PAGE as u64,
        page_bytes: page::PAGE as u64,
        o_direct: true,
        in_memory: file.in_memory,
        fsync: false,
        verified_pages,
        steal_ticks,
    })
}

impl tcpwise_outcome::Classify for AioError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        use tcpwise_outcome::Class;
        Some(match self {
            AioError::Config(_)
            | AioError::NoDirect(_)
            | AioError::Size { .. }
            | AioError::NotOurs(..) => Class::Usage,
            AioError::Uring(_) => Class::Privileges,
            _ => Class::Failed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_and_keys_parse_and_print_back() {
        for s in [
            "shared",
            "shared:256",
            "segments",
            "segments:8",
            "sync",
            "innodb",
            "innodb:without=spill",
            "innodb:without=slots32+wake-all",
        ] {
            assert_eq!(s.parse::<Model>().unwrap().to_string(), s);
        }
        for bad in [
            "",
            "iocp",
            "segments:0",
            "segments:x",
            "sync:2",
            "tokio",
            "shared:0",
            "shared:5000",
            "innodb:spill",
            "innodb:without=",
            "innodb:without=fifo",
        ] {
            assert!(bad.parse::<Model>().is_err(), "{bad}");
        }
        assert_eq!("zipf:0.99".parse::<Keys>().unwrap(), Keys::Zipf(0.99));
        assert_eq!("uniform".parse::<Keys>().unwrap(), Keys::Uniform);
        for bad in ["zipf", "zipf:0", "zipf:-1", "zipf:x", "normal"] {
            assert!(bad.parse::<Keys>().is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_and_options_are_checked() {
        assert_eq!(pages_in(1 << 30).unwrap(), 65536);
        assert!(pages_in(1000).is_err());
        assert!(pages_in(16384).is_err());
        let o = Options {
            model: Model::Shared { depth: 1 },
            clients: 0,
            threads: 4,
            duration: Duration::from_secs(1),
            keys: Keys::Uniform,
            seed: 1,
        };
        assert!(o.validate().is_err());
        assert!(
            Options {
                clients: 4,
                ..o.clone()
            }
            .validate()
            .is_ok()
        );
        assert!(
            Options {
                clients: 4,
                threads: 0,
                ..o
            }
            .validate()
            .is_err()
        );
    }
}
