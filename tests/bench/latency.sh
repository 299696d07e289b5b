#!/usr/bin/env bash
# latency.sh: small-message round-trip latency, xroce beside UDP and TCP
# socket ping-pong (sockperf, TCP_NODELAY), on the same fabric in one run,
# loss-free and at 1% random loss (both directions).
#
#   xroce  `xroce perf client --mode lat`: WRITE_WITH_IMM of SIZE, the
#          server writes the same back on its completion; both ends
#          busy-poll their completion queues (as ib_write_lat does)
#   xroce-wait  the same with --wait: both ends sleep in xroce_wait_cq
#          until the completion's event, as the socket baselines sleep in
#          recv
#   UDP    sockperf ping-pong (lost messages are not retried: they are
#          reported as dropped and do not count in its percentiles)
#   TCP    sockperf ping-pong --tcp (Nagle off)
#   (sockperf's messages are at least 14 bytes: its own header; smaller
#   sizes are sent as 14 bytes on the sockets, as their floor.)
# Printed: round-trip min / median / p99 / p99.9 in microseconds.
#
# Usage: tests/bench/latency.sh [--sizes "8 64 4096"] [--losses "0 0.01"]
#                               [--iters N] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root
SIZES="8 64 4096"
LOSSES="0 0.01"
ITERS=20000
JSON=
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) SIZES=$2; shift 2 ;;
	--losses) LOSSES=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
xr_need_cmd sockperf
xr_bpffs
PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair

xroce_lat() { # SIZE [FLAG] -> "min p50 p99 p999"
	nsx "$B" timeout -k 2 300 "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	nsx "$A" timeout -k 2 290 "$XROCE" perf client -i eth0 "$BIP" --mode lat \
		-s "$1" -n "$ITERS" ${2:-} \
		--json 2>/dev/null | tail -1 >"$TMP/x.json" || true
	wait "$spid" || true
	xr_json '" ".join(str(j[k]) for k in ("rtt_min_us", "rtt_p50_us", "rtt_p99_us", "rtt_p999_us"))' \
		<"$TMP/x.json" 2>/dev/null || echo "nan nan nan nan"
}

sock_lat() { # SIZE udp|tcp -> "min p50 p99 p999 dropped"
	local flag=
	[ "$2" = tcp ] && flag=--tcp
	# nsenter (not nsx) so that $! is sockperf itself and the kill works
	nsenter --net="/var/run/netns/$B" sockperf server -i "$BIP" -p 11111 $flag \
		>/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	# sockperf runs for a time, not a count: about ITERS round trips at
	# ~50 us each, at least 2 s.
	nsx "$A" timeout -k 2 120 sockperf ping-pong -i "$BIP" -p 11111 $flag -m "$(( $1 < 14 ? 14 : $1 ))" \
		-t "$(( ITERS / 20000 > 2 ? ITERS / 20000 : 2 ))" --full-rtt \
		>"$TMP/s.out" 2>&1 || true
	kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
	python3 "$XR_BENCHPY/sockperf_rtt.py" "$TMP/s.out"
}

: >"$TMP/rows"
for loss in $LOSSES; do
	xr_fab_loss "$loss"
	for size in $SIZES; do
		read -r a b c d < <(xroce_lat "$size") || true
		echo "$loss $size xroce $a $b $c $d 0" >>"$TMP/rows"
		read -r a b c d < <(xroce_lat "$size" --wait) || true
		echo "$loss $size xroce-wait $a $b $c $d 0" >>"$TMP/rows"
		read -r a b c d e < <(sock_lat "$size" udp) || true
		echo "$loss $size udp $a $b $c $d $e" >>"$TMP/rows"
		read -r a b c d e < <(sock_lat "$size" tcp) || true
		echo "$loss $size tcp $a $b $c $d $e" >>"$TMP/rows"
	done
done
xr_fab_loss 0
python3 "$XR_BENCHPY/latency_table.py" "$TMP/rows" "${JSON:-}"
