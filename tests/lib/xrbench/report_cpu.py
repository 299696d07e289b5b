"""report_cpu.py: part cpu of tests/bench/run.sh's report: CPU-seconds per GB
moved, xroce beside TCP, from part loss's loss-free runs; writes cpu.json."""
import json
import os

import report_common as R
from report_common import errors, load, md, num, table

TITLE = 'CPU cost per GB'


def run():
    md.append('CPU-seconds per GB moved in the loss-free runs of part loss, machine-wide: busy time '
              '(user + nice + system + irq + softirq) of all %d CPUs from /proc/stat, right before and '
              'after each client, over the bytes it moved. On veth the receiver\'s and the switch\'s '
              'work runs in the sender\'s softirq, so this counts sender, receiver and switch '
              'together, and anything else the host ran meanwhile: "host busy before" is the share '
              'of all CPUs busy during 1 s before the sweep with no traffic. "xroce client process": '
              'the perf client\'s own CPU time (getrusage), for comparison.' % R.META['ncpu'])
    md.append('')
    out, cj = [], []
    for mtu in (1500, 9000):
        d = load('loss-%d.json' % mtu)
        r = next((r for r in d or [] if r['loss'] == 0), None)
        if not r:
            continue
        if not r['xroce_bytes'] or not r['tcp_bytes']:
            errors.append('cpu: MTU %d: a loss-free run moved no bytes' % mtu)
        if 'xroce_cpu_s_per_gb' not in r:
            errors.append('loss-%d.json has no CPU fields (old loss_sweep.sh?)' % mtu)
            continue
        x, t = r['xroce_cpu_s_per_gb'], r['tcp_cpu_s_per_gb']
        out.append([mtu, 'on' if r['tcp_gso'] else 'off', num(r['xroce_gbps']), num(x, '%.2f'),
                    num(r['tcp_gbps']), num(t, '%.2f'), num(x / t if t else None, '%.2f×'),
                    num(r.get('xroce_client_cpu_s_per_gb'), '%.2f'), '%.0f%%' % (100 * r['bg_cpu_frac'])])
        cj.append(dict(mtu=mtu, tcp_gso=r['tcp_gso'], secs=r['secs'], xroce_gbps=r['xroce_gbps'],
                       xroce_cpu_s_per_gb=x, tcp_gbps=r['tcp_gbps'], tcp_cpu_s_per_gb=t,
                       xroce_client_cpu_s_per_gb=r.get('xroce_client_cpu_s_per_gb'),
                       bg_cpu_frac=r['bg_cpu_frac']))
    if not out:
        errors.append('cpu: no loss-free rows')
        return
    table(['MTU', 'TCP TSO/GSO', 'xroce Gb/s', 'xroce CPU-s/GB', 'TCP Gb/s', 'TCP CPU-s/GB',
           'xroce / TCP', 'xroce client process CPU-s/GB', 'host busy before'], out)
    json.dump(cj, open(os.path.join(R.OUT, 'cpu.json'), 'w'), indent=1)
