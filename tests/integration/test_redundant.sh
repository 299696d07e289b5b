#!/usr/bin/env bash
# test_redundant.sh: redundant copies of small messages keep latency-bound
# traffic's tail at a loss-free fabric's under loss.
#
# On a pair fabric whose switch drops 2% of packets in both directions, a
# WRITE_WITH_IMM ping-pong (`xroce perf client --mode lat`, 8 bytes):
#   - with redundant copies (the default) the p99 round trip stays below the
#     retransmission timer's floor (1 ms): a lone packet lost on one path
#     arrived on the other, and the copies were really sent (the sender's
#     XDP saw duplicates acknowledged: rx_dup moved at the server);
#   - with --no-redundant the same run's p99 is at least that floor: a lost
#     lone packet leaves no gap for SACK to see, only the timer repairs it
#     (so the first check proves the copies, not luck).
# Usage: tests/integration/test_redundant.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root
TS=${XR_TIME_SCALE:-1}

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair
xr_fab_loss 0.02

# lat [perf options...]: p99 round trip in us of 5000 ping-pongs
lat() {
	nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	nsx "$A" timeout $((120 * TS)) "$XROCE" perf client -i eth0 "$BIP" -m lat -n 5000 \
		--json "$@" 2>"$TMP/lat.err" | tail -1 >"$TMP/lat.json" ||
		fail "perf client $*: $(cat "$TMP/lat.err")"
	wait "$spid" || true
	xr_json 'j["rtt_p99_us"]' <"$TMP/lat.json"
}

echo "== 8-byte WRITE_WITH_IMM ping-pong at 2% loss both ways"
d0=$(xr_counter "$B" rx_dup)
p_red=$(lat)
d1=$(xr_counter "$B" rx_dup)
p_none=$(lat --no-redundant)
echo "    p99: ${p_red} us with redundant copies, ${p_none} us without; server saw $((d1 - d0)) duplicates"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 1000 * int(sys.argv[2]) else 1)' "$p_red" "$TS" ||
	fail "p99 ${p_red} us with redundant copies: a single loss still costs a timeout"
pass "with redundant copies p99 ${p_red} us < 1 ms (the timer's floor)"
[ $((d1 - d0)) -gt 1000 ] || fail "only $((d1 - d0)) duplicates reached the server: no copies sent?"
pass "copies were sent: $((d1 - d0)) duplicates acknowledged by the server's XDP"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 900 else 1)' "$p_none" ||
	fail "p99 ${p_none} us without copies: the loss did not reach the tail, the check proves nothing"
pass "without them p99 ${p_none} us >= the timer's floor: the copies are what keeps the tail"
xr_passed test_redundant
