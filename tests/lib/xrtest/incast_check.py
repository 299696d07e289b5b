"""incast_check.py: test_incast.sh's assertions on one run of
tests/bench/incast.sh (its --json row): every transfer completed, the rate
hint reached the senders and divides the capacity, Jain fairness, the
aggregate goodput (asserted only when the host was not busy, see
test_incast.sh), no collapse, no drop at the bottleneck.  Prints every
check; exits 1 if any failed.

  incast_check.py ROWS_JSON N RATE_MBIT BUSY STRICT STEAL

BUSY: share of the CPUs busy before the run; STEAL: share stolen by the
hypervisor during it; STRICT 1 asserts the goodput regardless."""
import json
import sys

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
