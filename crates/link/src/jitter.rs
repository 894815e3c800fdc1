//! Delay jitter: netem's distributions (`uniform`, `normal`, `pareto`,
//! `paretonormal`) with an optional correlation between successive
//! packets, drawn from the link's seeded RNG.
//!
//! Why not netem's correlation as netem computes it: netem mixes each new
//! uniform draw with the last one (`next = (1-ρ)·U + ρ·last`), which
//! shrinks the spread it was asked for (and, for loss, the loss rate: with
//! `loss 1% 25%` far fewer than 1 % of packets are lost; the kernel's own
//! netem notes call its correlation broken). Here the correlation lives in
//! a Gaussian AR(1) process `z' = ρ·z + √(1-ρ²)·e`, mapped through the
//! distribution's inverse CDF, so every packet's jitter keeps exactly the
//! distribution asked for and successive packets are correlated about ρ
//! (exactly ρ for `normal`).
//!
//! `AMOUNT` is the half-width for `uniform` and the standard deviation for
//! the others. `pareto` is a Pareto of shape 3 (netem's table) clipped 4
//! of its SDs above its mean (netem's tables stop at 4 SD), shifted to mean
//! 0 and scaled to SD 1: its long tail is to the right (late packets) and
//! it never goes below -0.75 SD; `paretonormal` is netem's mix, 0.25
//! normal + 0.75 pareto, rescaled to SD 1; `normal` is clipped at ±4 SD.

use crate::Nanos;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tcpwise_units as units;

/// The shape of the jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dist {
    /// Uniform in `[-amount, +amount]`.
    Uniform,
    /// Normal with SD `amount`.
    Normal,
    /// Pareto (shape 3), mean 0, SD `amount`.
    Pareto,
    /// 0.25 normal + 0.75 pareto, SD `amount`.
    ParetoNormal,
}

impl Dist {
    /// Its name in flags.
    pub fn name(self) -> &'static str {
        match self {
            Dist::Uniform => "uniform",
            Dist::Normal => "normal",
            Dist::Pareto => "pareto",
            Dist::ParetoNormal => "paretonormal",
        }
    }
}

/// Random variation added to the delay of each packet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Jitter {
    /// The distribution.
    pub dist: Dist,
    /// Half-width (uniform) or standard deviation (the others).
    pub amount: Nanos,
    /// Correlation of successive packets, 0 to 1.
    pub correlation: f64,
}

impl Jitter {
    /// Uniform jitter of half-width `amount`, uncorrelated.
    pub fn uniform(amount: Nanos) -> Jitter {
        Jitter {
            dist: Dist::Uniform,
            amount,
            correlation: 0.0,
        }
    }

    /// Normal jitter of SD `amount`, uncorrelated.
    pub fn normal(amount: Nanos) -> Jitter {
        Jitter {
            dist: Dist::Normal,
            amount,
            correlation: 0.0,
        }
    }
}

impl std::str::FromStr for Jitter {
    type Err = units::UnitError;

    /// Parses `[KIND:]AMOUNT[,CORRELATION]`: `2ms` (uniform ±2 ms),
    /// `normal:2ms`, `pareto:5ms,25%`.
    fn from_str(s: &str) -> Result<Jitter, units::UnitError> {
        let (head, corr) = match s.split_once(',') {
            Some((h, c)) => (h, Some(c)),
            None => (s, None),
        };
        let (kind, amount) = head.split_once(':').unwrap_or(("uniform", head));
        let dist = match kind {
            "uniform" => Dist::Uniform,
            "normal" => Dist::Normal,
            "pareto" => Dist::Pareto,
            "paretonormal" => Dist::ParetoNormal,
            _ => {
                return Err(units::UnitError::BadUnit {
                    unit: kind.to_string(),
                    input: s.to_string(),
                    expected: "a jitter such as 2ms, normal:2ms, pareto:5ms or paretonormal:5ms,25% (KIND uniform, normal, pareto, paretonormal; optional correlation)",
                });
            }
        };
        let amount = units::parse_duration(amount)?;
        let correlation = corr.map(units::parse_percent).transpose()?.unwrap_or(0.0);
        if correlation >= 1.0 {
            return Err(units::UnitError::Range {
                input: s.to_string(),
                why: "a correlation of 100% would freeze the jitter: give less than 100%",
            });
        }
        Ok(Jitter {
            dist,
            amount,
            correlation,
        })
    }
}

impl std::fmt::Display for Jitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.dist.name(), units::fmt_nanos(self.amount))?;
        if self.correlation > 0.0 {
            write!(f, ",{}", units::Fraction(self.correlation))?;
        }
        Ok(())
    }
}

/// Pareto of shape 3 and scale 1 (mean 1.5, SD √3/4) is clipped at 4 SD
/// above its mean, as netem's table is; mean and SD of the clipped
/// variable (`E[min(X,c)] = 1 + (1 - c⁻²)/2`, `E[min(X,c)²] = 1 + 2(1 -
/// c⁻¹)`) standardise it, so `amount` is the SD of what is drawn.
const PARETO_CLIP: f64 = 1.5 + 4.0 * 0.866_025_403_784_438_6;

fn pareto_moments() -> (f64, f64) {
    let c = PARETO_CLIP;
    let m = 1.0 + (1.0 - c.powi(-2)) / 2.0;
    let m2 = 1.0 + 2.0 * (1.0 - 1.0 / c);
    (m, (m2 - m * m).sqrt())
}
/// SD of 0.25 N + 0.75 P with both of SD 1: √(0.25² + 0.75²).
const MIX_SD: f64 = 0.790_569_415_042_094_9;
const CLIP: f64 = 4.0;

/// The state of one direction's jitter (the AR(1) latent variable).
#[derive(Debug, Clone, Default)]
pub(crate) struct JitterState {
    z: Option<f64>,
}

impl JitterState {
    /// The next packet's jitter, ns (may be negative).
    pub(crate) fn sample(&mut self, j: &Jitter, rng: &mut ChaCha8Rng) -> i64 {
        if j.amount == 0 {
            return 0;
        }
        let rho = j.correlation;
        if j.dist == Dist::Uniform && rho == 0.0 {
            let a = j.amount as i64;
            return rng.random_range(-a..=a);
        }
        let e: f64 = StandardNormal.sample(rng);
        let z = match self.z {
            Some(prev) if rho > 0.0 => rho * prev + (1.0 - rho * rho).sqrt() * e,
            _ => e,
        };
        self.z = Some(z);
        let unit = match j.dist {
            Dist::Uniform => 2.0 * phi(z) - 1.0,
            Dist::Normal => z,
            Dist::Pareto => pareto_std(phi(z)),
            Dist::ParetoNormal => {
                // The normal part is its own draw (netem's table mixes
                // two independent variables).
                let n: f64 = StandardNormal.sample(rng);
                (0.25 * n + 0.75 * pareto_std(phi(z))) / MIX_SD
            }
        };
        // The Pareto part is clipped where it is drawn.
        let unit = if j.dist == Dist::Normal {
            unit.clamp(-CLIP, CLIP)
        } else {
            unit
        };
        (unit * j.amount as f64).round() as i64
    }
}

/// Pareto (shape 3) at quantile `u`, standardised to mean 0, SD 1.
fn pareto_std(u: f64) -> f64 {
    let x = (1.0 - u.min(1.0 - 1e-12)).powf(-1.0 / 3.0).min(PARETO_CLIP);
    let (m, sd) = pareto_moments();
    (x - m) / sd
}

/// The standard normal CDF (Abramowitz and Stegun 7.1.26 for erf, error
/// below 1.5e-7, far below what a jitter draw can resolve).
pub(crate) fn phi(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draws(j: &Jitter, n: usize) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut st = JitterState::default();
        (0..n)
            .map(|_| st.sample(j, &mut rng) as f64 / j.amount as f64)
            .collect()
    }

    fn mean_sd(v: &[f64]) -> (f64, f64) {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64;
        (m, var.sqrt())
    }

    fn lag1(v: &[f64]) -> f64 {
        let (m, sd) = mean_sd(v);
        let c = v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / (v.len() - 1) as f64;
        c / (sd * sd)
    }

    #[test]
    fn parse_forms() {
        let j: Jitter = "2ms".parse().unwrap();
        assert_eq!(j, Jitter::uniform(2_000_000));
        let j: Jitter = "pareto:5ms,25%".parse().unwrap();
        assert_eq!(
            (j.dist, j.amount, j.correlation),
            (Dist::Pareto, 5_000_000, 0.25)
        );
        assert_eq!(j.to_string(), "pareto:5ms,25%");
        assert!("weird:2ms".parse::<Jitter>().is_err());
        assert!("2ms,100%".parse::<Jitter>().is_err());
        assert!("2ms,x".parse::<Jitter>().is_err());
    }

    #[test]
    fn each_distribution_has_its_spread_with_and_without_correlation() {
        for dist in [
            Dist::Uniform,
            Dist::Normal,
            Dist::Pareto,
            Dist::ParetoNormal,
        ] {
            for rho in [0.0, 0.5] {
                let j = Jitter {
                    dist,
                    amount: 1_000_000,
                    correlation: rho,
                };
                let v = draws(&j, 200_000);
                let (m, sd) = mean_sd(&v);
                // Uniform on [-1, 1] has SD 1/√3; the others SD 1 (less
                // the 4 SD clip, a fraction of a percent).
                let want = if dist == Dist::Uniform {
                    1.0 / 3f64.sqrt()
                } else {
                    1.0
                };
                assert!(m.abs() < 0.03, "{dist:?} rho {rho}: mean {m}");
                assert!(
                    (sd - want).abs() < 0.04 * want,
                    "{dist:?} rho {rho}: sd {sd}"
                );
                let r = lag1(&v);
                // The inverse CDF keeps the order, so the correlation
                // survives, a little weaker than the latent ρ off the
                // normal (the mix's independent normal part weakens it more).
                let floor = match dist {
                    Dist::Normal => rho - 0.02,
                    Dist::ParetoNormal => rho * 0.4,
                    _ => rho * 0.6,
                };
                assert!(r > floor && r < rho + 0.02, "{dist:?}: lag-1 {r} for {rho}");
            }
        }
    }

    #[test]
    fn pareto_has_its_long_tail_on_the_late_side() {
        let j = Jitter {
            dist: Dist::Pareto,
            amount: 1_000_000,
            correlation: 0.0,
        };
        let v = draws(&j, 100_000);
        let min = v.iter().copied().fold(f64::MAX, f64::min);
        let (m, sd) = pareto_moments();
        assert!(min > (1.0 - m) / sd - 1e-3, "{min}");
        assert!(min < -0.6, "{min}");
        // Normal: 2.3 % beyond 2 SD; this Pareto: P(X > m + 2 sd) = (m + 2 sd)^-3.
        let beyond2 = v.iter().filter(|x| **x > 2.0).count() as f64 / v.len() as f64;
        let want = (m + 2.0 * sd).powi(-3);
        assert!((beyond2 - want).abs() < 0.004, "{beyond2} vs {want}");
        assert!(want > 0.03, "{want}");
    }

    #[test]
    fn phi_is_the_normal_cdf() {
        assert!((phi(0.0) - 0.5).abs() < 1e-7);
        assert!((phi(1.96) - 0.975).abs() < 1e-4);
        assert!((phi(-1.0) - 0.158_655).abs() < 1e-5);
    }
}
