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
    open_tun(name, 0)
}

const IFF_VNET_HDR: libc::c_int = 0x4000;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const TUNSETVNETHDRSZ: libc::c_ulong = 0x4004_54d8;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_TSO6: libc::c_uint = 0x04;
const TUN_F_TSO_ECN: libc::c_uint = 0x08;
const TUN_F_USO4: libc::c_uint = 0x20;
const TUN_F_USO6: libc::c_uint = 0x40;

/// Bytes of the virtio-net header that leads every read and write on a
/// TUN device opened by [`create_tun_offload`] (`struct virtio_net_hdr`).
pub const VNET_HDR_LEN: usize = 10;

/// Which offloads a TUN device accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TunOffload {
    /// TCP segmentation (TSO4, TSO6, with ECN) and checksum offload.
    pub tso: bool,
    /// UDP segmentation (USO4, USO6; Linux 6.2 and later).
    pub uso: bool,
}

/// Creates a TUN device that reads and writes a virtio-net header before
/// each packet and accepts TCP (and, where the kernel has it, UDP)
/// segmentation offload, so the kernel hands over and takes 64 KB
/// super-packets (what wireguard-go does). The kernel's refusals are
/// errors: the caller falls back to [`create_tun`].
pub fn create_tun_offload(name: &str) -> io::Result<(OwnedFd, TunOffload)> {
    let fd = open_tun(name, IFF_VNET_HDR)?;
    let size: libc::c_int = VNET_HDR_LEN as libc::c_int;
    // SAFETY: TUNSETVNETHDRSZ reads an int.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETVNETHDRSZ, &size) })?;
    let tso = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
    // SAFETY: TUNSETOFFLOAD takes its flags by value.
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD, tso | TUN_F_USO4 | TUN_F_USO6) } == 0 {
        return Ok((
            fd,
            TunOffload {
                tso: true,
                uso: true,
            },
        ));
    }
    // SAFETY: as above.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD, tso) })?;
    Ok((
        fd,
        TunOffload {
            tso: true,
            uso: false,
        },
    ))
}

/// Writes the slices as one packet (`writev`): a TUN device takes a
/// virtio-net header, the packet's headers and its payloads gathered.
pub fn write_vectored(fd: RawFd, parts: &[std::io::IoSlice<'_>]) -> io::Result<()> {
    // SAFETY: IoSlice is ABI-compatible with iovec; each is valid for its length.
    let n = unsafe { libc::writev(fd, parts.as_ptr().cast(), parts.len() as libc::c_int) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn open_tun(name: &str, extra: libc::c_int) -> io::Result<OwnedFd> {
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
        flags: (libc::IFF_TUN | libc::IFF_NO_PI | extra) as libc::c_short,
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
        // This thread, which then exits: the mount keeps the namespace.
        unshare_thread_netns()?;
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

/// Moves the calling thread, alone, into a new network namespace with
/// no name: it ends when the thread and every process started from it
/// have (nothing to delete). For a test that needs a namespace of its
/// own on one thread.
pub fn unshare_thread_netns() -> io::Result<()> {
    // SAFETY: flags only; affects the calling thread.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) }).map(|_| ())
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
