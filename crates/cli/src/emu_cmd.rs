//! `tcpwise emu shell|pair|selftest|clean`: flags in, `tcpwise_emu::session` does the work.

use anyhow::Result;
use clap::Subcommand;
use tcpwise_emu::command::{self, Selftested};
use tcpwise_emu::flags::{DumbbellArgs, PairArgs, PlotArgs, SelftestArgs, ShellArgs};

#[derive(Debug, Subcommand)]
pub enum EmuCommand {
    /// Run CMD in a client namespace whose far end, through the emulated link, is this host.
    ///
    /// The host is reachable at $TCPWISE_PEER (IPv6: $TCPWISE_PEER6), so a server
    /// listening on the host (iperf3 -s, nginx) is reached through the link.
    /// Without CMD, runs $SHELL. Exit status is CMD's.
    ///
    /// Example: tcpwise emu shell --rtt 100ms --rate 50mbit -- sh -c 'iperf3 -c $TCPWISE_PEER -R'
    #[command(verbatim_doc_comment, args_override_self = true)]
    Shell(ShellArgs),
    /// Run a server command and a client command in two namespaces joined by the emulated link.
    ///
    /// The server runs `sh -c CMD` at 198.18.0.2 (2001:2::2); the client command
    /// starts once the server listens, with $TCPWISE_PEER set to the server.
    /// Exit status is the client's; the server is stopped afterwards.
    ///
    /// Example: tcpwise emu pair --rtt 250ms --rate 8mbit --server 'python3 -m http.server 8000' \
    ///            -- sh -c 'curl -s http://$TCPWISE_PEER:8000/ >/dev/null'
    #[command(verbatim_doc_comment, args_override_self = true)]
    Pair(PairArgs),
    /// Senders with their own access links, RTTs and congestion controls sharing one bottleneck.
    ///
    /// Each host is a namespace of its own (198.18.1.1, .2, ...) behind its
    /// access link; all meet at the bottleneck (the link flags, or
    /// --topology's [bottleneck]), behind which the receivers sit (198.18.2.1,
    /// ...). Every flow through the bottleneck is counted by 5-tuple: each
    /// one's goodput, share and Jain's index are printed at the end, with
    /// the bottleneck's queue and every link's summary. Exit status: the
    /// first host command's that failed, else 0.
    ///
    /// Example: tcpwise emu dumbbell --up-rate 20mbit --up-queue 2bdp \
    ///            --host a:rtt=10ms --host b:rtt=50ms,cc=bbr \
    ///            --server 'tcpwise perf server' -- 'tcpwise perf client -t 5 $TCPWISE_PEER'
    #[command(verbatim_doc_comment)]
    Dumbbell(DumbbellArgs),
    /// Measure the emulator against its own configuration on this machine.
    ///
    /// Times round trips of 100-byte TCP messages, a bulk download and RTT under
    /// load over a pair testbed, and prints configured vs measured with the
    /// forwarder's lateness. Default path: --rtt 40ms --rate 100mbit.
    ///
    /// Under load, numbered UDP probes (every 50 ms) are held to the queue's
    /// bound, RTT + (queue + MTU)/rate: a dropped probe counts as lost, where
    /// a TCP echo would wait for TCP's loss recovery (its figure is printed
    /// beside, not held to the bound). Loss, reorder, duplicate and corrupt
    /// are checked against their binomial 99.9 % interval; on/off and policer
    /// drops, AQM drops, CE marks and the time packets spent in the queue are
    /// counted per direction. Queue disciplines compared (--queue KIND, -C
    /// cubic, --flows 2): scripts/aqm-table and the README's table.
    ///
    /// Example: tcpwise emu selftest --rtt 40ms --rate 20mbit --queue codel:limit=400KB -C cubic
    #[command(verbatim_doc_comment, args_override_self = true)]
    Selftest(SelftestArgs),
    /// Draw what a link did, from the logs `--log DIR` wrote (or Mahimahi's own).
    ///
    /// One picture per direction: throughput against capacity in bins (as
    /// mm-throughput-graph) and each packet's time in the link at its departure
    /// (as mm-delay-graph), with drops and CE marks; the figures
    /// mm-throughput-graph prints go to stderr. -o FILE.svg or FILE.html.
    ///
    /// Example: tcpwise emu pair --rtt 40ms --rate 20mbit --log run1 --server 'tcpwise perf server' \
    ///            -- sh -c 'tcpwise perf client -R $TCPWISE_PEER' && tcpwise emu plot run1 -o run1.html
    #[command(verbatim_doc_comment)]
    Plot(PlotArgs),
    /// Remove tw-* namespaces and devices whose owning process is gone.
    Clean,
}

pub fn run(cmd: EmuCommand, m: Option<&clap::ArgMatches>) -> Result<i32> {
    let print = match &cmd {
        EmuCommand::Shell(a) => a.common.config.print_config.then_some(&a.common.link),
        EmuCommand::Pair(a) => a.common.config.print_config.then_some(&a.common.link),
        EmuCommand::Selftest(a) => a.config.print_config.then_some(&a.link),
        _ => None,
    };
    if let (Some(link), Some((_, sub))) = (print, m.and_then(|m| m.subcommand())) {
        link.resolve()?; // a config that would not start is not printed
        print!("{}", tcpwise_emu::config::effective(sub));
        return Ok(0);
    }
    match cmd {
        EmuCommand::Shell(a) => Ok(command::shell(a)?),
        EmuCommand::Pair(a) => Ok(command::pair(a)?),
        EmuCommand::Plot(a) => Ok(command::plot(a)?),
        EmuCommand::Dumbbell(a) => Ok(tcpwise_emu::dumbbell::run::dumbbell(a)?),
        EmuCommand::Selftest(a) => match command::selftest(&a)? {
            Selftested::Interrupted(code) => Ok(code),
            Selftested::Report(r) if a.json => {
                println!("{}", crate::versioned_pretty(&r)?);
                Ok(0)
            }
            Selftested::Report(r) => {
                print!("{r}");
                Ok(0)
            }
        },
        EmuCommand::Clean => {
            let removed = command::clean()?;
            if removed.is_empty() {
                eprintln!("tcpwise: nothing to clean");
            }
            for r in removed {
                println!("removed {r}");
            }
            Ok(0)
        }
    }
}
