"""report_coexist.py: part coexist of tests/bench/run.sh's report: one
xroce connection beside TCP flows through one bottleneck (coexist.sh's
coexist.json): the comparison with the baseline build, every run, xroce
alone at random losses (coexist_report.py's tables), and coexist.png."""
import os

import coexist_report as C
import report_common as R
from report_common import errors, load, md

TITLE = 'Beside TCP through one bottleneck'


def run():
    d = load('coexist.json')
    if not d:
        return
    rows = d['rows']
    if not any(r['label'] == 'base' for r in rows):
        md.append('(No baseline build: `make bench XROCE_BASE=/path/to/old/build/xroce` runs one '
                  'beside this build.)')
        md.append('')
    m, _ = C.tables(rows, d['secs'], d['queue_ms'])
    md.extend(m)
    for r in rows:
        if not r.get('ok'):
            errors.append('coexist %s, %s, N=%d, %s first: incomplete (exit codes %s)' % (
                C.where(r), r['label'], r['n'], r['order'], r.get('rcs')))
    s = C.plot_script(rows, os.path.join(R.OUT, 'coexist.png'), R.TMP)
    if s:
        R.gnuplot(s, os.path.join(R.OUT, 'coexist.png'))
