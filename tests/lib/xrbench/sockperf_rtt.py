"""sockperf_rtt.py: round-trip figures from `sockperf ping-pong --full-rtt`
output, for latency.sh: "min p50 p99 p999 dropped" in microseconds (nan
for what the output lacks: a run that stalled on a lost message).

  sockperf_rtt.py FILE"""
import re
import sys

t = re.sub(r'\x1b\[[0-9;]*m', '', open(sys.argv[1]).read())


def g(pat):
    m = re.search(pat, t)
    return float(m.group(1)) if m else float('nan')


drop = re.search(r'# dropped messages = (\d+)', t)
print(g(r'<MIN> observation =\s*([\d.]+)'), g(r'percentile 50\.000 =\s*([\d.]+)'),
      g(r'percentile 99\.000 =\s*([\d.]+)'), g(r'percentile 99\.900 =\s*([\d.]+)'),
      drop.group(1) if drop else 'nan')
