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

use crate::{EmuError, Kind, sys};

/// Enters a user + mount namespace when not root. Returns whether it did.
/// Must be called while the process is still single-threaded.
pub fn enter_if_unprivileged() -> Result<bool, EmuError> {
    let (uid, gid) = (sys::euid(), sys::egid());
    if uid == 0 {
        return Ok(false);
    }
    if !sys::can_read_write("/dev/net/tun") {
        return Err(EmuError::Privileges(
            "tcpwise emu needs root, or read-write access to /dev/net/tun for a rootless testbed (it is root-only here): run it with sudo".into(),
        ));
    }
    sys::unshare_user_and_mount().map_err(|e| {
        EmuError::caused(
            Kind::Privileges,
            "cannot create an unprivileged user namespace (enable them: sysctl user.max_user_namespaces=10000, or kernel.unprivileged_userns_clone=1; or run with sudo)",
            e,
        )
    })?;
    let setup = || -> std::io::Result<()> {
        std::fs::write("/proc/self/setgroups", "deny")?;
        std::fs::write("/proc/self/uid_map", format!("0 {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("0 {gid} 1"))?;
        sys::private_tmpfs_at("/run")
    };
    setup().map_err(|e| {
        EmuError::caused(
            Kind::Privileges,
            "cannot set up the rootless namespace (run with sudo)",
            e,
        )
    })?;
    Ok(true)
}
