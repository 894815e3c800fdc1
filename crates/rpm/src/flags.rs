//! `tcpwise rpm`'s flags: networkQuality's where it has them (`-C`,
//! `-s`), the draft's parameters by their names, curl's for the
//! connection (`-k`, `--cacert`, `--resolve`, `--http1.1`).

use clap::{Args, ValueEnum};
use tcpwise_units::{Dur, Seconds};

/// Which way a test loads the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Direction {
    /// Download and upload at once (networkQuality's default).
    Bidir,
    /// Download only.
    Down,
    /// Upload only.
    Up,
}

/// `tcpwise rpm`.
#[derive(Debug, Args)]
pub struct RpmArgs {
    /// The server: a host, an origin whose /.well-known/nq is the config
    /// (https://h:8443), or the config's own URL (https://h/api/v1/config).
    /// Without a scheme, https.
    #[arg(value_name = "URL", required_unless_present = "config_url")]
    pub url: Option<String>,
    /// The config's URL (networkQuality's -C), instead of URL.
    #[arg(
        short = 'C',
        long = "config-url",
        value_name = "URL",
        conflicts_with = "url"
    )]
    pub config_url: Option<String>,
    /// Which way to load: bidir (both at once), down or up.
    #[arg(long, value_enum, default_value = "bidir")]
    pub direction: Direction,
    /// Down, then up, each judged on its own (networkQuality's -s).
    #[arg(short = 's', long, conflicts_with = "direction")]
    pub sequential: bool,
    /// Load over HTTP/1.1 (one request per connection: no self probes,
    /// the figure is the foreign probes' alone). Default: HTTP/2 (ALPN on
    /// https, prior knowledge on http).
    #[arg(long = "http1.1")]
    pub http1: bool,
    /// TCP_NOTSENT_LOWAT of this client's connections: off, a size (16KiB)
    /// or auto (5 ms of the flow's rate, at least 16 KiB). It bounds the
    /// upload data queued unsent here (and each HTTP/2 stream's send
    /// buffer), which an uplink self probe would otherwise wait behind:
    /// the test's own queue, not the network's.
    #[arg(long, value_name = "POLICY", default_value = "auto")]
    pub notsent_lowat: tcpwise_tcp::Lowat,
    /// Congestion control of this client's connections (cubic, bbr;
    /// TCP_CONGESTION per socket; -C is networkQuality's config URL). It
    /// drives the uploads; the downloads are the server's. Default: the
    /// namespace's.
    #[arg(long, value_name = "ALGO")]
    pub congestion: Option<String>,
    /// https: accept any server certificate (handshake signatures are
    /// still checked).
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// https: trust the PEM certificates in FILE too.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<std::path::PathBuf>,
    /// Connect to ADDR for HOST:PORT (curl's --resolve HOST:PORT:ADDR).
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<tcpwise_client::Resolve>,
    /// Give up on a connection not made in this long, and on a config
    /// not received in twice it.
    #[arg(long, default_value = "5s")]
    pub connect_timeout: Seconds,
    /// Print the result as JSON, with every interval and probe round.
    #[arg(long)]
    pub json: bool,
    /// Show the draft's intermediate values each interval.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// MAD: intervals in a moving average, and how many must agree.
    #[arg(long, default_value_t = 4, help_heading = "The draft's parameters")]
    pub mad: usize,
    /// ID: the interval between evaluations (and new connections).
    #[arg(long, default_value = "1s", help_heading = "The draft's parameters")]
    pub interval: Dur,
    /// TMP: the share (%) of the lowest probe times the trimmed mean keeps.
    #[arg(long, default_value_t = 95.0, help_heading = "The draft's parameters")]
    pub trimmed_mean: f64,
    /// SDT: stable when the moving averages' standard deviation is at most
    /// this share (%) of the current one.
    #[arg(long, default_value_t = 5.0, help_heading = "The draft's parameters")]
    pub sdt: f64,
    /// MNP: the most load-generating connections per direction.
    #[arg(long, default_value_t = 16, help_heading = "The draft's parameters")]
    pub max_connections: usize,
    /// MPS: the most probe rounds a second.
    #[arg(long, default_value_t = 100.0, help_heading = "The draft's parameters")]
    pub max_probes: f64,
    /// PTC: the share (%) of the goodput probes may use.
    #[arg(long, default_value_t = 5.0, help_heading = "The draft's parameters")]
    pub probe_capacity: f64,
    /// The longest a phase runs before it reports what it has, marked not
    /// stable.
    #[arg(long, default_value = "20s", help_heading = "The draft's parameters")]
    pub max_duration: Seconds,
    /// The percentile reported beside the trimmed mean.
    #[arg(long, default_value_t = 90.0, help_heading = "The draft's parameters")]
    pub percentile: f64,
}

impl RpmArgs {
    /// The draft's parameters these flags give.
    pub fn params(&self) -> crate::Params {
        crate::Params {
            mad: self.mad,
            interval: self.interval.std(),
            trimmed_mean_pct: self.trimmed_mean,
            sdt_pct: self.sdt,
            max_connections: self.max_connections,
            max_probes_per_s: self.max_probes,
            probe_capacity_pct: self.probe_capacity,
            max_duration: self.max_duration.std(),
            percentile: self.percentile,
        }
    }
}
