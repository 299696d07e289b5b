#!/usr/bin/env bash
# test_transfer.sh: reliable WRITE transfers end to end on two network
# namespaces joined through an emulated switch (tests/fabric/fabric.sh pair)
# whose ports drop packets at random, in both directions (data and ACKs).
#
#   - `xroce send` -> `xroce recv` of 1 B, 4 KiB, 1 MiB and 256 MiB at 0%,
#     1% and 10% loss: the receiver checks every byte against the pattern
#     and a hash of the stream; the sender's retransmissions must cover
#     every data packet the switch dropped, and not exceed what the drops
#     (data and ACKs) can explain.
#   - itest_wr: exactly one completion per work request on each side,
#     in order, with the right immediate data and length (0% and 10% loss).
#   - the receiver killed mid-transfer: the sender fails with an error
#     completion within its timeout, no hang; the sender killed: the
#     receiver gives up after its idle time.
#   --mtu M: the same over links of MTU M (9000: jumbo frames, which
#     arrive at XDP in fragments and leave through multi-buffer AF_XDP);
#     the sender must then use packets as large as the MTU allows.
# Usage: tests/integration/test_transfer.sh [--quick] [--mtu M]   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
ITEST=$PWD/build/tests/itest_wr
xr_need_exec "$XROCE" "$XRFABRIC" "$ITEST"
QUICK=0
# Slow machines (vmtest under emulation) stretch the timing: XR_TIME_SCALE.
TS=${XR_TIME_SCALE:-1}
MTU=1500
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	--mtu) MTU=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair --mtu "$MTU"

# switch drops so far: "data ack" (port a0 carries h0 -> h1, b0 the ACKs)
drops() {
	"$XRFABRIC" show --netns "$SW" --json |
		xr_json '"%d %d" % tuple(sum(p["counters"]["drop_loss"] for p in j["ports"] if p["port"] == x) for x in ("a0", "b0"))'
}

# transfer SIZE LOSS: one verified send/recv
transfer() {
	local size=$1 loss=$2 out rc d0 d1
	xr_fab_loss "$loss"
	d0=$(drops)
	nsx "$B" timeout 120 "$XROCE" recv -i eth0 -b 64M --accept-timeout 20000 \
		--idle 10000 --json >"$TMP/recv.json" 2>"$TMP/recv.err" &
	local rpid=$!
	xr_wait_listen "$B"
	rc=0
	out=$(nsx "$A" timeout 120 "$XROCE" send -i eth0 "$BIP" -n "$size" --json \
		2>"$TMP/send.err") || rc=$?
	wait "$rpid" || fail "recv of $size at loss $loss failed: $(cat "$TMP/recv.err")"
	[ "$rc" -eq 0 ] || fail "send of $size at loss $loss failed: $(cat "$TMP/send.err")"
	d1=$(drops)
	python3 "$XR_PY/transfer_check.py" "$out" "$(cat "$TMP/recv.json")" "$size" "$loss" \
		"$d0" "$d1" "$MTU" || fail "transfer $size at loss $loss: bad report"
	pass "transfer $size at $loss loss"
}

echo "== transfers (pattern checked byte by byte at the receiver)"
SIZES="1 4k 1M 256M"
LOSSES="0 0.01 0.1"
[ "$QUICK" -eq 1 ] && SIZES="1 4k 1M" && LOSSES="0 0.1"
for loss in $LOSSES; do
	for size in $SIZES; do
		transfer "$size" "$loss"
	done
done

echo "== one completion per work request"
for loss in 0 0.1; do
	xr_fab_loss "$loss"
	nsx "$B" timeout 60 "$ITEST" server eth0 >"$TMP/srv.out" 2>&1 &
	spid=$!
	xr_wait_listen "$B" 4795
	nsx "$A" timeout 60 "$ITEST" client eth0 "$BIP" >"$TMP/cli.out" 2>&1 ||
		fail "itest_wr client at loss $loss: $(cat "$TMP/cli.out")"
	wait "$spid" || fail "itest_wr server at loss $loss: $(cat "$TMP/srv.out")"
	pass "completions at $loss loss: $(tail -1 "$TMP/cli.out") / $(tail -1 "$TMP/srv.out")"
done
xr_fab_loss 0

echo "== peer killed mid-transfer"
# nsenter execs the program, so $! is the program itself (nsx would leave a
# subshell in between, and the kill would miss).
nsenter --net="/var/run/netns/$B" "$XROCE" recv -i eth0 -b 64M \
	--accept-timeout 20000 >"$TMP/recv0.out" 2>&1 &
rpid=$!
xr_wait_listen "$B"
start=$(date +%s%N)
nsx "$A" timeout $((60 * TS)) "$XROCE" send -i eth0 "$BIP" -n 4G -t $((1000 * TS)) >"$TMP/send.out" 2>&1 &
spid=$!
xr_wait_conn "$B"
kill -9 "$rpid" 2>/dev/null ||
	fail "the receiver ended before it was killed: $(cat "$TMP/recv0.out") / sender: $(cat "$TMP/send.out")"
wait "$rpid" 2>/dev/null || true
rc=0
wait "$spid" || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "sender did not fail cleanly (rc $rc): $(cat "$TMP/send.out")"
# Data outstanding: an error completion ("transport retry counter
# exceeded"); all acknowledged and waiting for a credit: xroce send's own
# timeout ("nothing from the receiver").
grep -q "retry\|failed\|nothing from the receiver" "$TMP/send.out" ||
	fail "no error reported: $(cat "$TMP/send.out")"
pass "receiver killed: sender failed in ${ms} ms: $(tail -1 "$TMP/send.out")"

# A small buffer: the receiver sees a completion per 1 MiB chunk, so its
# 1 s idle time measures the sender's silence, not how long a loaded
# machine takes to write one 32 MiB half of a 64 MiB buffer.
nsx "$B" timeout $((60 * TS)) "$XROCE" recv -i eth0 -b 2M --accept-timeout 20000 --idle $((1000 * TS)) \
	>"$TMP/recv.out" 2>&1 &
rpid=$!
xr_wait_listen "$B"
nsenter --net="/var/run/netns/$A" "$XROCE" send -i eth0 "$BIP" -n 4G \
	>/dev/null 2>&1 &
spid=$!
xr_wait_conn "$B"
kill -9 "$spid"
wait "$spid" 2>/dev/null || true
rc=0
wait "$rpid" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "receiver did not give up cleanly (rc $rc)"
pass "sender killed: receiver gave up: $(grep -m1 "within" "$TMP/recv.out")"

xr_passed test_transfer
