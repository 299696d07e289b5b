"""report.py: tables (markdown, also printed) and plots for the parts of
tests/bench/run.sh, one module per part (report_PART.py: its TITLE and
run()), and results.md from them all (report_assemble.py).

  report.py PART --meta META_JSON --out DIR --tmp DIR [--log FILE]
            [--with-loss 0|1]
  report.py assemble --meta META_JSON --out DIR --tmp DIR

A part reads the raw results its benchmark left in the output directory
(its commands and date, for the caption report.py puts first, from
TMP/PART.cmds and TMP/PART.date), writes TMP/PART.md and prints it; it exits 1 after listing its errors (missing
or empty results, a failed plot) on stderr."""
import argparse
import importlib
import os
import sys

import report_common as R

ap = argparse.ArgumentParser()
ap.add_argument('part')
ap.add_argument('--meta', required=True)
ap.add_argument('--out', required=True)
ap.add_argument('--tmp', required=True)
ap.add_argument('--log', default='')
ap.add_argument('--with-loss', default='0')
a = ap.parse_args()
R.init(a)
if a.part == 'assemble':
    importlib.import_module('report_assemble').run()
    sys.exit(0)
# Every part's tables start with where they come from.
R.md += [R.caption(), '']
importlib.import_module('report_' + a.part).run()
text = '\n'.join(R.md).rstrip('\n') + '\n'
open(os.path.join(R.TMP, a.part + '.md'), 'w').write(text)
sys.stdout.write(text)
for e in R.errors:
    print('ERROR: ' + e, file=sys.stderr)
sys.exit(1 if R.errors else 0)
