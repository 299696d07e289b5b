#!/usr/bin/env bash
# test_mpi.sh: Open MPI jobs over xroce on the emulated leaf-spine fabric
# (tests/mpi/cluster.sh: 4 hosts, 2 leaves, 2 spines, ECMP; mpirun on the
# management network, ranks entered through tests/mpi/nsagent.sh from an
# ordinary hostfile):
#   - 4 ranks of build/tests/xrmpi (allreduce, alltoall, bcast, ping-pong,
#     every result checked on every rank) through pml cm + mtl ofi +
#     "xroce;ofi_rxm", at 1% random loss on every host's uplink; the
#     switches must have dropped packets and every host's XDP program must
#     have placed data (the job really ran on xroce).  With FI_PROVIDER=xroce
#     the provider raises rxm's SAR limit to 32 MiB (rxm's log must say so),
#     so these messages are segmented over SENDs;
#   - the same at 1 MiB with FI_OFI_RXM_SAR_LIMIT=131072 given by the user
#     (kept, rxm's log must say so): rendezvous, the receiver READing the
#     sender's buffer, both registered for each message;
#   - the leaf-spine link l0-s0 blackholed both ways before the job: it
#     completes, results checked (rxm's connections are set up across the
#     fabric while the link is dead, so unanswered CONNECTs must go out of
#     other ports; xroce's paths move off the link; no routing protocol
#     moves the ECMP routes);
#   - a rank killed mid-job: mpirun ends with an error within 60 s (peers
#     fail, nobody hangs).
# Usage: tests/integration/test_mpi.sh [--loss 0.01]   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
# shellcheck source=tests/mpi/mpi.sh
. tests/mpi/mpi.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
XRMPI=$PWD/build/tests/xrmpi
for f in "$XROCE" "$XRFABRIC" "$XRMPI" build/lib/libxroce-fi.so; do
	[ -e "$f" ] || xr_die "$f missing: run make first (xrmpi needs mpicc: bash tests/deps.sh)"
done
command -v mpirun >/dev/null || xr_die "mpirun missing: bash tests/deps.sh (openmpi-bin)"
LOSS=0.01
while [ $# -gt 0 ]; do
	case $1 in
	--loss) LOSS=$2; shift 2 ;;
	*) xr_die "usage: $0 [--loss 0.01]" ;;
	esac
done
N=4

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/mpi/cluster.sh down $PFX >/dev/null 2>&1"
bash tests/mpi/cluster.sh up $N --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091 # written by cluster.sh up
. "$TMP/env"

CHECKS=0
pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }

host_port() { local v="FAB_h$1_PORT_0"; echo "${!v}"; }
host_ns() { local v="FAB_h$1_NS"; echo "${!v}"; }

set_loss() {
	local i p
	for ((i = 0; i < N; i++)); do
		p=$(host_port $i)
		"$XRFABRIC" set --netns "${p%%:*}" --port "${p##*:}" "loss=$1" >/dev/null
	done
}

drops() {
	local i p total=0 d
	for ((i = 0; i < N; i++)); do
		p=$(host_port $i)
		d=$("$XRFABRIC" show --netns "${p%%:*}" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(p["counters"]["drop_loss"] for p in d["ports"] if p["port"] == sys.argv[1]))' "${p##*:}")
		total=$((total + d))
	done
	echo $total
}

placed() { # NS: data packets its XDP program placed so far
	nsx "$1" "$XROCE" status eth0 --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["programs"][0]["stats"]["rx_data"])'
}

echo "== $N ranks over xroce at $LOSS loss, every result checked"
set_loss "$LOSS"
d0=$(drops)
for ((i = 0; i < N; i++)); do before[i]=$(placed "$(host_ns $i)"); done
rc=0
XR_MPI_EXTRA="-x FI_LOG_LEVEL=info -x FI_LOG_PROV=ofi_rxm" \
	timeout 600 bash -c ". tests/mpi/mpi.sh; xr_mpirun '$TMP/env' xroce $N '$XRMPI' \
	--sizes 64k,1M,4M --iters 3" >"$TMP/xroce.out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	tail -30 "$TMP/xroce.out" >&2
	xr_die "mpirun over xroce failed (rc $rc)"
fi
n=$(grep -c '^{"op"' "$TMP/xroce.out" || true)
[ "$n" -eq 12 ] || xr_die "expected 12 results (4 operations x 3 sizes), got $n: $(cat "$TMP/xroce.out")"
python3 - "$TMP/xroce.out" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if l.startswith('{"op"'):
        r = json.loads(l)
        print(f"     {r['op']:>9} {r['bytes']:>8} B  {r['time_us']:10.1f} us  busbw {r['busbw_gbps']:.3f} Gbit/s")
PY
pass "xrmpi: allreduce, alltoall, bcast, ping-pong over xroce;ofi_rxm, data checked on every rank"
grep -q "Protocol limits: Eager: 16384, SAR: 33554432" "$TMP/xroce.out" ||
	xr_die "rxm's SAR limit is not the provider's 32 MiB: $(grep -i 'protocol limits' "$TMP/xroce.out" | head -3)"
pass "rxm's SAR limit raised to 32 MiB by the provider (1 MiB and 4 MiB segmented)"
d1=$(drops)
[ $((d1 - d0)) -gt 0 ] || [ "$LOSS" = 0 ] || xr_die "the switches dropped nothing at $LOSS loss"
for ((i = 0; i < N; i++)); do
	after=$(placed "$(host_ns $i)")
	[ "$after" -gt "${before[i]}" ] || xr_die "h$i: its XDP program placed no data: the job did not run on xroce"
done
pass "the switches dropped $((d1 - d0)) packets; every host's XDP program placed data"

echo "== rendezvous above 128 KiB (the user's FI_OFI_RXM_SAR_LIMIT kept), at $LOSS loss"
rc=0
XR_MPI_EXTRA="-x FI_OFI_RXM_SAR_LIMIT=131072 -x FI_LOG_LEVEL=info -x FI_LOG_PROV=ofi_rxm" \
	timeout 300 bash -c ". tests/mpi/mpi.sh; xr_mpirun '$TMP/env' xroce $N '$XRMPI' \
	--sizes 1M --iters 3" >"$TMP/rndv.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { tail -30 "$TMP/rndv.out" >&2; xr_die "mpirun with rendezvous failed (rc $rc)"; }
n=$(grep -c '^{"op"' "$TMP/rndv.out" || true)
[ "$n" -eq 4 ] || xr_die "expected 4 results, got $n: $(cat "$TMP/rndv.out")"
grep -q "Protocol limits: Eager: 16384, SAR: 131072" "$TMP/rndv.out" ||
	xr_die "the user's SAR limit was not kept: $(grep -i 'protocol limits' "$TMP/rndv.out" | head -3)"
pass "1 MiB by rendezvous READ (FI_OFI_RXM_SAR_LIMIT=131072 kept), data checked on every rank"
set_loss 0

echo "== the link between leaf l0 and spine s0 blackholed, then a job"
up=${FAB_UPLINKS%% *}
leaf=${up%%:*} lport=${up##*:}
spine_link() {
	"$XRFABRIC" set --netns "$leaf" --port "$lport" "blackhole=$1" >/dev/null
	"$XRFABRIC" set --netns "${leaf%-*}-$lport" --port "${leaf##*-}" "blackhole=$1" >/dev/null
}
xr_cleanup_push "spine_link off 2>/dev/null"
holed() {
	"$XRFABRIC" show --netns "$leaf" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(p["counters"]["blackholed"] for p in d["ports"] if p["port"] == sys.argv[1]))' "$lport"
}
rc=0
spine_link all
timeout 300 bash -c ". tests/mpi/mpi.sh; xr_mpirun '$TMP/env' xroce $N '$XRMPI' \
	--sizes 64k,1M --iters 5" >"$TMP/link.out" 2>&1 || rc=$?
h=$(holed)
spine_link off
[ "$rc" -eq 0 ] || { tail -30 "$TMP/link.out" >&2; xr_die "mpirun failed with a spine link down (rc $rc)"; }
n=$(grep -c '^{"op"' "$TMP/link.out" || true)
[ "$n" -eq 8 ] || xr_die "expected 8 results, got $n: $(cat "$TMP/link.out")"
[ "$h" -gt 0 ] || xr_die "the failed link blackholed nothing: the job did not cross it"
pass "a spine link down: $h packets blackholed at l0, the job completed, data checked"

echo "== a rank killed mid-job"
set_loss 0
t0=$(date +%s)
timeout 300 bash -c ". tests/mpi/mpi.sh; xr_mpirun '$TMP/env' xroce $N '$XRMPI' \
	--ops allreduce --sizes 1M --iters 100000" >"$TMP/kill.out" 2>&1 &
mpid=$!
xr_cleanup_push "kill $mpid 2>/dev/null; wait $mpid 2>/dev/null"
rank_pid() { # NS: pid of the xrmpi process running there, if any
	local p
	for p in $(ip netns pids "$1" 2>/dev/null); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = xrmpi ]; then
			echo "$p"
			return 0
		fi
	done
	return 0
}
victim=""
for _ in $(seq 1 600); do
	victim=$(rank_pid "$(host_ns 2)")
	[ -n "$victim" ] && break
	sleep 0.1
done
[ -n "$victim" ] || xr_die "rank 2 never started: $(cat "$TMP/kill.out")"
sleep 3 # well into the job
kill -9 "$victim"
t1=$(date +%s)
rc=0
wait "$mpid" || rc=$?
t2=$(date +%s)
[ "$rc" -ne 0 ] || xr_die "mpirun succeeded although a rank was killed"
[ "$rc" -ne 124 ] || xr_die "mpirun hung after a rank was killed"
[ $((t2 - t1)) -le 60 ] || xr_die "mpirun took $((t2 - t1)) s to end after the kill"
pass "rank 2 killed after $((t1 - t0)) s: mpirun ended with status $rc $((t2 - t1)) s later"
echo "test_mpi: $CHECKS checks passed"
