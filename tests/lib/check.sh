# shellcheck shell=bash
# check.sh: what a test script needs before and while it checks; source it
# after tests/lib/netns.sh (xr_die, xr_cleanup_push).
#
#   xr_need_root              exit with a message unless root
#   xr_need_exec FILE...      each FILE executable ("run make first")
#   xr_need_cmd TOOL...       each TOOL on PATH ("make deps")
#   xr_tmpdir NAME            a private temp dir named after NAME, removed
#                             on exit; its path in TMP
#   pass MSG                  one check passed: counted in CHECKS, printed
#   fail MSG                  one check failed: print and exit 1
#   xr_passed NAME            "NAME: N checks passed"
#   check_eq WHAT GOT WANT    pass WHAT if GOT = WANT (strings), else fail
#   check_has WHAT TEXT RE    pass WHAT if TEXT matches the extended
#                             regular expression RE, else fail
#   xr_json EXPR [ARG...]     EXPR over the JSON on stdin, printed; in EXPR
#                             `j` is the document and `a` the list of ARGs
#                             (tests/lib/xrtest/jq.py)
#
# XR_ROOT is the repository; XR_PY the folder of the tests' Python
# modules, XR_BENCHPY the benchmarks' (standard library only).

# shellcheck disable=SC2034 # for the scripts that source this
{
	XR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	XR_PY=$XR_ROOT/tests/lib/xrtest
	XR_BENCHPY=$XR_ROOT/tests/lib/xrbench
	CHECKS=0
}

xr_need_root() { [ "$(id -u)" -eq 0 ] || xr_die "needs root"; }

xr_need_exec() {
	local f
	for f in "$@"; do
		[ -x "$f" ] || xr_die "$f missing: run make first"
	done
}

xr_need_cmd() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || xr_die "$t missing (make deps)"
	done
}

xr_tmpdir() {
	TMP=$(mktemp -d "/tmp/$1.XXXXXX") || xr_die "cannot create a temp dir"
	xr_cleanup_push "rm -rf '$TMP'"
}

pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }
fail() { xr_die "$*"; }
xr_passed() { echo "$1: $CHECKS checks passed"; }

check_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	pass "$1"
}

check_has() {
	grep -qE -- "$3" <<<"$2" || fail "$1: /$3/ not in: $2"
	pass "$1"
}

xr_json() { python3 "$XR_PY/jq.py" "$@"; }
