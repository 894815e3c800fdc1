//! The architecture, checked by a test rather than by memory (the model
//! is rust-analyzer's `xtask` tidy tests). ARCHITECTURE.md names the
//! rules this enforces:
//!
//! - **floors**: a crate depends only on crates of a lower floor, so no
//!   import points upward and the layer picture stays true;
//! - **`unsafe` lives in `crates/sys`** (sources, tests and fuzz targets
//!   elsewhere use its safe wrappers), and every other library crate is
//!   `#![forbid(unsafe_code)]`;
//! - **clap only where flags are a crate's configuration**: the binary,
//!   and the flag modules of the tools whose spelling is their contract
//!   (`emu`'s link, record and config flags; `curl`'s flags);
//! - **the CLI parses and prints**: `crates/cli/src` stays within its
//!   line budget, so behaviour cannot quietly move back into it;
//! - **modules of one concern**: no import cycle between the top-level
//!   modules of a crate (function length, the unit a reader meets, is
//!   clippy's `too_many_lines` at 100, in `clippy.toml`; file length is
//!   not capped, so a file is never split only to stay under a number);
//! - **typed errors**: no public library function returns
//!   `Result<_, String>` and no `FromStr` has `type Err = String`, except
//!   in the flag modules, where clap's value parsers live;
//! - **one test binary for the CLI**: `crates/cli/tests/tests.rs` with a
//!   module per file, at most [`CLI_TEST_BINARIES`] binaries in all, and
//!   no file under `crates/cli/tests` that none of them compiles (with
//!   `autotests = false` such a file would be silently left out).
//!
//! Where the code does not meet a rule yet, the debt is listed here by
//! name and the test fails both on a new offender and on a listed one
//! that no longer offends (so the list only shrinks, and stays exact).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, bottom up. A crate may depend on crates of lower floors only.
const FLOORS: &[(&str, u32)] = &[
    ("units", 0),
    ("outcome", 0),
    ("huffman", 0),
    ("sys", 1),
    ("link", 2),
    ("pool", 2),
    ("tcp", 2),
    ("http", 2),
    ("emu", 3),
    ("client", 3),
    ("server", 3),
    ("perf", 3),
    ("dispatch", 3),
    ("aio", 3),
    ("curl", 4),
    ("rpm", 4),
    ("bench", 5),
    ("lab", 6),
    ("cli", 7),
];

/// Files outside `crates/cli` that may name clap: flag definitions.
const CLAP_FILES: &[&str] = &[
    "crates/emu/src/path.rs",
    "crates/emu/src/record.rs",
    "crates/emu/src/config.rs",
    "crates/emu/src/flags.rs",
    "crates/curl/src/flags.rs",
    "crates/lab/src/sweep/flags.rs",
    "crates/server/src/flags.rs",
    "crates/perf/src/flags.rs",
    "crates/rpm/src/flags.rs",
    "crates/bench/src/flags.rs",
];

/// Lines `crates/cli/src` may hold.
const CLI_BUDGET: usize = 1200;

/// Crates whose top-level modules import each other in a cycle, with
/// the modules of the cycle (debt; shrink only).
const CYCLES: &[(&str, &[&str])] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn crates() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The `tcpwise-*` crates in a manifest's `[dependencies]` (not dev).
fn deps(krate: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join("crates").join(krate).join("Cargo.toml"))
        .expect("manifest");
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_string();
        } else if section == "[dependencies]"
            && let Some(rest) = line.strip_prefix("tcpwise-")
        {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

fn floor(krate: &str) -> Option<u32> {
    FLOORS.iter().find(|(n, _)| *n == krate).map(|(_, f)| *f)
}

/// The floors table of ARCHITECTURE.md (`| N | `a`, `b` |` rows), as
/// (crate, floor) pairs.
fn code_map_floors() -> BTreeSet<(String, u32)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, floor, crates, _] = cells[..] else {
            continue;
        };
        let Ok(f) = floor.parse::<u32>() else {
            continue;
        };
        for c in crates.split(',') {
            out.insert((c.trim().trim_matches('`').to_string(), f));
        }
    }
    out
}

#[test]
fn the_code_map_shows_every_crate_on_its_floor() {
    let want: BTreeSet<(String, u32)> = FLOORS.iter().map(|(c, f)| (c.to_string(), *f)).collect();
    assert_eq!(
        code_map_floors(),
        want,
        "ARCHITECTURE.md's floors table and FLOORS differ: change both"
    );
}

#[test]
fn every_crate_depends_only_on_lower_floors() {
    let mut wrong = Vec::new();
    for c in crates() {
        let Some(f) = floor(&c) else {
            wrong.push(format!(
                "crates/{c} has no floor: give it one in ARCHITECTURE.md and FLOORS"
            ));
            continue;
        };
        for d in deps(&c) {
            match floor(&d) {
                Some(g) if g < f => {}
                Some(g) => wrong.push(format!("{c} (floor {f}) depends on {d} (floor {g})")),
                None => wrong.push(format!("{c} depends on {d}, which has no floor")),
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

/// Whether a line uses the keyword `unsafe` (not in a comment or an
/// attribute that forbids it).
fn uses_unsafe(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    // What is inside string literals is text, not code.
    let code: String = code.split('"').step_by(2).collect();
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == "unsafe")
        && !code.contains("unsafe_code")
        && !code.contains("unsafe_op_in_unsafe_fn")
}

#[test]
fn unsafe_lives_in_sys_only() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    rust_files(&root().join("fuzz/fuzz_targets"), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let r = rel(f);
        if r.starts_with("crates/sys/") {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("source");
        for (n, line) in text.lines().enumerate() {
            if uses_unsafe(line) {
                wrong.push(format!("{r}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    for c in crates() {
        let lib = root().join("crates").join(&c).join("src/lib.rs");
        if c != "sys"
            && lib.exists()
            && !std::fs::read_to_string(&lib)
                .expect("lib.rs")
                .contains("#![forbid(unsafe_code)]")
        {
            wrong.push(format!(
                "crates/{c}/src/lib.rs lacks #![forbid(unsafe_code)]"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "unsafe outside crates/sys (use tcpwise_sys's wrappers):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn clap_only_in_the_binary_and_flag_modules() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let r = rel(f);
        // Tests may parse flags as the binary does.
        if r.starts_with("crates/cli/") || CLAP_FILES.contains(&r.as_str()) || is_test_file(&r) {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("clap::") || code.contains("use clap") || code.contains("#[arg(") {
                wrong.push(format!("{r}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "clap outside the binary and the agreed flag modules ({CLAP_FILES:?}):\n{}",
        wrong.join("\n")
    );
}

/// The signatures of a file's `pub fn`s, whitespace folded, with the
/// line each starts on.
fn pub_signatures(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if !(t.starts_with("pub fn ") || t.starts_with("pub async fn ")) {
            continue;
        }
        let rest: String = text.lines().skip(i).collect::<Vec<_>>().join(" ");
        let end = rest.find(['{', ';']).unwrap_or(rest.len());
        out.push((
            i + 1,
            rest[..end].split_whitespace().collect::<Vec<_>>().join(" "),
        ));
    }
    out
}

/// Whether a folded signature returns `Result<_, String>`.
fn returns_string_error(sig: &str) -> bool {
    sig.split_once("->").is_some_and(|(_, ret)| {
        ret.trim().starts_with("Result<") && ret.trim().ends_with(", String>")
    })
}

#[test]
fn public_apis_have_typed_errors() {
    let mut wrong = Vec::new();
    for c in crates().into_iter().filter(|c| c != "cli") {
        let mut files = Vec::new();
        rust_files(&root().join("crates").join(&c).join("src"), &mut files);
        for f in files {
            let r = rel(&f);
            if is_test_file(&r) || r.ends_with("/flags.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for (line, sig) in pub_signatures(&text) {
                if returns_string_error(&sig) {
                    wrong.push(format!("{r}:{line}: {sig}"));
                }
            }
            for (i, l) in text.lines().enumerate() {
                if l.trim() == "type Err = String;" {
                    wrong.push(format!("{}:{}: type Err = String", r, i + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "public functions and FromStr impls with String errors (give them a thiserror type that classifies itself):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_typed_error_rule_sees_a_string_error() {
    let text = "pub fn parse(\n    text: &str,\n) -> Result<Matrix, String> {\n}\npub fn ok() -> Result<(), E> {}";
    let sigs = pub_signatures(text);
    assert_eq!(sigs.len(), 2);
    assert!(returns_string_error(&sigs[0].1), "{sigs:?}");
    assert!(!returns_string_error(&sigs[1].1));
}

/// Test binaries `crates/cli` may have: `tests`, and two more where a
/// separate process image is needed.
const CLI_TEST_BINARIES: usize = 3;

/// The `path`s of a manifest's `[[test]]` sections, and whether it turns
/// cargo's discovery of `tests/*.rs` off.
fn test_targets(manifest: &str) -> (Vec<String>, bool) {
    let mut paths = Vec::new();
    let mut in_test = false;
    let mut autotests_off = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_test = line == "[[test]]";
        } else if line.replace(' ', "") == "autotests=false" {
            autotests_off = true;
        } else if in_test && let Some(v) = line.strip_prefix("path") {
            paths.push(
                v.trim_start_matches([' ', '='])
                    .trim_matches('"')
                    .to_string(),
            );
        }
    }
    (paths, autotests_off)
}

#[test]
fn the_cli_tests_are_one_binary_that_compiles_every_file() {
    let dir = root().join("crates/cli");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("manifest");
    let (targets, autotests_off) = test_targets(&manifest);
    assert!(
        autotests_off,
        "crates/cli/Cargo.toml: autotests = false, so tests/*.rs are modules of tests/tests.rs, not a binary each"
    );
    assert!(
        targets.len() <= CLI_TEST_BINARIES && targets.iter().any(|t| t == "tests/tests.rs"),
        "crates/cli's test binaries are {targets:?}: tests/tests.rs and at most {} more",
        CLI_TEST_BINARIES - 1
    );
    let mut declared = String::new();
    for t in &targets {
        declared += &std::fs::read_to_string(dir.join(t)).unwrap_or_default();
    }
    let mut orphans = Vec::new();
    for e in std::fs::read_dir(dir.join("tests"))
        .expect("tests/")
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        let module = name.strip_suffix(".rs").unwrap_or(&name).to_string();
        let is_module = name.ends_with(".rs") || e.path().join("mod.rs").exists();
        let compiled = targets.iter().any(|t| t.ends_with(&format!("/{name}")))
            || declared
                .lines()
                .any(|l| l.trim() == format!("mod {module};"));
        if is_module && !compiled {
            orphans.push(name);
        }
    }
    assert!(
        orphans.is_empty(),
        "crates/cli/tests: {orphans:?} compiled by no test binary: add `mod NAME;` to tests/tests.rs"
    );
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map_or(0, |t| t.lines().count())
}

#[test]
fn the_cli_stays_within_its_budget() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/cli/src"), &mut files);
    let total: usize = files.iter().map(|f| lines(f)).sum();
    let each: Vec<String> = files
        .iter()
        .map(|f| format!("{} {}", lines(f), rel(f)))
        .collect();
    println!("crates/cli/src: {total} lines (budget {CLI_BUDGET})");
    assert!(
        total <= CLI_BUDGET,
        "crates/cli/src is {total} lines, over its budget of {CLI_BUDGET}: behaviour belongs in the library crates (the CLI parses and prints)\n{}",
        each.join("\n")
    );
}

fn is_test_file(r: &str) -> bool {
    r.contains("/tests/") || r.ends_with("/tests.rs") || r.contains("/benches/")
}

/// The top-level modules of a crate and, for each, the other top-level
/// modules its files name through `crate::` (or `super::` from a direct
/// submodule, which is the module itself and so not an edge).
fn module_graph(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("crates").join(krate).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let module_of = |f: &Path| -> Option<String> {
        let r = f.strip_prefix(&src).ok()?;
        let first = r
            .components()
            .next()?
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        let m = first.trim_end_matches(".rs").to_string();
        (m != "lib" && m != "main").then_some(m)
    };
    let mods: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(m) = module_of(f) else { continue };
        if is_test_file(&rel(f)) {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("source");
        let mut in_tests = false;
        for line in text.lines() {
            // In-file unit tests may use anything of their crate.
            if line.trim_start().starts_with("#[cfg(test)]") {
                in_tests = true;
            }
            if in_tests {
                continue;
            }
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name != m && mods.contains(&name) {
                    g.entry(m.clone()).or_default().insert(name);
                }
            }
            // `use crate::{a, b::c}`: every name in the braces.
            if let Some(i) = code.find("use crate::{") {
                for part in code[i + "use crate::{".len()..].split([',', '{', '}']) {
                    let name = part.trim().split("::").next().unwrap_or("").to_string();
                    if name != m && mods.contains(&name) {
                        g.entry(m.clone()).or_default().insert(name);
                    }
                }
            }
        }
    }
    g
}

/// The modules that lie on a cycle (strongly connected components of
/// more than one module), by Tarjan's algorithm.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(next) = t.g.get(v) {
            for w in next {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let l = t.low[w].min(t.low[v]);
                    t.low.insert(v, l);
                } else if t.on.contains(w) {
                    let l = t.index[w].min(t.low[v]);
                    t.low.insert(v, l);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_import_cycle_between_the_modules_of_a_crate() {
    let mut found: BTreeMap<String, Vec<BTreeSet<String>>> = BTreeMap::new();
    for c in crates() {
        let cs = cycles(&module_graph(&c));
        if !cs.is_empty() {
            found.insert(c, cs);
        }
    }
    let listed: BTreeMap<String, Vec<BTreeSet<String>>> = CYCLES
        .iter()
        .map(|(c, mods)| {
            (
                c.to_string(),
                vec![mods.iter().map(|m| m.to_string()).collect()],
            )
        })
        .collect();
    assert_eq!(
        found, listed,
        "import cycles between top-level modules (left: found, right: CYCLES)"
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let edge = |g: &mut BTreeMap<String, BTreeSet<String>>, a: &str, b: &str| {
        g.entry(a.into()).or_default().insert(b.into());
    };
    edge(&mut g, "client", "server");
    edge(&mut g, "server", "proto");
    edge(&mut g, "proto", "client");
    edge(&mut g, "proto", "units");
    edge(&mut g, "lonely", "units");
    let c = cycles(&g);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0],
        ["client", "proto", "server"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}
