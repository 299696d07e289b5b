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
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
for f in build/xroce build/xrfabric; do
	[ -x "$f" ] || xr_die "$f missing: run make first"
done
RATE=${RATE:-500}
N=4
TMP=$(mktemp -d /tmp/xrincast.XXXXXX)
xr_cleanup_push "rm -rf '$TMP'"
# Other work on the host: share of the CPUs busy over one second.
BUSY=$(python3 -c '
import time
def snap():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(v), v[3] + v[4]
t0, i0 = snap(); time.sleep(1); t1, i1 = snap()
print("%.3f" % (1 - (i1 - i0) / (t1 - t0) if t1 > t0 else 0))')

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
STEAL=$(python3 -c '
import sys
a, b = ([int(x) for x in l.split()[1:]] for l in sys.argv[1:3])
d = [y - x for x, y in zip(a, b)]
print("%.3f" % (d[7] / sum(d) if sum(d) > 0 else 0))' "$STAT0" "$(cpu_snap)")
sed 's/^/  /' "$TMP/bench.out"
echo "  CPU time stolen by the hypervisor during the run: $(python3 -c "print('%.1f%%' % (100 * $STEAL))")"
[ "$rc" -eq 0 ] || xr_die "tests/bench/incast.sh failed (exit $rc)"

python3 - "$TMP/rows.json" "$N" "$RATE" "$BUSY" "${XR_INCAST_STRICT:-0}" "$STEAL" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
n, rate, busy, strict = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == '1'
steal = float(sys.argv[6])
cap = rate * 0.95 * 1408 / 1514  # incast.sh: --hint-frac 0.95 of the payload capacity
fails = []
def check(ok, what):
    print('  %s %s' % ('ok  ' if ok else 'FAIL', what))
    if not ok:
        fails.append(what)
if len(rows) != 1:
    print('FAIL: expected one run, got %d rows' % len(rows))
    sys.exit(1)
r = rows[0]
check(r['ok'], 'all %d transfers completed (exit codes %s)' % (n, r['rcs']))
if 'jain_run' not in r:
    print('FAIL: no timeline to analyse')
    sys.exit(1)
h = r['hint_med']
check(h is not None and 0 < h <= cap / 3 + 1,
      'rate hint reaches the senders and divides capacity: median %.0f Mbit/s '
      '(capacity %.0f, /%d = %.0f)' % (h or 0, cap, n, cap / n))
check(r['jain_run'] >= 0.9, 'Jain index over the run %.3f >= 0.9 (target 0.95: %s); '
      '50 ms windows: min %.3f, median %.3f, %.0f%% >= 0.95; settled at %s'
      % (r['jain_run'], 'met' if r['jain_run'] >= 0.95 else 'NOT met', r['j50_min'],
         r['j50_med'], 100 * r['j50_fair'],
         'never' if r['t_conv_ms'] is None else '%d ms' % r['t_conv_ms']))
what = ('aggregate goodput %.1f Mbit/s = %.1f%% of the %d Mbit/s bottleneck (>= 70%%)'
        % (r['goodput_mbps'], 100 * r['goodput_frac'], rate))
if r['goodput_frac'] >= 0.7 or strict or (busy <= 0.25 and steal <= 0.15):
    check(r['goodput_frac'] >= 0.7, what)
else:
    print('  NOT ASSERTED (host busy: CPUs %.0f%% busy before the run, %.0f%% stolen during '
          'it; XR_INCAST_STRICT=1 asserts it) %s' % (100 * busy, 100 * steal, what))
check(r['min_share'] >= 0.3, 'no collapse: smallest sender %.2f of the fair share (>= 0.3); '
      'per sender Mbit/s %s' % (r['min_share'], ' '.join('%.0f' % x for x in r['sender_mbps'])))
check(r['tbf_drops'] == 0, 'no drops at the bottleneck (tbf %d; retransmissions %d, '
      'ECN-marked %.1f%%)' % (r['tbf_drops'], r['retx'], 100 * r['ecn_frac']))
sys.exit(1 if fails else 0)
PY
echo "test_incast: all checks passed"
