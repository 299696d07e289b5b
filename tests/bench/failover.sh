#!/usr/bin/env bash
# failover.sh: goodput over time in 1 ms bins while one of four paths is
# blackholed mid-run.
#
# Topology: tests/fabric/fabric.sh planes 4 (four parallel planes); one
# connection with 4 paths (one per plane), `xroce perf client --mode bw
# --interval-ms 1` (goodput from packet-level acknowledgements).  At
# --fail-at seconds the switch blackholes plane --plane in both directions.
# Reported: goodput before the failure, the time from the failure until a
# 5 ms moving average is back at 90% of 3/4 of that goodput (the remaining
# paths' share), packets retransmitted, and the timeline (--out FILE, CSV
# t_ms,gbps) for plotting.
#
# Usage: tests/bench/failover.sh [--secs S] [--fail-at S] [--plane N]
#                                [--out FILE] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root
SECS=3
FAIL_AT=1.5
PLANE=2
OUT=
JSON=
while [ $# -gt 0 ]; do
	case $1 in
	--secs) SECS=$2; shift 2 ;;
	--fail-at) FAIL_AT=$2; shift 2 ;;
	--plane) PLANE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
xr_bpffs
PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_up planes 4
A=$FAB_h0_NS
B=$FAB_h1_NS
IFS_A=()
IFS_B=()
for i in 0 1 2 3; do
	va="FAB_h0_IF_$i"; vb="FAB_h1_IF_$i"
	nsx "$A" "$XROCE" attach --force "${!va}" >/dev/null
	nsx "$B" "$XROCE" attach --force "${!vb}" >/dev/null
	IFS_A+=(-i "${!va}")
	IFS_B+=(-i "${!vb}")
done
port_a="FAB_h0_PORT_$PLANE"; port_b="FAB_h1_PORT_$PLANE"
SW=${!port_a%%:*}

nsx "$B" timeout -k 2 $((SECS + 40)) "$XROCE" perf server "${IFS_B[@]}" --once \
	>/dev/null 2>&1 &
spid=$!
sleep 0.3
( sleep "$FAIL_AT"
  "$XRFABRIC" set --netns "$SW" --port "${!port_a##*:}" blackhole=all >/dev/null
  "$XRFABRIC" set --netns "$SW" --port "${!port_b##*:}" blackhole=all >/dev/null
  date +%s%N >"$TMP/fail_ns" ) &
fpid=$!
date +%s%N >"$TMP/start_ns"
nsx "$A" timeout -k 2 $((SECS + 30)) "$XROCE" perf client "${IFS_A[@]}" \
	"$FAB_h1_IP4_0" -P 4 -s 65536 \
	-d "$SECS" --interval-ms 1 --json >"$TMP/perf.json" 2>"$TMP/perf.err" ||
	xr_die "perf failed: $(cat "$TMP/perf.err")"
wait "$fpid" || true
wait "$spid" || true
python3 "$XR_BENCHPY/failover_table.py" "$TMP/perf.json" "$(cat "$TMP/fail_ns")" "${OUT:-}" "${JSON:-}"
