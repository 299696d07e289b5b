#!/usr/bin/env bash
# test_thread.sh: the device's progress thread and lock, end to end
# (build/tests/itest_thread): a server that makes no library call after
# accepting still answers READs, loss-free and at 1% random loss, while the
# client's two application threads WRITE and READ on one device at once;
# and, as the control, the same server without the thread leaves the READs
# unanswered (they fail with a retry error, the WRITEs still land).
# Usage: tests/integration/test_thread.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
ITEST=$PWD/build/tests/itest_thread
for f in "$XROCE" "$XRFABRIC" "$ITEST"; do
	[ -x "$f" ] || xr_die "$f missing: run make first"
done
PORT=4799

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091 # written by fabric.sh up
. "$TMP/env"
# shellcheck disable=SC2154 # FAB_* come from the env file
{
	A=$FAB_h0_NS
	B=$FAB_h1_NS
	SW=${FAB_h0_PORT_0%%:*}
	BIP=$FAB_h1_IP4_0
}
nsx "$A" "$XROCE" attach --force eth0 >/dev/null
nsx "$B" "$XROCE" attach --force eth0 >/dev/null

set_loss() {
	"$XRFABRIC" set --netns "$SW" --port a0 "loss=$1" >/dev/null
	"$XRFABRIC" set --netns "$SW" --port b0 "loss=$1" >/dev/null
}

# run LOSS SERVER_FLAG CLIENT_FLAG
run() {
	local done=$TMP/done.$1$2 spid rc=0
	set_loss "$1"
	rm -f "$done"
	nsx "$B" "$ITEST" server eth0 "$PORT" "$done" $2 >"$TMP/server.out" 2>&1 &
	spid=$!
	xr_cleanup_push "kill $spid 2>/dev/null; wait $spid 2>/dev/null"
	for _ in $(seq 1 100); do
		nsx "$B" ss -Hlun "sport = :$PORT" | grep -q . && break
		sleep 0.05
	done
	nsx "$A" "$ITEST" client eth0 "$BIP" "$PORT" $3 >"$TMP/client.out" 2>&1 || rc=$?
	touch "$done"
	wait "$spid" || rc=$((rc ? rc : 1))
	sed 's/^/    /' "$TMP/client.out" "$TMP/server.out"
	[ "$rc" -eq 0 ] || xr_die "loss $1, server $2: itest_thread failed"
}

echo "== a server that sleeps answers READs through its progress thread"
run 0 "" ""
echo "  ok   loss-free"
run 0.01 "" ""
echo "  ok   1% loss"
echo "== control: without the thread, nobody answers"
run 0 --no-thread --expect-read-failure
echo "  ok   READs failed, WRITEs landed"
