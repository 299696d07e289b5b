"""loss_table.py: loss_sweep.sh's table: per loss rate the median run of
xroce and of TCP (goodput, fraction of its own loss-free goodput,
retransmissions, machine-wide CPU-seconds per GB), printed, and as JSON
for run.sh's report (every run kept in "runs").

  loss_table.py ROWS JSON_OUT HZ BG SECS MTU GSO

ROWS: one line per run, "loss xgbps xretx xpkts tgbps tretx xbytes
xticks tbytes tticks xmpps xclient_cpu_s_per_gb xengine rep"; HZ the clock
ticks per second of those ticks; BG the share of the CPUs busy before the
sweep; GSO 1 if TCP ran with TSO/GSO/GRO on; JSON_OUT may be empty."""
import json
import sys

raw = [l.split() for l in open(sys.argv[1]) if l.strip()]
hz, bg, secs, mtu, gso = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), sys.argv[7] == '1'
# Each point: the run with the median xroce goodput and, separately, the
# run with the median TCP goodput (the columns of a row can come from
# different repetitions; every run is in the JSON).
points = {}
for r in raw:
    points.setdefault(r[0], []).append(r)


def median_run(rs, col):
    s = sorted(rs, key=lambda r: float(r[col]))
    return s[(len(s) - 1) // 2]


rows = []
for loss in dict.fromkeys(r[0] for r in raw):
    rx, rt = median_run(points[loss], 1), median_run(points[loss], 4)
    rows.append(rx[:4] + rt[4:6] + rx[6:8] + rt[8:10] + rx[10:13])
base_x = next((float(r[1]) for r in rows if float(r[0]) == 0), None)
base_t = next((float(r[4]) for r in rows if float(r[0]) == 0), None)


def per_gb(ticks, nbytes):
    return ticks / hz / (nbytes / 1e9) if nbytes > 0 else float('nan')


out = []
for r in rows:
    loss, xg, xr, xp, tg, tr = float(r[0]), float(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5])
    xb, xc, tb, tc = int(r[6]), int(r[7]), int(r[8]), int(r[9])
    xm, xpc, xe = float(r[10]), float(r[11]), r[12]
    runs = [dict(xroce_gbps=float(q[1]), tcp_gbps=float(q[4]), rep=int(q[13]))
            for q in points[r[0]]]
    fx = xg / base_x if base_x else float('nan')
    ft = tg / base_t if base_t else float('nan')
    xcg, tcg = per_gb(xc, xb), per_gb(tc, tb)
    print(f"{loss*100:5.1f}%  | {xg:10.3f} {fx*100:7.1f}% {xr:9d} {xcg:8.2f} | {tg:10.3f} {ft*100:7.1f}% {tr:9d} {tcg:8.2f}")
    out.append(dict(loss=loss, secs=secs, mtu=mtu, tcp_gso=gso, bg_cpu_frac=bg,
                    xroce_gbps=xg, xroce_frac=fx, xroce_retx=xr, xroce_pkts=xp,
                    xroce_mpps=xm, xroce_bytes=xb, xroce_cpu_s=xc / hz, xroce_cpu_s_per_gb=xcg,
                    xroce_client_cpu_s_per_gb=xpc, xroce_tx_engine=xe, runs=runs,
                    tcp_gbps=tg, tcp_frac=ft, tcp_retx=tr,
                    tcp_bytes=tb, tcp_cpu_s=tc / hz, tcp_cpu_s_per_gb=tcg))
if sys.argv[2]:
    json.dump(out, open(sys.argv[2], 'w'), indent=1)
