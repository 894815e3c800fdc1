//! The version string every report carries: the package version, the
//! commit it was built from and "dirty" when the tree had changes
//! (`0.1.0 (3f2a9c1d0e4b, dirty)`), or the version alone outside a git
//! checkout (a crate tarball). Rerun when the commit, the index or any
//! source changes, so the string cannot go stale across a rebuild.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for p in [
        ".git/HEAD",
        ".git/index",
        ".git/refs/heads",
        "crates",
        "Cargo.lock",
        "Cargo.toml",
    ] {
        let p = root.join(p);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    let version = env!("CARGO_PKG_VERSION");
    let full = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) if !commit.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!("{version} ({commit}{})", if dirty { ", dirty" } else { "" })
        }
        _ => version.to_string(),
    };
    println!("cargo:rustc-env=TCPWISE_VERSION={full}");
}
