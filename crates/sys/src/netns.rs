//! Network namespaces and TUN devices: create and enter named
//! namespaces, a TUN device in one, the user and mount namespaces of a
//! rootless testbed.

use super::*;

#[repr(C)]
pub(super) struct IfReq {
    pub(super) name: [libc::c_char; libc::IFNAMSIZ],
    pub(super) flags: libc::c_short,
    pub(super) _pad: [u8; 22],
}

pub(super) const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// Creates a TUN device (`IFF_TUN | IFF_NO_PI`) named `name` in the calling
/// thread's network namespace; it disappears when the fd is closed.
pub fn create_tun(name: &str) -> io::Result<OwnedFd> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface name too long",
        ));
    }
    let path = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: path is a valid C string.
    let fd = cvt(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: fd was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    for (d, s) in req.name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: TUNSETIFF reads an ifreq, which IfReq lays out.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) })?;
    Ok(fd)
}

/// Moves the calling thread into the network namespace behind `fd`.
pub fn setns_net(fd: RawFd) -> io::Result<()> {
    // SAFETY: setns only reads the fd.
    cvt(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }).map(|_| ())
}

/// Creates a new network namespace and bind-mounts it at `path` (what
/// `ip netns add` does, minus its final setns back to the caller's
/// namespace, which an unprivileged user namespace may not do).
pub fn create_named_netns(path: &str) -> io::Result<()> {
    std::fs::create_dir_all(NETNS_PARENT)?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let target = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let made = std::thread::spawn(move || -> io::Result<()> {
        // SAFETY: flags only; affects this thread, which then exits.
        cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
        let src = CString::new("/proc/thread-self/ns/net").expect("no NUL");
        // SAFETY: valid C strings.
        cvt(unsafe {
            libc::mount(
                src.as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        })?;
        Ok(())
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("namespace thread panicked")));
    if made.is_err() {
        let _ = std::fs::remove_file(path);
    }
    made
}

/// Unmounts and removes a named namespace (what `ip netns del` does).
pub fn delete_named_netns(path: &str) -> io::Result<()> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: valid C string.
    let r = unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    let e = io::Error::last_os_error();
    std::fs::remove_file(path)?;
    if r != 0 && e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e);
    }
    Ok(())
}

pub(super) const NETNS_PARENT: &str = "/run/netns";

/// Moves the process into a new user and mount namespace. Only sound
/// while the process is single-threaded (the kernel refuses otherwise).
pub fn unshare_user_and_mount() -> io::Result<()> {
    // SAFETY: flags only.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) }).map(|_| ())
}

/// Makes every mount private (so ours do not propagate to the host), then
/// mounts a fresh tmpfs at `path`.
pub fn private_tmpfs_at(path: &str) -> io::Result<()> {
    let c = |s: &str| CString::new(s).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput));
    let (none, root, target, tmpfs, opts) =
        (c("none")?, c("/")?, c(path)?, c("tmpfs")?, c("mode=0755")?);
    // SAFETY: valid C strings; affects only this process's mount namespace.
    cvt(unsafe {
        libc::mount(
            none.as_ptr(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })?;
    // SAFETY: valid C strings; opts is a NUL-terminated option string.
    cvt(unsafe {
        libc::mount(
            tmpfs.as_ptr(),
            target.as_ptr(),
            tmpfs.as_ptr(),
            0,
            opts.as_ptr().cast(),
        )
    })
    .map(|_| ())
}
