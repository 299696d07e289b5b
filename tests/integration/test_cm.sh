#!/usr/bin/env bash
# test_cm.sh: connection set-up without blocking, end to end
# (build/tests/itest_cm, see its header for the phases): a rejected
# request with private data both ways, two connects at once accepted in
# the reverse order, a request held unanswered while its CONNECT is resent
# (no duplicate), a connect that times out, a port no longer listened on;
# before them a plain UDP socket (tests/lib/xrtest/cm_cookie.py) sends
# garbage and a CONNECT without a cookie to the listening port: only a
# COOKIE comes back, and only the CONNECT carrying it becomes a request.
# Loss-free and at 20% random loss in both directions (CONNECTs, COOKIEs,
# ACCEPTs and REJECTs are lost and resent), then loss-free with a cluster
# key on both sides (signed set-up through the calls without blocking; the
# unsigned CONNECT gets no answer at all).
# Usage: tests/integration/test_cm.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
ITEST=$PWD/build/tests/itest_cm
xr_need_exec "$XROCE" "$XRFABRIC" "$ITEST"
CTRL=4801
LPORT=4802

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair
# shellcheck disable=SC2154 # from the fabric's env file
AIP=$FAB_h0_IP4_0

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/key"
for round in 0 0.2 key; do
	loss=${round/key/0}
	if [ "$round" = key ]; then
		export XROCE_KEY_FILE=$TMP/key
		keyed=--keyed
	else
		unset XROCE_KEY_FILE
		keyed=
	fi
	xr_fab_loss "$loss"
	d0=$(xr_fab_counter drop_loss)
	nsx "$B" timeout 120 "$ITEST" server eth0 "$CTRL" "$LPORT" >"$TMP/server.out" 2>&1 &
	spid=$!
	xr_cleanup_push "kill $spid 2>/dev/null; wait $spid 2>/dev/null"
	xr_listening "$B" "$LPORT" || true # if not, the client says why
	rc=0
	# shellcheck disable=SC2086 # $keyed: empty or one word
	nsx "$A" timeout 60 python3 tests/lib/xrtest/cm_cookie.py $keyed "$BIP" "$LPORT" "$AIP" \
		>"$TMP/raw.out" 2>&1 || rc=$?
	sed 's/^/    /' "$TMP/raw.out"
	[ "$rc" -eq 0 ] || xr_die "the listening port and a plain UDP socket ($round): see above"
	nsx "$A" timeout 120 "$ITEST" client eth0 "$BIP" "$LPORT" >"$TMP/client.out" 2>&1 || rc=$?
	wait "$spid" || rc=$((rc ? rc : 1))
	sed 's/^/    /' "$TMP/client.out" "$TMP/server.out" | grep -v "lib: " || true
	[ "$rc" -eq 0 ] || xr_die "itest_cm ($round) failed"
	grep -q "^client: all phases passed" "$TMP/client.out" || xr_die "client did not finish"
	grep -q "^server: all phases passed" "$TMP/server.out" || xr_die "server did not finish"
	d1=$(xr_fab_counter drop_loss)
	if [ "$loss" != 0 ] && [ $((d1 - d0)) -lt 1 ]; then
		xr_die "loss $loss: the switch dropped nothing"
	fi
	if [ "$round" = key ]; then
		echo "  ok   itest_cm with a cluster key"
	else
		echo "  ok   itest_cm at $loss loss (switch dropped $((d1 - d0)))"
	fi
done
xr_fab_loss 0
echo "test_cm: passed"
