//! A record of what the link did: Mahimahi's link log (`--log DIR`) and a
//! packet capture (`--pcap DIR`), one file of each per direction.
//!
//! Why Mahimahi's format: its `mm-throughput-graph` and `mm-delay-graph`
//! (and the scripts people built on them) read it as they are. Lines, with
//! absolute millisecond timestamps on the forwarder's monotonic clock:
//!
//! ```text
//! # mahimahi mm-link (down) [tcpwise emu: ...] > DIR/down.log
//! # base timestamp: T           (the link's start)
//! t + bytes                     a packet arrived at the link
//! t # bytes                     the link could have sent this much in this ms
//! t - bytes delay               a packet left the serialiser after `delay` ms
//! # t d bytes CAUSE             a drop (queue, aqm, loss, outage, onoff, police)
//! # t m bytes                   a CE mark
//! ```
//!
//! Drops and marks are comment lines, which Mahimahi's scripts skip (they
//! die on an event type they do not know). Departures are written when the
//! link hands the packet out, so their bytes add up to the statistics'
//! `delivered_bytes`; `delay` is arrival to the end of serialisation, as in
//! `mm-link` (the propagation delay comes after, as in `mm-delay`).
//!
//! The capture (`LINKTYPE_RAW`, one IP packet per record, stamped with the
//! wall-clock time it was written to the receiving namespace; a duplicated
//! packet appears twice, as on a wire) is what `tcpdump -r` and Wireshark
//! read.
//!
//! The forwarder runs at real-time priority and must not block on a disk:
//! it hands compact events to a writer thread through a channel, one batch
//! per loop turn, and the thread formats and writes them.

use crate::{EmuError, Kind};
use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tcpwise_link::{DropCause, Nanos};

/// The flags, shared by `emu shell`, `emu pair` and `emu selftest`.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Record")]
pub struct RecordArgs {
    /// Write each direction's link log in Mahimahi's format to DIR/up.log
    /// and DIR/down.log (arrivals, capacity, departures with their time in
    /// the link; drops and CE marks as comment lines): Mahimahi's
    /// mm-throughput-graph and mm-delay-graph read it, `tcpwise emu plot
    /// DIR` draws it.
    #[arg(long, value_name = "DIR")]
    pub log: Option<PathBuf>,
    /// Write the packets each direction delivered to DIR/up.pcap and
    /// DIR/down.pcap (raw IP, stamped when written; tcpdump -r, Wireshark).
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
}

/// `--config` and `--print-config` (read before the other flags are
/// parsed: see [`crate::config`]).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Testbed file")]
pub struct ConfigArgs {
    /// Read link and record flags from a TOML file: keys are the flags
    /// without dashes (rtt = "40ms", queue = "codel:limit=400KB"; [up] and
    /// [down] tables for the per-direction ones); flags given on the command
    /// line override it; an unknown key is an error.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the effective link and record flags as such a file and exit
    /// without setting anything up.
    #[arg(long)]
    pub print_config: bool,
}

impl RecordArgs {
    /// As options, with the command line that produced them.
    pub fn options(&self) -> RecordOptions {
        let argv: Vec<String> = std::env::args().collect();
        RecordOptions {
            log_dir: self.log.clone(),
            pcap_dir: self.pcap.clone(),
            command: argv.join(" "),
        }
    }
}

/// Where to record.
#[derive(Debug, Clone, Default)]
pub struct RecordOptions {
    /// `--log DIR`: `up.log` and `down.log` in Mahimahi's format.
    pub log_dir: Option<PathBuf>,
    /// `--pcap DIR`: `up.pcap` and `down.pcap`.
    pub pcap_dir: Option<PathBuf>,
    /// What the first comment line says produced the log.
    pub command: String,
}

impl RecordOptions {
    /// The same options for one of many testbeds (the lab's): each
    /// directory gets a numbered subdirectory `NNN-TAG`.
    pub fn for_testbed(&self, tag: &str) -> RecordOptions {
        static SERIAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        if !self.any() {
            return self.clone();
        }
        let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let sub = |d: &Option<PathBuf>| d.as_ref().map(|d| d.join(format!("{n:03}-{tag}")));
        RecordOptions {
            log_dir: sub(&self.log_dir),
            pcap_dir: sub(&self.pcap_dir),
            command: self.command.clone(),
        }
    }

    /// Whether anything is recorded.
    pub fn any(&self) -> bool {
        self.log_dir.is_some() || self.pcap_dir.is_some()
    }

    /// Creates the directories and the four files now, before anything is
    /// set up, so an unwritable place is one clear error and nothing else.
    pub fn open(&self) -> Result<[Files; 2], EmuError> {
        let open = |dir: &Option<PathBuf>, name: &str| -> Result<Option<File>, EmuError> {
            let Some(d) = dir else { return Ok(None) };
            std::fs::create_dir_all(d).map_err(|e| {
                EmuError::caused(Kind::Config, format!("cannot create {}", d.display()), e)
            })?;
            let p = d.join(name);
            File::create(&p).map(Some).map_err(|e| {
                EmuError::caused(Kind::Config, format!("cannot write {}", p.display()), e)
            })
        };
        let files = |dir: &str| -> Result<Files, EmuError> {
            Ok(Files {
                direction: dir.to_string(),
                log: open(&self.log_dir, &format!("{dir}.log"))?,
                log_path: self.log_dir.as_ref().map(|d| d.join(format!("{dir}.log"))),
                pcap: open(&self.pcap_dir, &format!("{dir}.pcap"))?,
                command: self.command.clone(),
            })
        };
        Ok([files("up")?, files("down")?])
    }

    /// Checks that the directories can be written, as [`open`](Self::open)
    /// does, and leaves no file behind (a caller that records several
    /// testbeds, each into its own subdirectory, checks first).
    pub fn probe(&self) -> Result<(), EmuError> {
        if !self.any() {
            return Ok(());
        }
        drop(self.open()?);
        for d in [&self.log_dir, &self.pcap_dir].into_iter().flatten() {
            for f in ["up.log", "down.log", "up.pcap", "down.pcap"] {
                let _ = std::fs::remove_file(d.join(f));
            }
        }
        Ok(())
    }
}

/// One direction's open files.
#[derive(Debug)]
pub struct Files {
    direction: String,
    log: Option<File>,
    log_path: Option<PathBuf>,
    pcap: Option<File>,
    command: String,
}

/// What the forwarder hands the writer.
enum Event {
    Arrive {
        t: Nanos,
        size: u32,
    },
    Drop {
        t: Nanos,
        size: u32,
        cause: DropCause,
    },
    Depart {
        t: Nanos,
        size: u32,
        arrival: Nanos,
    },
    Mark {
        t: Nanos,
        size: u32,
    },
    Capacity {
        ms: u64,
        bytes: u64,
    },
    Packet {
        t: Nanos,
        data: Vec<u8>,
    },
}

/// The forwarder's end: collects events and sends them in batches.
pub struct Recorder {
    log: bool,
    pcap: bool,
    batch: Vec<Event>,
    capacity: Vec<(u64, u64)>,
    tx: Option<mpsc::Sender<Vec<Event>>>,
    writer: Option<JoinHandle<Result<(), String>>>,
}

impl Recorder {
    /// Starts the writer thread for `files`, on a link that started at
    /// `start` (monotonic ns).
    pub fn start(files: Files, start: Nanos) -> std::io::Result<Recorder> {
        let (tx, rx) = mpsc::channel::<Vec<Event>>();
        let (log, pcap) = (files.log.is_some(), files.pcap.is_some());
        let writer = std::thread::Builder::new()
            .name(format!("tw-rec-{}", files.direction))
            .spawn(move || write_all(files, start, rx))?;
        Ok(Recorder {
            log,
            pcap,
            batch: Vec::with_capacity(1024),
            capacity: Vec::new(),
            tx: Some(tx),
            writer: Some(writer),
        })
    }

    /// Whether packets are captured (`--pcap`): their checksums are then
    /// completed before they are written, so the capture shows them valid.
    pub fn wants_packets(&self) -> bool {
        self.pcap
    }

    /// A packet of `size` bytes arrived at `t` (admitted or not).
    pub fn arrive(&mut self, t: Nanos, size: u32) {
        if self.log {
            self.batch.push(Event::Arrive { t, size });
        }
    }

    /// The link dropped a packet.
    pub fn drop(&mut self, t: Nanos, size: u32, cause: DropCause) {
        if self.log {
            self.batch.push(Event::Drop { t, size, cause });
        }
    }

    /// The link handed out a packet that arrived at `arrival` and left the
    /// serialiser at `departure`, marked CE or not.
    pub fn depart(&mut self, arrival: Nanos, departure: Nanos, size: u32, ce: bool) {
        if self.log {
            self.batch.push(Event::Depart {
                t: departure,
                size,
                arrival,
            });
            if ce {
                self.batch.push(Event::Mark { t: departure, size });
            }
        }
    }

    /// A packet was written to the receiving namespace at `t`.
    pub fn packet(&mut self, t: Nanos, data: &[u8]) {
        if self.pcap {
            self.batch.push(Event::Packet {
                t,
                data: data.to_vec(),
            });
        }
    }

    /// Where the link's capacity is collected (`Link::capacity_until`).
    pub fn capacity_buf(&mut self) -> Option<&mut Vec<(u64, u64)>> {
        self.log.then_some(&mut self.capacity)
    }

    /// Sends what was collected to the writer.
    pub fn flush(&mut self) {
        for (ms, bytes) in self.capacity.drain(..) {
            self.batch.push(Event::Capacity { ms, bytes });
        }
        if self.batch.is_empty() {
            return;
        }
        let b = std::mem::replace(&mut self.batch, Vec::with_capacity(1024));
        if let Some(tx) = &self.tx {
            // The writer only stops early on an error, reported at finish.
            let _ = tx.send(b);
        }
    }

    /// Flushes, closes the channel and waits for the files to be complete;
    /// the error of a failed write, if any.
    pub fn finish(&mut self) -> Option<String> {
        self.flush();
        self.tx = None;
        match self.writer.take()?.join() {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(_) => Some("the record writer panicked".into()),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

fn cause_name(c: DropCause) -> &'static str {
    match c {
        DropCause::Queue => "queue",
        DropCause::Loss => "loss",
        DropCause::Outage => "outage",
        DropCause::Aqm => "aqm",
        DropCause::OnOff => "onoff",
        DropCause::Police => "police",
    }
}

fn write_all(files: Files, start: Nanos, rx: mpsc::Receiver<Vec<Event>>) -> Result<(), String> {
    let ms = |t: Nanos| t / 1_000_000;
    let base = ms(start);
    // Wall-clock time of the monotonic `start`, for the capture's stamps.
    let wall0 = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_sub(Duration::from_nanos(
            crate::sys::mono_ns().saturating_sub(start),
        ));
    let err = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    let mut log = files.log.map(|f| BufWriter::with_capacity(1 << 16, f));
    if let Some(w) = &mut log {
        let path = files
            .log_path
            .as_deref()
            .map_or_else(String::new, |p: &Path| p.display().to_string());
        writeln!(
            w,
            "# mahimahi mm-link ({}) [{}] > {path}\n# base timestamp: {base}",
            files.direction, files.command
        )
        .map_err(|e| err("cannot write the log", &e))?;
    }
    let mut pcap = match files.pcap {
        None => None,
        Some(f) => {
            let header = PcapHeader {
                datalink: DataLink::RAW,
                snaplen: 65_535,
                endianness: pcap_file::Endianness::native(),
                ..PcapHeader::default()
            };
            Some(
                PcapWriter::with_header(BufWriter::with_capacity(1 << 16, f), header)
                    .map_err(|e| err("cannot write the capture", &e))?,
            )
        }
    };
    for batch in rx {
        for ev in batch {
            match ev {
                Event::Packet { t, data } => {
                    if let Some(p) = &mut pcap {
                        let ts = wall0 + Duration::from_nanos(t.saturating_sub(start));
                        p.write_packet(&PcapPacket::new(ts, data.len() as u32, &data))
                            .map_err(|e| err("cannot write the capture", &e))?;
                    }
                }
                ev => {
                    let Some(w) = &mut log else { continue };
                    let r = match ev {
                        Event::Arrive { t, size } => writeln!(w, "{} + {size}", ms(t)),
                        Event::Capacity { ms: m, bytes } => writeln!(w, "{} # {bytes}", base + m),
                        // As mm-link: the difference of the two ms stamps,
                        // so `t - delay` is the arrival's line.
                        Event::Depart { t, size, arrival } => {
                            writeln!(
                                w,
                                "{} - {size} {}",
                                ms(t),
                                ms(t).saturating_sub(ms(arrival))
                            )
                        }
                        Event::Drop { t, size, cause } => {
                            writeln!(w, "# {} d {size} {}", ms(t), cause_name(cause))
                        }
                        Event::Mark { t, size } => writeln!(w, "# {} m {size}", ms(t)),
                        Event::Packet { .. } => Ok(()),
                    };
                    r.map_err(|e| err("cannot write the log", &e))?;
                }
            }
        }
    }
    if let Some(w) = &mut log {
        w.flush().map_err(|e| err("cannot write the log", &e))?;
    }
    if let Some(p) = pcap {
        p.into_writer()
            .flush()
            .map_err(|e| err("cannot write the capture", &e))?;
    }
    Ok(())
}
