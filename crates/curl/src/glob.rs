//! curl's URL globbing, so `get 'http://h/f[1-3].txt'` fetches three
//! URLs as curl does instead of sending one literal (and wrong) request.
//! The rules are curl 7.88's `tool_urlglob.c`, as its manual states them:
//! - `{a,b,c}` is a set (no nesting; `\` escapes inside it);
//! - `[1-10]`, `[001-100]` (zero-padded to the first number's width),
//!   `[a-z]` and a `:STEP` (`[0-100:25]`) are ranges;
//! - `\[`, `\]`, `\{`, `\}` are literal outside them, and so is an IPv6
//!   literal (`http://[::1]:8080/`) and an empty `[]` (`?a[]=1`);
//! - the last pattern varies fastest (`{a,b}[1-2]`: a1 a2 b1 b2);
//! - `#N` in an `-o` name is the Nth pattern's value for that URL;
//! - `-g`/`--globoff` turns all of it off.
//!
//! A malformed pattern is curl's exit 3 (`bad range`, `unmatched brace`).

use super::CurlError;

/// At most this many URLs from one argument (curl's limit is memory; ours
/// says so in one line before planning a million requests).
pub const MAX_URLS: u64 = 100_000;

/// One piece of a globbed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Literal text.
    Fixed(String),
    /// `{a,b}`: its elements.
    Set(Vec<String>),
    /// `[min-max:step]` with numbers, zero-padded to `pad` digits.
    Num {
        min: u64,
        max: u64,
        step: u64,
        pad: usize,
    },
    /// `[a-z:step]`.
    Ascii { min: u8, max: u8, step: u8 },
}

impl Part {
    fn len(&self) -> u64 {
        match self {
            Part::Fixed(_) => 1,
            Part::Set(v) => v.len() as u64,
            Part::Num { min, max, step, .. } => (max - min) / step + 1,
            Part::Ascii { min, max, step } => u64::from((max - min) / step) + 1,
        }
    }

    fn value(&self, i: u64) -> String {
        match self {
            Part::Fixed(s) => s.clone(),
            Part::Set(v) => v[i as usize].clone(),
            Part::Num { min, step, pad, .. } => format!("{:0pad$}", min + i * step),
            Part::Ascii { min, step, .. } => char::from(min + (i as u8) * step).to_string(),
        }
    }
}

/// A URL argument with its patterns parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    parts: Vec<Part>,
}

/// One URL a glob expands to, and the values its patterns took (for `#N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The URL.
    pub url: String,
    /// Each pattern's value, in order (not the literal pieces).
    pub values: Vec<String>,
}

fn bad(url: &str, what: &str, pos: usize) -> CurlError {
    CurlError::Glob {
        url: url.to_string(),
        why: format!("{what} in URL position {}", pos + 1),
    }
}

/// Whether `s` (starting at a `[`) opens an IPv6 literal: up to the
/// next `]`, an address curl's URL parser accepts.
fn ipv6_literal(s: &str) -> Option<usize> {
    let end = s.find(']')?;
    let inner = &s[1..end];
    let addr = inner.split_once('%').map_or(inner, |(a, _)| a);
    addr.parse::<std::net::Ipv6Addr>().ok().map(|_| end + 1)
}

impl Glob {
    /// Parses `url`'s patterns (curl's `glob_url`).
    pub fn parse(url: &str) -> Result<Glob, CurlError> {
        let b = url.as_bytes();
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'[' => {
                    // An IPv6 literal, or `[]` (`?a[]=1`), is text.
                    let empty = (b.get(i + 1) == Some(&b']')).then_some(2);
                    if let Some(n) = ipv6_literal(&url[i..]).or(empty) {
                        lit.push_str(&url[i..i + n]);
                        i += n;
                        continue;
                    }
                    if !lit.is_empty() {
                        parts.push(Part::Fixed(std::mem::take(&mut lit)));
                    }
                    let (p, next) = range(url, i + 1)?;
                    parts.push(p);
                    i = next;
                }
                b'{' => {
                    if !lit.is_empty() {
                        parts.push(Part::Fixed(std::mem::take(&mut lit)));
                    }
                    let (p, next) = set(url, i + 1)?;
                    parts.push(p);
                    i = next;
                }
                b'}' | b']' => return Err(bad(url, "unmatched close brace/bracket", i)),
                b'\\' if matches!(b.get(i + 1), Some(b'{' | b'[' | b'}' | b']')) => {
                    lit.push(char::from(b[i + 1]));
                    i += 2;
                }
                _ => {
                    let ch = url[i..].chars().next().unwrap_or_default();
                    lit.push(ch);
                    i += ch.len_utf8();
                }
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Fixed(lit));
        }
        let g = Glob { parts };
        let mut total: u64 = 1;
        for p in &g.parts {
            total = total.saturating_mul(p.len());
        }
        if total > MAX_URLS {
            return Err(CurlError::Glob {
                url: url.to_string(),
                why: format!("expands to {total} URLs, more than {MAX_URLS}"),
            });
        }
        Ok(g)
    }

    /// Whether the URL has any pattern.
    pub fn is_pattern(&self) -> bool {
        self.parts.iter().any(|p| !matches!(p, Part::Fixed(_)))
    }

    /// Every URL, the last pattern varying fastest (curl's order).
    pub fn expand(&self) -> Vec<Expanded> {
        let lens: Vec<u64> = self.parts.iter().map(Part::len).collect();
        let total: u64 = lens.iter().product();
        let mut out = Vec::with_capacity(total as usize);
        let mut idx = vec![0u64; self.parts.len()];
        for _ in 0..total {
            let mut url = String::new();
            let mut values = Vec::new();
            for (p, &i) in self.parts.iter().zip(&idx) {
                let v = p.value(i);
                url.push_str(&v);
                if !matches!(p, Part::Fixed(_)) {
                    values.push(v);
                }
            }
            out.push(Expanded { url, values });
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                if idx[k] < lens[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        out
    }
}

/// A `{a,b}` set, `from` just past the `{`.
fn set(url: &str, from: usize) -> Result<(Part, usize), CurlError> {
    let b = url.as_bytes();
    let mut elems = Vec::new();
    let mut cur = String::new();
    let mut i = from;
    loop {
        match b.get(i) {
            None => return Err(bad(url, "unmatched brace", i)),
            Some(b'{' | b'[') => return Err(bad(url, "nested brace", i)),
            Some(b']') => return Err(bad(url, "unexpected close bracket", i)),
            Some(b'}') if i == from => return Err(bad(url, "empty string within braces", i)),
            Some(b'}') => {
                elems.push(cur);
                return Ok((Part::Set(elems), i + 1));
            }
            Some(b',') => {
                elems.push(std::mem::take(&mut cur));
                i += 1;
            }
            Some(b'\\') if i + 1 < b.len() => {
                let ch = url[i + 1..].chars().next().unwrap_or_default();
                cur.push(ch);
                i += 1 + ch.len_utf8();
            }
            Some(_) => {
                let ch = url[i..].chars().next().unwrap_or_default();
                cur.push(ch);
                i += ch.len_utf8();
            }
        }
    }
}

/// A `[..]` range, `from` just past the `[`.
fn range(url: &str, from: usize) -> Result<(Part, usize), CurlError> {
    let rest = &url[from..];
    let Some(end) = rest.find(']') else {
        return Err(bad(url, "bad range", url.len()));
    };
    let body = &rest[..end];
    let (span, step) = match body.split_once(':') {
        Some((s, st)) => (s, Some(st)),
        None => (body, None),
    };
    let next = from + end + 1;
    let range_err = || bad(url, "bad range", next - 1);
    let first = body.as_bytes().first().copied().unwrap_or(b']');
    if first.is_ascii_alphabetic() {
        let s = span.as_bytes();
        if s.len() != 3 || s[1] != b'-' || !s[2].is_ascii_alphabetic() {
            return Err(range_err());
        }
        let step: u8 = match step {
            None => 1,
            Some(st) => st.parse().map_err(|_| range_err())?,
        };
        let (min, max) = (s[0], s[2]);
        if step == 0
            || (min == max && step != 1)
            || (min != max && (min > max || step > max - min || max - min > b'z' - b'a'))
        {
            return Err(range_err());
        }
        Ok((Part::Ascii { min, max, step }, next))
    } else if first.is_ascii_digit() {
        let (a, z) = span.split_once('-').ok_or_else(range_err)?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
        let z = z.trim_start_matches([' ', '\t']);
        if !digits(a) || !digits(z) {
            return Err(range_err());
        }
        let pad = if a.starts_with('0') { a.len() } else { 0 };
        let min: u64 = a.parse().map_err(|_| range_err())?;
        let max: u64 = z.parse().map_err(|_| range_err())?;
        let step: u64 = match step {
            None => 1,
            Some(st) if digits(st) => st.parse().map_err(|_| range_err())?,
            Some(_) => return Err(range_err()),
        };
        if step == 0 || (min == max && step != 1) || (min != max && (min > max || step > max - min))
        {
            return Err(range_err());
        }
        Ok((
            Part::Num {
                min,
                max,
                step,
                pad,
            },
            next,
        ))
    } else {
        Err(bad(url, "bad range specification", from))
    }
}

/// An `-o` name with `#N` replaced by the Nth pattern's value (a `#N`
/// past the last pattern stays as it is, as in curl).
pub fn output_name(template: &str, values: &[String]) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('#') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let n = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match after[..n].parse::<usize>() {
            Ok(k) if k >= 1 && k <= values.len() => out.push_str(&values[k - 1]),
            _ => out.push_str(&rest[i..i + 1 + n]),
        }
        rest = &after[n..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(u: &str) -> Vec<String> {
        Glob::parse(u)
            .unwrap()
            .expand()
            .into_iter()
            .map(|e| e.url)
            .collect()
    }

    #[test]
    fn ranges_sets_and_their_order_are_curls() {
        assert_eq!(urls("h/[1-3]"), ["h/1", "h/2", "h/3"]);
        assert_eq!(urls("h/[08-10]"), ["h/08", "h/09", "h/10"]);
        assert_eq!(urls("h/[0-100:50]"), ["h/0", "h/50", "h/100"]);
        assert_eq!(urls("h/[a-c]"), ["h/a", "h/b", "h/c"]);
        assert_eq!(urls("h/[a-e:2]"), ["h/a", "h/c", "h/e"]);
        assert_eq!(urls("h/{x,y}[1-2]"), ["h/x1", "h/x2", "h/y1", "h/y2"]);
        assert_eq!(urls("h/{a\\,b,c}"), ["h/a,b", "h/c"]);
        assert_eq!(urls("h/\\[1-2\\]"), ["h/[1-2]"]);
        assert_eq!(
            urls("http://[::1]:80/[1-2]"),
            ["http://[::1]:80/1", "http://[::1]:80/2"]
        );
        assert!(!Glob::parse("http://[::1]/x").unwrap().is_pattern());
        assert_eq!(urls("h/?a[]=1&b[]=2"), ["h/?a[]=1&b[]=2"]);
    }

    #[test]
    fn malformed_patterns_are_refused_as_curl_does() {
        for u in [
            "h/[3-1]",
            "h/[1-",
            "h/{a,b",
            "h/{a,{b}}",
            "h/x]",
            "h/[1-3:0]",
            "h/[-]",
            "h/{}",
        ] {
            let e = Glob::parse(u).unwrap_err();
            assert!(matches!(e, CurlError::Glob { .. }), "{u}: {e}");
        }
        assert!(Glob::parse("h/[1-1000][1-1000]").is_err());
    }

    #[test]
    fn output_names_take_the_pattern_values() {
        let v = vec!["a".to_string(), "7".to_string()];
        assert_eq!(output_name("out_#1_#2.txt", &v), "out_a_7.txt");
        assert_eq!(output_name("x#3#", &v), "x#3#");
        assert_eq!(output_name("#10", &v), "#10");
    }
}
