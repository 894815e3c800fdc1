//! Every experiment's analysis and render, replayed on a recorded run:
//! `tests/fixtures/lab-default.json` holds each experiment's entry of
//! the `results.json` that `tcpwise lab` (no flags) wrote on this
//! machine (its plots left out). Replaying an entry must give the same
//! named figures, the same verdict and the same section of the report,
//! byte for byte, so a change to an analysis or a render that moves what
//! a recorded run reports fails here, and an experiment without a
//! recording fails too. A deliberate change of the report's wording
//! renders the fixture anew from the same recorded measurements:
//!
//! ```text
//! TCPWISE_RERENDER_FIXTURE=1 cargo test -p tcpwise-lab --lib fixtures_tests
//! ```
//!
//! rewrites each entry's `summary`, `headline` and `markdown` from its
//! replay and leaves `details`, `paths` and `decision` (what was measured
//! and decided) as they were; `git diff` then shows every sentence that
//! moved. A change to what is measured records it anew from a run
//! instead:
//!
//! ```text
//! tcpwise lab --out DIR
//! TCPWISE_RECORD_FIXTURE=DIR/results.json TCPWISE_RECORD_NOTE="how it ran" \
//!   cargo test -p tcpwise-lab --lib fixtures_tests
//! ```
//!
//! keeps the run's header and each experiment's entry as written, its
//! plots left out, with the note (the run's command, date, commit, time
//! and steal) as `recorded`; the replay then checks them as ever.

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
    let mut fx = recorded();
    let dir = std::env::temp_dir().join(format!("tcpwise-fixtures-{}", std::process::id()));
    let opts = opts(&dir);
    if let Some(run) = std::env::var_os("TCPWISE_RECORD_FIXTURE") {
        fx = record(std::path::Path::new(&run));
    }
    if std::env::var_os("TCPWISE_RERENDER_FIXTURE").is_some() {
        rerender(&mut fx, &opts);
    }
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

/// Renders every entry anew from its recorded measurements and writes the
/// fixture back (see the module's doc).
/// The fixture from a run's `results.json`, written where the test
/// reads it.
fn record(run: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(run).expect("the run's results.json");
    let r: serde_json::Value = serde_json::from_str(&text).expect("results.json is JSON");
    let mut experiments = serde_json::Map::new();
    for (k, v) in r["experiments"].as_object().expect("experiments") {
        let mut e = v.clone();
        if let Some(o) = e.as_object_mut() {
            o.remove("plots");
        }
        experiments.insert(k.clone(), e);
    }
    let note = std::env::var("TCPWISE_RECORD_NOTE").unwrap_or_default();
    let fx = serde_json::json!({
        "recorded": note,
        "header": r["header"],
        "experiments": experiments,
    });
    write(&fx);
    fx
}

fn write(fx: &serde_json::Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/lab-default.json"
    );
    let text = serde_json::to_string_pretty(fx).expect("serializes") + "\n";
    std::fs::write(path, text).expect("the fixture is writable");
}

fn rerender(fx: &mut serde_json::Value, opts: &LabOptions) {
    for e in all() {
        let key = e.name().replace('-', "_");
        let entry = &mut fx["experiments"][&key];
        let a = e
            .replay(opts, entry)
            .unwrap_or_else(|err| panic!("{}: {err}", e.name()));
        entry["summary"] = serde_json::to_value(&a.summary).expect("serializes");
        entry["headline"] = serde_json::to_value(&a.rendered.headline).expect("serializes");
        entry["markdown"] = a.rendered.markdown.into();
    }
    write(fx);
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

#[test]
fn no_replayed_plot_draws_nothing() {
    // Every plot of every experiment, and every part's narrowing plot,
    // from the recorded run: no line of fewer than two points, no band
    // without area (completion's two points on a log axis from 0 were).
    let fx = recorded();
    let dir = std::env::temp_dir().join(format!("tcpwise-plots-{}", std::process::id()));
    let opts = opts(&dir);
    let mut empty = Vec::new();
    let mut plots = 0;
    for e in all() {
        let entry = &fx["experiments"][e.name().replace('-', "_")];
        let a = e
            .replay(&opts, entry)
            .unwrap_or_else(|err| panic!("{}: {err}", e.name()));
        let record: Option<crate::sequential::Record> =
            serde_json::from_value(entry["decision"].clone()).ok();
        let narrowing = record
            .iter()
            .flat_map(|r| &r.parts)
            .map(crate::html::narrowing);
        for (i, svg) in a
            .rendered
            .plots
            .iter()
            .cloned()
            .chain(narrowing)
            .enumerate()
        {
            plots += 1;
            for mark in crate::html::empty_marks(&svg) {
                empty.push(format!("{} plot {i}: {mark}", e.name()));
            }
        }
    }
    std::fs::remove_dir_all(&dir).expect("the stand-ins go");
    println!("{plots} plots checked");
    assert!(empty.is_empty(), "plots that draw nothing: {empty:#?}");
}

/// A per-round value that decides `t` one way: inside the claim (holds)
/// or past the refuting edge (fails), a zone's width clear of it.
fn deciding(t: &crate::sequential::Target, holds: bool) -> f64 {
    use crate::sequential::Target::*;
    let clear = |a: f64, b: f64| (a - b).abs().max(a.abs() * 0.2).max(0.1);
    match *t {
        AtLeast { confirm, refute } if holds => confirm + clear(confirm, refute),
        AtLeast { confirm, refute } => refute - clear(confirm, refute),
        AtMost { confirm, refute } if holds => confirm - clear(confirm, refute),
        AtMost { confirm, refute } => refute + clear(confirm, refute),
        Within { lo, hi, .. } if holds => (lo + hi) / 2.0,
        Within {
            outer_lo, outer_hi, ..
        } => outer_hi + clear(outer_hi, outer_lo),
    }
}

/// The holds/fails rendering test: every experiment's section rendered
/// from its recorded measurements with two synthetic decisions, every
/// part confirmed and every part refuted. The verdict's outcome and,
/// with digits masked, what it says was measured (the figures and
/// decisions it states) must read apart: a conclusion written as a
/// literal reads the same in both. Neither section may print NaN or an
/// unbounded interval.
#[test]
fn every_section_reads_apart_when_the_claim_holds_and_when_it_fails() {
    use crate::sequential::{Record, State, Stop};
    let fx = recorded();
    let dir = std::env::temp_dir().join(format!("tcpwise-apart-{}", std::process::id()));
    let opts = opts(&dir);
    let mask = |t: &str| t.replace(|c: char| c.is_ascii_digit(), "#");
    for e in all() {
        let mut entry = fx["experiments"][e.name().replace('-', "_")].clone();
        let mut render = |holds: bool| {
            let specs = e.criterion();
            let one: Vec<f64> = specs.iter().map(|s| deciding(&s.target, holds)).collect();
            let rounds: Vec<Vec<f64>> = (0..40)
                .map(|i| {
                    one.iter()
                        .map(|v| v * (1.0 + 1e-4 * f64::from(i % 3)))
                        .collect()
                })
                .collect();
            let record = Record::of_rounds(specs, &rounds, Stop::Decided);
            let want = if holds { State::Holds } else { State::Fails };
            assert!(record.parts.iter().all(|p| p.state == want), "{}", e.name());
            entry["decision"] = serde_json::to_value(&record).expect("serializes");
            let a = e
                .replay(&opts, &entry)
                .unwrap_or_else(|err| panic!("{}: {err}", e.name()));
            let ours = &a.rendered.headline.ours;
            assert!(
                !ours.contains("NaN"),
                "{}: NaN in the first table: {ours}",
                e.name()
            );
            let v = a.rendered.headline.verdict.expect("a verdict");
            (a.rendered.markdown, v)
        };
        let (holds_md, holds) = render(true);
        let (fails_md, fails) = render(false);
        for md in [&holds_md, &fails_md] {
            assert!(!md.contains("NaN"), "{}: NaN in\n{md}", e.name());
            assert!(!md.contains("inf]"), "{}: unbounded in\n{md}", e.name());
        }
        assert_ne!(holds.outcome, fails.outcome, "{}", e.name());
        assert_ne!(
            mask(&holds.measured),
            mask(&fails.measured),
            "{}: the verdict's figures read the same either way",
            e.name()
        );
        println!(
            "{}: {} / {} read apart",
            e.name(),
            holds.outcome,
            fails.outcome
        );
    }
    std::fs::remove_dir_all(&dir).expect("the stand-ins go");
}
