//! `-n`/`--netrc`/`--netrc-file`: credentials for a host from a `.netrc`
//! file, as curl reads it: `machine NAME login L password P` entries and a
//! `default` entry for any other host, `macdef` skipped; tokens split on
//! whitespace, a value in double quotes may hold spaces. A missing or
//! unreadable file is no credentials (curl says nothing either).

/// One entry: the machine (`None` for `default`), login and password.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Entry {
    machine: Option<String>,
    login: Option<String>,
    password: Option<String>,
}

/// A parsed `.netrc`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Netrc {
    entries: Vec<Entry>,
}

fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = text.chars().peekable();
    while let Some(&c) = it.peek() {
        if c.is_whitespace() {
            it.next();
        } else if c == '"' {
            it.next();
            let mut t = String::new();
            while let Some(c) = it.next() {
                match c {
                    '"' => break,
                    '\\' => t.extend(it.next()),
                    o => t.push(o),
                }
            }
            out.push(t);
        } else {
            let mut t = String::new();
            while let Some(&c) = it.peek() {
                if c.is_whitespace() {
                    break;
                }
                t.push(c);
                it.next();
            }
            out.push(t);
        }
    }
    out
}

impl Netrc {
    /// Parses a `.netrc` text.
    pub fn parse(text: &str) -> Netrc {
        // A macdef runs to the next blank line: drop those lines first.
        let mut kept = String::new();
        let mut in_macro = false;
        for line in text.lines() {
            if in_macro {
                in_macro = !line.trim().is_empty();
                continue;
            }
            if line.split_whitespace().next() == Some("macdef") {
                in_macro = true;
                continue;
            }
            kept.push_str(line);
            kept.push('\n');
        }
        let mut entries: Vec<Entry> = Vec::new();
        let t = tokens(&kept);
        let mut i = 0;
        while i < t.len() {
            match t[i].as_str() {
                "machine" => {
                    entries.push(Entry {
                        machine: t.get(i + 1).cloned(),
                        ..Entry::default()
                    });
                    i += 2;
                }
                "default" => {
                    entries.push(Entry::default());
                    i += 1;
                }
                "login" | "password" => {
                    if let Some(e) = entries.last_mut() {
                        let v = t.get(i + 1).cloned();
                        if t[i] == "login" {
                            e.login = v;
                        } else {
                            e.password = v;
                        }
                    }
                    i += 2;
                }
                _ => i += 1,
            }
        }
        Netrc { entries }
    }

    /// Reads a file; a missing or unreadable one is empty.
    pub fn read(path: &std::path::Path) -> Netrc {
        std::fs::read_to_string(path)
            .map(|t| Netrc::parse(&t))
            .unwrap_or_default()
    }

    /// `user:password` for `host`: its machine entry (names compared
    /// without case), else `default`.
    pub fn credentials(&self, host: &str) -> Option<String> {
        let e = self
            .entries
            .iter()
            .find(|e| {
                e.machine
                    .as_deref()
                    .is_some_and(|m| m.eq_ignore_ascii_case(host))
            })
            .or_else(|| self.entries.iter().find(|e| e.machine.is_none()))?;
        Some(format!(
            "{}:{}",
            e.login.as_deref().unwrap_or(""),
            e.password.as_deref().unwrap_or("")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_default_and_macros_as_curl_reads_them() {
        let n = Netrc::parse(
            "machine a.test login u1 password p1\nmacdef init\ncd /\nmachine b.test login bad\n\nmachine \"c.test\" login \"u 3\" password \"p\\\"3\"\ndefault login anon password x\n",
        );
        assert_eq!(n.credentials("A.TEST").as_deref(), Some("u1:p1"));
        assert_eq!(n.credentials("c.test").as_deref(), Some("u 3:p\"3"));
        assert_eq!(n.credentials("b.test").as_deref(), Some("anon:x"));
        assert_eq!(Netrc::parse("").credentials("x"), None);
    }
}
