"""latency_table.py: latency.sh's table: one row per (loss, size,
transport) measured, printed, and as JSON for run.sh's report.

  latency_table.py ROWS [JSON_OUT]

ROWS: lines "loss size transport min p50 p99 p999 dropped" (us)."""
import json
import sys

rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("round-trip latency (us), one connection, xroce vs sockets")
print(f"{'loss':>5} {'size':>6} {'transport':>10} {'min':>8} {'median':>8} {'p99':>9} {'p99.9':>9} {'dropped':>8}")
out = []
for r in rows:
    loss, size, tr = float(r[0]), int(r[1]), r[2]
    v = [float(x) for x in r[3:7]]
    print(f"{loss*100:4.1f}% {size:6d} {tr:>10} {v[0]:8.1f} {v[1]:8.1f} {v[2]:9.1f} {v[3]:9.1f} {r[7]:>8}")
    out.append(dict(loss=loss, size=size, transport=tr, min_us=v[0], p50_us=v[1],
                    p99_us=v[2], p999_us=v[3], dropped=r[7]))
if len(sys.argv) > 2 and sys.argv[2]:
    json.dump(out, open(sys.argv[2], 'w'), indent=1)
