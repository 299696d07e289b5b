"""report_latency.py: part latency of tests/bench/run.sh's report: round
trips of small messages, xroce beside UDP and TCP ping-pong (latency.sh's
latency.json): the table and latency.png."""
import math
import os

import report_common as R
from report_common import TERM, gnuplot, load, md, num, table

TITLE = 'Small-message latency'


def run():
    d = load('latency.json')
    if not d:
        return
    md.append('Round trip in µs on the pair fabric (MTU 1500), one connection. xroce: '
              'WRITE_WITH_IMM ping-pong (`xroce perf client --mode lat`), both ends busy-polling '
              '(xroce) or sleeping on the completion event (xroce-wait, `--wait`); UDP and TCP: sockperf '
              'ping-pong (TCP_NODELAY; messages below 14 B are sent as 14 B, its header). '
              '"p99 vs 0%": this p99 over the same transport\'s loss-free p99. Target: xroce\'s '
              'median and p99 below UDP\'s and TCP\'s; at 1% loss its p99 at most 2× the loss-free one.')
    md.append('')
    base = {(r['size'], r['transport']): r['p99_us'] for r in d if r['loss'] == 0}
    rows, notes = [], set()
    for r in d:
        stalled = r['transport'] == 'udp' and any(math.isnan(r[k]) for k in ('p50_us', 'p99_us'))
        ratio = None
        b = base.get((r['size'], r['transport']))
        if r['loss'] and b and not math.isnan(r['p99_us']):
            ratio = r['p99_us'] / b
        note = ''
        if stalled:
            note = 'stalled¹'
            notes.add(1)
        elif r['transport'] == 'udp' and r['loss'] and r['size'] + 28 > 1500:
            note = 'not dropped²'
            notes.add(2)
        rows.append(['%g%%' % (100 * r['loss']), r['size'], r['transport'],
                     num(r['min_us'], '%.1f'), num(r['p50_us'], '%.1f'), num(r['p99_us'], '%.1f'),
                     num(r['p999_us'], '%.1f'), r['dropped'], num(ratio, '%.2f×'), note])
    table(['loss', 'size B', 'transport', 'min', 'median', 'p99', 'p99.9', 'dropped',
           'p99 vs 0%', 'note'], rows, ['r', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'])
    if 1 in notes:
        md.append('¹ sockperf ping-pong waits for each reply and never resends: after the first '
                  'lost message or reply it waits until the end of the run, so there are no valid '
                  'observations (UDP gives an application no recovery).')
    if 2 in notes:
        md.append('² a 4 KiB UDP message is IP-fragmented at MTU 1500, and the fabric\'s loss '
                  'injector passes IP fragments untouched (bpf/fabric.bpf.c): this row is in fact '
                  'loss-free.')
    if notes:
        md.append('')
    sizes = sorted({r['size'] for r in d})
    losses = sorted({r['loss'] for r in d})
    trs = [t for t in ('xroce', 'xroce-wait', 'udp', 'tcp') if any(r['transport'] == t for r in d)]
    dat = os.path.join(R.TMP, 'lat.dat')
    with open(dat, 'w') as f:
        for li, l in enumerate(losses):
            f.write('# loss %g\n' % l)
            for ti, t in enumerate(trs):
                for si, s in enumerate(sizes):
                    r = next((r for r in d if r['loss'] == l and r['size'] == s and r['transport'] == t), None)
                    v = [r[k] if r else float('nan') for k in ('min_us', 'p50_us', 'p99_us', 'p999_us')]
                    v = ['?' if math.isnan(x) else '%g' % x for x in v]
                    f.write('%g %s\n' % (si + (ti - (len(trs) - 1) / 2) * 0.18, ' '.join(v)))
                f.write('\n\n')
    png = os.path.join(R.OUT, 'latency.png')
    tics = ', '.join('"%d B" %d' % (s, i) for i, s in enumerate(sizes))
    plots = []
    for li, l in enumerate(losses):
        p = ['set title "%s"' % ('loss-free' if l == 0 else 'random loss %g%%' % (100 * l)),
             "plot " + ', \\\n     '.join(
                 "'%s' index %d u 1:3:2:4 w yerrorbars pt 7 lc %d t '%s median (bar: min..p99)'" %
                 (dat, li * len(trs) + ti, ti + 1, t) for ti, t in enumerate(trs)) + ', \\\n     ' +
             ', \\\n     '.join("'%s' index %d u 1:5 w p pt 2 lc %d t '%s p99.9'" %
                                (dat, li * len(trs) + ti, ti + 1, t) for ti, t in enumerate(trs))]
        plots.append('\n'.join(p))
    gnuplot(TERM % (600 * len(losses), 450) + f"""
set output '{png}'
set datafile missing '?'
set multiplot layout 1,{len(losses)} title 'Round-trip latency, xroce vs UDP and TCP ping-pong (commit {R.META['commit']}, {R.META['date']})'
set xtics ({tics})
set xrange [-0.6:{len(sizes) - 0.4}]
set logscale y
set ylabel 'round trip, us'
set grid ytics mytics
set key below maxrows 2 font ',8'
""" + '\n'.join(plots) + '\nunset multiplot\n', png)
