#!/usr/bin/env bash
# test_redundant.sh: a lone lost packet of latency-bound traffic costs no
# retransmission timeout, with redundant copies or without them.
#
# On a pair fabric whose switch drops 2% of packets in both directions, a
# WRITE_WITH_IMM ping-pong (`xroce perf client --mode lat`, 8 bytes, 5000
# round trips):
#   - with redundant copies (the default) the p99 round trip stays below the
#     retransmission timer's floor (1 ms): a lone packet lost on one path
#     arrived on the other, and the copies were really sent (the sender's
#     XDP saw duplicates acknowledged: rx_dup moved at the server);
#   - with --no-redundant the p99 stays below that floor too: a lost lone
#     packet leaves no gap for SACK to see, and the tail-loss probe (a copy
#     of it after 3 srtt, PROTOCOL.md 10.4a) repairs it instead of the
#     timer.  The run must show that losses reached it (at least 20
#     retransmissions or probes, counted by perf), or the check proves
#     nothing;
#   - a 4 KiB ping-pong (three packets a message) is not copied: only
#     one-packet messages are (PROTOCOL.md 10.2a), so its copies are the
#     tail-loss probes alone, fewer than one per message, and its p99 stays
#     below the timer's floor as well.
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

# lat [perf options...]: the JSON line of 5000 ping-pongs
lat() {
	nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	nsx "$A" timeout $((120 * TS)) "$XROCE" perf client -i eth0 "$BIP" -m lat -n 5000 \
		--json "$@" 2>"$TMP/lat.err" | tail -1 >"$TMP/lat.json" ||
		fail "perf client $*: $(cat "$TMP/lat.err")"
	wait "$spid" || true
	cat "$TMP/lat.json"
}
field() { xr_json "j[\"$1\"]" <<<"$2"; }
below_floor() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 1000 * int(sys.argv[2]) else 1)' "$1" "$TS"; }

echo "== 8-byte WRITE_WITH_IMM ping-pong at 2% loss both ways"
d0=$(xr_counter "$B" rx_dup)
j_red=$(lat)
d1=$(xr_counter "$B" rx_dup)
j_none=$(lat --no-redundant)
p_red=$(field rtt_p99_us "$j_red")
p_none=$(field rtt_p99_us "$j_none")
r_none=$(field retx_pkts "$j_none")
t_none=$(field dup_pkts "$j_none")
echo "    p99: ${p_red} us with redundant copies, ${p_none} us without" \
	"(${r_none} retransmissions, ${t_none} tail-loss probes); server saw $((d1 - d0)) duplicates"
below_floor "$p_red" || fail "p99 ${p_red} us with redundant copies: a single loss still costs a timeout"
pass "with redundant copies p99 ${p_red} us < 1 ms (the timer's floor)"
[ $((d1 - d0)) -gt 1000 ] || fail "only $((d1 - d0)) duplicates reached the server: no copies sent?"
pass "copies were sent: $((d1 - d0)) duplicates acknowledged by the server's XDP"
# ~4% of the client's messages lose the packet or its ACK; a loss-free
# run sends a probe or a few (host stalls).
[ $((r_none + t_none)) -ge 20 ] ||
	fail "without copies ${r_none} retransmissions and ${t_none} probes: the loss did not reach the tail, the check proves nothing"
below_floor "$p_none" ||
	fail "p99 ${p_none} us without copies: a lone loss waited for the timer (no tail-loss probe?)"
pass "without them p99 ${p_none} us < 1 ms: ${t_none} tail-loss probes and ${r_none} retransmissions repaired the losses"

echo "== 4 KiB WRITE_WITH_IMM ping-pong at 2% loss both ways, copies allowed"
j_4k=$(lat -s 4096)
p_4k=$(field rtt_p99_us "$j_4k")
t_4k=$(field dup_pkts "$j_4k")
echo "    p99 ${p_4k} us, ${t_4k} copies and probes for 5000 messages of 3 packets"
[ "$t_4k" -lt 5000 ] ||
	fail "${t_4k} copies and probes for 5000 three-packet messages: multi-packet messages were copied"
below_floor "$p_4k" || fail "p99 ${p_4k} us at 4 KiB: a lost packet waited for the timer"
pass "4 KiB messages not copied (${t_4k} probes), p99 ${p_4k} us < 1 ms"
xr_passed test_redundant
