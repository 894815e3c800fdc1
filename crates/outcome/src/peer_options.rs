//! A peer's option table (`docs/options-*.md`: every option of curl's,
//! iperf3's or wrk's own list with what tcpwise does with it) read at
//! run time, so an option of the peer's that tcpwise refuses is refused
//! in one line that says why, from the same row the docs show.

/// One refused row: its short letter, its long name, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// `-P`'s `P`, when it has one.
    pub short: Option<char>,
    /// `--ftp-port`.
    pub long: String,
    /// The row's last column.
    pub why: String,
}

/// The refused rows of a table's text.
pub fn refused(table: &str) -> Vec<Refused> {
    table
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.strip_prefix("| `")?.split(" | ").collect();
            if cells.get(1) != Some(&"refused") {
                return None;
            }
            let spelled = cells[0].trim_end_matches('`');
            let names: Vec<&str> = spelled
                .split([',', ' '])
                .filter(|w| w.starts_with('-'))
                .collect();
            let long = names.iter().find(|n| n.starts_with("--"))?.to_string();
            let short = names
                .iter()
                .find(|n| n.len() == 2)
                .and_then(|n| n.chars().nth(1));
            let why = cells.get(3).map_or("", |w| w.trim_end_matches(" |").trim());
            Some(Refused {
                short,
                long,
                why: why.to_string(),
            })
        })
        .collect()
}

/// The first word of `words` that is a refused option, as the line that
/// says so: `peer`'s spelling is not in `tool`, why, and the table's name.
/// `takes_value` tells which of the tool's own options take a value (so
/// a value is not read as an option); a bare `--` ends the options.
pub fn refusal(
    words: &[String],
    rows: &[Refused],
    takes_value: &dyn Fn(&str) -> bool,
    (peer, tool, table): (&str, &str, &str),
) -> Option<String> {
    let mut it = words.iter();
    while let Some(w) = it.next() {
        if w == "--" {
            return None;
        }
        let found = if let Some(long) = w.strip_prefix("--") {
            let name = format!("--{}", long.split('=').next().unwrap_or(long));
            rows.iter().find(|r| r.long == name)
        } else if let Some(shorts) = w.strip_prefix('-').filter(|s| !s.is_empty()) {
            // `-sS`, `-ofile`: each letter until one takes a value.
            let mut hit = None;
            for c in shorts.chars() {
                if let Some(r) = rows.iter().find(|r| r.short == Some(c)) {
                    hit = Some(r);
                    break;
                }
                if takes_value(&format!("-{c}")) {
                    break;
                }
            }
            hit
        } else {
            None
        };
        if let Some(r) = found {
            let spelled = r
                .short
                .map_or(r.long.clone(), |s| format!("-{s}, {}", r.long));
            return Some(format!(
                "{peer}'s {spelled} is not in {tool}: {} ({table})",
                r.why
            ));
        }
        if !w.contains('=') && takes_value(w) {
            it.next();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_row_is_found_past_values_and_stops_at_double_dash() {
        let table = "| `-P, --ftp-port <address>` | refused | — | FTP only |\n| `-o, --output <file>` | same | curl_diff |  |\n";
        let rows = refused(table);
        assert_eq!(rows.len(), 1);
        let takes = |o: &str| o == "-o" || o == "--output";
        let line = |w: &[&str]| {
            let w: Vec<String> = w.iter().map(|s| s.to_string()).collect();
            refusal(&w, &rows, &takes, ("curl", "tcpwise get", "t.md"))
        };
        assert_eq!(
            line(&["-sP", "x"]).as_deref(),
            Some("curl's -P, --ftp-port is not in tcpwise get: FTP only (t.md)")
        );
        assert!(line(&["--ftp-port=1"]).is_some());
        assert_eq!(line(&["-o", "-P"]), None);
        assert_eq!(line(&["-oP"]), None);
        assert_eq!(line(&["--", "-P"]), None);
    }
}
