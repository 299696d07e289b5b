#!/usr/bin/env bash
# test_evqwake.sh: event records wake only a device that sleeps on its ring
# (docs/PROTOCOL.md 15, user/engine/evq_wake.c).
#
#   - busy-polling ends (`xroce perf --mode lat`) take their records without
#     an interrupt: the host's irq_work interrupts ("IWI" in
#     /proc/interrupts, one per waking ring-buffer commit) grow by far fewer
#     than the records of the run (about four per round trip: a RECV record
#     at each receiver, an ACK record at each sender; a build that wakes on
#     every record takes one interrupt for most of them);
#   - sleeping ends (`--wait`) are still woken by every record they wait
#     for: a lost wake-up would leave a round trip waiting for the next
#     timer (milliseconds), so the median round trip must stay below 1 ms;
#   - a sleeping receiver of plain WRITEs is not woken for each message
#     (held records, docs/PROTOCOL.md 15): `xroce perf --mode bw`, 64 KiB
#     WRITEs for 2 s, takes far fewer irq_work interrupts than messages
#     (a build that woke the receiver per message took about one each).
# Usage: tests/integration/test_evqwake.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair
N=3000

iwi() {
	awk '$1 == "IWI:" { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s }' \
		/proc/interrupts
}

# lat_run OUT ARGS...: a 64-byte ping-pong of N round trips from A to B,
# its JSON summary into OUT.
lat_run() {
	local out=$1 spid
	shift
	nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 --once "$@" \
		>"$TMP/server.out" 2>&1 &
	spid=$!
	sleep 0.3
	nsx "$A" "$XROCE" perf client -i eth0 "$BIP" --mode lat -s 64 -n "$N" --warmup-ms 0 --json "$@" |
		tail -1 >"$out"
	wait "$spid" || true
}

echo "== busy-polling ends: no interrupt per record"
i0=$(iwi)
lat_run "$TMP/busy.json"
i1=$(iwi)
med=$(xr_json 'j["rtt_p50_us"]' <"$TMP/busy.json")
if [ -z "$i0" ]; then
	pass "busy-polling: median ${med} us (no IWI count in /proc/interrupts to check)"
else
	echo "    $N round trips, median ${med} us, irq_work interrupts on the host: $((i1 - i0))"
	[ $((i1 - i0)) -lt "$N" ] ||
		fail "$((i1 - i0)) irq_work interrupts for $N busy-polled round trips (~$((4 * N)) records)"
	pass "busy-polling: $((i1 - i0)) irq_work interrupts for ~$((4 * N)) records"
fi

echo "== sleeping ends: every record they wait for wakes them"
lat_run "$TMP/wait.json" --wait
med=$(xr_json 'j["rtt_p50_us"]' <"$TMP/wait.json")
echo "    $N round trips sleeping, median ${med} us"
python3 -c "import sys; sys.exit(0 if float('$med') < 1000 else 1)" ||
	fail "--wait median round trip ${med} us: wake-ups lost (the next timer woke the ends)"
pass "--wait: median round trip ${med} us (< 1000)"

echo "== a sleeping WRITE receiver: no wake-up per message"
nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 --once >"$TMP/server.out" 2>&1 &
spid=$!
sleep 0.3
i0=$(iwi)
nsx "$A" "$XROCE" perf client -i eth0 "$BIP" --mode bw -s 65536 -d 2 --json |
	tail -1 >"$TMP/bw.json"
i1=$(iwi)
wait "$spid" || true
msgs=$(xr_json 'j["bytes"] // 65536' <"$TMP/bw.json")
[ "$msgs" -gt 1000 ] || fail "only $msgs WRITEs in 2 s: $(cat "$TMP/bw.json")"
if [ -z "$i0" ]; then
	pass "bulk WRITEs: $msgs messages (no IWI count in /proc/interrupts to check)"
else
	echo "    $msgs WRITEs of 64 KiB, irq_work interrupts on the host: $((i1 - i0))"
	[ $((i1 - i0)) -lt $((msgs / 10)) ] ||
		fail "$((i1 - i0)) irq_work interrupts for $msgs WRITEs to a sleeping receiver"
	pass "bulk WRITEs: $((i1 - i0)) irq_work interrupts for $msgs messages"
fi

xr_passed test_evqwake
