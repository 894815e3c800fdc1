//! A dumbbell declared in a file (`--topology FILE`) or on the command
//! line (`--host NAME:rtt=10ms,cc=bbr`), without I/O: what it says, checked
//! before anything is set up.
//!
//! The shape is the one congestion-control experiments start from: sender
//! hosts, each in its own namespace behind its own access link, meet at
//! one shared bottleneck, behind which sit one or more receivers (each
//! optionally behind an access link of its own). A general graph is not
//! expressible, on purpose: every key below has one meaning in it.
//!
//! ```toml
//! [bottleneck]          # emu pair's --config keys; "up" = hosts to receivers
//! rate = "20mbit"
//! up-queue = "droptail:limit=0.5bdp"   # BDP of the longest path through it
//!
//! [[host]]              # a sender: emu pair's keys are its access link
//! name = "a"
//! rtt = "10ms"
//! cc = "cubic"          # net.ipv4.tcp_congestion_control in its namespace
//! start = "5s"          # its command starts this long after the first
//! command = "tcpwise perf client -t 20 $TCPWISE_PEER"
//! to = "sink"           # the receiver TCPWISE_PEER names (default: the only one)
//! sysctl = ["net.ipv4.tcp_ecn=1"]
//!
//! [[receiver]]
//! name = "sink"
//! server = "tcpwise perf server"
//! ```
//!
//! Why links live in their host's table: an access link belongs to
//! exactly one host, so a link "to an undeclared host" can only be a `to`
//! that names no receiver, and every error can say which host it is about.

use crate::EmuError;
use crate::config::path_spec;
use crate::path::PathSpec;
use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use tcpwise_link::LinkConfig;
use tcpwise_units::{Nanos, parse_duration};

/// At most this many sender hosts (their addresses are 198.18.1.1 up).
pub const MAX_HOSTS: usize = 64;
/// At most this many receivers (198.18.2.1 up).
pub const MAX_RECEIVERS: usize = 16;

/// Which side of the bottleneck a node is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// A sender host (the bottleneck's up input).
    Host,
    /// A receiver (behind the bottleneck).
    Receiver,
}

impl Side {
    fn word(self) -> &'static str {
        match self {
            Side::Host => "host",
            Side::Receiver => "receiver",
        }
    }
}

/// One host or receiver as declared.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    /// Its name (letters, digits, `-`; at most 15).
    pub name: String,
    /// Host or receiver.
    pub side: Side,
    /// Its access link, as `emu pair` flags (empty: no delay, no limit).
    pub link: Vec<OsString>,
    /// Congestion control of its sockets.
    pub cc: Option<String>,
    /// Its namespace's sysctls, after the testbed's own.
    pub sysctls: Vec<(String, String)>,
    /// A host's command, or a receiver's server (run by `sh -c`).
    pub command: Option<String>,
    /// When a host's command starts, after the first one's.
    pub start: Nanos,
    /// The receiver a host talks to (its `TCPWISE_PEER`).
    pub to: Option<String>,
    /// Where it was declared (0: on the command line).
    pub line: usize,
}

/// A whole topology as declared.
#[derive(Debug, Clone, Default)]
pub struct TopologySpec {
    /// The bottleneck, as `emu pair`'s link flags.
    pub bottleneck: PathSpec,
    /// Sender hosts, in order.
    pub hosts: Vec<NodeSpec>,
    /// Receivers, in order.
    pub receivers: Vec<NodeSpec>,
}

/// Keys of a host or receiver table that are not link keys.
const NODE_KEYS: &[&str] = &["name", "cc", "sysctl", "command", "server", "start", "to"];

/// Where errors point: a file and its text, or the command line.
struct Origin<'a> {
    file: Option<&'a Path>,
    text: &'a str,
}

impl Origin<'_> {
    fn error(&self, line: usize, what: String) -> EmuError {
        EmuError::Config(match self.file {
            Some(f) if line > 0 => format!("topology {} line {line}: {what}", f.display()),
            Some(f) => format!("topology {}: {what}", f.display()),
            None => what,
        })
    }

    /// The line of `key` in the `nth` table `[[kind]]` (or `[kind]`):
    /// TOML parsers keep no positions once parsed, so the text is read
    /// again for them.
    fn line_of(&self, kind: &str, nth: usize, key: Option<&str>) -> usize {
        let (mut seen, mut inside, mut header) = (0usize, false, 0usize);
        for (i, raw) in self.text.lines().enumerate() {
            let l = raw.trim();
            if l.starts_with('[') {
                let name = l.trim_matches(|c| c == '[' || c == ']').trim();
                let top = name.split('.').next().unwrap_or("").trim();
                if l.starts_with("[[") && name == kind {
                    seen += 1;
                }
                inside = top == kind && (seen == nth + 1 || !l.starts_with("[["));
                if inside && (name == kind) {
                    header = i + 1;
                }
                continue;
            }
            if let Some(k) = key
                && inside
                && l.strip_prefix(k)
                    .is_some_and(|r| r.trim_start().starts_with(['=', '.']))
            {
                return i + 1;
            }
        }
        header
    }

    /// The first line that opens or sets a top-level `key`.
    fn top_line(&self, key: &str) -> usize {
        self.text
            .lines()
            .position(|l| {
                let l = l.trim().trim_start_matches('[').trim();
                l.strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with([']', '=', '.']))
            })
            .map_or(0, |i| i + 1)
    }

    /// The first line at or after `from` that sets `key`.
    fn line_of_after(&self, from: usize, key: &str) -> usize {
        self.text
            .lines()
            .enumerate()
            .skip(from.saturating_sub(1))
            .find(|(_, l)| {
                l.trim()
                    .strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
            .map_or(from, |(i, _)| i + 1)
    }
}

/// Reads a topology file.
pub fn load(file: &Path) -> Result<TopologySpec, EmuError> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        EmuError::caused(
            crate::Kind::Config,
            format!("cannot read topology {}", file.display()),
            e,
        )
    })?;
    parse(&text, file)
}

/// Parses a topology file's text (`file` names it in errors).
pub fn parse(text: &str, file: &Path) -> Result<TopologySpec, EmuError> {
    let at = Origin {
        file: Some(file),
        text,
    };
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map_or(0, |s| {
            text[..s.start.min(text.len())].lines().count().max(1)
        });
        at.error(line, e.message().to_string())
    })?;
    let mut spec = TopologySpec {
        bottleneck: path_spec(&[])?,
        ..TopologySpec::default()
    };
    for (k, v) in &table {
        match (k.as_str(), v) {
            ("bottleneck", toml::Value::Table(t)) => {
                let args = link_args(t, &at, "bottleneck", 0, "the bottleneck")?;
                spec.bottleneck = path_spec(&args)?;
            }
            ("host" | "receiver", toml::Value::Array(items)) => {
                let side = if k == "host" {
                    Side::Host
                } else {
                    Side::Receiver
                };
                for (i, item) in items.iter().enumerate() {
                    let toml::Value::Table(t) = item else {
                        return Err(at.error(0, format!("'{k}' is a list of tables: [[{k}]]")));
                    };
                    let node = node(t, side, &at, i)?;
                    match side {
                        Side::Host => spec.hosts.push(node),
                        Side::Receiver => spec.receivers.push(node),
                    }
                }
            }
            _ => {
                return Err(at.error(
                    at.top_line(k),
                    format!(
                        "unknown key '{k}' (a topology has [bottleneck], [[host]] and [[receiver]] tables)"
                    ),
                ));
            }
        }
    }
    check(&spec, &at)?;
    Ok(spec)
}

/// A `[[host]]` or `[[receiver]]` table.
fn node(t: &toml::Table, side: Side, at: &Origin<'_>, nth: usize) -> Result<NodeSpec, EmuError> {
    let kind = side.word();
    let line = at.line_of(kind, nth, None);
    let text = |key: &str| -> Result<Option<String>, EmuError> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(at.error(
                at.line_of(kind, nth, Some(key)),
                format!("'{key}' of a {kind} is a string"),
            )),
        }
    };
    let name = text("name")?.ok_or_else(|| at.error(line, format!("a {kind} needs a name")))?;
    let what = format!("{kind} '{name}'");
    let server_key = if side == Side::Host {
        "command"
    } else {
        "server"
    };
    for k in t.keys() {
        let wrong_side = (k == "server" && side == Side::Host)
            || (matches!(k.as_str(), "command" | "to" | "start") && side == Side::Receiver);
        if wrong_side {
            return Err(at.error(
                at.line_of(kind, nth, Some(k)),
                format!("{what}: '{k}' is a key of a {}", other(side).word()),
            ));
        }
    }
    let start = match text("start")? {
        None => 0,
        Some(s) => parse_duration(&s).map_err(|e| {
            at.error(
                at.line_of(kind, nth, Some("start")),
                format!("{what}: 'start': {e}"),
            )
        })?,
    };
    let links: toml::Table = t
        .iter()
        .filter(|(k, _)| !NODE_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(NodeSpec {
        link: link_args(&links, at, kind, nth, &what)?,
        cc: text("cc")?,
        sysctls: sysctls(t.get("sysctl"), at, kind, nth, &what)?,
        command: text(server_key)?,
        start,
        to: text("to")?,
        name,
        side,
        line,
    })
}

fn other(side: Side) -> Side {
    match side {
        Side::Host => Side::Receiver,
        Side::Receiver => Side::Host,
    }
}

/// `sysctl = ["KEY=VALUE", ...]` (or one string).
fn sysctls(
    v: Option<&toml::Value>,
    at: &Origin<'_>,
    kind: &str,
    nth: usize,
    what: &str,
) -> Result<Vec<(String, String)>, EmuError> {
    let items: Vec<&toml::Value> = match v {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a.iter().collect(),
        Some(one) => vec![one],
    };
    let bad = |e: String| {
        at.error(
            at.line_of(kind, nth, Some("sysctl")),
            format!("{what}: {e}"),
        )
    };
    items
        .into_iter()
        .map(|i| {
            let s = i
                .as_str()
                .ok_or_else(|| bad("'sysctl' takes \"KEY=VALUE\" strings".into()))?;
            let crate::netns::Sysctl(k, v) = s.parse().map_err(|e: EmuError| bad(e.to_string()))?;
            Ok((k, v))
        })
        .collect()
}

/// A link's keys as `emu pair` flags, each key known and each value
/// checked by its flag's parser, errors at the key's line.
fn link_args(
    t: &toml::Table,
    at: &Origin<'_>,
    kind: &str,
    nth: usize,
    what: &str,
) -> Result<Vec<OsString>, EmuError> {
    let known = crate::config::link_keys();
    let mut out = Vec::new();
    for (k, v) in t {
        let key = k.replace('_', "-");
        let line = at.line_of(kind, nth, Some(k));
        let sub = matches!(key.as_str(), "up" | "down") && v.is_table();
        let record = matches!(key.as_str(), "log" | "pcap");
        if record || (!sub && !known.contains(&key)) {
            let keys = if kind == "bottleneck" {
                String::new()
            } else {
                format!("{}, ", NODE_KEYS.join(", "))
            };
            return Err(at.error(
                line,
                format!(
                    "{what}: unknown key '{key}' (keys: {keys}and emu pair's link keys: rtt, rate, queue, loss, jitter, [up], [down], ...)"
                ),
            ));
        }
        let one: toml::Table = [(k.clone(), v.clone())].into_iter().collect();
        let file = at.file.unwrap_or(Path::new("--host"));
        let args = crate::config::table_to_args(&one, file).map_err(|e| {
            let msg = e.to_string();
            let msg = msg.split_once(": ").map_or(msg.as_str(), |(_, m)| m);
            at.error(line, format!("{what}: {msg}"))
        })?;
        out.extend(args);
    }
    Ok(out)
}

/// What only the whole can say is wrong: names, paths, sizes.
fn check(spec: &TopologySpec, at: &Origin<'_>) -> Result<(), EmuError> {
    if spec.hosts.is_empty() {
        return Err(at.error(0, "no [[host]]: a topology needs a sender".into()));
    }
    if spec.hosts.len() > MAX_HOSTS || spec.receivers.len() > MAX_RECEIVERS {
        return Err(at.error(
            0,
            format!("at most {MAX_HOSTS} hosts and {MAX_RECEIVERS} receivers"),
        ));
    }
    let all: Vec<&NodeSpec> = spec.hosts.iter().chain(&spec.receivers).collect();
    for (i, n) in all.iter().enumerate() {
        let ok = !n.name.is_empty()
            && n.name.len() <= 15
            && n.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !ok || n.name == "bottleneck" {
            return Err(at.error(
                n.line,
                format!(
                    "'{}' is not a name for a {}: up to 15 letters, digits and '-', and not 'bottleneck'",
                    n.name,
                    n.side.word()
                ),
            ));
        }
        if let Some(first) = all[..i].iter().find(|m| m.name == n.name) {
            return Err(at.error(
                n.line,
                format!(
                    "two hosts are named '{}' (the {} declared at line {} and this {})",
                    n.name,
                    first.side.word(),
                    first.line,
                    n.side.word()
                ),
            ));
        }
    }
    check_paths(spec, at)
}

/// Every host reaches a declared receiver, every receiver is reached.
fn check_paths(spec: &TopologySpec, at: &Origin<'_>) -> Result<(), EmuError> {
    let names: Vec<&str> = spec.receivers.iter().map(|r| r.name.as_str()).collect();
    for h in &spec.hosts {
        match (&h.to, names.as_slice()) {
            (Some(to), _) if !names.contains(&to.as_str()) => {
                let line = if h.line > 0 {
                    at.line_of_after(h.line, "to")
                } else {
                    0
                };
                let known = if names.is_empty() {
                    "none is declared".to_string()
                } else {
                    format!("receivers: {}", names.join(", "))
                };
                return Err(at.error(
                    line,
                    format!(
                        "host '{}' has a path to '{to}', which is not a declared receiver ({known})",
                        h.name
                    ),
                ));
            }
            (None, []) => {
                return Err(at.error(
                    h.line,
                    format!(
                        "host '{}' is on no path: the topology declares no [[receiver]]",
                        h.name
                    ),
                ));
            }
            (None, [_, _, ..]) => {
                return Err(at.error(
                    h.line,
                    format!(
                        "host '{}' is on no path: there are {} receivers and it names none (to = \"{}\")",
                        h.name,
                        names.len(),
                        names[0]
                    ),
                ));
            }
            _ => {}
        }
    }
    for r in &spec.receivers {
        let reached = spec
            .hosts
            .iter()
            .any(|h| h.to.as_deref().unwrap_or(names[0]) == r.name);
        if !reached {
            return Err(at.error(
                r.line,
                format!(
                    "receiver '{}' is on no path: no host has to = \"{}\"",
                    r.name, r.name
                ),
            ));
        }
    }
    Ok(())
}

/// The command line's short form: `--host NAME[:key=value,...]` (the keys
/// of a `[[host]]` table), one receiver running `server`, the bottleneck's
/// flags as `emu pair`'s.
pub fn from_flags(
    hosts: &[String],
    bottleneck: PathSpec,
    server: Option<String>,
) -> Result<TopologySpec, EmuError> {
    let at = Origin {
        file: None,
        text: "",
    };
    let mut spec = TopologySpec {
        bottleneck,
        ..TopologySpec::default()
    };
    for (i, h) in hosts.iter().enumerate() {
        let (name, rest) = h.split_once(':').unwrap_or((h, ""));
        let mut t = toml::Table::new();
        t.insert("name".into(), name.into());
        for kv in rest.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                EmuError::Config(format!(
                    "--host '{h}': '{kv}' is not key=value (e.g. --host a:rtt=10ms,cc=bbr)"
                ))
            })?;
            t.insert(k.into(), v.into());
        }
        let node = node(&t, Side::Host, &at, i)
            .map_err(|e| EmuError::Config(format!("--host '{h}': {e}")))?;
        spec.hosts.push(node);
    }
    spec.receivers.push(NodeSpec {
        name: "receiver".into(),
        side: Side::Receiver,
        link: Vec::new(),
        cc: None,
        sysctls: Vec::new(),
        command: server,
        start: 0,
        to: None,
        line: 0,
    });
    check(&spec, &at)?;
    Ok(spec)
}

/// A node with its links resolved and its addresses.
#[derive(Debug, Clone)]
pub struct Node {
    /// As declared.
    pub spec: NodeSpec,
    /// Its access link toward the bottleneck's side (a host's up, a
    /// receiver's down: what it sends) and back.
    pub out: LinkConfig,
    /// Its access link's other direction (what it receives).
    pub back: LinkConfig,
    /// Its IPv4 address.
    pub v4: Ipv4Addr,
    /// Its IPv6 address.
    pub v6: Ipv6Addr,
    /// A host's receiver (index into receivers); a receiver's first host.
    pub peer: usize,
}

impl Node {
    /// Its addresses, IPv4 first.
    pub fn addrs(&self) -> [IpAddr; 2] {
        [self.v4.into(), self.v6.into()]
    }

    /// Its access link's round trip (both directions' delay), ns.
    pub fn rtt(&self) -> u64 {
        self.out.delay + self.back.delay
    }
}

/// A topology ready to build.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The bottleneck: up (hosts to receivers), down.
    pub bottleneck: (LinkConfig, LinkConfig),
    /// Sender hosts.
    pub hosts: Vec<Node>,
    /// Receivers.
    pub receivers: Vec<Node>,
}

/// Whether `p` is the link no flag was given for (what `--topology`
/// needs of the command line's own link flags).
pub fn is_default(p: &PathSpec) -> bool {
    path_spec(&[]).is_ok_and(|d| format!("{d:?}") == format!("{p:?}"))
}

/// The addresses of host `i` (side 1) or receiver `i` (side 2).
pub fn address(side: Side, i: usize) -> (Ipv4Addr, Ipv6Addr) {
    let s = match side {
        Side::Host => 1,
        Side::Receiver => 2,
    };
    (
        Ipv4Addr::new(198, 18, s, i as u8 + 1),
        Ipv6Addr::new(0x2001, 2, 0, u16::from(s), 0, 0, 0, i as u16 + 1),
    )
}

impl TopologySpec {
    /// Resolves every link: the access links as `emu pair` would, the
    /// bottleneck's queue BDP over the longest path through it.
    pub fn resolve(&self) -> Result<Resolved, EmuError> {
        let node = |n: &NodeSpec, i: usize, peer: usize| -> Result<Node, EmuError> {
            let (up, down) = path_spec(&n.link)?
                .resolve()
                .map_err(|e| EmuError::Config(format!("{} '{}': {e}", n.side.word(), n.name)))?;
            let (out, back) = match n.side {
                Side::Host => (up, down),
                // A receiver's "up" is toward it, as the bottleneck's.
                Side::Receiver => (down, up),
            };
            let (v4, v6) = address(n.side, i);
            Ok(Node {
                spec: n.clone(),
                out,
                back,
                v4,
                v6,
                peer,
            })
        };
        let recv_index = |h: &NodeSpec| {
            h.to.as_ref()
                .and_then(|t| self.receivers.iter().position(|r| &r.name == t))
                .unwrap_or(0)
        };
        let hosts = (self.hosts.iter().enumerate())
            .map(|(i, h)| node(h, i, recv_index(h)))
            .collect::<Result<Vec<_>, _>>()?;
        let receivers = (self.receivers.iter().enumerate())
            .map(|(j, r)| {
                let first = self.hosts.iter().position(|h| recv_index(h) == j);
                node(r, j, first.unwrap_or(0))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let b = &self.bottleneck;
        let (own_up, own_down) = b.resolve()?;
        let longest = hosts
            .iter()
            .map(|h| h.rtt() + receivers[h.peer].rtt())
            .max()
            .unwrap_or(0)
            + own_up.delay
            + own_down.delay;
        let bottleneck = b
            .resolve_bdp(Some(longest))
            .map_err(|e| EmuError::Config(format!("the bottleneck: {e}")))?;
        Ok(Resolved {
            bottleneck,
            hosts,
            receivers,
        })
    }
}

#[cfg(test)]
mod tests;
