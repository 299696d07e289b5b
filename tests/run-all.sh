#!/usr/bin/env bash
# run-all.sh: the whole test suite, as the README's test command runs it
# (`make test`).  Needs root for everything past the unit tests.
#
#   unit          cmocka tests under AddressSanitizer + UBSan (build/tests/test_*)
#                 and the tests' Python helpers' own (tests/lib/xrtest/test_*.py)
#   bpf           the XDP program on crafted frames (build/tests/bpf_*)
#   integration   netns tests: attach/status, transfers under loss, peer death
#   fabric        the fabric emulator's own checks
#   lint          cppcheck and clang-tidy on the C sources (tests/lint/static.sh),
#                 layering and function length (tests/lint/layers.sh)
#
# Usage: tests/run-all.sh [GROUP...]   (default: all groups)
# Exit status 0 only if every test passed; a summary is printed at the end.
# Afterwards no network namespace created by the suite is left behind.
set -uo pipefail
cd "$(dirname "$0")/.."

GROUPS_WANTED=("$@")
[ ${#GROUPS_WANTED[@]} -eq 0 ] && GROUPS_WANTED=(unit bpf integration fabric lint)
RESULTS=()
FAILED=0

want() {
	local g
	for g in "${GROUPS_WANTED[@]}"; do [ "$g" = "$1" ] && return 0; done
	return 1
}

run() {
	local name=$1 start rc
	shift
	printf '\n=== %s\n' "$name"
	start=$(date +%s)
	"$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		RESULTS+=("PASS  $name ($(($(date +%s) - start)) s)")
	else
		RESULTS+=("FAIL  $name (exit $rc)")
		FAILED=$((FAILED + 1))
	fi
}

ns_before=$(ip netns list 2>/dev/null | awk '{print $1}' | sort)

if want unit; then
	for t in build/tests/test_*; do
		[ -x "$t" ] && run "unit: ${t##*/}" "$t"
	done
	for t in tests/lib/xrtest/test_*.py; do
		run "unit: ${t##*/}" python3 "$t"
	done
fi
if want lint; then
	run "lint: cppcheck + clang-tidy" bash tests/lint/static.sh
	run "lint: layers" bash tests/lint/layers.sh
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "not root: skipping the BPF, integration and fabric tests" >&2
else
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	if want bpf; then
		for t in build/tests/bpf_*; do
			[ -x "$t" ] && run "bpf: ${t##*/}" "$t"
		done
	fi
	if want integration; then
		for t in tests/integration/test_*.sh; do
			run "integration: ${t##*/}" bash "$t"
		done
	fi
	if want fabric; then
		run "fabric: test_fabric.sh" bash tests/fabric/test_fabric.sh
	fi
fi

ns_after=$(ip netns list 2>/dev/null | awk '{print $1}' | sort)
left=$(comm -13 <(echo "$ns_before") <(echo "$ns_after") | tr '\n' ' ')
if [ -n "${left// /}" ]; then
	RESULTS+=("FAIL  cleanup: namespaces left behind: $left")
	FAILED=$((FAILED + 1))
fi

printf '\n=== summary\n'
printf '%s\n' "${RESULTS[@]}"
if [ "$FAILED" -ne 0 ]; then
	printf '%d failed\n' "$FAILED"
	exit 1
fi
printf 'all %d passed\n' "${#RESULTS[@]}"
