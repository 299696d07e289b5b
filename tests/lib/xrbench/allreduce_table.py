"""allreduce_table.py: allreduce.sh's table: ring all-reduce bus bandwidth
per size and loss, xroce beside TCP, printed, and the rows as JSON.

  allreduce_table.py RESULTS NRANKS [JSON_OUT]

RESULTS: rank 0's JSON lines (examples/allreduce.c), a "loss" added."""
import json
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"ring all-reduce, {sys.argv[2]} ranks, bus bandwidth (Gbit/s), best of iterations")
print(f"{'bytes':>10} {'loss':>6} {'xroce':>9} {'TCP':>9} {'xroce/TCP':>10}")
for r in rows:
    if r['transport'] != 'xroce':
        continue
    t = next((x for x in rows if x['transport'] == 'tcp' and x['bytes'] == r['bytes']
              and x['loss'] == r['loss']), None)
    tb = t['busbw_gbps'] if t else float('nan')
    print(f"{r['bytes']:>10} {r['loss']*100:5.1f}% {r['busbw_gbps']:9.3f} {tb:9.3f} "
          f"{r['busbw_gbps']/tb if t and tb else float('nan'):10.2f}")
if len(sys.argv) > 3 and sys.argv[3]:
    json.dump(rows, open(sys.argv[3], 'w'), indent=1)
