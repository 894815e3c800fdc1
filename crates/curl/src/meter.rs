//! curl's progress meter on standard error (a terminal only): its two
//! header lines, then one line a second once a transfer has run for a
//! second, sizes in curl's five characters; `-#` draws a bar instead.

use std::time::{Duration, Instant};

/// curl's progress meter: a header, then one line a second, shown only
/// once a transfer has run for a second.
pub(super) struct Meter {
    sink: super::sink::Sink,
    /// `-#`: curl's bar of `#`s and a percentage, 80 columns.
    pub(super) bar: bool,
    on: bool,
    start: Instant,
    last: Instant,
    last_bytes: u64,
    pub(super) got: u64,
    pub(super) total: Option<u64>,
    shown: bool,
}

impl Meter {
    pub(super) fn new(on: bool, start: Instant, sink: super::sink::Sink) -> Meter {
        Meter {
            sink,
            bar: false,
            on,
            start,
            last: start,
            last_bytes: 0,
            got: 0,
            total: None,
            shown: false,
        }
    }

    /// `-#`: the bar instead of the meter's lines.
    pub(super) fn with_bar(mut self, bar: bool) -> Meter {
        self.bar = bar;
        self
    }

    pub(super) fn add(&mut self, n: u64) {
        self.got += n;
        if !self.on || self.last.elapsed() < Duration::from_secs(1) {
            return;
        }
        let now_rate = (self.got - self.last_bytes) as f64 / self.last.elapsed().as_secs_f64();
        self.print(now_rate);
        self.last = Instant::now();
        self.last_bytes = self.got;
    }

    fn print(&mut self, now_rate: f64) {
        if self.bar {
            // Without a length there is nothing to fill.
            if let Some(t) = self.total.filter(|&t| t > 0) {
                let frac = (self.got as f64 / t as f64).min(1.0);
                let hashes = "#".repeat((frac * 73.0) as usize);
                self.sink
                    .err(&format!("\r{hashes:<73}{:6.1}%", frac * 100.0));
                self.shown = true;
            }
            return;
        }
        if !self.shown {
            self.sink.err(METER_HEADER);
            self.shown = true;
        }
        let line = meter_line(
            self.total,
            self.got,
            self.start.elapsed().as_secs_f64(),
            now_rate,
        );
        self.sink.err(&format!("\r{line}"));
    }

    pub(super) fn done(&mut self) {
        if self.shown {
            let rate = self.got as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
            self.print(rate);
            self.sink.err("\n");
        }
    }
}

/// The two header lines of curl's meter.
pub const METER_HEADER: &str = "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n";

/// A size in at most five characters, as curl's meter writes it.
pub fn max5(bytes: u64) -> String {
    const K: u64 = 1024;
    const M: u64 = 1024 * 1024;
    const G: u64 = 1024 * M;
    if bytes < 100_000 {
        format!("{bytes:5}")
    } else if bytes < 10_000 * K {
        format!("{:4}k", bytes / K)
    } else if bytes < 100 * M {
        format!("{:2}.{}M", bytes / M, (bytes % M) / (M / 10))
    } else if bytes < 10_000 * M {
        format!("{:4}M", bytes / M)
    } else if bytes < 100 * G {
        format!("{:2}.{}G", bytes / G, (bytes % G) / (G / 10))
    } else {
        format!("{:4}G", bytes / G)
    }
}

fn hms(secs: Option<f64>) -> String {
    match secs {
        Some(s) if s.is_finite() && s >= 0.0 => {
            let s = s as u64;
            format!("{:2}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
        }
        _ => "--:--:--".into(),
    }
}

/// One line of curl's meter for a download.
pub fn meter_line(total: Option<u64>, got: u64, elapsed: f64, now_rate: f64) -> String {
    let pct = |n: u64| match total {
        Some(t) if t > 0 => format!("{:3}", (n * 100 / t).min(100)),
        _ => "  0".into(),
    };
    let avg = if elapsed > 0.0 {
        got as f64 / elapsed
    } else {
        0.0
    };
    let total_time = total.filter(|_| avg > 0.0).map(|t| t as f64 / avg);
    let left = total_time.map(|t| t - elapsed);
    format!(
        "{} {}  {} {}    0     0  {}      0 {} {} {} {}",
        pct(got),
        max5(total.unwrap_or(got)),
        pct(got),
        max5(got),
        max5(avg as u64),
        hms(total_time),
        hms(Some(elapsed)),
        hms(left),
        max5(now_rate as u64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_sizes_and_lines_as_curl_writes_them() {
        assert_eq!(max5(99_999), "99999");
        assert_eq!(max5(100_000), "  97k");
        assert_eq!(max5(50 * 1024 * 1024 + 512 * 1024), "50.5M");
        assert_eq!(max5(500 * 1024 * 1024), " 500M");
        assert_eq!(max5(20 * 1024 * 1024 * 1024), "20.0G");
        let l = meter_line(
            Some(200 * 1024 * 1024),
            100 * 1024 * 1024,
            2.0,
            50.0 * 1048576.0,
        );
        assert_eq!(
            l,
            " 50  200M   50  100M    0     0  50.0M      0  0:00:04  0:00:02  0:00:02 50.0M"
        );
        assert!(meter_line(None, 10, 1.0, 10.0).contains("--:--:--"));
    }
}
