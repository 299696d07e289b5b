"""coexist_report.py: tests/bench/coexist.sh's results: every run's figures
(xroce's and the TCP flows' goodput per second over the time both ran,
xroce's share against its fair share), the comparison of this build with
the --compare build (medians over repeats and orders), xroce alone at
random losses; printed, and as markdown (--md), JSON rows (--json, the
per-second series included), per-second rates (--csv) and a plot (--png).
report_coexist.py (tests/bench/run.sh's part coexist) renders the same
tables from the JSON rows.

  coexist_report.py --runs RUNS_JSONL [--secs S] [--queue-ms MS]
                    [--json F] [--csv F] [--png F] [--md F]

RUNS_JSONL: one line per run, {"dir"}; each dir holds coexist_run.py's
run.json."""
import argparse
import json
import os
import statistics as st
import subprocess
import tempfile

LO, HI = 0.7, 1.5  # target: xroce's share between 0.7 and 1.5 x its fair share


def spread(bins, t0, a0, a1, nbytes, bin_s):
    """Add nbytes, spread uniformly over [a0, a1) (absolute times), to the
    bins of width bin_s starting at t0."""
    if a1 <= a0 or nbytes <= 0:
        return
    k0, k1 = max(0, int((a0 - t0) // bin_s)), min(len(bins) - 1, int((a1 - t0) // bin_s))
    for k in range(k0, k1 + 1):
        ov = min(a1, t0 + (k + 1) * bin_s) - max(a0, t0 + k * bin_s)
        if ov > 0:
            bins[k] += nbytes * ov / (a1 - a0)


def analyse(d):
    """Per-second goodputs of xroce and of every TCP flow over the overlap
    (from the later start on, secs long), and the summary figures."""
    c = d['cfg']
    d_dir = d['dir']
    n, secs, bin_s = c['n'], c['secs'], 1.0
    t0 = max(d['starts'].values())
    nb = int(secs / bin_s)
    row = dict(label=c['label'], rep=c.get('rep', 0), rate=c['rate'], queue=c['queue'], n=n,
               order=c['order'], cc=c['cc'],
               loss=c['loss'], rcs=d['rcs'], host_busy=d['host_busy'], load1=d['load1'],
               tbf_drops=d['counters'].get('tbf_drops'),
               ce_frac=(d['counters']['ce_marked'] / d['counters']['bn_seen']
                        if d['counters'].get('bn_seen') else None),
               rand_drops=d['counters'].get('rand_drops'))
    xb = [0.0] * nb
    summ = None
    try:
        lines = open(os.path.join(d_dir, 'xroce.out')).read().splitlines()
    except OSError:
        lines = []
    for ln in lines:
        try:
            j = json.loads(ln)
        except ValueError:
            continue
        if j.get('mode') == 'interval':
            w = j['wall_ns'] / 1e9
            spread(xb, t0, w - c['sample_s'], w, j['bytes'], bin_s)
        elif j.get('mode') == 'bw':
            summ = j
    row['xroce_retx'] = summ['retx_pkts'] if summ else None
    row['xroce_pkts'] = summ['pkts'] if summ else None
    # TCP: bytes_acked of each data socket between consecutive samples
    flows = {}
    prev = {}
    for t, socks in d['ss']:
        for s in socks:
            p = s['port']
            if p in prev and s['acked'] >= prev[p][1]:
                flows.setdefault(p, [0.0] * nb)
                spread(flows[p], t0, prev[p][0], t, s['acked'] - prev[p][1], bin_s)
            prev[p] = (t, s['acked'], s)
    # iperf3's control connection moves a few bytes: not a flow
    data = {p: b for p, b in flows.items() if sum(b) > 1e6}
    tb = [sum(b[k] for b in data.values()) for k in range(nb)]
    rtts = [s['rtt'] for t, socks in d['ss'] if t0 <= t < t0 + secs
            for s in socks if s['port'] in data and s['rtt']]
    row['tcp_rtt_ms'] = st.median(rtts) if rtts else None
    try:
        ip = json.load(open(os.path.join(d_dir, 'iperf3.json')))
        row['tcp_retx'] = ip['end']['sum_sent'].get('retransmits')
    except (OSError, ValueError, KeyError):
        row['tcp_retx'] = None
    srtts = []
    try:
        for ln in open(os.path.join(d_dir, 'stats.jsonl')):
            j = json.loads(ln)
            if not t0 <= j['time_ns'] / 1e9 + d['mono_to_wall'] < t0 + secs:
                continue
            for cn in j['connections']:
                if cn['tx_bytes']:
                    v = [p['rtt_srtt_ns'] for p in cn['paths'] if p['rtt_srtt_ns']]
                    if v:
                        srtts.append(st.median(v) / 1e6)
    except (OSError, ValueError, KeyError):
        pass
    row['xroce_srtt_ms'] = st.median(srtts) if srtts else None
    ok = all(v == 0 for v in d['rcs'].values()) and summ is not None and len(data) == n
    row['ok'] = ok
    row['tcp_flows_seen'] = len(data)
    mb = lambda v: v * 8 / bin_s / 1e6
    row['xroce_series'] = [mb(v) for v in xb]
    row['tcp_series'] = [mb(v) for v in tb]
    row['tcp_flow_series'] = [[mb(v) for v in b] for b in data.values()]
    x, t = sum(xb), sum(tb)
    row['xroce_mbps'] = x * 8 / secs / 1e6
    row['tcp_mbps'] = t * 8 / secs / 1e6
    row['util'] = (x + t) * 8 / secs / 1e6 / c['rate']
    # xroce's throughput over its fair share of what all flows moved
    row['ratio'] = x * (n + 1) / (x + t) if x + t > 0 else None
    h = nb // 2  # the last half of the run
    xh, th = sum(xb[h:]), sum(tb[h:])
    row['ratio_2nd'] = xh * (n + 1) / (xh + th) if xh + th > 0 else None
    per = [xb[k] * (n + 1) / (xb[k] + tb[k]) for k in range(nb) if xb[k] + tb[k] > 0]
    row['ratio_sec_min'] = min(per) if per else None
    row['ratio_sec_med'] = st.median(per) if per else None
    # the smallest TCP flow over its own fair share: nobody starved
    if data and x + t > 0:
        row['tcp_min_ratio'] = min(sum(b) for b in data.values()) * (n + 1) / (x + t)
    else:
        row['tcp_min_ratio'] = None
    return row


# ---- tables -------------------------------------------------------------------

def fmt(v, f, none='–'):
    return none if v is None else f % v


def med(v):
    v = [x for x in v if x is not None]
    return st.median(v) if v else None


def where(r):
    """The bottleneck of a row, in words."""
    q = {'droptail': 'drop-tail (router)', 'ecn': 'ECN marking (fabric)',
         'alone': 'drop-tail (fabric)'}.get(r['queue'], r['queue'])
    if r['queue'] == 'lossy':
        q = 'drop-tail (fabric), %g%% random loss before it' % (100 * r['loss'])
    return '%g Gbit/s %s' % (r['rate'] / 1000, q)


def load_rows(path):
    rows = []
    for ln in open(path):
        if not ln.strip():
            continue
        dr = json.loads(ln)['dir']
        try:
            d = json.load(open(os.path.join(dr, 'run.json')))
        except (OSError, ValueError):
            try:
                c = json.load(open(os.path.join(dr, 'cfg.json')))
            except (OSError, ValueError):
                continue
            rows.append(dict(label=c['label'], rep=c['rep'], rate=c['rate'], queue=c['queue'],
                             n=c['n'], order=c['order'], cc=c['cc'], loss=c['loss'], ok=False,
                             rcs='no data'))
            continue
        d['dir'] = dr
        rows.append(analyse(d))
    return rows


def compare_table(rows):
    """Side by side: this build ("new") and the --compare build ("base"),
    medians over repeats and both orders, per bottleneck and TCP flow count.
    Markdown lines and terminal lines."""
    labels = [l for l in ('new', 'base') if any(r['label'] == l for r in rows)]
    keys = []
    for r in rows:
        k = (r['queue'], r['rate'], r['loss'], r['n'], r['cc'])
        if k not in keys and r['queue'] != 'alone':
            keys.append(k)
    hdr = ['bottleneck', 'TCP flows']
    for l in labels:
        hdr += ['xroce Mb/s [%s]' % l, 'TCP Mb/s [%s]' % l, 'link used [%s]' % l, 'xroce / fair [%s]' % l]
    md = ['| ' + ' | '.join(hdr) + ' |', '|' + '|'.join([':---', ':---'] + ['---:'] * (len(hdr) - 2)) + '|']
    term = ['%-58s %-8s' % ('bottleneck', 'TCP') + ''.join(
        '  %33s' % ('[%s] xroce / TCP Mb/s, used, x/fair' % l) for l in labels)]
    for k in keys:
        rs = [r for r in rows if (r['queue'], r['rate'], r['loss'], r['n'], r['cc']) == k]
        cells = [where(rs[0]), '%d %s' % (k[3], k[4])]
        tl = '%-58s %-8s' % (where(rs[0]), '%d %s' % (k[3], k[4]))
        for l in labels:
            s = [r for r in rs if r['label'] == l and 'ratio' in r]
            x, t, f = (med([r['xroce_mbps'] for r in s]), med([r['tcp_mbps'] for r in s]),
                       med([r['ratio'] for r in s]))
            u = med([r['util'] for r in s])
            inside = f is not None and LO <= f <= HI
            cells += [fmt(x, '%.0f'), fmt(t, '%.0f'), fmt(None if u is None else 100 * u, '%.0f%%'),
                      (('**%s**' if inside else '%s') % fmt(f, '%.2f')) + (' (%d runs)' % len(s) if len(s) > 1 else '')]
            tl += '  %6s / %6s Mb/s, %4s, %5s%s' % (fmt(x, '%.0f'), fmt(t, '%.0f'),
                                                     fmt(None if u is None else 100 * u, '%.0f%%'),
                                                     fmt(f, '%.2f'), ' ' if inside or f is None else '!')
        md.append('| ' + ' | '.join(cells) + ' |')
        term.append(tl)
    return md + [''], term


def runs_table(rows):
    """One line per run beside TCP."""
    hdr = ['bottleneck', 'build', 'rep', 'TCP', 'first', 'xroce Mb/s', 'TCP Mb/s', 'link used',
           'xroce / fair', 'last half', 'per second: min / median', 'least TCP flow / fair',
           'tbf drops', 'CE marked', 'xroce srtt ms', 'TCP rtt ms', 'load']
    md = ['| ' + ' | '.join(hdr) + ' |', '|' + '|'.join([':---'] + ['---:'] * (len(hdr) - 1)) + '|']
    term = []
    for r in rows:
        q = where(r)
        if 'ratio' not in r:
            md.append('| %s | %s | %d | %d %s | %s | no data (%s) |' % (
                q, r['label'], r['rep'], r['n'], r['cc'], r['order'], r['rcs']))
            term.append('%s [%s] N=%d %s first: no data (%s)' % (q, r['label'], r['n'], r['order'], r['rcs']))
            continue
        flag = '' if r['ok'] else ' (incomplete: exit codes %s, %d TCP flows seen)' % (
            r['rcs'], r['tcp_flows_seen'])
        inside = r['ratio'] is not None and LO <= r['ratio'] <= HI
        ce = None if r['ce_frac'] is None else 100 * r['ce_frac']
        cells = [q, r['label'], r['rep'], '%d %s' % (r['n'], r['cc']), r['order'], '%.0f' % r['xroce_mbps'],
                 '%.0f' % r['tcp_mbps'], '%.0f%%' % (100 * r['util']),
                 ('**%s**' if inside else '%s') % fmt(r['ratio'], '%.2f') + flag,
                 fmt(r['ratio_2nd'], '%.2f'),
                 fmt(r['ratio_sec_min'], '%.2f') + ' / ' + fmt(r['ratio_sec_med'], '%.2f'),
                 fmt(r['tcp_min_ratio'], '%.2f'), fmt(r['tbf_drops'], '%d'), fmt(ce, '%.1f%%'),
                 fmt(r['xroce_srtt_ms'], '%.2f'), fmt(r['tcp_rtt_ms'], '%.2f'), '%.1f' % r['load1']]
        md.append('| ' + ' | '.join(str(x) for x in cells) + ' |')
        term.append('%-58s [%-4s] N=%d %-5s first  xroce %5.0f  TCP %5.0f Mb/s  used %3.0f%%  xroce/fair %s '
                    '(last half %s, per-s min %s)  least TCP/fair %s  drops %s  CE %s  srtt %s/%s ms  load %.1f%s' % (
                        q, r['label'], r['n'], r['order'], r['xroce_mbps'], r['tcp_mbps'], 100 * r['util'],
                        fmt(r['ratio'], '%.2f'), fmt(r['ratio_2nd'], '%.2f'), fmt(r['ratio_sec_min'], '%.2f'),
                        fmt(r['tcp_min_ratio'], '%.2f'), fmt(r['tbf_drops'], '%d'), fmt(ce, '%.1f%%'),
                        fmt(r['xroce_srtt_ms'], '%.2f'), fmt(r['tcp_rtt_ms'], '%.2f'), r['load1'], flag))
    return md + [''], term


def alone_table(rows):
    """xroce alone through the bottleneck at random losses upstream."""
    base = {}
    for r in rows:
        if r.get('loss') == 0 and 'xroce_mbps' in r:
            base.setdefault(r['label'], []).append(r['xroce_mbps'])
    md = ['| build | rep | random loss | xroce Mb/s | of loss-free | of the tbf rate | retransmitted | tbf drops | load |',
          '|:---|---:|---:|---:|---:|---:|---:|---:|---:|']
    term = []
    for r in rows:
        if 'xroce_mbps' not in r:
            md.append('| %s | %d | %g%% | no data (%s) |' % (r['label'], r['rep'], 100 * r['loss'], r['rcs']))
            continue
        b = med(base.get(r['label'], []))
        rel = 100 * r['xroce_mbps'] / b if b else None
        retx = 100 * r['xroce_retx'] / r['xroce_pkts'] if r.get('xroce_pkts') else None
        md.append('| %s | %d | %g%% | %.0f | %s | %.1f%% | %s | %s | %.1f |' % (
            r['label'], r['rep'], 100 * r['loss'], r['xroce_mbps'], fmt(rel, '%.1f%%'),
            100 * r['xroce_mbps'] / r['rate'], fmt(retx, '%.1f%%'), fmt(r['tbf_drops'], '%d'), r['load1']))
        term.append('alone %g Gbit/s [%-4s] loss %5s  xroce %5.0f Mb/s  %s of loss-free  %.1f%% of the tbf rate  retx %s' % (
            r['rate'] / 1000, r['label'], '%g%%' % (100 * r['loss']), r['xroce_mbps'], fmt(rel, '%.1f%%'),
            100 * r['xroce_mbps'] / r['rate'], fmt(retx, '%.1f%%')))
    return md + [''], term


def tables(rows, secs, queue_ms):
    """All tables: (markdown lines, terminal lines)."""
    md, term = [], []
    co = [r for r in rows if r['queue'] != 'alone']
    al = [r for r in rows if r['queue'] == 'alone']
    if co:
        m, t = compare_table(co)
        md += ['**xroce beside TCP**, one bottleneck (tbf, queue %s ms of its rate). "xroce / fair" is '
               'xroce\'s bytes x (N + 1) over all flows\' bytes during the %s s both ran: 1.0 is an exact '
               'fair share of what the link carried (target %.1f-%.1f, in bold when met); "link used": both '
               'flows\' goodput over the tbf rate (payload can reach ~93%%; well below that, the hosts\' CPUs, '
               'not the bottleneck, limited the flows, and the shares say little about the queue). "new": this build; "base": '
               'the --compare build (when run), each run beside the other. Medians over repeats and both '
               'starting orders:' % (queue_ms, secs, LO, HI), ''] + m
        term += ['xroce beside TCP (medians; x/fair target %.1f-%.1f, "!" outside):' % (LO, HI)] + t + ['']
        m, t = runs_table(co)
        md += ['Every run ("least TCP flow / fair": the TCP flow that got least, over its fair share):', ''] + m
        term += ['every run:'] + t + ['']
    if al:
        m, t = alone_table(al)
        md += ['**xroce alone through the bottleneck** (fabric, drop-tail), random loss on the switch\'s '
               'ingress from the sender, before the bottleneck:', ''] + m
        term += t
    return md, term


# ---- files --------------------------------------------------------------------

def write_csv(rows, path):
    with open(path, 'w') as f:
        f.write('queue,rate,build,rep,n,order,loss,cc,t_s,xroce_mbps,tcp_mbps,tcp_flow_mbps\n')
        for r in rows:
            if r['queue'] == 'alone':
                continue
            for k, (x, t) in enumerate(zip(r.get('xroce_series', []), r.get('tcp_series', []))):
                fl = ' '.join('%.1f' % s[k] for s in r['tcp_flow_series'])
                f.write('%s,%d,%s,%d,%d,%s,%g,%s,%d,%.1f,%.1f,%s\n' % (
                    r['queue'], r['rate'], r['label'], r['rep'], r['n'], r['order'], r['loss'], r['cc'],
                    k, x, t, fl))


def plot_script(rows, png, tmp):
    """A gnuplot script for PNG: one panel per bottleneck, TCP flow count
    and build (first repeat, first order), xroce and TCP per second; its
    data files in tmp.  None when there is nothing to plot."""
    rows = [r for r in rows if 'xroce_series' in r and r['queue'] != 'alone']
    panels, seen = [], set()
    for r in rows:
        k = (r['queue'], r['rate'], r['loss'], r['n'], r['cc'], r['label'])
        if k in seen:
            continue
        seen.add(k)
        n = r['n']
        dat = os.path.join(tmp, 'coexist-%s-%d-%g-%d-%s-%s.dat' % k)
        with open(dat, 'w') as f:
            for i, (x, t) in enumerate(zip(r['xroce_series'], r['tcp_series'])):
                f.write('%d %.1f %.1f %.1f\n' % (i, x, t, (x + t) / (n + 1)))
        short = {'droptail': 'drop-tail', 'ecn': 'ECN', 'lossy': 'drop-tail'}[r['queue']]
        title = '%g Gb/s %s%s, %d TCP %s, %s first [%s]: x/fair %.2f' % (
            r['rate'] / 1000, short, ' %g%% loss' % (100 * r['loss']) if r['loss'] else '', n, r['cc'],
            r['order'], r['label'], r['ratio'] or 0)
        panels.append("set title '%s'\nplot '%s' u 1:2 w lp pt 7 ps 0.4 lw 2 t 'xroce', "
                      "'' u 1:3 w lp pt 5 ps 0.4 t 'TCP, all %d', '' u 1:4 w l dt 2 lc rgb 'gray' "
                      "t 'fair share'" % (title, dat, n))
    if not panels:
        return None
    cols = 2 if any(r['label'] == 'base' for r in rows) else min(3, len(panels))
    nrows = (len(panels) + cols - 1) // cols
    return ("set terminal pngcairo size %d,%d font 'Sans,9'\nset output '%s'\n"
            "set multiplot layout %d,%d title 'xroce beside TCP through one bottleneck: Mbit/s per second'\n"
            "set xlabel 's from the later start'\nset ylabel 'Mbit/s'\nset yrange [0:*]\nset grid\n"
            "set key top right font ',7'\n" % (460 * cols, 260 * nrows, png, nrows, cols)
            + '\n'.join(panels) + '\nunset multiplot\n')


def slim(r):
    """A row for JSON: everything but the raw samples."""
    return {k: v for k, v in r.items() if k != 'ss'}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', required=True)
    ap.add_argument('--secs', type=int, default=15)
    ap.add_argument('--queue-ms', type=float, default=5)
    ap.add_argument('--json', default='')
    ap.add_argument('--csv', default='')
    ap.add_argument('--png', default='')
    ap.add_argument('--md', default='')
    a = ap.parse_args()
    rows = load_rows(a.runs)
    md, term = tables(rows, a.secs, a.queue_ms)
    print('\n'.join(term))
    if a.json:
        json.dump(dict(secs=a.secs, queue_ms=a.queue_ms, rows=[slim(r) for r in rows]),
                  open(a.json, 'w'), indent=1)
    if a.csv:
        write_csv(rows, a.csv)
    rc = 0
    if a.png:
        with tempfile.TemporaryDirectory() as tmp:
            s = plot_script(rows, a.png, tmp)
            if s:
                gp = os.path.join(tmp, 'coexist.gp')
                open(gp, 'w').write(s)
                p = subprocess.run(['gnuplot', gp], capture_output=True, text=True)
                if p.returncode:
                    print('gnuplot: ' + p.stderr[-400:])
                    rc = 1
                md += ['![xroce beside TCP, per second](%s)' % os.path.basename(a.png), '']
    if a.md:
        open(a.md, 'w').write('\n'.join(md) + '\n')
    return rc if all(r.get('ok') for r in rows) else 1


if __name__ == '__main__':
    raise SystemExit(main())
