#!/usr/bin/env bash
# run.sh: build the userspace fuzzers (`make fuzz`, tests/fuzz/fuzz.mk) and
# run each for a while, keeping its corpus; exit non-zero if any input
# crashed one (sanitizer report, broken invariant, hang over 10 s, or leak).
#
#   fuzz_ctrl    control messages from anyone on the network
#   fuzz_events  ACK/NAK/RECV/READ_REQ/PROBE_REPLY records from peers
#   fuzz_bind    BIND records (xroce_qp_bind's exchange) from anyone
#
# First the reproducers in tests/fuzz/regress/NAME/ (inputs that once
# found a bug) must pass, then each fuzzer runs SECONDS (default 60) on
# build/fuzz/corpus/NAME/ (seeded with random programs when empty; new
# inputs are added to it).  A crashing input is kept in
# build/fuzz/artifacts/NAME/ and its report printed.
#
# Usage: tests/fuzz/run.sh [SECONDS] [NAME...]
#        tests/fuzz/run.sh --quick      the test suite's run: a fixed number
#                                       of inputs from a fixed seed on a fresh
#                                       corpus, so the same commit always runs
#                                       the same inputs (a failure reproduces)
# Needs root (the fuzzers' detached device creates BPF maps).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

SECS=60
QUICK=0
NAMES=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	[0-9]*) SECS=$1 ;;
	fuzz_ctrl | fuzz_events | fuzz_bind) NAMES+=("$1") ;;
	*) echo "usage: $0 [SECONDS|--quick] [fuzz_ctrl|fuzz_events...]" >&2; exit 2 ;;
	esac
	shift
done
[[ $SECS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: SECONDS must be a positive integer" >&2; exit 2; }
[ ${#NAMES[@]} -gt 0 ] || NAMES=(fuzz_ctrl fuzz_events fuzz_bind)
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (BPF maps)" >&2; exit 1; }

OUT=build/fuzz
make -s --no-print-directory fuzz || { echo "run.sh: build failed" >&2; exit 1; }

CHILD=
LOG=
# shellcheck disable=SC2317 # called from the traps
cleanup() {
	[ -n "$CHILD" ] && kill "$CHILD" 2>/dev/null && wait "$CHILD" 2>/dev/null
	[ -n "$LOG" ] && rm -f "$LOG"
	CHILD=
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap cleanup EXIT

# Random programs as a first corpus (tests/lib/xrtest/fuzz_seed.py).
seed_corpus() {
	local dir=$1
	[ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
	python3 tests/lib/xrtest/fuzz_seed.py "$dir"
}

FAILED=0
SUMMARY=()
for name in "${NAMES[@]}"; do
	bin=$OUT/$name
	corpus=$OUT/corpus/$name
	if [ "$QUICK" -eq 1 ]; then
		corpus=$OUT/quick/$name
		rm -rf "$corpus"
	fi
	art=$OUT/artifacts/$name
	mkdir -p "$corpus" "$art"
	seed_corpus "$corpus"
	LOG=$(mktemp "/tmp/xrfuzz.XXXXXX")
	# Reproducers of bugs found and fixed: each must run clean.
	reg=tests/fuzz/regress/$name
	if [ -n "$(ls -A "$reg" 2>/dev/null)" ]; then
		if ! "$bin" -runs=0 "$reg"/* >"$LOG" 2>&1; then
			echo "== $name: a regression input fails again:"
			grep -E "INVARIANT|ERROR|runtime error|SUMMARY|Running:" "$LOG" | tail -20
			FAILED=$((FAILED + 1))
			SUMMARY+=("FAIL  $name: regression")
			rm -f "$LOG"
			continue
		fi
	fi
	if [ "$QUICK" -eq 1 ]; then
		# About 10 s each on this machine.
		case $name in
		fuzz_ctrl) limit=(-seed=1 -runs=12000) ;;
		fuzz_bind) limit=(-seed=1 -runs=6000) ;;
		*) limit=(-seed=1 -runs=2000) ;;
		esac
		what="seed 1"
	else
		limit=(-max_total_time="$SECS")
		what="${SECS} s"
	fi
	echo "== $name: $what on $corpus"
	"$bin" "${limit[@]}" -timeout=10 -max_len=8192 -len_control=20 \
		-print_final_stats=1 -artifact_prefix="$art/" "$corpus" >"$LOG" 2>&1 &
	CHILD=$!
	wait "$CHILD"
	rc=$?
	CHILD=
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG")
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$LOG" | tail -1)
	n=$(find "$corpus" -type f | wc -l)
	if [ "$rc" -ne 0 ]; then
		echo "== $name: FAILED (exit $rc)"
		grep -v '^    #[0-9]' "$LOG" | grep -E -A12 "INVARIANT|ERROR|runtime error|WARNING: Memory|Test unit written" | head -60
		FAILED=$((FAILED + 1))
		SUMMARY+=("FAIL  $name: exit $rc after ${execs:-?} inputs; reproducer in $art/")
	else
		SUMMARY+=("PASS  $name: ${execs:-?} inputs ($what), ${cov:-cov ?}, corpus $n")
	fi
	rm -f "$LOG"
	LOG=
done

printf '%s\n' "${SUMMARY[@]}"
exit $((FAILED > 0))
