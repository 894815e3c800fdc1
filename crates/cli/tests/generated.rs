//! The man pages and shell completions in `dist/` (what the Debian
//! package ships) are what `tcpwise generate` makes from the clap
//! definitions today: a flag added, renamed or documented anew without
//! regenerating them fails here, with the command that fixes it.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for sub in ["man", "completions"] {
        let d = dir.join(sub);
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = format!("{sub}/{}", e.file_name().to_string_lossy());
            out.insert(name, std::fs::read(e.path()).unwrap());
        }
    }
    out
}

#[test]
fn man_pages_and_completions_in_dist_are_current() {
    let tmp = TempDir::new("generate");
    let o = tcpwise(&["generate", tmp.0.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fresh = files(&tmp.0);
    let dist = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist"));
    let fix = "run `cargo run --release -- generate dist` and commit dist/";
    assert_eq!(
        fresh.keys().collect::<Vec<_>>(),
        dist.keys().collect::<Vec<_>>(),
        "the set of files differs: {fix}"
    );
    for (name, bytes) in &fresh {
        assert!(dist[name] == *bytes, "dist/{name} is stale: {fix}");
    }
    // A page for the command and each subcommand a user can run, and the
    // three shells.
    for page in [
        "man/tcpwise.1",
        "man/tcpwise-get.1",
        "man/tcpwise-serve.1",
        "man/tcpwise-bench.1",
        "man/tcpwise-lab.1",
        "man/tcpwise-emu-selftest.1",
        "man/tcpwise-perf-client.1",
        "completions/tcpwise.bash",
        "completions/_tcpwise",
        "completions/tcpwise.fish",
    ] {
        assert!(fresh.contains_key(page), "{page} missing");
    }
    assert!(
        !fresh.keys().any(|k| k.contains("generate")),
        "the hidden generate command gets no page"
    );
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let o = tcpwise(&["--version"]);
    let v = stdout(&o);
    assert!(
        v.starts_with(concat!("tcpwise ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    // In a git checkout (CI's clean clone) the commit follows.
    if Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../.git")
        .exists()
    {
        assert!(v.contains(" (") && v.trim_end().ends_with(')'), "{v}");
    }
}
