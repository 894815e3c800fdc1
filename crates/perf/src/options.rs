//! What `tcpwise perf client` is asked to do ([`ClientOptions`]), checked
//! before anything is sent.

use crate::PerfError;
use crate::proto::DEFAULT_PORT;
use std::time::Duration;
use tcpwise_tcp::ReadSizer;

/// Client configuration.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Server host (name or address).
    pub host: String,
    /// Server port.
    pub port: u16,
    /// The server sends (`-R`).
    pub reverse: bool,
    /// Test length.
    pub duration: Duration,
    /// Bytes to send instead of a duration.
    pub bytes: Option<u64>,
    /// Sampling interval.
    pub interval: Duration,
    /// Static SO_RCVBUF for the receiving socket.
    pub rcvbuf: Option<u64>,
    /// Static SO_SNDBUF for the sending socket.
    pub sndbuf: Option<u64>,
    /// Both came from `-w` (the diagnosis names the flag typed).
    pub window_flag: bool,
    /// Read sizing for the receiver.
    pub read_sizing: ReadSizer,
    /// The path's rate if known (for the BDP in the diagnosis).
    pub path_rate_bps: Option<f64>,
    /// How long to wait for the connection.
    pub connect_timeout: Duration,
    /// Congestion control of both ends (`-C`), or the namespace default.
    pub congestion: Option<String>,
    /// Give up when no data moves for this long (a dead path: TCP alone
    /// would retransmit for about 15 minutes); iperf3's `--rcv-timeout`.
    pub stall_timeout: Duration,
    /// `-b`: the sender's writes held to this many bits/s on average
    /// (iperf3's throttle, [`crate::throttle`]); for `-u`, the datagrams'
    /// rate.
    pub pacing_bps: Option<u64>,
    /// `--fq-rate`: the kernel paces the sending socket at this many
    /// bits/s (`SO_MAX_PACING_RATE`, iperf3's `--fq-rate`).
    pub fq_rate_bps: Option<u64>,
    /// `-O`: run this much longer than `duration` first, printed and
    /// marked, and leave it out of the summary (iperf3's `--omit`: the
    /// test lasts `-O` + `-t`).
    pub omit: Duration,
    /// `-4`/`-6`: only addresses of this family (`None`: the first the
    /// resolver gives).
    pub ipv6: Option<bool>,
    /// `-B`: the local address both connections use.
    pub bind: Option<std::net::IpAddr>,
    /// `--cport`: the data connection's local port.
    pub cport: Option<u16>,
    /// `--get-server-output`: ask the server for its own lines.
    pub server_output: bool,
    /// `-Z`: send without copying through user space (sendfile or
    /// `MSG_ZEROCOPY`).
    pub zerocopy: Option<crate::proto::ZeroCopy>,
    /// `-l`: a UDP datagram's payload bytes (default 1448).
    pub length: Option<usize>,
    /// The server was just tried with tcpwise's protocol and turned out
    /// to be iperf3's, which closes and reopens its listener after that
    /// attempt: a refused control connection is tried again for a
    /// moment (iperf3's protocol only).
    pub after_probe: bool,
    /// The control connection a probe found silent (an iperf3 server's),
    /// kept for the iperf3 client to go on with; shared by clones.
    pub adopt: Adopt,
}

/// A control connection handed from our protocol's probe to the iperf3
/// client: the server, and the connection (its cookie not sent yet).
#[derive(Clone, Default)]
pub struct Adopt(
    std::sync::Arc<std::sync::Mutex<Option<(std::net::SocketAddr, std::net::TcpStream)>>>,
);

impl std::fmt::Debug for Adopt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self
            .0
            .lock()
            .map(|g| g.as_ref().map(|(a, _)| *a))
            .ok()
            .flatten();
        f.debug_tuple("Adopt").field(&held).finish()
    }
}

impl Adopt {
    /// Keeps `sock` (connected to `peer`) unless one is kept already.
    pub(crate) fn keep(&self, peer: std::net::SocketAddr, sock: tokio::net::TcpStream) {
        let mut slot = self.0.lock().expect("lock");
        if slot.is_none()
            && let Ok(s) = sock.into_std()
        {
            *slot = Some((peer, s));
        }
    }

    /// The connection kept for `peer`, registered with this runtime.
    pub(crate) fn take(&self, peer: std::net::SocketAddr) -> Option<tokio::net::TcpStream> {
        let (at, s) = self.0.lock().expect("lock").take()?;
        (at == peer)
            .then(|| tokio::net::TcpStream::from_std(s).ok())
            .flatten()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            host: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            reverse: false,
            duration: Duration::from_secs(10),
            bytes: None,
            interval: Duration::from_secs(1),
            rcvbuf: None,
            sndbuf: None,
            window_flag: false,
            read_sizing: ReadSizer::default(),
            path_rate_bps: None,
            connect_timeout: Duration::from_secs(5),
            congestion: None,
            stall_timeout: Duration::from_secs(30),
            pacing_bps: None,
            fq_rate_bps: None,
            omit: Duration::ZERO,
            ipv6: None,
            bind: None,
            cport: None,
            length: None,
            after_probe: false,
            adopt: Adopt::default(),
            server_output: false,
            zerocopy: None,
        }
    }
}

impl ClientOptions {
    /// The first line `tcpwise perf client` prints: what it is about to do.
    pub fn banner(&self) -> String {
        format!(
            "tcpwise perf: {} {}:{} for {}, receiver reads {}{}",
            if self.reverse {
                "receiving from"
            } else {
                "sending to"
            },
            self.host,
            self.port,
            self.bytes.map_or(
                format!("{:.1} s", self.duration.as_secs_f64()),
                crate::diagnose::human_bytes
            ),
            self.read_sizing,
            self.congestion.as_ref().map_or(String::new(), |c| format!(
                ", congestion control {c} at both ends"
            )) + &self.pacing_bps.map_or(String::new(), |b| format!(
                ", sender's writes held to {:.2} Mbit/s",
                b as f64 / 1e6
            )) + &self.fq_rate_bps.map_or(String::new(), |b| format!(
                ", sender paced at {:.2} Mbit/s by the kernel",
                b as f64 / 1e6
            ))
        )
    }

    /// How long a timed test sends: `-t` and `-O`'s omitted start before it.
    pub fn run_time(&self) -> Duration {
        self.duration + self.omit
    }

    /// Refuses what cannot be run, with the flag's name in the message.
    pub fn validate(&self) -> Result<(), PerfError> {
        let bad = |m: String| Err(PerfError::Config(m));
        if self.duration.is_zero() || self.duration > Duration::from_secs(3600) {
            return bad("-t: the test length must be between 0 and 3600 seconds".into());
        }
        if self.interval.is_zero() {
            return bad("--interval must be positive".into());
        }
        if self.bytes == Some(0) {
            return bad("-n: a size must be positive".into());
        }
        if self.pacing_bps == Some(0) {
            return bad("-b: a rate must be positive".into());
        }
        if self.fq_rate_bps == Some(0) {
            return bad("--fq-rate: a rate must be positive".into());
        }
        if let Some(n) = self.length
            && !(crate::proto::HEADER_LEN..=crate::proto::MAX_LEN).contains(&n)
        {
            return bad(format!(
                "-l {n}: a datagram carries {} to {} bytes",
                crate::proto::HEADER_LEN,
                crate::proto::MAX_LEN
            ));
        }
        // iperf3's own bound (MAX_OMIT_TIME).
        if self.omit > Duration::from_secs(600) {
            return bad("-O: at most 600 seconds, as iperf3".into());
        }
        if let Some(algo) = &self.congestion {
            tcpwise_tcp::check_congestion(algo).map_err(|e| PerfError::Config(e.to_string()))?;
        }
        for (flag, v) in [("--rcvbuf", self.rcvbuf), ("--sndbuf", self.sndbuf)] {
            match v {
                Some(0) => return bad(format!("{flag}: a size must be positive")),
                Some(n) if n > (i32::MAX / 2) as u64 => {
                    return bad(format!(
                        "{flag} {n}: too large for a socket buffer (at most 1 GiB)"
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}
