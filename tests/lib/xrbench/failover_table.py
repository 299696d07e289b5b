"""failover_table.py: failover.sh's figures from `xroce perf client
--interval-ms 1 --json` output: goodput before the failure, the time until
a 5 ms moving average is back at 90% of 3/4 of it, the lowest 1 ms bin,
the retransmissions; printed, the timeline as CSV, the figures as JSON.

  failover_table.py PERF_JSON FAIL_NS [CSV_OUT] [JSON_OUT]

FAIL_NS: CLOCK_REALTIME (ns) when the plane was blackholed; the client's
interval rows carry the same clock (wall_ns)."""
import json
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
iv = [r for r in rows if r.get('mode') == 'interval']
tl = [(r['t_ms'], r['gbps']) for r in iv]
summ = [r for r in rows if r.get('mode') == 'bw'][-1]
# The failure instant on the client's timeline (both clocks are realtime).
fail_ns = int(sys.argv[2])
r0 = iv[0]
fail_ms = r0['t_ms'] + (fail_ns - r0['wall_ns']) / 1e6
before = [g for t, g in tl if fail_ms - 500 <= t < fail_ms - 5]
base = sum(before) / len(before) if before else 0
target = 0.9 * 0.75 * base
rec = None
for i, (t, g) in enumerate(tl):
    if t < fail_ms:
        continue
    win = [x[1] for x in tl[i:i + 5]]
    if len(win) == 5 and sum(win) / 5 >= target:
        rec = t - fail_ms
        break
dip = min((g for t, g in tl if fail_ms <= t < fail_ms + 50), default=0)
print(f"failover: 4 paths on 4 planes, plane blackholed at t = {fail_ms:.0f} ms of the run")
print(f"  goodput before      {base:8.3f} Gbit/s (target after: 90% of 3/4 = {target:.3f})")
print(f"  lowest 1 ms bin     {dip:8.3f} Gbit/s in the 50 ms after the failure")
print(f"  back at target after {rec:.1f} ms" if rec is not None else "  never back at target")
print(f"  run: {summ['gbps']:.3f} Gbit/s average, {summ['retx_pkts']} packets retransmitted "
      f"({summ['retx_pkts'] * 1408 / 1e3:.0f} kB), no error completion")
if len(sys.argv) > 3 and sys.argv[3]:
    with open(sys.argv[3], 'w') as f:
        f.write("t_ms,gbps\n")
        for t, g in tl:
            f.write(f"{t:.3f},{g:.4f}\n")
if len(sys.argv) > 4 and sys.argv[4]:
    json.dump(dict(fail_ms=fail_ms, before_gbps=base, recover_ms=rec, dip_gbps=dip,
                   avg_gbps=summ['gbps'], retx_pkts=summ['retx_pkts']),
              open(sys.argv[4], 'w'), indent=1)
