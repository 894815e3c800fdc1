//! What `tcpwise rpm` prints: a line per interval while it runs, the
//! summary as networkQuality words it (capacities, responsiveness with the
//! draft's band, idle latency), the figures behind it, and the JSON.

use crate::load::Dir;
use crate::params::Params;
use crate::run::{Idle, Interval, Phase};
use crate::stats::{Score, band};
use serde::Serialize;

/// A whole test, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Where the config came from.
    pub config_url: String,
    /// The objects it named.
    pub endpoints: crate::config::Endpoints,
    /// The HTTP version the loads spoke.
    pub http: String,
    /// This client's `TCP_NOTSENT_LOWAT` policy.
    pub notsent_lowat: String,
    /// This client's congestion control.
    pub congestion: String,
    /// The draft's parameters used.
    pub params: ParamsOut,
    /// Idle latency.
    pub idle: Idle,
    /// Each phase.
    pub phases: Vec<Phase>,
}

/// [`Params`] in the units people read.
#[derive(Debug, Clone, Serialize)]
pub struct ParamsOut {
    /// MAD.
    pub mad: usize,
    /// ID, s.
    pub interval_s: f64,
    /// TMP, %.
    pub trimmed_mean_pct: f64,
    /// SDT, %.
    pub sdt_pct: f64,
    /// MNP.
    pub max_connections: usize,
    /// MPS.
    pub max_probes_per_s: f64,
    /// PTC, %.
    pub probe_capacity_pct: f64,
    /// The longest a phase runs, s.
    pub max_duration_s: f64,
    /// The percentile beside the trimmed mean.
    pub percentile: f64,
}

impl From<&Params> for ParamsOut {
    fn from(p: &Params) -> ParamsOut {
        ParamsOut {
            mad: p.mad,
            interval_s: p.interval.as_secs_f64(),
            trimmed_mean_pct: p.trimmed_mean_pct,
            sdt_pct: p.sdt_pct,
            max_connections: p.max_connections,
            max_probes_per_s: p.max_probes_per_s,
            probe_capacity_pct: p.probe_capacity_pct,
            max_duration_s: p.max_duration.as_secs_f64(),
            percentile: p.percentile,
        }
    }
}

fn mbps(bps: f64) -> String {
    format!("{:.3} Mbps", bps / 1e6)
}

fn latency(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.3} seconds", ms / 1000.0)
    } else {
        format!("{ms:.3} milliseconds")
    }
}

fn phase_name(dirs: &[Dir]) -> String {
    dirs.iter().map(|d| d.word()).collect::<Vec<_>>().join("+")
}

/// The line printed as an interval closes (`verbose`: the draft's
/// intermediate values too).
pub fn interval_line(iv: &Interval, verbose: bool) -> String {
    let mut s = format!("[{:5.1} s]", iv.t_s);
    for ((d, now), (_, avg)) in iv.goodput_bps.iter().zip(&iv.moving_bps) {
        s.push_str(&format!(" {} {:8.2} Mbit/s", d.word(), now / 1e6));
        if verbose {
            s.push_str(&format!(" (avg {:.2})", avg / 1e6));
        }
    }
    s.push_str(&format!("  {:2} flows  {:3} probes", iv.flows, iv.rounds));
    match iv.rpm {
        Some(r) => s.push_str(&format!("  RPM {r:6.0}")),
        None => s.push_str("  RPM      -"),
    }
    if verbose {
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1} %", v * 100.0));
        s.push_str(&format!(
            "  goodput sd/mean {} {}  rpm sd/mean {} {}",
            pct(iv.goodput_spread),
            if iv.goodput_stable {
                "stable"
            } else {
                "unstable"
            },
            pct(iv.rpm_spread),
            if iv.responsiveness_stable {
                "stable"
            } else {
                "unstable"
            },
        ));
    }
    s
}

fn score_line(label: &str, s: &Option<Score>) -> String {
    match s {
        Some(s) => {
            let rtt = 60_000.0 / s.rpm;
            format!(
                "{label}: {} ({} | {:.0} RPM)",
                band(s.rpm),
                latency(rtt),
                s.rpm
            )
        }
        None => format!("{label}: not measured (no probe finished)"),
    }
}

/// networkQuality's summary, then what it rests on.
pub fn summary(r: &Report) -> String {
    let mut out = String::from("==== SUMMARY ====\n");
    for dir in [Dir::Up, Dir::Down] {
        for ph in &r.phases {
            if let Some(c) = ph.capacity.iter().find(|c| c.dir == dir) {
                out.push_str(&format!(
                    "{} capacity: {} ({} flows)\n",
                    dir.link(),
                    mbps(c.bps),
                    c.flows
                ));
            }
        }
    }
    for ph in &r.phases {
        let label = match ph.dirs.as_slice() {
            [d] => format!("{} Responsiveness", d.link()),
            _ => "Responsiveness".into(),
        };
        out.push_str(&score_line(&label, &ph.score));
        out.push('\n');
    }
    // Which figure a reader of another tool's output compares with:
    // the methods differ where the draft lets them (when a test ends,
    // which probes count, the client's own send queue), and the two
    // peers print different figures.
    out.push_str(&format!(
        "(Compare the RPM above with Apple's networkQuality: the draft's, trimmed means of the last {} intervals \
         once responsiveness is stable (draft-ietf-ippm-responsiveness-09 Sections 5.3.1, 5.4), uploads keeping \
         TCP_NOTSENT_LOWAT {} (Section 6.1.1). goresponsiveness's first figure, RPM (P90), is the \"RPM at P{}\" \
         line below; it scores every probe when it never stabilises and keeps its uploads' socket buffers full.)\n",
        r.params.mad, r.notsent_lowat, r.params.percentile
    ));
    match &r.idle.score {
        Some(s) => out.push_str(&format!(
            "Idle Latency: {} | {:.0} RPM\n",
            latency(60_000.0 / s.rpm),
            s.rpm
        )),
        None => out.push_str("Idle Latency: not measured (no idle probe finished)\n"),
    }
    out.push('\n');
    let p = &r.params;
    for ph in &r.phases {
        let name = phase_name(&ph.dirs);
        if let Some(s) = &ph.score {
            let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
            out.push_str(&format!(
                "{name}: probes (trimmed mean of the lowest {}%): foreign {} ms (TCP {}, TLS {}, HTTP {}), self {} ms; {} rounds over the last {} intervals\n",
                p.trimmed_mean_pct,
                ms(s.foreign_ms),
                ms(s.tcp_ms),
                ms(s.tls_ms),
                ms(s.http_ms),
                ms(s.self_ms),
                s.rounds,
                p.mad
            ));
        }
        if let Some(s) = &ph.score_percentile {
            out.push_str(&format!(
                "{name}: RPM at P{}: {:.0} (goresponsiveness's first figure, as it computes it: over {} rounds)\n",
                p.percentile, s.rpm, s.rounds
            ));
        }
        let yn = |b| if b { "yes" } else { "NO" };
        out.push_str(&format!(
            "{name}: stable: goodput {}, responsiveness {} ({:.1} s, {} probe rounds, {} with a failed part)\n",
            yn(ph.goodput_stable),
            yn(ph.responsiveness_stable),
            ph.duration_s,
            ph.rounds.len(),
            ph.probe_failures
        ));
    }
    out.push_str(&format!(
        "Loads over {}, client TCP_NOTSENT_LOWAT {}, congestion control {}; MAD {}, ID {} s, TMP {}%, SDT {}%, MNP {}, MPS {}, PTC {}%, at most {} s a phase\n",
        r.http,
        r.notsent_lowat,
        r.congestion,
        p.mad,
        p.interval_s,
        p.trimmed_mean_pct,
        p.sdt_pct,
        p.max_connections,
        p.max_probes_per_s,
        p.probe_capacity_pct,
        p.max_duration_s
    ));
    out
}
