"""incast_report.py: tests/bench/incast.sh's results: every run's figures
(incast_analyse.py) as a table, the per-configuration spread over repeats,
a coarse per-sender timeline (unless --quiet), OUT/rates.csv (every
sender's Mbit/s per bin, every run) and the rows as JSON.

  incast_report.py --runs RUNS_JSONL --out DIR [--json FILE] [--quiet]

RUNS_JSONL: one line per run, {"n", "hints", "rep", "dir", "secs", "rate",
"bin_ms", "window_ms", "fair"}; each dir holds incast_run.py's run.json."""
import argparse
import json
import os
import statistics as st

from incast_analyse import analyse


def pct(v):
    return '%.1f' % (100 * v)


def fmt(v, f):
    return '-' if v is None else f % v


HDR = ('%-3s %-5s %-3s %8s %6s %6s %6s %6s %5s %6s %6s %6s %6s %6s %6s %6s %5s %5s %5s %4s %5s' %
       ('N', 'hints', 'rep', 'goodput', '%rate', 'J run', 'J50mn', 'J50md', 'fair%', 't_conv',
        'minsh', 'retx', 'tbfdr', 'vethd', 'xrdr', 'ECN%', 'hint', 'cwnd', 'skew', 'bg%', 'bgrun'))


def line(r):
    if 'jain_run' not in r:
        return '%-3d %-5s %-3s  (no data: exit codes %s)' % (r['n'], r['hints'], r['rep'], r['rcs'])
    return ('%-3d %-5s %-3s %8.1f %6s %6.3f %6.3f %6.3f %5.0f %6s %6.2f %6d %6d %6d %6d %6s %5s %5s %5.0f %4.0f %5.1f%s' %
            (r['n'], r['hints'], r['rep'], r['goodput_mbps'], pct(r['goodput_frac']),
             r['jain_run'], r['j50_min'], r['j50_med'], 100 * r['j50_fair'],
             'never' if r['t_conv_ms'] is None else '%d' % r['t_conv_ms'],
             r['min_share'], r['retx'], r['tbf_drops'], r['veth_drops'], r['xr_drops'], pct(r['ecn_frac']),
             fmt(r['hint_med'], '%.0f'), fmt(r['cwnd_med'], '%.0f'), r['skew_ms'], 100 * r['host_busy'], r['host_runnable'],
             '' if r['ok'] else '  ERROR exit codes %s' % r['rcs']))


def report(a):
    cfgs = [json.loads(l) for l in open(a.runs)]
    rows, csv = [], open(os.path.join(a.out, 'rates.csv'), 'w')
    csv.write('n,hints,rep,sender,t_ms,mbps\n')
    for cfg in cfgs:
        try:
            r = json.load(open(os.path.join(cfg['dir'], 'run.json')))
        except (OSError, ValueError):
            rows.append(dict(n=cfg['n'], hints=cfg['hints'], rep=cfg['rep'], ok=False, rcs=['?']))
            continue
        row, tl = analyse(r, cfg)
        rows.append(row)
        if tl:
            for i, b in enumerate(tl[1]):
                for k, v in enumerate(b):
                    csv.write('%d,%s,%d,%d,%g,%.2f\n' % (cfg['n'], cfg['hints'], cfg['rep'], i,
                                                       k * cfg['bin_ms'], v * 8 / (cfg['bin_ms'] / 1000) / 1e6))
            if not a.quiet:
                # a coarse timeline: every sender's Mbit/s per 20 ms, first 200 ms
                step = max(1, int(round(20 / cfg['bin_ms'])))
                print('  N=%d hints=%s rep %d: per-sender Mbit/s, 20 ms steps from t=0:' %
                      (cfg['n'], cfg['hints'], cfg['rep']))
                for i, b in enumerate(tl[1]):
                    v = [sum(b[k:k + step]) * 8 / (step * cfg['bin_ms'] / 1000) / 1e6
                         for k in range(0, min(len(b), 10 * step), step)]
                    print('    h%-2d %s' % (i, ' '.join('%5.0f' % x for x in v)))
    csv.close()
    print()
    print(HDR)
    for r in rows:
        print(line(r))
    # run-to-run variation: median [min..max] per configuration
    keys = sorted({(r['n'], r['hints']) for r in rows}, key=lambda k: (k[0], k[1] == 'off'))
    if max(r['rep'] for r in rows) > 0:
        print('\nper configuration over repeats: median [min..max]')
        for k in keys:
            rs = [r for r in rows if (r['n'], r['hints']) == k and 'jain_run' in r]
            if not rs:
                continue

            def mm(f, fm='%.3f'):
                v = [f(r) for r in rs if f(r) is not None]
                return (fm % st.median(v) + ' [' + fm % min(v) + '..' + fm % max(v) + ']') if v else '-'
            never = sum(1 for r in rs if r['t_conv_ms'] is None)
            print('N=%d hints=%-3s goodput%% %s  J run %s  J50 min %s  fair%% %s  t_conv ms %s%s  retx %s  tbf drops %s' %
                  (k[0], k[1], mm(lambda r: 100 * r['goodput_frac'], '%.1f'), mm(lambda r: r['jain_run']),
                   mm(lambda r: r['j50_min']), mm(lambda r: 100 * r['j50_fair'], '%.0f'),
                   mm(lambda r: r['t_conv_ms'], '%.0f'),
                   ' (never: %d/%d)' % (never, len(rs)) if never else '',
                   mm(lambda r: r['retx'], '%d'), mm(lambda r: r['tbf_drops'], '%d')))
    if a.json:
        json.dump(rows, open(a.json, 'w'), indent=1)
    print('\nrates per %d ms bin: %s' % (cfgs[0]['bin_ms'], os.path.join(a.out, 'rates.csv')))


ap = argparse.ArgumentParser()
ap.add_argument('--runs', required=True)
ap.add_argument('--out', required=True)
ap.add_argument('--json', default='')
ap.add_argument('--quiet', action='store_true')
report(ap.parse_args())
