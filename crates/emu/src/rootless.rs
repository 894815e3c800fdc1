//! Rootless testbeds: without root, a pair testbed can still be built
//! inside an unprivileged user namespace where the kernel allows it.
//!
//! The process becomes root of a new user namespace (mapped to the caller's
//! uid) with a private mount namespace and a fresh tmpfs on `/run`, where
//! `ip netns` keeps its bind mounts. Namespaces created from there are
//! owned by that user namespace, so creating TUN devices and setting
//! `net.*` sysctls in them is allowed. It vanishes with the process: a
//! rootless run can leave nothing behind on the host.
//!
//! Requirements, checked with a message that names the fix: unprivileged
//! user namespaces enabled, and `/dev/net/tun` readable and writable by the
//! caller (Debian makes it 0666; some images make it root-only). A shell
//! testbed cannot be rootless: its far end is the host's own namespace.

use crate::EmuError;
use std::ffi::CString;
use std::io;

fn write_file(path: &str, text: &str) -> io::Result<()> {
    std::fs::write(path, text)
}

/// Enters a user + mount namespace when not root. Returns whether it did.
/// Must be called while the process is still single-threaded.
pub fn enter_if_unprivileged() -> Result<bool, EmuError> {
    // SAFETY: no arguments.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        return Ok(false);
    }
    let tun = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: valid C string.
    if unsafe { libc::access(tun.as_ptr(), libc::R_OK | libc::W_OK) } != 0 {
        return Err(EmuError::Privileges(
            "tcpwise emu needs root, or read-write access to /dev/net/tun for a rootless testbed (it is root-only here): run it with sudo".into(),
        ));
    }
    // SAFETY: unshare takes flags only; the process is single-threaded.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
        let e = io::Error::last_os_error();
        return Err(EmuError::Privileges(format!(
            "cannot create an unprivileged user namespace ({e}): enable them (sysctl user.max_user_namespaces=10000, or kernel.unprivileged_userns_clone=1) or run with sudo"
        )));
    }
    let setup = || -> io::Result<()> {
        write_file("/proc/self/setgroups", "deny")?;
        write_file("/proc/self/uid_map", &format!("0 {uid} 1"))?;
        write_file("/proc/self/gid_map", &format!("0 {gid} 1"))?;
        let none = CString::new("none").expect("no NUL");
        let root = CString::new("/").expect("no NUL");
        let run = CString::new("/run").expect("no NUL");
        let tmpfs = CString::new("tmpfs").expect("no NUL");
        let opts = CString::new("mode=0755").expect("no NUL");
        // SAFETY: valid C strings; these mounts only affect our new mount namespace.
        unsafe {
            if libc::mount(
                none.as_ptr(),
                root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::mount(
                tmpfs.as_ptr(),
                run.as_ptr(),
                tmpfs.as_ptr(),
                0,
                opts.as_ptr().cast(),
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    setup().map_err(|e| {
        EmuError::Privileges(format!(
            "cannot set up the rootless namespace ({e}): run with sudo"
        ))
    })?;
    Ok(true)
}
