#!/usr/bin/env bash
# router_lat.sh: round-trip latency through a plain Linux router namespace
# (fabric.sh's `router`: kernel IP forwarding, no project fabric on the
# way), xroce beside UDP and TCP ping-pong, in one run, as the median of
# interleaved repeats.
#
#   xroce       `xroce perf client --mode lat`: WRITE_WITH_IMM of SIZE, echoed
#               by the server; both ends busy-poll their completion queues
#   xroce-wait  the same with --wait: both ends sleep in xroce_wait_cq
#   base, base-wait  the same with another build's xroce (--base BIN; its own
#               XDP program attached for its runs): before/after in one run
#   udp, tcp    sockperf ping-pong (tcp: TCP_NODELAY); messages of at least
#               14 bytes, sockperf's header
# Each repeat runs every transport and size once, in turn, so that the
# load of the shared host falls on all of them alike.  Printed per size and
# transport: the median over the repeats of each run's min / median / p99 /
# p99.9, in microseconds, and xroce's median and p99 over UDP's.  With
# --breakdown, one more xroce run per size prints `xroce perf --breakdown`.
#
# Usage: tests/bench/router_lat.sh [--sizes "64 4096"] [--iters N]
#                                  [--repeat R] [--base BIN] [--breakdown]
#                                  [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root
SIZES="64 4096"
ITERS=20000
REPEAT=3
BASE=
BREAKDOWN=0
JSON=
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) SIZES=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--base) BASE=$(realpath "$2"); shift 2 ;;
	--breakdown) BREAKDOWN=1; shift ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
xr_need_cmd sockperf
[ -z "$BASE" ] || xr_need_exec "$BASE"
xr_bpffs
PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_private_bins
xr_fab_up router
# shellcheck disable=SC2154 # FAB_* from the fabric's description
A=$FAB_h0_NS B=$FAB_h1_NS BIP=$FAB_h1_IP4_0
ATTACHED=

attach() { # BIN: its XDP program on both hosts (if not there already)
	[ "$ATTACHED" = "$1" ] && return 0
	xr_fab_attach "$1" "$A" "$B"
	ATTACHED=$1
}

xroce_lat() { # BIN SIZE [FLAG...] -> "min p50 p99 p999"
	local bin=$1 size=$2 spid
	shift 2
	attach "$bin"
	nsx "$B" timeout -k 2 300 "$bin" perf server -i eth0 --once >/dev/null 2>&1 &
	spid=$!
	sleep 0.3
	nsx "$A" timeout -k 2 290 "$bin" perf client -i eth0 "$BIP" --mode lat \
		-s "$size" -n "$ITERS" "$@" --json 2>/dev/null | tail -1 >"$TMP/x.json" || true
	wait "$spid" || true
	xr_json '" ".join(str(j[k]) for k in ("rtt_min_us", "rtt_p50_us", "rtt_p99_us", "rtt_p999_us"))' \
		<"$TMP/x.json" 2>/dev/null || echo "nan nan nan nan"
}

sock_lat() { # SIZE udp|tcp -> "min p50 p99 p999"
	local flag='' spid d
	[ "$2" = tcp ] && flag=--tcp
	# nsenter (not nsx) so that $! is sockperf itself and the kill works
	nsenter --net="/var/run/netns/$B" sockperf server -i "$BIP" -p 11111 $flag \
		>/dev/null 2>&1 &
	spid=$!
	sleep 0.3
	# sockperf runs for a time, not a count: ITERS round trips at ~50 us
	d=$(( ITERS / 20000 > 1 ? ITERS / 20000 : 1 ))
	nsx "$A" timeout -k 2 120 sockperf ping-pong -i "$BIP" -p 11111 $flag \
		-m "$(( $1 < 14 ? 14 : $1 ))" -t "$d" --full-rtt >"$TMP/s.out" 2>&1 || true
	kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
	python3 "$XR_BENCHPY/sockperf_rtt.py" "$TMP/s.out" | cut -d' ' -f1-4
}

row() { # REPEAT SIZE TRANSPORT FIGURES...
	echo "$*" >>"$TMP/rows"
}

: >"$TMP/rows"
for ((r = 0; r < REPEAT; r++)); do
	for size in $SIZES; do
		row "$r" "$size" xroce "$(xroce_lat "$XROCE" "$size")"
		row "$r" "$size" xroce-wait "$(xroce_lat "$XROCE" "$size" --wait)"
		if [ -n "$BASE" ]; then
			row "$r" "$size" base "$(xroce_lat "$BASE" "$size")"
			row "$r" "$size" base-wait "$(xroce_lat "$BASE" "$size" --wait)"
		fi
		row "$r" "$size" udp "$(sock_lat "$size" udp)"
		row "$r" "$size" tcp "$(sock_lat "$size" tcp)"
	done
done
python3 "$XR_BENCHPY/router_table.py" "$TMP/rows" "${JSON:-}"
if [ "$BREAKDOWN" = 1 ]; then
	for size in $SIZES; do
		echo
		echo "\$ xroce perf client --mode lat -s $size -n $ITERS --breakdown (router)"
		attach "$XROCE"
		nsx "$B" timeout -k 2 300 "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
		spid=$!
		sleep 0.3
		nsx "$A" timeout -k 2 290 "$XROCE" perf client -i eth0 "$BIP" --mode lat \
			-s "$size" -n "$ITERS" --breakdown || true
		wait "$spid" || true
	done
fi
