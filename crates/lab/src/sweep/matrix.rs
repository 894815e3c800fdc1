//! The matrix: a TOML file of paths, link keys to vary, workloads and
//! repetitions, expanded into cells. Sans-IO: the file's text in, cells
//! out, or one line naming the file, the line and the key.
//!
//! Why paths are `emu`'s `--config` keys: a path in a sweep is then the
//! same words as a path on the command line, checked by the same parsers
//! (`tcpwise_emu::config::table_to_args`), and a cell's link can be rerun
//! by hand with `tcpwise emu pair` and the flags `--list` prints.
//!
//! ```toml
//! repetitions = 2
//! [paths.dsl]
//! rtt = "40ms"
//! rate = "16mbit"
//! [vary]
//! queue = ["400KB", "fq-codel:limit=400KB"]
//! [workloads.cubic]
//! tool = "perf"
//! args = ["-t", "10", "-C", "cubic"]
//! ```
//!
//! Cells are every path × every combination of the `vary` values ×
//! every workload × every repetition, in that order; each has an id made
//! of those names (`dsl-cubic-queue=fq-codel_limit_400KB-r2`) and a seed
//! drawn from the matrix's seed and the id, so a cell is the same cell
//! in every shard and every rerun.

use crate::sweep::Tool;
use crate::sweep::topology::{self, Declared, TopologyCell};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use toml::Spanned;

/// One run: a link, a workload, a repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Its place in the expansion order, from 0.
    pub index: usize,
    /// Deterministic id, also its file name (`cells/<id>.json`).
    pub id: String,
    /// The path's name.
    pub path: String,
    /// The varied link keys and the values this cell has.
    pub vary: Vec<(String, String)>,
    /// The workload's name.
    pub workload: String,
    /// Which tool the workload runs.
    pub tool: Tool,
    /// The tool's flags, as written.
    pub args: Vec<String>,
    /// Extra flags for the tool's server.
    pub server_args: Vec<String>,
    /// Repetition, from 1.
    pub repetition: u32,
    /// The link's seed (`--seed`).
    pub seed: u64,
    /// The link flags of `tcpwise emu pair`, the field report's included.
    pub link: Vec<String>,
    /// The largest rate the link is given (bit/s), for how many cells
    /// run at once; `None` for unlimited or trace links, which run alone.
    pub rate_bps: Option<u64>,
    /// A topology's cell (`[topologies.NAME]`): `emu dumbbell` runs it,
    /// `link` is empty, and it runs alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyCell>,
}

/// A matrix expanded into its cells.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// Cells in expansion order.
    pub cells: Vec<Cell>,
    /// A hash of every cell (ids, links, workloads, seeds): shards of one
    /// matrix share it, shards of two differ.
    pub fingerprint: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDe {
    repetitions: Option<Spanned<i64>>,
    seed: Option<u64>,
    #[serde(default)]
    paths: BTreeMap<Spanned<String>, BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
    #[serde(default)]
    vary: BTreeMap<Spanned<String>, Spanned<Vec<toml::Value>>>,
    #[serde(default)]
    workloads: BTreeMap<Spanned<String>, WorkloadDe>,
    #[serde(default)]
    topologies: BTreeMap<Spanned<String>, Spanned<toml::Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadDe {
    tool: Spanned<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    server: Vec<String>,
}

/// Line (from 1) of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// A matrix file's fault: the file, the line when the fault has one, and
/// what is wrong, printed as `FILE:LINE: what`.
#[derive(Debug, thiserror::Error)]
#[error("{file}{}: {what}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct MatrixError {
    /// The matrix file as given.
    pub file: String,
    /// The line the fault is on.
    pub line: Option<usize>,
    /// What is wrong.
    pub what: String,
}

impl tcpwise_outcome::Classify for MatrixError {
    fn class(&self) -> Option<tcpwise_outcome::Class> {
        Some(tcpwise_outcome::Class::Usage)
    }
}

/// The text being read, to place an error at a span.
struct Source<'a> {
    text: &'a str,
    file: &'a Path,
}

impl Source<'_> {
    fn at(&self, span: std::ops::Range<usize>, what: impl ToString) -> MatrixError {
        MatrixError {
            file: self.file.display().to_string(),
            line: Some(line_of(self.text, span.start)),
            what: what.to_string(),
        }
    }

    fn whole(&self, what: impl ToString) -> MatrixError {
        MatrixError {
            file: self.file.display().to_string(),
            line: None,
            what: what.to_string(),
        }
    }

    /// A link key's flags, each checked by its flag's own parser.
    fn link_args(
        &self,
        key: &Spanned<String>,
        v: &toml::Value,
    ) -> Result<Vec<String>, MatrixError> {
        let mut t = toml::Table::new();
        t.insert(key.get_ref().clone(), v.clone());
        tcpwise_emu::config::table_to_args(&t, self.file)
            .map(|a| a.into_iter().map(os_string).collect())
            .map_err(|e| {
                let msg = e.to_string();
                let prefix = format!("config {}: ", self.file.display());
                self.at(key.span(), msg.strip_prefix(&prefix).unwrap_or(&msg))
            })
    }
}

/// A path's name and its link flags.
type PathFlags = (String, Vec<String>);

/// One value of a varied key: (key, value as shown, flags, value).
type AxisValue = (String, String, Vec<String>, toml::Value);

/// A varied key's values.
type Axis = Vec<AxisValue>;

/// Reads a matrix from its text; `file` names it in errors.
pub fn parse(text: &str, file: &Path) -> Result<Matrix, MatrixError> {
    let src = Source { text, file };
    let de: FileDe = toml::from_str(text).map_err(|e| match e.span() {
        Some(span) => src.at(span, e.message().replace('`', "'")),
        None => src.whole(e.message()),
    })?;
    let reps = match &de.repetitions {
        None => 1,
        Some(r) if (1..=10_000).contains(r.get_ref()) => *r.get_ref() as u32,
        Some(r) => return Err(src.at(r.span(), "'repetitions' must be 1 to 10000")),
    };
    let paths = paths(&src, &de)?;
    let axes = axes(&src, &de)?;
    let mut workloads = Vec::new();
    for (wname, w) in &de.workloads {
        check_name(wname, "workload").map_err(|m| src.at(wname.span(), m))?;
        let tool: Tool = w
            .tool
            .get_ref()
            .parse()
            .map_err(|m| src.at(w.tool.span(), m))?;
        tool.check_args(&w.args, &w.server)
            .map_err(|m| src.at(wname.span(), format!("workload '{}': {m}", wname.get_ref())))?;
        workloads.push((wname.get_ref().clone(), tool, w));
    }
    let tops = topologies(&src, &de, &paths, &workloads)?;
    let targets: Vec<Target> = (paths.iter().map(Target::Path))
        .chain(tops.iter().map(Target::Topology))
        .collect();
    let cells = expand(&targets, &axes, &workloads, reps, de.seed.unwrap_or(1));
    check_cells(&src, &cells, paths.is_empty() && tops.is_empty())?;
    let fingerprint = format!(
        "{:016x}",
        fnv(&serde_json::to_string(&cells).unwrap_or_default())
    );
    Ok(Matrix { cells, fingerprint })
}

/// The `[paths.NAME]` tables as link flags.
fn paths(src: &Source, de: &FileDe) -> Result<Vec<PathFlags>, MatrixError> {
    let mut paths = Vec::new();
    for (pname, keys) in &de.paths {
        check_name(pname, "path").map_err(|m| src.at(pname.span(), m))?;
        let mut flags = Vec::new();
        for (k, v) in keys {
            if k.get_ref() == "seed" {
                return Err(src.at(
                    k.span(),
                    "'seed' is the matrix's, at the top: each cell's link seed is drawn from it",
                ));
            }
            flags.extend(src.link_args(k, v.get_ref())?);
        }
        paths.push((pname.get_ref().clone(), flags));
    }
    Ok(paths)
}

/// The `[topologies.NAME]` tables, each checked by `emu dumbbell`'s
/// parser; their workloads must be `perf`'s (one flow per host, counted
/// at the bottleneck), and no name is both a path and a topology.
fn topologies(
    src: &Source,
    de: &FileDe,
    paths: &[PathFlags],
    workloads: &[(String, Tool, &WorkloadDe)],
) -> Result<Vec<Declared>, MatrixError> {
    let mut out = Vec::new();
    for (name, table) in &de.topologies {
        check_name(name, "topology").map_err(|m| src.at(name.span(), m))?;
        let n = name.get_ref();
        if paths.iter().any(|(p, _)| p == n) {
            return Err(src.at(name.span(), format!("'{n}' names a path and a topology")));
        }
        if let Some((w, _, _)) = workloads.iter().find(|(_, t, _)| *t != Tool::Perf) {
            return Err(src.at(
                name.span(),
                format!("workload '{w}': a topology's hosts run perf workloads only (rpm and get time one client)"),
            ));
        }
        let d = topology::declare(n, table.get_ref())
            .map_err(|m| src.at(table.span(), format!("topology '{n}': {m}")))?;
        out.push(d);
    }
    Ok(out)
}

/// Each `[vary]` key: its values as (key, label, flags).
fn axes(src: &Source, de: &FileDe) -> Result<Vec<Axis>, MatrixError> {
    let mut axes = Vec::new();
    for (k, values) in &de.vary {
        if values.get_ref().is_empty() {
            return Err(src.at(
                values.span(),
                format!("'vary.{}' has no values", k.get_ref()),
            ));
        }
        let mut axis = Vec::new();
        for v in values.get_ref() {
            let shown = match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            axis.push((k.get_ref().clone(), shown, src.link_args(k, v)?, v.clone()));
        }
        axes.push(axis);
    }
    Ok(axes)
}

/// What a cell runs on: a path's link, or a topology.
enum Target<'a> {
    Path(&'a PathFlags),
    Topology(&'a Declared),
}

impl Target<'_> {
    fn name(&self) -> &str {
        match self {
            Target::Path((n, _)) => n,
            Target::Topology(t) => &t.name,
        }
    }

    /// The cell's link flags (empty for a topology) and topology: the
    /// varied values after the path's own (on the command line the later
    /// flag wins), or set on the topology's bottleneck.
    fn apply(&self, combo: &[AxisValue], seed: u64) -> (Vec<String>, Option<TopologyCell>) {
        match self {
            Target::Path((_, flags)) => {
                let mut link = flags.clone();
                link.extend(combo.iter().flat_map(|(_, _, f, _)| f.iter().cloned()));
                link.extend(["--seed".to_string(), seed.to_string()]);
                (link, None)
            }
            Target::Topology(t) => {
                let varied: Vec<(String, toml::Value)> = combo
                    .iter()
                    .map(|(k, _, _, v)| (k.clone(), v.clone()))
                    .collect();
                (Vec::new(), Some(topology::cell(t, &varied, seed)))
            }
        }
    }
}

/// Every cell: paths, then topologies, x varied values x workloads x
/// repetitions, each with its seed drawn from the matrix's. A topology's
/// cell runs alone (no rate to share).
fn expand(
    targets: &[Target],
    axes: &[Axis],
    workloads: &[(String, Tool, &WorkloadDe)],
    reps: u32,
    base_seed: u64,
) -> Vec<Cell> {
    let mut cells = Vec::new();
    for target in targets {
        for combo in combinations(axes) {
            for (wname, tool, w) in workloads {
                for rep in 1..=reps {
                    let mut id = format!("{}-{wname}", target.name());
                    for (key, shown, _, _) in &combo {
                        id.push_str(&format!("-{key}={}", sanitize(shown)));
                    }
                    id.push_str(&format!("-r{rep}"));
                    let seed = fnv(&format!("{base_seed}/{id}")) >> 1;
                    let (link, topology) = target.apply(&combo, seed);
                    cells.push(Cell {
                        index: cells.len(),
                        // A topology has no link flags, so no rate: it runs alone.
                        rate_bps: max_rate(&link),
                        id,
                        path: target.name().to_string(),
                        vary: combo
                            .iter()
                            .map(|(k, s, _, _)| (k.clone(), s.clone()))
                            .collect(),
                        workload: wname.clone(),
                        tool: *tool,
                        args: w.args.clone(),
                        server_args: w.server.clone(),
                        repetition: rep,
                        seed,
                        link,
                        topology,
                    });
                }
            }
        }
    }
    cells
}

/// At least one cell, and no two with one id.
fn check_cells(src: &Source, cells: &[Cell], no_paths: bool) -> Result<(), MatrixError> {
    if cells.is_empty() {
        let missing = if no_paths {
            "no [paths.NAME] or [topologies.NAME] table"
        } else {
            "no [workloads.NAME] table"
        };
        return Err(src.whole(format!("the matrix expands to zero cells ({missing})")));
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in cells {
        if !seen.insert(c.id.as_str()) {
            return Err(src.whole(format!(
                "two cells have the id '{}' (values that differ only in punctuation); rename one",
                c.id
            )));
        }
    }
    Ok(())
}

fn os_string(s: OsString) -> String {
    s.to_string_lossy().into_owned()
}

/// Names become parts of ids and file names.
fn check_name(name: &Spanned<String>, what: &str) -> Result<(), String> {
    let n = name.get_ref();
    if n.is_empty()
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return Err(format!(
            "{what} name '{n}': letters, digits, '_' and '.' only (it becomes part of each cell's id)"
        ));
    }
    Ok(())
}

/// A value as part of an id: letters, digits, `.` and `-` kept, the rest `_`.
fn sanitize(v: &str) -> String {
    v.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every combination of one value from each axis, first axis slowest.
fn combinations<T: Clone>(axes: &[Vec<T>]) -> Vec<Vec<T>> {
    let mut out = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                axis.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push(v.clone());
                    p
                })
            })
            .collect();
    }
    out
}

/// The largest `--rate`, `--up-rate` or `--down-rate`; `None` when a
/// direction has no rate (unlimited, or a trace).
fn max_rate(link: &[String]) -> Option<u64> {
    let value = |flag: &str| -> Option<u64> {
        let i = link.iter().rposition(|a| a == flag)?;
        link.get(i + 1)?
            .parse::<tcpwise_units::Rate>()
            .ok()
            .map(|r| r.0)
    };
    let both = value("--rate");
    let up = value("--up-rate").or(both)?;
    let down = value("--down-rate").or(both)?;
    if link.iter().any(|a| a.ends_with("-trace")) {
        return None;
    }
    Some(up.max(down))
}

/// FNV-1a, 64 bits: a stable hash (std's is not stable across releases).
pub fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
repetitions = 2
seed = 7

[paths.dsl]
rtt = "40ms"
rate = "16mbit"

[paths.fibre]
rtt = "10ms"
[paths.fibre.down]
rate = "100mbit"
[paths.fibre.up]
rate = "20mbit"

[vary]
queue = ["400KB", "fq-codel:limit=400KB"]

[workloads.cubic]
tool = "perf"
args = ["-t", "2", "-C", "cubic"]
"#;

    fn parse_ok(text: &str) -> Matrix {
        parse(text, Path::new("m.toml")).unwrap()
    }

    #[test]
    fn expands_paths_values_workloads_and_repetitions() {
        let m = parse_ok(SMALL);
        assert_eq!(m.cells.len(), 2 * 2 * 2);
        let ids: Vec<&str> = m.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids[0], "dsl-cubic-queue=400KB-r1");
        assert_eq!(ids[3], "dsl-cubic-queue=fq-codel_limit_400KB-r2");
        assert_eq!(ids[4], "fibre-cubic-queue=400KB-r1");
        let c = &m.cells[3];
        assert_eq!(
            c.link[..6],
            [
                "--rate",
                "16mbit",
                "--rtt",
                "40ms",
                "--queue",
                "fq-codel:limit=400KB"
            ]
        );
        assert_eq!(c.rate_bps, Some(16_000_000));
        assert_eq!(m.cells[4].rate_bps, Some(100_000_000));
        // Seeds differ between repetitions and are the same every time.
        assert_ne!(m.cells[0].seed, m.cells[1].seed);
        assert_eq!(parse_ok(SMALL).fingerprint, m.fingerprint);
        assert_eq!(parse_ok(SMALL).cells, m.cells);
    }

    #[test]
    fn another_matrix_has_another_fingerprint() {
        let a = parse_ok(SMALL);
        let b = parse_ok(&SMALL.replace("seed = 7", "seed = 8"));
        assert_ne!(a.fingerprint, b.fingerprint);
    }

    #[test]
    fn an_unknown_key_names_file_line_and_key() {
        let e = parse(
            &SMALL.replace("rtt = \"10ms\"", "rtt = \"10ms\"\nrat = 3"),
            Path::new("m.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("m.toml:11: unknown key 'rat'"), "{e}");
        let e = parse(&format!("repetition = 2\n{SMALL}"), Path::new("m.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.toml:1: unknown field 'repetition'"), "{e}");
        let e = parse(
            &SMALL.replace("tool = \"perf\"", "tool = \"perf\"\nflags = []"),
            Path::new("m.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(":21: unknown field 'flags'"), "{e}");
    }

    #[test]
    fn bad_values_and_empty_matrices_are_refused() {
        let e = parse(
            &SMALL.replace("\"40ms\"", "\"40 parsecs\""),
            Path::new("m.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("m.toml:6: 'rtt'"), "{e}");
        let e = parse(
            &SMALL.replace("\"-C\", \"cubic\"", "\"--bogus\""),
            Path::new("m.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("workload 'cubic'") && e.contains("--bogus"),
            "{e}"
        );
        let e = parse("repetitions = 1\n", Path::new("m.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("zero cells"), "{e}");
        let e = parse(
            &SMALL.replace(
                "queue = [\"400KB\", \"fq-codel:limit=400KB\"]",
                "queue = []",
            ),
            Path::new("m.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("has no values"), "{e}");
        let e = parse(
            &SMALL.replace("repetitions = 2", "repetitions = 0"),
            Path::new("m.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("m.toml:2: 'repetitions'"), "{e}");
    }

    #[test]
    fn get_and_rpm_workloads_are_checked_by_their_own_parsers() {
        let m = |w: &str| {
            parse(
                &format!("[paths.a]\nrtt = \"10ms\"\nrate = \"10mbit\"\n[workloads.w]\n{w}"),
                Path::new("m.toml"),
            )
        };
        let ok = m("tool = \"get\"\nargs = [\"/bytes/100000\", \"-H\", \"X-Try: 1\"]\n").unwrap();
        assert_eq!(ok.cells[0].tool, Tool::Get);
        let e = m("tool = \"get\"\nargs = [\"-H\", \"X: 1\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("first argument is the path"), "{e}");
        m("tool = \"rpm\"\nargs = [\"--direction\", \"down\"]\nserver = [\"-C\", \"bbr\"]\n")
            .unwrap();
        let e = m("tool = \"rpm\"\nserver = [\"--bogus\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("server:") && e.contains("--bogus"), "{e}");
        let e = m("tool = \"iperf3\"\n").unwrap_err().to_string();
        assert!(e.starts_with("m.toml:5: unknown tool 'iperf3'"), "{e}");
    }
}
