//! Topologies in a sweep, as paths are: `[topologies.NAME]` holds a whole
//! `emu dumbbell --topology` file (its `[bottleneck]`, `[[host]]` and
//! `[[receiver]]` tables), `[vary]` keys vary its bottleneck as they vary
//! a path's link, and each cell is one `tcpwise emu dumbbell` process
//! whose hosts run the workload's `perf client` (a host with a `command`
//! of its own runs that: a congestion-control mix is hosts whose commands
//! say `-C cubic` and `-C bbr`) against the receivers' `perf server`.
//!
//! ```toml
//! [topologies.rtt]
//! figure = "share"          # the first host's share (default), "jain" or "total"
//! [topologies.rtt.bottleneck]
//! rate = "20mbit"
//! [[topologies.rtt.host]]
//! name = "short"
//! rtt = "10ms"
//! [[topologies.rtt.host]]
//! name = "long"
//! rtt = "50ms"
//! ```
//!
//! Why the figure is one host's share by default: the question a dumbbell
//! sweep asks is how much one sender (the first declared) gets against
//! the others as buffer depth, RTTs and the mix change; Jain's index and
//! the sum are a key away, and every flow's goodput is in the record.
//! RTT pairs and mixes are topologies of their own, since they change
//! several hosts at once. Sans-IO.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a topology cell's figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Figure {
    /// The first host's flows' share of the bottleneck.
    Share,
    /// Jain's fairness index of the flows.
    Jain,
    /// The flows' summed goodput, Mbit/s.
    Total,
}

impl Figure {
    /// The figure's unit.
    pub fn unit(self) -> &'static str {
        match self {
            Figure::Share => "share",
            Figure::Jain => "Jain's index",
            Figure::Total => "Mbit/s",
        }
    }
}

/// A topology cell's own parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyCell {
    /// The topology file it runs: the declared one with its bottleneck
    /// varied and seeded; at run time hosts with no `command` get the
    /// workload's client and receivers with no `server` its server.
    pub toml: String,
    /// What its figure is.
    pub figure: Figure,
    /// The first host's name (whose share [`Figure::Share`] is).
    pub first_host: String,
}

/// A `[topologies.NAME]` table, checked.
#[derive(Debug, Clone)]
pub struct Declared {
    /// Its name.
    pub name: String,
    /// The topology's tables, a receiver added when it declared none.
    pub table: toml::Table,
    /// Its figure.
    pub figure: Figure,
    /// Its first host's name.
    pub first_host: String,
}

/// Why a `[topologies.NAME]` table is refused: one line, without its
/// place (the matrix adds it).
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct Refused(pub String);

/// Reads one `[topologies.NAME]` table and checks it with `emu
/// dumbbell`'s own parser.
pub fn declare(name: &str, table: &toml::Table) -> Result<Declared, Refused> {
    declare_inner(name, table).map_err(Refused)
}

fn declare_inner(name: &str, table: &toml::Table) -> Result<Declared, String> {
    let mut table = table.clone();
    let figure = match table.remove("figure") {
        None => Figure::Share,
        Some(toml::Value::String(s)) => match s.as_str() {
            "share" => Figure::Share,
            "jain" => Figure::Jain,
            "total" => Figure::Total,
            other => return Err(format!("figure '{other}': share, jain or total")),
        },
        Some(_) => return Err("figure: a string (share, jain or total)".into()),
    };
    if table
        .get("bottleneck")
        .is_some_and(|b| b.get("seed").is_some())
    {
        return Err(
            "bottleneck 'seed' is the matrix's, at the top: each cell's seed is drawn from it"
                .into(),
        );
    }
    if !table.contains_key("receiver") {
        let mut r = toml::Table::new();
        r.insert("name".into(), "receiver".into());
        table.insert("receiver".into(), toml::Value::Array(vec![r.into()]));
    }
    let text = toml::to_string(&table).map_err(|e| e.to_string())?;
    let spec = tcpwise_emu::topology::parse(&text, Path::new(name)).map_err(|e| {
        let e = e.to_string();
        // The line is the regenerated file's, not the matrix's: drop it.
        let prefix = format!("topology {name}");
        let rest = e.strip_prefix(&prefix).unwrap_or(&e);
        let rest = rest.trim_start_matches([' ', ':']);
        let rest = match rest.strip_prefix("line ") {
            Some(r) => r.split_once(": ").map_or(r, |(_, w)| w),
            None => rest,
        };
        rest.to_string()
    })?;
    let first_host = spec
        .hosts
        .first()
        .map(|h| h.name.clone())
        .ok_or("it declares no [[host]]")?;
    Ok(Declared {
        name: name.to_string(),
        table,
        figure,
        first_host,
    })
}

/// One cell's topology: the varied keys set on its bottleneck, and its seed.
pub fn cell(d: &Declared, vary: &[(String, toml::Value)], seed: u64) -> TopologyCell {
    let mut table = d.table.clone();
    let b = table
        .entry("bottleneck")
        .or_insert_with(|| toml::Table::new().into());
    if let toml::Value::Table(b) = b {
        for (k, v) in vary {
            b.insert(k.clone(), v.clone());
        }
        // Cell seeds are drawn below 2^63.
        b.insert("seed".into(), toml::Value::Integer(seed as i64));
    }
    TopologyCell {
        toml: toml::to_string(&table).unwrap_or_default(),
        figure: d.figure,
        first_host: d.first_host.clone(),
    }
}

/// The file a cell's `emu dumbbell` reads: the commands filled in.
/// `client` is the workload's host command, `server` its server's.
pub fn run_text(t: &TopologyCell, client: &str, server: &str) -> String {
    let Ok(mut table) = t.toml.parse::<toml::Table>() else {
        return t.toml.clone();
    };
    let fill = |table: &mut toml::Table, kind: &str, key: &str, with: &str| {
        if let Some(toml::Value::Array(nodes)) = table.get_mut(kind) {
            for n in nodes.iter_mut().filter_map(toml::Value::as_table_mut) {
                n.entry(key).or_insert_with(|| with.into());
            }
        }
    };
    fill(&mut table, "host", "command", client);
    fill(&mut table, "receiver", "server", server);
    toml::to_string(&table).unwrap_or_default()
}

/// Where a cell's topology file goes in the sweep's `tmp`.
pub fn file(tmp: &Path, id: &str) -> PathBuf {
    tmp.join(format!("{id}.topology.toml"))
}

/// The cell's figure and its per-second samples from `emu dumbbell
/// --stats-json`: over the first direction that carried bulk flows, in
/// the seconds every flow ran.
pub fn figure(t: &TopologyCell, emu: &serde_json::Value) -> Option<(f64, Vec<f64>)> {
    let w = emu.get("shares")?.as_array()?.first()?;
    let from: Vec<&str> = (w.get("from")?.as_array()?.iter())
        .filter_map(|v| v.as_str())
        .collect();
    let per_s: Vec<Vec<f64>> = (w.get("per_s_bps")?.as_array()?.iter())
        .map(|f| {
            f.as_array()
                .map(|s| s.iter().filter_map(|x| x.as_f64()).collect())
                .unwrap_or_default()
        })
        .collect();
    let seconds = per_s.iter().map(Vec::len).min().unwrap_or(0);
    let column = |s: usize| -> Vec<f64> { per_s.iter().map(|f| f[s]).collect() };
    let mine = |v: &[f64]| -> f64 {
        let total: f64 = v.iter().sum();
        let own: f64 = (from.iter().zip(v))
            .filter(|(n, _)| **n == t.first_host)
            .map(|(_, x)| x)
            .sum();
        if total > 0.0 { own / total } else { 0.0 }
    };
    let jain = |v: &[f64]| tcpwise_emu::flows::jain(v);
    let of = |v: &[f64]| match t.figure {
        Figure::Share => mine(v),
        Figure::Jain => jain(v),
        Figure::Total => v.iter().sum::<f64>() / 1e6,
    };
    let whole: Vec<f64> = (w.get("goodput_bps")?.as_array()?.iter())
        .filter_map(|x| x.as_f64())
        .collect();
    if t.figure == Figure::Share && !from.contains(&t.first_host.as_str()) {
        return None;
    }
    Some((of(&whole), (0..seconds).map(|s| of(&column(s))).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(text: &str) -> Result<Declared, String> {
        declare("t", &text.parse::<toml::Table>().unwrap()).map_err(|e| e.0)
    }

    const TWO: &str = r#"
[bottleneck]
rate = "20mbit"
[[host]]
name = "short"
rtt = "10ms"
[[host]]
name = "long"
rtt = "50ms"
command = "tcpwise perf client -C bbr $TCPWISE_PEER"
"#;

    #[test]
    fn a_cell_varies_and_seeds_the_bottleneck_and_fills_the_commands() {
        let d = declared(TWO).unwrap();
        assert_eq!((d.figure, d.first_host.as_str()), (Figure::Share, "short"));
        let c = cell(&d, &[("queue".into(), "2bdp".into())], 42);
        let text = run_text(&c, "CLIENT", "SERVER");
        let t: toml::Table = text.parse().unwrap();
        assert_eq!(t["bottleneck"]["queue"].as_str(), Some("2bdp"));
        assert_eq!(t["bottleneck"]["seed"].as_integer(), Some(42));
        assert_eq!(t["host"][0]["command"].as_str(), Some("CLIENT"));
        let own = "tcpwise perf client -C bbr $TCPWISE_PEER";
        assert_eq!(t["host"][1]["command"].as_str(), Some(own));
        assert_eq!(t["receiver"][0]["server"].as_str(), Some("SERVER"));
        // What runs is a topology emu dumbbell reads.
        assert!(tcpwise_emu::topology::parse(&text, Path::new("x")).is_ok());
    }

    #[test]
    fn refuses_what_emu_dumbbell_refuses_and_its_own_keys() {
        let bad = TWO.replace("rtt = \"10ms\"", "rtt = \"10ms\"\nbandwith = \"1mbit\"");
        let e = declared(&bad).unwrap_err();
        assert!(e.contains("unknown key 'bandwith'"), "{e}");
        assert!(!e.contains("line"), "{e}");
        let e = declared(&format!("figure = \"mean\"\n{TWO}")).unwrap_err();
        assert_eq!(e, "figure 'mean': share, jain or total");
        let e = declared("[bottleneck]\nrate = \"1mbit\"\n").unwrap_err();
        assert!(e.contains("host"), "{e}");
        let seeded = TWO.replace("rate = \"20mbit\"", "rate = \"20mbit\"\nseed = 3");
        assert!(declared(&seeded).unwrap_err().contains("matrix's"));
    }

    #[test]
    fn the_figure_comes_from_the_bottlenecks_shares() {
        let d = declared(TWO).unwrap();
        let emu = serde_json::json!({"shares": [{
            "direction": "up", "from": ["short", "long"],
            "goodput_bps": [15e6, 5e6],
            "per_s_bps": [[16e6, 14e6], [4e6, 6e6]]}]});
        let mut c = cell(&d, &[], 1);
        assert_eq!(figure(&c, &emu), Some((0.75, vec![0.8, 0.7])));
        c.figure = Figure::Total;
        assert_eq!(figure(&c, &emu), Some((20.0, vec![20.0, 20.0])));
        c.figure = Figure::Jain;
        let (j, s) = figure(&c, &emu).unwrap();
        assert!((j - 0.8).abs() < 1e-9 && s.len() == 2);
        // No flow of the first host: no figure, the cell failed.
        c.figure = Figure::Share;
        c.first_host = "other".into();
        assert_eq!(figure(&c, &emu), None);
    }
}
