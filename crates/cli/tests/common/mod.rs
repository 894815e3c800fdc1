//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_tcpwise");

fn required() -> bool {
    std::env::var("TCPWISE_REQUIRE_NETNS").as_deref() == Ok("1")
}

/// Whether namespace tests can run here; prints why not and skips, unless
/// TCPWISE_REQUIRE_NETNS=1, where a missing capability fails the test.
pub fn netns_ok(test: &str) -> bool {
    let why = if tcpwise_sys::euid() != 0 {
        Some("not root (network namespaces and TUN devices need CAP_NET_ADMIN)")
    } else if !std::path::Path::new("/dev/net/tun").exists() {
        Some("/dev/net/tun is missing")
    } else if Command::new("ip").arg("-V").output().is_err() {
        Some("iproute2's ip is not installed")
    } else {
        None
    };
    match why {
        None => true,
        Some(w) if required() => panic!("TCPWISE_REQUIRE_NETNS=1 but {w}"),
        Some(w) => {
            eprintln!("skipping {test}: {w}");
            false
        }
    }
}

/// Whether `tool` is installed; like [`netns_ok`] for peers.
pub fn tool_ok(test: &str, tool: &str) -> bool {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        if required() {
            panic!(
                "TCPWISE_REQUIRE_NETNS=1 but {tool} is not installed (scripts/test installs it)"
            );
        }
        eprintln!("skipping {test}: {tool} is not installed");
    }
    ok
}

/// Whether a peer `what` that is not a command (a Python package, a
/// source tree) is here: `ok`; like [`tool_ok`] it skips with the reason,
/// or fails under TCPWISE_REQUIRE_NETNS=1.
pub fn peer_ok(test: &str, what: &str, ok: bool) -> bool {
    if !ok {
        if required() {
            panic!("TCPWISE_REQUIRE_NETNS=1 but {what} is missing");
        }
        eprintln!("skipping {test}: {what} is missing");
    }
    ok
}

/// Runs tcpwise with `args`.
pub fn tcpwise(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run tcpwise")
}

/// Namespaces and devices a tcpwise process with `pid` left behind.
pub fn leftovers(pid: u32) -> Vec<String> {
    let prefix = format!("tw-{pid}-");
    let mut out = Vec::new();
    for dir in ["/run/netns", "/sys/class/net"] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().to_string();
                if n.starts_with(&prefix) {
                    out.push(format!("{dir}/{n}"));
                }
            }
        }
    }
    out
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh directory, unique per call: tests of one binary run in
    /// parallel in one process, so the pid alone would let two of them
    /// share (and delete) each other's files.
    pub fn new(tag: &str) -> TempDir {
        static SERIAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("tcpwise-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("mkdir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process killed on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `python3 -m http.server` on the host (dual-stack, ephemeral port) serving `dir`.
pub fn python_http(dir: &std::path::Path) -> Server {
    let mut child = Command::new("python3")
        .args(["-u", "-m", "http.server", "--bind", "::", "0"])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start python3 http.server");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read banner");
    let port = line
        .split("port ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in python banner: {line}"));
    Server { child, port }
}

/// Deterministic pseudo-random bytes.
pub fn blob(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// sha256 of a file via sha256sum.
pub fn sha256_of(path: &std::path::Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Runs `tcpwise ARGS`, waits for its testbed and `settle` more, sends
/// `sig`, and checks it exits `expect` within 20 s leaving nothing behind.
pub fn signal_testbed(args: &[&str], settle: Duration, sig: i32, expect: i32) {
    let child = std::process::Command::new(BIN)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        wait_for_testbed(pid, Duration::from_secs(20)),
        "testbed came up"
    );
    std::thread::sleep(settle);
    tcpwise_sys::kill(pid as i32, sig);
    let t0 = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(expect), "{}", stderr(&o));
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

/// Waits until `pid` has a namespace (the testbed is up), at most `limit`.
pub fn wait_for_testbed(pid: u32, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if leftovers(pid).iter().any(|l| l.starts_with("/run/netns")) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Starts `tcpwise ARGS` and returns it with the first line it printed on
/// stderr (servers announce their address there).
pub fn spawn_announcing(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tcpwise");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("banner");
    (child, line.trim().to_string())
}

/// Runs `script` (with `sh -c`) as the client of an `emu pair` testbed of
/// `rtt` and `rate` whose server is `tcpwise perf server`.
pub fn perf_testbed(rtt: &str, rate: &str, script: &str) -> Output {
    perf_testbed_with(&["--rtt", rtt, "--rate", rate], script)
}

/// As [`perf_testbed`], the path given by `link` (emu's link flags).
pub fn perf_testbed_with(link: &[&str], script: &str) -> Output {
    testbed_serving(&format!("exec {BIN} perf server"), link, script)
}

/// `emu pair` with `server` (a shell command line, listening on 5301 at
/// least) at the far end and `script` at the near end.
pub fn testbed_serving(server: &str, link: &[&str], script: &str) -> Output {
    let head = ["emu", "pair", "-q"];
    let tail = [
        "--server",
        server,
        "--wait-port",
        "5301",
        "--",
        "sh",
        "-c",
        script,
    ];
    tcpwise(&[&head[..], link, &tail[..]].concat())
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// sha256 of the first `n` bytes of `tcpwise serve`'s body pattern
/// (byte i is (31 i + 7) mod 251), for checking bodies end to end.
pub fn sha_of_pattern(n: usize) -> String {
    let dir = TempDir::new(&format!("pat{n}"));
    let p = dir.0.join("p");
    let v: Vec<u8> = (0..n as u64)
        .map(|i| (i.wrapping_mul(31).wrapping_add(7) % 251) as u8)
        .collect();
    std::fs::write(&p, v).unwrap();
    sha256_of(&p)
}

/// A child stopped with SIGTERM on drop (nginx's master then stops its
/// workers; tcpwise serve finishes what it has in flight).
pub struct Proc(pub Child);

/// Kills a process the test waits for itself, should the test fail first
/// (a failed assertion must not leave a server running).
pub struct KillOnPanic(pub i32);

impl Drop for KillOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            tcpwise_sys::kill(self.0, libc::SIGKILL);
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        tcpwise_sys::kill(self.0.id() as i32, libc::SIGTERM);
        let _ = self.0.wait();
    }
}

/// nginx running `conf` (a whole nginx.conf, written into `dir`), once
/// `port` answers.
pub fn nginx_with(dir: &std::path::Path, conf: &str, port: u16) -> Proc {
    let d = dir.display().to_string();
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let p = Proc(
        Command::new("nginx")
            .args(["-c", &format!("{d}/nginx.conf"), "-p", &d])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    p
}

/// Waits (at most 5 s) until something listens on TCP `port`, without
/// connecting to it (`ss`), so a one-test server is not spent on a probe.
pub fn wait_port(port: &str) {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        let o = Command::new("ss")
            .args(["-Hltn", &format!("sport = :{port}")])
            .output()
            .unwrap();
        if !o.stdout.is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("nothing listens on port {port}");
}

/// `tcpwise serve` on an ephemeral loopback port with `extra` flags;
/// returns (process, base URL).
pub fn serve_loopback(extra: &[&str]) -> (Proc, String) {
    let mut args = vec!["serve", "--bind", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let (child, line) = spawn_announcing(&args);
    let base = line.rsplit(' ').next().unwrap().to_string();
    (Proc(child), base)
}

/// The machine's steal and total CPU ticks so far (`/proc/stat`'s `cpu`
/// line): printed beside a rerun, so a starved attempt says it was.
fn cpu_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    (fields.get(7).copied().unwrap_or(0), fields.iter().sum())
}

/// Runs `attempt` (a whole comparison with a peer, peer and tcpwise side
/// by side) up to `times` times while it fails: on 2 cores beside the other
/// tests a run can be starved of CPU, and the peer's own figure then
/// moves as far as ours (CI, 2 Dec: iperf3 against itself 27.6 Mbit/s on a
/// 40 Mbit/s link). Each failed attempt is printed with the steal and the
/// machine's load during it; a difference that holds every time fails.
pub fn rerun_if_starved(what: &str, times: usize, attempt: impl Fn()) {
    for n in 1..=times {
        let (steal0, total0) = cpu_ticks();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&attempt));
        let Err(cause) = caught else { return };
        let (steal1, total1) = cpu_ticks();
        println!(
            "{what}: attempt {n} of {times} failed (steal {} of {} ticks, load {})",
            steal1 - steal0,
            total1 - total0,
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
        if n == times {
            std::panic::resume_unwind(cause);
        }
    }
}
