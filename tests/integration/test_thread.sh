#!/usr/bin/env bash
# test_thread.sh: the device's progress thread and lock, end to end
# (build/tests/itest_thread): a server that makes no library call after
# accepting still answers READs, loss-free and at 1% random loss, while the
# client's two application threads WRITE and READ on one device at once;
# and, as the control, the same server without the thread leaves the READs
# unanswered (they fail with a retry error, the WRITEs still land); and a
# client without a thread that stalls for 2.5 s keeps its QPs (keep-alive
# probes go out before the peer is judged silent), while idle QPs whose
# peer is killed fail by keep-alive.
# Usage: tests/integration/test_thread.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
ITEST=$PWD/build/tests/itest_thread
xr_need_exec "$XROCE" "$XRFABRIC" "$ITEST"
PORT=4799

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair

# server DONEFILE [FLAG]: the server in B, listening on return; SPID is
# the shell that runs it there.  Cleanup (and kill_server) end the server
# itself, which its DONEFILE names, not that shell.
server() {
	nsx "$B" "$ITEST" server eth0 "$PORT" "$@" >"$TMP/server.out" 2>&1 &
	SPID=$!
	xr_cleanup_push "pkill -9 -f '$1' 2>/dev/null; wait $SPID 2>/dev/null"
	xr_listening "$B" "$PORT" || true # if not, the client says why
}
kill_server() { pkill -9 -f "itest_thread server eth0 $PORT $1" || true; }

# run LOSS SERVER_FLAG CLIENT_FLAG
run() {
	local done=$TMP/done.$1$2 rc=0
	xr_fab_loss "$1"
	rm -f "$done"
	server "$done" $2
	nsx "$A" "$ITEST" client eth0 "$BIP" "$PORT" $3 >"$TMP/client.out" 2>&1 || rc=$?
	touch "$done"
	wait "$SPID" || rc=$((rc ? rc : 1))
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
echo "== a client whose own rounds stop for 2.5 s (1 s timeout) probes its peer, not fails it"
run 0.01 "" --stall
echo "  ok   both QPs alive, then the WRITEs landed (1% loss)"

echo "== idle QPs whose peer is killed fail by keep-alive (1 s timeout)"
xr_fab_loss 0
server "$TMP/never"
nsx "$A" "$ITEST" client eth0 "$BIP" "$PORT" --peer-dies >"$TMP/client.out" 2>&1 &
cpid=$!
xr_cleanup_push "kill $cpid 2>/dev/null; wait $cpid 2>/dev/null"
for _ in $(seq 1 200); do
	grep -q "client: connected" "$TMP/client.out" && break
	sleep 0.05
done
kill_server "$TMP/never"
rc=0
wait "$cpid" || rc=$?
sed 's/^/    /' "$TMP/client.out"
[ "$rc" -eq 0 ] || xr_die "idle QPs of a killed peer: itest_thread failed"
echo "  ok   failed, without any work posted"
