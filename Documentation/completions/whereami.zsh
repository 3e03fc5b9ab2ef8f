#compdef whereami

__whereami_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__whereami_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __whereami_complete "${completions[@]:0:-1}"
    fi
}

__whereami_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_whereami() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar ___format=('text' 'json' 'csv' 'geojson' 'gpx')
    local -ar arg_specs=(
        ':server:'
        '--replay[Read a recording (gpsd JSON, as `gpspipe -w` writes it) instead of gpsd.]:file:_files'
        '--demo[Replay the bundled recording of a drive instead of asking gpsd.]'
        '--speed[With --replay or --demo\: replay this many times faster than recorded; 0 for as fast as possible.]:factor:'
        '--timeout[Give up if no fix arrives within this many seconds ('\''inf'\''\: wait as long as it takes). Without it, one fix waits 30 s, and --follow waits for gpsd and its first fix as long as it takes.]:seconds:'
        '--max-age[Accept a fix gpsd already holds if it is at most this old.]:seconds:'
        '--accuracy[Wait for a fix at least this accurate (horizontal).]:metres:'
        '(--follow -f)'{--follow,-f}'[Stream fixes until interrupted.]'
        '(--watch -w)'{--watch,-w}'[Show a live panel of the receiver (the fix, its status, the satellites) until q or Ctrl-C. Standard output must be a terminal.]'
        '--count[With --follow\: stop after this many fixes.]:n:'
        '--distance[With --follow\: only fixes this far from the last one printed.]:metres:'
        '--interval[With --follow\: at most one fix per this many seconds of fix time.]:seconds:'
        '--format[Output format\: text, json (one object per line), csv, geojson or gpx.]:format:{__whereami_complete "${___format[@]}"}'
        '(--quiet -q)'{--quiet,-q}'[Print no status on standard error (errors are still printed there).]'
        '--sky[Print the satellites the receiver sees, once, instead of a fix.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        help)
            "_whereami_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_whereami_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _whereami ]]; then
    _whereami "${@}"
else
    compdef _whereami whereami
fi
