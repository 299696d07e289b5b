"""demo_row.py: one row of `make demo`'s table from a transfer's
`xroce send --json` and `xroce recv --json`: loss, goodput, packets,
retransmissions (by SACK, by timer), the switch's drops, and whether the
receiver verified every byte.

  demo_row.py LOSS DROPS SEND_JSON_FILE RECV_JSON_FILE"""
import json
import sys

loss, drops = float(sys.argv[1]), int(sys.argv[2])
s, r = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
ok = 'verified' if s['verified'] and r['verified'] else 'CORRUPT'
print(f"{loss*100:4g}%  {s['goodput_gbps']:6.2f} Gb/s {s['tx_pkts']:>9} {s['retx_pkts']:>9} "
      f"{s['fast_retx']:>9} {s['timeout_retx']:>9}    {drops:>8}   data {ok}")
