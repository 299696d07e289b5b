#!/usr/bin/env bash
# test_txrun.sh: the test-run transmit engine (XROCE_TX_ENGINE=test_run:
# frames built by the XDP program from descriptors, sent by XDP_TX out of
# BPF_PROG_TEST_RUN with live frames; include/contract/txring.h) end to end.
#
#   - the default engine on veth is this one (AF_XDP would be copy mode), so
#     the rest of the suite runs on it; test_transfer.sh --quick here runs
#     every process on AF_XDP instead (XROCE_TX_ENGINE=af_xdp), so both
#     engines carry verified transfers at 0 and 10% loss, completions and
#     peer deaths (and test_jumbo.sh's MTU 9000 is AF_XDP's: frames larger
#     than this engine builds);
#   - the engine is really what sent: on a pair fabric a perf run moves the
#     sender's tx_built counter by about as many frames as it sent, with no
#     refused trigger (drop_txr) and nothing left in xr_txq afterwards;
#   - misuse is refused with a message: XROCE_TX_ENGINE=bogus, and the engine
#     over a program attached in generic mode (its test runs would wait for
#     an RCU grace period each).
# Usage: tests/integration/test_txrun.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root

echo "== test_transfer.sh --quick on AF_XDP (the default here is the test-run engine)"
XROCE_TX_ENGINE=af_xdp bash tests/integration/test_transfer.sh --quick |
	sed 's/^/    /'

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair

# engine_run MODE PERF_CLIENT_ARGS...: a perf run from A to B on the default
# engine, judged by txrun_check.py MODE from A's tx_built and drop_txr.
engine_run() {
	local mode=$1 b0 d0 b1 d1 out spid
	shift
	b0=$(xr_counter "$A" tx_built)
	d0=$(xr_counter "$A" drop_txr)
	nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
	spid=$!
	sleep 0.3
	out=$(nsx "$A" env -u XROCE_TX_ENGINE "$XROCE" perf client -i eth0 "$BIP" "$@" --json | tail -1)
	wait "$spid" || true
	b1=$(xr_counter "$A" tx_built)
	d1=$(xr_counter "$A" drop_txr)
	python3 "$XR_PY/txrun_check.py" "$mode" "$out" "$b0" "$b1" "$d0" "$d1"
}

echo "== the engine is what sends"
engine_run bw -d 1 || fail "the sender's frames were not built by XDP"
pass "perf client, default engine: test_run on veth, bulk packets built by XDP (tx_built), none refused"

# A ping-pong sends one frame at a time: those kicks go by the plane's
# packet socket, which costs less per frame than a test run.
engine_run lat --mode lat -s 64 -n 2000 --warmup-ms 0 || fail "single frames were not sent by the packet socket"
pass "perf client --mode lat, default engine: single frames sent by the packet socket, not test runs"
# The ring map of A's own program: other programs on the host have theirs.
left=$(xr_xdp_state "$A" | xr_json 'j["entries"].get("xr_txq", "missing")')
[ "$left" = 0 ] || fail "xr_txq after the run: $left"
pass "no transmit ring left in xr_txq"

echo "== misuse"
rc=0
nsx "$A" env XROCE_TX_ENGINE=bogus "$XROCE" send -i eth0 "$BIP" -n 4k \
	>"$TMP/bogus.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "XROCE_TX_ENGINE=bogus" "$TMP/bogus.out" ||
	fail "XROCE_TX_ENGINE=bogus: rc $rc: $(cat "$TMP/bogus.out")"
pass "XROCE_TX_ENGINE=bogus refused: $(grep -m1 bogus "$TMP/bogus.out")"
nsx "$A" "$XROCE" detach eth0 >/dev/null
nsx "$A" "$XROCE" attach --mode generic eth0 >/dev/null
rc=0
nsx "$A" env XROCE_TX_ENGINE=test_run "$XROCE" send -i eth0 "$BIP" -n 4k \
	>"$TMP/generic.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "native mode" "$TMP/generic.out" ||
	fail "engine over generic mode: rc $rc: $(cat "$TMP/generic.out")"
pass "the engine over a generic-mode program refused: $(grep -m1 "native mode" "$TMP/generic.out")"

xr_passed test_txrun
