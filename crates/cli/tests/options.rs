//! The peers' own option lists as the test plan: `docs/options-*.md` has
//! a row for every option curl 7.88 (`curl --help all`), iperf3 3.12
//! (`iperf3 --help`) and wrk list, and for the netem and Mahimahi words
//! `emu` takes. This keeps those tables true:
//!
//! - every option the peer lists has a row (the peer is asked, when it is
//!   installed; CI installs them all);
//! - a row marked *same* or *differs* is an option our `--help` shows, a
//!   row marked *refused* one it does not, and running it exits 2 with one
//!   line that names it;
//! - a *same* row names its differential case, and that case exists and
//!   spells the option;
//! - the counts at the top of each table, and in the README's table of
//!   peers, are the rows' counts.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One row: the option as the peer spells it (short, long, whether it
/// takes a value), our status, the case, why.
#[derive(Debug)]
struct Row {
    spelled: String,
    short: Option<String>,
    long: Option<String>,
    takes_value: bool,
    status: String,
    case: String,
}

fn rows(table: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(root().join("docs").join(table)).unwrap();
    text.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.strip_prefix("| `")?.split(" | ").collect();
            let spelled = cells[0].trim_end_matches('`').replace("\\|", "|");
            let words: Vec<&str> = spelled
                .split([',', ' '])
                .filter(|w| !w.is_empty())
                .collect();
            let names: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| w.starts_with('-'))
                .collect();
            Some(Row {
                short: names
                    .iter()
                    .find(|n| !n.starts_with("--"))
                    .map(|s| s.to_string()),
                long: names
                    .iter()
                    .find(|n| n.starts_with("--"))
                    .map(|s| s.to_string()),
                takes_value: words.len() > names.len(),
                spelled: spelled.clone(),
                status: cells.get(1).unwrap_or(&"").to_string(),
                case: cells.get(2).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// A table's rows' statuses, in order.
fn statuses(table: &str) -> Vec<String> {
    rows(table).into_iter().map(|r| r.status).collect()
}

/// The counts line of a table and of the README agree with its rows'
/// statuses.
fn counts_agree(table: &str, statuses: &[String], readme_label: &str) {
    let n = |s: &str| statuses.iter().filter(|r| **r == s).count();
    let line = format!(
        "{} same, {} differ on purpose, {} refused (of {})",
        n("same"),
        n("differs"),
        n("refused"),
        statuses.len()
    );
    let text = std::fs::read_to_string(root().join("docs").join(table)).unwrap();
    assert!(
        text.contains(&format!("Counts: {line}.")),
        "docs/{table}: its counts line should read 'Counts: {line}.'"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("{readme_label}: {line}")),
        "README.md's table of peers should say '{readme_label}: {line}'"
    );
}

/// Long options (and the short ones) a `--help` text shows.
fn help_options(args: &[&str]) -> BTreeSet<String> {
    let o = tcpwise(args);
    let text = stdout(&o);
    let mut out = BTreeSet::new();
    for l in text.lines() {
        let t = l.trim_start();
        if !t.starts_with('-') || t.starts_with("-- ") {
            continue;
        }
        // The option's own names, up to its value or description.
        for w in t
            .split([',', ' '])
            .take_while(|w| w.is_empty() || w.starts_with('-'))
            .filter(|w| w.starts_with('-'))
        {
            let w = w.split(['=', '[', '<']).next().unwrap_or(w);
            out.insert(w.trim_end_matches('.').to_string());
        }
    }
    out
}

/// Every token a test file spells as an option (`"-sS"` counts for -s
/// and -S).
fn spelled_in(files: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(root().join("crates/cli/tests").join(f)).unwrap();
        // Each string literal that starts with a dash (escaped quotes
        // elsewhere make pairing quotes unreliable).
        for (i, _) in text.match_indices("\"-") {
            let piece = &text[i + 1..];
            let piece = &piece[..piece.find('"').unwrap_or(piece.len())];
            let word = piece.split('=').next().unwrap_or(piece);
            if word.starts_with("--") {
                out.insert(word.to_string());
            } else if let Some(shorts) = word.strip_prefix('-')
                && !shorts.is_empty()
                && shorts
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '#' || c == ':')
            {
                for c in shorts.chars() {
                    out.insert(format!("-{c}"));
                }
            }
        }
    }
    out
}

/// A named case (`module::test`) exists and spells `option` in its file.
fn named_case_spells(case: &str, row: &Row) -> Result<(), String> {
    let text = case_exists(case, row)?;
    let spelled = [&row.long, &row.short]
        .into_iter()
        .flatten()
        .any(|o| text.contains(&format!("\"{o}")) || text.contains(&format!(" {o} ")));
    if !spelled {
        return Err(format!("{}: {case}'s file never spells it", row.spelled));
    }
    Ok(())
}

/// `h3` is `cli/tests/h3.rs`; `link::queue` a library's unit tests.
fn module_path(module: &str) -> String {
    match module.split_once('/') {
        Some((krate, rest)) => format!("{krate}/src/{rest}.rs"),
        None => format!("cli/tests/{module}.rs"),
    }
}

/// What a peer's own help lists, as long options (or short ones where
/// it has no long form).
fn peer_options(cmd: &str, args: &[&str]) -> Option<BTreeSet<String>> {
    let o = std::process::Command::new(cmd).args(args).output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    let mut out = BTreeSet::new();
    for l in text.lines() {
        let t = l.trim_start();
        if !t.starts_with('-') {
            continue;
        }
        let names: Vec<&str> = t
            .split([',', ' '])
            .take_while(|w| w.is_empty() || w.starts_with('-'))
            .filter(|w| w.starts_with('-'))
            .collect();
        let long = names.iter().find(|n| n.starts_with("--"));
        if let Some(n) = long.or(names.first()) {
            out.insert(n.split(['=', '[', '<']).next().unwrap_or(n).to_string());
        }
    }
    Some(out)
}

/// Runs the checks for one peer's table.
fn check(
    table: &str,
    peer: Option<BTreeSet<String>>,
    ours: &[&[&str]],
    diff_files: &[&str],
    refuse: &dyn Fn(&Row) -> Vec<String>,
) {
    let rows = rows(table);
    assert!(!rows.is_empty(), "docs/{table} has no rows");
    let mut wrong = Vec::new();
    if let Some(listed) = peer {
        let in_table: BTreeSet<String> = rows
            .iter()
            .filter_map(|r| r.long.clone().or_else(|| r.short.clone()))
            .collect();
        for o in listed.difference(&in_table) {
            wrong.push(format!(
                "the peer lists {o}; docs/{table} has no row for it"
            ));
        }
    }
    let help: BTreeSet<String> = ours.iter().flat_map(|o| help_options(o)).collect();
    let ours: Vec<String> = ours.iter().map(|o| o.join(" ")).collect();
    let cases = spelled_in(diff_files);
    for r in &rows {
        let names: Vec<&String> = [&r.long, &r.short].into_iter().flatten().collect();
        // `--next` splits the command line before the flags are parsed
        // (its help is in the text after the flags).
        let shown = names
            .iter()
            .any(|n| help.contains(n.as_str()) || n.as_str() == "--next");
        match r.status.as_str() {
            "same" | "differs" if !shown => wrong.push(format!(
                "{}: marked {} but `{}` does not show it",
                r.spelled,
                r.status,
                ours.join("`, `")
            )),
            "refused" if shown => wrong.push(format!(
                "{}: marked refused but `{}` shows it",
                r.spelled,
                ours.join("`, `")
            )),
            "same" | "differs" | "refused" => {}
            other => wrong.push(format!("{}: status '{other}'", r.spelled)),
        }
        if r.status == "same" {
            if r.case == "curl_diff" || r.case == "perf" {
                if !names.iter().any(|n| cases.contains(n.as_str())) {
                    wrong.push(format!("{}: no differential case spells it", r.spelled));
                }
            } else if let Err(e) = named_case_spells(&r.case, r) {
                wrong.push(e);
            }
        }
        if r.status == "refused" {
            wrong.extend(refuse(r));
        }
    }
    assert!(wrong.is_empty(), "docs/{table}:\n{}", wrong.join("\n"));
}

/// Runs `args` and wants exit 2 with one line that names `name`.
fn refused_in_one_line(args: &[&str], name: &str) -> Option<String> {
    let o = tcpwise(args);
    let err = stderr(&o);
    // clap's own pointer to --help after a bad value is not a second line
    // of the refusal.
    let lines = err
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("For more information"))
        .count();
    let one = lines == 1;
    (o.status.code() != Some(2) || !one || !err.contains(name)).then(|| {
        format!(
            "{args:?}: exit {:?}, want 2 and one line naming {name}: {err}",
            o.status.code()
        )
    })
}

#[test]
fn curls_options_table() {
    let peer = which("curl")
        .then(|| peer_options("curl", &["--help", "all"]))
        .flatten();
    check(
        "options-curl.md",
        peer,
        &[&["get", "--help"]],
        &["curl_diff.rs", "curl_options.rs"],
        &|r| {
            let name = r.long.clone().or(r.short.clone()).unwrap();
            let mut args = vec!["get", name.as_str()];
            if r.takes_value {
                args.push("x");
            }
            args.push("http://127.0.0.1:9/");
            refused_in_one_line(&args, &name).into_iter().collect()
        },
    );
    counts_agree(
        "options-curl.md",
        &statuses("options-curl.md"),
        "curl 7.88 (`get`)",
    );
}

fn which(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn iperf3s_options_table() {
    let peer = which("iperf3")
        .then(|| peer_options("iperf3", &["--help"]))
        .flatten();
    // Client and server options together: iperf3 has one command.
    check(
        "options-iperf3.md",
        peer,
        &[&["perf", "client", "--help"], &["perf", "server", "--help"]],
        &["perf.rs"],
        &|r| {
            let name = r.long.clone().or(r.short.clone()).unwrap();
            let mut out = Vec::new();
            for sub in ["client", "server"] {
                let mut args = vec!["perf", sub, name.as_str()];
                if r.takes_value {
                    args.push("1");
                }
                args.push("127.0.0.1");
                out.extend(refused_in_one_line(&args, &name));
            }
            out
        },
    );
    counts_agree(
        "options-iperf3.md",
        &statuses("options-iperf3.md"),
        "iperf3 3.12 (`perf`)",
    );
}

#[test]
fn wrks_options_table() {
    let peer = which("wrk").then(|| peer_options("wrk", &[])).flatten();
    check(
        "options-wrk.md",
        peer,
        &[&["bench", "--help"]],
        &["bench.rs"],
        &|r| {
            let name = r.long.clone().or(r.short.clone()).unwrap();
            let mut args = vec!["bench", name.as_str()];
            if r.takes_value {
                args.push("x");
            }
            args.push("http://127.0.0.1:9/");
            refused_in_one_line(&args, &name).into_iter().collect()
        },
    );
    counts_agree(
        "options-wrk.md",
        &statuses("options-wrk.md"),
        "wrk 4.1 (`bench`)",
    );
}

/// netem's and Mahimahi's words: no peer runs here (no `sch_netem`, no
/// Mahimahi package), so each row's case is a test of the documented
/// meaning; the emu flags of taken rows are in `emu shell --help`, a
/// refused spelling is refused in one line.
#[test]
fn netem_and_mahimahi_words_table() {
    let text = std::fs::read_to_string(root().join("docs/options-emu.md")).unwrap();
    let help = help_options(&["emu", "shell", "--help"]);
    let mut wrong = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for l in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = l.split(" | ").collect();
        let (words, emu, status, case) = (cells[0], cells[1], cells[2], cells[3]);
        seen.push(status.to_string());
        let flags: Vec<&str> = emu
            .split(['`', ' ', ','])
            .filter(|w| w.starts_with("--"))
            .collect();
        match status {
            "same" | "differs" => {
                for f in &flags {
                    if !help.contains(*f) {
                        wrong.push(format!("{words}: {f} is not in emu shell --help"));
                    }
                }
                let row = Row {
                    spelled: words.to_string(),
                    short: None,
                    long: flags.first().map(|f| f.to_string()),
                    takes_value: true,
                    status: status.to_string(),
                    case: case.to_string(),
                };
                if let Err(e) = case_exists(case, &row).map(drop) {
                    wrong.push(e);
                }
            }
            "refused" => {
                let spelled: Vec<&str> = emu.trim_matches('`').split(' ').collect();
                if spelled.len() == 2 && spelled[0].starts_with("--") {
                    let args = ["emu", "shell", spelled[0], spelled[1], "--", "true"];
                    wrong.extend(refused_in_one_line(&args, spelled[1]));
                }
            }
            other => wrong.push(format!("{words}: status '{other}'")),
        }
    }
    counts_agree("options-emu.md", &seen, "netem and Mahimahi words (`emu`)");
    assert!(
        wrong.is_empty(),
        "docs/options-emu.md:\n{}",
        wrong.join("\n")
    );
}

/// A named case's test exists (its file holds `fn NAME(`): its file.
fn case_exists(case: &str, row: &Row) -> Result<String, String> {
    let (module, test) = case
        .split_once("::")
        .ok_or_else(|| format!("{}: case '{case}' is not module::test", row.spelled))?;
    let path = root().join("crates").join(module_path(module));
    let text = std::fs::read_to_string(&path)
        .map_err(|_| format!("{}: no file {}", row.spelled, path.display()))?;
    if text.contains(&format!("fn {test}(")) {
        Ok(text)
    } else {
        Err(format!(
            "{}: no test {test} in {}",
            row.spelled,
            path.display()
        ))
    }
}
