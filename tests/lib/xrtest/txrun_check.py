"""txrun_check.py: test_txrun.sh's verdict on a perf run with the default
transmit engine on veth.  The engine is test_run; a kick of a few frames
goes by the plane's packet socket instead (user/engine/plane.c,
kick_small), no trigger is refused (drop_txr), and

  bw:  bulk transfer: nearly every packet was built by the sender's XDP
       program (tx_built): at least 99%, at most every packet and the
       probes (its rounds queue far more than a small kick's frames; the
       last few packets, retransmissions and probes may go alone);
  lat: ping-pong of 64-byte messages: one message a round, so at most 5%
       of the client's packets were built by XDP.

Prints the run's figures, exits 1 (AssertionError) if not.

  txrun_check.py bw|lat PERF_JSON TX_BUILT_BEFORE TX_BUILT_AFTER DROP_TXR_BEFORE DROP_TXR_AFTER"""
import json
import sys

mode = sys.argv[1]
r = json.loads(sys.argv[2])
built, refused = int(sys.argv[4]) - int(sys.argv[3]), int(sys.argv[6]) - int(sys.argv[5])
assert r.get('tx_engine') == 'test_run', f"default engine on veth: {r.get('tx_engine')}"
assert refused == 0, f'{refused} triggers refused'
if mode == 'bw':
    pkts = r['pkts']
    assert pkts > 1000, f'{pkts} packets'
    assert pkts * 0.99 <= built <= pkts + 200, f'{built} frames built for {pkts} packets'
    print(f"{r['gbps']:.2f} Gbit/s, {pkts} packets, {built} frames built by XDP, 0 refused")
else:
    iters = r['iters']
    assert iters >= 1000, f'{iters} round trips'
    assert built <= iters * 0.05, f'{built} frames built by XDP for {iters} messages'
    print(f"{iters} round trips, median {r['rtt_p50_us']:.1f} us, {built} frames built by XDP")
