//! Every experiment's analysis and render, replayed on a recorded run:
//! `tests/fixtures/lab-default.json` holds each experiment's entry of
//! the `results.json` that `tcpwise lab` (no flags) wrote on this
//! machine (its plots left out). Replaying an entry must give the same
//! named figures, the same verdict and the same section of the report,
//! byte for byte, so a change to an analysis or a render that moves what
//! a recorded run reports fails here, and an experiment without a
//! recording fails too. A deliberate change of the report's wording
//! records the fixture anew (`tcpwise lab`, then keep its
//! `results.json`'s entries).

use crate::{LabOptions, all};

fn recorded() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/lab-default.json"
    );
    let text = std::fs::read_to_string(path).expect("the fixture is in the repository");
    serde_json::from_str(&text).expect("the fixture is JSON")
}

/// The options of the recorded run, as far as plans read them: the
/// default seed, and the cellular trace pair it found (plans only look
/// that the files are there, so empty ones stand in: a clean clone has
/// no `../shared/traces`).
fn opts(dir: &std::path::Path) -> LabOptions {
    std::fs::create_dir_all(dir).expect("a temporary directory");
    for end in ["up", "down"] {
        let name = format!("{}.{end}", crate::responsiveness::TRACE);
        std::fs::write(dir.join(name), b"").expect("a stand-in trace");
    }
    LabOptions {
        traces: Some(dir.into()),
        ..LabOptions::for_tests(false, None)
    }
}

#[test]
fn every_experiment_replays_its_recorded_run() {
    let fx = recorded();
    let dir = std::env::temp_dir().join(format!("tcpwise-fixtures-{}", std::process::id()));
    let opts = opts(&dir);
    for e in all() {
        let key = e.name().replace('-', "_");
        let entry = &fx["experiments"][&key];
        assert!(entry.is_object(), "no recording of {}", e.name());
        let a = e
            .replay(&opts, entry)
            .unwrap_or_else(|err| panic!("{}: {err}", e.name()));
        let summary = serde_json::to_value(&a.summary).expect("serializes");
        assert_eq!(summary, entry["summary"], "{}: the named figures", e.name());
        let verdict = serde_json::to_value(&a.rendered.headline.verdict).expect("serializes");
        assert_eq!(
            verdict,
            entry["headline"]["verdict"],
            "{}: the verdict",
            e.name()
        );
        assert_eq!(
            a.rendered.markdown,
            entry["markdown"].as_str().unwrap_or_default(),
            "{}: the report's section",
            e.name()
        );
        println!(
            "{}: {} figures, the verdict ({}) and the section replayed",
            e.name(),
            a.summary.len(),
            entry["headline"]["verdict"]["outcome"]
        );
    }
    std::fs::remove_dir_all(&dir).expect("the stand-ins go");
}

#[test]
fn a_recording_that_does_not_read_back_is_refused_in_words() {
    let e = &all()[0];
    let err = e
        .replay(
            &LabOptions::for_tests(false, None),
            &serde_json::json!({"details": {"static": 3}}),
        )
        .expect_err("refused")
        .to_string();
    assert!(err.contains("does not read back"), "{err}");
}
