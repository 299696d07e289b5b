"""router_table.py: router_lat.sh's table: per size and transport, the
median over the repeats of each run's min / median / p99 / p99.9 (us), and
the median and p99 of the xroce rows over UDP's; printed, and as JSON.

  router_table.py ROWS [JSON_OUT]

ROWS: lines "repeat size transport min p50 p99 p999" (nan: a failed run)."""
import json
import math
import statistics
import sys

KEYS = ('min_us', 'p50_us', 'p99_us', 'p999_us')
ORDER = ('xroce', 'xroce-wait', 'base', 'base-wait', 'udp', 'tcp')


def med(v):
    v = [x for x in v if not math.isnan(x)]
    return statistics.median(v) if v else float('nan')


runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 7:
        continue
    runs.setdefault((int(f[1]), f[2]), []).append([float(x) for x in f[3:7]])
out = []
for (size, tr), rs in runs.items():
    d = dict(size=size, transport=tr, runs=len(rs),
             ok=sum(1 for r in rs if not math.isnan(r[1])))
    for i, k in enumerate(KEYS):
        d[k] = med([r[i] for r in rs])
    out.append(d)
out.sort(key=lambda d: (d['size'], ORDER.index(d['transport'])
                        if d['transport'] in ORDER else 99))
udp = {d['size']: d for d in out if d['transport'] == 'udp'}


def ratio(d, k):
    u = udp.get(d['size'])
    if not u or d['transport'] in ('udp', 'tcp') or not u[k] or math.isnan(u[k]):
        return float('nan')
    return d[k] / u[k]


print("round trip (us) through a Linux router namespace, median of %d "
      "interleaved repeats" % max((d['runs'] for d in out), default=0))
print(f"{'size':>6} {'transport':>10} {'min':>8} {'median':>8} {'p99':>9} {'p99.9':>9}"
      f" {'med/UDP':>8} {'p99/UDP':>8} {'runs ok':>7}")
for d in out:
    d['p50_vs_udp'] = ratio(d, 'p50_us')
    d['p99_vs_udp'] = ratio(d, 'p99_us')
    print(f"{d['size']:6d} {d['transport']:>10} {d['min_us']:8.1f} {d['p50_us']:8.1f}"
          f" {d['p99_us']:9.1f} {d['p999_us']:9.1f} {d['p50_vs_udp']:8.2f}"
          f" {d['p99_vs_udp']:8.2f} {d['ok']:4d}/{d['runs']}")
if len(sys.argv) > 2 and sys.argv[2]:
    json.dump(out, open(sys.argv[2], 'w'), indent=1)
