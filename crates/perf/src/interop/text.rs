//! A test on iperf3's protocol printed as iperf3 3.12 prints it, line for
//! line (`Connecting to host ...`, one line per stream and interval,
//! `[SUM]` lines with several streams, the sender/receiver summary and
//! `iperf Done.`), with iperf3's own formats and units (`unit_snprintf`:
//! bytes in powers of 1024, bits in powers of 1000, four places), so a
//! user reading or parsing iperf3's text reads ours. Sans-IO: lines in,
//! text out; [`run`] is the glue. tcpwise's own layout, with the
//! diagnosis, is `perf client` against a tcpwise server or `--json=tcpwise`.

use super::client::{run_client, unsupported};
use crate::PerfError;
use crate::client::ClientOptions;
use crate::diagnose::{Interval, PerfReport};
use crate::parallel::{Line, ParallelReport};

const SEPARATOR: &str = "- - - - - - - - - - - - - - - - - - - - - - - - -\n";

/// iperf3's `unit_snprintf`: `bytes` in KBytes/MBytes/GBytes (powers of
/// 1024) or, as bits, Kbits/Mbits/Gbits (powers of 1000), in four places.
pub fn unit(value: f64, bytes: bool) -> String {
    let (mut v, base) = if bytes {
        (value, 1024.0)
    } else {
        (value * 8.0, 1000.0)
    };
    let mut k = 0;
    while v >= base && k < 4 {
        v /= base;
        k += 1;
    }
    let prefix = ["", "K", "M", "G", "T"][k];
    let word = if bytes { "Byte" } else { "bit" };
    let places = if v < 9.995 {
        2
    } else if v < 99.95 {
        1
    } else {
        0
    };
    format!("{v:4.places$} {prefix}{word}")
}

/// One stream of the test, as the connection lines announced it.
#[derive(Debug, Clone)]
struct Member {
    label: String,
    fd: i32,
    sends: bool,
}

/// The printer: lines of the run in, iperf3's text out.
#[derive(Debug, Default)]
pub struct Text {
    bidir: bool,
    /// Streams per direction (`-P`).
    n: usize,
    members: Vec<Member>,
    lines: Vec<Vec<Interval>>,
    shown: usize,
    /// iperf3's first lines, printed once the control connection is up.
    opening: String,
}

impl Text {
    /// For a test of `opts` with `n` streams a direction, both ways with
    /// `bidir`.
    pub fn new(opts: &ClientOptions, n: usize, bidir: bool) -> Text {
        // iperf3's first lines: where, and which way with `-R`.
        let mut opening = format!("Connecting to host {}, port {}\n", opts.host, opts.port);
        if opts.reverse && !bidir {
            opening += &format!("Reverse mode, remote host {} is sending\n", opts.host);
        }
        Text {
            bidir,
            n,
            opening,
            ..Text::default()
        }
    }

    fn role(&self, sends: bool) -> &'static str {
        match (self.bidir, sends) {
            (false, _) => "",
            (true, true) => "[TX-C]",
            (true, false) => "[RX-C]",
        }
    }

    /// The text one line of the run adds (often nothing until every
    /// stream has reported an interval).
    pub fn push(&mut self, line: Line) -> String {
        match line {
            Line::Connected {
                label,
                fd,
                ends: (local, remote),
                sends,
            } => {
                self.members.push(Member {
                    label: label.to_string(),
                    fd,
                    sends,
                });
                self.lines.push(Vec::new());
                format!(
                    "{}[{fd:3}] local {} port {} connected to {} port {}\n",
                    std::mem::take(&mut self.opening),
                    local.ip(),
                    local.port(),
                    remote.ip(),
                    remote.port()
                )
            }
            Line::Stream(label, i) => {
                if let Some(k) = self.members.iter().position(|m| m.label == label) {
                    self.lines[k].push(i.clone());
                }
                let mut out = String::new();
                while !self.lines.is_empty() && self.lines.iter().all(|l| l.len() > self.shown) {
                    out += &self.group(self.shown);
                    self.shown += 1;
                }
                out
            }
            Line::Sum(_) => String::new(),
        }
    }

    /// The column header: with `Retr` and `Cwnd` where the client sends.
    fn header(&self) -> String {
        let role = if self.bidir { "[Role]" } else { "" };
        let sender = if self.members.iter().any(|m| m.sends) {
            "         Retr  Cwnd"
        } else {
            ""
        };
        format!("[ ID]{role} Interval           Transfer     Bitrate{sender}\n")
    }

    /// The directions in iperf3's order: the client's sending streams
    /// first.
    fn directions(&self) -> Vec<Vec<usize>> {
        [true, false]
            .iter()
            .map(|&d| {
                (0..self.members.len())
                    .filter(|&k| self.members[k].sends == d)
                    .collect::<Vec<_>>()
            })
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// Interval `g` of every stream; from the second on, with several
    /// streams, after a separator (iperf3 prints one before each).
    fn group(&self, g: usize) -> String {
        let mut out = match g {
            0 => self.header(),
            _ if self.n > 1 => SEPARATOR.to_string(),
            _ => String::new(),
        };
        for dir in self.directions() {
            let sends = self.members[dir[0]].sends;
            let role = self.role(sends);
            for &k in &dir {
                let (m, i) = (&self.members[k], &self.lines[k][g]);
                out += &format!(
                    "[{:3}]{role} {:6.2}-{:<6.2} sec  {}s  {}s/sec",
                    m.fd,
                    i.start_s,
                    i.end_s,
                    unit(i.bytes as f64, true),
                    unit(i.mbit * 1e6 / 8.0, false)
                );
                out += &if sends {
                    let cwnd = unit(i.cwnd_bytes.unwrap_or(0) as f64, true);
                    format!("  {:3}   {cwnd}s       \n", i.retransmits.unwrap_or(0))
                } else {
                    "                  \n".to_string()
                };
            }
            if self.n > 1 {
                let rows: Vec<&Interval> = dir.iter().map(|&k| &self.lines[k][g]).collect();
                let start = rows.iter().map(|l| l.start_s).fold(f64::INFINITY, f64::min);
                let end = rows.iter().map(|l| l.end_s).fold(0.0, f64::max);
                let bytes: u64 = rows.iter().map(|l| l.bytes).sum();
                let rate: f64 = rows.iter().map(|l| l.mbit * 1e6 / 8.0).sum();
                out += &format!(
                    "[SUM]{role} {start:6.2}-{end:<6.2} sec  {}s  {}s/sec",
                    unit(bytes as f64, true),
                    unit(rate, false)
                );
                out += &if sends {
                    let retr: u64 = rows.iter().filter_map(|l| l.retransmits).sum();
                    format!("  {retr:3}             \n")
                } else {
                    "                  \n".to_string()
                };
            }
        }
        out
    }

    /// The summary: each stream's sender and receiver lines (with `[SUM]`
    /// lines for several streams), per direction, and `iperf Done.`.
    pub fn finish(&self, r: &ParallelReport) -> String {
        let role_h = if self.bidir { "[Role]" } else { "" };
        let mut out = format!(
            "{SEPARATOR}[ ID]{role_h} Interval           Transfer     Bitrate         Retr\n"
        );
        let books = |p: &PerfReport| {
            let s = &p.summary;
            let sent = match (s.sent_bytes, s.sent_seconds) {
                (Some(b), Some(t)) => (b, t.max(1e-9)),
                _ => (s.bytes, s.seconds.max(1e-9)),
            };
            (
                sent,
                (s.bytes, s.seconds.max(1e-9)),
                s.retransmits.unwrap_or(0),
            )
        };
        for dir in self.directions() {
            let role = self.role(self.members[dir[0]].sends);
            let mut all = ((0u64, 0f64), (0u64, 0f64), 0u64);
            for &k in &dir {
                let Some((_, p)) = r.streams.get(k) else {
                    continue;
                };
                let (sent, got, retr) = books(p);
                out += &summary_lines(
                    &format!("[{:3}]", self.members[k].fd),
                    role,
                    (sent, got, retr),
                );
                all.0 = (all.0.0 + sent.0, all.0.1.max(sent.1));
                all.1 = (all.1.0 + got.0, all.1.1.max(got.1));
                all.2 += retr;
            }
            if self.n > 1 {
                out += &summary_lines("[SUM]", role, all);
            }
        }
        out + "\niperf Done.\n"
    }
}

/// A stream's (or a direction's) two summary lines: what the sender
/// wrote over its seconds with its retransmissions, what arrived.
fn summary_lines(id: &str, role: &str, (sent, got, retr): ((u64, f64), (u64, f64), u64)) -> String {
    let line = |(b, t): (u64, f64)| {
        format!(
            "{id}{role} {:6.2}-{t:<6.2} sec  {}s  {}s/sec",
            0.0,
            unit(b as f64, true),
            unit(b as f64 / t, false)
        )
    };
    format!(
        "{}  {retr:3}             sender\n{}                  receiver\n",
        line(sent),
        line(got)
    )
}

/// Runs a test against an iperf3 server and prints it as iperf3 would
/// (`out` gets the text as it comes); what `--iperf3` does not take is
/// refused before a line is printed.
pub async fn run(
    opts: &ClientOptions,
    n: usize,
    bidir: bool,
    mut out: impl FnMut(&str),
) -> Result<ParallelReport, PerfError> {
    opts.validate()?;
    if let Some(why) = unsupported(opts, false) {
        return Err(PerfError::Config(why));
    }
    let mut text = Text::new(opts, n, bidir);
    let report = run_client(opts, n, bidir, |l| out(&text.push(l))).await?;
    out(&text.finish(&report));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_as_iperf3_prints_them() {
        // From iperf3 3.12's own lines on this machine.
        assert_eq!(unit(815.0 * 1024.0 * 1024.0 + 1000.0, true), " 815 MByte");
        assert_eq!(unit(1.77 * 1024.0 * 1024.0 * 1024.0, true), "1.77 GByte");
        assert_eq!(unit(767.0 * 1024.0, true), " 767 KByte");
        assert_eq!(unit(6.83e9 / 8.0, false), "6.83 Gbit");
        assert_eq!(unit(101e6 / 8.0, false), " 101 Mbit");
        assert_eq!(unit(99.6e6 / 8.0, false), "99.6 Mbit");
        assert_eq!(unit(1022.0 * 1024.0 * 1024.0, true), "1022 MByte");
    }

    fn line(t: f64, bytes: u64, retr: u64) -> Interval {
        Interval {
            start_s: t,
            end_s: t + 1.0,
            bytes,
            mbit: bytes as f64 * 8.0 / 1e6,
            retransmits: Some(retr),
            cwnd_bytes: Some(767 * 1024),
            ..Interval::default()
        }
    }

    #[test]
    fn two_streams_print_groups_with_sums_and_separators() {
        let opts = ClientOptions {
            host: "127.0.0.1".into(),
            port: 5211,
            ..ClientOptions::default()
        };
        let mut t = Text::new(&opts, 2, false);
        let a: std::net::SocketAddr = "127.0.0.1:45994".parse().unwrap();
        let b: std::net::SocketAddr = "127.0.0.1:5211".parse().unwrap();
        let mut out = String::new();
        for (label, fd) in [("1", 5), ("2", 7)] {
            out += &t.push(Line::Connected {
                label,
                fd,
                ends: (a, b),
                sends: true,
            });
        }
        let l = line(0.0, 815 * 1024 * 1024, 14);
        assert_eq!(t.push(Line::Stream("1", &l)), "");
        out += &t.push(Line::Stream("2", &l));
        let want = "Connecting to host 127.0.0.1, port 5211\n\
[  5] local 127.0.0.1 port 45994 connected to 127.0.0.1 port 5211\n\
[  7] local 127.0.0.1 port 45994 connected to 127.0.0.1 port 5211\n\
[ ID] Interval           Transfer     Bitrate         Retr  Cwnd\n\
[  5]   0.00-1.00   sec   815 MBytes  6.84 Gbits/sec   14    767 KBytes       \n\
[  7]   0.00-1.00   sec   815 MBytes  6.84 Gbits/sec   14    767 KBytes       \n\
[SUM]   0.00-1.00   sec  1.59 GBytes  13.7 Gbits/sec   28             \n";
        assert_eq!(out, want);
        out = t.push(Line::Stream("1", &line(1.0, 1024, 0)));
        out += &t.push(Line::Stream("2", &line(1.0, 1024, 0)));
        assert!(out.starts_with(SEPARATOR), "{out}");
    }
}
