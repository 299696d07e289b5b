"""incast_analyse.py: the figures of one incast run (tests/bench/incast.sh's
header defines them: start, bins, Jain, t_conv, minshare, goodput, ...)
from its run.json and telemetry samples.  Used by incast_report.py."""
import json
import os
import statistics as st


def jain(xs):
    s, q = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else 0.0


def analyse(r, cfg):
    """One run: the figures of the header's definitions; returns the row
    and (T0, per-sender bins) or None when there is no timeline."""
    n, bin_s, win_s = r['n'], cfg['bin_ms'] / 1000, cfg['window_ms'] / 1000
    cl = r['clients']
    ok = all(rc == 0 for rc in r['rcs']) and all(c['summary'] for c in cl) and \
        all(c['intervals'] for c in cl)
    row = dict(n=n, hints=cfg['hints'], rep=cfg['rep'], ok=ok, rcs=r['rcs'],
               host_busy=r['host_busy'][0], host_runnable=r['host_busy'][1])
    cn = r['counters']
    row.update(tbf_drops=cn.get('tbf_drops', 0), veth_drops=cn.get('veth_drops', 0),
               fab_drops=cn.get('fab_drops', 0),
               xr_drops=sum(v for k, v in cn.items() if k.startswith(('r_drop', 'h_drop'))),
               xr_drop_kinds={k: v for k, v in cn.items() if k.startswith(('r_drop', 'h_drop')) and v},
               ecn_frac=cn['bn_ce'] / cn['bn_rx'] if cn.get('bn_rx') else 0.0,
               retx=sum(c['summary']['retx_pkts'] for c in cl if c['summary']),
               pkts=sum(c['summary']['pkts'] for c in cl if c['summary']))
    if not all(c['intervals'] for c in cl):
        return row, None
    # A client's start: from its rows' wall clock stamps when it prints
    # them (exact), else from their arrival here (an upper bound each).
    starts = [st.median(w - t_ms / 1000 for _, t_ms, _, w in c['intervals'])
              if c['intervals'][0][3] is not None else
              min(now - t_ms / 1000 for now, t_ms, _, _ in c['intervals']) for c in cl]
    T0, T1 = max(starts), min(starts) + cfg['secs']
    row['skew_ms'] = 1000 * (T0 - min(starts))
    nb = int((T1 - T0) / bin_s)
    row['dur_s'] = nb * bin_s
    bins = [[0.0] * nb for _ in range(n)]
    for i, c in enumerate(cl):
        prev = 0.0
        for _, t_ms, b, _ in c['intervals']:
            a0, a1 = starts[i] + prev - T0, starts[i] + t_ms / 1000 - T0
            prev = t_ms / 1000
            if a1 <= a0 or b == 0:
                continue
            # spread b uniformly over [a0, a1) onto the bins it overlaps
            k0, k1 = max(0, int(a0 // bin_s)), min(nb - 1, int(a1 // bin_s))
            for k in range(k0, k1 + 1):
                ov = min(a1, (k + 1) * bin_s) - max(a0, k * bin_s)
                if ov > 0:
                    bins[i][k] += b * ov / (a1 - a0)
    skip = int(round(0.1 / bin_s))
    tot = [sum(bins[i][skip:]) for i in range(n)]
    wb = max(1, int(round(win_s / bin_s)))
    row['goodput_mbps'] = sum(sum(b) for b in bins) * 8 / (nb * bin_s) / 1e6
    row['goodput_frac'] = row['goodput_mbps'] / cfg['rate']
    row['jain_run'] = jain(tot)
    fair = sum(tot) / n
    row['min_share'] = min(tot) / fair if fair else 0.0
    row['sender_mbps'] = [t * 8 / ((nb - skip) * bin_s) / 1e6 for t in tot]
    blocks = [jain([sum(bins[i][k:k + wb]) for i in range(n)])
              for k in range(skip, nb - wb + 1, wb)]
    row['j50_min'] = min(blocks) if blocks else 0.0
    row['j50_med'] = st.median(blocks) if blocks else 0.0
    row['j50_fair'] = sum(1 for j in blocks if j >= cfg['fair']) / len(blocks) if blocks else 0.0
    slide = [jain([sum(bins[i][k:k + wb]) for i in range(n)]) for k in range(0, nb - wb + 1)]
    conv = None
    for k in range(len(slide) - 1, -1, -1):
        if slide[k] < cfg['fair']:
            break
        conv = k
    row['t_conv_ms'] = None if conv is None else conv * cfg['bin_ms']
    # telemetry: hints and windows the senders held after the first 100 ms
    hints, cw = [], []
    for i in range(n):
        try:
            for l in open(os.path.join(cfg['dir'], 'stats%d.jsonl' % i)):
                d = json.loads(l)
                if d['time_ns'] / 1e9 < T0 + 0.1 or d['time_ns'] / 1e9 > T1:
                    continue
                for c in d['connections']:
                    if c['tx_bytes']:
                        hints.append(c['rate_hint_mbps'])
                        cw.append(sum(p['cwnd'] for p in c['paths']))
        except (OSError, ValueError, KeyError):
            pass
    row['hint_med'] = st.median(hints) if hints else None
    row['cwnd_med'] = st.median(cw) if cw else None
    return row, (T0, bins)
