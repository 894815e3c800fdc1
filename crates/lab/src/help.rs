//! `tcpwise lab --help`'s closing text, in one place.

/// `tcpwise lab --help`'s closing text: what each experiment runs, and
/// the flags that shorten or repeat them.
pub const HELP: &str = "\
Experiments (the four field reports first, then the rest; real kernel TCP on both ends):
  buffers          177 ms / 151 Mbit/s: rounds of a static 278,775-byte SO_RCVBUF download and
                   an autotuned one (testbed ceilings tcp_rmem/tcp_wmem 128 MiB), 10 s each
                   (5 s in a short share); then autotuned with Linux's default ceilings
  idle-selection   250 ms / 8 Mbit/s: six objects, 1 s idle, a 25 KB object on the idle
                   connection FIFO and the largest burst pick, a round each; then every pool
                   policy, HTTP/2 and HTTP/3 with server tcp_slow_start_after_idle=0 and =1,
                   and 100 KB and 400 KB objects
  read-slow-start  read sizing over 20/50/100/200 ms paths (at once): rounds of 4 pairs of
                   fresh connections a path and condition, one reading 1 KiB doubling and
                   one 32 KiB every read, of one response size; on Linux, and under the
                   field report's cause modelled (a partly filled read held 40-50 ms)
  completion       1 ms / 1 Gbit/s: rounds of the shared epoll queue at 4, 64 and 1024 clients
                   (closed loop), and of file I/O on io_uring (16 KiB O_DIRECT
                   read-modify-write, no fsync, 1 GiB file in /var/tmp/tcpwise): shared and
                   innodb (segments with InnoDB's semantics) at 64 and 1024 clients, innodb
                   less one semantic at a time at 1024; then the tables: four dispatch models
                   (shared, fixed 64-slot segments, tokio, io_uring) by clients, and the file
                   I/O models by clients with uniform and skewed keys
  responsiveness   RPM under load (tcpwise rpm --direction down against serve --tls), rounds of
                   bloated drop-tail (4 BDP) lowat off, FQ-CoDel lowat auto and off, CUBIC, on
                   20 Mbit/s / 40 ms, tests of at most 10 s; then the matrix: an LTE trace
                   (--traces DIR, default ../shared/traces) x drop-tail 4 BDP, 1 BDP, CoDel,
                   FQ-CoDel x lowat off/auto x CUBIC/BBR
  cold-start       time to first byte of a 1 KB object over HTTPS on a fresh connection: cold,
                   TLS resumed, resumed + 0-RTT, TFO + 0-RTT, warm, with tcpwise, curl and
                   openssl, rounds at 100 ms with Happy Eyeballs past a blackholed IPv6 address
                   at 40 ms; then 1/20/600 ms and the LTE trace
  head-of-line     a page (15 KB HTML + 30 objects of 10-100 KB) loaded cold over HTTP/2 and
                   HTTP/3 (serve --tls --http3 -C cubic) on 100 ms / 20 Mbit/s at 0 and 5 %
                   random loss, rounds of about 40 s (at 5 %: 3 testbeds, each loading the
                   two at once, the median of their ratios); then,
                   as far as the budget holds, HTTP/1.1 with 6 connections too, at 0, 1, 2
                   and 5 % loss and the LTE trace, up to 10 loads a cell; link drops, TCP
                   retransmissions and QUIC lost packets beside each
  sharing          BBR against CUBIC at one bottleneck of an emu dumbbell: rounds of a shallow
                   drop-tail and an FQ-CoDel trial (each flow's share counted at the
                   bottleneck); named on its own (tcpwise lab sharing) also deep drop-tail,
                   4 CUBIC flows and RTT unfairness

Each experiment runs rounds until its criterion is decided: its arms back to
back on the same path, then, for every part of the criterion, the median's
confidence sequence (an interval valid however often it is looked at; Howard
& Ramdas 2022), 5 % error a side, which bounds an obvious effect after 5
rounds, the fewest a median's interval can at that rate. Every part states an indifference zone
fixed in code (a confirming and a refuting edge, or an inner and an outer
band): it is confirmed once its interval excludes the refuting edge and
refuted once it excludes the confirming one, so a part always ends once its
interval is narrower than its zone. The experiment stops when every part is
decided, or when its share of --budget ends (undecided at budget, with the
intervals reached); the time it saves goes to the next. Every
experiment decides this way. Descriptive extras (every pool policy,
responsiveness's matrix, cold-start's other paths, completion's tables,
head-of-line's other paths) take what is left, and stop early where the
experiments after them would get less than their decisions need.
--budget DURATION (default 14m, the run in 15 minutes on 2 cores; --quick is
5m) is printed with each phase's share at the start; a budget without one
round for every experiment is refused. --quick leaves out completion,
head-of-line and sharing unless named (their decisions take longer) and
runs the cheapest decisions first. --runs N fixes the rounds instead
(no stopping, no budget): N rounds of every experiment's decision, then N
runs of each of its extras (idle-selection's size sweep at most 5).
Idle-selection, read-slow-start and head-of-line run at once, each testbed
within the sweep's limit (4 testbeds and 100 Mbit/s of link rate a core);
buffers (151 Mbit/s, most of that limit), completion, responsiveness,
cold-start and sharing then run alone, since their figures move when other
testbeds share the cores.
Results go to DIR/results.json, DIR/report.md and DIR/index.html, rewritten
after every experiment. Progress bars on a terminal, plain lines otherwise.

Examples:
  tcpwise lab                               every experiment in 15 minutes (2 cores)
  tcpwise lab --quick --out /tmp/lab        5 minutes: all but completion, head-of-line
                                            and sharing; a part left undecided says how
                                            many rounds it needs
  tcpwise lab buffers --budget 3m           one experiment, its own budget
  tcpwise lab --runs 3                      fixed rounds, no stopping (the old full run)
  tcpwise lab idle-selection --rtt 100ms    one experiment on your own path
  tcpwise lab report /tmp/lab               rebuild report.md and index.html from results.json

Exit codes: 0 done, 1 a step failed, 2 bad flags, 3 missing privileges,
4 emulator failure, 130 Ctrl-C / 143 SIGTERM (finished experiments are kept).";

#[cfg(test)]
mod tests {
    /// docs/lab.md, from the crate.
    fn lab_md() -> String {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/lab.md");
        std::fs::read_to_string(p).expect("docs/lab.md is in the repository")
    }

    #[test]
    fn help_and_pages_name_every_experiment() {
        let md = lab_md();
        for e in crate::all() {
            let name = e.name();
            assert!(
                super::HELP.contains(&format!("\n  {name} ")),
                "lab --help does not list {name}"
            );
            let page = format!("{}/../../docs/lab-{name}.md", env!("CARGO_MANIFEST_DIR"));
            assert!(std::path::Path::new(&page).exists(), "no page {page}");
            // A link, not the name in passing.
            assert!(
                md.contains(&format!("](lab-{name}.md)")),
                "docs/lab.md does not link lab-{name}.md"
            );
        }
    }

    #[test]
    fn the_zones_table_states_every_parts_edges_as_the_code_does() {
        use crate::sequential::Target;
        let md = lab_md();
        let rows: Vec<&str> = md
            .lines()
            .skip_while(|l| !l.starts_with("**Indifference zones**"))
            .filter(|l| l.starts_with("| "))
            .take_while(|l| !l.starts_with("| `"))
            .collect();
        assert!(!rows.is_empty(), "docs/lab.md has no zones table");
        for e in crate::all() {
            for p in e.criterion() {
                let edges: Vec<f64> = match p.target {
                    Target::AtLeast { confirm, refute } | Target::AtMost { confirm, refute } => {
                        vec![confirm, refute]
                    }
                    Target::Within {
                        lo,
                        hi,
                        outer_lo,
                        outer_hi,
                    } => vec![lo, hi, outer_lo, outer_hi],
                };
                let words: Vec<String> = edges.iter().map(|x| format!("{}", x.abs())).collect();
                // Whole numbers of the row, not substrings ("0.65" is not
                // 0.6; a test that matched substrings passed a wrong edge).
                let numbers = |r: &str| -> Vec<f64> {
                    r.split(|c: char| !(c.is_ascii_digit() || c == '.'))
                        .filter_map(|t| t.trim_matches('.').parse().ok())
                        .collect()
                };
                let found = rows.iter().any(|r| {
                    let have = numbers(r);
                    r.starts_with(&format!("| {} |", e.name()))
                        && edges
                            .iter()
                            .all(|x| have.iter().any(|h| (h - x.abs()).abs() < 1e-9))
                });
                assert!(
                    found,
                    "docs/lab.md's zones table has no {} row with {:?} ({})",
                    e.name(),
                    words,
                    p.name
                );
            }
        }
    }
}
