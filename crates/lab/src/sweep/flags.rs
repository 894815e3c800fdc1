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
[workloads.NAME] with tool (perf, rpm, or get: its first arg the path on serve), args (the
tool's flags) and server (its server's extra flags), repetitions and seed; [topologies.NAME]
hold an `emu dumbbell --topology` file whose bottleneck [vary] sets and whose hosts run the
perf workload (figure: the first host's share; docs/sweep.md). Cells: paths and topologies
x [vary] values x workloads x repetitions.

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

/// A workload's words that its tool's own parser (or its server's)
/// refuses: the parser's first line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RefusedArgs(pub String);

/// Refuses a workload's flags that the tool's own parser refuses (and its
/// server's), before anything runs: the tools' clap definitions, so the
/// words mean in a matrix what they mean on the command line.
pub fn check_tool_args(tool: Tool, args: &[String], server: &[String]) -> Result<(), RefusedArgs> {
    use clap::{Args, Command};
    let first_line = |e: clap::Error| {
        e.to_string()
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string()
    };
    // The tools' own `--version` flags (iperf3's -v) need a version set.
    let cmd = |name: &'static str| Command::new(name).version("x").disable_version_flag(true);
    let serve = tcpwise_server::flags::ServeArgs::augment_args(cmd("serve"));
    let (client, serve, argv, serve_argv) = match tool {
        Tool::Perf => (
            tcpwise_perf::flags::ClientArgs::augment_args(cmd("perf client")),
            tcpwise_perf::flags::ServerArgs::augment_args(cmd("perf server")),
            vec!["198.18.0.2".to_string()],
            vec![],
        ),
        Tool::Rpm => (
            tcpwise_rpm::flags::RpmArgs::augment_args(cmd("rpm")),
            serve,
            vec!["https://198.18.0.2:8443".to_string()],
            vec!["--bind", "8443", "--tls"],
        ),
        Tool::Get => {
            match args.first() {
                Some(p) if p.starts_with('/') => {}
                _ => {
                    return Err(RefusedArgs(
                        "get's first argument is the path to fetch from serve (/bytes/1000000)"
                            .into(),
                    ));
                }
            }
            (
                tcpwise_curl::flags::GetArgs::augment_args(cmd("get")),
                serve,
                vec![format!("http://198.18.0.2:8080{}", args[0])],
                vec!["--bind", "8080"],
            )
        }
    };
    let rest = if tool == Tool::Get { &args[1..] } else { args };
    let mut client_argv = vec!["x".to_string()];
    client_argv.extend(argv);
    client_argv.extend(rest.iter().cloned());
    if tool != Tool::Get {
        client_argv.push("--json".into());
    }
    client
        .try_get_matches_from(client_argv)
        .map_err(|e| RefusedArgs(first_line(e)))?;
    let mut argv: Vec<String> = vec!["x".to_string()];
    argv.extend(serve_argv.into_iter().map(String::from));
    argv.extend(server.iter().cloned());
    serve
        .try_get_matches_from(argv)
        .map_err(|e| RefusedArgs(format!("server: {}", first_line(e))))?;
    Ok(())
}
