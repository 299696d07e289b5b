"""udpnum_field.py: one figure of a `udpnum.py recv` report, for
test_fabric.sh's checks: FIELD of the source port SPORT, FIELD.I for the
I-th element of a list (ecn.3: CE-marked); 0 when the port got nothing.

  udpnum_field.py REPORT_JSON SPORT FIELD[.I]"""
import json
import sys

d = json.load(open(sys.argv[1])).get(sys.argv[2])
f = sys.argv[3].split('.')
v = d[f[0]] if d else 0
print(v[int(f[1])] if len(f) > 1 and d else v)
