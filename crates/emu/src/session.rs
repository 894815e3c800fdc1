//! A testbed with commands running in it: what `tcpwise emu shell` and
//! `tcpwise emu pair` do, as a library.
//!
//! A [`Session`] owns a [`Testbed`] and the processes started in it. Each
//! process leads its own process group, so stopping it stops everything it
//! started; the interactive one also gets the terminal, so Ctrl-C at its
//! prompt reaches it instead of tearing the testbed down. Signals arrive
//! through a number the caller's handler sets ([`Signals`]); the session
//! never installs handlers itself, which keeps it usable from a library.

use crate::{DirectionStats, EmuError, Role, Testbed, TestbedConfig, sys};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The number of the signal that asked us to stop (0: none yet), set by
/// the caller's signal handler.
pub type Signals = Arc<AtomicUsize>;

/// Registers SIGINT, SIGTERM and SIGHUP to set the returned number (the
/// signal's) instead of killing the process, so a session can tear down
/// first and exit 128 + N.
pub fn watch_signals() -> Signals {
    let got = Arc::new(AtomicUsize::new(0));
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let _ = signal_hook::flag::register_usize(sig, got.clone(), sig as usize);
    }
    got
}

/// How a supervised command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this status (128 + N when killed by signal N).
    Exited(i32),
    /// We were asked to stop by signal N and stopped it.
    Signalled(i32),
    /// A forwarder died; the command was stopped.
    ForwarderDied,
}

/// A process started in a session, leading its own process group. Dropping
/// it stops the group.
pub struct Process {
    child: Child,
    program: String,
    done: Option<ExitStatus>,
}

impl Process {
    /// Its pid (also its process group id).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status, if it has ended.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.done.is_none() {
            self.done = self.child.try_wait().ok().flatten();
        }
        self.done
    }

    /// Stops the process group: `sig`, then SIGKILL after 2 s.
    pub fn stop(&mut self, sig: i32) -> Option<ExitStatus> {
        let pg = self.child.id() as i32;
        sys::kill(-pg, sig);
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if let Some(s) = self.try_wait() {
                sys::kill(-pg, libc::SIGKILL);
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        sys::kill(-pg, libc::SIGKILL);
        self.done = self.child.wait().ok();
        self.done
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.try_wait().is_none() {
            self.stop(libc::SIGTERM);
        } else {
            // Children it left behind in its group.
            sys::kill(-(self.child.id() as i32), libc::SIGTERM);
        }
    }
}

/// Exit status as a shell reports it: the code, or 128 + the signal.
pub fn status_code(s: ExitStatus) -> i32 {
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

/// A running testbed and the signals that may stop it.
pub struct Session {
    tb: Testbed,
    signals: Signals,
    run_as: Option<RunAs>,
    /// `--meter`'s printer, stopped before the testbed goes.
    meter: Option<crate::meter::Printer>,
}

/// Who the commands of a session run as, when not root: the user who
/// invoked `sudo`, as Mahimahi does. Only the forwarder needs root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    /// User id.
    pub uid: u32,
    /// Group id (supplementary groups are dropped).
    pub gid: u32,
    /// Login name (`SUDO_USER`), for `USER` and `LOGNAME`.
    pub user: Option<String>,
    /// Home directory from `/etc/passwd`, for `HOME`.
    pub home: Option<String>,
}

impl RunAs {
    /// From `SUDO_UID`/`SUDO_GID` when we run as root under sudo; `None`
    /// when not root, not under sudo, or sudo came from root itself.
    pub fn from_sudo_env() -> Result<Option<RunAs>, EmuError> {
        if sys::euid() != 0 {
            return Ok(None);
        }
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let (Some(u), g) = (var("SUDO_UID"), var("SUDO_GID")) else {
            return Ok(None);
        };
        let parse = |k: &str, v: &str| {
            v.parse::<u32>()
                .map_err(|_| EmuError::Config(format!("{k}={v:?} is not a user or group id")))
        };
        let uid = parse("SUDO_UID", &u)?;
        let gid = match g {
            Some(g) => parse("SUDO_GID", &g)?,
            None => uid,
        };
        if uid == 0 {
            return Ok(None);
        }
        let home = std::fs::read_to_string("/etc/passwd").ok().and_then(|p| {
            p.lines().find_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f.len() >= 7 && f[2] == uid.to_string()).then(|| f[5].to_string())
            })
        });
        Ok(Some(RunAs {
            uid,
            gid,
            user: var("SUDO_USER"),
            home,
        }))
    }
}

impl Session {
    /// Builds the testbed of `cfg`.
    pub fn start(cfg: &TestbedConfig, signals: Signals) -> Result<Session, EmuError> {
        Ok(Session::of(Testbed::start(cfg)?, signals))
    }

    /// A session around a testbed built already.
    pub(crate) fn of(tb: Testbed, signals: Signals) -> Session {
        Session {
            tb,
            signals,
            run_as: None,
            meter: None,
        }
    }

    /// Commands spawned from now on run as `who` (`None`: as we do).
    pub fn run_as(&mut self, who: Option<RunAs>) {
        self.run_as = who;
    }

    /// The testbed.
    pub fn testbed(&self) -> &Testbed {
        &self.tb
    }

    /// The signal that asked us to stop, if any.
    pub fn signalled(&self) -> Option<i32> {
        match self.signals.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// Starts `argv` in `role`'s namespace as the leader of its own process
    /// group; `foreground` hands it the terminal too. `prepare` sets its
    /// standard streams.
    pub fn spawn(
        &self,
        role: Role,
        argv: &[String],
        foreground: bool,
        prepare: impl FnOnce(&mut Command),
    ) -> Result<Process, EmuError> {
        let program = argv.first().cloned().unwrap_or_else(|| "sh".into());
        let mut cmd = self.tb.command(role, &program)?;
        cmd.args(argv.iter().skip(1));
        prepare(&mut cmd);
        spawn_group(cmd, argv, self.run_as.as_ref(), foreground)
    }

    /// Waits until a TCP socket listens in the server namespace (on `port`,
    /// or any), failing when `server` exits first, a signal arrives or
    /// `timeout` passes.
    pub fn wait_listening(
        &self,
        server: &mut Process,
        port: Option<u16>,
        timeout: Duration,
    ) -> Result<(), EmuError> {
        let ns = self
            .tb
            .netns(Role::Server)
            .ok_or_else(|| EmuError::Config("this testbed has no server namespace".into()))?;
        let stopped = || self.signalled().is_some();
        wait_listening(ns, (server, "the server"), port, timeout, &stopped)
    }

    /// Waits for `child` to end, a signal, or the emulator to fail; stops
    /// `child`'s group in the last two cases. `server`, if given, is
    /// watched too: its early exit is reported once on stderr.
    pub fn supervise(&self, child: &mut Process, mut server: Option<&mut Process>) -> Outcome {
        let stdin_tty = std::io::IsTerminal::is_terminal(&std::io::stdin());
        let _term = sys::Foreground::give(child.id() as i32, stdin_tty);
        loop {
            if let Some(s) = child.try_wait() {
                // The group may still hold children of CMD: stop them too.
                sys::kill(-(child.id() as i32), libc::SIGTERM);
                return Outcome::Exited(status_code(s));
            }
            if let Some(s) = self.signalled() {
                child.stop(s);
                return Outcome::Signalled(s);
            }
            if self.tb.failed() {
                child.stop(libc::SIGTERM);
                return Outcome::ForwarderDied;
            }
            if let Some(srv) = server.as_deref_mut()
                && let Some(st) = srv.try_wait()
            {
                eprintln!(
                    "tcpwise: warning: the server command exited ({st}) while the client runs"
                );
                server = None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Tears the testbed down and returns each direction's statistics.
    pub fn finish(mut self) -> Result<[DirectionStats; 2], EmuError> {
        // Its last line before the summary, not after.
        self.meter.take();
        self.tb.shutdown()
    }

    /// Tears the testbed down once the threads that carried its
    /// directions (shared with other testbeds) have handed back `up` and
    /// `down`.
    pub(crate) fn finish_with(
        mut self,
        up: DirectionStats,
        down: DirectionStats,
    ) -> Result<[DirectionStats; 2], EmuError> {
        self.meter.take();
        self.tb.finish_with(up, down)
    }

    /// Keeps `--meter`'s printer running until [`Session::finish`].
    pub fn keep_meter(&mut self, p: Option<crate::meter::Printer>) {
        self.meter = p;
    }

    /// The exit status `outcome` stands for, or the forwarders' failure
    /// (`stats`: one testbed's directions, or every testbed's).
    pub fn exit_status(outcome: &Outcome, stats: &[DirectionStats]) -> Result<i32, EmuError> {
        match outcome {
            Outcome::Exited(c) => Ok(*c),
            Outcome::Signalled(s) => Ok(128 + s),
            Outcome::ForwarderDied => {
                let why = stats
                    .iter()
                    .find_map(|d| d.failure.clone())
                    .unwrap_or_else(|| "unknown reason".into());
                let torn = if stats.len() > 2 {
                    "the testbeds were"
                } else {
                    "the testbed was"
                };
                Err(EmuError::Setup(format!(
                    "the emulator stopped ({why}); {torn} torn down"
                )))
            }
        }
    }
}

/// Waits until a TCP socket listens in `ns` (on `port`, or any), failing
/// when `server` exits first, `stopped` says a signal came or `timeout`
/// passes; `who` names the server in the errors ("the server",
/// "receiver 'sink': its server").
pub(crate) fn wait_listening(
    ns: &crate::netns::Netns,
    (server, who): (&mut Process, &str),
    port: Option<u16>,
    timeout: Duration,
    stopped: &dyn Fn() -> bool,
) -> Result<(), EmuError> {
    let until = Instant::now() + timeout;
    loop {
        if ns.listening(port)? {
            return Ok(());
        }
        if let Some(st) = server.try_wait() {
            return Err(EmuError::Config(format!(
                "{who} command '{}' ended ({st}) before it listened on a TCP port",
                server.program
            )));
        }
        if stopped() {
            return Err(EmuError::Interrupted);
        }
        if Instant::now() > until {
            let what = port.map_or("any TCP port".to_string(), |p| format!("TCP port {p}"));
            return Err(EmuError::Config(format!(
                "{who} did not listen on {what} within {:.0} s (set --wait-port or --wait-timeout)",
                timeout.as_secs_f64()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `cmd` (whose words are `argv`) as the leader of its own process
/// group, as `who` when given; `foreground` hands it the terminal.
pub(crate) fn spawn_group(
    mut cmd: Command,
    argv: &[String],
    who: Option<&RunAs>,
    foreground: bool,
) -> Result<Process, EmuError> {
    let program = argv.first().cloned().unwrap_or_else(|| "sh".into());
    sys::exec_in_own_group(&mut cmd, foreground);
    if let Some(r) = who {
        // After the namespace switch and the process group (registered
        // above): those need root.
        sys::exec_as(&mut cmd, r.uid, r.gid);
        if let Some(u) = &r.user {
            cmd.env("USER", u).env("LOGNAME", u);
        }
        if let Some(h) = &r.home {
            cmd.env("HOME", h);
        }
    }
    let child = cmd.spawn().map_err(|e| EmuError::Spawn {
        program: program.clone(),
        source: if e.kind() == std::io::ErrorKind::NotFound {
            std::io::Error::new(e.kind(), "command not found")
        } else {
            e
        },
    })?;
    // A command given as one string runs under `sh -c`: name the string.
    let program = match argv {
        [sh, c, line, ..] if sh == "sh" && c == "-c" => line.clone(),
        _ => program,
    };
    Ok(Process {
        child,
        program,
        done: None,
    })
}

/// Standard streams for a server command: no stdin, stdout onto our
/// stderr so the client's stdout stays clean.
pub fn server_stdio(cmd: &mut Command) {
    cmd.stdin(Stdio::null());
    if let Ok(fd) = std::os::fd::AsFd::as_fd(&std::io::stderr()).try_clone_to_owned() {
        cmd.stdout(fd);
    }
}
