"""mp_common.py: what test_multipath.sh's scenario checks (mp_*.py) share:
loading a scenario's results (the sender's and receiver's JSON, the
sampler's telemetry from telem.py, the fabric's counters), picking
samples, goodput over telemetry intervals, and printing checks (a failed
one exits 1)."""
import json
import sys

import abi

GOOD, CONGESTED, SUSPECT, DOWN = abi.PATH_GOOD, abi.PATH_CONGESTED, abi.PATH_SUSPECT, abi.PATH_DOWN
# telemetry path fields, in telem.py's order
SPORT, STATE, PLANE, CWND, INFL, TXP, TXB, RETX, LOST, ACKED, CE, RX, TMO = range(13)
MS = 1e6


def ok(msg):
    print('  ok   ' + msg)


def check(cond, msg):
    if not cond:
        print('FAIL: ' + msg, file=sys.stderr)
        sys.exit(1)
    ok(msg)


def load(prefix):
    s = json.load(open(prefix + '.send'))
    r = json.load(open(prefix + '.recv'))
    samples, events = [], []
    for line in open(prefix + '.tl'):
        x = json.loads(line)
        (events if 'ev' in x else samples).append(x)
    samples.sort(key=lambda x: x['upd'])
    return s, r, samples, events


def ports(path):
    """xrfabric show --json: {(port, dir): counters}."""
    d = json.load(open(path))
    return {(p['port'], p['dir']): p['counters'] for p in d['ports']}


def common(s, r, size):
    check(s['verified'] and r['verified'] and s['bytes'] == size == r['bytes'],
          '%d bytes delivered, verified by the receiver, no error completion '
          '(sender exit 0, %.2f Gbit/s)' % (size, s['goodput_gbps']))


def at(samples, t):
    """The last sample at or before t (or the first one)."""
    best = samples[0]
    for x in samples:
        if x['upd'] > t:
            break
        best = x
    return best


def plane_sum(paths, plane, f, base=None):
    return sum(p[f] - (base[i][f] if base else 0)
               for i, p in enumerate(paths) if p[PLANE] == plane)


def intervals(samples):
    """(t_start, t_end, acked bytes) between telemetry updates while the
    library was running.  Updates come every ~1 ms while the application
    drives the library (up to a few ms when the two cores are contended); a
    longer gap is the application busy elsewhere (`xroce send` fills each
    32 MiB chunk with its pattern between calls, ~15 ms): such gaps are
    left out of goodput figures."""
    out, skipped = [], 0
    for a, b in zip(samples, samples[1:]):
        dt = b['upd'] - a['upd']
        if dt <= 6 * MS:
            out.append((a['upd'], b['upd'], b['acked'] - a['acked']))
        else:
            skipped += dt
    return out, skipped


def rate(iv, t0, t1):
    """Goodput (bytes/ns) over the intervals inside [t0, t1]."""
    b = d = 0
    for a, e, n in iv:
        if a >= t0 and e <= t1:
            b += n
            d += e - a
    return (b / d if d else None), d

