_tcpwise() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="tcpwise"
                ;;
            tcpwise,bench)
                cmd="tcpwise__subcmd__bench"
                ;;
            tcpwise,dispatch)
                cmd="tcpwise__subcmd__dispatch"
                ;;
            tcpwise,emu)
                cmd="tcpwise__subcmd__emu"
                ;;
            tcpwise,generate)
                cmd="tcpwise__subcmd__generate"
                ;;
            tcpwise,get)
                cmd="tcpwise__subcmd__get"
                ;;
            tcpwise,help)
                cmd="tcpwise__subcmd__help"
                ;;
            tcpwise,lab)
                cmd="tcpwise__subcmd__lab"
                ;;
            tcpwise,perf)
                cmd="tcpwise__subcmd__perf"
                ;;
            tcpwise,rpm)
                cmd="tcpwise__subcmd__rpm"
                ;;
            tcpwise,serve)
                cmd="tcpwise__subcmd__serve"
                ;;
            tcpwise__subcmd__dispatch,aio)
                cmd="tcpwise__subcmd__dispatch__subcmd__aio"
                ;;
            tcpwise__subcmd__dispatch,help)
                cmd="tcpwise__subcmd__dispatch__subcmd__help"
                ;;
            tcpwise__subcmd__dispatch,load)
                cmd="tcpwise__subcmd__dispatch__subcmd__load"
                ;;
            tcpwise__subcmd__dispatch,server)
                cmd="tcpwise__subcmd__dispatch__subcmd__server"
                ;;
            tcpwise__subcmd__dispatch__subcmd__help,aio)
                cmd="tcpwise__subcmd__dispatch__subcmd__help__subcmd__aio"
                ;;
            tcpwise__subcmd__dispatch__subcmd__help,help)
                cmd="tcpwise__subcmd__dispatch__subcmd__help__subcmd__help"
                ;;
            tcpwise__subcmd__dispatch__subcmd__help,load)
                cmd="tcpwise__subcmd__dispatch__subcmd__help__subcmd__load"
                ;;
            tcpwise__subcmd__dispatch__subcmd__help,server)
                cmd="tcpwise__subcmd__dispatch__subcmd__help__subcmd__server"
                ;;
            tcpwise__subcmd__emu,clean)
                cmd="tcpwise__subcmd__emu__subcmd__clean"
                ;;
            tcpwise__subcmd__emu,dumbbell)
                cmd="tcpwise__subcmd__emu__subcmd__dumbbell"
                ;;
            tcpwise__subcmd__emu,help)
                cmd="tcpwise__subcmd__emu__subcmd__help"
                ;;
            tcpwise__subcmd__emu,pair)
                cmd="tcpwise__subcmd__emu__subcmd__pair"
                ;;
            tcpwise__subcmd__emu,plot)
                cmd="tcpwise__subcmd__emu__subcmd__plot"
                ;;
            tcpwise__subcmd__emu,selftest)
                cmd="tcpwise__subcmd__emu__subcmd__selftest"
                ;;
            tcpwise__subcmd__emu,shell)
                cmd="tcpwise__subcmd__emu__subcmd__shell"
                ;;
            tcpwise__subcmd__emu__subcmd__help,clean)
                cmd="tcpwise__subcmd__emu__subcmd__help__subcmd__clean"
                ;;
            tcpwise__subcmd__emu__subcmd__help,dumbbell)
                cmd="tcpwise__subcmd__emu__subcmd__help__subcmd__dumbbell"
                ;;
            tcpwise__subcmd__emu__subcmd__help,help)
                cmd="tcpwise__subcmd__emu__subcmd__help__subcmd__help"
                ;;
            tcpwise__subcmd__emu__subcmd__help,pair)
                cmd="tcpwise__subcmd__emu__subcmd__help__subcmd__pair"
                ;;
            tcpwise__subcmd__emu__subcmd__help,plot)
                cmd="tcpwise__subcmd__emu__subcmd__help__subcmd__plot"
                ;;
            tcpwise__subcmd__emu__subcmd__help,selftest)
                cmd="tcpwise__subcmd__emu__subcmd__help__subcmd__selftest"
                ;;
            tcpwise__subcmd__emu__subcmd__help,shell)
                cmd="tcpwise__subcmd__emu__subcmd__help__subcmd__shell"
                ;;
            tcpwise__subcmd__help,bench)
                cmd="tcpwise__subcmd__help__subcmd__bench"
                ;;
            tcpwise__subcmd__help,dispatch)
                cmd="tcpwise__subcmd__help__subcmd__dispatch"
                ;;
            tcpwise__subcmd__help,emu)
                cmd="tcpwise__subcmd__help__subcmd__emu"
                ;;
            tcpwise__subcmd__help,generate)
                cmd="tcpwise__subcmd__help__subcmd__generate"
                ;;
            tcpwise__subcmd__help,get)
                cmd="tcpwise__subcmd__help__subcmd__get"
                ;;
            tcpwise__subcmd__help,help)
                cmd="tcpwise__subcmd__help__subcmd__help"
                ;;
            tcpwise__subcmd__help,lab)
                cmd="tcpwise__subcmd__help__subcmd__lab"
                ;;
            tcpwise__subcmd__help,perf)
                cmd="tcpwise__subcmd__help__subcmd__perf"
                ;;
            tcpwise__subcmd__help,rpm)
                cmd="tcpwise__subcmd__help__subcmd__rpm"
                ;;
            tcpwise__subcmd__help,serve)
                cmd="tcpwise__subcmd__help__subcmd__serve"
                ;;
            tcpwise__subcmd__help__subcmd__dispatch,aio)
                cmd="tcpwise__subcmd__help__subcmd__dispatch__subcmd__aio"
                ;;
            tcpwise__subcmd__help__subcmd__dispatch,load)
                cmd="tcpwise__subcmd__help__subcmd__dispatch__subcmd__load"
                ;;
            tcpwise__subcmd__help__subcmd__dispatch,server)
                cmd="tcpwise__subcmd__help__subcmd__dispatch__subcmd__server"
                ;;
            tcpwise__subcmd__help__subcmd__emu,clean)
                cmd="tcpwise__subcmd__help__subcmd__emu__subcmd__clean"
                ;;
            tcpwise__subcmd__help__subcmd__emu,dumbbell)
                cmd="tcpwise__subcmd__help__subcmd__emu__subcmd__dumbbell"
                ;;
            tcpwise__subcmd__help__subcmd__emu,pair)
                cmd="tcpwise__subcmd__help__subcmd__emu__subcmd__pair"
                ;;
            tcpwise__subcmd__help__subcmd__emu,plot)
                cmd="tcpwise__subcmd__help__subcmd__emu__subcmd__plot"
                ;;
            tcpwise__subcmd__help__subcmd__emu,selftest)
                cmd="tcpwise__subcmd__help__subcmd__emu__subcmd__selftest"
                ;;
            tcpwise__subcmd__help__subcmd__emu,shell)
                cmd="tcpwise__subcmd__help__subcmd__emu__subcmd__shell"
                ;;
            tcpwise__subcmd__help__subcmd__lab,merge)
                cmd="tcpwise__subcmd__help__subcmd__lab__subcmd__merge"
                ;;
            tcpwise__subcmd__help__subcmd__lab,report)
                cmd="tcpwise__subcmd__help__subcmd__lab__subcmd__report"
                ;;
            tcpwise__subcmd__help__subcmd__lab,sweep)
                cmd="tcpwise__subcmd__help__subcmd__lab__subcmd__sweep"
                ;;
            tcpwise__subcmd__help__subcmd__perf,client)
                cmd="tcpwise__subcmd__help__subcmd__perf__subcmd__client"
                ;;
            tcpwise__subcmd__help__subcmd__perf,server)
                cmd="tcpwise__subcmd__help__subcmd__perf__subcmd__server"
                ;;
            tcpwise__subcmd__lab,help)
                cmd="tcpwise__subcmd__lab__subcmd__help"
                ;;
            tcpwise__subcmd__lab,merge)
                cmd="tcpwise__subcmd__lab__subcmd__merge"
                ;;
            tcpwise__subcmd__lab,report)
                cmd="tcpwise__subcmd__lab__subcmd__report"
                ;;
            tcpwise__subcmd__lab,sweep)
                cmd="tcpwise__subcmd__lab__subcmd__sweep"
                ;;
            tcpwise__subcmd__lab__subcmd__help,help)
                cmd="tcpwise__subcmd__lab__subcmd__help__subcmd__help"
                ;;
            tcpwise__subcmd__lab__subcmd__help,merge)
                cmd="tcpwise__subcmd__lab__subcmd__help__subcmd__merge"
                ;;
            tcpwise__subcmd__lab__subcmd__help,report)
                cmd="tcpwise__subcmd__lab__subcmd__help__subcmd__report"
                ;;
            tcpwise__subcmd__lab__subcmd__help,sweep)
                cmd="tcpwise__subcmd__lab__subcmd__help__subcmd__sweep"
                ;;
            tcpwise__subcmd__perf,client)
                cmd="tcpwise__subcmd__perf__subcmd__client"
                ;;
            tcpwise__subcmd__perf,help)
                cmd="tcpwise__subcmd__perf__subcmd__help"
                ;;
            tcpwise__subcmd__perf,server)
                cmd="tcpwise__subcmd__perf__subcmd__server"
                ;;
            tcpwise__subcmd__perf__subcmd__help,client)
                cmd="tcpwise__subcmd__perf__subcmd__help__subcmd__client"
                ;;
            tcpwise__subcmd__perf__subcmd__help,help)
                cmd="tcpwise__subcmd__perf__subcmd__help__subcmd__help"
                ;;
            tcpwise__subcmd__perf__subcmd__help,server)
                cmd="tcpwise__subcmd__perf__subcmd__help__subcmd__server"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        tcpwise)
            opts="-h -V --help --version emu perf dispatch get lab bench serve rpm generate help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__bench)
            opts="-c -t -d -n -R -H -X -k -m -h -V --connections --threads --duration --requests --rate --header --method --data --timeout --latency --insecure --cacert --http2 --http3 --max-concurrent-streams --json --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --connections)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -d)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -R)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-concurrent-streams)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch)
            opts="-h -V --help --version server load aio help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__aio)
            opts="-c -t -h -V --model --clients --threads --time --skew --file --size --seed --json --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clients)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --skew)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__help)
            opts="server load aio help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__help__subcmd__aio)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__help__subcmd__load)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__help__subcmd__server)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__load)
            opts="-c -t -h -V --clients --time --warmup --work --long-fraction --long-work --reply-bytes --seed --json --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --clients)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --work)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --long-fraction)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --long-work)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reply-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__dispatch__subcmd__server)
            opts="-h -V --model --workers --bind --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu)
            opts="-h -V --help --version shell pair dumbbell selftest plot clean help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__clean)
            opts="-h -V --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__dumbbell)
            opts="-q -h -V --rtt --delay --up-delay --down-delay --rate --up-rate --down-rate --up-trace --down-trace --trace-once --overhead --queue --up-queue --down-queue --loss --up-loss --down-loss --jitter --up-jitter --down-jitter --seed --onoff --up-onoff --down-onoff --police --up-police --down-police --reorder --up-reorder --down-reorder --duplicate --up-duplicate --down-duplicate --corrupt --up-corrupt --down-corrupt --schedule --outage --log --pcap --topology --host --server --wait-port --wait-timeout --idle-rtt --stats-json --quiet --as-root --no-offload --forwarder-threads --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --rtt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --overhead)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedule)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --outage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pcap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topology)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle-rtt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats-json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --forwarder-threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help)
            opts="shell pair dumbbell selftest plot clean help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help__subcmd__clean)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help__subcmd__dumbbell)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help__subcmd__pair)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help__subcmd__plot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help__subcmd__selftest)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__help__subcmd__shell)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__pair)
            opts="-q -h -V --rtt --delay --up-delay --down-delay --rate --up-rate --down-rate --up-trace --down-trace --trace-once --overhead --queue --up-queue --down-queue --loss --up-loss --down-loss --jitter --up-jitter --down-jitter --seed --onoff --up-onoff --down-onoff --police --up-police --down-police --reorder --up-reorder --down-reorder --duplicate --up-duplicate --down-duplicate --corrupt --up-corrupt --down-corrupt --schedule --outage --log --pcap --config --print-config --client-sysctl --stats-json --quiet --meter --meter-uplink --meter-downlink --meter-all --no-notice --as-root --no-offload --forwarder-threads --inject-panic-after --server-sysctl --server --wait-port --wait-timeout --testbeds --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --rtt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --overhead)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedule)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --outage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pcap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --client-sysctl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats-json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --forwarder-threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --inject-panic-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-sysctl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --testbeds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__plot)
            opts="-o -h -V --output --bin --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__selftest)
            opts="-C -h -V --rtt --delay --up-delay --down-delay --rate --up-rate --down-rate --up-trace --down-trace --trace-once --overhead --queue --up-queue --down-queue --loss --up-loss --down-loss --jitter --up-jitter --down-jitter --seed --onoff --up-onoff --down-onoff --police --up-police --down-police --reorder --up-reorder --down-reorder --duplicate --up-duplicate --down-duplicate --corrupt --up-corrupt --down-corrupt --schedule --outage --log --pcap --config --print-config --samples --bulk --flows --congestion --sysctl --json --no-offload --forwarder-threads --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --rtt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --overhead)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedule)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --outage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pcap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --samples)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bulk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flows)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --congestion)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sysctl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --forwarder-threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__emu__subcmd__shell)
            opts="-q -h -V --rtt --delay --up-delay --down-delay --rate --up-rate --down-rate --up-trace --down-trace --trace-once --overhead --queue --up-queue --down-queue --loss --up-loss --down-loss --jitter --up-jitter --down-jitter --seed --onoff --up-onoff --down-onoff --police --up-police --down-police --reorder --up-reorder --down-reorder --duplicate --up-duplicate --down-duplicate --corrupt --up-corrupt --down-corrupt --schedule --outage --log --pcap --config --print-config --client-sysctl --stats-json --quiet --meter --meter-uplink --meter-downlink --meter-all --no-notice --as-root --no-offload --forwarder-threads --inject-panic-after --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --rtt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --overhead)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-jitter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-onoff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-police)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-reorder)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-duplicate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --up-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down-corrupt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedule)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --outage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pcap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --client-sysctl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats-json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --forwarder-threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --inject-panic-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__generate)
            opts="-h -V --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__get)
            opts="-g -K -o -O -H -b -c -j -J -n -R -z -0 -# -X -d -G -F -T -u -A -e -r -C -i -I -D -v -w -s -S -L -f -k -m -4 -6 -x -Z -1 -h -V --globoff --config --url --output --remote-name --remote-name-all --header --cookie --cookie-jar --junk-session-cookies --remote-header-name --netrc --netrc-file --netrc-optional --unix-socket --path-as-is --trace --trace-ascii --output-dir --create-dirs --fail-early --stderr --remote-time --etag-save --etag-compare --time-cond --limit-rate --http1.0 --no-keepalive --keepalive-time --tcp-nodelay --progress-bar --request --data --data-binary --json --data-raw --data-urlencode --get --form --form-string --upload-file --user --user-agent --referer --range --request-target --continue-at --compressed --include --head --dump-header --verbose --write-out --silent --show-error --no-progress-meter --location --post301 --post302 --post303 --max-redirs --fail --fail-with-body --retry --retry-delay --retry-max-time --retry-connrefused --retry-all-errors --connect-timeout --insecure --tls-earlydata --tcp-fastopen --happy-eyeballs-timeout-ms --no-happy-eyeballs --max-filesize --max-time --ipv4 --ipv6 --resolve --connect-to --proxy --noproxy --parallel --parallel-max --http1.1 --http2 --http2-prior-knowledge --http3 --alt-svc --http3-only --timing --report-json --pool-policy --max-conns --read-sizing --rcvbuf --sndbuf --cacert --tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2 --tlsv1.3 --tls-max --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -K)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cookie)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -b)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cookie-jar)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --netrc-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --unix-socket)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trace-ascii)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stderr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etag-save)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --etag-compare)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time-cond)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -z)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keepalive-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -d)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data-binary)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data-raw)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data-urlencode)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --form)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -F)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --form-string)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --upload-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -T)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --user-agent)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --referer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -e)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --range)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -r)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-target)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --continue-at)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dump-header)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -D)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --write-out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -w)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-redirs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-max-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --happy-eyeballs-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-filesize)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --resolve)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -x)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --noproxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel-max)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alt-svc)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pool-policy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-conns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --read-sizing)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rcvbuf)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sndbuf)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-max)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help)
            opts="emu perf dispatch get lab bench serve rpm generate help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__bench)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__dispatch)
            opts="server load aio"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__dispatch__subcmd__aio)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__dispatch__subcmd__load)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__dispatch__subcmd__server)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__emu)
            opts="shell pair dumbbell selftest plot clean"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__emu__subcmd__clean)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__emu__subcmd__dumbbell)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__emu__subcmd__pair)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__emu__subcmd__plot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__emu__subcmd__selftest)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__emu__subcmd__shell)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__generate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__get)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__lab)
            opts="report sweep merge"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__lab__subcmd__merge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__lab__subcmd__report)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__lab__subcmd__sweep)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__perf)
            opts="server client"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__perf__subcmd__client)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__perf__subcmd__server)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__rpm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab)
            opts="-h -V --quick --budget --out --seed --runs --rtt --rate --traces --log --pcap --help --version report sweep merge help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rtt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --traces)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pcap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__help)
            opts="report sweep merge help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__help__subcmd__merge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__help__subcmd__report)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__help__subcmd__sweep)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__merge)
            opts="-h -V --out --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__report)
            opts="-h -V --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__lab__subcmd__sweep)
            opts="-h -V --out --list --resume --shard --jobs --cell-timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cell-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__perf)
            opts="-h -V --help --version server client help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__perf__subcmd__client)
            opts="-p -t -n -R -i -C -J -b -O -w -4 -6 -B -P -u -l -V -v -Z -h --port --iperf3 --time --bytes --reverse --rcvbuf --sndbuf --read-sizing --interval --congestion --path-rate --stall-timeout --json --bitrate --fq-rate --omit --window --version4 --version6 --bind --cport --parallel --bidir --udp --length --rcv-timeout --connect-timeout --verbose --version --get-server-output --zerocopy --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rcvbuf)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sndbuf)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --read-sizing)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --congestion)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --path-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stall-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -W "tcpwise iperf3" -- "${cur}"))
                    return 0
                    ;;
                -J)
                    COMPREPLY=($(compgen -W "tcpwise iperf3" -- "${cur}"))
                    return 0
                    ;;
                --bitrate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -b)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fq-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --omit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -O)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -w)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -B)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -P)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --length)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rcv-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --zerocopy)
                    COMPREPLY=($(compgen -W "sendfile msg" -- "${cur}"))
                    return 0
                    ;;
                -Z)
                    COMPREPLY=($(compgen -W "sendfile msg" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__perf__subcmd__help)
            opts="server client help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__perf__subcmd__help__subcmd__client)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__perf__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__perf__subcmd__help__subcmd__server)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__perf__subcmd__server)
            opts="-p -1 -V -v -s -I -h --bind --port --one-off --verbose --version --server --pidfile --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pidfile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -I)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__rpm)
            opts="-C -s -k -v -h -V --config-url --direction --sequential --http1.1 --notsent-lowat --congestion --insecure --cacert --resolve --connect-timeout --json --verbose --mad --interval --trimmed-mean --sdt --max-connections --max-probes --probe-capacity --max-duration --percentile --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --direction)
                    COMPREPLY=($(compgen -W "bidir down up" -- "${cur}"))
                    return 0
                    ;;
                --notsent-lowat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --congestion)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --resolve)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mad)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trimmed-mean)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sdt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-connections)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-probes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-capacity)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --percentile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        tcpwise__subcmd__serve)
            opts="-p -C -h -V --bind --port --tls --cert-out --tls-name --tls-earlydata --tls-tickets --tfo --http3 --access-log --root --gzip --notsent-lowat --congestion --threads --io --header-timeout --idle-timeout --max-header-size --max-body --max-bytes --max-delay --max-conns --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cert-out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-tickets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --notsent-lowat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --congestion)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --io)
                    COMPREPLY=($(compgen -W "auto epoll uring" -- "${cur}"))
                    return 0
                    ;;
                --header-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-header-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-body)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-conns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _tcpwise -o nosort -o bashdefault -o default tcpwise
else
    complete -F _tcpwise -o bashdefault -o default tcpwise
fi
