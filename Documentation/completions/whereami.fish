function __whereami_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __whereami_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __whereami_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __whereami_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __whereami_parse_tokens -S
    set -l unparsed_tokens (__whereami_tokens -pc)
    switch $unparsed_tokens[1]
    case 'whereami'
        __whereami_parse_subcommand 1 'replay=' 'demo' 'speed=' 'timeout=' 'max-age=' 'accuracy=' 'f/follow' 'w/watch' 'count=' 'distance=' 'interval=' 'format=' 'q/quiet' 'sky' 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'help'
            __whereami_parse_subcommand -r 1 'version'
        end
    end
end

function __whereami_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __whereami_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __whereami_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __whereami_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__whereami_tokens -p)
    if test -z "$(__whereami_tokens -t)"
        set -l index (count (__whereami_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'whereami' -f
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" replay' -l 'replay' -d 'Read a recording (gpsd JSON, as `gpspipe -w` writes it) instead of gpsd.' -rF
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" demo' -l 'demo' -d 'Replay the bundled recording of a drive instead of asking gpsd.'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" speed' -l 'speed' -d 'With --replay or --demo: replay this many times faster than recorded; 0 for as fast as possible.' -rfka ''
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" timeout' -l 'timeout' -d 'Give up if no fix arrives within this many seconds (\'inf\': wait as long as it takes). Without it, one fix waits 30 s, and --follow waits for gpsd and its first fix as long as it takes.' -rfka ''
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" max-age' -l 'max-age' -d 'Accept a fix gpsd already holds if it is at most this old.' -rfka ''
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" accuracy' -l 'accuracy' -d 'Wait for a fix at least this accurate (horizontal).' -rfka ''
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" f follow' -l 'follow' -s 'f' -d 'Stream fixes until interrupted.'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" w watch' -l 'watch' -s 'w' -d 'Show a live panel of the receiver (the fix, its status, the satellites) until q or Ctrl-C. Standard output must be a terminal.'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" count' -l 'count' -d 'With --follow: stop after this many fixes.' -rfka ''
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" distance' -l 'distance' -d 'With --follow: only fixes this far from the last one printed.' -rfka ''
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" interval' -l 'interval' -d 'With --follow: at most one fix per this many seconds of fix time.' -rfka ''
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" format' -l 'format' -d 'Output format: text, json (one object per line), csv, geojson or gpx.' -rfka 'text json csv geojson gpx'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" q quiet' -l 'quiet' -s 'q' -d 'Print no status on standard error (errors are still printed there).'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" sky' -l 'sky' -d 'Print the satellites the receiver sees, once, instead of a fix.'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" version' -l 'version' -d 'Show the version.'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_positional "whereami" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'whereami' -n '__whereami_should_offer_completions_for_flags_or_options "whereami help" version' -l 'version' -d 'Show the version.'
