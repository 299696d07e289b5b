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
#        [--iters 5] [--out DIR]      (root)
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
while [ $# -gt 0 ]; do
	case $1 in
	--np) N=$2; shift 2 ;;
	--losses) LOSSES=$2; shift 2 ;;
	--sizes) SIZES=$2; shift 2 ;;
	--ops) OPS=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
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
for loss in $LOSSES; do
	set_loss "$loss"
	for t in xroce tcp; do
		rc=0
		timeout 900 bash -c ". tests/mpi/mpi.sh; xr_mpirun '$TMP/env' $t $N '$XRMPI' \
			--ops $OPS --sizes $SIZES --iters $ITERS" >"$TMP/$t.out" 2>&1 || rc=$?
		[ "$rc" -eq 0 ] || echo "mpi.sh: the job over $t at loss $loss failed ($rc): $(tail -3 "$TMP/$t.out")" >&2
		grep '^{' "$TMP/$t.out" | sed "s/^{/{\"transport\":\"$t\",\"loss\":$loss,\"ok\":$((rc == 0)),/" \
			>>"$OUT/raw.jsonl" || true
	done
done
set_loss 0
python3 tests/lib/xrbench/mpi_table.py "$OUT/raw.jsonl" "$N"
