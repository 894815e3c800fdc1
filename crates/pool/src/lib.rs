//! # tcpwise-pool: which idle connection to reuse
//!
//! Firefox's field report: among idle keep-alive connections to one server,
//! reuse the one that moved the largest burst, because the server's
//! congestion window for it is the largest (servers often skip the return
//! to slow start after idle). On a 250 ms path the next 25 KB object then
//! arrives in one round trip instead of three. Today's clients choose
//! otherwise: hyper-util, Go's net/http and Chromium reuse the most
//! recently used connection (LIFO), curl the oldest (FIFO).
//!
//! [`IdlePool`] makes the choice explicit and explainable. It is sans-IO:
//! it holds opaque connections with their [`History`], takes `now` from
//! the caller, and asks the caller whether a connection is still alive.
//!
//! Policies ([`Policy`]), each a score where higher means "reuse first":
//! - `Fifo`: longest idle first (curl);
//! - `Lifo`: most recently used first (hyper-util, Go, Chromium);
//! - `MaxBurst`: largest per-activation burst (Firefox);
//! - `Warmest`: bytes read / idle seconds^exponent (Chromium's old trial);
//! - `Kernel`: ours. The sender's congestion window is what we want, and
//!   the best receiver-side evidence of it is the most payload the
//!   connection delivered within one smoothed RTT (a window's worth), from
//!   `TCP_INFO`'s RTT and the bytes read. When the server is assumed to
//!   decay idle windows (Linux's default `tcp_slow_start_after_idle=1`),
//!   the estimate is decayed the way Linux's `tcp_cwnd_restart()` does it:
//!   halved once for every RTO of idle time beyond the first, never below
//!   the initial window (10 segments). So "restart after idle" is not a
//!   reset: after one second idle on a 250 ms path (RTO about 750 ms) a
//!   Linux server has halved its window once, not returned to 10 segments.
//!   Ties go to the most recently used.
//!
//! Eviction, when an origin holds more than `max_idle`, drops the coldest
//! connection under the active policy (the lowest score). Expired
//! (`idle_timeout`, `max_lifetime`) and dead connections are never handed out.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use serde::Serialize;
use std::collections::HashMap;
use std::hash::Hash;
/// Nanoseconds on the caller's clock (the one time type, from `tcpwise-units`).
pub use tcpwise_units::Nanos;

/// Initial congestion window Linux servers start with, bytes (10 × 1448).
pub const INITIAL_WINDOW_BYTES: u64 = 10 * 1448;

/// What the pool knows of a connection's past.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct History {
    /// Connection id (for reports).
    pub id: u64,
    /// When it was established (ns on the pool's clock).
    #[serde(rename = "created_at_ns")]
    pub created_at: Nanos,
    /// Largest per-activation burst (request start to response end), bytes.
    #[serde(rename = "max_burst_bytes")]
    pub max_burst: u64,
    /// Total bytes read.
    #[serde(rename = "bytes_read")]
    pub bytes_read: u64,
    /// Most payload delivered within one smoothed RTT, bytes (from TCP_INFO).
    #[serde(rename = "max_per_rtt_bytes")]
    pub max_per_rtt: u64,
    /// Latest smoothed RTT, ns.
    #[serde(rename = "srtt_ns")]
    pub srtt: Nanos,
    /// Latest retransmission timeout, ns.
    #[serde(rename = "rto_ns")]
    pub rto: Nanos,
    /// Requests served.
    pub requests: u64,
}

/// Selection policy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum Policy {
    /// Longest idle first.
    Fifo,
    /// Most recently used first.
    Lifo,
    /// Largest burst first (Firefox).
    MaxBurst,
    /// Bytes read / idle seconds^exponent (Chromium's trial).
    Warmest {
        /// Exponent of the idle time.
        exponent: f64,
    },
    /// Largest per-RTT delivery, discounted after an idle RTO when the
    /// server is assumed to restart slow start.
    Kernel {
        /// Assume the server restarts slow start after an idle RTO.
        assume_idle_restart: bool,
    },
}

/// A pool policy that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl std::fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown pool policy '{}': use fifo, lifo, max-burst, warmest[:EXPONENT] or kernel[:no-restart]",
            self.0
        )
    }
}

impl std::error::Error for UnknownPolicy {}

impl std::str::FromStr for Policy {
    type Err = UnknownPolicy;

    /// Parses `fifo`, `lifo`, `max-burst`, `warmest[:EXP]`, `kernel`,
    /// `kernel:no-restart`.
    fn from_str(s: &str) -> Result<Policy, UnknownPolicy> {
        match s {
            "fifo" => Ok(Policy::Fifo),
            "lifo" => Ok(Policy::Lifo),
            "max-burst" => Ok(Policy::MaxBurst),
            "warmest" => Ok(Policy::Warmest { exponent: 1.0 }),
            "kernel" => Ok(Policy::Kernel {
                assume_idle_restart: true,
            }),
            "kernel:no-restart" => Ok(Policy::Kernel {
                assume_idle_restart: false,
            }),
            _ => match s.strip_prefix("warmest:").map(str::parse::<f64>) {
                Some(Ok(e)) if e.is_finite() && e >= 0.0 => Ok(Policy::Warmest { exponent: e }),
                _ => Err(UnknownPolicy(s.to_string())),
            },
        }
    }
}

impl Policy {
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Lifo => "lifo",
            Policy::MaxBurst => "max-burst",
            Policy::Warmest { .. } => "warmest",
            Policy::Kernel { .. } => "kernel",
        }
    }

    /// Score of an idle connection (higher: reuse first) and why.
    pub fn score(&self, h: &History, idle_since: Nanos, now: Nanos) -> (f64, String) {
        let idle = now.saturating_sub(idle_since);
        let idle_s = idle as f64 / 1e9;
        // Small recency term so ties go to the most recently used.
        let recency = idle_since as f64 * 1e-18;
        match *self {
            Policy::Fifo => (
                idle as f64,
                format!("idle {idle_s:.3} s (longest idle first)"),
            ),
            Policy::Lifo => (
                idle_since as f64,
                format!("idle {idle_s:.3} s (most recently used first)"),
            ),
            Policy::MaxBurst => (
                h.max_burst as f64 + recency,
                format!("largest burst {} B", h.max_burst),
            ),
            Policy::Warmest { exponent } => {
                let s = h.bytes_read as f64 / idle_s.max(1e-3).powf(exponent);
                (
                    s + recency,
                    format!(
                        "{} B read / {idle_s:.3} s^{exponent} = {s:.0}",
                        h.bytes_read
                    ),
                )
            }
            Policy::Kernel {
                assume_idle_restart,
            } => {
                // The window is never below the initial window.
                let est = h.max_per_rtt.max(INITIAL_WINDOW_BYTES);
                if assume_idle_restart && h.rto > 0 && idle > h.rto {
                    // tcp_cwnd_restart(): while ((delta -= rto) > 0 && cwnd > iw) cwnd >>= 1;
                    let halvings = (idle - 1) / h.rto;
                    let w = (est >> halvings.min(63)).max(INITIAL_WINDOW_BYTES);
                    (
                        w as f64 + recency,
                        format!(
                            "up to {} B per RTT, idle {idle_s:.3} s = {halvings} halving(s) at RTO {:.0} ms: about {w} B",
                            h.max_per_rtt,
                            h.rto as f64 / 1e6
                        ),
                    )
                } else {
                    (
                        est as f64 + recency,
                        format!("delivered up to {} B per RTT", h.max_per_rtt),
                    )
                }
            }
        }
    }
}

/// Pool limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limits {
    /// Idle connections kept per origin.
    pub max_idle: usize,
    /// Idle longer than this: closed.
    pub idle_timeout: Nanos,
    /// Older than this: closed.
    pub max_lifetime: Nanos,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_idle: 6,
            idle_timeout: 90_000_000_000,
            max_lifetime: 600_000_000_000,
        }
    }
}

/// Why a connection was chosen.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Choice {
    /// Policy name.
    pub policy: &'static str,
    /// Chosen connection id.
    pub chosen: u64,
    /// Its reason.
    pub reason: String,
    /// Every live candidate: (id, score).
    pub candidates: Vec<(u64, f64)>,
}

struct Entry<C> {
    conn: C,
    history: History,
    idle_since: Nanos,
}

/// Idle connections keyed by origin.
pub struct IdlePool<K, C> {
    policy: Policy,
    limits: Limits,
    idle: HashMap<K, Vec<Entry<C>>>,
}

/// Connections the pool let go of, for the caller to close.
pub type Closed<C> = Vec<(C, History)>;

impl<K: Eq + Hash + Clone, C> IdlePool<K, C> {
    /// An empty pool.
    pub fn new(policy: Policy, limits: Limits) -> IdlePool<K, C> {
        IdlePool {
            policy,
            limits,
            idle: HashMap::new(),
        }
    }

    /// The active policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Idle connections held for `key`.
    pub fn idle_count(&self, key: &K) -> usize {
        self.idle.get(key).map_or(0, Vec::len)
    }

    fn expired(&self, e: &Entry<C>, now: Nanos) -> bool {
        now.saturating_sub(e.idle_since) > self.limits.idle_timeout
            || now.saturating_sub(e.history.created_at) > self.limits.max_lifetime
    }

    /// Returns a connection to the pool. Returns what had to be closed
    /// (the returned one itself if it is already too old, or the coldest
    /// when the origin is full).
    pub fn checkin(&mut self, now: Nanos, key: K, conn: C, history: History) -> Closed<C> {
        let mut closed = self.expire_key(&key, now);
        let e = Entry {
            conn,
            history,
            idle_since: now,
        };
        if self.expired(&e, now) || self.limits.max_idle == 0 {
            closed.push((e.conn, e.history));
            return closed;
        }
        let list = self.idle.entry(key).or_default();
        list.push(e);
        while list.len() > self.limits.max_idle {
            let policy = self.policy;
            let coldest = list
                .iter()
                .enumerate()
                .map(|(i, e)| (i, policy.score(&e.history, e.idle_since, now).0))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i)
                .expect("non-empty");
            let e = list.swap_remove(coldest);
            closed.push((e.conn, e.history));
        }
        closed
    }

    fn expire_key(&mut self, key: &K, now: Nanos) -> Closed<C> {
        let Some(list) = self.idle.get_mut(key) else {
            return Vec::new();
        };
        let limits = self.limits;
        let mut closed = Vec::new();
        let mut i = 0;
        while i < list.len() {
            let e = &list[i];
            if now.saturating_sub(e.idle_since) > limits.idle_timeout
                || now.saturating_sub(e.history.created_at) > limits.max_lifetime
            {
                let e = list.swap_remove(i);
                closed.push((e.conn, e.history));
            } else {
                i += 1;
            }
        }
        closed
    }

    /// Closes everything expired at `now`, across origins.
    pub fn expire(&mut self, now: Nanos) -> Closed<C> {
        let keys: Vec<K> = self.idle.keys().cloned().collect();
        keys.iter().flat_map(|k| self.expire_key(k, now)).collect()
    }

    /// Takes the best idle connection for `key` under the policy.
    /// `alive` is asked about candidates; dead ones are returned in the
    /// second element for closing and never handed out.
    pub fn checkout(
        &mut self,
        now: Nanos,
        key: &K,
        mut alive: impl FnMut(&C) -> bool,
    ) -> (Option<(C, History, Choice)>, Closed<C>) {
        let mut closed = self.expire_key(key, now);
        let Some(list) = self.idle.get_mut(key) else {
            return (None, closed);
        };
        let mut i = 0;
        while i < list.len() {
            if alive(&list[i].conn) {
                i += 1;
            } else {
                let e = list.swap_remove(i);
                closed.push((e.conn, e.history));
            }
        }
        let policy = self.policy;
        let scored: Vec<(usize, f64, String)> = list
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let (s, why) = policy.score(&e.history, e.idle_since, now);
                (i, s, why)
            })
            .collect();
        let Some(best) = scored.iter().max_by(|a, b| a.1.total_cmp(&b.1)).cloned() else {
            return (None, closed);
        };
        let candidates = scored
            .iter()
            .map(|(i, s, _)| (list[*i].history.id, *s))
            .collect();
        let e = list.swap_remove(best.0);
        let choice = Choice {
            policy: policy.name(),
            chosen: e.history.id,
            reason: best.2,
            candidates,
        };
        (Some((e.conn, e.history, choice)), closed)
    }
}

#[cfg(test)]
mod tests;
