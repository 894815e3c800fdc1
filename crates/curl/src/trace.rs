//! `--trace FILE` and `--trace-ascii FILE`: what went over the wire, in
//! curl's dump format (`tool_cb_dbg.c`): `=> Send header`, `=> Send data`,
//! `<= Recv header` (one block a received header line, as curl logs them),
//! `<= Recv data` and `== Info:` lines; hex with 16 bytes a row and the
//! printable text beside, or text alone with 64 bytes a row and a new row
//! after each CRLF. `-` is standard output.
//!
//! The `== Info:` lines are curl 7.88's for HTTP/1.x over TCP: `Trying`,
//! `Connected to`, `HTTP 1.0, assume close after body`, `Connection #N
//! to host H left intact` or `Closing connection N`, a redirect's `Issue
//! another request to this URL`, and a reused connection's three lines
//! (curl's "bundle" is a pointer; ours names the connection's number).
//! What differs from curl's file: TLS's and HTTP/2's many info lines are
//! not written, and body data is logged as the client hands it over
//! (decoded from chunks), not as each socket read brought it.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// Where a run's trace goes.
#[derive(Clone)]
pub struct Trace {
    out: Arc<Mutex<dyn Write + Send>>,
    ascii: bool,
}

impl Trace {
    /// A trace into `path` (`-`: standard output).
    pub fn create(path: &std::path::Path, ascii: bool) -> std::io::Result<Trace> {
        let out: Arc<Mutex<dyn Write + Send>> = if path.as_os_str() == "-" {
            Arc::new(Mutex::new(std::io::stdout()))
        } else {
            Arc::new(Mutex::new(std::fs::File::create(path)?))
        };
        Ok(Trace { out, ascii })
    }

    fn put(&self, s: &str) {
        if let Ok(mut o) = self.out.lock() {
            let _ = o.write_all(s.as_bytes());
        }
    }

    /// An `== Info:` line.
    pub fn info(&self, s: &str) {
        self.put(&format!("== Info: {s}\n"));
    }

    /// The info lines before a request: the connection made or reused.
    /// `id` is curl's number (from 0).
    pub fn opening(&self, host: &str, peer: Option<std::net::SocketAddr>, id: u64, reused: bool) {
        if reused {
            self.info(&format!("Found bundle for host: 0x{id:x} [serially]"));
            self.info("Can not multiplex, even if we wanted to");
            self.info(&format!(
                "Re-using existing connection #{id} with host {host}"
            ));
        } else if let Some(p) = peer {
            self.info(&format!("  Trying {p}..."));
            self.info(&format!(
                "Connected to {host} ({}) port {} (#{id})",
                p.ip(),
                p.port()
            ));
        }
    }

    /// The info line after a response: the connection kept or closed.
    pub fn closing(&self, host: &str, id: u64, closes: bool) {
        if closes {
            self.info(&format!("Closing connection {id}"));
        } else {
            self.info(&format!("Connection #{id} to host {host} left intact"));
        }
    }

    /// A block: `label` is `=> Send header`, `<= Recv data`, ...
    pub fn block(&self, label: &str, data: &[u8]) {
        self.put(&dump(label, data, self.ascii));
    }

    /// The received head, a block a line as curl logs it.
    pub fn recv_head(&self, head: &str) {
        for line in head.split_inclusive("\r\n") {
            self.block("<= Recv header", line.as_bytes());
        }
    }
}

/// One block in curl's format.
pub fn dump(label: &str, data: &[u8], ascii: bool) -> String {
    let width = if ascii { 0x40 } else { 0x10 };
    let size = data.len();
    let mut out = format!("{label}, {size} bytes (0x{size:x})\n");
    let mut i = 0;
    while i < size {
        out.push_str(&format!("{i:04x}: "));
        if !ascii {
            for c in 0..width {
                match data.get(i + c) {
                    Some(b) => out.push_str(&format!("{b:02x} ")),
                    None => out.push_str("   "),
                }
            }
        }
        let mut c = 0;
        let mut next = i + width;
        while c < width && i + c < size {
            if ascii && i + c + 1 < size && data[i + c] == 0x0d && data[i + c + 1] == 0x0a {
                next = i + c + 2;
                break;
            }
            let b = data[i + c];
            out.push(if (0x20..0x80).contains(&b) {
                char::from(b)
            } else {
                '.'
            });
            if ascii && i + c + 2 < size && data[i + c + 1] == 0x0d && data[i + c + 2] == 0x0a {
                next = i + c + 3;
                break;
            }
            c += 1;
        }
        out.push('\n');
        i = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_as_curl_dumps_them() {
        // Byte for byte what curl 7.88.1 wrote for the same bytes.
        assert_eq!(
            dump("<= Recv header", b"HTTP/1.1 200 OK\r\n", false),
            "<= Recv header, 17 bytes (0x11)\n0000: 48 54 54 50 2f 31 2e 31 20 32 30 30 20 4f 4b 0d HTTP/1.1 200 OK.\n0010: 0a                                              .\n"
        );
        assert_eq!(
            dump(
                "=> Send header",
                b"POST /echo-req HTTP/1.1\r\nHost: 127.0.0.1:42139\r\n\r\n",
                true
            ),
            "=> Send header, 50 bytes (0x32)\n0000: POST /echo-req HTTP/1.1\n0019: Host: 127.0.0.1:42139\n0030: \n"
        );
        assert_eq!(
            dump("<= Recv header", b"\r\n", true),
            "<= Recv header, 2 bytes (0x2)\n0000: \n"
        );
    }
}
