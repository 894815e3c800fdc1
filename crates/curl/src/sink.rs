//! Where a `get` command line's output goes: bodies, `-i`/`-D -` heads,
//! `-w`'s standard-output part and `--json` to `out`; `-v`, `--timing`,
//! warnings, errors, the progress meter and `-w`'s `%{stderr}` to `err`.
//! The binary gives standard output and error ([`Sink::std`]); a library
//! caller or a test gives buffers ([`Sink::buffers`]) and reads back what
//! a user would have seen.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A stream shared by every transfer of a run.
pub type Stream = Arc<Mutex<dyn Write + Send>>;

/// The two streams of a run.
#[derive(Clone)]
pub struct Sink {
    out: Stream,
    err: Stream,
}

impl Default for Sink {
    fn default() -> Sink {
        Sink::std()
    }
}

/// An in-memory stream [`Sink::buffers`] writes into.
pub type Buffer = Arc<Mutex<Vec<u8>>>;

struct Shared(Buffer);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink {
    /// The process's standard output and error.
    pub fn std() -> Sink {
        Sink {
            out: Arc::new(Mutex::new(std::io::stdout())),
            err: Arc::new(Mutex::new(std::io::stderr())),
        }
    }

    /// Standard output, and `--stderr FILE` for what goes to standard
    /// error (`-` is standard output).
    pub fn std_with_err(path: &std::path::Path) -> std::io::Result<Sink> {
        let err: Stream = if path.as_os_str() == "-" {
            Arc::new(Mutex::new(std::io::stdout()))
        } else {
            Arc::new(Mutex::new(std::fs::File::create(path)?))
        };
        Ok(Sink {
            out: Arc::new(Mutex::new(std::io::stdout())),
            err,
        })
    }

    /// Two in-memory buffers, returned beside the sink.
    pub fn buffers() -> (Sink, Buffer, Buffer) {
        let (out, err) = (Buffer::default(), Buffer::default());
        let sink = Sink {
            out: Arc::new(Mutex::new(Shared(out.clone()))),
            err: Arc::new(Mutex::new(Shared(err.clone()))),
        };
        (sink, out, err)
    }

    /// Writes to `out`; a closed pipe is the caller's error (curl's 23).
    pub fn write_out(&self, b: &[u8]) -> std::io::Result<()> {
        let mut o = self
            .out
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        o.write_all(b)
    }

    /// Flushes `out`.
    pub fn flush_out(&self) -> std::io::Result<()> {
        let mut o = self
            .out
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        o.flush()
    }

    /// Writes to `err`; failures are ignored (a closed standard error
    /// must not fail a transfer).
    pub fn err(&self, s: &str) {
        if let Ok(mut e) = self.err.lock() {
            let _ = e.write_all(s.as_bytes());
        }
    }
}
