"""report_router.py: part router of tests/bench/run.sh's report: round
trips through a plain Linux router namespace, xroce beside UDP and TCP
ping-pong (router_lat.sh's router.json), medians of interleaved repeats."""
import report_common as R
from report_common import load, md, num, table

TITLE = 'Latency through a Linux router'


def run():
    d = load('router.json')
    if not d:
        return
    md.append('Round trip in µs through a plain Linux router namespace (kernel forwarding, '
              'no project fabric; MTU 1500), one connection; each figure is the median over '
              'interleaved repeats of one run\'s statistic. xroce: `xroce perf client --mode lat` '
              '(busy-polling both ends) and `--wait` (sleeping on the completion event); UDP and '
              'TCP: sockperf ping-pong (TCP_NODELAY). Target: xroce\'s median and p99 at most '
              'UDP\'s (the two ratio columns ≤ 1).')
    md.append('')
    rows = [[r['size'], r['transport'], num(r['min_us'], '%.1f'), num(r['p50_us'], '%.1f'),
             num(r['p99_us'], '%.1f'), num(r['p999_us'], '%.1f'),
             num(r.get('p50_vs_udp'), '%.2f×'), num(r.get('p99_vs_udp'), '%.2f×'),
             '%d/%d' % (r['ok'], r['runs'])] for r in d]
    table(['size B', 'transport', 'min', 'median', 'p99', 'p99.9', 'median / UDP', 'p99 / UDP',
           'runs ok'], rows, ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'])
    if any(r['ok'] < r['runs'] for r in d):
        R.errors.append('router: some runs gave no figures (see router.log)')
