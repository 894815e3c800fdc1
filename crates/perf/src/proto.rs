//! The wire protocol: newline-delimited JSON on the control connection,
//! raw bytes on the data connection (preceded by the 8-byte test token).

use serde::{Deserialize, Serialize};
use tcpwise_tcp::{AppliedBuffers, ReadSizer, TcpInfo};

/// Protocol identifier the server answers with.
pub const MAGIC: &str = "tcpwise-perf/1";
/// Default port: 5301, beside iperf3's 5201 and not on it, because the
/// protocol is tcpwise's own (not iperf3's), so an `iperf3 -s` on the same
/// host keeps its port and a client never mistakes one server for the other.
pub const DEFAULT_PORT: u16 = 5301;
/// Longest control line either side reads (a header or a sample is well
/// under 4 KiB): a peer that never sends a newline costs 64 KiB, not memory
/// without bound.
pub const MAX_LINE: u64 = 64 * 1024;
/// Prefix of a data connection (then the 8-byte token).
pub const DATA_PREFIX: &[u8; 4] = b"TWPD";

/// What our server writes on a control connection whose client has sent
/// nothing for [`GREET_AFTER`]: our client waits for it before it sends
/// the header. An iperf3 server reads a 37-byte cookie before it writes
/// anything, so a client that hears nothing knows it is not ours without
/// writing a byte that iperf3 would count as a failed test; an iperf3
/// client sends its cookie at once, and is never greeted.
pub const GREETING: &[u8; 8] = b"TWPERF1\n";

/// How long our server waits for a client's first bytes before it greets.
pub const GREET_AFTER: std::time::Duration = std::time::Duration::from_millis(20);
/// Longest test a server accepts (an hour).
pub const MAX_DURATION_MS: u64 = 3_600_000;

/// The range a numeric header field must fall in, inclusive: the server
/// refuses anything outside it before it sizes a buffer, a timer or a
/// rate from it (a header is a stranger's input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The field's name in the header's JSON.
    pub field: &'static str,
    /// Smallest accepted value.
    pub min: u64,
    /// Largest accepted value.
    pub max: u64,
    /// What the value counts, for the refusal and `perf server --help`.
    pub unit: &'static str,
    /// Why this bound.
    pub why: &'static str,
}

/// Every numeric field a client's header carries, with its bound; the
/// read sizing's sizes are [`tcpwise_tcp::ReadSizer::check`]'s (1 B to
/// 64 MiB), a congestion name at most [`MAX_CONGESTION_NAME`] bytes.
pub const BOUNDS: &[Bound] = &[
    Bound {
        field: "duration_ms",
        min: 0,
        max: MAX_DURATION_MS,
        unit: "ms",
        why: "tests at most an hour long",
    },
    Bound {
        field: "interval_ms",
        min: 10,
        max: 60_000,
        unit: "ms",
        why: "at most 360,000 samples a test; iperf3 takes -i 0.1 to 60 s",
    },
    Bound {
        field: "bytes",
        min: 1,
        max: 1 << 40,
        unit: "B",
        why: "-n at most 1 TiB",
    },
    Bound {
        field: "server_rcvbuf",
        min: 1,
        max: MAX_BUFFER,
        unit: "B",
        why: "iperf3's -w cap, 512 MiB",
    },
    Bound {
        field: "server_sndbuf",
        min: 1,
        max: MAX_BUFFER,
        unit: "B",
        why: "iperf3's -w cap, 512 MiB",
    },
    Bound {
        field: "pacing_bps",
        min: 1,
        max: 1_000_000_000_000,
        unit: "bit/s",
        why: "-b at most 1 Tbit/s",
    },
    Bound {
        field: "fq_rate_bps",
        min: 1,
        max: 1_000_000_000_000,
        unit: "bit/s",
        why: "--fq-rate at most 1 Tbit/s",
    },
    Bound {
        field: "udp.rate_bps",
        min: 1,
        max: 100_000_000_000,
        unit: "bit/s",
        why: "-u -b at most 100 Gbit/s",
    },
    Bound {
        field: "udp.len",
        min: HEADER_LEN as u64,
        max: MAX_LEN as u64,
        unit: "B",
        why: "a datagram carries our 20-byte header and fits IPv4",
    },
];

/// iperf3's largest `-w` (`MAX_TCP_BUFFER`): a pinned buffer is kernel
/// memory the client would spend on the server's host.
pub const MAX_BUFFER: u64 = 512 * 1024 * 1024;
/// Linux's `TCP_CA_NAME_MAX` less its NUL.
pub const MAX_CONGESTION_NAME: usize = 15;

/// Why a server refuses a client's header; its text is what the server
/// sends back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadHeader {
    /// Not the JSON of a [`Header`].
    #[error("bad header: {0}")]
    Json(String),
    /// Another protocol (or version of ours).
    #[error("protocol {0} not supported; this server speaks {MAGIC}")]
    Protocol(String),
    /// A numeric field outside its [`Bound`].
    #[error("{field} {value} is out of range: {min} to {max} {unit} ({why})", field = .0.field, min = .0.min, max = .0.max, unit = .0.unit, why = .0.why, value = .1)]
    OutOfRange(Bound, u64),
    /// A read sizing no constructor makes.
    #[error("server_read_sizing: {0}")]
    ReadSizing(String),
    /// A congestion control name that cannot be one.
    #[error("congestion {0:?}: at most 15 bytes of a-z, 0-9, _ and -")]
    Congestion(String),
}

/// Parses and checks a client's header line.
pub fn check_header(line: &str) -> Result<Header, BadHeader> {
    let header: Header =
        serde_json::from_str(line.trim()).map_err(|e| BadHeader::Json(e.to_string()))?;
    if header.magic != MAGIC {
        return Err(BadHeader::Protocol(header.magic));
    }
    for (field, value) in header.numbers() {
        let bound = BOUNDS
            .iter()
            .find(|b| b.field == field)
            .expect("every number has a bound");
        if !(bound.min..=bound.max).contains(&value) {
            return Err(BadHeader::OutOfRange(*bound, value));
        }
    }
    if let Some(sizer) = &header.server_read_sizing {
        sizer
            .check()
            .map_err(|e| BadHeader::ReadSizing(e.to_string()))?;
    }
    if let Some(cc) = &header.congestion {
        let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
        if cc.is_empty() || cc.len() > MAX_CONGESTION_NAME || !cc.chars().all(ok) {
            return Err(BadHeader::Congestion(cc.clone()));
        }
    }
    Ok(header)
}

impl Header {
    /// The header's numeric fields present, by their [`Bound`] names.
    fn numbers(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("duration_ms", self.duration_ms),
            ("interval_ms", self.interval_ms),
        ];
        let opt = [
            ("bytes", self.bytes),
            ("server_rcvbuf", self.server_rcvbuf),
            ("server_sndbuf", self.server_sndbuf),
            ("pacing_bps", self.pacing_bps),
            ("fq_rate_bps", self.fq_rate_bps),
            ("udp.rate_bps", self.udp.as_ref().map(|u| u.rate_bps)),
            ("udp.len", self.udp.as_ref().map(|u| u.len as u64)),
        ];
        v.extend(opt.into_iter().filter_map(|(f, n)| n.map(|n| (f, n))));
        v
    }
}

/// The bounds as `perf server --help` and docs/perf.md print them.
pub fn bounds_text() -> String {
    let mut s = String::new();
    for b in BOUNDS {
        s.push_str(&format!(
            "  {:<14} {} to {} {} ({})\n",
            b.field, b.min, b.max, b.unit, b.why
        ));
    }
    s.push_str("  server_read_sizing  every size 1 B to 64 MiB, min <= next <= max\n");
    s.push_str("  congestion     at most 15 bytes of a-z, 0-9, _ and -\n");
    s
}

/// The test token of a data connection's 12-byte hello, if it is one.
pub fn parse_hello(hello: &[u8]) -> Option<u64> {
    let (prefix, token) = hello.split_at_checked(4)?;
    (prefix == DATA_PREFIX && token.len() == 8)
        .then(|| u64::from_be_bytes(token.try_into().expect("8 bytes")))
}

/// Reads one control line into `line`, at most [`MAX_LINE`] bytes.
pub async fn read_line<R>(r: &mut R, line: &mut String) -> std::io::Result<usize>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let n = (&mut *r).take(MAX_LINE).read_line(line).await?;
    if n as u64 >= MAX_LINE && !line.ends_with('\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a control line longer than 64 KiB",
        ));
    }
    Ok(n)
}

/// The client's request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// Must be [`MAGIC`].
    pub magic: String,
    /// Server sends (client receives).
    pub reverse: bool,
    /// Test length, ms (ignored when `bytes` is set).
    pub duration_ms: u64,
    /// Bytes to send instead of a duration.
    pub bytes: Option<u64>,
    /// Interval between samples, ms.
    pub interval_ms: u64,
    /// Static SO_RCVBUF for the server's socket when it receives.
    pub server_rcvbuf: Option<u64>,
    /// Static SO_SNDBUF for the server's socket when it sends.
    pub server_sndbuf: Option<u64>,
    /// Read sizing for the server when it receives.
    pub server_read_sizing: Option<ReadSizer>,
    /// Congestion control for both ends of the data connection (TCP_CONGESTION).
    #[serde(default)]
    pub congestion: Option<String>,
    /// `-b`: the sender's writes held to this average, bits/s
    /// ([`crate::throttle`]); the server holds its own when it sends
    /// (`-R`). Before `--fq-rate` this was the kernel's pacing rate.
    #[serde(default)]
    pub pacing_bps: Option<u64>,
    /// `--fq-rate`: the kernel's pacing of the sending socket, bits/s
    /// (SO_MAX_PACING_RATE); the server sets it when it sends.
    #[serde(default)]
    pub fq_rate_bps: Option<u64>,
    /// `-u`: a UDP test at this rate and datagram size.
    #[serde(default)]
    pub udp: Option<UdpSpec>,
    /// `--get-server-output`: send the server's own lines at the end.
    #[serde(default)]
    pub server_output: bool,
    /// `-Z`: how the sender (the server with `-R`) sends without a copy.
    #[serde(default)]
    pub zerocopy: Option<ZeroCopy>,
}

/// `-Z`'s ways of sending without copying through user space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZeroCopy {
    /// `sendfile` from an in-memory file (iperf3's `-Z`).
    Sendfile,
    /// `send(MSG_ZEROCOPY)` from a pinned buffer, completions reaped from
    /// the error queue.
    Msg,
}

impl std::fmt::Display for ZeroCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ZeroCopy::Sendfile => "sendfile",
            ZeroCopy::Msg => "MSG_ZEROCOPY",
        })
    }
}

/// What `MSG_ZEROCOPY` did: sends made, completions reaped, and how many
/// of those the kernel copied after all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZeroCopyCount {
    /// `send` calls with `MSG_ZEROCOPY` that took bytes.
    pub sends: u64,
    /// Completions reaped.
    pub completed: u64,
    /// Completions the kernel marked as copied.
    pub copied: u64,
}

/// The server's answer to a header.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Accept {
    /// [`MAGIC`].
    pub magic: String,
    /// Token the data connection must present.
    pub token: Option<u64>,
    /// Why the test was refused, if it was.
    pub error: Option<String>,
    /// The UDP port the server bound for a `-u` test.
    #[serde(default)]
    pub udp_port: Option<u16>,
}

/// One side's sample at the end of an interval.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Sample {
    /// Interval index, from 0.
    pub index: u32,
    /// Seconds since that side's data start.
    pub t: f64,
    /// Bytes moved (sent or received) up to now.
    pub bytes: u64,
    /// TCP_INFO of the data socket.
    pub info: Option<TcpInfo>,
    /// SO_RCVBUF of the data socket now (what autotuning grew it to; `ss`'s `rb`).
    #[serde(default)]
    pub rcvbuf: Option<u64>,
    /// SO_SNDBUF of the data socket now (`ss`'s `tb`).
    #[serde(default)]
    pub sndbuf: Option<u64>,
    /// `-Z msg`: the sender's zero-copy counts so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<ZeroCopyCount>,
}

/// Server-to-client control messages.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ServerMsg {
    /// Buffers the server's data socket holds.
    Buffers {
        /// As applied.
        applied: AppliedBuffers,
    },
    /// An interval sample.
    Sample(Sample),
    /// The test ended on the server.
    Done(Sample),
    /// `--get-server-output`: the server's own lines, sent before `Done`.
    Output {
        /// As the server would print them.
        text: String,
    },
}

/// UDP datagram header bytes: magic, sequence, departure time.
pub const HEADER_LEN: usize = 20;
/// The largest UDP payload over IPv4 (65,535 less the IP and UDP headers).
pub const MAX_LEN: usize = 65_507;

/// The UDP parameters of a test header.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UdpSpec {
    /// Rate, bits/s.
    pub rate_bps: u64,
    /// Payload bytes per datagram.
    pub len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> serde_json::Value {
        serde_json::json!({"magic": MAGIC, "reverse": false, "duration_ms": 1000, "bytes": null,
            "interval_ms": 1000, "server_rcvbuf": null, "server_sndbuf": null,
            "server_read_sizing": null})
    }

    fn with(path: &str, v: serde_json::Value) -> String {
        let mut h = valid();
        match path.split_once('.') {
            Some((outer, inner)) => {
                h[outer] = serde_json::json!({"rate_bps": 1_000_000, "len": 1400});
                h[outer][inner] = v;
            }
            None => h[path] = v,
        }
        h.to_string()
    }

    /// Each bounded field at its bound is taken and one past it refused,
    /// with the field's name in the reason (the audit's 10^15-byte read
    /// size among them).
    #[test]
    fn every_field_at_and_past_its_bound() {
        assert!(check_header(&valid().to_string()).is_ok());
        for b in BOUNDS {
            for at in [b.min, b.max] {
                let r = check_header(&with(b.field, at.into()));
                assert!(r.is_ok(), "{} at {at}: {r:?}", b.field);
            }
            let mut past = vec![b.max + 1];
            past.extend(b.min.checked_sub(1));
            for p in past {
                let e = check_header(&with(b.field, p.into()))
                    .unwrap_err()
                    .to_string();
                assert!(e.starts_with(b.field) && e.contains("out of range"), "{e}");
            }
        }
        let sizing = |v: serde_json::Value| check_header(&with("server_read_sizing", v));
        assert!(sizing(serde_json::json!({"policy": "fixed", "size": 64 << 20})).is_ok());
        for bad in [
            serde_json::json!({"policy": "fixed", "size": 1_000_000_000_000_000u64}),
            serde_json::json!({"policy": "fixed", "size": 0}),
            serde_json::json!({"policy": "slow-start", "next": 4096, "max": 1024}),
        ] {
            let e = sizing(bad).unwrap_err().to_string();
            assert!(e.starts_with("server_read_sizing"), "{e}");
        }
        let cc = |v: &str| check_header(&with("congestion", v.into()));
        assert!(cc("cubic").is_ok() && cc("bbr").is_ok() && cc(&"a".repeat(15)).is_ok());
        for bad in ["", "a_very_long_name", "../x", "CUBIC"] {
            assert!(
                cc(bad).unwrap_err().to_string().starts_with("congestion"),
                "{bad}"
            );
        }
        assert!(bounds_text().lines().count() == BOUNDS.len() + 2);
    }

    #[tokio::test]
    async fn control_lines_are_bounded_and_headers_checked() {
        let mut line = String::new();
        let mut ok = tokio::io::BufReader::new(&b"{\"a\":1}\nrest"[..]);
        assert_eq!(read_line(&mut ok, &mut line).await.unwrap(), 8);
        let endless = vec![b'x'; 3 * MAX_LINE as usize];
        let mut r = tokio::io::BufReader::new(&endless[..]);
        let mut line = String::new();
        let e = read_line(&mut r, &mut line).await.unwrap_err();
        assert!(e.to_string().contains("64 KiB") && line.len() as u64 <= MAX_LINE);
        assert!(
            check_header("{}")
                .unwrap_err()
                .to_string()
                .starts_with("bad header")
        );
        let h = |magic: &str, interval: u64| {
            format!(
                "{{\"magic\":\"{magic}\",\"reverse\":false,\"duration_ms\":1000,\"bytes\":null,\"interval_ms\":{interval},\"server_rcvbuf\":null,\"server_sndbuf\":null,\"server_read_sizing\":null}}"
            )
        };
        assert!(check_header(&h(MAGIC, 100)).is_ok());
        assert!(
            check_header(&h("iperf", 100))
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
        assert!(check_header(&h(MAGIC, 0)).is_err());
        assert!(check_header(&h(MAGIC, 10)).is_ok());
        assert!(check_header(&h(MAGIC, 9)).is_err());
        assert_eq!(parse_hello(b"TWPD\0\0\0\0\0\0\0\x05"), Some(5));
        assert_eq!(parse_hello(b"XWPD\0\0\0\0\0\0\0\x05"), None);
        assert_eq!(parse_hello(b"TWPD"), None);
    }
}
