#!/usr/bin/env bash
# test_completion.sh: the bash completion of xroce (loader/xroce-completion.bash),
# driven as readline drives it (COMP_WORDS, COMP_CWORD, then _xroce):
#   - the commands, global options, each command's options; interface names
#     where an interface goes (also after --iface=), files for -f and -o,
#     the keywords of --mode, --tx-engine and perf's role; after
#     `run --` a command, then files; nothing where a
#     number or a host goes, and option values are not taken for arguments;
#   - it knows exactly the commands `xroce help` lists and, for each, the
#     options `xroce COMMAND --help` lists.
# Usage: tests/integration/test_completion.sh   (needs build/xroce)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

XROCE=$PWD/build/xroce
[ -x "$XROCE" ] || xr_die "$XROCE missing: run make first"
# shellcheck source=loader/xroce-completion.bash
. loader/xroce-completion.bash
TMP=$(mktemp -d /tmp/xroce-completion.XXXXXX)
xr_cleanup_push "rm -rf '$TMP'"
touch "$TMP/file1" "$TMP/file2" "$TMP/other"
# a command only this test has, for `xroce run -- CMD`
mkdir "$TMP/bin"
printf '#!/bin/sh\n' >"$TMP/bin/ib_write_bw_xr_test"
chmod +x "$TMP/bin/ib_write_bw_xr_test"
PATH=$TMP/bin:$PATH
CHECKS=0
pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }

# comp WORD...: what completes the last WORD (the one being typed) of the
# command line "xroce WORD...", sorted, one line
comp() {
	COMP_WORDS=(xroce "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_xroce || true
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}

# expect WANT WORD...: comp WORD... is exactly WANT
expect() {
	local want=$1 got
	shift
	got=$(comp "$@")
	[ "$got" = "$want" ] || xr_die "xroce $*<TAB>: '$got', not '$want'"
	pass "xroce $*<TAB>: ${want:-nothing}"
}

# has WANT WORD...: comp WORD... includes WANT
has() {
	local want=$1 got
	shift
	got=" $(comp "$@") "
	[[ $got == *" $want "* ]] || xr_die "xroce $*<TAB>: '$got' lacks '$want'"
	pass "xroce $*<TAB>: offers $want"
}

echo "== what completes where"
expect "attach detach help perf recv run send stats status" ""
expect "stats status" st
expect "--help --verbose --version" --
expect "send" -v se
expect "--mode" attach --mo
expect "auto generic native" attach --mode ""
expect "generic" attach -m g
has lo attach ""
has lo detach --force l
has lo status ""
has lo stats -n 3 ""
has lo send -i ""
has lo recv --iface ""
has lo perf --iface = ""
has lo send -i eth0 --iface = l
has lo send -n 1M --iface =
expect "$TMP/file1 $TMP/file2" send -f "$TMP/fi"
expect "$TMP/file1 $TMP/file2" recv -i lo --output "$TMP/f"
expect "client server" perf ""
expect "client server" perf -s 64k -i lo ""
expect "" perf client -i lo ""
expect "bw lat" perf -m ""
expect "af_xdp test_run" perf --tx-engine ""
expect "" stats -i ""
expect "" send -i lo ""
expect "" attach lo ""
expect "--accept-timeout" recv --acc
expect "attach detach perf recv run send stats status" help ""
expect "--devices" run --dev
expect "" run -D ""
expect "$TMP/file1 $TMP/file2" run --key "$TMP/fi"
has ib_write_bw_xr_test run -v -- ib_write_bw_xr_tes
expect "$TMP/file1 $TMP/file2" run -- ib_write_bw_xr_test "$TMP/fi"

echo "== the lists against the command's own"
# commands: the indented words under "commands:" in `xroce help`
cmds=$("$XROCE" help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}' | sort | tr '\n' ' ')
mine=$(tr ' ' '\n' <<<"$_xroce_commands" | grep -vx help | sort | tr '\n' ' ')
[ "$cmds" = "$mine" ] || xr_die "xroce help lists '$cmds', the completion '$mine'"
pass "the commands of xroce help: $cmds"
for c in $cmds; do
	# options: the "-x, --long" or "--long" that start a line of the help
	help=$("$XROCE" "$c" --help | sed -nE 's/^ +((-[A-Za-z], )?--[a-z-]+).*/\1/p' |
		tr ',' ' ' | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
	opts=$(_xroce_opts "$c" | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$help" = "$opts" ] || xr_die "xroce $c --help lists '$help', the completion '$opts'"
	for o in $(_xroce_valued "$c"); do
		_xroce_in "$o" "$(_xroce_opts "$c")" || xr_die "$c: $o takes a value but is no option"
	done
done
pass "the options of every command's --help, and only those"

echo "test_completion: $CHECKS checks passed"
