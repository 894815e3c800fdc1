//! `tcpwise generate DIR` (hidden, for packagers): man pages for
//! `tcpwise` and every subcommand, and bash, zsh and fish completions,
//! all from the clap definitions, so they cannot drift from the flags.
//! The copies in `dist/` are what the package ships; a test regenerates
//! them and fails when they differ.

use clap::CommandFactory;
use std::path::PathBuf;

/// Flags of `tcpwise generate`.
#[derive(Debug, clap::Args)]
pub struct GenArgs {
    /// Where to write: DIR/man/*.1 and DIR/completions/{tcpwise.bash,_tcpwise,tcpwise.fish}.
    pub out: PathBuf,
}

/// Writes the pages and completions under `a.out`.
pub fn run(a: GenArgs) -> anyhow::Result<i32> {
    // The package version alone: the pages must not change with every
    // commit (the binary's --version carries the commit).
    let mut cmd = crate::Cli::command().version(env!("CARGO_PKG_VERSION"));
    let (man, comp) = (a.out.join("man"), a.out.join("completions"));
    std::fs::create_dir_all(&man)?;
    std::fs::create_dir_all(&comp)?;
    // A page per command a user runs; `help` is clap's, not a command.
    clap_mangen::generate_to(without_help(cmd.clone()), &man)?;
    for shell in [
        clap_complete::Shell::Bash,
        clap_complete::Shell::Zsh,
        clap_complete::Shell::Fish,
    ] {
        clap_complete::generate_to(shell, &mut cmd, "tcpwise", &comp)?;
    }
    Ok(0)
}

/// `cmd` and every subcommand without clap's `help` subcommand.
fn without_help(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names
        .iter()
        .fold(cmd.disable_help_subcommand(true), |c, n| {
            c.mut_subcommand(n, without_help)
        })
}
