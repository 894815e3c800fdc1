//! `-P N` and `--bidir`: several tests at once, joined.
//!
//! Each stream is a whole test of its own (its control connection, its
//! data connection, its samples and diagnosis), all started together;
//! the server already runs any number at once. What iperf3 calls one
//! test with N streams is here N tests whose data flows share the path
//! the same way: the control connections carry a few hundred bytes a
//! second. The join is sans-IO ([`Joined`]): interval lines of every
//! stream in, `[SUM]` lines out once every stream of a direction has
//! reported that interval, and a summary with Jain's fairness index
//! (1 when every stream got the same goodput, 1/N when one got it all).

use crate::PerfError;
use crate::client::{ClientOptions, run_client};
use crate::diagnose::{Interval, PerfReport};
use serde::Serialize;

/// One stream of a parallel test.
#[derive(Debug, Clone)]
pub struct Stream {
    /// How it is labelled: `1`, `2`, ... or `TX-C`/`RX-C` with `--bidir`.
    pub label: String,
    /// Its options (`reverse` gives its direction).
    pub opts: ClientOptions,
}

/// `-n` (or `-k`'s bytes) shared among `n` streams as iperf3 means it,
/// the test's total and not each stream's: equal parts, the first
/// streams taking the remainder's bytes (`None` each without a total).
pub fn shares(total: Option<u64>, n: usize) -> Vec<Option<u64>> {
    let n64 = n.max(1) as u64;
    (0..n as u64)
        .map(|i| total.map(|t| t / n64 + u64::from(i < t % n64)))
        .collect()
}

/// The streams for `-P n` and `--bidir`: n in the asked direction, and
/// with `bidir` n more the other way; a `-n` total shared among each
/// direction's n ([`shares`]).
pub fn streams(opts: &ClientOptions, n: usize, bidir: bool) -> Vec<Stream> {
    let mut v = Vec::new();
    let bytes = shares(opts.bytes, n);
    for dir in [opts.reverse, !opts.reverse]
        .into_iter()
        .take(if bidir { 2 } else { 1 })
    {
        for (i, &bytes) in bytes.iter().enumerate() {
            let label = match (bidir, n) {
                (true, 1) => if dir { "RX-C" } else { "TX-C" }.to_string(),
                (true, _) => format!("{}{}", if dir { "RX-C " } else { "TX-C " }, i + 1),
                (false, _) => format!("{}", i + 1),
            };
            v.push(Stream {
                label,
                opts: ClientOptions {
                    reverse: dir,
                    bytes,
                    // Only one data connection can have the asked port.
                    cport: opts.cport.filter(|_| v.is_empty() && i == 0),
                    ..opts.clone()
                },
            });
        }
    }
    v
}

/// One `[SUM]` interval of a direction.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SumInterval {
    /// `send` (client to server) or `receive` (`-R`).
    pub direction: &'static str,
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// Bytes of every stream.
    pub bytes: u64,
    /// Their goodput, Mbit/s.
    pub mbit: f64,
    /// Retransmissions of every stream.
    pub retransmits: Option<u64>,
}

/// A direction's totals.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sum {
    /// `send` or `receive`.
    pub direction: &'static str,
    /// Streams in this direction.
    pub streams: usize,
    /// Summed goodput, Mbit/s.
    pub goodput_mbit: f64,
    /// Summed bytes.
    pub bytes: u64,
    /// Summed retransmissions.
    pub retransmits: Option<u64>,
    /// Jain's fairness index of the streams' goodputs: (Σx)² / (n·Σx²).
    pub jain_index: f64,
    /// Lowest and highest stream goodput, Mbit/s.
    pub min_mbit: f64,
    /// Highest.
    pub max_mbit: f64,
}

/// Everything a parallel test reports (`-J`).
#[derive(Debug, Clone, Serialize)]
pub struct ParallelReport {
    /// Each stream's own report, by label.
    pub streams: Vec<(String, PerfReport)>,
    /// `[SUM]` intervals, per direction.
    pub sum_intervals: Vec<SumInterval>,
    /// Totals per direction.
    pub sums: Vec<Sum>,
    /// What a test on iperf3's protocol adds, for iperf3's output.
    #[serde(skip)]
    pub iperf3: Option<Iperf3Extras>,
}

/// A test on iperf3's protocol (`--iperf3`): what iperf3's own text and
/// `-J` show beside the streams' figures.
#[derive(Debug, Clone, Default)]
pub struct Iperf3Extras {
    /// The test's cookie (iperf3's `start.cookie`).
    pub cookie: String,
    /// The server's CPU over the test, percent: total, user, system.
    pub remote_cpu: [f64; 3],
    /// Each stream's socket descriptor (iperf3 names streams by theirs).
    pub fds: Vec<i32>,
    /// The server's congestion control, as its results name it.
    pub remote_congestion: Option<String>,
}

/// Jain's fairness index of `x`.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (x.len() as f64 * s2)
    }
}

fn direction(reverse: bool) -> &'static str {
    if reverse { "receive" } else { "send" }
}

/// The sans-IO join: lines per stream in, sums out.
#[derive(Debug, Default)]
pub struct Joined {
    /// Direction of each stream (`reverse`).
    reverse: Vec<bool>,
    lines: Vec<Vec<Interval>>,
    sums: Vec<SumInterval>,
}

impl Joined {
    /// For streams whose directions are `reverse[i]`.
    pub fn new(reverse: Vec<bool>) -> Joined {
        let lines = vec![Vec::new(); reverse.len()];
        Joined {
            reverse,
            lines,
            sums: Vec::new(),
        }
    }

    /// Adds stream `i`'s next interval; returns the `[SUM]` lines it completes.
    pub fn push(&mut self, i: usize, line: Interval) -> Vec<SumInterval> {
        self.lines[i].push(line);
        let mut out = Vec::new();
        for dir in [false, true] {
            let members: Vec<usize> = (0..self.reverse.len())
                .filter(|&k| self.reverse[k] == dir)
                .collect();
            if members.is_empty() {
                continue;
            }
            let done = self
                .sums
                .iter()
                .filter(|s| s.direction == direction(dir))
                .count();
            if members.iter().any(|&k| self.lines[k].len() <= done) {
                continue;
            }
            let rows: Vec<&Interval> = members.iter().map(|&k| &self.lines[k][done]).collect();
            let start = rows.iter().map(|l| l.start_s).fold(f64::INFINITY, f64::min);
            let end = rows.iter().map(|l| l.end_s).fold(0.0, f64::max);
            let bytes: u64 = rows.iter().map(|l| l.bytes).sum();
            let s = SumInterval {
                direction: direction(dir),
                start_s: start,
                end_s: end,
                bytes,
                mbit: rows.iter().map(|l| l.mbit).sum(),
                retransmits: rows.iter().map(|l| l.retransmits).sum(),
            };
            self.sums.push(s.clone());
            out.push(s);
        }
        out
    }

    /// The `[SUM]` intervals so far.
    pub fn sum_intervals(&self) -> &[SumInterval] {
        &self.sums
    }
}

/// Totals per direction from the streams' reports.
pub fn sums(streams: &[(bool, &PerfReport)]) -> Vec<Sum> {
    let mut v = Vec::new();
    for dir in [false, true] {
        let rs: Vec<&PerfReport> = streams
            .iter()
            .filter(|(r, _)| *r == dir)
            .map(|(_, p)| *p)
            .collect();
        if rs.is_empty() {
            continue;
        }
        let g: Vec<f64> = rs.iter().map(|r| r.summary.goodput_mbit).collect();
        v.push(Sum {
            direction: direction(dir),
            streams: rs.len(),
            goodput_mbit: g.iter().sum(),
            bytes: rs.iter().map(|r| r.summary.bytes).sum(),
            retransmits: rs.iter().map(|r| r.summary.retransmits).sum(),
            jain_index: jain(&g),
            min_mbit: g.iter().copied().fold(f64::INFINITY, f64::min),
            max_mbit: g.iter().copied().fold(0.0, f64::max),
        });
    }
    v
}

/// What [`run_parallel`] shows as it goes.
pub enum Line<'a> {
    /// A stream connected (iperf3's protocol says so before the test).
    Connected {
        /// Its label, as its intervals carry it.
        label: &'a str,
        /// Its socket's descriptor.
        fd: i32,
        /// Local and remote address.
        ends: (std::net::SocketAddr, std::net::SocketAddr),
        /// Whether the client sends on it.
        sends: bool,
    },
    /// A stream's interval.
    Stream(&'a str, &'a Interval),
    /// A direction's sum.
    Sum(&'a SumInterval),
}

/// Runs every stream at once; `on_line` sees each stream's intervals and
/// the sums as they complete.
pub async fn run_parallel(
    streams: Vec<Stream>,
    mut on_line: impl FnMut(Line),
) -> Result<ParallelReport, PerfError> {
    for s in &streams {
        s.opts.validate()?;
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Interval)>();
    let mut set = tokio::task::JoinSet::new();
    for (i, s) in streams.iter().enumerate() {
        let (opts, tx) = (s.opts.clone(), tx.clone());
        set.spawn(async move {
            let r = run_client(&opts, |line| {
                let _ = tx.send((i, line.clone()));
            })
            .await;
            (i, r)
        });
    }
    drop(tx);
    let mut joined = Joined::new(streams.iter().map(|s| s.opts.reverse).collect());
    let mut reports: Vec<Option<PerfReport>> = vec![None; streams.len()];
    let mut first_error = None;
    loop {
        tokio::select! {
            line = rx.recv() => match line {
                Some((i, l)) => {
                    on_line(Line::Stream(&streams[i].label, &l));
                    for s in joined.push(i, l) {
                        on_line(Line::Sum(&s));
                    }
                }
                None => {
                    if set.is_empty() {
                        break;
                    }
                }
            },
            done = set.join_next(), if !set.is_empty() => match done {
                Some(Ok((i, Ok(r)))) => reports[i] = Some(r),
                // An iperf3 server answers one stream's connection as a
                // test and may close the others unanswered: that it is
                // iperf3's is what the user needs to hear.
                Some(Ok((_, Err(e @ PerfError::Iperf3Server(_))))) => first_error = Some(e),
                Some(Ok((_, Err(e)))) => {
                    first_error.get_or_insert(e);
                }
                Some(Err(e)) => {
                    first_error.get_or_insert(PerfError::Io(std::io::Error::other(e)));
                }
                None => {}
            },
        }
    }
    // The first failure as it is, so its exit code is the stream's.
    if let Some(e) = first_error {
        return Err(e);
    }
    let streams: Vec<(String, bool, PerfReport)> = streams
        .into_iter()
        .zip(reports)
        .map(|(s, r)| (s.label, s.opts.reverse, r.expect("every stream reported")))
        .collect();
    let sums = sums(
        &streams
            .iter()
            .map(|(_, rev, r)| (*rev, r))
            .collect::<Vec<_>>(),
    );
    Ok(ParallelReport {
        sum_intervals: joined.sum_intervals().to_vec(),
        streams: streams.into_iter().map(|(l, _, r)| (l, r)).collect(),
        sums,
        iperf3: None,
    })
}

impl std::fmt::Display for SumInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{:5.1}-{:5.1} s] {:>10} {:>8.2} Mbit/s  retr {:>4}",
            self.start_s,
            self.end_s,
            crate::diagnose::human_bytes(self.bytes),
            self.mbit,
            self.retransmits.map_or("-".into(), |r| r.to_string())
        )
    }
}

impl std::fmt::Display for Sum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} streams ({}): {:.2} Mbit/s goodput in all, {} bytes, retransmits {}; Jain's fairness index {:.3} (streams {:.2}-{:.2} Mbit/s)",
            self.streams,
            self.direction,
            self.goodput_mbit,
            self.bytes,
            self.retransmits.map_or("-".into(), |r| r.to_string()),
            self.jain_index,
            self.min_mbit,
            self.max_mbit
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(start: f64, mbit: f64, retr: u64) -> Interval {
        Interval {
            start_s: start,
            end_s: start + 1.0,
            bytes: (mbit * 1e6 / 8.0) as u64,
            mbit,
            retransmits: Some(retr),
            ..Interval::default()
        }
    }

    #[test]
    fn a_byte_total_is_the_tests_not_each_streams() {
        assert_eq!(
            shares(Some(5_000_000), 2),
            vec![Some(2_500_000), Some(2_500_000)]
        );
        assert_eq!(shares(Some(10), 3), vec![Some(4), Some(3), Some(3)]);
        assert_eq!(shares(None, 2), vec![None, None]);
        assert_eq!(shares(Some(7), 1), vec![Some(7)]);
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_taker() {
        assert!((jain(&[5.0, 5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[20.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[10.0, 20.0]) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn sums_wait_for_every_stream_of_a_direction() {
        // Two send streams and one receive stream (--bidir -P 2 would be 2 + 2).
        let mut j = Joined::new(vec![false, false, true]);
        assert!(j.push(0, line(0.0, 10.0, 1)).is_empty());
        let r = j.push(2, line(0.0, 30.0, 0));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].direction, "receive");
        let s = j.push(1, line(0.0, 12.0, 2));
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].direction, s[0].mbit, s[0].retransmits),
            ("send", 22.0, Some(3))
        );
        assert!(j.push(0, line(1.0, 11.0, 0)).is_empty());
        assert_eq!(j.sum_intervals().len(), 2);
    }

    #[test]
    fn stream_labels_as_iperf3_prints_them() {
        let o = ClientOptions {
            cport: Some(5000),
            ..ClientOptions::default()
        };
        let p: Vec<_> = streams(&o, 3, false);
        assert_eq!(
            p.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(),
            ["1", "2", "3"]
        );
        assert_eq!(p.iter().filter(|s| s.opts.cport.is_some()).count(), 1);
        let b = streams(&o, 1, true);
        assert_eq!(
            b.iter()
                .map(|s| (s.label.as_str(), s.opts.reverse))
                .collect::<Vec<_>>(),
            [("TX-C", false), ("RX-C", true)]
        );
        assert_eq!(streams(&o, 2, true).len(), 4);
    }
}
