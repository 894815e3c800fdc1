//! The data file: created once (every page written, so no sparse holes
//! the disk never allocated), reused by later runs of the same size, and
//! opened with `O_DIRECT` so every transaction's read and write reach the
//! disk rather than the page cache, as InnoDB's `O_DIRECT` does.

use crate::AioError;
use crate::page::{self, PAGE, PageError};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tcpwise_sys::uring::{AlignedBuf, SharedFd};

/// Bytes written or read at once while creating or checking the file.
const CHUNK: usize = 1 << 20;

/// An open data file.
pub struct DataFile {
    /// Where it is.
    pub path: PathBuf,
    /// Opened with `O_DIRECT`.
    pub file: Arc<File>,
    /// Pages in it.
    pub pages: u32,
    /// It lives on tmpfs or ramfs: `O_DIRECT` there reaches memory, not a
    /// disk, so the figures say nothing about disk I/O.
    pub in_memory: bool,
}

fn direct(path: &Path, create: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

fn io_err(path: &Path, what: &'static str, e: std::io::Error) -> AioError {
    match e.raw_os_error() {
        Some(libc::EINVAL) => AioError::NoDirect(path.to_path_buf()),
        Some(libc::ENOSPC | libc::EDQUOT) => AioError::NoSpace(path.to_path_buf()),
        _ => AioError::File {
            path: path.to_path_buf(),
            what,
            source: e,
        },
    }
}

impl DataFile {
    /// `tcpwise dispatch aio`'s data file: `path` or the default one for
    /// `bytes`, created once if missing. `say` gets the lines a user
    /// should read on standard error: that the file is being created, and
    /// that it is on a memory filesystem (its I/O reaches RAM, not a disk).
    pub fn open_for_run(
        path: Option<std::path::PathBuf>,
        bytes: u64,
        say: &dyn Fn(String),
    ) -> Result<DataFile, AioError> {
        let path = path.unwrap_or_else(|| crate::default_file(bytes));
        let file = DataFile::open(&path, bytes, || {
            say(format!(
                "creating the data file {} ({}; once, later runs reuse it)",
                path.display(),
                tcpwise_units::Bytes(bytes)
            ))
        })?;
        if file.in_memory {
            say(format!(
                "warning: --file {} is on a memory filesystem (tmpfs/ramfs): its I/O reaches RAM, not a disk",
                path.display()
            ));
        }
        Ok(file)
    }

    /// Opens the data file of `bytes` bytes at `path`, creating it first
    /// (calling `creating` before the long write) if it does not exist.
    /// Refuses a file that is not ours or has another size, and a
    /// filesystem that refuses `O_DIRECT`; never overwrites anything.
    pub fn open(path: &Path, bytes: u64, creating: impl FnOnce()) -> Result<DataFile, AioError> {
        let pages = crate::pages_in(bytes)?;
        match std::fs::metadata(path) {
            Ok(m) => {
                if !m.is_file() {
                    return Err(AioError::NotOurs(path.to_path_buf(), "not a regular file"));
                }
                if m.len() != bytes {
                    return Err(AioError::Size {
                        path: path.to_path_buf(),
                        found: m.len(),
                        want: bytes,
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                creating();
                create(path, pages)?;
            }
            Err(e) => return Err(io_err(path, "cannot read", e)),
        }
        let file = direct(path, false).map_err(|e| io_err(path, "cannot open", e))?;
        let mut first = AlignedBuf::new(PAGE);
        file.read_exact_at(&mut first, 0)
            .map_err(|e| io_err(path, "cannot read", e))?;
        if page::check(&first, 0).is_err() {
            return Err(AioError::NotOurs(
                path.to_path_buf(),
                "page 0 is not a tcpwise page",
            ));
        }
        Ok(DataFile {
            path: path.to_path_buf(),
            file: Arc::new(file),
            pages,
            in_memory: tcpwise_sys::on_memory_fs(path).unwrap_or(false),
        })
    }

    /// The file as the ring keeps it.
    pub fn shared(&self) -> SharedFd {
        self.file.clone()
    }

    /// Reads every page back and checks it: header, checksum, and for the
    /// pages written in this run, the version of the last completed write.
    /// Returns the number of pages checked.
    pub fn verify(&self, expected: &[Option<u64>]) -> Result<u64, AioError> {
        // Four readers: one synchronous reader leaves the disk's queue
        // mostly empty (about 650 MB/s here, against 1.1 GB/s with four).
        const READERS: u32 = 4;
        let share = self.pages.div_ceil(READERS);
        std::thread::scope(|s| {
            let parts: Vec<_> = (0..READERS)
                .map(|k| {
                    let from = (k * share).min(self.pages);
                    let to = ((k + 1) * share).min(self.pages);
                    s.spawn(move || self.verify_range(from, to, expected))
                })
                .collect();
            parts
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect::<Result<Vec<()>, AioError>>()
        })?;
        Ok(u64::from(self.pages))
    }

    fn verify_range(&self, from: u32, to: u32, expected: &[Option<u64>]) -> Result<(), AioError> {
        let mut buf = AlignedBuf::new(CHUNK);
        let per = (CHUNK / PAGE) as u32;
        let mut no = from;
        while no < to {
            let n = per.min(to - no);
            let len = n as usize * PAGE;
            self.file
                .read_exact_at(&mut buf[..len], u64::from(no) * PAGE as u64)
                .map_err(|e| io_err(&self.path, "cannot read back", e))?;
            for (i, p) in buf[..len].chunks_exact(PAGE).enumerate() {
                let pno = no + i as u32;
                let bad = |error| AioError::Corrupt {
                    path: self.path.clone(),
                    page: pno,
                    error,
                };
                let v = page::check(p, u64::from(pno)).map_err(bad)?;
                if let Some(Some(want)) = expected.get(pno as usize)
                    && v != *want
                {
                    return Err(bad(PageError::Stale {
                        found: v,
                        expected: *want,
                    }));
                }
            }
            no += n;
        }
        Ok(())
    }
}

/// Writes every page into `path.partial-PID`, then renames it into place,
/// so an interrupted or failed creation never leaves a file that looks
/// like a finished one.
fn create(path: &Path, pages: u32) -> Result<(), AioError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| io_err(path, "cannot create the directory of", e))?;
    }
    let tmp = path.with_extension(format!("partial-{}", std::process::id()));
    let r = (|| {
        // O_DIRECT from the start: a filesystem that refuses it (tmpfs)
        // fails here, before a gigabyte is written.
        let f = direct(&tmp, true).map_err(|e| io_err(path, "cannot create", e))?;
        let mut buf = AlignedBuf::new(CHUNK);
        let per = (CHUNK / PAGE) as u32;
        let mut no = 0u32;
        while no < pages {
            let n = per.min(pages - no);
            for i in 0..n {
                let at = i as usize * PAGE;
                page::format(&mut buf[at..at + PAGE], u64::from(no + i));
            }
            f.write_all_at(&buf[..n as usize * PAGE], u64::from(no) * PAGE as u64)
                .map_err(|e| io_err(path, "cannot write", e))?;
            no += n;
        }
        f.sync_all().map_err(|e| io_err(path, "cannot sync", e))?;
        std::fs::rename(&tmp, path).map_err(|e| io_err(path, "cannot rename into", e))
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}
