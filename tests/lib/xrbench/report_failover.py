"""report_failover.py: part failover of tests/bench/run.sh's report: goodput
over time while one of four paths is blackholed (failover.sh's
failover.json and failover.csv): the figures and failover.png."""
import os

import report_common as R
from report_common import TERM, errors, gnuplot, load, md, table

TITLE = 'Failover: one of four paths blackholed'


def run():
    d = load('failover.json')
    if not d:
        return
    md.append('One connection, 4 paths over 4 planes, 64 KiB WRITEs; plane 2 is blackholed in both '
              'directions mid-run. Goodput from acknowledged bytes in 1 ms bins; "back to 90%": from '
              'the failure until a 5 ms moving average reaches 90% of 3/4 of the goodput before it. '
              'Retransmitted bytes ≈ packets × 1408 B (full segments at MTU 1500). Target: no error '
              'reaches the application, back to ≥ 90% within 10 ms.')
    md.append('')
    rec = d.get('recover_ms')
    table(['goodput before', 'target (90% of 3/4)', 'lowest 1 ms bin (50 ms after)', 'back to 90% after',
           'run average', 'retransmitted'],
          [['%.3f Gb/s' % d['before_gbps'], '%.3f Gb/s' % (0.9 * 0.75 * d['before_gbps']),
            '%.3f Gb/s' % d['dip_gbps'], 'never' if rec is None else '%.1f ms' % rec,
            '%.3f Gb/s' % d['avg_gbps'],
            '%d pkts ≈ %.0f kB' % (d['retx_pkts'], d['retx_pkts'] * 1408 / 1e3)]])
    if rec is None:
        errors.append('failover: goodput never back at 90% of the remaining paths\' share')
    csv = os.path.join(R.OUT, 'failover.csv')
    if not os.path.exists(csv):
        errors.append('failover.csv missing')
        return
    # 5 ms moving average beside the 1 ms bins
    rows = [l.strip().split(',') for l in open(csv)][1:]
    t = [float(r[0]) for r in rows]
    g = [float(r[1]) for r in rows]
    dat = os.path.join(R.TMP, 'failover.dat')
    with open(dat, 'w') as f:
        for i in range(len(t)):
            w = g[max(0, i - 4):i + 1]
            f.write('%g %g %g\n' % (t[i] - d['fail_ms'], g[i], sum(w) / len(w)))
    png = os.path.join(R.OUT, 'failover.png')
    target = 0.9 * 0.75 * d['before_gbps']
    gnuplot(TERM % (1200, 450) + f"""
set output '{png}'
set multiplot layout 1,2 title 'Failover: 4 paths, one blackholed at t = 0 (commit {R.META['commit']}, {R.META['date']})'
set xlabel 'ms from the failure'
set ylabel 'goodput, Gbit/s (1 ms bins)'
set grid
set yrange [0:*]
set key bottom right
set arrow 1 from 0, graph 0 to 0, graph 1 nohead lc 'red' dt 2
plot '{dat}' u 1:2 w l lc 'gray' t '1 ms', '' u 1:3 w l lw 2 lc 1 t '5 ms average', \\
     {target} w l dt 2 lc 'black' t '90% of 3/4 before'
set title 'around the failure'
set xrange [-20:60]
plot '{dat}' u 1:2 w lp pt 7 ps 0.4 lc 'gray' t '1 ms', '' u 1:3 w l lw 2 lc 1 t '5 ms average', \\
     {target} w l dt 2 lc 'black' t '90% of 3/4 before'
unset multiplot
""", png)
