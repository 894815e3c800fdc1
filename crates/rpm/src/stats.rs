//! The draft's arithmetic, without I/O: the single-sided trimmed mean,
//! the stability test over moving averages, and the RPM formula from the
//! probe times. The run feeds it what it measured each interval; tests
//! feed it numbers.

use serde::Serialize;
use std::collections::VecDeque;

/// The mean of the lowest `keep_pct` % of `values` (the draft's trimmed
/// mean: with 95, the slowest 5 % are dropped). At least one value is
/// kept; `None` for no values.
pub fn trimmed_mean(values: &[f64], keep_pct: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let keep = ((v.len() as f64 * keep_pct / 100.0).round() as usize).clamp(1, v.len());
    Some(v[..keep].iter().sum::<f64>() / keep as f64)
}

/// The nearest-rank `pct`-th percentile of `values`.
pub fn percentile(values: &[f64], pct: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(tcpwise_units::nearest_rank(&v, pct / 100.0))
}

/// The population standard deviation (the draft's "standard deviation of
/// the moving averages").
pub fn std_dev(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64).sqrt()
}

/// What happened in the last MAD intervals: each interval's samples.
#[derive(Debug, Clone)]
pub struct Window<T> {
    mad: usize,
    intervals: VecDeque<Vec<T>>,
}

impl<T: Clone> Window<T> {
    /// An empty window of `mad` intervals.
    pub fn new(mad: usize) -> Window<T> {
        Window {
            mad,
            intervals: VecDeque::new(),
        }
    }

    /// Closes an interval with its samples; the oldest beyond MAD leaves.
    pub fn push(&mut self, samples: Vec<T>) {
        self.intervals.push_back(samples);
        while self.intervals.len() > self.mad {
            self.intervals.pop_front();
        }
    }

    /// Every sample of the window, oldest first.
    pub fn samples(&self) -> Vec<T> {
        self.intervals.iter().flatten().cloned().collect()
    }

    /// Intervals held (at most MAD).
    pub fn len(&self) -> usize {
        self.intervals.len()
    }

    /// No interval closed yet.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }
}

/// The draft's stability test: the last MAD moving averages agree when
/// their standard deviation is at most SDT of the current one.
#[derive(Debug, Clone)]
pub struct Stability {
    mad: usize,
    sdt: f64,
    averages: VecDeque<f64>,
}

impl Stability {
    /// A test over `mad` moving averages with tolerance `sdt_pct` %.
    pub fn new(mad: usize, sdt_pct: f64) -> Stability {
        Stability {
            mad,
            sdt: sdt_pct / 100.0,
            averages: VecDeque::new(),
        }
    }

    /// Adds the moving average of the interval that just closed.
    pub fn push(&mut self, moving_average: f64) {
        self.averages.push_back(moving_average);
        while self.averages.len() > self.mad {
            self.averages.pop_front();
        }
    }

    /// MAD moving averages are in and they agree.
    pub fn stable(&self) -> bool {
        match self.current() {
            Some(cur) if self.averages.len() == self.mad => self.spread() <= self.sdt * cur.abs(),
            _ => false,
        }
    }

    /// The latest moving average.
    pub fn current(&self) -> Option<f64> {
        self.averages.back().copied()
    }

    /// The standard deviation of the moving averages held.
    pub fn spread(&self) -> f64 {
        std_dev(&self.averages.iter().copied().collect::<Vec<_>>())
    }

    /// The spread as a share of the current average (`-v` prints it).
    pub fn relative_spread(&self) -> Option<f64> {
        self.current()
            .filter(|c| *c != 0.0)
            .map(|c| self.spread() / c.abs())
    }
}

/// One probe round's times, ms: a foreign probe on a new connection (TCP
/// handshake, TLS handshake, the HTTP request on it) and a self probe on
/// a load-generating connection. A part that did not happen is `None`
/// (no TLS on http://, no self probe with HTTP/1.1).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Round {
    /// Seconds since the test started, when the round began.
    pub at_s: f64,
    /// TCP handshake on the foreign connection.
    pub tcp_ms: Option<f64>,
    /// TLS handshake on it.
    pub tls_ms: Option<f64>,
    /// The small object's request to its last byte on it.
    pub http_ms: Option<f64>,
    /// The small object on a load-generating connection.
    pub self_ms: Option<f64>,
}

/// A responsiveness figure and the means it came from (ms).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Score {
    /// Round trips per minute.
    pub rpm: f64,
    /// The foreign probes' round trip: the mean of the TCP, TLS and HTTP
    /// parts' statistics (each part is one round trip).
    pub foreign_ms: Option<f64>,
    /// The self probes' statistic.
    pub self_ms: Option<f64>,
    /// Each foreign part's statistic.
    pub tcp_ms: Option<f64>,
    /// TLS handshakes.
    pub tls_ms: Option<f64>,
    /// HTTP requests on the new connections.
    pub http_ms: Option<f64>,
    /// Rounds it is computed from.
    pub rounds: usize,
}

/// The mean of the values present (`None` when none is).
fn mean_of<const N: usize>(values: [Option<f64>; N]) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Round trips per minute for one of `ms` milliseconds.
fn per_minute(ms: f64) -> f64 {
    if ms > 0.0 {
        60_000.0 / ms
    } else {
        f64::INFINITY
    }
}

/// The draft's formula (draft-ietf-ippm-responsiveness-04 to -09, since
/// its February 2024 revision) with `stat` (the trimmed mean) over each
/// kind of probe time:
/// `Foreign = 60000 / ((TM(tcp_f) + TM(tls_f) + TM(http_f)) / 3)`,
/// `Loaded = 60000 / TM(http_l)`, `RPM = (Foreign + Loaded) / 2`: the
/// mean of the two RPMs, not 60000 over the mean of the two round trips
/// (the -03 formula, which goresponsiveness keeps: `percentile_score`).
/// A kind with no sample drops out: no TLS on http:// (the foreign round
/// trip is then the other two parts' mean, as the draft's TCP-only case);
/// no self probes over HTTP/1.1, then RPM is the foreign one alone.
/// `None` without any probe.
pub fn score(rounds: &[Round], stat: impl Fn(&[f64]) -> Option<f64>) -> Option<Score> {
    let col = |f: fn(&Round) -> Option<f64>| stat(&rounds.iter().filter_map(f).collect::<Vec<_>>());
    let (tcp, tls, http, slf) = (
        col(|r| r.tcp_ms),
        col(|r| r.tls_ms),
        col(|r| r.http_ms),
        col(|r| r.self_ms),
    );
    let foreign = mean_of([tcp, tls, http]);
    let rpms: Vec<f64> = [foreign, slf]
        .into_iter()
        .flatten()
        .map(per_minute)
        .collect();
    if rpms.is_empty() {
        return None;
    }
    Some(Score {
        rpm: rpms.iter().sum::<f64>() / rpms.len() as f64,
        foreign_ms: foreign,
        self_ms: slf,
        tcp_ms: tcp,
        tls_ms: tls,
        http_ms: http,
        rounds: rounds.len(),
    })
}

/// goresponsiveness's first figure, "RPM (P90)", computed as it computes
/// it (`rpm.CalculateRpm`): the percentile of each foreign probe's round
/// trip (its parts' sum over their count: it divides a probe's total by its
/// three round trips) and the percentile of the self probes, then 60000
/// over their mean (the -03 draft's formula: the current one averages
/// the two RPMs, `score`). Nor does it take each part's percentile apart,
/// as `score` takes each part's trimmed mean: those come from different
/// probes (a test below: 40 ms against 10). The parts' own percentiles
/// are kept beside it.
pub fn percentile_score(rounds: &[Round], pct: f64) -> Option<Score> {
    let foreign_rtts: Vec<f64> = rounds
        .iter()
        .filter_map(|r| mean_of([r.tcp_ms, r.tls_ms, r.http_ms]))
        .collect();
    let foreign = percentile(&foreign_rtts, pct);
    let parts = score(rounds, |v| percentile(v, pct))?;
    Some(Score {
        rpm: per_minute(mean_of([foreign, parts.self_ms])?),
        foreign_ms: foreign,
        ..parts
    })
}

/// The draft's words for a figure: under 300 poor, to 1000 fair, to 6000
/// good, above excellent.
pub fn band(rpm: f64) -> &'static str {
    match rpm {
        r if r < 300.0 => "Poor",
        r if r < 1000.0 => "Fair",
        r if r < 6000.0 => "Good",
        _ => "Excellent",
    }
}

#[cfg(test)]
mod tests;
