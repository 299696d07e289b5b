"""report_txengine.py: part txengine of tests/bench/run.sh's report: the
transmit engines' raw packet rates (the summary table txengine.sh printed
into the part's log) beside xroce's loss-free goodput on each of its
engines; writes txengine.json."""
import json
import os
import re

import report_common as R
from report_common import errors, load, md, pct, table

TITLE = 'Transmit engines: raw packet rate beside xroce'


SUMMARY = re.compile(r'^(\w+)\s+(\d+)\s+(\d+)\s+(\S+)\s+([\d.]+) \[\s*([\d.]+)\.\.\s*([\d.]+)\]\s+'
                     r'([\d.]+) \[\s*([\d.]+)\.\.\s*([\d.]+)\]\s+(\d+) \[\s*(\d+)\.\.\s*(\d+)\]\s+'
                     r'([\d.]+)\s+([\d.]+)\s*$')


def run():
    try:
        text = open(R.args.log).read()
    except OSError as e:
        errors.append(str(e))
        return
    # the last run in the log: from its "Summary over" line on
    i = text.find('Summary over')
    if i < 0:
        errors.append('txengine: no summary table in its output')
        return
    rows, desc = [], {}
    for l in text[i:].splitlines()[1:]:
        if l.startswith('$ '):
            break  # the next command's output
        m = SUMMARY.match(l.strip())
        if m:
            g = m.groups()
            rows.append(dict(variant=g[0], payload=int(g[1]), frame=int(g[2]),
                             batch=None if g[3] == '-' else int(g[3]),
                             mpps=float(g[4]), mpps_min=float(g[5]), mpps_max=float(g[6]),
                             gbps=float(g[7]), gbps_min=float(g[8]), gbps_max=float(g[9]),
                             cpu_ns_pkt=float(g[10]), cpu_ns_min=float(g[11]), cpu_ns_max=float(g[12]),
                             loss_pct=float(g[13]), mpps_per_core=float(g[14])))
            continue
        m = re.match(r'^\s+(\w+)\s{2,}(\S.*)$', l)
        if m and not m.group(1).isdigit():
            desc[m.group(1)] = m.group(2).strip()
    rounds = re.search(r'Summary over (\d+) round', text[i:])
    if not rows:
        errors.append('txengine: summary table empty or not understood')
        return
    for r in rows:
        r['desc'] = desc.get(r['variant'], '')
        r['payload_gbps'] = r['mpps'] * r['payload'] * 8 / 1e3
    # xroce's loss-free goodput on each engine: the default one from part
    # loss, the other measured by this part; keyed by the engine each run
    # reports (perf's tx_engine).
    by_engine = {}
    srcs = [load('txengine-xroce-other.json')]
    if R.args.with_loss == '1':
        srcs.insert(0, load('loss-1500.json'))
    for d in srcs:
        x = next((r for r in d or [] if r['loss'] == 0 and r['xroce_gbps'] > 0), None)
        if x:
            by_engine.setdefault(x.get('xroce_tx_engine', '?'), x)
    if not by_engine:
        errors.append('xroce: no loss-free goodput on either engine')
    xr, xt = by_engine.get('af_xdp'), by_engine.get('test_run')
    json.dump(dict(rounds=int(rounds.group(1)) if rounds else None, engines=rows,
                   xroce_af_xdp_loss_free_1500=xr, xroce_test_run_loss_free_1500=xt),
              open(os.path.join(R.OUT, 'txengine.json'), 'w'), indent=1)
    md.append('Frames sent by each engine from one namespace to an XDP program that counts and drops '
              'them in another (veth), median [min..max] over the rounds; Gb/s counts whole frames, '
              '"payload Gb/s" the payload alone (Mpps × payload). CPU: sender thread + ksoftirqd per '
              'delivered frame. "xroce of it": xroce\'s loss-free goodput (part loss, MTU 1500, one '
              'connection, 1408 B segments: the same frames as the 1408 B rows) as a fraction of this '
              'engine\'s payload rate, on each of xroce\'s two engines: af_xdp '
              '(`XROCE_TX_ENGINE=af_xdp`, variant a2\'s way) and test_run (XDP builds the frames '
              'from descriptors, variant c\'s way; the default here, where AF_XDP would be copy '
              'mode). Target: xroce reaches ≥ 85% of the raw rate of the engine it uses.')
    md.append('')
    out = []
    for r in rows:
        fa = ft = ''
        if r['payload'] == 1408 and r['payload_gbps'] > 0:
            fa = pct(xr['xroce_gbps'] / r['payload_gbps']) if xr else ''
            ft = pct(xt['xroce_gbps'] / r['payload_gbps']) if xt else ''
        out.append(['%s: %s' % (r['variant'], r['desc']) if r['desc'] else r['variant'], r['payload'], r['frame'],
                    r['batch'] or '–', '%.2f [%.2f..%.2f]' % (r['mpps'], r['mpps_min'], r['mpps_max']),
                    '%.1f' % r['gbps'], '%.2f' % r['payload_gbps'], '%.0f' % r['cpu_ns_pkt'],
                    '%.2f' % r['mpps_per_core'], '%.1f' % r['loss_pct'], fa, ft])
    for x, name in ((xr, 'af_xdp engine'), (xt, 'test_run engine')):
        if x:
            out.append(['**xroce**, %s: one connection, 8 paths, MTU 1500, loss-free' % name, 1408, 1514, '–',
                        '%.3f (data pkts)' % x.get('xroce_mpps', float('nan')), '–',
                        '%.2f (goodput)' % x['xroce_gbps'], '–', '–', '–', '', ''])
    for x, name in ((xr, 'af_xdp'), (xt, 'test_run')):
        if not x:
            md.append('(xroce on %s: not measured in this run.)' % name)
            md.append('')
    table(['engine', 'payload B', 'frame B', 'batch', 'Mpps', 'Gb/s', 'payload Gb/s', 'CPU ns/pkt',
           'Mpps/core', 'loss%', 'xroce af_xdp of it', 'xroce test_run of it'], out,
          ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'])
