//! The selftest's report as text: configured against measured, each
//! impairment against its interval, the forwarder's lateness.

use super::*;

/// The table `tcpwise emu selftest` prints: configured vs measured, with
/// the forwarders' own lateness.
impl std::fmt::Display for SelftestReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        idle_and_goodput(self, f)?;
        under_load(self, f)?;
        impairments(self, f)?;
        forwarders(self, f)
    }
}

/// The idle round trip and the goodput against the model, and what limited the sender.
fn idle_and_goodput(r: &SelftestReport, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    writeln!(f, "path: {}", r.path)?;
    writeln!(f, "{:<28} {:>12} {:>12}", "", "model", "measured")?;
    writeln!(
        f,
        "{:<28} {:>9.2} ms {:>9.2} ms  (error {:+.2} ms; p99 {:.2}, min {:.2}, max {:.2}; {} samples)",
        "idle RTT (median)",
        r.expected_idle_rtt_ms,
        r.idle_rtt.p50_ms,
        r.rtt_error_ms,
        r.idle_rtt.p99_ms,
        r.idle_rtt.min_ms,
        r.idle_rtt.max_ms,
        r.idle_rtt.samples
    )?;
    (match r.ceiling_mbit {
        Some(c) => writeln!(
            f,
            "{:<28} {:>7.2} Mbit/s {:>7.2} Mbit/s  ({:.1}% of payload ceiling; whole run {:.2})",
            "goodput (down, median 1 s)",
            c,
            r.steady_goodput_mbit,
            100.0 * r.steady_goodput_mbit / c,
            r.goodput_mbit
        ),
        None => writeln!(
            f,
            "{:<28} {:>12} {:>7.2} Mbit/s  (whole run {:.2}; rate unlimited: {})",
            "goodput (down, median 1 s)",
            "unlimited",
            r.steady_goodput_mbit,
            r.goodput_mbit,
            match r.sender_limits {
                Some(l) if l.limited() => l.cause(r.steady_goodput_mbit, r.path.rtt_ms),
                _ => "this is the forwarder's ceiling",
            }
        ),
    })?;
    if let Some(l) = r.sender_limits {
        writeln!(
            f,
            "{:<28} {:>12} {:>9}  (receive window {:.1} %, send buffer {:.1} % of the time busy sending; receive buffer at the end {}; {}; --sysctl changes them)",
            "sender limited (TCP_INFO)",
            "-",
            format!("{:.1} %", 100.0 * (l.rwnd + l.sndbuf)),
            100.0 * l.rwnd,
            100.0 * l.sndbuf,
            l.receive_buffer
                .map_or("unknown".into(), |b| format!("{:.1} MB", b as f64 / 1e6)),
            r.tcp_mem
        )?;
    }
    Ok(())
}

/// Round trips under load: UDP against the queue's bound, TCP's echo.
fn under_load(r: &SelftestReport, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    let u = &r.loaded_rtt_udp;
    (match r.loaded_rtt_bound_ms {
        Some(b) => writeln!(
            f,
            "{:<28} {:>9.2} ms {:>9.2} ms  (max; p50 {:.2}, p99 {:.2}; bound = RTT + (queue + MTU)/rate; {} answered, {} lost in the queue or to loss)",
            "UDP RTT under load (bound)",
            b,
            u.max_ms,
            u.p50_ms,
            u.p99_ms,
            u.samples,
            r.udp_probes_lost
        ),
        None => writeln!(
            f,
            "{:<28} {:>12} {:>9.2} ms  (max; p50 {:.2}, p99 {:.2}; {} answered, {} lost)",
            "UDP RTT under load", "-", u.max_ms, u.p50_ms, u.p99_ms, u.samples, r.udp_probes_lost
        ),
    })?;
    writeln!(
        f,
        "{:<28} {:>12} {:>9.2} ms  (p50 {:.2}, p99 {:.2}; {} samples; includes TCP's own loss recovery, so not held to the bound)",
        "TCP echo under load (max)",
        "-",
        r.loaded_rtt.max_ms,
        r.loaded_rtt.p50_ms,
        r.loaded_rtt.p99_ms,
        r.loaded_rtt.samples
    )?;
    Ok(())
}

/// Each loss and impairment against its 99.9 % interval.
fn impairments(r: &SelftestReport, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    for l in &r.loss {
        let iv = l
            .interval
            .map(|(lo, hi)| {
                format!(
                    "99.9% interval {:.3}-{:.3}%: {}",
                    lo * 100.0,
                    hi * 100.0,
                    if l.within == Some(true) {
                        "inside"
                    } else {
                        "OUTSIDE"
                    }
                )
            })
            .unwrap_or_else(|| "correlated model: no binomial interval".into());
        writeln!(
            f,
            "{:<28} {:>10.3} % {:>10.3} %  ({} of {} packets; {iv})",
            format!("loss ({})", l.direction),
            l.configured * 100.0,
            l.measured * 100.0,
            l.lost,
            l.offered
        )?;
    }
    for c in &r.impairments {
        match (c.configured, c.interval) {
            (Some(p), Some((lo, hi))) => writeln!(
                f,
                "{:<28} {:>10.3} % {:>10.3} %  ({} of {} delivered packets; 99.9% interval {:.3}-{:.3}%: {})",
                format!("{} ({})", c.what, c.direction),
                p * 100.0,
                c.measured * 100.0,
                c.count,
                c.of,
                lo * 100.0,
                hi * 100.0,
                if c.within == Some(true) {
                    "inside"
                } else {
                    "OUTSIDE"
                }
            )?,
            _ => writeln!(
                f,
                "{:<28} {:>12} {:>10.3} %  ({} of {} offered packets dropped)",
                format!("{} ({})", c.what, c.direction),
                "-",
                c.measured * 100.0,
                c.count,
                c.of
            )?,
        }
    }
    Ok(())
}

/// The forwarders: lateness, drops, queue, CPU, offloads; steal and warnings.
fn forwarders(r: &SelftestReport, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    for (i, d) in r.directions.iter().enumerate() {
        let (idle, bulk) = (&r.idle_lateness[i], &r.bulk_lateness[i]);
        writeln!(
            f,
            "forwarder {:<5} lateness idle p50 {:.1} µs p99 {:.1} µs max {:.1} µs; bulk p50 {:.1} µs p99 {:.1} µs max {:.1} µs",
            d.direction,
            idle.p50_us,
            idle.p99_us,
            idle.max_us,
            bulk.p50_us,
            bulk.p99_us,
            bulk.max_us
        )?;
        writeln!(
            f,
            "forwarder {:<5} lateness p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs over {} packets; drops queue {} aqm {} loss {}, CE marks {}; peak queue {:.1} KB; time in queue p50 {:.2} ms p99 {:.2} ms max {:.2} ms; cpu {:.1}% of a core{}",
            d.direction,
            d.lateness.p50_us,
            d.lateness.p99_us,
            d.lateness.max_us,
            d.lateness.samples,
            d.link.dropped_queue,
            d.link.dropped_aqm,
            d.link.dropped_loss,
            d.link.marked_ce,
            d.link.peak_queue_bytes as f64 / 1e3,
            d.link.sojourn.p50_us as f64 / 1e3,
            d.link.sojourn.p99_us as f64 / 1e3,
            d.link.sojourn.max_us as f64 / 1e3,
            d.cpu_percent(),
            if d.shared_thread {
                " (one thread for both directions)"
            } else {
                ""
            }
        )?;
        writeln!(f, "forwarder {:<5} {}", d.direction, d.offload.text())?;
    }
    writeln!(
        f,
        "forwarders' cpu {:.1}% of a core per Gbit/s of goodput",
        r.cpu_per_gbit
    )?;
    if let Some(s) = r.bulk_steal_pct {
        writeln!(
            f,
            "steal during the bulk phase {s:.2} % of the machine's CPU time (taken by the hypervisor)"
        )?;
    }
    if let Some(w) = &r.warning {
        writeln!(f, "warning: {w}")?;
    }
    Ok(())
}
