//! `tcpwise get` (curl-like) and `tcpwise serve`: both are one library
//! call each (`curl::run`, `server::command::serve`).

use anyhow::Result;
pub use tcpwise_http::curl::flags::{GET_HELP, GetArgs};
use tcpwise_http::curl::run::{Run, run};
pub use tcpwise_http::server::flags::ServeArgs;

/// `tcpwise get`: the flags become one [`Run`], which runs.
pub fn get(a: GetArgs, m: Option<&clap::ArgMatches>) -> Result<i32> {
    let data = a.data_in_order(m);
    let r = Run::new(a, data)?;
    Ok(tcpwise_tcp::runtime_one_thread()?.block_on(run(r))?.code)
}

/// `tcpwise serve`, until SIGINT or SIGTERM.
pub fn serve(a: ServeArgs) -> Result<i32> {
    let stop = crate::shutdown_on_signals()?;
    tcpwise_http::server::command::serve(a, stop, |line| eprintln!("{line}"))?;
    Ok(0)
}
