"""transfer_check.py: test_transfer.sh's verdict on one `xroce send` ->
`xroce recv` run: both sides verified every byte, the sizes, the
retransmissions against what the switch dropped, the packet size; prints
the run's figures, exits 1 (AssertionError) on a failed check.

  transfer_check.py SEND_JSON RECV_JSON SIZE LOSS "D0 A0" "D1 A1" MTU

SIZE is xroce send's -n (1, 4k, 1M, 256M); D/A the switch's drops on port
a0 (data direction) and b0 (ACK direction) before and after."""
import json
import sys

s, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
mtu = int(sys.argv[7])
size = {'1': 1, '4k': 4096, '1M': 1 << 20, '256M': 256 << 20}[sys.argv[3]]
loss = float(sys.argv[4])
d0, d1 = [int(x) for x in sys.argv[5].split()], [int(x) for x in sys.argv[6].split()]
data_drops, ack_drops = d1[0] - d0[0], d1[1] - d0[1]
assert s['verified'] and r['verified'], 'not verified'
assert s['bytes'] == size and r['bytes'] == size, 'byte count'
# Port a0 carries everything h0 sends: the sender's data and its ACKs of
# the receiver's few credit messages.  Every data packet dropped there must
# have been resent, unless it was a copy (a tail-loss probe or a redundant
# copy, dup_pkts: its original may have arrived), so retransmissions and
# copies are at least those drops (less the handful of credit ACKs among
# them); a dropped ACK costs at most a timer-driven resend of what it
# covered.  (At 10% loss a 256 MiB jumbo transfer once lost 3665 data
# packets against 3647 retransmissions: dropped probes.)
dup = s.get('dup_pkts', 0)
assert s['retx_pkts'] + dup + 16 >= data_drops, \
    f"{s['retx_pkts']} retransmissions and {dup} copies for {data_drops} dropped data packets"
# Beyond that, only the retransmission timer resends what arrived: when
# the shared host does not run the receiver or the sender for longer than
# the timeout, a window's worth at a time (77 of 32770 packets of a 256 MiB
# jumbo transfer once in CI, 0 in three runs on a quiet host).  Allow one
# window per few thousand packets; a retransmission storm is far above it.
allowed = 2 * (data_drops + ack_drops) + 64 + s['tx_pkts'] // 200
assert s['retx_pkts'] <= allowed, \
    f"{s['retx_pkts']} retransmissions ({s['fast_retx']} SACK, " \
    f"{s['timeout_retx']} timer) for {data_drops}+{ack_drops} drops " \
    f"(at most {allowed})"
# Port a0 also carries the sender's ACKs of a few credit messages: more
# drops than those must have cost retransmissions.  (A 1 MiB transfer at
# MTU 9000 is 130 packets: at 1% loss a quarter of the runs lose none.)
if size >= (1 << 20) and data_drops > 3:
    assert s['retx_pkts'] > 0, 'no retransmission despite loss'
# Packets as large as the MTU allows (IPv4: 92 bytes of headers; at most
# 8192 bytes of payload a packet); each message (the sender's chunks, its
# credit WRITE_WITH_IMMs) may end in a shorter one: 1% slack.
seg = min(mtu - 92, 8192)
first = s['tx_pkts'] - s['retx_pkts'] - dup
assert first <= size / seg * 1.01 + 16, f"{first} packets for {size} B: segments below {seg} B"
print(f"{size} B at {loss*100:g}% loss: {s['goodput_gbps']:.2f} Gbit/s, "
      f"{s['tx_pkts']} packets, {s['retx_pkts']} retransmitted "
      f"({s['fast_retx']} SACK, {s['timeout_retx']} timer), {dup} copies; switch dropped "
      f"{data_drops} data-direction, {ack_drops} ACK-direction")
