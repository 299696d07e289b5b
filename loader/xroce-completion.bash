# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bash completion for xroce(8): commands, each command's options, interface
# names where an interface goes, files for -f/-o, the values of --mode and
# --tx-engine, and for `xroce run -- CMD` the command and then files.  Installed as share/bash-completion/completions/xroce; needs
# nothing from the bash-completion package.  Keep the option lists in step
# with the usage texts in loader/cmd_*.c (tests/integration/test_completion.sh
# checks them against `xroce COMMAND --help`).

_xroce_commands="attach detach status send recv stats perf run help"

# _xroce_opts COMMAND: its options; _xroce_valued COMMAND: those that take
# a value (so that the word after them is not a positional argument).
_xroce_opts() {
	local common="-i --iface -p --port -P --paths --mem -t --timeout --key --from -j --json -v --verbose -h --help"
	case $1 in
	attach) echo "-m --mode -p --port --no-csum --csum -c --max-conns --separate --rate-capacity --active-window -f --force -h --help" ;;
	detach) echo "-f --force -h --help" ;;
	status) echo "-j --json -h --help" ;;
	stats) echo "-i --interval -n --count -j --json -h --help" ;;
	send) echo "$common -n --bytes -f --file -w --wr --seed --pause-at --pause-ms" ;;
	recv) echo "$common -b --buf -o --output --idle --accept-timeout" ;;
	perf) echo "-i --iface -p --port -m --mode -s --size -d --duration -q --depth -n --iters -c --conns -P --paths --mtu --max-inflight --once --interval-ms --warmup-ms --wait --breakdown --no-redundant --key --from --tx-engine -j --json -v --verbose -h --help" ;;
	run) echo "-D --devices -m --mem-size -P --paths -k --key -v --verbose -L --print-libdir -h --help" ;;
	esac
}

_xroce_valued() {
	local common="-i --iface -p --port -P --paths --mem -t --timeout --key --from"
	case $1 in
	attach) echo "-m --mode -p --port -c --max-conns --rate-capacity --active-window" ;;
	stats) echo "-i --interval -n --count" ;;
	send) echo "$common -n --bytes -f --file -w --wr --seed --pause-at --pause-ms" ;;
	recv) echo "$common -b --buf -o --output --idle --accept-timeout" ;;
	perf) echo "-i --iface -p --port -m --mode -s --size -d --duration -q --depth -n --iters -c --conns -P --paths --mtu --max-inflight --interval-ms --warmup-ms --key --from --tx-engine" ;;
	run) echo "-D --devices -m --mem-size -P --paths -k --key" ;;
	esac
}

# Interface names of this network namespace.
_xroce_ifaces() {
	local d
	for d in /sys/class/net/*; do
		[ -e "$d" ] && printf '%s\n' "${d##*/}"
	done
}

# _xroce_in WORD LIST: is WORD one of LIST?
_xroce_in() {
	local w
	for w in $2; do
		[ "$w" = "$1" ] && return 0
	done
	return 1
}

# _xroce_value COMMAND OPTION: complete the value of OPTION (IF, FILE, a
# keyword); nothing for numbers.
_xroce_value() {
	local cur=$3
	case $1:$2 in
	attach:-m | attach:--mode)
		mapfile -t COMPREPLY < <(compgen -W "auto native generic" -- "$cur") ;;
	perf:-m | perf:--mode)
		mapfile -t COMPREPLY < <(compgen -W "bw lat" -- "$cur") ;;
	perf:--tx-engine)
		mapfile -t COMPREPLY < <(compgen -W "af_xdp test_run" -- "$cur") ;;
	send:-i | send:--iface | recv:-i | recv:--iface | perf:-i | perf:--iface)
		mapfile -t COMPREPLY < <(compgen -W "$(_xroce_ifaces)" -- "$cur") ;;
	send:-f | send:--file | recv:-o | recv:--output | *:--key | run:-k)
		compopt -o filenames 2>/dev/null || true
		mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	esac
}

# _xroce_positional COMMAND N: complete the N-th (from 0) argument that is
# not an option.
_xroce_positional() {
	local cur=$3
	case $1:$2 in
	attach:0 | detach:0 | status:0 | stats:0)
		mapfile -t COMPREPLY < <(compgen -W "$(_xroce_ifaces)" -- "$cur") ;;
	perf:0)
		mapfile -t COMPREPLY < <(compgen -W "server client" -- "$cur") ;;
	help:0)
		mapfile -t COMPREPLY < <(compgen -W "${_xroce_commands% help}" -- "$cur") ;;
	esac
}

_xroce() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev i cmd="" ci=0 n=0 w
	COMPREPLY=()
	# Global options come before the command.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; ci=$i; break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "-v --verbose -h --help --version" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$_xroce_commands" -- "$cur")
		fi
		return 0
	fi
	# xroce run [options] -- CMD ARGS: after "--", CMD is a command and
	# its arguments are files.
	if [ "$cmd" = run ]; then
		for ((i = ci + 1; i < COMP_CWORD; i++)); do
			[ "${COMP_WORDS[i]}" = -- ] || continue
			if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			else
				compopt -o filenames 2>/dev/null || true
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
			return 0
		done
	fi
	# --opt=value is split at '=' by readline: treat it as --opt value.
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	if [ "$prev" = "=" ] && [ $((COMP_CWORD - 2)) -gt "$ci" ]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	elif [ "$cur" = "=" ]; then
		cur=""
	fi
	if [ "$COMP_CWORD" -gt $((ci + 1)) ] && _xroce_in "$prev" "$(_xroce_valued "$cmd")"; then
		_xroce_value "$cmd" "$prev" "$cur"
		return 0
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_xroce_opts "$cmd")" -- "$cur")
		return 0
	fi
	# Count the arguments before this one that are not options or their
	# values.
	for ((i = ci + 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ "$w" = "=" ]; then
			i=$((i + 1))
		elif [[ $w == -* ]]; then
			[[ ${COMP_WORDS[i + 1]} == "=" ]] && continue
			_xroce_in "$w" "$(_xroce_valued "$cmd")" && i=$((i + 1))
		else
			n=$((n + 1))
		fi
	done
	_xroce_positional "$cmd" "$n" "$cur"
	return 0
}

complete -F _xroce xroce
