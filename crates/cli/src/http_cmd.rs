//! `tcpwise get` (curl-like) and `tcpwise serve`: both are one library
//! call each (`curl::run`, `server::command::serve`).

use anyhow::Result;
use std::ffi::OsString;
use tcpwise_curl::flags;
pub use tcpwise_curl::flags::{GET_HELP, GetArgs};
use tcpwise_curl::run::{Run, run};
pub use tcpwise_server::flags::ServeArgs;

/// `tcpwise get`: one [`Run`] a `--next` group; the last transfer's code.
pub fn get(a: GetArgs, m: Option<&clap::ArgMatches>, next: Vec<Vec<OsString>>) -> Result<i32> {
    let rt = tcpwise_tcp::runtime_one_thread()?;
    let mut code = rt
        .block_on(run(Run::new(a.clone(), a.data_in_order(m))?))?
        .code;
    for g in next {
        let (a, data) = flags::parse_group(&g).unwrap_or_else(|e| e.exit());
        code = rt.block_on(run(Run::new(a, data)?))?.code;
    }
    Ok(code)
}

/// `tcpwise serve`, until SIGINT or SIGTERM.
pub fn serve(a: ServeArgs) -> Result<i32> {
    let stop = crate::shutdown_on_signals()?;
    tcpwise_server::command::serve(a, stop, |line| eprintln!("{line}"))?;
    Ok(0)
}
