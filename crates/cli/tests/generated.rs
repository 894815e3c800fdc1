//! The man pages and shell completions in `dist/` (what the Debian
//! package ships) are what `tcpwise generate` makes from the clap
//! definitions today: a flag added, renamed or documented anew without
//! regenerating them fails here, with the command that fixes it.

use crate::common::*;
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

#[test]
fn json_reports_carry_the_version_string() {
    let v = stdout(&tcpwise(&["--version"]));
    let want = v.trim().trim_start_matches("tcpwise ").to_string();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let _serve = Proc(
        std::process::Command::new(BIN)
            .args(["serve", "--bind", &addr])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_port(&port.to_string());
    let url = format!("http://{addr}/bytes/1000");
    let get = tcpwise(&["get", "-s", "-o", "/dev/null", "--report-json", &url]);
    let bench = tcpwise(&["bench", &url, "-c", "2", "-d", "300ms", "--json"]);
    for (what, o) in [("get --report-json", get), ("bench --json", bench)] {
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        let text = stdout(&o);
        let j: serde_json::Value = serde_json::from_str(&text).expect(&text);
        let found = j
            .get("tcpwise_version")
            .or_else(|| j.get(0).and_then(|u| u.get("tcpwise_version")))
            .and_then(|s| s.as_str())
            .map(str::to_string);
        assert_eq!(found.as_deref(), Some(want.as_str()), "{what}: {text}");
    }
}
