#!/usr/bin/env bash
# test_verbs.sh: two-sided verbs, READ, streams and completion statuses end
# to end (build/tests/itest_verbs, see its header for the phases) on two
# namespaces joined through the emulated switch (tests/fabric/fabric.sh
# pair), loss-free and at 10% random loss in both directions (data, ACKs
# and control messages).  Under loss, the packets of the SENDs are sprayed
# over 8 paths and lost ones are resent on others: phase A is the
# "out-of-order SEND arrival across paths" test, B "READ under loss",
# C "stream independence under loss".
#
# After every run both hosts' XDP programs must hold no state of the two
# processes any more (connections, regions, domains, posted receives, open
# READ windows), and the switch and XDP counters must show that the loss
# and the refusals (NAKs) really happened.
#
# Usage: tests/integration/test_verbs.sh [--runs N] [--loss "0 0.1"]   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
ITEST=$PWD/build/tests/itest_verbs
xr_need_exec "$XROCE" "$XRFABRIC" "$ITEST"
xr_need_cmd bpftool
RUNS=1
LOSSES="0 0.1"
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--loss) LOSSES=$2; shift 2 ;;
	--quick) shift ;;
	*) xr_die "usage: $0 [--runs N] [--loss \"0 0.1\"]" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]{0,2}$ ]] || xr_die "--runs: 1..999"
TS=${XR_TIME_SCALE:-1}
PORT=4797

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair

# no_leftovers NS LABEL: nothing of the finished processes stays in NS's maps
no_leftovers() {
	local s
	s=$(xr_xdp_state "$1")
	xr_json 'not [n for n in ("xr_rq", "xr_reads", "xr_conns", "xr_mrs", "xr_domains") if j["entries"].get(n, 1)]' <<<"$s" |
		grep -qx True || fail "$2: state left in the XDP maps after both processes closed: $s"
}

stat_of() { xr_json 'j["stats"][a[0]]' "$2" <<<"$1"; }

echo "== itest_verbs: SEND/RECV, READ, streams, RNR, remote and local errors, flush"
for loss in $LOSSES; do
	for run in $(seq 1 "$RUNS"); do
		xr_fab_loss "$loss"
		d0=$(xr_fab_counter drop_loss)
		sa=$(xr_xdp_state "$A")
		sb=$(xr_xdp_state "$B")
		nsx "$B" timeout $((300 * TS)) "$ITEST" server eth0 >"$TMP/srv.out" 2>&1 &
		spid=$!
		xr_wait_listen "$B" "$PORT"
		rc=0
		# Phase C requires stream 2 to overtake stream 1 at any loss: the
		# library cuts packets from the streams in turns.
		nsx "$A" env XR_VERBS_STREAM_OVERTAKE=1 timeout $((300 * TS)) \
			"$ITEST" client eth0 "$BIP" >"$TMP/cli.out" 2>&1 || rc=$?
		src=0
		wait "$spid" || src=$?
		if [ "$rc" -ne 0 ] || [ "$src" -ne 0 ]; then
			printf -- '--- client (rc %s)\n%s\n--- server (rc %s)\n%s\n' "$rc" \
				"$(cat "$TMP/cli.out")" "$src" "$(cat "$TMP/srv.out")" >&2
			fail "itest_verbs at loss $loss (run $run)"
		fi
		grep -q "^client: all phases passed" "$TMP/cli.out" || fail "client did not finish: $(cat "$TMP/cli.out")"
		grep -q "^server: all phases passed" "$TMP/srv.out" || fail "server did not finish: $(cat "$TMP/srv.out")"
		d1=$(xr_fab_counter drop_loss)
		xr_fab_loss 0
		# The XDP side of the story: refusals were sent by the server's
		# program (RNR in D/E, keys/rights/bounds/length in F) and seen
		# by the client's; at loss, the switch really dropped packets.
		sa2=$(xr_xdp_state "$A")
		sb2=$(xr_xdp_state "$B")
		naks=$(($(stat_of "$sb2" tx_nak) - $(stat_of "$sb" tx_nak)))
		rxnaks=$(($(stat_of "$sa2" rx_nak) - $(stat_of "$sa" rx_nak)))
		nkey=$(($(stat_of "$sb2" drop_key) - $(stat_of "$sb" drop_key)))
		nacc=$(($(stat_of "$sb2" drop_access) - $(stat_of "$sb" drop_access)))
		nbnd=$(($(stat_of "$sb2" drop_bounds) - $(stat_of "$sb" drop_bounds)))
		if [ "$naks" -lt 8 ] || [ "$rxnaks" -lt 1 ]; then
			fail "loss $loss: the server's XDP sent $naks NAKs, the client's saw $rxnaks"
		fi
		if [ "$nkey" -lt 1 ] || [ "$nacc" -lt 2 ] || [ "$nbnd" -lt 1 ]; then
			fail "loss $loss: refusals counted: key $nkey, access $nacc, bounds $nbnd"
		fi
		if [ "$loss" != 0 ]; then
			[ $((d1 - d0)) -gt 100 ] || fail "loss $loss: the switch dropped only $((d1 - d0)) packets"
		fi
		no_leftovers "$A" "client host"
		no_leftovers "$B" "server host"
		sed 's/^/     /' "$TMP/cli.out" | grep -v "^     client: all\|lib: \|round [0-9]" || true
		sed 's/^/     /' "$TMP/srv.out" | grep -E "^     server (C|G):" | grep -v "round [0-9]" || true
		pass "itest_verbs at $loss loss (run $run): switch dropped $((d1 - d0)), server XDP sent $naks NAKs, maps clean"
	done
done

echo "== a process killed with receives posted leaves nothing behind"
# The perf server keeps a QP waiting with receives posted.  Killed, its
# domain stays until the next process opens the device and collects it:
# then its connections, receives and READ windows must all be gone (a
# receive left behind would be used by the next connection given the id).
nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 --port 4799 \
	>"$TMP/perf.out" 2>&1 &
ppid=$!
nrq=0
for _ in $(seq 1 100); do
	nrq=$(xr_xdp_state "$B" | xr_json 'j["entries"]["xr_rq"]')
	[ "$nrq" -gt 0 ] && break
	sleep 0.05
done
[ "$nrq" -gt 0 ] || fail "the perf server posted no receives: $(cat "$TMP/perf.out")"
kill -9 "$ppid"
wait "$ppid" 2>/dev/null || true
nsx "$B" "$XROCE" recv -i eth0 -b 1M --accept-timeout 100 >"$TMP/gc.out" 2>&1 || true
grep -q "left behind by a dead process" "$TMP/gc.out" ||
	fail "the next process did not collect the dead one's domain: $(cat "$TMP/gc.out")"
no_leftovers "$B" "after a killed process"
pass "killed with $nrq receives posted: the next process removed its domain, connections, receives and READ windows"

xr_passed test_verbs
