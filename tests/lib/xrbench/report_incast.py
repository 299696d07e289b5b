"""report_incast.py: part incast of tests/bench/run.sh's report: N senders
into one bottleneck, rate hints on and off (incast.sh's incast.json and
rates): every run's figures, their spread over repeats, and incast-
rates.png."""
import os
import statistics as st

import report_common as R
from report_common import TERM, errors, gnuplot, load, md, pct, table

TITLE = 'Incast'


def run():
    d = load('incast.json')
    if not d:
        return
    md.append('N senders into one receiver behind one bottleneck (tbf with an ECN-marking virtual '
              'queue in front, incast.sh\'s defaults: 500 Mbit/s); hints "on": the receiver\'s '
              'rate-capacity hint. J run: Jain fairness over the run from 100 ms; J50 min: the worst '
              '50 ms window; fair%: windows with J ≥ 0.95; t_conv: from when on every 50 ms window is '
              'fair ("never": the last one is not); min share: the slowest sender over the fair share. '
              'Definitions in tests/bench/incast.sh. Target: rates settle within a few RTTs, '
              'J ≥ 0.95, no collapse.')
    md.append('')
    rows = []
    for r in d:
        if 'jain_run' in r and r.get('dur_s', 0) <= 0.1:
            # the senders' starts spread over more than the run: no interval
            # when all of them send, the figures mean nothing
            rows.append([r['n'], r['hints'], r['rep']] + ['–'] * 10 +
                        ['no common interval: the senders started %.0f ms apart' % r['skew_ms']])
            errors.append('incast N=%d hints=%s rep %d: the senders\' starts are %.0f ms apart, '
                          'no interval when all send' % (r['n'], r['hints'], r['rep'], r['skew_ms']))
            del r['jain_run']
            continue
        if 'jain_run' not in r:
            rows.append([r['n'], r['hints'], r['rep']] + ['–'] * 10 + ['no data (exit codes %s)' % r.get('rcs')])
            errors.append('incast N=%d hints=%s rep %d: no data' % (r['n'], r['hints'], r['rep']))
            continue
        rows.append([r['n'], r['hints'], r['rep'], '%.0f' % r['goodput_mbps'], pct(r['goodput_frac']),
                     '%.3f' % r['jain_run'], '%.3f' % r['j50_min'], '%.0f%%' % (100 * r['j50_fair']),
                     'never' if r['t_conv_ms'] is None else '%d ms' % r['t_conv_ms'],
                     '%.2f' % r['min_share'], r['retx'], r['tbf_drops'], pct(r['ecn_frac']),
                     ' '.join('%.0f' % x for x in r['sender_mbps']) +
                     ('' if r['ok'] else ' (exit codes %s)' % r['rcs'])])
        if not r['ok']:
            errors.append('incast N=%d hints=%s rep %d: a client failed' % (r['n'], r['hints'], r['rep']))
    table(['N', 'hints', 'rep', 'goodput Mb/s', 'of rate', 'J run', 'J50 min', 'fair%', 't_conv',
           'min share', 'retx', 'tbf drops', 'ECN', 'per-sender Mb/s'], rows,
          ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'])
    reps = max(r['rep'] for r in d) + 1
    if reps > 1:
        md.append('Over the %d repeats, median [min..max]:' % reps)
        md.append('')
        out = []
        for n in sorted({r['n'] for r in d}):
            for h in ('on', 'off'):
                rs = [r for r in d if r['n'] == n and r['hints'] == h and 'jain_run' in r]
                if not rs:
                    continue
                def mm(f, fm):
                    v = [f(r) for r in rs if f(r) is not None]
                    return (fm % st.median(v) + ' [' + fm % min(v) + '..' + fm % max(v) + ']') if v else '–'
                never = sum(1 for r in rs if r['t_conv_ms'] is None)
                out.append([n, h, mm(lambda r: 100 * r['goodput_frac'], '%.1f') + '%',
                            mm(lambda r: r['jain_run'], '%.3f'), mm(lambda r: r['j50_min'], '%.3f'),
                            mm(lambda r: r['t_conv_ms'], '%.0f') + ' ms' + (' (never: %d/%d)' % (never, len(rs)) if never else ''),
                            mm(lambda r: r['min_share'], '%.2f')])
        table(['N', 'hints', 'goodput of rate', 'J run', 'J50 min', 't_conv', 'min share'], out,
              ['r', 'l', 'r', 'r', 'r', 'r', 'r'])
    csv = os.path.join(R.OUT, 'incast-rates.csv')
    if not os.path.exists(csv):
        errors.append('incast-rates.csv missing')
        return
    # per-sender rates, first repeat, 20 ms bins: one panel per (N, hints)
    rates = {}
    bin_ms = None
    for l in list(open(csv))[1:]:
        n, h, rep, s, t, v = l.strip().split(',')
        if rep != '0':
            continue
        rates.setdefault((int(n), h), {}).setdefault(int(s), []).append((float(t), float(v)))
    # every configuration run has its place in the grid, data or not
    panels = sorted({(r['n'], r['hints']) for r in d}, key=lambda k: (k[0], k[1] == 'off'))
    if not rates:
        errors.append('incast-rates.csv: no rows')
        return
    plots = []
    for n, h in panels:
        ok = any(r['n'] == n and r['hints'] == h and r['rep'] == 0 and 'jain_run' in r for r in d)
        if (n, h) not in rates or not ok:
            plots.append(f"set title 'N = {n}, hints {h}'\nset label 1 'no data' at graph 0.5, graph 0.5 center\n"
                         "plot [0:1] [0:1] NaN notitle\nunset label 1")
            continue
        dat = os.path.join(R.TMP, 'incast-%d-%s.dat' % (n, h))
        with open(dat, 'w') as f:
            for s in sorted(rates[(n, h)]):
                pts = sorted(rates[(n, h)][s])
                bin_ms = pts[1][0] - pts[0][0] if len(pts) > 1 else 5
                k = max(1, int(round(20 / bin_ms)))
                for i in range(0, len(pts) - k + 1, k):
                    f.write('%g %g\n' % (pts[i][0], sum(v for _, v in pts[i:i + k]) / k))
                f.write('\n\n')
        plots.append(f"set title 'N = {n}, hints {h}'\n"
                     f"plot for [i=0:{len(rates[(n, h)]) - 1}] '{dat}' index i u 1:2 w l t sprintf('h%d', i)")
    png = os.path.join(R.OUT, 'incast-rates.png')
    nrow = len({p[0] for p in panels})
    ncol = len({p[1] for p in panels})
    gnuplot(TERM % (550 * ncol, 300 * nrow) + f"""
set output '{png}'
set multiplot layout {nrow},{ncol} title 'Incast: per-sender goodput over time, 20 ms bins, first run (commit {R.META['commit']}, {R.META['date']})'
set xlabel "ms from the last sender's start"
set ylabel 'Mbit/s'
set yrange [0:*]
set grid
set key outside right font ',8'
""" + '\n'.join(plots) + '\nunset multiplot\n', png)
