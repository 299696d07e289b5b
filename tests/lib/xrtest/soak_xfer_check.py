"""soak_xfer_check.py: soak.sh's verdict on one of its transfers: both
processes exited 0, both verified every byte, and WANT bytes moved; the
reason on stderr and exit 1 (AssertionError) if not.

  soak_xfer_check.py PREFIX WANT

PREFIX.{send,recv}: the JSON of xroce send/recv; PREFIX.{send,recv}.rc
their exit codes."""
import json
import sys

p, want = sys.argv[1], int(sys.argv[2])
rs, rr = open(p + '.send.rc').read().strip(), open(p + '.recv.rc').read().strip()
assert rs == '0' and rr == '0', f'exit codes: send {rs}, recv {rr}'
s, r = json.load(open(p + '.send')), json.load(open(p + '.recv'))
assert s['verified'] and r['verified'], 'not verified'
assert s['bytes'] == want and r['bytes'] == want, f"bytes {s['bytes']}/{r['bytes']} of {want}"
