//! A testbed in a file: `--config FILE` (TOML) holds link flags, and
//! `--print-config` writes the effective ones, so a run can be handed to
//! someone else and repeated.
//!
//! Why keys are the flags themselves: a config file is then nothing but
//! flags written down, read by the same parsers with the same errors, and
//! it can never drift from `--help`. A key is a link or record flag
//! without its dashes (`rtt = "100ms"`, `down-rate = "20mbit"`,
//! `queue = "codel:limit=400KB"`), or sits in an `[up]`/`[down]` table for
//! its `up-`/`down-` form (`[down]` `rate = "20mbit"`). Repeatable flags
//! (`outage`) take an array, switches (`trace-once`) a boolean. Flags on
//! the command line override the file's. Any other key is refused, naming
//! the file and the key, before anything is set up.

use crate::EmuError;
use clap::{ArgAction, Args, Command};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// What a key takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Switch,
    Many,
    One,
}

/// The keys a config may hold (long flag names, in `--help` order), and
/// the clap ids they parse into.
fn command() -> Command {
    crate::record::RecordArgs::augment_args(crate::path::PathSpec::augment_args(Command::new(
        "config",
    )))
}

/// The link keys a config (or a topology's link) may hold.
pub fn link_keys() -> Vec<String> {
    keys().into_iter().map(|(long, _, _)| long).collect()
}

fn keys() -> Vec<(String, String, Kind)> {
    let cmd = command();
    cmd.get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?.to_string();
            let kind = match a.get_action() {
                ArgAction::SetTrue => Kind::Switch,
                ArgAction::Append => Kind::Many,
                _ => Kind::One,
            };
            Some((long, a.get_id().to_string(), kind))
        })
        .collect()
}

/// The config file's keys as flags, in key order.
pub fn to_args(text: &str, file: &Path) -> Result<Vec<OsString>, EmuError> {
    Ok(flat(to_keyed(text, file)?))
}

/// Each flag with its value, by key (`[down] rate` is `down-rate`), so a
/// command line's own flags can drop the file's.
type Keyed = Vec<(String, Vec<OsString>)>;

fn flat(keyed: Keyed) -> Vec<OsString> {
    keyed.into_iter().flat_map(|(_, words)| words).collect()
}

fn to_keyed(text: &str, file: &Path) -> Result<Keyed, EmuError> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        EmuError::Config(format!("config {}: {}", file.display(), e.message()))
    })?;
    table_to_keyed(&table, file)
}

/// A parsed table of link keys (a config file's, or a path of `lab
/// sweep`'s matrix) as flags, each value checked by its flag's parser;
/// `file` names where it came from in the errors.
pub fn table_to_args(table: &toml::Table, file: &Path) -> Result<Vec<OsString>, EmuError> {
    Ok(flat(table_to_keyed(table, file)?))
}

fn table_to_keyed(table: &toml::Table, file: &Path) -> Result<Keyed, EmuError> {
    let bad = |what: String| EmuError::Config(format!("config {}: {what}", file.display()));
    let keys: BTreeMap<String, Kind> = keys().into_iter().map(|(l, _, k)| (l, k)).collect();
    // Each value is checked here, with its flag's own parser, so a bad one
    // is reported with the file's name (clap, later, would not name it).
    let cmd = command();
    let check = |key: &str, value: &str| -> Result<(), EmuError> {
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(key)) else {
            return Ok(());
        };
        Command::new("config")
            .no_binary_name(true)
            .arg(arg.clone().required(false))
            .try_get_matches_from([format!("--{key}"), value.to_string()])
            .map(drop)
            .map_err(|e| {
                let msg = e.to_string();
                let line = msg
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ");
                bad(format!("'{key}': {line}"))
            })
    };
    let mut out = Vec::new();
    let one = |key: String, v: &toml::Value, out: &mut Keyed| -> Result<(), EmuError> {
        let key = key.replace('_', "-");
        let Some(&kind) = keys.get(&key) else {
            return Err(bad(format!(
                "unknown key '{key}' (keys are the link flags without dashes: rtt, rate, down-rate, queue, loss, jitter, ...; see tcpwise emu pair --help)"
            )));
        };
        let flag = OsString::from(format!("--{key}"));
        let scalar = |v: &toml::Value| -> Result<String, EmuError> {
            match v {
                toml::Value::String(s) => Ok(s.clone()),
                toml::Value::Integer(i) => Ok(i.to_string()),
                toml::Value::Float(f) => Ok(f.to_string()),
                _ => Err(bad(format!(
                    "'{key}' takes a string or a number, as its flag does"
                ))),
            }
        };
        match (kind, v) {
            (Kind::Switch, toml::Value::Boolean(b)) => {
                if *b {
                    out.push((key, vec![flag]));
                }
            }
            (Kind::Switch, _) => return Err(bad(format!("'{key}' is a switch: true or false"))),
            (Kind::Many, toml::Value::Array(items)) => {
                for i in items {
                    let v = scalar(i)?;
                    check(&key, &v)?;
                    out.push((key.clone(), vec![flag.clone(), v.into()]));
                }
            }
            (_, v) => {
                let v = scalar(v)?;
                check(&key, &v)?;
                out.push((key, vec![flag, v.into()]));
            }
        }
        Ok(())
    };
    for (k, v) in table {
        match (k.as_str(), v) {
            ("up" | "down", toml::Value::Table(t)) => {
                for (k2, v2) in t {
                    one(format!("{k}-{k2}"), v2, &mut out)?;
                }
            }
            _ => one(k.clone(), v, &mut out)?,
        }
    }
    Ok(out)
}

/// A link's flags (a topology's) parsed into the [`PathSpec`] they
/// say, as clap parses `emu pair`'s.
pub fn path_spec(args: &[OsString]) -> Result<crate::path::PathSpec, EmuError> {
    use clap::FromArgMatches;
    let cmd = crate::path::PathSpec::augment_args(Command::new("link").no_binary_name(true));
    let m = cmd
        .try_get_matches_from(args)
        .map_err(|e| EmuError::Config(e.to_string().lines().next().unwrap_or("").into()))?;
    crate::path::PathSpec::from_arg_matches(&m).map_err(|e| EmuError::Config(e.to_string()))
}

/// Reads FILE and returns its flags by key.
fn load(file: &Path) -> Result<Keyed, EmuError> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        EmuError::caused(
            crate::Kind::Config,
            format!("cannot read config {}", file.display()),
            e,
        )
    })?;
    to_keyed(&text, file)
}

/// Puts `--config FILE`'s flags right after the subcommand of an
/// `emu shell|pair|selftest` command line (so the user's own flags, later,
/// override them). Other command lines come back as they were.
pub fn expand(argv: Vec<OsString>) -> Result<Vec<OsString>, EmuError> {
    let is_emu = argv.get(1).is_some_and(|a| a == "emu")
        && argv
            .get(2)
            .is_some_and(|a| a == "shell" || a == "pair" || a == "selftest");
    if !is_emu {
        return Ok(argv);
    }
    // Up to `--`: what follows is the user's command.
    let end = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    let mut files = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        if i < end && i > 2 {
            if a == "--config" {
                let Some(f) = argv.get(i + 1).filter(|_| i + 1 < end) else {
                    return Err(EmuError::Config("--config needs a FILE".into()));
                };
                files.push(f.clone());
                i += 2;
                continue;
            }
            if let Some(f) = a.to_str().and_then(|s| s.strip_prefix("--config=")) {
                files.push(f.into());
                i += 1;
                continue;
            }
        }
        rest.push(a.clone());
        i += 1;
    }
    if files.is_empty() {
        return Ok(rest);
    }
    // The user's own flags override the file's: a key given on the
    // command line drops the file's value of it (and of what it covers),
    // rather than clap refusing it twice or a file's `[down]` winning.
    let cut = rest.iter().position(|a| a == "--").unwrap_or(rest.len());
    let given: Vec<String> = rest[3..cut]
        .iter()
        .filter_map(|a| a.to_str()?.strip_prefix("--"))
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect();
    let mut out: Vec<OsString> = rest[..3].to_vec();
    for f in &files {
        for (key, flag) in load(Path::new(f))? {
            if !given.iter().any(|g| covers(g, &key)) {
                out.extend(flag);
            }
        }
    }
    out.extend_from_slice(&rest[3..]);
    Ok(out)
}

/// Whether the user's `--given` sets what a config's `key` sets: the same
/// key, its one-direction forms (`rate` covers `down-rate`), every delay
/// for `--rtt`/`--delay`, and a direction's rate and trace each other's.
fn covers(given: &str, key: &str) -> bool {
    let delays = ["rtt", "delay", "up-delay", "down-delay"];
    given == key
        || key == format!("up-{given}")
        || key == format!("down-{given}")
        || (matches!(given, "rtt" | "delay") && delays.contains(&key))
        || (given == "rate" && matches!(key, "up-trace" | "down-trace"))
        || matches!(
            (given, key),
            ("up-rate", "up-trace")
                | ("up-trace", "up-rate")
                | ("down-rate", "down-trace")
                | ("down-trace", "down-rate")
        )
}

/// The effective link and record flags of a parsed command as a config
/// file: every flag given (on the command line or by `--config`) and the
/// defaults that move a figure (seed, overhead).
pub fn effective(m: &clap::ArgMatches) -> String {
    use clap::parser::ValueSource;
    let mut t = toml::Table::new();
    for (long, id, kind) in keys() {
        // Every key is an argument of shell, pair and selftest alike.
        let Some(src) = m.value_source(&id) else {
            continue;
        };
        if src == ValueSource::DefaultValue && kind == Kind::Switch {
            continue;
        }
        let Some(raw) = m.get_raw(&id) else { continue };
        let vals: Vec<String> = raw.map(|v| v.to_string_lossy().into_owned()).collect();
        let v = match kind {
            Kind::Switch => toml::Value::Boolean(vals.first().is_some_and(|v| v == "true")),
            Kind::Many => toml::Value::Array(vals.into_iter().map(toml::Value::String).collect()),
            Kind::One => match vals.first() {
                Some(v) => match v.parse::<i64>() {
                    Ok(i) => toml::Value::Integer(i),
                    Err(_) => toml::Value::String(v.clone()),
                },
                None => continue,
            },
        };
        t.insert(long, v);
    }
    format!(
        "# tcpwise emu testbed (--config FILE reads it back; flags given after it override it)\n{}",
        toml::to_string(&t).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_flags_and_unknown_keys_are_refused() {
        let f = Path::new("t.toml");
        let a = to_args(
            "rtt = \"40ms\"\nseed = 7\ntrace-once = false\nqueue = \"codel:limit=400KB\"\noutage = [\"1s@2s\", \"1s@5s:down\"]\n[down]\nrate = \"20mbit\"\n",
            f,
        )
        .unwrap();
        let s: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert_eq!(
            s,
            [
                "--down-rate",
                "20mbit",
                "--outage",
                "1s@2s",
                "--outage",
                "1s@5s:down",
                "--queue",
                "codel:limit=400KB",
                "--rtt",
                "40ms",
                "--seed",
                "7"
            ]
        );
        let e = to_args("rtt = \"1ms\"\nbandwidth = \"1mbit\"\n", f)
            .unwrap_err()
            .to_string();
        assert!(e.contains("config t.toml: unknown key 'bandwidth'"), "{e}");
        let e = to_args("trace-once = \"yes\"\n", f)
            .unwrap_err()
            .to_string();
        assert!(e.contains("switch"), "{e}");
        let e = to_args("rtt = [1]\n", f).unwrap_err().to_string();
        assert!(e.contains("string or a number"), "{e}");
        assert!(to_args("rtt = \n", f).is_err());
        // Underscores as in Rust field names are the same keys.
        assert_eq!(to_args("up_delay = \"5ms\"\n", f).unwrap().len(), 2);
    }

    #[test]
    fn expand_puts_the_file_first_and_leaves_the_command_alone() {
        let dir = std::env::temp_dir().join(format!("tcpwise-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bed.toml");
        std::fs::write(&f, "rtt = \"40ms\"\n").unwrap();
        let argv = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        let out = expand(argv(&[
            "tcpwise",
            "emu",
            "pair",
            "--rate",
            "1mbit",
            "--config",
            f.to_str().unwrap(),
            "--server",
            "x",
            "--",
            "prog",
            "--config",
            "kept",
        ]))
        .unwrap();
        assert_eq!(
            out,
            argv(&[
                "tcpwise", "emu", "pair", "--rtt", "40ms", "--rate", "1mbit", "--server", "x",
                "--", "prog", "--config", "kept"
            ])
        );
        // The command line's flags override the file's, and what they cover.
        std::fs::write(
            &f,
            "rtt = \"40ms\"\nup-delay = \"5ms\"\nloss = \"1%\"\ntrace-once = true\n[down]\nrate = \"10mbit\"\n",
        )
        .unwrap();
        let out = expand(argv(&[
            "tcpwise",
            "emu",
            "shell",
            "--config",
            f.to_str().unwrap(),
            "--delay=20ms",
            "--rate",
            "20mbit",
            "--",
            "sh",
            "--loss",
        ]))
        .unwrap();
        assert_eq!(
            out,
            argv(&[
                "tcpwise",
                "emu",
                "shell",
                "--loss",
                "1%",
                "--trace-once",
                "--delay=20ms",
                "--rate",
                "20mbit",
                "--",
                "sh",
                "--loss"
            ])
        );
        let same = argv(&["tcpwise", "get", "--config", "x"]);
        assert_eq!(expand(same.clone()).unwrap(), same);
        assert!(expand(argv(&["tcpwise", "emu", "pair", "--config"])).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
