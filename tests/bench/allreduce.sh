#!/usr/bin/env bash
# allreduce.sh: ring all-reduce bus bandwidth over 4 hosts, xroce beside
# TCP, loss-free and at 1% random loss, in one run.
#
# Topology: tests/fabric/fabric.sh leafspine 4 (two leaves, two spines,
# ECMP).  Loss is injected on every host's first switch port (so on every
# packet a host sends).  Each rank is examples/allreduce.c (build/
# xroce-allreduce) in its host's namespace; rank 0 reports its best time
# of --iters rounds per size; bus bandwidth = size * 2 (N-1) / N / time.
#
# Usage: tests/bench/allreduce.sh [--sizes 256k,4M,16M] [--iters N]
#                                 [--losses "0 0.01"] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root
SIZES=256k,4M,16M
ITERS=5
LOSSES="0 0.01"
JSON=
N=4
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) SIZES=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--losses) LOSSES=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
AR=$PWD/build/xroce-allreduce
xr_bpffs

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_up leafspine $N
[ -n "${XR_KEEP:-}" ] && xr_cleanup_push "cp $TMP/err.* $TMP/out.* $XR_KEEP/ 2>/dev/null"
PEERS=
for i in $(seq 0 $((N - 1))); do
	ns_var="FAB_h${i}_NS"
	ip_var="FAB_h${i}_IP4_0"
	nsx "${!ns_var}" "$XROCE" attach --force eth0 >/dev/null
	PEERS+="${PEERS:+,}${!ip_var}"
done

set_loss() {
	local i port
	for i in $(seq 0 $((N - 1))); do
		port_var="FAB_h${i}_PORT_0"
		port=${!port_var}
		"$XRFABRIC" set --netns "${port%%:*}" --port "${port##*:}" "loss=$1" >/dev/null
	done
}

run() { # TRANSPORT LOSS
	local i pids=()
	for i in $(seq 0 $((N - 1))); do
		ns_var="FAB_h${i}_NS"
		nsx "${!ns_var}" timeout 300 "$AR" --rank "$i" --peers "$PEERS" \
			--iface eth0 --transport "$1" --sizes "$SIZES" --iters "$ITERS" \
			>"$TMP/out.$i" 2>"$TMP/err.$i" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || xr_die "rank $i ($1, loss $2) failed: $(cat "$TMP/err.$i")"
	done
	sed "s/^{/{\"loss\":$2,/" "$TMP/out.0" >>"$TMP/results"
}

: >"$TMP/results"
for loss in $LOSSES; do
	set_loss "$loss"
	run xroce "$loss"
	run tcp "$loss"
done
set_loss 0
python3 "$XR_BENCHPY/allreduce_table.py" "$TMP/results" "$N" "${JSON:-}"
