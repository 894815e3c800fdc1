//! Processes: who we are, signals, starting a command in a namespace,
//! as another user or in its own process group, the terminal's
//! foreground group, SIGPIPE, descriptor limits.

use super::*;

/// Effective uid.
pub fn euid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() }
}

/// Effective gid.
pub fn egid() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::getegid() }
}

/// Whether `pid` names a live process.
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Sends `sig` to `pid` (negative: a process group), ignoring errors.
pub fn kill(pid: i32, sig: i32) {
    // SAFETY: no pointers.
    unsafe { libc::kill(pid, sig) };
}

/// Makes `cmd` enter the network namespace behind `fd` between fork and
/// exec; `fd` must stay open until the command is spawned.
pub fn exec_in_netns(cmd: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setns is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes `cmd` run as `uid`/`gid` with no supplementary groups, switching
/// between fork and exec after every hook registered before this one (the
/// namespace switch needs root). Mahimahi drops privileges the same way.
pub fn exec_as(cmd: &mut std::process::Command, uid: u32, gid: u32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setgroups, setgid and setuid are async-signal-safe and touch
    // no memory of ours (a null list with length 0 is valid).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes `cmd` receive `sig` when the thread that spawned it ends
/// (`PR_SET_PDEATHSIG`), so a supervisor killed with SIGKILL still has its
/// children tear down what they set up. The signal follows the spawning
/// *thread*: spawn from a thread that outlives the child. A parent that
/// died before the call is caught by comparing the parent's pid.
pub fn exec_with_parent_death_signal(cmd: &mut std::process::Command, sig: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid before the fork; prctl, getppid and kill are
    // async-signal-safe and touch no memory of ours.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), sig);
            }
            Ok(())
        });
    }
}

/// Makes `cmd` the leader of its own process group and, with
/// `foreground`, the terminal's foreground group, so Ctrl-C at an
/// interactive prompt reaches the command rather than tearing down around it.
pub fn exec_in_own_group(cmd: &mut std::process::Command, foreground: bool) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (setpgid, signal, tcsetpgrp,
    // getpid) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            if foreground {
                libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                libc::tcsetpgrp(0, libc::getpid());
                libc::signal(libc::SIGTTOU, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

/// Hands the terminal on stdin to process group `pgid` while alive and
/// gives it back to ours on drop.
pub struct Foreground(Option<libc::pid_t>);

impl Foreground {
    /// Gives the terminal to `pgid`; does nothing when stdin is no terminal.
    pub fn give(pgid: i32, stdin_is_terminal: bool) -> Foreground {
        if !stdin_is_terminal {
            return Foreground(None);
        }
        // SAFETY: plain calls on fd 0; SIGTTOU is ignored so tcsetpgrp from
        // a background group does not stop us.
        unsafe {
            let ours = libc::getpgrp();
            libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            libc::tcsetpgrp(0, pgid);
            Foreground(Some(ours))
        }
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        if let Some(pg) = self.0 {
            // SAFETY: plain call on fd 0; SIGTTOU is still ignored.
            unsafe { libc::tcsetpgrp(0, pg) };
        }
    }
}

/// Restores the default action of SIGPIPE (Rust ignores it), so that
/// `tcpwise ... | head -1` ends quietly when the reader goes away, as
/// other Unix tools do, instead of failing a write with EPIPE.
pub fn default_sigpipe() {
    // SAFETY: installs the default disposition; no handler code runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Ignores SIGPIPE, so a peer that closes its socket while we write
/// costs that connection an EPIPE, not the whole process its life:
/// what every server and client that writes to sockets needs (nginx and
/// curl do the same; curl then exits 23 when standard output closes).
/// Children started with `std::process::Command` get the default back.
pub fn ignore_sigpipe() {
    // SAFETY: installs SIG_IGN; no handler code runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (at most 65536):
/// 1024 clients need more than the usual 1024 descriptors. Returns the
/// soft limit now in force.
pub fn raise_fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid rlimit for both calls.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 1024;
        }
        if r.rlim_cur < r.rlim_max {
            let want = r.rlim_max.min(1 << 16).max(r.rlim_cur);
            let raised = libc::rlimit {
                rlim_cur: want,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                r.rlim_cur = want;
            }
        }
    }
    r.rlim_cur
}

/// Raises the soft `RLIMIT_NOFILE` to at least `need` descriptors if the
/// hard limit allows (never lowers it); returns (soft, hard) afterwards.
pub fn fd_limit_for(need: u64) -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid rlimit for both calls.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return (0, 0);
        }
        if r.rlim_cur < need && r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max.min(need),
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                r = want;
            }
        }
    }
    (r.rlim_cur, r.rlim_max)
}

/// This process's CPU time so far, user and system, seconds
/// (`getrusage(RUSAGE_SELF)`, every thread).
pub fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage fills the struct it is given, nothing more.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage for the call's duration.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}
