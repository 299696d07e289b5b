"""report_loss.py: part loss of tests/bench/run.sh's report: goodput of one
connection against random loss, xroce beside TCP (loss_sweep.sh's
loss-1500.json and loss-9000.json): a table per MTU and
goodput-vs-loss.png."""
import math
import os

import report_common as R
from report_common import TERM, errors, gnuplot, load, md, num, pct, table

TITLE = 'Goodput under random loss'


def run():
    md.append('One connection; the switch drops packets at random in both directions (data and '
              'ACKs). xroce: `xroce perf client --mode bw`, 64 KiB WRITEs over 8 paths; TCP: '
              'iperf3, one stream. "of 0%": fraction of its own loss-free goodput; the ceiling '
              'is 1 − p. Target: xroce keeps ≥ 97% at 1% loss and ≥ 85% at 10%.')
    md.append('')
    series = {}
    for mtu, tcp in ((1500, 'TSO/GSO/GRO off'), (9000, 'TSO/GSO/GRO on')):
        d = load('loss-%d.json' % mtu)
        if not d:
            continue
        series[mtu] = d
        engines = sorted({r.get('xroce_tx_engine', '?') for r in d})
        nrep = max(len(r.get('runs', [])) for r in d) or 1
        md.append('**MTU %d, TCP %s** (xroce transmit engine: %s; %s)' % (
            mtu, tcp, ', '.join(engines),
            'median of %d interleaved runs per point' % nrep if nrep > 1 else 'one run per point'))
        md.append('')
        table(['loss', 'xroce Gb/s', 'xroce of 0%', 'xroce retx pkts', 'TCP Gb/s', 'TCP of 0%',
               'TCP retx', '1 − p'],
              [['%g%%' % (100 * r['loss']), num(r['xroce_gbps']), pct(r['xroce_frac']),
                r['xroce_retx'], num(r['tcp_gbps']), pct(r['tcp_frac']), r['tcp_retx'],
                pct(1 - r['loss'])] for r in d])
        bad = [r['loss'] for r in d if not r['xroce_gbps'] or not r['tcp_gbps']]
        if bad:
            errors.append('MTU %d: no goodput measured at loss %s' % (mtu, bad))
    if not series:
        return
    # plot: categorical loss axis; fraction of loss-free and absolute goodput
    losses = sorted({r['loss'] for d in series.values() for r in d})
    dat = os.path.join(R.TMP, 'loss.dat')
    with open(dat, 'w') as f:
        f.write('# x loss x1500f t1500f x9000f t9000f x1500g t1500g x9000g t9000g ceil\n')
        for i, l in enumerate(losses):
            v = []
            for key in ('frac', 'gbps'):
                for mtu in (1500, 9000):
                    r = next((r for r in series.get(mtu, []) if r['loss'] == l), None)
                    for tr in ('xroce', 'tcp'):
                        x = r['%s_%s' % (tr, key)] if r else None
                        v.append('?' if x is None or (isinstance(x, float) and math.isnan(x)) else '%g' % x)
            f.write('%d %g %s %g\n' % (i, 100 * l, ' '.join(v[:4] + v[4:]), 1 - l))
    png = os.path.join(R.OUT, 'goodput-vs-loss.png')
    tics = ', '.join('"%g" %d' % (100 * l, i) for i, l in enumerate(losses))
    gnuplot(TERM % (1200, 450) + f"""
set output '{png}'
set datafile missing '?'
set multiplot layout 1,2 title 'Goodput of one connection vs random loss (commit {R.META['commit']}, {R.META['date']})'
set xtics ({tics})
set xlabel 'random loss, % (both directions)'
set xrange [-0.3:{len(losses) - 0.7}]
set grid
set key below maxrows 3 font ',9'
set ylabel 'fraction of its own loss-free goodput'
set yrange [0:1.05<*]
plot '{dat}' u 1:11 w l dt 2 lc 'gray' t '1 - p (ceiling)', \\
     '' u 1:3 w lp pt 7 lc 1 t 'xroce MTU 1500', \\
     '' u 1:4 w lp pt 5 lc 2 t 'TCP MTU 1500, TSO/GSO off', \\
     '' u 1:5 w lp pt 7 dt 3 lc 1 t 'xroce MTU 9000', \\
     '' u 1:6 w lp pt 5 dt 3 lc 2 t 'TCP MTU 9000, GSO on'
set ylabel 'goodput, Gbit/s'
set yrange [0:*]
plot '{dat}' u 1:7 w lp pt 7 lc 1 t 'xroce MTU 1500', \\
     '' u 1:8 w lp pt 5 lc 2 t 'TCP MTU 1500, TSO/GSO off', \\
     '' u 1:9 w lp pt 7 dt 3 lc 1 t 'xroce MTU 9000', \\
     '' u 1:10 w lp pt 5 dt 3 lc 2 t 'TCP MTU 9000, GSO on'
unset multiplot
""", png)
