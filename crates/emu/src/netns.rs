//! Named network namespaces (`/run/netns/tw-<pid>-<role>`), the way
//! `ip netns` makes them, so users can inspect a live testbed with
//! `ip netns exec tw-… ss -ti` while it runs.

use crate::{EmuError, Kind, sys};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

/// Where `ip netns` keeps its bind mounts.
pub const NETNS_DIR: &str = "/run/netns";

/// Runs `ip ARGS`, turning failure into an error that quotes ip's words.
pub fn ip(args: &[&str]) -> Result<(), EmuError> {
    ip_stdin(args, None)
}

/// Runs `ip ARGS` with `input` on stdin (for `-batch -`).
pub fn ip_stdin(args: &[&str], input: Option<&str>) -> Result<(), EmuError> {
    let mut cmd = Command::new("ip");
    cmd.args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            EmuError::Missing(
                "the 'ip' command was not found: install iproute2 (apt-get install iproute2)"
                    .into(),
            )
        } else {
            EmuError::os("cannot run ip", e)
        }
    })?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        use std::io::Write;
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| EmuError::os("ip", e))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(EmuError::Setup(format!(
            "ip {} failed: {}",
            args.join(" "),
            err.trim().lines().next().unwrap_or("no message")
        )));
    }
    Ok(())
}

/// A thread running inside a namespace ([`Netns::spawn`]).
pub struct SpawnedIn<R>(std::thread::JoinHandle<Option<R>>);

impl<R> SpawnedIn<R> {
    /// Waits for the thread; an error if it panicked.
    pub fn join(self) -> Result<R, EmuError> {
        match self.0.join() {
            Ok(Some(r)) => Ok(r),
            _ => Err(EmuError::Setup(
                "a thread inside the namespace panicked".into(),
            )),
        }
    }

    /// Whether the thread has ended.
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

/// A named network namespace, deleted (with every process still in it) on drop.
#[derive(Debug)]
pub struct Netns {
    name: String,
    fd: OwnedFd,
    deleted: bool,
}

impl Netns {
    /// Creates `name` with loopback up.
    pub fn create(name: &str) -> Result<Netns, EmuError> {
        let path = format!("{NETNS_DIR}/{name}");
        sys::create_named_netns(&path)
            .map_err(|e| EmuError::os(format!("cannot create network namespace {name}"), e))?;
        let fd = match sys::open_ro(&path) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = sys::delete_named_netns(&path);
                return Err(EmuError::caused(
                    Kind::Setup,
                    format!("cannot open namespace {name}"),
                    e,
                ));
            }
        };
        let ns = Netns {
            name: name.to_string(),
            fd,
            deleted: false,
        };
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A raw fd for `setns` (valid while `self` lives).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Runs `f` on a thread that has entered this namespace: sockets and
    /// TUN devices it creates belong to the namespace.
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R, EmuError> {
        let fd = self.raw_fd();
        std::thread::scope(|s| {
            s.spawn(move || {
                sys::setns_net(fd).map_err(|e| EmuError::os("setns", e))?;
                Ok(f())
            })
            .join()
            .map_err(|_| EmuError::Setup("a thread inside the namespace panicked".into()))?
        })
    }

    /// Like [`Netns::run`] but on a detached, named thread, for work that
    /// outlives the call (a server); the thread holds its own fd of the
    /// namespace until it has entered it.
    pub fn spawn<R: Send + 'static>(
        &self,
        name: &str,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> Result<SpawnedIn<R>, EmuError> {
        let fd = self.fd.try_clone()?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let handle = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let entered = sys::setns_net(fd.as_raw_fd());
                drop(fd);
                let ok = entered.is_ok();
                let _ = tx.send(entered);
                // Never run `f` outside the namespace.
                ok.then(f)
            })
            .map_err(EmuError::Io)?;
        match rx.recv() {
            Ok(Ok(())) => Ok(SpawnedIn(handle)),
            Ok(Err(e)) => Err(EmuError::os(format!("setns into {}", self.name), e)),
            Err(_) => Err(EmuError::Setup("a thread inside the namespace died".into())),
        }
    }

    /// Writes a per-namespace sysctl such as `net.ipv4.tcp_rmem`.
    pub fn sysctl(&self, key: &str, value: &str) -> Result<(), EmuError> {
        let path = sysctl_path(key)?;
        let value = value.to_string();
        let key2 = key.to_string();
        self.run(move || {
            // The kernel answers a bad value with ENOENT for some keys
            // (tcp_congestion_control), so tell a missing key apart first.
            if !std::path::Path::new(&path).exists() {
                return Err(EmuError::Config(format!(
                    "unknown sysctl {key2} (no {path})"
                )));
            }
            std::fs::write(&path, value.as_bytes()).map_err(|e| {
                EmuError::caused(
                    Kind::Config,
                    format!("cannot set {key2}={value}: the kernel refused the value"),
                    e,
                )
            })
        })?
    }

    /// Reads a per-namespace sysctl as this namespace has it, its words
    /// joined by single spaces (`4096 131072 33554432`).
    pub fn read_sysctl(&self, key: &str) -> Result<String, EmuError> {
        let path = sysctl_path(key)?;
        let key = key.to_string();
        self.run(move || {
            let v = std::fs::read_to_string(&path)
                .map_err(|e| EmuError::caused(Kind::Setup, format!("cannot read {key}"), e))?;
            Ok(v.split_whitespace().collect::<Vec<_>>().join(" "))
        })?
    }

    /// Whether a TCP socket listens in this namespace (on `port`, or any).
    pub fn listening(&self, port: Option<u16>) -> Result<bool, EmuError> {
        self.run(move || {
            ["/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"]
                .iter()
                .any(|f| {
                    std::fs::read_to_string(f)
                        .unwrap_or_default()
                        .lines()
                        .skip(1)
                        .any(|l| {
                            let cols: Vec<&str> = l.split_whitespace().collect();
                            cols.len() > 3
                                && cols[3] == "0A"
                                && port.is_none_or(|p| {
                                    cols[1]
                                        .rsplit(':')
                                        .next()
                                        .and_then(|h| u16::from_str_radix(h, 16).ok())
                                        == Some(p)
                                })
                        })
                })
        })
    }

    /// How many packets the kernel dropped at device `dev`'s transmit
    /// queue in this namespace (`tx_dropped`): for a TUN device, packets
    /// its reader (the forwarder) did not take in time.
    pub fn tx_dropped(&self, dev: &str) -> Option<u64> {
        let dev = dev.to_string();
        self.run(move || tx_dropped_here(&dev)).ok().flatten()
    }

    /// Processes whose network namespace is this one.
    pub fn pids(&self) -> Vec<i32> {
        pids_in(&format!("{NETNS_DIR}/{}", self.name))
    }

    /// Kills every process inside and removes the namespace.
    pub fn delete(&mut self) -> Result<(), EmuError> {
        if self.deleted {
            return Ok(());
        }
        let path = format!("{NETNS_DIR}/{}", self.name);
        kill_all_in(&path);
        self.deleted = true;
        sys::delete_named_netns(&path)
            .map_err(|e| EmuError::os(format!("cannot remove namespace {}", self.name), e))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = self.delete();
    }
}

/// A per-namespace sysctl as people write it: `KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sysctl(pub String, pub String);

impl std::str::FromStr for Sysctl {
    type Err = EmuError;

    fn from_str(s: &str) -> Result<Sysctl, EmuError> {
        let (k, v) = s.split_once('=').ok_or_else(|| {
            EmuError::Config(format!(
                "'{s}' is not KEY=VALUE (e.g. net.ipv4.tcp_slow_start_after_idle=0)"
            ))
        })?;
        sysctl_path(k.trim())?;
        Ok(Sysctl(k.trim().to_string(), v.trim().to_string()))
    }
}

/// Maps `net.ipv4.tcp_rmem` to its /proc path; only `net.*` keys are
/// per-namespace, so others are refused.
pub fn sysctl_path(key: &str) -> Result<String, EmuError> {
    let ok = key.starts_with("net.")
        && !key.contains("..")
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !ok {
        return Err(EmuError::Config(format!(
            "sysctl '{key}' is not a per-namespace key: use net.* keys such as net.ipv4.tcp_slow_start_after_idle"
        )));
    }
    Ok(format!("/proc/sys/{}", key.replace('.', "/")))
}

/// Pids of processes whose net namespace is the one bound at `path`.
pub fn pids_in(path: &str) -> Vec<i32> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let (dev, ino) = (meta.dev(), meta.ino());
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(m) = std::fs::metadata(format!("/proc/{pid}/ns/net"))
            && m.dev() == dev
            && m.ino() == ino
        {
            out.push(pid);
        }
    }
    out
}

/// SIGKILLs every process in the namespace at `path` and waits briefly.
pub fn kill_all_in(path: &str) {
    for round in 0..50 {
        let pids = pids_in(path);
        if pids.is_empty() {
            return;
        }
        for p in pids {
            sys::kill(
                p,
                if round == 0 {
                    libc::SIGTERM
                } else {
                    libc::SIGKILL
                },
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(if round == 0 {
            200
        } else {
            20
        }));
    }
}

/// [`Netns::tx_dropped`] in the calling thread's own namespace.
pub fn tx_dropped_here(dev: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev").ok()?;
    dev_tx_dropped(&text, dev)
}

/// A device's `tx_dropped` from `/proc/net/dev`'s text (the fourth of
/// the transmit columns, after eight receive columns).
pub fn dev_tx_dropped(text: &str, dev: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (name, cols) = l.split_once(':')?;
        (name.trim() == dev).then(|| cols.split_whitespace().nth(11)?.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn tx_dropped_is_the_fourth_transmit_column() {
        let text = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
   tw0: 1820232    1201    0    0    0     0          0         0 17285130   11431    0    8    0     0       0          0
";
        assert_eq!(super::dev_tx_dropped(text, "tw0"), Some(8));
        assert_eq!(super::dev_tx_dropped(text, "lo"), Some(0));
        assert_eq!(super::dev_tx_dropped(text, "eth0"), None);
    }
}
