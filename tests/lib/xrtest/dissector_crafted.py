"""dissector_crafted.py: test_dissector.sh's verdict on the decode of
dissector_frames.py's pcap: the info column of each frame, the expert
infos it raised, and selected fields (flags, SACK PSNs across the wrap,
addresses, private data, status, payload length); prints every mismatch
and exits 1 if there is one.

  dissector_crafted.py FIELDS_TXT EXPERT_TXT

FIELDS_TXT: tshark -T fields rows "number|info|type|ar|retx|last|sack.psn|
sack.count|sack.list|reason|addr6|addr4|priv|status|payload_len";
EXPERT_TXT: lines "frame_number expert_name"."""
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('|')
    rows[int(f[0])] = f
exp = {}
for line in open(sys.argv[2]):
    n, e = line.split()
    exp.setdefault(int(n), set()).add(e)
W = 2 ** 32
want_info = {
    1: 'DATA SEND_IMM conn 7 path 1 psn 10 csn 20 msg 5 off 900/1000 len 100 stream 3 ssn 9 imm 0xdeadbeef [AR,LAST]',
    3: 'DATA (truncated: 40 of 64 bytes)',
    4: 'ACK conn 9 path 2 cack %d sack {%d,0,58-59,250} hint 1000 [ECE,SACK]' % (W - 6, W - 5),
    5: 'NAK BOUNDS conn 9 path 2 cack 100 csn 77',
    6: 'PROBE_REPLY conn 9 path 3 seq 42 hint 2500',
    7: 'CTRL CONNECT src_conn 31 fd77::1,10.1.2.3 port 4793 paths 8 psn 1000 csn 2000 priv 5',
    8: 'CTRL REJECT conn 31 src_conn 0 status ECONNREFUSED',
    11: 'ACK conn 9 path 0 cack 500 sack {502,504} [SACK]',
    13: 'ACK (truncated: 50 of 80 bytes)',
    15: 'PROBE conn 9 path 3 seq 41',
    16: 'ACK conn 9 path 0 cack 500',
}
want_exp = {1: set(), 2: {'bounds'}, 3: {'truncated'}, 4: {'ece'}, 5: {'nak'},
            6: set(), 7: set(), 8: {'reject'}, 9: {'version'}, 10: {'type'},
            11: set(), 12: set(), 13: {'truncated'}, 14: {'value'}, 15: set(),
            16: {'value'}}
bad = []
for n, info in want_info.items():
    if rows[n][1] != info:
        bad.append('frame %d info %r, want %r' % (n, rows[n][1], info))
for n, e in want_exp.items():
    if exp.get(n, set()) != e:
        bad.append('frame %d expert %s, want %s' % (n, sorted(exp.get(n, set())), sorted(e)))
def field(n, i): return rows[n][i]
checks = [
    (field(1, 3), '1'), (field(1, 4), '0'), (field(1, 5), '1'), (field(1, 14), '100'),
    (field(4, 6), '%d,%d,58,59,250' % (W - 5, 0)), (field(4, 7), '5'),
    (field(4, 8), '{%d,0,58-59,250}' % (W - 5)),
    (field(5, 9), '2'), (field(7, 10), 'fd77::1'), (field(7, 11), '10.1.2.3'),
    (field(7, 12), '68656c6c6f'), (field(8, 13), '111'),
    (field(11, 6), '502,504'), (field(12, 2), ''),
]
for i, (got, want) in enumerate(checks):
    if got != want:
        bad.append('field check %d: %r, want %r' % (i, got, want))
if bad:
    print('\n'.join(bad))
    sys.exit(1)
print('%d crafted frames decoded as expected' % len(rows))
