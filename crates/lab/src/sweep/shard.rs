//! `--shard K/N`: the K-th of N disjoint subsets of a matrix's cells, the
//! same subset on every machine (cell i goes to shard i mod N + 1, so
//! each shard gets every path and workload in turn, not one corner of the
//! matrix). K counts from 1, as Slurm's `--array=1-N` and nextest's and
//! Playwright's partitions do; a Kubernetes Indexed Job passes
//! `$((JOB_COMPLETION_INDEX + 1))`.

use serde::{Deserialize, Serialize};

/// One shard of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which, from 1.
    pub k: usize,
    /// Of how many.
    pub n: usize,
}

/// `--shard` not given as K/N.
#[derive(Debug, thiserror::Error)]
#[error("'{0}': --shard takes K/N with 1 <= K <= N (1/4 to 4/4)")]
pub struct BadShard(pub String);

impl std::str::FromStr for Shard {
    type Err = BadShard;
    fn from_str(s: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (usize, usize) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl Shard {
    /// Whether the cell at `index` (in expansion order) is this shard's.
    pub fn holds(&self, index: usize) -> bool {
        index % self.n == self.k - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cells() {
        let n = 4;
        let mut seen = [0; 48];
        for k in 1..=n {
            let s: Shard = format!("{k}/{n}").parse().unwrap();
            for (i, hit) in seen.iter_mut().enumerate() {
                if s.holds(i) {
                    *hit += 1;
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        for bad in ["0/4", "5/4", "1", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
