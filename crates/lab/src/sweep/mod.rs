//! `tcpwise lab sweep`: a matrix of paths × workloads × repetitions, run
//! as cells in parallel testbeds, each finished cell written to its own
//! file at once, shards for the batch system a user already has (a Slurm
//! job array, a Kubernetes Indexed Job), and `tcpwise lab merge` to join
//! the shards into one report.
//!
//! Why a cell is a process (`tcpwise emu pair` running the workload's
//! server and client, the same command a user would type) and not a
//! thread of ours: a crash, Ctrl-C or `kill -9` of the sweep then costs
//! only the cells in flight. Each cell's emulator gets SIGTERM when the
//! sweep dies (`PR_SET_PDEATHSIG`) and removes its namespaces as on
//! Ctrl-C; what it measured is the tool's own `--json`, byte for byte
//! what the user would have got by hand. The sweep itself writes each
//! cell's record to a temporary file and renames it into `cells/`, so a
//! file there is always whole.
//!
//! Modules: `matrix` (sans-IO: the file to cells), `shard` (sans-IO: `K/N`
//! and the subset), `store` (the directory: `sweep.json`, `cells/`,
//! atomic writes, what is finished), `run` (the scheduler and a cell's
//! process), `slots` (the same limit for the lab's own testbeds, which
//! are threads), `summary` (sans-IO: cells to groups, figures, report text),
//! `topology` (sans-IO: a `[topologies.NAME]` table to its cells'
//! `emu dumbbell` files and figures), `flags` and `command` (the two
//! commands as calls).

pub mod command;
pub mod flags;
pub mod matrix;
pub mod run;
pub mod shard;
pub mod slots;
pub mod store;
pub mod summary;
pub mod topology;

use serde::{Deserialize, Serialize};

/// What a workload runs: one of tcpwise's tools with its `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// `tcpwise perf client` against `tcpwise perf server`.
    Perf,
    /// `tcpwise rpm` against `tcpwise serve --tls`.
    Rpm,
    /// `tcpwise get` of a path (the first argument) from `tcpwise serve`:
    /// its `time_total`.
    Get,
}

/// A tool no sweep runs.
#[derive(Debug, thiserror::Error)]
#[error("unknown tool '{0}' (tools: perf, rpm, get)")]
pub struct UnknownTool(pub String);

impl std::str::FromStr for Tool {
    type Err = UnknownTool;
    fn from_str(s: &str) -> Result<Tool, UnknownTool> {
        match s {
            "perf" => Ok(Tool::Perf),
            "rpm" => Ok(Tool::Rpm),
            "get" => Ok(Tool::Get),
            _ => Err(UnknownTool(s.to_string())),
        }
    }
}

impl Tool {
    /// The client's command, as `--list` shows it.
    pub fn command(self) -> &'static str {
        match self {
            Tool::Perf => "perf client",
            Tool::Rpm => "rpm",
            Tool::Get => "get",
        }
    }

    /// The TCP port its server listens on.
    pub fn port(self) -> u16 {
        match self {
            Tool::Perf => 5301,
            Tool::Rpm => 8443,
            Tool::Get => 8080,
        }
    }

    /// The server command for `emu pair --server` (`sh -c`), `exe` being
    /// the tcpwise binary.
    pub fn server_command(self, exe: &str, extra: &[String]) -> String {
        let mut words = vec![exe.to_string()];
        match self {
            Tool::Perf => words.extend(["perf", "server"].map(String::from)),
            Tool::Rpm => words.extend(["serve", "--bind", "8443", "--tls"].map(String::from)),
            Tool::Get => words.extend(["serve", "--bind", "8080"].map(String::from)),
        }
        words.extend(extra.iter().cloned());
        words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The client command: `sh -c SCRIPT EXE ARGS...`, the script putting
    /// the server's address (`$TCPWISE_PEER`) where the tool wants it and
    /// `--json` last.
    pub fn client_argv(self, exe: &str, args: &[String]) -> Vec<String> {
        let script = match self {
            Tool::Perf => r#"exec "$0" perf client "$TCPWISE_PEER" "$@" --json=tcpwise"#,
            Tool::Rpm => r#"exec "$0" rpm -k "https://$TCPWISE_PEER:8443" "$@" --json"#,
            // The path first, then curl's flags; the body is dropped and
            // curl's `-w '%{json}'` is the record.
            Tool::Get => {
                r#"p=$1; shift; exec "$0" get -s -S -o /dev/null -w '%{json}' "$@" "http://$TCPWISE_PEER:8080$p""#
            }
        };
        let mut v = vec!["sh".to_string(), "-c".into(), script.into(), exe.into()];
        v.extend(args.iter().cloned());
        v
    }

    /// Refuses flags the tool's own parser refuses, before anything runs.
    pub fn check_args(self, args: &[String], server: &[String]) -> Result<(), flags::RefusedArgs> {
        flags::check_tool_args(self, args, server)
    }

    /// The cell's figure from the tool's JSON, with its unit, and the
    /// samples behind it (perf: each interval's Mbit/s).
    pub fn figure(self, json: &serde_json::Value) -> Option<(f64, Vec<f64>)> {
        match self {
            Tool::Perf => {
                let f = json.pointer("/summary/goodput_mbit")?.as_f64()?;
                let samples = json
                    .get("intervals")
                    .and_then(|v| v.as_array())
                    .map(|a| a.iter().filter_map(|i| i.get("mbit")?.as_f64()).collect())
                    .unwrap_or_default();
                Some((f, samples))
            }
            Tool::Rpm => {
                let phases = json.get("phases")?.as_array()?;
                let rpm: Vec<f64> = phases
                    .iter()
                    .filter_map(|p| p.pointer("/score/rpm")?.as_f64())
                    .collect();
                Some((*rpm.last()?, rpm))
            }
            Tool::Get => {
                let ms = json.get("time_total")?.as_f64()? * 1000.0;
                Some((ms, vec![ms]))
            }
        }
    }

    /// The figure's unit.
    pub fn unit(self) -> &'static str {
        match self {
            Tool::Perf => "Mbit/s",
            Tool::Rpm => "RPM",
            Tool::Get => "ms",
        }
    }
}

/// `word` quoted for `sh` where it needs to be.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
