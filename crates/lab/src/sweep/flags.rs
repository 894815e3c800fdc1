//! `tcpwise lab sweep` and `tcpwise lab merge`: their flags (clap).

use crate::sweep::Tool;
use crate::sweep::shard::Shard;
use clap::Args;
use std::path::PathBuf;
use tcpwise_units::Dur;

/// What `lab sweep --help` ends with.
pub const SWEEP_HELP: &str = "\
A matrix (TOML): [paths.NAME] tables of emu link keys (rtt, rate, queue, loss, ...: the
--config keys, `tcpwise emu pair --help`), [vary] link keys with a list of values each,
[workloads.NAME] with tool (perf or rpm), args (the tool's flags) and server (its server's
extra flags), repetitions and seed. Cells: paths x [vary] values x workloads x repetitions.

  repetitions = 2
  [paths.dsl]
  rtt = \"40ms\"
  rate = \"16mbit\"
  [vary]
  queue = [\"400KB\", \"fq-codel:limit=400KB\"]
  [workloads.cubic]
  tool = \"perf\"
  args = [\"-t\", \"10\", \"-C\", \"cubic\"]

Each cell is one `tcpwise emu pair` running the tool's server and client (--list prints
them); its record, written whole to DIR/cells/ID.json as it ends, holds the tool's --json,
the emulator's statistics and the machine's steal and load while it ran. Shards for a job
array: --shard $SLURM_ARRAY_TASK_ID/N (array 1-N), or --shard $((JOB_COMPLETION_INDEX+1))/N
in a Kubernetes Indexed Job, then `tcpwise lab merge DIR...` (docs/sweep.md).
Exit: 0 every cell measured, 1 a cell failed, 2 bad matrix or flags, 3 no privileges,
130/143 interrupted (--resume goes on).";

/// `tcpwise lab sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The matrix file (TOML).
    #[arg(value_name = "FILE")]
    pub matrix: PathBuf,
    /// Directory for sweep.json, cells/ and the report.
    #[arg(long, default_value = "sweep-results", value_name = "DIR")]
    pub out: PathBuf,
    /// Print the cells (id, tool, flags) and run nothing.
    #[arg(long)]
    pub list: bool,
    /// Go on in DIR: keep the cells measured, run the rest and the failed.
    #[arg(long)]
    pub resume: bool,
    /// Run the K-th of N disjoint subsets of the cells (K from 1).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// At most N testbeds at once, whatever their rates [default: 4 a
    /// core and 100 Mbit/s of link rate a core, measured to hold; a link
    /// with no rate runs alone].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: Option<u64>,
    /// Stop a cell still running after this and record it as failed.
    #[arg(long, default_value = "10m", value_name = "TIME")]
    pub cell_timeout: Dur,
}

/// `tcpwise lab merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Sweep directories (shards) of one matrix, run by one binary.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Directory for the merged results.json, report.md and index.html.
    #[arg(long, default_value = "sweep-merged", value_name = "DIR")]
    pub out: PathBuf,
}

/// Refuses a workload's flags that the tool's own parser refuses (and its
/// server's), before anything runs: the tools' clap definitions, so the
/// words mean in a matrix what they mean on the command line.
pub fn check_tool_args(tool: Tool, args: &[String], server: &[String]) -> Result<(), String> {
    use clap::{Args, Command};
    let first_line = |e: clap::Error| {
        e.to_string()
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string()
    };
    let (client, serve) = match tool {
        Tool::Perf => (
            tcpwise_perf::flags::ClientArgs::augment_args(
                Command::new("perf client")
                    .version("x")
                    .disable_version_flag(true),
            ),
            tcpwise_perf::flags::ServerArgs::augment_args(
                Command::new("perf server")
                    .version("x")
                    .disable_version_flag(true),
            ),
        ),
        Tool::Rpm => (
            tcpwise_rpm::flags::RpmArgs::augment_args(
                Command::new("rpm").version("x").disable_version_flag(true),
            ),
            tcpwise_http::server::flags::ServeArgs::augment_args(
                Command::new("serve")
                    .version("x")
                    .disable_version_flag(true),
            ),
        ),
    };
    let peer = match tool {
        Tool::Perf => "198.18.0.2",
        Tool::Rpm => "https://198.18.0.2:8443",
    };
    let mut argv = vec!["x".to_string(), peer.into()];
    argv.extend(args.iter().cloned());
    argv.push("--json".into());
    client.try_get_matches_from(argv).map_err(first_line)?;
    let mut argv = vec!["x".to_string()];
    if tool == Tool::Rpm {
        argv.extend(["--bind", "8443", "--tls"].map(String::from));
    }
    argv.extend(server.iter().cloned());
    serve
        .try_get_matches_from(argv)
        .map_err(|e| format!("server: {}", first_line(e)))?;
    Ok(())
}
