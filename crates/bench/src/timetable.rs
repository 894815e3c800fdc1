//! The open loop's timetable (sans-IO): with R requests/s over C
//! connections, connection i sends its k-th request at
//! `i/R + k*C/R` seconds after the start, so the connections interleave
//! evenly and all together send R a second, whatever the server does.

/// When each request of one connection is due.
#[derive(Debug, Clone)]
pub struct Timetable {
    first_ns: f64,
    interval_ns: f64,
    k: u64,
}

impl Timetable {
    /// Connection `i` of `conns` at `rate` requests/s in total.
    pub fn new(i: usize, conns: usize, rate: f64) -> Timetable {
        Timetable {
            first_ns: i as f64 * 1e9 / rate,
            interval_ns: conns as f64 * 1e9 / rate,
            k: 0,
        }
    }

    /// The next request's due time, ns after the start.
    pub fn next_due(&mut self) -> u64 {
        let t = self.first_ns + self.k as f64 * self.interval_ns;
        self.k += 1;
        t as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_interleave_to_the_total_rate() {
        // 4 connections at 2000/s: every 0.5 ms one of them is due.
        let mut all: Vec<u64> = (0..4)
            .flat_map(|i| {
                let mut s = Timetable::new(i, 4, 2000.0);
                (0..100).map(move |_| s.next_due())
            })
            .collect();
        all.sort();
        for (n, t) in all.iter().enumerate() {
            assert_eq!(*t, n as u64 * 500_000);
        }
    }
}
