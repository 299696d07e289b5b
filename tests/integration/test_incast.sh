#!/usr/bin/env bash
# test_incast.sh: 4 senders into one receiver through one rate-limited
# bottleneck, with the receiver's rate hints on (a short run of
# tests/bench/incast.sh; its header defines every figure).  Asserts:
#   - every transfer completes: each `xroce perf client` exits 0 and prints
#     its summary (a failed WRITE makes it exit non-zero);
#   - the hints reach the senders and count them: the median hint the
#     senders held is at most capacity / 3 (so >= 3 of the 4 were counted
#     active) and non-zero;
#   - fairness: Jain index over the run >= 0.9 (the target is 0.95: printed,
#     and asserted lower because this 2-core host time-shares the senders'
#     busy-polling processes, which makes single runs noisy);
#   - aggregate goodput >= 70% of the bottleneck's raw rate (payload can
#     reach at most ~93% of it; the hints ask for ~88%).  Only when the host
#     is otherwise idle: the senders are busy-polling processes and, paced
#     at their fair share, cannot make up for time off the CPU (a 32-packet
#     pacing bucket is ~3 ms at 110 Mbit/s, while on a host shared with
#     other work they wait tens of ms for a CPU).  So if the CPUs were more
#     than 25% busy in the second before the run, or if the hypervisor
#     took more than 15% of the CPU time during it (steal in /proc/stat;
#     healthy runs here see 0-7%, and a run at half the goodput with
#     hundreds of spurious timeouts and no drop anywhere was seen once in
#     ten suites), a shortfall is printed as NOT ASSERTED (host busy)
#     instead of failing; XR_INCAST_STRICT=1 asserts it regardless;
#   - no collapse: every sender gets >= 30% of the fair share;
#   - no congestion loss: the bottleneck's tbf dropped nothing (marks and
#     hints keep its 20 ms queue from overflowing).
# Settings: RATE Mbit/s (default 500), 3 s, and tests/bench/incast.sh's
# other defaults (ECN marking at 30 KB, active window 50 ms: the library's
# 1 ms default misses senders that are off the CPU on this host; see its
# header).  Typically 12-15 s.
# Usage: tests/integration/test_incast.sh   (root; build/xroce, build/xrfabric)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
xr_need_exec build/xroce build/xrfabric
RATE=${RATE:-500}
N=4
xr_tmpdir xrincast
# Other work on the host: share of the CPUs busy over one second.
BUSY=$(python3 "$XR_PY/procstat.py" busy 1)

# CPU time the hypervisor took from this VM (steal) during the run: the
# senders cannot keep their pace through it.
cpu_snap() { head -1 /proc/stat; }
STAT0=$(cpu_snap)

# The benchmark cleans up after itself (namespaces, processes) on any
# signal; on ours it gets a TERM.  Run in the background so that our
# traps run at once.
bash tests/bench/incast.sh --senders "$N" --hints on --secs 3 --rate "$RATE" \
	--json "$TMP/rows.json" --out "$TMP/out" --quiet >"$TMP/bench.out" 2>&1 &
BENCH=$!
xr_cleanup_push "kill $BENCH 2>/dev/null; wait $BENCH"
rc=0
wait "$BENCH" || rc=$?
STEAL=$(python3 "$XR_PY/procstat.py" steal "$STAT0" "$(cpu_snap)")
sed 's/^/  /' "$TMP/bench.out"
echo "  CPU time stolen by the hypervisor during the run: $(awk -v s="$STEAL" 'BEGIN { printf "%.1f%%", 100 * s }')"
[ "$rc" -eq 0 ] || xr_die "tests/bench/incast.sh failed (exit $rc)"

python3 "$XR_PY/incast_check.py" "$TMP/rows.json" "$N" "$RATE" "$BUSY" "${XR_INCAST_STRICT:-0}" "$STEAL"
echo "test_incast: all checks passed"
