//! `tcpwise serve` as one call: checks the flags, makes the TLS
//! certificate, fits the limits to the descriptor limit, and runs the
//! worker threads until the [`Shutdown`] is triggered.

use super::files::Root;
use super::flags::ServeArgs;
use super::{Limits, ServeOptions, serve_threads};
use std::net::SocketAddr;
use std::sync::Arc;
use tcpwise_outcome::{Class, Classify, Shutdown};

/// Why `serve` did not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Flags that do not go together, or a file that cannot be used.
    #[error("{0}")]
    Usage(String),
    /// The certificate could not be made.
    #[error(transparent)]
    Tls(#[from] tcpwise_http::tls::TlsSetupError),
    /// `--io uring` cannot serve here.
    #[error(transparent)]
    Io(#[from] super::IoError),
    /// The server could not listen or stopped on an error.
    #[error("cannot serve on {bind}")]
    Serve {
        /// The address asked for.
        bind: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Classify for ServeError {
    fn class(&self) -> Option<Class> {
        Some(match self {
            ServeError::Usage(_) | ServeError::Tls(_) => Class::Usage,
            ServeError::Serve { .. } => Class::Failed,
            ServeError::Io(e) => return e.class(),
        })
    }
}

/// Early data `serve --tls-earlydata` accepts: a request head or a few,
/// as nginx's `ssl_early_data` takes 16 KiB.
pub const EARLY_DATA: u32 = 16 * 1024;

/// Serves until `stop` is triggered; `ready` gets the line that says
/// where it listens (for standard error).
pub fn serve(
    mut a: ServeArgs,
    stop: Shutdown,
    ready: impl FnOnce(String),
) -> Result<(), ServeError> {
    if let Some(p) = a.port {
        a.bind = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, p));
    }
    check(&a)?;
    let tls = if a.tls { Some(tls_config(&a)?) } else { None };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let limits = Limits {
        header_timeout: a.header_timeout.std(),
        idle_timeout: a.idle_timeout.std(),
        max_head: usize::try_from(a.max_header_size.0).unwrap_or(usize::MAX),
        max_body: a.max_body.0,
        max_bytes: a.max_bytes.0,
        max_delay: a.max_delay.std(),
        max_conns: a.max_conns,
    };
    let (limits, file_budget) = limits.fit_fds(tcpwise_sys::raise_fd_limit(), a.root.is_some());
    let max_conns = limits.max_conns;
    let root = match &a.root {
        None => None,
        Some(d) => Some(Arc::new(
            Root::new(d)
                .map_err(|e| ServeError::Usage(format!("--root {}: {e}", d.display())))?
                .with_file_budget(file_budget),
        )),
    };
    let opts = ServeOptions {
        bind: a.bind,
        tls,
        access_log: a.access_log,
        limits,
        root,
        gzip: a.gzip,
        notsent_lowat: a.notsent_lowat,
        congestion: a.congestion.clone(),
        fastopen: a.tfo.then_some(tcpwise_tcp::fastopen::LISTEN_QUEUE),
        http3: a.http3,
        quic_book: None,
        quic_datapath: Default::default(),
        io: a.io,
    };
    let engine = super::Io::resolve(&opts)?;
    let tfo = fastopen_note(a.tfo);
    let threads = a.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let bind = a.bind;
    let datapath = opts.quic_datapath.clone();
    serve_threads(opts, threads, stop, |addr| {
        let h3 = datapath.get().map_or(String::new(), |d| {
            format!(", HTTP/3 on UDP at the same port (QUIC: {d})")
        });
        ready(format!(
            "tcpwise serve: {threads} thread(s) on {engine}, at most {max_conns} connections, header timeout {}, idle timeout {}, TCP_NOTSENT_LOWAT {}, congestion control {}{tfo}{h3}; listening on {scheme}://{addr}",
            tcpwise_units::fmt_nanos(a.header_timeout.0),
            tcpwise_units::fmt_nanos(a.idle_timeout.0),
            a.notsent_lowat,
            a.congestion.as_deref().unwrap_or("the namespace's default")
        ))
    })
    .map_err(|source| ServeError::Serve { bind, source })
}

/// What the listening line says of TCP Fast Open: whether the kernel will
/// take data in SYNs, as asked.
fn fastopen_note(asked: bool) -> String {
    if !asked {
        return String::new();
    }
    match tcpwise_tcp::fastopen::sysctl_value() {
        Some(v) if v & 2 != 0 => {
            format!(", TCP Fast Open on ({}={v})", tcpwise_tcp::fastopen::SYSCTL)
        }
        v => format!(
            ", TCP Fast Open asked for but {}={} here: the kernel takes no data in SYNs until its server bit (2) is set, so clients fall back to a normal handshake",
            tcpwise_tcp::fastopen::SYSCTL,
            v.map_or("unreadable".to_string(), |v| v.to_string())
        ),
    }
}

/// Refuses flags that do not go together, before anything listens.
fn check(a: &ServeArgs) -> Result<(), ServeError> {
    if a.tls_names.len()
        + usize::from(a.cert_out.is_some() || a.tls_earlydata || a.tls_tickets != 2 || a.http3)
        > 0
        && !a.tls
    {
        return Err(ServeError::Usage(
            "--cert-out, --tls-name, --tls-earlydata, --tls-tickets and --http3 need --tls".into(),
        ));
    }
    if a.tls_earlydata && a.tls_tickets == 0 {
        return Err(ServeError::Usage(
            "--tls-earlydata needs session tickets (--tls-tickets 0 turns them off)".into(),
        ));
    }
    if let Some(cc) = &a.congestion {
        tcpwise_tcp::check_congestion(cc).map_err(|e| ServeError::Usage(format!("-C: {e}")))?;
    }
    for (d, flag) in [
        (a.header_timeout, "--header-timeout"),
        (a.idle_timeout, "--idle-timeout"),
    ] {
        if d.0 == 0 {
            return Err(ServeError::Usage(format!("{flag} must be more than 0")));
        }
    }
    if a.max_conns == 0 || a.max_header_size.0 < 64 {
        return Err(ServeError::Usage(
            "--max-conns must be at least 1 and --max-header-size at least 64 bytes".into(),
        ));
    }
    Ok(())
}

/// The self-signed certificate for every name the server answers to,
/// written out for clients when asked, with tickets and early data.
fn tls_config(a: &ServeArgs) -> Result<Arc<rustls::ServerConfig>, ServeError> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !a.bind.ip().is_unspecified() {
        names.push(a.bind.ip().to_string());
    }
    names.extend(a.tls_names.iter().cloned());
    let (cfg, pem) = tcpwise_http::tls::self_signed(&names)?;
    if let Some(p) = &a.cert_out {
        std::fs::write(p, pem)
            .map_err(|e| ServeError::Usage(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(tcpwise_http::tls::with_resumption(
        &cfg,
        tcpwise_http::tls::Resumption {
            tickets: a.tls_tickets.into(),
            early_data: if a.tls_earlydata { EARLY_DATA } else { 0 },
        },
    ))
}
