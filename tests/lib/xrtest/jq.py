"""jq.py: one Python expression over a JSON document, printed -- what the
shell tests need from `xroce status --json`, `xrfabric show --json` and
the like, without a program of their own each (tests/lib/check.sh:
xr_json).

  jq.py EXPR [ARG...]         the document on stdin
  jq.py -f FILE EXPR [ARG...] the document in FILE

In EXPR, `j` is the document and `a` the list of ARGs (strings).  The
value is printed as print() prints it (True, [1, 2], 'x' as x)."""
import json
import sys


def main(argv):
    src = sys.stdin
    if len(argv) > 2 and argv[0] == '-f':
        src = open(argv[1])
        argv = argv[2:]
    if not argv:
        sys.exit('usage: jq.py [-f FILE] EXPR [ARG...]')
    j = json.load(src)
    print(eval(argv[0], {'j': j, 'a': argv[1:]}))


main(sys.argv[1:])
