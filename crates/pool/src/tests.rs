use super::*;
use proptest::prelude::*;

const S: Nanos = 1_000_000_000;

fn hist(id: u64, burst: u64, per_rtt: u64) -> History {
    History {
        id,
        created_at: 0,
        max_burst: burst,
        bytes_read: burst,
        max_per_rtt: per_rtt,
        srtt: 250_000_000,
        rto: 450_000_000,
        requests: 1,
    }
}

/// The seed's situation: six connections, one moved 2 MB, the small ones
/// went idle first.
fn firefox_pool(policy: Policy) -> IdlePool<&'static str, u64> {
    let mut p = IdlePool::new(policy, Limits::default());
    let bursts = [3_000, 5_000, 8_000, 12_000, 20_000, 2_100_000];
    for (i, b) in bursts.iter().enumerate() {
        let closed = p.checkin(
            i as u64 * 100_000_000,
            "o",
            i as u64,
            hist(i as u64, *b, (*b).min(300_000)),
        );
        assert!(closed.is_empty());
    }
    p
}

#[test]
fn policies_pick_as_documented() {
    let now = 2 * S;
    let pick = |policy| {
        firefox_pool(policy)
            .checkout(now, &"o", |_| true)
            .0
            .unwrap()
            .2
    };
    assert_eq!(pick(Policy::Fifo).chosen, 0, "oldest idle (curl)");
    assert_eq!(pick(Policy::Lifo).chosen, 5, "most recent (hyper, Go)");
    let c = pick(Policy::MaxBurst);
    assert_eq!(c.chosen, 5, "largest burst (Firefox)");
    assert!(c.reason.contains("2100000"), "{}", c.reason);
    assert_eq!(c.candidates.len(), 6);
    assert_eq!(pick(Policy::Warmest { exponent: 1.0 }).chosen, 5);
    assert_eq!(
        pick(Policy::Kernel {
            assume_idle_restart: false
        })
        .chosen,
        5
    );
}

#[test]
fn kernel_policy_decays_like_tcp_cwnd_restart() {
    let p = Policy::Kernel {
        assume_idle_restart: true,
    };
    let h = hist(1, 2_000_000, 300_000); // rto 450 ms
    // Idle less than an RTO: no decay.
    assert_eq!(p.score(&h, 0, 400_000_000).0.round(), 300_000.0);
    // 1 s idle: 1000 - 450 > 0, 550 - 450 > 0, 100 - 450 < 0: two halvings.
    let (s, why) = p.score(&h, 0, S);
    assert_eq!(s.round(), 75_000.0, "{why}");
    assert!(why.contains("2 halving"), "{why}");
    // Long idle: never below the initial window.
    assert_eq!(
        p.score(&h, 0, 60 * S).0.round(),
        INITIAL_WINDOW_BYTES as f64
    );
    // Without the assumption, history is taken as is.
    let q = Policy::Kernel {
        assume_idle_restart: false,
    };
    assert_eq!(q.score(&h, 0, 60 * S).0.round(), 300_000.0);
    // A long-idle warm connection and a fresh cold one tie at the IW: the
    // most recently used wins.
    let mut pool = IdlePool::new(p, Limits::default());
    pool.checkin(0, "o", 1, hist(1, 2_000_000, 300_000));
    pool.checkin(10 * S, "o", 2, hist(2, 3_000, 3_000));
    assert_eq!(
        pool.checkout(10 * S + 100_000_000, &"o", |_| true)
            .0
            .unwrap()
            .1
            .id,
        2
    );
}

#[test]
fn dead_and_expired_connections_are_never_handed_out() {
    let limits = Limits {
        max_idle: 6,
        idle_timeout: 5 * S,
        max_lifetime: 100 * S,
    };
    let mut p = IdlePool::new(Policy::MaxBurst, limits);
    p.checkin(0, "o", 1, hist(1, 9_000_000, 0));
    p.checkin(4 * S, "o", 2, hist(2, 5_000, 0));
    p.checkin(4 * S, "o", 3, hist(3, 6_000, 0));
    // 1 expired (idle 6 s > 5 s); 3 is dead: 2 is the answer.
    let (got, closed) = p.checkout(6 * S, &"o", |c| *c != 3);
    assert_eq!(got.unwrap().1.id, 2);
    let mut ids: Vec<u64> = closed.iter().map(|c| c.1.id).collect();
    ids.sort();
    assert_eq!(ids, vec![1, 3]);
    assert_eq!(p.idle_count(&"o"), 0);
}

#[test]
fn eviction_drops_the_coldest_under_the_policy() {
    let limits = Limits {
        max_idle: 2,
        ..Limits::default()
    };
    let mut p = IdlePool::new(Policy::MaxBurst, limits);
    p.checkin(0, "o", 1, hist(1, 50, 0));
    p.checkin(1, "o", 2, hist(2, 5_000, 0));
    let closed = p.checkin(2, "o", 3, hist(3, 900, 0));
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].1.id, 1, "smallest burst goes");
    assert_eq!(p.idle_count(&"o"), 2);
}

#[test]
fn policy_names_parse() {
    for s in [
        "fifo",
        "lifo",
        "max-burst",
        "warmest",
        "warmest:2",
        "kernel",
        "kernel:no-restart",
    ] {
        assert!(s.parse::<Policy>().is_ok(), "{s}");
    }
    assert!("random".parse::<Policy>().is_err());
    assert!("warmest:-1".parse::<Policy>().is_err());
}

#[derive(Debug, Clone)]
enum Op {
    In {
        origin: u8,
        dt: u64,
        burst: u64,
        created_ago: u64,
    },
    Out {
        origin: u8,
        dt: u64,
        dead_mask: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..3, 0u64..3 * S, 0u64..3_000_000, 0u64..30 * S).prop_map(
            |(origin, dt, burst, created_ago)| Op::In {
                origin,
                dt,
                burst,
                created_ago
            }
        ),
        (0u8..3, 0u64..3 * S, any::<u8>()).prop_map(|(origin, dt, dead_mask)| Op::Out {
            origin,
            dt,
            dead_mask
        }),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Fifo),
        Just(Policy::Lifo),
        Just(Policy::MaxBurst),
        Just(Policy::Warmest { exponent: 1.0 }),
        Just(Policy::Kernel {
            assume_idle_restart: true
        }),
        Just(Policy::Kernel {
            assume_idle_restart: false
        }),
    ]
}

proptest! {
    #[test]
    fn pool_invariants(ops in prop::collection::vec(op(), 1..200), policy in policy(), max_idle in 1usize..5) {
        let limits = Limits { max_idle, idle_timeout: 4 * S, max_lifetime: 20 * S };
        let mut p: IdlePool<u8, u64> = IdlePool::new(policy, limits);
        // Model: id -> (origin, idle_since, created_at, history)
        let mut model: HashMap<u64, (u8, Nanos, Nanos, History)> = HashMap::new();
        let mut now = 30 * S;
        let mut next_id = 0u64;
        for o in ops {
            match o {
                Op::In { origin, dt, burst, created_ago } => {
                    now += dt;
                    next_id += 1;
                    let h = History { id: next_id, created_at: now - created_ago, max_burst: burst, bytes_read: burst, max_per_rtt: burst / 3, srtt: 100_000_000, rto: 300_000_000, requests: 1 };
                    model.insert(next_id, (origin, now, now - created_ago, h.clone()));
                    for (c, _) in p.checkin(now, origin, next_id, h) {
                        model.remove(&c);
                    }
                    prop_assert!(p.idle_count(&origin) <= max_idle);
                }
                Op::Out { origin, dt, dead_mask } => {
                    now += dt;
                    let dead = |c: &u64| (dead_mask >> (c % 8)) & 1 == 1;
                    // What the model says is eligible.
                    let eligible: Vec<(u64, f64)> = model.iter()
                        .filter(|(_, v)| v.0 == origin)
                        .filter(|(id, v)| !dead(id) && now - v.1 <= limits.idle_timeout && now - v.2 <= limits.max_lifetime)
                        .map(|(id, v)| (*id, policy.score(&v.3, v.1, now).0))
                        .collect();
                    let (got, closed) = p.checkout(now, &origin, |c| !dead(c));
                    for (c, _) in &closed { model.remove(c); }
                    match got {
                        None => prop_assert!(eligible.is_empty(), "pool had nothing but model has {eligible:?}"),
                        Some((c, h, choice)) => {
                            prop_assert!(!dead(&c));
                            prop_assert!(now - h.created_at <= limits.max_lifetime);
                            let (_, idle_since, _, _) = model[&c];
                            prop_assert!(now - idle_since <= limits.idle_timeout);
                            let best = eligible.iter().map(|e| e.1).fold(f64::MIN, f64::max);
                            let mine = policy.score(&h, idle_since, now).0;
                            prop_assert!(mine >= best, "chose {c} scoring {mine} but best is {best}");
                            prop_assert_eq!(choice.chosen, c);
                            model.remove(&c);
                        }
                    }
                }
            }
        }
    }
}
