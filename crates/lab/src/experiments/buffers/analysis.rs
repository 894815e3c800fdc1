//! The figures the report and `results.json` carry, from the downloads
//! alone (no I/O).

use super::measure::Measured;
use crate::Summary;

/// What the downloads show.
pub struct Analysis {
    /// Named figures for `results.json`.
    pub summary: Summary,
    /// The path's payload ceiling, Mbit/s (1448 of every 1500 bytes).
    pub ceiling: f64,
    /// The cap the static buffer predicts, Mbit/s (NaN when unknown).
    pub predicted: f64,
}

/// The figures of `m`.
pub fn analyse(m: &Measured) -> Analysis {
    let d = &m.details;
    let ceiling = payload_ceiling(m.rate_mbit);
    let (st, au, ad) = (&d.pinned.summary, &d.auto.summary, &d.auto_default.summary);
    let predicted = st.predicted_cap_mbit.unwrap_or(f64::NAN);
    let mut summary = Summary::new();
    summary.insert("static_mbit".into(), st.goodput_mbit.into());
    summary.insert("static_predicted_mbit".into(), predicted.into());
    summary.insert("auto_mbit".into(), au.goodput_mbit.into());
    summary.insert("auto_default_mbit".into(), ad.goodput_mbit.into());
    summary.insert("ceiling_mbit".into(), ceiling.into());
    summary.insert("rtt_ms".into(), m.rtt_ms.into());
    summary.insert("rate_mbit".into(), m.rate_mbit.into());
    Analysis {
        summary,
        ceiling,
        predicted,
    }
}

/// TCP payload a path of `rate_mbit` can carry: 1448 bytes of every
/// 1500-byte packet (IP, TCP and timestamp headers).
pub fn payload_ceiling(rate_mbit: f64) -> f64 {
    rate_mbit * 1448.0 / 1500.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_ceiling_is_the_payload_share_of_the_rate() {
        assert!((super::payload_ceiling(151.0) - 145.77).abs() < 0.01);
    }
}
