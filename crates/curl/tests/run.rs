//! A whole `get` command line through the library: curl's rules, the
//! client, the sink a caller reads back.

use std::io::{Read, Write};
use std::net::TcpListener;

/// Answers one connection with `reply`, then closes it.
fn one_reply(reply: &'static [u8]) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let _ = s.read(&mut [0u8; 4096]);
            let _ = s.write_all(reply);
        }
    });
    port
}

/// `curl::run` writes everything a user sees through its sink: a library
/// caller reads the bodies, `-w` and the errors back, with curl's exit
/// code per URL.
#[tokio::test]
async fn a_whole_get_command_line_runs_through_one_sink() {
    use clap::{FromArgMatches, Parser};
    use tcpwise_curl::flags::GetArgs;
    use tcpwise_curl::run::{Run, run};
    use tcpwise_curl::sink::Sink;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        get: GetArgs,
    }
    let port = one_reply(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let argv = [
        "get".to_string(),
        "-sS".into(),
        "-w".into(),
        " %{http_code}\\n".into(),
        format!("127.0.0.1:{port}/a"),
        format!("127.0.0.1:{dead}/b"),
    ];
    let m = <Cli as clap::CommandFactory>::command().get_matches_from(argv);
    let cli = Cli::from_arg_matches(&m).unwrap();
    let data = cli.get.data_in_order(Some(&m));
    let (sink, out, err) = Sink::buffers();
    let r = Run::new(cli.get, data).unwrap().with_sink(sink);
    let done = run(r).await.unwrap();
    assert_eq!(
        done.per_url,
        vec![0, 7],
        "the second URL is refused: curl's 7"
    );
    assert_eq!(done.code, 7);
    let out = String::from_utf8(out.lock().unwrap().clone()).unwrap();
    assert_eq!(out, "hello 200\n 000\n");
    let err = String::from_utf8(err.lock().unwrap().clone()).unwrap();
    assert!(
        err.starts_with("tcpwise: error: http://127.0.0.1:"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
