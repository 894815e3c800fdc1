//! `-F` and `--form-string` as curl 7.88 reads them (its
//! `tool_formparse.c`) and libcurl writes them (`mime.c`), sans-IO but for
//! reading the files a part names.
//!
//! `NAME=CONTENT`, where CONTENT is `@FILE` (an upload: the file, named),
//! `<FILE` (the file's content as the value) or text, each followed by
//! `;type=T`, `;filename=F` and `;headers=H` (or `@FILE` of headers); a
//! word may be in double quotes (`\"` and `\\` escaped), so `;` can be in
//! it. `--form-string` takes all of CONTENT literally. A part's
//! Content-Type is its `type=`, else guessed from its file name as curl
//! guesses, and `text/plain` is left out of a part without a file name.

use super::CurlError;
use std::path::Path;

/// One `-F` (`literal`: `--form-string`) argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormArg {
    /// `NAME=CONTENT` as given.
    pub text: String,
    /// `--form-string`: CONTENT is the value, no `@`, `<` or `;`.
    pub literal: bool,
}

/// Where a part's content comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// `@FILE`: the file, sent as an upload.
    Upload(String),
    /// `@-`: standard input, named `-`.
    Stdin,
    /// `<FILE`: the file's content as the value.
    Content(String),
    /// The text itself.
    Text(Vec<u8>),
}

/// One parsed part.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    name: String,
    source: Source,
    ty: Option<String>,
    filename: Option<String>,
    headers: Vec<String>,
}

/// A word up to `;` or `end`: in double quotes (backslash escapes `"` and
/// `\`; the rest up to the separator is dropped), or bare (trailing
/// spaces dropped). Returns the word and what follows it, from the
/// separator on.
fn word(s: &str, end: char) -> (String, &str) {
    let s = s.trim_start();
    if let Some(q) = s.strip_prefix('"') {
        let mut out = String::new();
        let mut it = q.char_indices();
        while let Some((i, c)) = it.next() {
            match c {
                '\\' => match it.next() {
                    Some((_, e @ ('"' | '\\'))) => out.push(e),
                    Some((_, e)) => {
                        out.push('\\');
                        out.push(e);
                    }
                    None => out.push('\\'),
                },
                '"' => {
                    let rest = &q[i + 1..];
                    let cut = rest.find([';', end]).unwrap_or(rest.len());
                    return (out, &rest[cut..]);
                }
                c => out.push(c),
            }
        }
        // No closing quote: a bare word, as curl reads it.
    }
    let cut = s.find([';', end]).unwrap_or(s.len());
    (s[..cut].trim_end().to_string(), &s[cut..])
}

/// `type=`'s value: `MAJOR/MINOR` (curl's `%127[^/ ]/%127[^;, \n]`),
/// up to `;` or `end`.
fn content_type(s: &str, end: char) -> Result<(String, &str), CurlError> {
    let s = s.trim_start();
    let cut = s.find([';', end]).unwrap_or(s.len());
    let ty = s[..cut].trim_end();
    let ok = ty.split_once('/').is_some_and(|(major, minor)| {
        !major.is_empty()
            && !major.contains(' ')
            && !minor.is_empty()
            && !minor.starts_with([',', ' ', '\n'])
    });
    if !ok {
        return Err(CurlError::Usage(format!(
            "-F: illegally formatted content-type field '{ty}' (give type=MAJOR/MINOR)"
        )));
    }
    Ok((ty.to_string(), &s[cut..]))
}

/// The `;key=value` parameters after a part's content, and warnings for
/// the ones curl skips.
fn params(mut rest: &str, end: char, part: &mut Part) -> Result<Vec<String>, CurlError> {
    let mut warnings = Vec::new();
    while let Some(after) = rest.strip_prefix(';') {
        let p = after.trim_start();
        if let Some(t) = p.strip_prefix("type=") {
            let (ty, r) = content_type(t, end)?;
            part.ty = Some(ty);
            rest = r;
        } else if let Some(f) = p.strip_prefix("filename=") {
            let (name, r) = word(f, end);
            part.filename = Some(name);
            rest = r;
        } else if let Some(h) = p.strip_prefix("headers=") {
            let (value, r) = word(h, end);
            match value.strip_prefix('@') {
                Some(file) => part.headers.extend(header_file(file)?),
                None => part.headers.push(value),
            }
            rest = r;
        } else if p.starts_with("encoder=") {
            return Err(CurlError::Usage(
                "-F ...;encoder= is not built in tcpwise get (parts are sent as they are)".into(),
            ));
        } else {
            let (unknown, r) = word(p, end);
            if !unknown.is_empty() {
                warnings.push(format!("skip unknown form field: {unknown}"));
            }
            rest = r;
        }
    }
    if !rest.is_empty() {
        return Err(CurlError::Usage(format!(
            "-F '{}': several files in one part ({end}) are not built in tcpwise get",
            part.name
        )));
    }
    Ok(warnings)
}

/// `headers=@FILE`: one header a line, `#` comments, folded lines joined.
fn header_file(file: &str) -> Result<Vec<String>, CurlError> {
    let text = std::fs::read_to_string(file).map_err(|source| CurlError::Data {
        path: file.to_string(),
        source,
    })?;
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(prev) if line.starts_with([' ', '\t']) => {
                prev.push(' ');
                prev.push_str(line.trim());
            }
            _ => out.push(line.trim_end().to_string()),
        }
    }
    Ok(out)
}

/// Parses one argument into its part, with curl's warnings.
fn parse(arg: &FormArg) -> Result<(Part, Vec<String>), CurlError> {
    let (name, content) = arg
        .text
        .split_once('=')
        .ok_or_else(|| CurlError::Usage(format!("-F '{}' is not NAME=CONTENT", arg.text)))?;
    let mut part = Part {
        name: name.to_string(),
        source: Source::Text(Vec::new()),
        ty: None,
        filename: None,
        headers: Vec::new(),
    };
    if arg.literal {
        part.source = Source::Text(content.as_bytes().to_vec());
        return Ok((part, Vec::new()));
    }
    if content.starts_with('(') {
        return Err(CurlError::Usage(
            "-F NAME=(...) (nested multipart) is not built in tcpwise get".into(),
        ));
    }
    let (source, rest, end) = if let Some(f) = content.strip_prefix('@') {
        let (file, rest) = word(f, ',');
        let s = if file == "-" {
            Source::Stdin
        } else {
            Source::Upload(file)
        };
        (s, rest, ',')
    } else if let Some(f) = content.strip_prefix('<') {
        let (file, rest) = word(f, '\0');
        (Source::Content(file), rest, '\0')
    } else {
        let (text, rest) = word(content, '\0');
        (Source::Text(text.into_bytes()), rest, '\0')
    };
    part.source = source;
    let warnings = params(rest, end, &mut part)?;
    Ok((part, warnings))
}

/// The content type curl guesses from a file name (its short table).
pub fn guess_type(file: &str) -> Option<&'static str> {
    let ext = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    Some(match ext.as_str() {
        "gif" => "image/gif",
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "txt" => "text/plain",
        "htm" | "html" => "text/html",
        "pdf" => "application/pdf",
        "xml" => "application/xml",
        _ => return None,
    })
}

/// libcurl's form escaping of a name or file name in the disposition.
fn escape(s: &str) -> String {
    s.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// One part's bytes: its head (disposition, type, own headers) and data.
fn render(
    p: &Part,
    stdin: &mut dyn FnMut() -> std::io::Result<Vec<u8>>,
) -> Result<Vec<u8>, CurlError> {
    let read = |f: &str| {
        std::fs::read(f).map_err(|source| CurlError::FormFile {
            path: f.to_string(),
            source,
        })
    };
    let (data, filename, local) = match &p.source {
        Source::Upload(f) => {
            let base = Path::new(f)
                .file_name()
                .map_or(f.clone(), |b| b.to_string_lossy().into_owned());
            (read(f)?, Some(p.filename.clone().unwrap_or(base)), Some(f))
        }
        Source::Stdin => (
            stdin().map_err(|source| CurlError::FormFile {
                path: "-".into(),
                source,
            })?,
            Some(p.filename.clone().unwrap_or_else(|| "-".into())),
            None,
        ),
        Source::Content(f) => (read(f)?, p.filename.clone(), Some(f)),
        Source::Text(t) => (t.clone(), p.filename.clone(), None),
    };
    let is_file = matches!(p.source, Source::Upload(_) | Source::Content(_));
    let mut ty = p.ty.clone().or_else(|| {
        let by_name = filename.as_deref().and_then(guess_type);
        let by_path = local.filter(|_| is_file).and_then(|f| guess_type(f));
        let fallback = (is_file && filename.is_some()).then_some("application/octet-stream");
        by_name.or(by_path).or(fallback).map(str::to_string)
    });
    if filename.is_none()
        && ty
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("text/plain"))
    {
        ty = None;
    }
    let mut head = format!(
        "Content-Disposition: form-data; name=\"{}\"",
        escape(&p.name)
    );
    if let Some(f) = &filename {
        head.push_str(&format!("; filename=\"{}\"", escape(f)));
    }
    head.push_str("\r\n");
    if let Some(t) = ty {
        head.push_str(&format!("Content-Type: {t}\r\n"));
    }
    for h in &p.headers {
        head.push_str(&format!("{h}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend(data);
    Ok(out)
}

/// curl's warnings for the form (unknown `;key=` fields), once, before
/// anything is sent; a bad part is reported when the request is built.
pub fn warnings(args: &[FormArg]) -> Vec<String> {
    args.iter()
        .filter_map(|a| parse(a).ok())
        .flat_map(|(_, w)| w)
        .collect()
}

/// The form as a `multipart/form-data` body: (Content-Type, body,
/// warnings). `stdin` is read for `@-`.
pub fn multipart(
    args: &[FormArg],
    boundary: &str,
    stdin: &mut dyn FnMut() -> std::io::Result<Vec<u8>>,
) -> Result<(String, Vec<u8>, Vec<String>), CurlError> {
    let mut body = Vec::new();
    let mut warnings = Vec::new();
    for a in args {
        let (part, w) = parse(a)?;
        warnings.extend(w);
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        body.extend(render(&part, stdin)?);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((
        format!("multipart/form-data; boundary={boundary}"),
        body,
        warnings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str, literal: bool) -> Part {
        parse(&FormArg {
            text: text.into(),
            literal,
        })
        .unwrap()
        .0
    }

    #[test]
    fn words_params_and_quotes_as_curl_reads_them() {
        let p = one("a=\"quoted;value\"", false);
        assert_eq!(p.source, Source::Text(b"quoted;value".to_vec()));
        let p = one("a=v;type=text/x-mine;filename=\"f;1.txt\"", false);
        assert_eq!(p.ty.as_deref(), Some("text/x-mine"));
        assert_eq!(p.filename.as_deref(), Some("f;1.txt"));
        let p = one("f=@up.txt;filename=o.txt;type=text/x", false);
        assert_eq!(p.source, Source::Upload("up.txt".into()));
        assert_eq!(p.filename.as_deref(), Some("o.txt"));
        assert_eq!(one("f=@-", false).source, Source::Stdin);
        let lit = one("a=@x;type=y", true);
        assert_eq!(lit.source, Source::Text(b"@x;type=y".to_vec()));
        for bad in ["a=v;type=", "a=v;type=text", "a=(x)", "f=@a,b", "x"] {
            let arg = FormArg {
                text: bad.into(),
                literal: false,
            };
            assert!(parse(&arg).is_err(), "{bad}");
        }
        let arg = FormArg {
            text: "a=v;what=1".into(),
            literal: false,
        };
        assert_eq!(parse(&arg).unwrap().1, ["skip unknown form field: what=1"]);
    }

    #[test]
    fn text_plain_only_with_a_file_name() {
        let mut no_stdin = || Ok(Vec::new());
        let p = one("a=v;type=text/plain", false);
        let b = String::from_utf8(render(&p, &mut no_stdin).unwrap()).unwrap();
        assert!(!b.contains("Content-Type"), "{b}");
        let p = one("a=v;filename=x.txt", false);
        let b = String::from_utf8(render(&p, &mut no_stdin).unwrap()).unwrap();
        assert!(
            b.contains("filename=\"x.txt\"\r\nContent-Type: text/plain\r\n"),
            "{b}"
        );
        let p = one("a\"b=v", false);
        let b = String::from_utf8(render(&p, &mut no_stdin).unwrap()).unwrap();
        assert!(
            b.starts_with("Content-Disposition: form-data; name=\"a%22b\"\r\n"),
            "{b}"
        );
    }
}
