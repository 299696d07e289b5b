"""txrun_check.py: test_txrun.sh's verdict on a perf run with the default
transmit engine on veth: the engine is test_run, and every packet was
built by the sender's XDP program (tx_built) with no trigger refused
(drop_txr); prints the run's figures, exits 1 (AssertionError) if not.

  txrun_check.py PERF_JSON TX_BUILT_BEFORE TX_BUILT_AFTER DROP_TXR_BEFORE DROP_TXR_AFTER"""
import json
import sys

r = json.loads(sys.argv[1])
built, refused = int(sys.argv[3]) - int(sys.argv[2]), int(sys.argv[5]) - int(sys.argv[4])
pkts = r['pkts']
assert r.get('tx_engine') == 'test_run', f"default engine on veth: {r.get('tx_engine')}"
assert pkts > 1000, f'{pkts} packets'
# Every data packet, plus probes: built by XDP, none refused.
assert pkts <= built <= pkts + 200, f'{built} frames built for {pkts} packets'
assert refused == 0, f'{refused} triggers refused'
print(f"{r['gbps']:.2f} Gbit/s, {pkts} packets, {built} frames built by XDP, 0 refused")
