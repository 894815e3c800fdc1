//! `LabPlan::run`'s schedule: shared experiments at once, then the alone
//! ones; the report's order; a failure stops the others.
use super::*;
use std::sync::Mutex;
use std::time::Duration;

/// An experiment that logs its start and end, waits `ms` (checking
/// for a stop), and fails if told to.
struct Fake {
    name: &'static str,
    alone: bool,
    ms: u64,
    fail: bool,
    log: Arc<Mutex<Vec<String>>>,
}

impl Experiment for Fake {
    fn name(&self) -> &'static str {
        self.name
    }
    fn alone(&self) -> bool {
        self.alone
    }
    fn cost(&self, _: &LabOptions) -> Cost {
        Cost {
            need: self.ms as f64 / 1e3,
            planned: self.ms as f64 / 1e3,
            first_round: 0.0,
        }
    }
    fn replay(&self, _: &LabOptions, _: &serde_json::Value) -> Result<stages::Analysed, LabError> {
        Err(LabError::Usage("nothing recorded".into()))
    }
    fn run(&self, opts: &LabOptions, _: &dyn Progress) -> Result<ExperimentResult, LabError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", self.name));
        for _ in 0..self.ms / 10 {
            if let Err(e) = opts.check() {
                self.log
                    .lock()
                    .unwrap()
                    .push(format!("stopped {}", self.name));
                return Err(e);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.fail {
            return Err(LabError::TooFew(format!("{} failed", self.name)));
        }
        self.log.lock().unwrap().push(format!("end {}", self.name));
        let r = Rendered {
            markdown: format!("## {}\n", self.name),
            plots: vec![],
            headline: Headline {
                field_report: "seed".into(),
                ours: "ours".into(),
                verdict: None,
                conditions: Vec::new(),
            },
        };
        Ok(ExperimentResult::of(
            self.name,
            Summary::new(),
            serde_json::Value::Null,
            vec![],
            r,
        ))
    }
}

struct Quiet;
impl Progress for Quiet {
    fn step(&self, _: &str, _: u64) -> usize {
        0
    }
    fn inc(&self, _: usize, _: u64) {}
    fn done(&self, _: usize, _: &str) {}
}

fn run(spec: &[(&'static str, bool, u64, bool)]) -> (Result<Vec<String>, LabError>, Vec<String>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let chosen: Vec<Box<dyn Experiment>> = spec
        .iter()
        .map(|&(name, alone, ms, fail)| {
            Box::new(Fake {
                name,
                alone,
                ms,
                fail,
                log: log.clone(),
            }) as Box<dyn Experiment>
        })
        .collect();
    let out = std::env::temp_dir().join(format!(
        "tcpwise-lab-schedule-{}-{}",
        std::process::id(),
        spec.len() + usize::from(spec.iter().any(|s| s.3))
    ));
    std::fs::create_dir_all(&out).unwrap();
    let opts = LabOptions {
        out: out.clone(),
        slots: Some(sweep::slots::Slots::for_this_machine()),
        ..LabOptions::for_tests(true, None)
    };
    let r = LabPlan { chosen }
        .run(&opts, &Quiet)
        .map(|v| v.into_iter().map(|e| e.name).collect());
    let order = crate::report::Saved::load(&out).map(|s| s.order.clone());
    let _ = std::fs::remove_dir_all(&out);
    if let (Ok(names), Ok(order)) = (&r, order) {
        assert_eq!(names, &order, "results.json keeps the chosen order");
    }
    let log = log.lock().unwrap().clone();
    (r, log)
}

#[test]
fn shared_experiments_run_at_once_then_the_alone_ones_in_order() {
    let (r, log) = run(&[
        ("slow", false, 300, false),
        ("by-itself", true, 50, false),
        ("fast", false, 100, false),
    ]);
    assert_eq!(r.unwrap(), ["slow", "by-itself", "fast"]);
    let at = |what: &str| log.iter().position(|l| l == what).unwrap();
    // Both shared ones start before either ends; the alone one starts
    // after both ended.
    assert!(at("start slow") < at("end fast") && at("start fast") < at("end slow"));
    assert!(at("start by-itself") > at("end slow").max(at("end fast")));
}

#[test]
fn a_failure_stops_the_others_and_is_what_the_run_returns() {
    let (r, log) = run(&[
        ("long", false, 5_000, false),
        ("broken", false, 50, true),
        ("after", true, 10, false),
    ]);
    assert!(
        matches!(r, Err(LabError::TooFew(ref m)) if m == "broken failed"),
        "{r:?}"
    );
    assert!(log.contains(&"stopped long".to_string()), "{log:?}");
    assert!(!log.contains(&"start after".to_string()), "{log:?}");
}

#[test]
fn quick_leaves_out_the_long_decisions_and_runs_the_cheap_ones_first() {
    let opts = LabOptions::for_tests(true, None);
    let chosen = select(&opts, &[]).expect("valid");
    let names: Vec<&str> = chosen.iter().map(|e| e.name()).collect();
    for n in NOT_QUICK {
        assert!(!names.contains(n), "{names:?}");
    }
    let alone: Vec<f64> = chosen
        .iter()
        .filter(|e| e.alone())
        .map(|e| e.cost(&opts).need)
        .collect();
    assert!(alone.is_sorted(), "{names:?}: {alone:?}");
    let plan = LabPlan { chosen };
    assert!(
        plan.schedule(&opts)
            .contains("--quick leaves out completion, head-of-line, sharing")
    );
    // Named, they run.
    let named = select(&opts, &["completion".into()]).expect("valid");
    assert_eq!(named.len(), 1);
}
