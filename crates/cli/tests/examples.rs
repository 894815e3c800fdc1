//! Every example a user can paste: the `Example` lines of every `--help`
//! and the shell blocks of the README and of every page of `docs/`, run
//! as printed (in a scratch
//! directory, with `tcpwise` on PATH, each bounded in time). What cannot
//! run here is named with the reason: the lab's examples take minutes (CI
//! runs `tcpwise lab --quick` itself), and the build/test commands.

use crate::common::*;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The commands in `text`: lines whose first word is one of `programs`,
/// with `\` continuation lines joined, `Example:` prefixes and trailing
/// descriptions (two or more spaces, then words) removed.
fn commands(text: &str, programs: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let mut l = line.trim();
        if let Some(rest) = l.strip_prefix("Example:") {
            l = rest.trim();
        }
        if !programs.iter().any(|p| l.starts_with(&format!("{p} "))) {
            continue;
        }
        let mut cmd = l.to_string();
        while cmd.ends_with('\\') {
            cmd.pop();
            match lines.next() {
                Some(next) => cmd.push_str(next.trim()),
                None => break,
            }
        }
        // `tcpwise lab --quick --out /tmp/lab   the short run` -> the command.
        if let Some(i) = cmd.find("   ") {
            cmd.truncate(i);
        }
        if let Some(i) = cmd.find(" # ") {
            cmd.truncate(i);
        }
        out.push(cmd.trim().to_string());
    }
    out
}

/// Why an example cannot run in a test, if it cannot.
fn skip_reason(cmd: &str) -> Option<&'static str> {
    if cmd.starts_with("tcpwise lab") || cmd.starts_with("cargo run") {
        Some("the lab takes minutes; CI runs `tcpwise lab --quick`")
    } else if cmd.starts_with("scripts/test") {
        Some("it is the test command itself")
    } else {
        None
    }
}

/// Runs `script` with `sh`, `tcpwise` on PATH, in `dir`, as its own
/// process group; whatever it left running (a server started with `&`) is
/// killed with the group at the end. Returns (exit status, output).
fn run_script(script: &str, dir: &Path, limit: Duration) -> (Option<i32>, String) {
    let bin_dir = PathBuf::from(BIN).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Every command of a block must succeed, not only its last.
    let script = format!("set -e\n{script}");
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .process_group(0)
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let group = child.id() as i32;
    let t0 = Instant::now();
    let timed_out = loop {
        if child.try_wait().unwrap().is_some() {
            break false;
        }
        if t0.elapsed() > limit {
            break true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The background servers hold the output pipes: stop the group first.
    // SAFETY: kill(2) on our own child's process group.
    tcpwise_sys::kill(-group, libc::SIGTERM);
    let o = child.wait_with_output().unwrap();
    let text = format!("{}{}", stdout(&o), stderr(&o));
    if timed_out {
        (None, format!("timed out\n{text}"))
    } else {
        (o.status.code(), text)
    }
}

/// A scratch directory with `../shared` pointing at the real one (the
/// README's trace example names it relative to the repository).
fn scratch(tag: &str) -> TempDir {
    let d = TempDir::new(tag);
    std::fs::create_dir_all(d.0.join("work")).unwrap();
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if shared.exists() {
        let _ = std::os::unix::fs::symlink(shared.canonicalize().unwrap(), d.0.join("shared"));
    }
    d
}

/// The examples use fixed ports on this host (iperf3's 5201, 8080): one
/// set at a time.
static PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run_all(what: &str, scripts: Vec<(String, String)>) {
    let _one_at_a_time = PORTS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch(what);
    let work = dir.0.join("work");
    let mut ran = 0;
    for (name, script) in scripts {
        if script.contains("../shared/") && !dir.0.join("shared").exists() {
            eprintln!(
                "example {name}: skipped, ../shared (the traces) is not beside this checkout"
            );
            continue;
        }
        let (code, out) = run_script(&script, &work, Duration::from_secs(120));
        assert_eq!(
            code,
            Some(0),
            "example {name} failed:\n{script}\n--- output:\n{out}"
        );
        ran += 1;
    }
    eprintln!("{what}: {ran} example scripts ran");
}

#[test]
fn every_help_example_works_as_printed() {
    if !netns_ok("every_help_example_works_as_printed")
        || !tool_ok("every_help_example_works_as_printed", "iperf3")
    {
        return;
    }
    let pages: &[&[&str]] = &[
        &[],
        &["emu", "shell"],
        &["emu", "pair"],
        &["emu", "selftest"],
        &["emu", "dumbbell"],
        &["emu", "clean"],
        &["perf", "server"],
        &["perf", "client"],
        &["dispatch", "server"],
        &["dispatch", "load"],
        &["get"],
        &["serve"],
        &["rpm"],
        &["lab"],
    ];
    let mut scripts = Vec::new();
    for page in pages {
        let mut args: Vec<&str> = page.to_vec();
        args.push("--help");
        let help = stdout(&tcpwise(&args));
        for cmd in commands(&help, &["tcpwise"]) {
            if let Some(why) = skip_reason(&cmd) {
                eprintln!("example `{cmd}`: skipped, {why}");
                continue;
            }
            // An example that needs a server on this host gets one.
            let setup = if cmd.contains("iperf3 -c") {
                "iperf3 -s -p 5201 >/dev/null 2>&1 &\nsleep 1\n"
            } else if cmd.contains("127.0.0.1:8080") && !cmd.starts_with("tcpwise serve") {
                "tcpwise serve --bind 127.0.0.1:8080 >/dev/null 2>&1 &\nsleep 0.5\n"
            } else {
                ""
            };
            scripts.push((cmd.clone(), format!("{setup}{cmd}")));
        }
    }
    assert!(scripts.len() >= 3, "found {} examples", scripts.len());
    run_all("help", scripts);
}

#[test]
fn every_readme_example_works_as_printed() {
    if !netns_ok("every_readme_example_works_as_printed")
        || !tool_ok("every_readme_example_works_as_printed", "iperf3")
        || !tool_ok("every_readme_example_works_as_printed", "curl")
    {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // The README, then every page of docs/, in name order.
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut scripts = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let name = page
            .strip_prefix(&root)
            .unwrap_or(page)
            .display()
            .to_string();
        for (i, block) in text.split("```sh").skip(1).enumerate() {
            let block = block.split("```").next().unwrap_or("");
            let mut script = String::new();
            for cmd in commands(block, &["tcpwise", "iperf3", "seq"]) {
                if let Some(why) = skip_reason(&cmd) {
                    eprintln!("{name} example `{cmd}`: skipped, {why}");
                    continue;
                }
                script.push_str(&cmd);
                script.push('\n');
                // A server started in the background gets a moment to listen.
                if cmd.ends_with('&') {
                    script.push_str("sleep 1\n");
                }
            }
            if !script.is_empty() {
                scripts.push((format!("{name} block {}", i + 1), script));
            }
        }
    }
    assert!(scripts.len() >= 8, "found {} blocks", scripts.len());
    run_all("readme and docs", scripts);
}

#[test]
fn commands_are_extracted_as_a_user_would_paste_them() {
    let text = "Example: tcpwise emu shell --rtt 1ms -- sh -c 'x'\n  tcpwise emu pair --server 'a' \\\n    -- sh -c 'b'\nsummary: not a command\n  tcpwise lab --quick   the short run\n";
    assert_eq!(
        commands(text, &["tcpwise"]),
        vec![
            "tcpwise emu shell --rtt 1ms -- sh -c 'x'",
            "tcpwise emu pair --server 'a' -- sh -c 'b'",
            "tcpwise lab --quick",
        ]
    );
}
