//! The third round of `get` against curl: cases for the options of
//! curl's own list (`docs/options-curl.md`) that the earlier tables did
//! not reach, and for the audits' categories (redirects with `-X`,
//! `-e ';auto'`, `-F`'s syntax, headers as typed, URLs as curl 7.88 takes
//! them, `-w '%{json}'`, size units, curl's exit codes). They run in
//! `curl_diff`'s loop, against the odd origin (it echoes the request)
//! and serve's endpoints.

use crate::curl_diff::{Case, case};

fn with_stdin(args: &[&str], stdin: &'static [u8]) -> Case {
    let mut c = case(args);
    c.stdin = Some(stdin);
    c
}

fn differs(mut c: Case, why: &'static str) -> Case {
    c.differs = Some(why);
    c
}

fn seeded(args: &[&str], seed: Vec<(&'static str, &'static [u8])>) -> Case {
    let mut c = case(args);
    c.seed = seed;
    c
}

/// Redirects: a `-X` method is kept on every hop, `--post301/302/303`
/// keep a POST a POST, a 303 turns anything else into a GET.
fn redirect_cases() -> Vec<Case> {
    let mut v = Vec::new();
    for to in ["moved", "found", "see-other", "temporary"] {
        let u = format!("{{B}}/{to}");
        v.push(case(&["-L", "-d", "x=1", &u]));
        v.push(case(&["-L", "-X", "POST", &u]));
        v.push(case(&["-L", "-X", "POST", "-d", "x=1", &u]));
        v.push(case(&["-L", "-X", "PUT", "-d", "x=1", &u]));
        v.push(case(&["-L", "-X", "DELETE", &u]));
        v.push(case(&["-L", "-I", &u]));
    }
    for (flag, to) in [
        ("--post301", "moved"),
        ("--post302", "found"),
        ("--post303", "see-other"),
    ] {
        let u = format!("{{B}}/{to}");
        v.push(case(&["-L", flag, "-d", "x=1", &u]));
        v.push(case(&["-L", flag, "-F", "a=b", &u]));
    }
    v.push(case(&[
        "-L",
        "--post301",
        "--post302",
        "-d",
        "x",
        "{B}/found",
    ]));
    v
}

/// `-e`, `-F`, `--form-string` and headers as typed.
fn request_word_cases() -> Vec<Case> {
    vec![
        case(&["-e", "http://ref.example/", "{B}/echo-req"]),
        case(&["-L", "-e", ";auto", "{B}/found"]),
        case(&["-L", "-e", "http://ref.example/;auto", "{B}/found"]),
        case(&["-e", ";auto", "{B}/echo-req"]),
        case(&["-F", "a=\"quoted;value\"", "{B}/echo-req"]),
        case(&["-F", "a=plain;type=", "{B}/echo-req"]),
        case(&["-F", "a=v;type=text/x-mine", "{B}/echo-req"]),
        seeded(
            &["-F", "f=@up.txt;filename=other.txt", "{B}/echo-req"],
            vec![("up.txt", b"file body\n")],
        ),
        seeded(
            &["-F", "f=@up.txt;type=text/x;filename=o.txt", "{B}/echo-req"],
            vec![("up.txt", b"file body\n")],
        ),
        seeded(
            &["-F", "f=<up.txt", "-F", "g=2", "{B}/echo-req"],
            vec![("up.txt", b"file body\n")],
        ),
        with_stdin(&["-F", "f=@-", "{B}/echo-req"], b"from stdin\n"),
        case(&["--form-string", "a=@not-a-file", "{B}/echo-req"]),
        case(&["--form-string", "a=<x;type=y", "{B}/echo-req"]),
        case(&["-F", "f=@missing.txt", "{B}/echo-req"]),
        case(&["-H", "x-lower-case: Value", "{B}/echo-req"]),
        case(&["-H", "X-Empty;", "{B}/echo-req"]),
        case(&["-H", "X-Gone:", "-H", "X-Kept: 1", "{B}/echo-req"]),
        case(&["-X", "POST", "{B}/echo-req"]),
        case(&["-X", "PROPFIND", "{B}/echo-req"]),
        case(&["--request-target", "*", "-X", "OPTIONS", "{B}/echo-req"]),
        case(&["--request-target", "/x/other?q=1", "{B}/echo-req"]),
    ]
}

/// URLs as curl 7.88 parses them, `-w '%{json}'`, exit codes.
fn url_and_exit_cases() -> Vec<Case> {
    let w = "%{http_code} %{exitcode} %{url_effective}\\n";
    vec![
        case(&["-s", "-w", w, "{B}/echo-req/a b"]),
        case(&["-s", "-w", w, "{B}\\echo-req"]),
        case(&["-s", "-w", w, "{B}/echo-req/\u{e9}t\u{e9}"]),
        case(&["-s", "-w", w, "{B}/echo-req/../echo-req/./x"]),
        case(&["-s", "-w", w, "http://127.0.0.1:{P}"]),
        case(&["-s", "-w", w, "http://[::1"]),
        case(&["-s", "-w", w, "foo://127.0.0.1:{P}/"]),
        differs(
            case(&["-s", "-w", w, "ftp://127.0.0.1:{P}/"]),
            "curl speaks FTP (here to an HTTP origin: it waits for a greeting, exit 28); tcpwise get speaks http and https only and exits 1, curl's code for a protocol it does not speak",
        ),
        case(&["-s", "-w", w, "-6", "http://127.0.0.1:{P}/echo-req"]),
        case(&["-s", "-w", w, "-4", "http://[::1]:{P}/echo-req"]),
        case(&["-s", "--cacert", "no-such-ca.pem", "-w", w, "{B}/echo-req"]),
        case(&[
            "-s",
            "-w",
            w,
            "--resolve",
            "*:{P}:127.0.0.1",
            "http://wild.example:{P}/echo-req",
        ]),
        case(&[
            "-s",
            "-w",
            w,
            "--connect-to",
            "elsewhere.example:80:127.0.0.1:{P}",
            "http://elsewhere.example/echo-req",
        ]),
        case(&[
            "-s",
            "-w",
            w,
            "--connect-to",
            "::127.0.0.1:{P}",
            "http://any.example:1234/echo-req",
        ]),
        case(&[
            "-s",
            "-A",
            "a",
            "-o",
            "/dev/null",
            "-w",
            "%{json}",
            "{B}/echo-req",
        ]),
        case(&[
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{json}",
            "http://127.0.0.1:{DEAD}/",
        ]),
        case(&[
            "-s",
            "-A",
            "a",
            "-o",
            "/dev/null",
            "-e",
            "http://r/",
            "-w",
            "%{json}\\n%{header_json}",
            "{B}/echo-req",
        ]),
        case(&[
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{header_json}",
            "{B}/set-cookie?c=a%3D1&c=b%3D2",
        ]),
        case(&[
            "-s",
            "-w",
            "%{http_code} %{exitcode}\\n",
            "http://127.0.0.1:{DEAD}/",
        ]),
        case(&["-m", "0", "-s", "{B}/echo-req"]),
        case(&["--max-time", "0", "-s", "{B}/echo-req"]),
    ]
}

/// Flags of curl's list without a case before: retries, timeouts,
/// progress and verbosity (standard output, files and exit code are
/// compared; their standard error differs), `-O` per URL, suffix
/// ranges, `--http1.1`, `-n`.
fn listed_option_cases() -> Vec<Case> {
    vec![
        case(&[
            "-s",
            "--retry",
            "1",
            "--retry-delay",
            "0",
            "-w",
            "%{http_code}\\n",
            "{B}/busy",
        ]),
        case(&[
            "-s",
            "--retry",
            "1",
            "--retry-max-time",
            "0",
            "--retry-all-errors",
            "{B}/garbage",
        ]),
        case(&[
            "-s",
            "--retry",
            "1",
            "--retry-delay",
            "0",
            "--retry-connrefused",
            "http://127.0.0.1:{DEAD}/",
        ]),
        case(&["-s", "--connect-timeout", "2", "{B}/echo-req"]),
        case(&["-s", "--happy-eyeballs-timeout-ms", "100", "{B}/echo-req"]),
        case(&["-s", "--tcp-fastopen", "{B}/echo-req"]),
        case(&["-sS", "{B}/garbage"]),
        case(&["-S", "-s", "http://127.0.0.1:{DEAD}/"]),
        case(&["-v", "-s", "{B}/echo-req"]),
        case(&["--verbose", "-o", "out", "{B}/echo-req"]),
        case(&["-#", "-o", "out", "{B}/echo-req"]),
        case(&["--progress-bar", "{B}/echo-req"]),
        case(&["-s", "--http1.1", "{B}/echo-req"]),
        case(&["-s", "--alt-svc", "cache.txt", "{B}/echo-req"]),
        case(&["-s", "-R", "-o", "out", "{B}/echo-req"]),
        case(&[
            "-s",
            "-Z",
            "--parallel-max",
            "1",
            "{B}/echo-req",
            "{B}/echo-req/2",
        ]),
        case(&["-s", "-O", "{B}/echo-req/one", "{B}/echo-req/two"]),
        case(&["-s", "-O", "-O", "{B}/echo-req/one", "{B}/echo-req/two"]),
        case(&[
            "-s",
            "-o",
            "first",
            "-O",
            "{B}/echo-req/a",
            "{B}/echo-req/b",
        ]),
        case(&[
            "-s",
            "--remote-name-all",
            "{B}/echo-req/one",
            "{B}/echo-req/two",
        ]),
        case(&[
            "-s",
            "--remote-name-all",
            "-o",
            "mine",
            "{B}/echo-req/one",
            "{B}/echo-req/two",
        ]),
        case(&["-s", "-r", "-5", "{B}/echo-req"]),
        case(&["-s", "--range", "-5", "{B}/echo-req"]),
        case(&["-s", "-r", "0-0,-1", "{B}/echo-req"]),
        seeded(
            &["-s", "--netrc-file", "n", "-n", "{B}/auth"],
            vec![("n", b"machine 127.0.0.1 login user password pass\n")],
        ),
    ]
}

/// Sizes as curl reads them (`10K` is 10,240) and no file where curl
/// leaves none, against serve's endpoints.
pub(crate) fn size_cases() -> Vec<Case> {
    vec![
        case(&[
            "-s",
            "-o",
            "out",
            "--max-filesize",
            "10K",
            "{B}/bytes/10240",
        ]),
        case(&[
            "-s",
            "-o",
            "out",
            "--max-filesize",
            "10K",
            "{B}/bytes/10241",
        ]),
        case(&[
            "-s",
            "-o",
            "out",
            "--max-filesize",
            "1M",
            "{B}/bytes/1048576",
        ]),
        case(&[
            "-s",
            "-o",
            "out",
            "--max-filesize",
            "1M",
            "{B}/bytes/1048577",
        ]),
        case(&["-s", "-o", "out", "--max-filesize", "100", "{B}/bytes/1000"]),
        case(&["-s", "--limit-rate", "1M", "-o", "out", "{B}/bytes/100000"]),
        case(&["-s", "-o", "out", "--tlsv1.2", "{B}/bytes/10"]),
        case(&["-s", "-o", "out", "--tls-max", "1.3", "{B}/bytes/10"]),
    ]
}

/// `-z` as curl evaluates it on the response too: a server that ignores
/// the condition and answers 200 with a `Last-Modified` failing it gets
/// no body written (and no file), exit 0; one that meets it is written;
/// a range turns the check off.
fn time_condition_cases() -> Vec<Case> {
    let w = "%{http_code} %{size_download}\n";
    let mut v = Vec::new();
    for z in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "19940101",
        "19950101",
        "-19940101",
        "-19950101",
        "-Sun, 06 Nov 1994 08:49:37 GMT",
    ] {
        v.push(case(&["-s", "-z", z, "-w", w, "{B}/last-modified"]));
        v.push(case(&["-s", "-z", z, "-o", "out", "{B}/last-modified"]));
    }
    v.push(case(&[
        "-s",
        "-z",
        "19950101",
        "-r",
        "0-3",
        "{B}/last-modified",
    ]));
    v.push(case(&["-s", "-z", "19950101", "-i", "{B}/last-modified"]));
    v
}

/// Every case of this round against the odd origin.
pub(crate) fn odd_origin_cases() -> Vec<Case> {
    let mut v = redirect_cases();
    v.extend(request_word_cases());
    v.extend(url_and_exit_cases());
    v.extend(listed_option_cases());
    v.extend(time_condition_cases());
    v
}

/// TLS version bounds against serve --tls (`{S}`, its certificate `{CA}`).
pub(crate) fn tls_cases(ca: &str) -> Vec<Case> {
    let mut v = Vec::new();
    for flags in [
        &["--tlsv1.2"][..],
        &["--tlsv1.3"],
        &["--tlsv1.2", "--tls-max", "1.2"],
        &["--tls-max", "1.2"],
        &["--tls-max", "1.3"],
        &["--tlsv1.0"],
        &["--tlsv1.1"],
        &["-1"],
    ] {
        let mut args = vec!["-s", "--cacert", ca, "-w", "%{http_code} %{exitcode}\\n"];
        args.extend_from_slice(flags);
        args.push("{B}/hello.txt");
        v.push(case(&args));
    }
    v.push(differs(
        case(&[
            "-s",
            "--cacert",
            ca,
            "--tlsv1.3",
            "--tls-max",
            "1.2",
            "{B}/hello.txt",
        ]),
        "curl tries and fails the handshake (35); tcpwise get refuses the contradiction before connecting, in one line (2)",
    ));
    v
}
