"""report_common.py: what the parts of tests/bench/run.sh's report share
(report.py sets it up with init() before a part's module runs): the run's
meta data, the output and temp directories, the part's markdown and its
errors, and the helpers that fill them -- captions, tables, plots."""
import json
import math
import os
import subprocess

META = OUT = TMP = args = None
md = []          # this part's markdown
errors = []      # problems that make the part fail (after its tables)
TERM = "set terminal pngcairo size %d,%d font 'Sans,10'\n"


def init(a):
    """a: report.py's arguments (part, meta, out, tmp, log, with_loss)."""
    global META, OUT, TMP, args
    META = json.load(open(a.meta))
    OUT, TMP, args = a.out, a.tmp, a


def caption():
    """Where a part's tables come from: the commands, commit, date."""
    try:
        cmds = [l.strip() for l in open(os.path.join(TMP, args.part + '.cmds')) if l.strip()]
    except OSError:
        cmds = []
    c = ', '.join('`%s`' % x for x in cmds) or '(no command)'
    try:
        date = open(os.path.join(TMP, args.part + '.date')).read().strip()
    except OSError:
        date = META['date']
    return '*Measured by %s on commit `%s`, %s (output files relative to the output directory).*' % (
        c, META['commit'], date)


def load(name):
    p = os.path.join(OUT, name)
    try:
        return json.load(open(p))
    except (OSError, ValueError) as e:
        errors.append('%s: %s' % (name, e))
        return None


def num(v, f='%.3f', none='–'):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return none
    return f % v


def table(hdr, rows, align=None):
    align = align or ['r'] * len(hdr)
    sep = ['---:' if x == 'r' else ':---' for x in align]
    md.append('| ' + ' | '.join(hdr) + ' |')
    md.append('|' + '|'.join(sep) + '|')
    for r in rows:
        md.append('| ' + ' | '.join(str(x) for x in r) + ' |')
    md.append('')


def gnuplot(script, png):
    """Run a gnuplot script; a failure is the part's error."""
    p = os.path.join(TMP, os.path.basename(png) + '.gp')
    with open(p, 'w') as f:
        f.write(script)
    r = subprocess.run(['gnuplot', p], capture_output=True, text=True)
    if r.returncode or not os.path.exists(png):
        errors.append('gnuplot %s: %s' % (os.path.basename(png), r.stderr.strip()[-500:]))
        return False
    md.append('![%s](%s)' % (os.path.basename(png)[:-4], os.path.basename(png)))
    md.append('')
    return True


def pct(v):
    return num(None if v is None else 100 * v, '%.1f%%')
