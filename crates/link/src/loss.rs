//! Random loss: Bernoulli and Gilbert–Elliott, applied as packets enter the
//! link (like netem and Mahimahi's `mm-loss`), before the queue.

use rand::Rng;
use serde::Serialize;

/// How packets are lost at the link's entrance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum LossModel {
    /// No random loss.
    #[default]
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Each packet lost with probability `p`, correlated with the last
    /// packet's fate by `rho` (netem's `loss P CORR`, but keeping the mean:
    /// lost after a loss with `p + rho·(1-p)`, after a delivery with
    /// `p·(1-rho)`; netem's own correlation lowers the loss rate).
    Correlated {
        /// Long-run loss probability.
        p: f64,
        /// Lag-1 correlation of successive packets' fates.
        rho: f64,
    },
    /// Two-state Gilbert–Elliott model with netem's `gemodel` parameters.
    GilbertElliott {
        /// Probability of moving from Good to Bad, per packet.
        p: f64,
        /// Probability of moving from Bad to Good, per packet.
        r: f64,
        /// Loss probability in Bad (netem's `1-h`).
        loss_bad: f64,
        /// Loss probability in Good (netem's `1-k`).
        loss_good: f64,
    },
}

impl std::str::FromStr for LossModel {
    type Err = tcpwise_units::UnitError;

    /// Parses `1%`, `0.01`, `0`, `1%,25%` (correlated) or `ge:P,R[,H[,K]]` (netem's gemodel order:
    /// Good→Bad, Bad→Good, loss in Bad (default 100%), loss in Good (default 0%)).
    fn from_str(s: &str) -> Result<LossModel, tcpwise_units::UnitError> {
        use tcpwise_units::parse_percent;
        if let Some(rest) = s.strip_prefix("ge:") {
            let parts: Vec<&str> = rest.split(',').collect();
            if parts.len() < 2 || parts.len() > 4 {
                return Err(tcpwise_units::UnitError::Range {
                    input: s.to_string(),
                    why: "Gilbert-Elliott takes ge:P,R[,H[,K]] (P good->bad, R bad->good, H loss in bad, K loss in good)",
                });
            }
            let p = parse_percent(parts[0])?;
            let r = parse_percent(parts[1])?;
            let loss_bad = parts
                .get(2)
                .map(|x| parse_percent(x))
                .transpose()?
                .unwrap_or(1.0);
            let loss_good = parts
                .get(3)
                .map(|x| parse_percent(x))
                .transpose()?
                .unwrap_or(0.0);
            return Ok(LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            });
        }
        if let Some((p, rho)) = s.split_once(',') {
            let (p, rho) = (parse_percent(p)?, parse_percent(rho)?);
            if rho >= 1.0 {
                return Err(tcpwise_units::UnitError::Range {
                    input: s.to_string(),
                    why: "a loss correlation of 100% would lose all or nothing: give less than 100%",
                });
            }
            return Ok(if p == 0.0 {
                LossModel::None
            } else if rho == 0.0 {
                LossModel::Bernoulli { p }
            } else {
                LossModel::Correlated { p, rho }
            });
        }
        let p = parse_percent(s)?;
        Ok(if p == 0.0 {
            LossModel::None
        } else {
            LossModel::Bernoulli { p }
        })
    }
}

impl LossModel {
    /// Long-run loss probability of the model.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } | LossModel::Correlated { p, .. } => p,
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                if p + r == 0.0 {
                    loss_good
                } else {
                    let bad = p / (p + r);
                    bad * loss_bad + (1.0 - bad) * loss_good
                }
            }
        }
    }
}

/// Per-link loss state (the Gilbert–Elliott state bit).
#[derive(Debug, Default, Clone)]
pub(crate) struct LossState {
    bad: bool,
}

impl LossState {
    /// Decides whether the next packet is lost.
    pub(crate) fn lose<R: Rng>(&mut self, model: &LossModel, rng: &mut R) -> bool {
        match *model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => rng.random::<f64>() < p,
            LossModel::Correlated { p, rho } => {
                let q = if self.bad {
                    p + rho * (1.0 - p)
                } else {
                    p * (1.0 - rho)
                };
                self.bad = rng.random::<f64>() < q;
                self.bad
            }
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let flip = rng.random::<f64>();
                if self.bad {
                    if flip < r {
                        self.bad = false;
                    }
                } else if flip < p {
                    self.bad = true;
                }
                let l = if self.bad { loss_bad } else { loss_good };
                rng.random::<f64>() < l
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn parse_forms() {
        assert_eq!("0".parse::<LossModel>().unwrap(), LossModel::None);
        assert_eq!(
            "1%".parse::<LossModel>().unwrap(),
            LossModel::Bernoulli { p: 0.01 }
        );
        assert_eq!(
            "ge:1%,10%".parse::<LossModel>().unwrap(),
            LossModel::GilbertElliott {
                p: 0.01,
                r: 0.1,
                loss_bad: 1.0,
                loss_good: 0.0
            }
        );
        assert!("ge:1%".parse::<LossModel>().is_err());
        assert!("ge:1%,2%,3%,4%,5%".parse::<LossModel>().is_err());
        assert!("lots".parse::<LossModel>().is_err());
    }

    #[test]
    fn correlated_loss_keeps_its_mean() {
        let m: LossModel = "2%,50%".parse().unwrap();
        assert_eq!(m, LossModel::Correlated { p: 0.02, rho: 0.5 });
        assert!("2%,100%".parse::<LossModel>().is_err());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut st = LossState::default();
        let n = 400_000;
        let v: Vec<bool> = (0..n).map(|_| st.lose(&m, &mut rng)).collect();
        let frac = v.iter().filter(|l| **l).count() as f64 / n as f64;
        assert!((frac - 0.02).abs() < 0.002, "{frac}");
        // After a loss, the next is lost with p + rho(1-p) = 0.51.
        let after: Vec<bool> = v.windows(2).filter(|w| w[0]).map(|w| w[1]).collect();
        let cond = after.iter().filter(|l| **l).count() as f64 / after.len() as f64;
        assert!((cond - 0.51).abs() < 0.03, "{cond}");
    }

    #[test]
    fn gilbert_elliott_mean_and_burstiness() {
        let m = "ge:1%,20%".parse::<LossModel>().unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut st = LossState::default();
        let n = 200_000;
        let mut lost = 0;
        let mut runs = 0;
        let mut prev = false;
        for _ in 0..n {
            let l = st.lose(&m, &mut rng);
            if l {
                lost += 1;
                if !prev {
                    runs += 1;
                }
            }
            prev = l;
        }
        let frac = lost as f64 / n as f64;
        let mean = m.mean_loss();
        assert!((frac - mean).abs() < 0.15 * mean, "{frac} vs {mean}");
        // Losses come in bursts of mean length 1/r = 5.
        let burst = lost as f64 / runs as f64;
        assert!(burst > 3.5 && burst < 6.5, "mean burst {burst}");
    }
}
