#!/usr/bin/env bash
# mpi.sh: the same MPI job (build/tests/xrmpi, every result checked) over
# xroce (pml cm + mtl ofi + "xroce;ofi_rxm") and over Open MPI's TCP BTL,
# side by side in one run on one emulated leaf-spine cluster
# (tests/mpi/cluster.sh), at each loss rate on every host's leaf port.
# Prints a markdown table of bus bandwidth (NCCL's definition) and the
# ratio xroce/TCP; the raw JSON lines go to OUT/raw.jsonl.
#
# Usage: bash tests/bench/mpi.sh [--np 4] [--losses "0 0.01"]
#        [--sizes 64k,1M] [--ops allreduce,alltoall,bcast,pingpong]
#        [--iters 5] [--fail-link S] [--timeout S] [--out DIR]   (root)
#
# --fail-link S: after the rows above, run each job once more loss-free
# with the link between leaf l0 and spine s0 blackholed in both
# directions S seconds after the job starts (no routing protocol moves the
# ECMP routes off it: a flow hashed onto it gets nothing through).  The
# table shows these rows as "link down".  --timeout: seconds a job may
# take before it is killed and counted as failed (default 900).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
# shellcheck source=tests/mpi/mpi.sh
. tests/mpi/mpi.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
XRFABRIC=$PWD/build/xrfabric
XRMPI=$PWD/build/tests/xrmpi
for f in "$XRFABRIC" "$XRMPI" build/lib/libxroce-fi.so; do
	[ -e "$f" ] || xr_die "$f missing: run make first (xrmpi needs mpicc)"
done
N=4 LOSSES="0 0.01" SIZES=64k,1M OPS=allreduce,alltoall,bcast,pingpong ITERS=5 OUT=
FAIL_AT= JOB_TIMEOUT=900
while [ $# -gt 0 ]; do
	case $1 in
	--np) N=$2; shift 2 ;;
	--losses) LOSSES=$2; shift 2 ;;
	--sizes) SIZES=$2; shift 2 ;;
	--ops) OPS=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--fail-link) FAIL_AT=$2; shift 2 ;;
	--timeout) JOB_TIMEOUT=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) xr_die "unknown option $1 (see the header)" ;;
	esac
done

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
OUT=${OUT:-$TMP}
mkdir -p "$OUT"
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/mpi/cluster.sh down $PFX >/dev/null 2>&1"
bash tests/mpi/cluster.sh up "$N" --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091 # written by cluster.sh up
. "$TMP/env"

set_loss() {
	local i v p
	for ((i = 0; i < N; i++)); do
		v="FAB_h${i}_PORT_0"
		p=${!v}
		"$XRFABRIC" set --netns "${p%%:*}" --port "${p##*:}" "loss=$1" >/dev/null
	done
}

: >"$OUT/raw.jsonl"

# The leaf-spine link l0-s0, both directions: blackhole=all|off.
spine_link() {
	local up=${FAB_UPLINKS%% *} leaf port
	leaf=${up%%:*} port=${up##*:}
	"$XRFABRIC" set --netns "$leaf" --port "$port" "blackhole=$1" >/dev/null
	"$XRFABRIC" set --netns "${leaf%-*}-$port" --port "${leaf##*-}" "blackhole=$1" >/dev/null
}
xr_cleanup_push "spine_link off 2>/dev/null"

# run_job TRANSPORT LOSS LINKDOWN: one job, its JSON lines into raw.jsonl.
# The job runs in its own session so that a timeout ends mpirun and every
# process it started.
run_job() {
	local t=$1 loss=$2 down=$3 rc=0 pid deadline
	setsid bash -c ". tests/mpi/mpi.sh; xr_mpirun '$TMP/env' $t $N '$XRMPI' \
		--ops $OPS --sizes $SIZES --iters $ITERS" >"$TMP/$t.out" 2>&1 &
	pid=$!
	if [ "$down" = 1 ]; then
		sleep "$FAIL_AT"
		spine_link all
	fi
	deadline=$((SECONDS + JOB_TIMEOUT))
	while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM -- "-$pid" 2>/dev/null || true
		sleep 3
		kill -KILL -- "-$pid" 2>/dev/null || true
		echo "timed out after ${JOB_TIMEOUT}s" >>"$TMP/$t.out"
	fi
	wait "$pid" || rc=$?
	[ "$down" = 1 ] && spine_link off
	local what="loss $loss"
	[ "$down" = 0 ] || what="$what, link l0-s0 down"
	[ "$rc" -eq 0 ] || echo "mpi.sh: the job over $t at $what failed ($rc): $(tail -3 "$TMP/$t.out")" >&2
	grep '^{' "$TMP/$t.out" | sed "s/^{/{\"transport\":\"$t\",\"loss\":$loss,\"link_down\":$down,\"ok\":$((rc == 0)),/" \
		>>"$OUT/raw.jsonl" || true
}

for loss in $LOSSES; do
	set_loss "$loss"
	for t in xroce tcp; do
		run_job "$t" "$loss" 0
	done
done
set_loss 0
if [ -n "$FAIL_AT" ]; then
	for t in xroce tcp; do
		run_job "$t" 0 1
	done
fi
python3 tests/lib/xrbench/mpi_table.py "$OUT/raw.jsonl" "$N"
