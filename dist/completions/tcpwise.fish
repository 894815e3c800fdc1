# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tcpwise_global_optspecs
    string join \n h/help V/version
end

function __fish_tcpwise_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tcpwise_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tcpwise_using_subcommand
    set -l cmd (__fish_tcpwise_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tcpwise -n "__fish_tcpwise_needs_command" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "emu" -d 'Emulated links between network namespaces, with real kernel TCP on both ends (no netem needed)'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "perf" -d 'Bulk TCP test with TCP_INFO per interval and a diagnosis of buffer limits (iperf3-like)'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "dispatch" -d 'Completion dispatch models (MariaDB): a request/response server, its closed-loop load, and asynchronous file I/O on io_uring'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "get" -d 'Fetch URLs, curl-like, through tcpwise\'s warm-connection pool'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "lab" -d 'Run the seed experiments on emulated links and write a report (needs root)'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "bench" -d 'Load an HTTP server: closed loop like wrk, or open loop at --rate R with coordinated-omission correction like wrk2.'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "serve" -d 'Serve /bytes/N, /delay/MS/bytes/N, /echo, /health and the responsiveness test\'s /.well-known/nq over HTTP/1.1 and HTTP/2 (keep-alive, optional TLS)'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "rpm" -d 'Responsiveness under working conditions: round trips per minute while the path is loaded (draft-ietf-ippm-responsiveness, as Apple\'s networkQuality measures it).'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "generate" -d 'Write man pages and shell completions from these definitions (for packagers)'
complete -c tcpwise -n "__fish_tcpwise_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -f -a "shell" -d 'Run CMD in a client namespace whose far end, through the emulated link, is this host.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -f -a "pair" -d 'Run a server command and a client command in two namespaces joined by the emulated link.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -f -a "dumbbell" -d 'Senders with their own access links, RTTs and congestion controls sharing one bottleneck.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -f -a "selftest" -d 'Measure the emulator against its own configuration on this machine.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -f -a "plot" -d 'Draw what a link did, from the logs `--log DIR` wrote (or Mahimahi\'s own).'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -f -a "clean" -d 'Remove tw-* namespaces and devices whose owning process is gone'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and not __fish_seen_subcommand_from shell pair dumbbell selftest plot clean help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l rtt -d 'Round-trip propagation delay, split evenly (100ms, 1.5s, 250us)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l delay -d 'One-way delay in both directions (instead of --rtt)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-delay -d 'One-way delay client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-delay -d 'One-way delay server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l rate -d 'Rate of IP bytes in both directions (20mbit, 1gbit, 2.5MB/s); default unlimited' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-rate -d 'Rate client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-rate -d 'Rate server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-trace -d 'Mahimahi trace client to server (one ms timestamp per line = one 1500-byte opportunity)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-trace -d 'Mahimahi trace server to client' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l overhead -d 'Bytes of framing added to each packet when serialising at --rate' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l queue -d 'Queue per direction: a size with its unit (drop-tail: 256KB, 64KiB, 1500B, 1000pkt; a bare number is refused: bytes to tc, packets to a Mahimahi user) or KIND[:key=value,...] with KIND droptail, drophead, codel (target=5ms, interval=100ms), pie (target=15ms, tupdate=15ms) or fq-codel (target, interval, flows=1024, quantum=1514); every kind takes limit= (400KB, 1000pkt, 2bdp; Mahimahi\'s packets=100 and bytes=30000 too), the AQMs ecn (mark CE instead of dropping). [default: droptail, limit one BDP, at least 64KB; on a trace link, 2 s of the trace\'s mean rate, at least 1MB: cellular networks are over-buffered, a loss-based TCP adds seconds to the RTT before a drop (Jiang et al., "Tackling Bufferbloat in 3G/4G Networks", IMC 2012), where Mahimahi\'s default queue is unbounded]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-queue -d 'Queue of the client-to-server direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-queue -d 'Queue of the server-to-client direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l loss -d 'Random loss in both directions: 1%, 1%,25% (correlated with the last packet\'s fate, mean kept), or ge:P,R[,H,K] (Gilbert-Elliott, netem\'s gemodel order). Percent signs are required: netem reads `loss 1` as 1 %, Mahimahi\'s `mm-loss uplink 1` as 100 %' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-loss -d 'Loss client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-loss -d 'Loss server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l jitter -d 'Delay jitter in both directions, never reordering: [KIND:]AMOUNT[,CORR] with KIND uniform (+-AMOUNT, the default), normal, pareto or paretonormal (AMOUNT is their SD; pareto\'s tail is late packets), and CORR the correlation of successive packets, keeping the distribution (netem\'s correlation shrinks it): 2ms, normal:2ms, pareto:5ms,25%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-jitter -d 'Jitter client to server only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-jitter -d 'Jitter server to client only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l seed -d 'Seed of the loss and jitter RNG (same seed, same run)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l onoff -d 'Intermittent link, both directions (mm-onoff): exponential on and off periods of these means; packets arriving while off are dropped: 5s,500ms' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-onoff -d 'As --onoff, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-onoff -d 'As --onoff, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l police -d 'Token-bucket policer, both directions: drops what exceeds RATE with BURST of credit, no queue (an ISP\'s policer): 10mbit,64KB' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-police -d 'As --police, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-police -d 'As --police, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l reorder -d 'Share of packets that skip the delay line and overtake earlier ones (netem\'s reorder), both directions: 5%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-reorder -d 'As --reorder, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-reorder -d 'As --reorder, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l duplicate -d 'Share of packets delivered twice (netem\'s duplicate), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-duplicate -d 'As --duplicate, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-duplicate -d 'As --duplicate, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l corrupt -d 'Share of packets with one bit flipped after the IP header (netem\'s corrupt; the receiver\'s checksum drops them), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l up-corrupt -d 'As --corrupt, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l down-corrupt -d 'As --corrupt, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l schedule -d 'Parameters over time: a file of lines `AT key=value...` (rate, delay one-way, loss; each also up-KEY/down-KEY), e.g. `0s rate=50mbit`, `5s rate=5mbit delay=80ms loss=1%`, applied at those offsets from the link\'s start; the statistics record when each took effect' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l outage -d 'Blackhole the link for DURATION starting AT after it comes up, both directions or :up / :down only; repeatable (a link flap): 3s@10s, 500ms@2s:down' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l log -d 'Write each direction\'s link log in Mahimahi\'s format to DIR/up.log and DIR/down.log (arrivals, capacity, departures with their time in the link; drops and CE marks as comment lines): Mahimahi\'s mm-throughput-graph and mm-delay-graph read it, `tcpwise emu plot DIR` draws it' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l pcap -d 'Write the packets each direction delivered to DIR/up.pcap and DIR/down.pcap (raw IP, stamped when written; tcpdump -r, Wireshark)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l config -d 'Read link and record flags from a TOML file: keys are the flags without dashes (rtt = "40ms", queue = "codel:limit=400KB"; [up] and [down] tables for the per-direction ones); flags given on the command line override it; an unknown key is an error' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l client-sysctl -d 'Sysctl for the client namespace (net.* keys), repeatable' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l stats-json -d 'Write per-direction statistics as JSON to FILE on exit' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l forwarder-threads -d 'Forwarder threads: 1 carries both directions (fewer wake-ups: what lets many slow testbeds share a machine), 2 gives each direction its own (both cores at multi-gigabit rates); auto picks 1 when neither direction is ever set faster than 200 Mbit/s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l inject-panic-after -d 'Make the forwarder panic after N packets (tests of the teardown)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l trace-once -d 'Play traces once instead of repeating them'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l print-config -d 'Print the effective link and record flags as such a file and exit without setting anything up'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -s q -l quiet -d 'Print nothing of our own: neither the start notice nor the per-direction summary on exit (Mahimahi prints neither)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l meter -d 'A live line a second on stderr: each direction\'s rate, queue and drops (Mahimahi\'s meters, as text)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l meter-uplink -d 'Mahimahi\'s spelling: --meter for the uplink only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l meter-downlink -d 'Mahimahi\'s spelling: --meter for the downlink only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l meter-all -d 'Mahimahi\'s spelling of --meter'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l no-notice -d 'Leave out only the start notice (the sysctls every testbed namespace gets), keep the summary'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l as-root -d 'Under sudo, run CMD (and --server) as root instead of as the user who invoked sudo (SUDO_UID/SUDO_GID, supplementary groups dropped, the default, as Mahimahi does). The forwarder always keeps root'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -l no-offload -d 'Open the TUN devices without a virtio-net header or TSO/USO: one packet per read and write (the mode older kernels get; compare the two with `emu selftest --no-offload`)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from shell" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l rtt -d 'Round-trip propagation delay, split evenly (100ms, 1.5s, 250us)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l delay -d 'One-way delay in both directions (instead of --rtt)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-delay -d 'One-way delay client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-delay -d 'One-way delay server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l rate -d 'Rate of IP bytes in both directions (20mbit, 1gbit, 2.5MB/s); default unlimited' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-rate -d 'Rate client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-rate -d 'Rate server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-trace -d 'Mahimahi trace client to server (one ms timestamp per line = one 1500-byte opportunity)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-trace -d 'Mahimahi trace server to client' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l overhead -d 'Bytes of framing added to each packet when serialising at --rate' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l queue -d 'Queue per direction: a size with its unit (drop-tail: 256KB, 64KiB, 1500B, 1000pkt; a bare number is refused: bytes to tc, packets to a Mahimahi user) or KIND[:key=value,...] with KIND droptail, drophead, codel (target=5ms, interval=100ms), pie (target=15ms, tupdate=15ms) or fq-codel (target, interval, flows=1024, quantum=1514); every kind takes limit= (400KB, 1000pkt, 2bdp; Mahimahi\'s packets=100 and bytes=30000 too), the AQMs ecn (mark CE instead of dropping). [default: droptail, limit one BDP, at least 64KB; on a trace link, 2 s of the trace\'s mean rate, at least 1MB: cellular networks are over-buffered, a loss-based TCP adds seconds to the RTT before a drop (Jiang et al., "Tackling Bufferbloat in 3G/4G Networks", IMC 2012), where Mahimahi\'s default queue is unbounded]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-queue -d 'Queue of the client-to-server direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-queue -d 'Queue of the server-to-client direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l loss -d 'Random loss in both directions: 1%, 1%,25% (correlated with the last packet\'s fate, mean kept), or ge:P,R[,H,K] (Gilbert-Elliott, netem\'s gemodel order). Percent signs are required: netem reads `loss 1` as 1 %, Mahimahi\'s `mm-loss uplink 1` as 100 %' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-loss -d 'Loss client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-loss -d 'Loss server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l jitter -d 'Delay jitter in both directions, never reordering: [KIND:]AMOUNT[,CORR] with KIND uniform (+-AMOUNT, the default), normal, pareto or paretonormal (AMOUNT is their SD; pareto\'s tail is late packets), and CORR the correlation of successive packets, keeping the distribution (netem\'s correlation shrinks it): 2ms, normal:2ms, pareto:5ms,25%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-jitter -d 'Jitter client to server only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-jitter -d 'Jitter server to client only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l seed -d 'Seed of the loss and jitter RNG (same seed, same run)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l onoff -d 'Intermittent link, both directions (mm-onoff): exponential on and off periods of these means; packets arriving while off are dropped: 5s,500ms' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-onoff -d 'As --onoff, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-onoff -d 'As --onoff, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l police -d 'Token-bucket policer, both directions: drops what exceeds RATE with BURST of credit, no queue (an ISP\'s policer): 10mbit,64KB' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-police -d 'As --police, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-police -d 'As --police, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l reorder -d 'Share of packets that skip the delay line and overtake earlier ones (netem\'s reorder), both directions: 5%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-reorder -d 'As --reorder, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-reorder -d 'As --reorder, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l duplicate -d 'Share of packets delivered twice (netem\'s duplicate), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-duplicate -d 'As --duplicate, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-duplicate -d 'As --duplicate, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l corrupt -d 'Share of packets with one bit flipped after the IP header (netem\'s corrupt; the receiver\'s checksum drops them), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l up-corrupt -d 'As --corrupt, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l down-corrupt -d 'As --corrupt, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l schedule -d 'Parameters over time: a file of lines `AT key=value...` (rate, delay one-way, loss; each also up-KEY/down-KEY), e.g. `0s rate=50mbit`, `5s rate=5mbit delay=80ms loss=1%`, applied at those offsets from the link\'s start; the statistics record when each took effect' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l outage -d 'Blackhole the link for DURATION starting AT after it comes up, both directions or :up / :down only; repeatable (a link flap): 3s@10s, 500ms@2s:down' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l log -d 'Write each direction\'s link log in Mahimahi\'s format to DIR/up.log and DIR/down.log (arrivals, capacity, departures with their time in the link; drops and CE marks as comment lines): Mahimahi\'s mm-throughput-graph and mm-delay-graph read it, `tcpwise emu plot DIR` draws it' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l pcap -d 'Write the packets each direction delivered to DIR/up.pcap and DIR/down.pcap (raw IP, stamped when written; tcpdump -r, Wireshark)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l config -d 'Read link and record flags from a TOML file: keys are the flags without dashes (rtt = "40ms", queue = "codel:limit=400KB"; [up] and [down] tables for the per-direction ones); flags given on the command line override it; an unknown key is an error' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l client-sysctl -d 'Sysctl for the client namespace (net.* keys), repeatable' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l stats-json -d 'Write per-direction statistics as JSON to FILE on exit' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l forwarder-threads -d 'Forwarder threads: 1 carries both directions (fewer wake-ups: what lets many slow testbeds share a machine), 2 gives each direction its own (both cores at multi-gigabit rates); auto picks 1 when neither direction is ever set faster than 200 Mbit/s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l inject-panic-after -d 'Make the forwarder panic after N packets (tests of the teardown)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l server-sysctl -d 'Sysctl for the server namespace, e.g. net.ipv4.tcp_slow_start_after_idle=0; repeatable' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l server -d 'Server command, run with `sh -c` in the server namespace' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l wait-port -d 'Start the client once this TCP port listens in the server namespace [default: any port]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l wait-timeout -d 'Give up if the server does not listen within this time' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l testbeds -d 'Run N identical testbeds in this one process, each with its own namespaces, server and client command (TCPWISE_TESTBED=0..N-1 in their environment). Their packets share one forwarder thread per core instead of a thread per testbed: one wake-up serves every testbed with a packet due, which is what lets dozens of slow paths share a small machine (docs/emu.md, density); on a machine with no idle time a thread passes over its testbeds at most once per 100 µs (packets up to 100 µs late, the summary says so). Exit status: the first testbed\'s nonzero one, else 0; --stats-json holds every testbed. Not with --log, --pcap, --meter or --forwarder-threads' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l trace-once -d 'Play traces once instead of repeating them'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l print-config -d 'Print the effective link and record flags as such a file and exit without setting anything up'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -s q -l quiet -d 'Print nothing of our own: neither the start notice nor the per-direction summary on exit (Mahimahi prints neither)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l meter -d 'A live line a second on stderr: each direction\'s rate, queue and drops (Mahimahi\'s meters, as text)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l meter-uplink -d 'Mahimahi\'s spelling: --meter for the uplink only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l meter-downlink -d 'Mahimahi\'s spelling: --meter for the downlink only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l meter-all -d 'Mahimahi\'s spelling of --meter'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l no-notice -d 'Leave out only the start notice (the sysctls every testbed namespace gets), keep the summary'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l as-root -d 'Under sudo, run CMD (and --server) as root instead of as the user who invoked sudo (SUDO_UID/SUDO_GID, supplementary groups dropped, the default, as Mahimahi does). The forwarder always keeps root'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -l no-offload -d 'Open the TUN devices without a virtio-net header or TSO/USO: one packet per read and write (the mode older kernels get; compare the two with `emu selftest --no-offload`)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from pair" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l rtt -d 'Round-trip propagation delay, split evenly (100ms, 1.5s, 250us)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l delay -d 'One-way delay in both directions (instead of --rtt)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-delay -d 'One-way delay client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-delay -d 'One-way delay server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l rate -d 'Rate of IP bytes in both directions (20mbit, 1gbit, 2.5MB/s); default unlimited' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-rate -d 'Rate client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-rate -d 'Rate server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-trace -d 'Mahimahi trace client to server (one ms timestamp per line = one 1500-byte opportunity)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-trace -d 'Mahimahi trace server to client' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l overhead -d 'Bytes of framing added to each packet when serialising at --rate' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l queue -d 'Queue per direction: a size with its unit (drop-tail: 256KB, 64KiB, 1500B, 1000pkt; a bare number is refused: bytes to tc, packets to a Mahimahi user) or KIND[:key=value,...] with KIND droptail, drophead, codel (target=5ms, interval=100ms), pie (target=15ms, tupdate=15ms) or fq-codel (target, interval, flows=1024, quantum=1514); every kind takes limit= (400KB, 1000pkt, 2bdp; Mahimahi\'s packets=100 and bytes=30000 too), the AQMs ecn (mark CE instead of dropping). [default: droptail, limit one BDP, at least 64KB; on a trace link, 2 s of the trace\'s mean rate, at least 1MB: cellular networks are over-buffered, a loss-based TCP adds seconds to the RTT before a drop (Jiang et al., "Tackling Bufferbloat in 3G/4G Networks", IMC 2012), where Mahimahi\'s default queue is unbounded]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-queue -d 'Queue of the client-to-server direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-queue -d 'Queue of the server-to-client direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l loss -d 'Random loss in both directions: 1%, 1%,25% (correlated with the last packet\'s fate, mean kept), or ge:P,R[,H,K] (Gilbert-Elliott, netem\'s gemodel order). Percent signs are required: netem reads `loss 1` as 1 %, Mahimahi\'s `mm-loss uplink 1` as 100 %' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-loss -d 'Loss client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-loss -d 'Loss server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l jitter -d 'Delay jitter in both directions, never reordering: [KIND:]AMOUNT[,CORR] with KIND uniform (+-AMOUNT, the default), normal, pareto or paretonormal (AMOUNT is their SD; pareto\'s tail is late packets), and CORR the correlation of successive packets, keeping the distribution (netem\'s correlation shrinks it): 2ms, normal:2ms, pareto:5ms,25%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-jitter -d 'Jitter client to server only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-jitter -d 'Jitter server to client only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l seed -d 'Seed of the loss and jitter RNG (same seed, same run)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l onoff -d 'Intermittent link, both directions (mm-onoff): exponential on and off periods of these means; packets arriving while off are dropped: 5s,500ms' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-onoff -d 'As --onoff, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-onoff -d 'As --onoff, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l police -d 'Token-bucket policer, both directions: drops what exceeds RATE with BURST of credit, no queue (an ISP\'s policer): 10mbit,64KB' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-police -d 'As --police, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-police -d 'As --police, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l reorder -d 'Share of packets that skip the delay line and overtake earlier ones (netem\'s reorder), both directions: 5%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-reorder -d 'As --reorder, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-reorder -d 'As --reorder, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l duplicate -d 'Share of packets delivered twice (netem\'s duplicate), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-duplicate -d 'As --duplicate, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-duplicate -d 'As --duplicate, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l corrupt -d 'Share of packets with one bit flipped after the IP header (netem\'s corrupt; the receiver\'s checksum drops them), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l up-corrupt -d 'As --corrupt, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l down-corrupt -d 'As --corrupt, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l schedule -d 'Parameters over time: a file of lines `AT key=value...` (rate, delay one-way, loss; each also up-KEY/down-KEY), e.g. `0s rate=50mbit`, `5s rate=5mbit delay=80ms loss=1%`, applied at those offsets from the link\'s start; the statistics record when each took effect' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l outage -d 'Blackhole the link for DURATION starting AT after it comes up, both directions or :up / :down only; repeatable (a link flap): 3s@10s, 500ms@2s:down' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l log -d 'Write each direction\'s link log in Mahimahi\'s format to DIR/up.log and DIR/down.log (arrivals, capacity, departures with their time in the link; drops and CE marks as comment lines): Mahimahi\'s mm-throughput-graph and mm-delay-graph read it, `tcpwise emu plot DIR` draws it' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l pcap -d 'Write the packets each direction delivered to DIR/up.pcap and DIR/down.pcap (raw IP, stamped when written; tcpdump -r, Wireshark)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l topology -d 'The topology as a TOML file: [bottleneck] (emu pair\'s --config keys; "up" is hosts to receivers), [[host]] tables (name, its access link\'s keys such as rtt and rate, cc, start, command, to, sysctl) and [[receiver]] tables (name, server, optional link keys); instead of --host, --server and the link flags' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l host -d 'A sender host of the short form: NAME[:key=value,...] with the keys of a [[host]] table (rtt=10ms, rate=10mbit, loss=1%, cc=bbr, start=5s); repeatable, in order. The link flags are the bottleneck\'s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l server -d 'The short form\'s one receiver ("receiver", 198.18.2.1): its server command, run with `sh -c`' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l wait-port -d 'Start the hosts\' commands once this TCP port listens in every receiver that runs a server [default: any port]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l wait-timeout -d 'Give up if a server does not listen within this time' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l idle-rtt -d 'Before the commands, time N idle round trips of 100-byte TCP messages from each host to its receiver, one host at a time, and print them beside the round trip its links add up to' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l stats-json -d 'Write every link\'s statistics, every flow\'s goodput per second with its sender\'s RTT and retransmits (the kernel\'s socket diagnostics, sampled each second in every namespace) and each direction\'s shares as JSON to FILE; `tcpwise emu plot FILE` draws every flow' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l forwarder-threads -d 'Forwarder threads: 1 carries every link, 2 splits the directions; auto picks 1 when the bottleneck is never set faster than 200 Mbit/s either way' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l trace-once -d 'Play traces once instead of repeating them'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -s q -l quiet -d 'No summary on stderr'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l as-root -d 'Under sudo, run the commands as root instead of as the user who invoked sudo'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -l no-offload -d 'TUN devices without offloads (as emu pair\'s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from dumbbell" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l rtt -d 'Round-trip propagation delay, split evenly (100ms, 1.5s, 250us)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l delay -d 'One-way delay in both directions (instead of --rtt)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-delay -d 'One-way delay client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-delay -d 'One-way delay server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l rate -d 'Rate of IP bytes in both directions (20mbit, 1gbit, 2.5MB/s); default unlimited' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-rate -d 'Rate client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-rate -d 'Rate server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-trace -d 'Mahimahi trace client to server (one ms timestamp per line = one 1500-byte opportunity)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-trace -d 'Mahimahi trace server to client' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l overhead -d 'Bytes of framing added to each packet when serialising at --rate' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l queue -d 'Queue per direction: a size with its unit (drop-tail: 256KB, 64KiB, 1500B, 1000pkt; a bare number is refused: bytes to tc, packets to a Mahimahi user) or KIND[:key=value,...] with KIND droptail, drophead, codel (target=5ms, interval=100ms), pie (target=15ms, tupdate=15ms) or fq-codel (target, interval, flows=1024, quantum=1514); every kind takes limit= (400KB, 1000pkt, 2bdp; Mahimahi\'s packets=100 and bytes=30000 too), the AQMs ecn (mark CE instead of dropping). [default: droptail, limit one BDP, at least 64KB; on a trace link, 2 s of the trace\'s mean rate, at least 1MB: cellular networks are over-buffered, a loss-based TCP adds seconds to the RTT before a drop (Jiang et al., "Tackling Bufferbloat in 3G/4G Networks", IMC 2012), where Mahimahi\'s default queue is unbounded]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-queue -d 'Queue of the client-to-server direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-queue -d 'Queue of the server-to-client direction only (as --queue)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l loss -d 'Random loss in both directions: 1%, 1%,25% (correlated with the last packet\'s fate, mean kept), or ge:P,R[,H,K] (Gilbert-Elliott, netem\'s gemodel order). Percent signs are required: netem reads `loss 1` as 1 %, Mahimahi\'s `mm-loss uplink 1` as 100 %' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-loss -d 'Loss client to server' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-loss -d 'Loss server to client' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l jitter -d 'Delay jitter in both directions, never reordering: [KIND:]AMOUNT[,CORR] with KIND uniform (+-AMOUNT, the default), normal, pareto or paretonormal (AMOUNT is their SD; pareto\'s tail is late packets), and CORR the correlation of successive packets, keeping the distribution (netem\'s correlation shrinks it): 2ms, normal:2ms, pareto:5ms,25%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-jitter -d 'Jitter client to server only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-jitter -d 'Jitter server to client only (as --jitter)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l seed -d 'Seed of the loss and jitter RNG (same seed, same run)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l onoff -d 'Intermittent link, both directions (mm-onoff): exponential on and off periods of these means; packets arriving while off are dropped: 5s,500ms' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-onoff -d 'As --onoff, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-onoff -d 'As --onoff, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l police -d 'Token-bucket policer, both directions: drops what exceeds RATE with BURST of credit, no queue (an ISP\'s policer): 10mbit,64KB' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-police -d 'As --police, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-police -d 'As --police, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l reorder -d 'Share of packets that skip the delay line and overtake earlier ones (netem\'s reorder), both directions: 5%' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-reorder -d 'As --reorder, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-reorder -d 'As --reorder, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l duplicate -d 'Share of packets delivered twice (netem\'s duplicate), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-duplicate -d 'As --duplicate, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-duplicate -d 'As --duplicate, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l corrupt -d 'Share of packets with one bit flipped after the IP header (netem\'s corrupt; the receiver\'s checksum drops them), both directions' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l up-corrupt -d 'As --corrupt, client to server only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l down-corrupt -d 'As --corrupt, server to client only' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l schedule -d 'Parameters over time: a file of lines `AT key=value...` (rate, delay one-way, loss; each also up-KEY/down-KEY), e.g. `0s rate=50mbit`, `5s rate=5mbit delay=80ms loss=1%`, applied at those offsets from the link\'s start; the statistics record when each took effect' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l outage -d 'Blackhole the link for DURATION starting AT after it comes up, both directions or :up / :down only; repeatable (a link flap): 3s@10s, 500ms@2s:down' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l log -d 'Write each direction\'s link log in Mahimahi\'s format to DIR/up.log and DIR/down.log (arrivals, capacity, departures with their time in the link; drops and CE marks as comment lines): Mahimahi\'s mm-throughput-graph and mm-delay-graph read it, `tcpwise emu plot DIR` draws it' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l pcap -d 'Write the packets each direction delivered to DIR/up.pcap and DIR/down.pcap (raw IP, stamped when written; tcpdump -r, Wireshark)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l config -d 'Read link and record flags from a TOML file: keys are the flags without dashes (rtt = "40ms", queue = "codel:limit=400KB"; [up] and [down] tables for the per-direction ones); flags given on the command line override it; an unknown key is an error' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l samples -d 'Idle round trips to time' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l bulk -d 'Length of the bulk download (at least 1s)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l flows -d 'Parallel bulk downloads (2 shows whether a fair queue, fq-codel, keeps the RTT probes\' flow apart from the bulk ones)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -s C -l congestion -d 'Congestion control of the test\'s sockets, both ends (TCP_CONGESTION), e.g. cubic: a namespace may only default to what the host allows (net.ipv4.tcp_allowed_congestion_control), a socket may use any available one. BBR keeps its own queue short and hides bufferbloat' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l sysctl -d 'Sysctl for both namespaces, repeatable, e.g. net.ipv4.tcp_ecn=1' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l forwarder-threads -d 'Forwarder threads: 1 carries both directions (fewer wake-ups: what lets many slow testbeds share a machine), 2 gives each direction its own (both cores at multi-gigabit rates); auto picks 1 when neither direction is ever set faster than 200 Mbit/s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l trace-once -d 'Play traces once instead of repeating them'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l print-config -d 'Print the effective link and record flags as such a file and exit without setting anything up'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l json -d 'Print the report as JSON on stdout instead of a table'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -l no-offload -d 'Open the TUN devices without offloads (one packet per read and write), to compare with the default (TSO/USO, 64 KB super-packets)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from selftest" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from plot" -s o -l output -d 'Output: FILE.svg or FILE.html; without it, SVG on standard output (as Mahimahi\'s graph scripts write it)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from plot" -l bin -d 'Throughput bin (mm-throughput-graph\'s MS_PER_BIN)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from plot" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from plot" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from clean" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from clean" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from help" -f -a "shell" -d 'Run CMD in a client namespace whose far end, through the emulated link, is this host.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from help" -f -a "pair" -d 'Run a server command and a client command in two namespaces joined by the emulated link.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from help" -f -a "dumbbell" -d 'Senders with their own access links, RTTs and congestion controls sharing one bottleneck.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from help" -f -a "selftest" -d 'Measure the emulator against its own configuration on this machine.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from help" -f -a "plot" -d 'Draw what a link did, from the logs `--log DIR` wrote (or Mahimahi\'s own).'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from help" -f -a "clean" -d 'Remove tw-* namespaces and devices whose owning process is gone'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand emu; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and not __fish_seen_subcommand_from server client help" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and not __fish_seen_subcommand_from server client help" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and not __fish_seen_subcommand_from server client help" -f -a "server" -d 'Serve tests (any number at once) until stopped'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and not __fish_seen_subcommand_from server client help" -f -a "client" -d 'Run one test against a `tcpwise perf server`.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and not __fish_seen_subcommand_from server client help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -l bind -d 'Address to listen on (port 5301, beside iperf3\'s 5201: the protocol is tcpwise\'s own, so an iperf3 server keeps its port)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -s p -l port -d 'Port (overrides the port in --bind)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -s I -l pidfile -d 'Write the server\'s process id to FILE while it runs (iperf3\'s -I)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -s 1 -l one-off -d 'Exit after one test'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -s V -l verbose -d 'Print a line per test (iperf3\'s -V; -v is the version, as there)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -s v -l version -d 'Print the version (iperf3\'s -v)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -s s -l server -d 'Accepted for iperf3\'s sake (`iperf3 -s`): this is the server'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from server" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s p -l port -d 'Server port: 5301 (where `tcpwise perf server` listens, beside iperf3\'s 5201), or 5201 with --iperf3' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s t -l time -d 'Test length: seconds (10, 2.5) or with a unit (500ms). 0 runs until Ctrl-C (at most an hour), as iperf3\'s -t 0' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s n -l bytes -d 'Send this many bytes instead of running for a time: bytes, or K, M, G as iperf3 reads them (powers of 1024: 10M, 1G; 10MiB too)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l rcvbuf -d 'Pin SO_RCVBUF of the receiving socket (default: autotuned). Linux doubles it' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l sndbuf -d 'Pin SO_SNDBUF of the sending socket (default: autotuned)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l read-sizing -d 'Receiver\'s read sizes: slow-start[:MAX] (1 KiB doubling), fixed:N, adaptive[:MAX]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s i -l interval -d 'Time between interval lines (iperf3\'s -i)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s C -l congestion -d 'Congestion control of both ends, e.g. bbr, cubic (iperf3\'s -C; TCP_CONGESTION per socket)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l path-rate -d 'The path\'s bottleneck rate, if known: the diagnosis then gives its BDP' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l stall-timeout -d 'Fail when no data moves for this long (a dead path; TCP alone would retransmit for about 15 minutes). iperf3\'s --rcv-timeout' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s J -l json -d 'Print one JSON object instead of text: -J and --json give iperf3\'s -J layout (start, intervals, end), which iperf3\'s parsers and plotters read; --json=tcpwise gives ours (intervals, summary, diagnosis)' -r -f -a "tcpwise\t'tcpwise\'s own report'
iperf3\t'iperf3\'s `-J` layout'"
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s b -l bitrate -d 'Hold the sender to RATE (20mbit) on average, as iperf3\'s -b does for TCP: the writes wait until their bytes are due, so the sender\'s count is what was sent; the summary says whether the rate held (--fq-rate has the kernel pace instead). iperf3\'s spelling works too: 20M, 20m, 1.5G, 500K are bits/s (powers of 1000), a bare number is bits/s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l fq-rate -d 'Have the kernel pace the sending socket at RATE (SO_MAX_PACING_RATE, iperf3\'s --fq-rate); iperf3\'s spelling of rates, as -b' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s O -l omit -d 'Run SECONDS more first (slow start), each of their intervals marked (omitted), and leave them out of the summary (iperf3\'s -O: the test lasts -O plus -t)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s w -l window -d 'Both socket buffers: SO_RCVBUF of the receiver and SO_SNDBUF of the sender (iperf3\'s -w: 64K is 65536; the diagnosis says what a pinned buffer costs)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s B -l bind -d 'Local address for both connections (iperf3\'s -B)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l cport -d 'Local port of the data connection (iperf3\'s --cport)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s P -l parallel -d 'N streams at once, each its own TCP connection: a line per stream, a [SUM] line per interval, and Jain\'s fairness index (iperf3\'s -P)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s l -l length -d 'A UDP datagram\'s payload bytes, 20 to 65507 (iperf3\'s -l; default 1448, a 1500-byte MTU less IPv6 and UDP headers). iperf3\'s K and M (powers of 1024) work: -l 8K' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l rcv-timeout -d 'iperf3\'s --rcv-timeout, in milliseconds as iperf3 takes it (--stall-timeout in seconds is ours)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l connect-timeout -d 'Give up connecting after MS milliseconds (iperf3\'s --connect-timeout)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s Z -l zerocopy -d 'Zero copy (iperf3\'s -Z): `sendfile` from an in-memory file (the default, as iperf3), or `msg` for send(MSG_ZEROCOPY) from a pinned buffer, whose summary line says how many sends the kernel copied after all. Either pays off where a NIC sends straight from the pages; over loopback and TUN the kernel copies anyway and both cost more CPU than plain writes (README: sender CPU per GB)' -r -f -a "sendfile\t'sendfile from an in-memory file'
msg\t'send with MSG_ZEROCOPY, completions from the error queue'"
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l iperf3 -d 'Speak iperf3\'s protocol from the start (port 5201 by default). A client pointed at an iperf3 server finds it and does so itself: TCP (-R, -P, --bidir, -b, -w, -C) and UDP (-u, -R, -b, -l: one stream), printed as iperf3 prints it (text line for line, -J key for key); --json=tcpwise gives our own report'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s R -l reverse -d 'Reverse: the server sends, this client receives'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s 4 -l version4 -d 'IPv4 only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s 6 -l version6 -d 'IPv6 only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l bidir -d 'Both directions at once: the streams asked for, and as many the other way (iperf3\'s --bidir)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s u -l udp -d 'UDP at -b (default 1 Mbit/s, as iperf3), 1448-byte datagrams: loss, out-of-order and jitter (RFC 3550) per interval and in all'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s V -l verbose -d 'iperf3\'s verbose: accepted (every interval line carries the sender\'s TCP_INFO already). -v is the version, as in iperf3'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s v -l version -d 'Print the version (iperf3\'s -v)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -l get-server-output -d 'Print the server\'s own lines after the summary (iperf3\'s --get-server-output)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from client" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from help" -f -a "server" -d 'Serve tests (any number at once) until stopped'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from help" -f -a "client" -d 'Run one test against a `tcpwise perf server`.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand perf; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and not __fish_seen_subcommand_from server load aio help" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and not __fish_seen_subcommand_from server load aio help" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and not __fish_seen_subcommand_from server load aio help" -f -a "server" -d 'Serve the request/response protocol with one dispatch model until stopped.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and not __fish_seen_subcommand_from server load aio help" -f -a "load" -d 'Closed-loop load: N connections, each sending its next request when the last reply arrived (sysbench-like); prints throughput and latency.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and not __fish_seen_subcommand_from server load aio help" -f -a "aio" -d 'Asynchronous file I/O on io_uring, the report\'s own workload: C closed-loop clients, each transaction reads one 16 KiB page at a random key with O_DIRECT, updates a row and writes it back (no fsync: durability off, as in the report), under one of three disciplines:'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and not __fish_seen_subcommand_from server load aio help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from server" -l model -d 'Dispatch model: shared, segments[:SLOTS], tokio or io-uring' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from server" -l workers -d 'Worker threads' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from server" -l bind -d 'Address to listen on' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from server" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from server" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -s c -l clients -d 'Concurrent connections' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -s t -l time -d 'Measured time (after the warm-up)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -l warmup -d 'Warm-up before measuring' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -l work -d 'Server work of an ordinary request (50us, 1ms; at most 1s)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -l long-fraction -d 'Fraction of long requests (1%, 0.01)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -l long-work -d 'Server work of a long request (at most 1s)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -l reply-bytes -d 'Reply size (512, 10KB; 4 B to 1 MiB)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -l seed -d 'Seed of the request stream' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -l json -d 'Print the report as JSON'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from load" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -l model -d 'Discipline: shared, segments[:N], innodb[:without=S+S] or sync' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -s c -l clients -d 'Closed-loop clients (transactions in progress at once)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -l threads -d 'I/O threads (segments: rings; shared: workers beside the reaper; sync: threads)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -s t -l time -d 'How long transactions start' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -l skew -d 'Key distribution: uniform or zipf:S (sysbench\'s skew: zipf:0.99)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -l file -d 'Data file (created once if missing; must be on a filesystem that allows O_DIRECT)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -l size -d 'Data file size (a multiple of 16 KiB)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -l seed -d 'Seed of the key stream' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -l json -d 'Print the report as JSON ({"summary": ...})'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from aio" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from help" -f -a "server" -d 'Serve the request/response protocol with one dispatch model until stopped.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from help" -f -a "load" -d 'Closed-loop load: N connections, each sending its next request when the last reply arrived (sysbench-like); prints throughput and latency.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from help" -f -a "aio" -d 'Asynchronous file I/O on io_uring, the report\'s own workload: C closed-loop clients, each transaction reads one 16 KiB page at a random key with O_DIRECT, updates a row and writes it back (no fsync: durability off, as in the report), under one of three disciplines:'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand dispatch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s K -l config -d 'Read more flags from FILE (curl\'s config syntax: \'url = "http://h/"\', \'silent\', \'-o out\'; \'-\' is standard input), where -K stands' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l url -d 'Another URL (curl\'s --url), after the positional ones' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s o -l output -d 'Write the body of the URL in the same position to FILE (\'-\' is standard output; repeatable)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s H -l header -d 'Extra request header \'Name: value\' (repeatable; \'Name:\' removes a default one); @FILE reads one header a line' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s b -l cookie -d 'Send cookies: \'NAME=VALUE; N2=V2\' as it is, or read FILE (curl\'s Netscape format, or Set-Cookie lines) and keep the cookies the responses set for the rest of the command line (repeatable)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s c -l cookie-jar -d 'Write every cookie to FILE at the end, in curl\'s Netscape format (\'-\': standard output)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l netrc-file -d 'As -n, but from FILE' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l unix-socket -d 'Connect to this Unix domain socket instead of the URL\'s host (http:// only; the host still names the Host header)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l trace -d 'Write what goes over the wire to FILE in curl\'s hex dump (\'-\': standard output)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l trace-ascii -d 'As --trace, as text' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l output-dir -d 'Put the -o and -O files in DIR' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l stderr -d 'Write what goes to standard error to FILE instead (\'-\': standard output)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l etag-save -d 'Write the response\'s ETag to FILE (empty when there is none)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l etag-compare -d 'Send If-None-Match with the ETag FILE holds (a 304 if unchanged)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s z -l time-cond -d 'Only if modified since DATE or FILE\'s time (-DATE: unmodified since)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l limit-rate -d 'At most RATE bytes/s per transfer, both ways (1000, 100K, 2M, 1G: powers of 1024)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l keepalive-time -d 'Seconds of idle before TCP keepalive probes, and between them (curl\'s default 60)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s X -l request -d 'Request method' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s d -l data -d 'Request body (POST, form type); @FILE reads a file without its newlines, @- standard input. Several are joined with \'&\'' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l data-binary -d 'As -d, but @FILE is sent as it is' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l json -d 'POST JSON (curl 7.82\'s --json): as --data-binary, with Content-Type and Accept application/json; @FILE, @- read it; several are joined with nothing between them' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l data-raw -d 'As -d, without the @ meaning' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l data-urlencode -d 'As -d, percent-encoded: content, =content, name=content, @file, name@file' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s F -l form -d 'Multipart form part: name=value, name=@file (an upload, @- from standard input), name=<file (its content as the value); then ;type=T, ;filename=F, ;headers=H; "quoted" words may hold ;' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l form-string -d 'As -F, CONTENT taken as it is (no @, < or ; meanings)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s T -l upload-file -d 'PUT FILE (\'-\' for standard input, sent chunked), streamed: memory stays bounded whatever its size; a URL ending in / gets the file\'s name' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s u -l user -d 'Basic authentication (credentials in the URL do the same)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s A -l user-agent -d 'User-Agent header' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s e -l referer -d 'Referer header' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s r -l range -d 'Byte range(s): 0-499, 500-, -500 (the last 500), 0-0,-1' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l request-target -d 'Send PATH as the request target instead of the URL\'s path and query (`*` for OPTIONS *)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s C -l continue-at -d 'Resume at OFFSET, or \'-\' for the size of the output file so far (appends to it)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s D -l dump-header -d 'Write the response headers to FILE (\'-\' for standard output)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s w -l write-out -d 'Print FORMAT after each transfer: curl\'s %{variables} (%{http_code}, %{time_total}, %{json}, ...) and ours (%{tcp_rtt_ms}, %{tcp_cwnd}, %{pool_reason}); @FILE reads it from a file' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l max-redirs -d 'At most this many redirects with -L (curl\'s default 50; -1 for no limit)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l retry -d 'Retry transient failures (timeouts; HTTP 408, 429, 500, 502, 503, 504) up to N times, waiting 1 s, 2 s, 4 s, ...' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l retry-delay -d 'Wait this long between retries instead' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l retry-max-time -d 'Start no retry after this long' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l connect-timeout -d 'Give up connecting after this long (per connection, curl\'s exit 28): 10, 2.5, 500ms' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l happy-eyeballs-timeout-ms -d 'Happy Eyeballs (RFC 8305): connection attempts to a name\'s addresses, alternating IPv6 and IPv4, start this many milliseconds apart (or at once when one fails); the first to connect wins. 0 starts them all at once, as in curl. Default 250, the RFC\'s (curl\'s is 200)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l max-filesize -d 'Fail (curl\'s exit 63) when a body is larger than SIZE: bytes, or K, M, G as curl reads them (powers of 1024: 10K is 10240). A body whose length says so is not written at all; one that grows past it (chunked) stops there' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s m -l max-time -d 'Give up after this long (whole run): 10, 2.5, 500ms' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l resolve -d 'Connect to ADDRESS for HOST:PORT (repeatable; HOST * for any)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l connect-to -d 'For requests to HOST1:PORT1, connect to HOST2:PORT2 instead (the Host header and TLS name stay the URL\'s); an empty part matches any, or keeps the URL\'s (repeatable; the first match wins)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s x -l proxy -d 'HTTP proxy [http://][USER:PASSWORD@]HOST[:PORT] (CONNECT for https); \'\' for none. Default: http_proxy, https_proxy, all_proxy' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l noproxy -d 'Hosts that skip the proxy (comma list, \'*\' for all; default: no_proxy)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l parallel-max -d 'Transfers at once with -Z (curl\'s default 50)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l alt-svc -d 'Alt-Svc cache in curl\'s format: read at the start (a missing file is empty), h3 alternatives that responses advertise used for the next request to their origin, and the cache written at the end' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l pool-policy -d 'Which idle connection to reuse: fifo, lifo, max-burst, warmest[:EXP], kernel[:no-restart]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l max-conns -d 'Connections per origin at once' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l read-sizing -d 'Read sizes: slow-start[:MAX], fixed:N, adaptive[:MAX]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l rcvbuf -d 'Pin SO_RCVBUF (default: autotuned; see `tcpwise perf` for why not)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l sndbuf -d 'Pin SO_SNDBUF (default: autotuned)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l cacert -d 'Also trust the CA certificates in this PEM file' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tls-max -d 'The newest TLS version to use: 1.2, 1.3 or default (1.0 and 1.1 are refused: rustls does not speak them)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s g -l globoff -d 'Send [ ] { } in URLs as they are (no globbing: by default [1-3], [a-z], [01-10:2] and {a,b} expand into several URLs, and #N in an -o name is the Nth pattern\'s value)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s O -l remote-name -d 'Write the body of the URL in the same position to a file named like its last path segment (as -o, one URL each: give it once per URL, or --remote-name-all)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l remote-name-all -d '-O for every URL that has no -o or -O of its own'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s j -l junk-session-cookies -d 'With -b FILE: leave out its session cookies (a new session)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s J -l remote-header-name -d 'With -O: name the file as the server\'s Content-Disposition says (its directories stripped; an existing file is not overwritten)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s n -l netrc -d 'Credentials for the host from ~/.netrc (when -u and the URL give none)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l netrc-optional -d 'As -n, where a missing file is fine (it always is here, as in curl)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l path-as-is -d 'Send the URL\'s path as given: no squashing of /../ and /./'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l create-dirs -d 'Create the directories an -o path names'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l fail-early -d 'Stop at the first URL that fails (the rest are not tried)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s R -l remote-time -d 'Give the -o file the server\'s Last-Modified time'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s 0 -l http1.0 -d 'HTTP/1.0 requests'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l no-keepalive -d 'No TCP keepalive probes on idle connections (curl sends them after 60 s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tcp-nodelay -d 'TCP_NODELAY (always on, as in curl since 7.50.2; accepted)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s # -l progress-bar -d 'A progress bar of #s instead of the meter (terminals only)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s G -l get -d 'Send the -d data in the URL\'s query with a GET'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l compressed -d 'Ask for a compressed body (deflate, gzip, br, zstd) and decode it'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s i -l include -d 'Print response headers before the body (into the -o file when there is one)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s I -l head -d 'HEAD request; print the headers'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s v -l verbose -d 'Request and response headers and the connection choice, on standard error'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s s -l silent -d 'No progress meter, warnings or error messages (add -S for errors)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s S -l show-error -d 'With -s, still print error messages'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l no-progress-meter -d 'No progress meter'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s L -l location -d 'Follow redirects. A -X method is kept on every hop, as curl keeps it; a POST\'s body is dropped after 301 and 302 (unless --post301, --post302), any body after 303 (unless a POST with --post303)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l post301 -d 'With -L: a POST stays a POST after a 301'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l post302 -d 'With -L: a POST stays a POST after a 302'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l post303 -d 'With -L: a POST stays a POST after a 303'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s f -l fail -d 'Exit 22 on HTTP status 400 or above, writing no body'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l fail-with-body -d 'Exit 22 on HTTP status 400 or above, after writing the body'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l retry-connrefused -d 'Also retry a refused connection'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l retry-all-errors -d 'Retry any failure'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s k -l insecure -d 'Accept any server certificate (curl\'s -k): for self-signed test origins only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tls-earlydata -d 'Send GET and HEAD requests without a body as TLS 1.3 early data (0-RTT) when a session with the origin can be resumed (curl 8.11+): the request leaves with the handshake, saving a round trip. Sessions live in this process (later URLs and reconnects resume); early data may be replayed by an attacker, so nothing else is ever sent early'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tcp-fastopen -d 'TCP Fast Open (curl\'s --tcp-fastopen): the first bytes (the TLS ClientHello, or the request) go in the SYN when the kernel holds a cookie from an earlier connection to the server, saving a round trip; otherwise a normal handshake (-v says which)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l no-happy-eyeballs -d 'Try a name\'s addresses one after the other, each until it fails or --connect-timeout passes (no racing; how a broken IPv6 path stalls a client without Happy Eyeballs)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s 4 -l ipv4 -d 'IPv4 addresses only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s 6 -l ipv6 -d 'IPv6 addresses only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s Z -l parallel -d 'Fetch the URLs at once (curl\'s -Z), up to --parallel-max'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l http1.1 -d 'HTTP/1.1 only (the default offers HTTP/2 by ALPN on https://, as curl does)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l http2 -d 'HTTP/2 when the server agrees by TLS ALPN, else HTTP/1.1 (the default, as in curl)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l http2-prior-knowledge -d 'HTTP/2 from the first byte, also on http:// (h2c)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l http3 -d 'HTTP/3 over QUIC to the URL\'s host and port (https:// only), with a TCP attempt (HTTP/2 or 1.1) joining after the Happy Eyeballs delay: the first to connect is used, and -v says why TCP was'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l http3-only -d 'HTTP/3 over QUIC only, no TCP attempt (https:// only): a QUIC failure is the transfer\'s error (curl\'s 96, or 28 on a timeout)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l timing -d 'Print the timings and the connection report of every response to stderr'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l report-json -d 'Print one JSON array of responses (status, headers, timings, connection report) instead of bodies (curl\'s --json is a JSON POST; -w \'%{json}\' prints curl\'s own per-transfer object)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s 1 -l tlsv1 -d 'TLS 1.0 or later (rustls speaks 1.2 and 1.3, so: the default)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tlsv1.0 -d 'TLS 1.0 or later (as --tlsv1)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tlsv1.1 -d 'TLS 1.1 or later (as --tlsv1)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tlsv1.2 -d 'TLS 1.2 or later'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -l tlsv1.3 -d 'TLS 1.3 only'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand get" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l budget -d 'Time for the whole run, shared among the experiments, each running rounds until decided or its share ends [default: 14m, the run in 15 minutes on 2 cores]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l out -d 'Directory for results.json and report.md' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l seed -d 'Seed of every random choice' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l runs -d 'Fixed rounds (repetitions per arm): no stopping when decided, no budget' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l rtt -d 'Override every experiment\'s RTT' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l rate -d 'Override every experiment\'s rate' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l traces -d 'Cellular traces (Mahimahi\'s format) for responsiveness\'s LTE path [default: ../shared/traces, left out where absent]' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l log -d 'Write each direction\'s link log in Mahimahi\'s format to DIR/up.log and DIR/down.log (arrivals, capacity, departures with their time in the link; drops and CE marks as comment lines): Mahimahi\'s mm-throughput-graph and mm-delay-graph read it, `tcpwise emu plot DIR` draws it' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l pcap -d 'Write the packets each direction delivered to DIR/up.pcap and DIR/down.pcap (raw IP, stamped when written; tcpdump -r, Wireshark)' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -l quick -d 'A short run: --budget 5m, without completion, head-of-line and sharing (their decisions take longer) unless named, the cheapest decisions first; a part that does not fit says how many more rounds it needs'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -a "report" -d 'Rebuild DIR/report.md and DIR/index.html from DIR/results.json alone'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -a "sweep" -d 'Run a matrix of paths x workloads x repetitions as cells in parallel testbeds'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -a "merge" -d 'Join `lab sweep` directories (shards) of one matrix into one report'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and not __fish_seen_subcommand_from report sweep merge help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from report" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from report" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -l out -d 'Directory for sweep.json, cells/ and the report' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -l shard -d 'Run the K-th of N disjoint subsets of the cells (K from 1)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -l jobs -d 'At most N testbeds at once, whatever their rates [default: 4 a core and 100 Mbit/s of link rate a core, measured to hold; a link with no rate runs alone]' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -l cell-timeout -d 'Stop a cell still running after this and record it as failed' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -l list -d 'Print the cells (id, tool, flags) and run nothing'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -l resume -d 'Go on in DIR: keep the cells measured, run the rest and the failed'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from sweep" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from merge" -l out -d 'Directory for the merged results.json, report.md and index.html' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from merge" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from merge" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "report" -d 'Rebuild DIR/report.md and DIR/index.html from DIR/results.json alone'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "sweep" -d 'Run a matrix of paths x workloads x repetitions as cells in parallel testbeds'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "merge" -d 'Join `lab sweep` directories (shards) of one matrix into one report'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s c -l connections -d 'Open connections (wrk\'s default, 10; at least -t)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s t -l threads -d 'Threads, each with its own connections and event loop (wrk\'s default, 2)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s d -l duration -d 'How long to load (wrk\'s -d: 10, 10s, 2m, 500ms). Default 10 s unless -n is given. Ctrl-C or SIGTERM ends the run early and prints the report of the time so far (exit 0, as wrk)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s n -l requests -d 'Stop after this many responses instead (hey\'s -n)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s R -l rate -d 'Open loop at R requests/s in total, latency measured from when each request was due (wrk2\'s -R: coordinated-omission correction)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s H -l header -d 'Extra header, \'Name: value\' (repeatable)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s X -l method -d 'Method (default GET, POST with --data)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -l data -d 'Request body, or @FILE (no short form: -d is the duration, as in wrk)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -l timeout -d 'A request with no complete response after this long counts as a timeout error (wrk\'s default, 2s)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -l cacert -d 'https: trust the PEM certificates in FILE too' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s m -l max-concurrent-streams -d 'HTTP/2 or HTTP/3 streams in flight per connection (h2load\'s -m; needs --http2 or --http3)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -l latency -d 'Also print wrk\'s "Latency Distribution" table (50, 75, 90, 99 %), as wrk lays it out (the p50 to p99.99 line is always printed)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s k -l insecure -d 'https: accept any server certificate'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -l http2 -d 'HTTP/2, as h2load loads: h2c with prior knowledge on http://, ALPN h2 on https://'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -l http3 -d 'HTTP/3 over QUIC (https:// only, ALPN h3): each connection a QUIC connection with its own UDP socket'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -l json -d 'Print the report as JSON ({"summary": ...})'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand bench" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l bind -d 'Address to listen on: PORT (all addresses, IPv4 and IPv6), HOST:PORT (a name is resolved: localhost:8080), IPv4:PORT or [IPv6]:PORT' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -s p -l port -d 'Port on all addresses: the same as --bind PORT' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l cert-out -d 'With --tls: write the certificate (PEM) here, for the --cacert of curl or of tcpwise get' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l tls-name -d 'With --tls: extra names for the certificate (localhost and the bind address are always in)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l tls-tickets -d 'With --tls: session tickets sent after each handshake (0: no resumption; each ticket resumes once). A client that closes as soon as its 0-RTT answer arrives leaves before that handshake\'s tickets do, so it resumes as many times as the first handshake gave tickets' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l root -d 'Serve the files and directory listings under DIR (as python3 -m http.server does) instead of /bytes, /delay, /echo and /health: Content-Type from the extension, ETag/Last-Modified with 304s, single and multiple Range requests (206, 416), HEAD. No path leaves DIR: a `..` segment (however encoded) or a symlink out is a 403' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l notsent-lowat -d 'TCP_NOTSENT_LOWAT on every connection: off (the kernel\'s default), a size (16KiB), or auto (5 ms of the flow\'s delivery rate, 16 KiB to 4 MiB, kept current from TCP_INFO). It bounds the response data waiting unsent in each socket, and each HTTP/2 stream\'s send buffer above it (the mark; 16 KiB for auto; hyper\'s default is 400 KB), so an answer on a busy HTTP/2 connection (a responsiveness self probe) does not queue behind megabytes of another stream. The default, auto, measured best (docs/rpm.md: on a 20 Mbit/s FQ-CoDel path, RPM 340 against 90 off, the same goodput; no loss on loopback)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -s C -l congestion -d 'Congestion control of every connection (iperf3\'s -C: cubic, bbr, reno; TCP_CONGESTION per socket, which works for any available algorithm where a namespace\'s default may be restricted). Default: the namespace\'s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l threads -d 'Worker threads, each with its own event loop and SO_REUSEPORT listener (nginx\'s worker model). Default: one per CPU this process may run on' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l io -d 'How the threads wait for connections: io_uring for plain HTTP on the routes where the kernel has it (fewer system calls a request than epoll; slow requests still go to tokio), epoll otherwise; or either one forced (uring refuses --tls, --root and --gzip)' -r -f -a "auto\t'io_uring where this kernel has it and the server answers from its routes in plain HTTP (no `--tls`, `--root` or `--gzip`, whose answers take the slow path anyway); epoll otherwise'
epoll\t'tokio on epoll, for every connection'
uring\t'A ring per thread for the fast path (`docs/bench.md`, "io_uring"), tokio for slow requests; plain HTTP on the routes only'"
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l header-timeout -d 'Limit: time to receive a request head, from its first byte (from the connection\'s start for the first request); slowloris connections are closed after it. TLS handshakes get the same time' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l idle-timeout -d 'Limit: close a keep-alive connection idle this long; also the longest a request body or a response may make no progress' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l max-header-size -d 'Limit: largest request head (larger: 431 and close)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l max-body -d 'Limit: largest /echo request body (larger: 413 and close; a chunked body that grows past it is cut off)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l max-bytes -d 'Limit: largest N of /bytes/N (larger: 400)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l max-delay -d 'Limit: longest MS of /delay/MS (longer: 400)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l max-conns -d 'Limit: connections open at once (lowered to fit RLIMIT_NOFILE); at the limit each newcomer closes the connection that moved data longest ago (TCP_INFO), and a line on stderr says so' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l tls -d 'Serve HTTPS with a fresh self-signed certificate'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l tls-earlydata -d 'With --tls: accept TLS 1.3 early data (0-RTT) from resumed clients, up to 16 KiB, and answer it before the handshake completes (the round trip 0-RTT saves). Early data may be a replay: GET, HEAD, OPTIONS and TRACE are answered, any other method gets 425 Too Early (RFC 8470), and each ticket is single-use'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l tfo -d 'TCP Fast Open (RFC 7413): accept data in the SYN of clients that hold a cookie from an earlier connection (`--tcp-fastopen` in curl and in get), so their first request arrives with the handshake. The namespace\'s net.ipv4.tcp_fastopen needs its server bit (3 = client and server; the start line says what it is)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l http3 -d 'With --tls: HTTP/3 over QUIC on UDP on the same port (same certificate, ALPN h3, the same answers as HTTP/1.1 and HTTP/2); the TCP responses advertise it with Alt-Svc'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l access-log -d 'Log one line per request to stderr in nginx\'s combined format, followed by the request time in seconds ($request_time)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -l gzip -d 'Compress responses (text, /bytes, files and listings) with gzip for HTTP/1.1 clients whose Accept-Encoding allows it, streamed in chunks; ETags become weak, ranges and 304s stay uncompressed'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand serve" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -s C -l config-url -d 'The config\'s URL (networkQuality\'s -C), instead of URL' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l direction -d 'Which way to load: bidir (both at once), down or up' -r -f -a "bidir\t'Download and upload at once (networkQuality\'s default)'
down\t'Download only'
up\t'Upload only'"
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l notsent-lowat -d 'TCP_NOTSENT_LOWAT of this client\'s connections: off, a size (16KiB) or auto (5 ms of the flow\'s rate, at least 16 KiB). It bounds the upload data queued unsent here (and each HTTP/2 stream\'s send buffer), which an uplink self probe would otherwise wait behind: the test\'s own queue, not the network\'s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l congestion -d 'Congestion control of this client\'s connections (cubic, bbr; TCP_CONGESTION per socket; -C is networkQuality\'s config URL). It drives the uploads; the downloads are the server\'s. Default: the namespace\'s' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l cacert -d 'https: trust the PEM certificates in FILE too' -r -F
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l resolve -d 'Connect to ADDR for HOST:PORT (curl\'s --resolve HOST:PORT:ADDR)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l connect-timeout -d 'Give up on a connection not made in this long, and on a config not received in twice it' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l mad -d 'MAD: intervals in a moving average, and how many must agree' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l interval -d 'ID: the interval between evaluations (and new connections)' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l trimmed-mean -d 'TMP: the share (%) of the lowest probe times the trimmed mean keeps' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l sdt -d 'SDT: stable when the moving averages\' standard deviation is at most this share (%) of the current one' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l max-connections -d 'MNP: the most load-generating connections per direction' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l max-probes -d 'MPS: the most probe rounds a second' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l probe-capacity -d 'PTC: the share (%) of the goodput probes may use' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l max-duration -d 'The longest a phase runs before it reports what it has, marked not stable' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l percentile -d 'The percentile reported beside the trimmed mean' -r
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -s s -l sequential -d 'Down, then up, each judged on its own (networkQuality\'s -s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l http1.1 -d 'Load over HTTP/1.1 (one request per connection: no self probes, the figure is the foreign probes\' alone). Default: HTTP/2 (ALPN on https, prior knowledge on http)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -s k -l insecure -d 'https: accept any server certificate (handshake signatures are still checked)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -l json -d 'Print the result as JSON, with every interval and probe round'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -s v -l verbose -d 'Show the draft\'s intermediate values each interval'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand rpm" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand generate" -s h -l help -d 'Print help'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand generate" -s V -l version -d 'Print version'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "emu" -d 'Emulated links between network namespaces, with real kernel TCP on both ends (no netem needed)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "perf" -d 'Bulk TCP test with TCP_INFO per interval and a diagnosis of buffer limits (iperf3-like)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "dispatch" -d 'Completion dispatch models (MariaDB): a request/response server, its closed-loop load, and asynchronous file I/O on io_uring'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "get" -d 'Fetch URLs, curl-like, through tcpwise\'s warm-connection pool'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "lab" -d 'Run the seed experiments on emulated links and write a report (needs root)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "bench" -d 'Load an HTTP server: closed loop like wrk, or open loop at --rate R with coordinated-omission correction like wrk2.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "serve" -d 'Serve /bytes/N, /delay/MS/bytes/N, /echo, /health and the responsiveness test\'s /.well-known/nq over HTTP/1.1 and HTTP/2 (keep-alive, optional TLS)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "rpm" -d 'Responsiveness under working conditions: round trips per minute while the path is loaded (draft-ietf-ippm-responsiveness, as Apple\'s networkQuality measures it).'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "generate" -d 'Write man pages and shell completions from these definitions (for packagers)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and not __fish_seen_subcommand_from emu perf dispatch get lab bench serve rpm generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from emu" -f -a "shell" -d 'Run CMD in a client namespace whose far end, through the emulated link, is this host.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from emu" -f -a "pair" -d 'Run a server command and a client command in two namespaces joined by the emulated link.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from emu" -f -a "dumbbell" -d 'Senders with their own access links, RTTs and congestion controls sharing one bottleneck.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from emu" -f -a "selftest" -d 'Measure the emulator against its own configuration on this machine.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from emu" -f -a "plot" -d 'Draw what a link did, from the logs `--log DIR` wrote (or Mahimahi\'s own).'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from emu" -f -a "clean" -d 'Remove tw-* namespaces and devices whose owning process is gone'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from perf" -f -a "server" -d 'Serve tests (any number at once) until stopped'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from perf" -f -a "client" -d 'Run one test against a `tcpwise perf server`.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from dispatch" -f -a "server" -d 'Serve the request/response protocol with one dispatch model until stopped.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from dispatch" -f -a "load" -d 'Closed-loop load: N connections, each sending its next request when the last reply arrived (sysbench-like); prints throughput and latency.'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from dispatch" -f -a "aio" -d 'Asynchronous file I/O on io_uring, the report\'s own workload: C closed-loop clients, each transaction reads one 16 KiB page at a random key with O_DIRECT, updates a row and writes it back (no fsync: durability off, as in the report), under one of three disciplines:'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "report" -d 'Rebuild DIR/report.md and DIR/index.html from DIR/results.json alone'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "sweep" -d 'Run a matrix of paths x workloads x repetitions as cells in parallel testbeds'
complete -c tcpwise -n "__fish_tcpwise_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "merge" -d 'Join `lab sweep` directories (shards) of one matrix into one report'
