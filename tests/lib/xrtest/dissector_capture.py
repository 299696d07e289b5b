"""dissector_capture.py: test_dissector.sh's checks on the decode of a
real lossy transfer captured on both switch ports (a0: the sender's side,
b0: the receiver's): the capture is complete (DATA on a0 = the sender's
tx_pkts, RETX = its retx_pkts, a0 - b0 = the switch's drops), per-path
PSNs and psn_base, CSNs of first transmissions and of retransmissions and
redundant copies, connection ids, tokens and addressing, placement fields
and coverage of every message, every ACK against what arrived (ack_psn,
ts_echo, the SACK bitmap decoded independently from the raw bytes), UDP
checksums.  Prints a summary; the first failures and exit 1 otherwise.

  dissector_capture.py FIELDS_TSV SEND_JSON LOSS SWITCH_DROPS

FIELDS_TSV: tshark -T fields -E header=y of the fields test_dissector.sh
lists (one row per UDP frame, capture order per interface)."""
import json, sys
from collections import defaultdict

W = 2 ** 32
rows = []
with open(sys.argv[1]) as f:
    head = f.readline().rstrip('\n').split('\t')
    for line in f:
        rows.append(dict(zip(head, line.rstrip('\n').split('\t'))))
snd = json.load(open(sys.argv[2]))
loss, dropped = float(sys.argv[3]), int(sys.argv[4])
fails = []
def check(cond, msg):
    if not cond:
        fails.append(msg)
    return cond
def done():
    if fails:
        print('\n'.join(fails[:20]) + ('\n... %d failures' % len(fails) if len(fails) > 20 else ''))
        sys.exit(1)
def num(r, k): return int(r[k], 0)
def after(a, b): return (a - b) % W  # serial distance a - b
def retx(r): return r['xroce.data.flags.retx'] in ('1', 'True')
def dup(r): return r['xroce.data.flags.dup'] in ('1', 'True')
fn = lambda r: r['frame.number']

# Capture order per interface (pcapng keeps each interface's order).
on = {i: [r for r in rows if r['frame.interface_name'] == i] for i in ('a0', 'b0')}
xr = [r for r in rows if r['xroce.type']]
check(xr, 'no frame decoded as xroce: the Lua script did not load')
check(all(r['xroce.version'] == '1' for r in xr), 'version is not 1 everywhere')
check(not any(r['_ws.lua.error'] or r['_ws.malformed'] for r in rows), 'Lua error or malformed frame')
def T(rs, t, src=None): return [r for r in rs if r['xroce.type'] == str(t) and src in (None, r['ip.src'])]
ctrl = {int(r['xroce.ctrl.op']): r for r in T(on['a0'], 4)}
check(set(ctrl) >= {1, 2, 4, 5}, 'control ops seen: %s' % sorted(ctrl))
done()
conn, acc = ctrl[1], ctrl[2]
check(T(xr, 1) and T(xr, 2), 'no DATA or no ACK')
check(not T(xr, 3), 'a NAK in a healthy transfer')
ops = {r['xroce.data.opcode'] for r in T(xr, 1)}
check(ops <= {'1', '2'}, 'data opcodes %s, want WRITE/WRITE_IMM' % ops)

# The data direction (the sender's WRITEs) and the reverse one (the
# receiver's credits).  Each: who sends, its control message and the
# peer's, the interface that sees its packets first (tx) and the one on the
# far side of the lossy port (rx).
s_ip, r_ip = conn['ip.src'], conn['ip.dst']
dirs = [('send', s_ip, r_ip, conn, acc, 'a0', 'b0'), ('recv', r_ip, s_ip, acc, conn, 'b0', 'a0')]
stats = []
for name, src, dst, mine, peer, tx, rx in dirs:
    dtx, drx = T(on[tx], 1, src), T(on[rx], 1, src)
    atx, arx = T(on[tx], 2, dst), T(on[rx], 2, dst)
    if name == 'send':
        check(dtx, 'no DATA from the sender')
        check(len(dtx) == snd['tx_pkts'], 'sender DATA on a0 %d != its tx_pkts %d' % (len(dtx), snd['tx_pkts']))
        n = sum(map(retx, dtx))
        check(n == snd['retx_pkts'], 'RETX on a0 %d != sender retx_pkts %d' % (n, snd['retx_pkts']))
        n = sum(map(dup, dtx))
        check(n == snd.get('dup_pkts', 0), 'DUP on a0 %d != sender dup_pkts %d' % (n, snd.get('dup_pkts', 0)))
    else:
        check(len(dtx) == len(drx), 'receiver DATA lost on a loss-free direction')

    # Per-path PSNs in transmit order, psn_base.
    init_psn, init_csn = num(mine, 'xroce.ctrl.init_psn'), num(mine, 'xroce.ctrl.init_csn')
    last, base = {}, {}
    for r in dtx:
        p, psn, pb = r['xroce.path'], num(r, 'xroce.data.psn'), num(r, 'xroce.data.psn_base')
        want = init_psn if p not in last else (last[p] + 1) % W
        check(psn == want, '%s: frame %s path %s psn %d, want %d' % (name, fn(r), p, psn, want))
        check(after(psn, pb) < W // 2, '%s: frame %s psn_base %d after psn %d' % (name, fn(r), pb, psn))
        check(p not in base or after(pb, base[p]) < W // 2, '%s: frame %s psn_base went back' % (name, fn(r)))
        last[p], base[p] = psn, pb

    # CSNs: first transmissions unique and consecutive from init_csn; a
    # retransmission or a redundant copy (DUP, small messages) repeats the
    # CSN of one with the same content, a copy on another path.
    first, path_of = {}, {}
    content = lambda r: tuple(r[k] for k in ('xroce.data.msg_id', 'xroce.data.msg_off',
                                             'xroce.data.payload_len', 'xroce.data.raddr'))
    for r in dtx:
        if not retx(r) and not dup(r):
            c = num(r, 'xroce.data.csn')
            check(c not in first, '%s: csn %d sent twice without RETX or DUP' % (name, c))
            first[c] = content(r)
            path_of[c] = r['xroce.path']
    check(set(first) == {(init_csn + i) % W for i in range(len(first))},
          '%s: first-transmission CSNs are not init_csn..+%d' % (name, len(first)))
    for r in dtx:
        if retx(r) or dup(r):
            c = num(r, 'xroce.data.csn')
            check(first.get(c) == content(r),
                  '%s: frame %s resends csn %s with other content' % (name, fn(r), r['xroce.data.csn']))
        if dup(r):
            check(path_of.get(num(r, 'xroce.data.csn')) != r['xroce.path'],
                  '%s: frame %s: a redundant copy on its original\'s path' % (name, fn(r)))

    # Connection ids, tokens, addressing.
    for r in dtx + drx:
        check(r['xroce.dst_conn'] == peer['xroce.ctrl.src_conn'] and r['xroce.token'] == peer['xroce.ctrl.rx_token'],
              '%s: frame %s DATA conn/token are not the peer\'s' % (name, fn(r)))
    srcs = {(r['ip.src'], r['udp.srcport'], r['xroce.path']) for r in dtx}
    for r in atx + arx:
        check(r['xroce.dst_conn'] == mine['xroce.ctrl.src_conn'] and r['xroce.token'] == mine['xroce.ctrl.rx_token'],
              '%s: frame %s ACK conn/token are not the data sender\'s' % (name, fn(r)))
        check((r['ip.dst'], r['udp.dstport'], r['xroce.path']) in srcs and r['udp.srcport'] == peer['xroce.ctrl.data_port'],
              '%s: frame %s ACK not sent from the data port back to a data source' % (name, fn(r)))

    # Placement fields; coverage of every message at the receiving side.
    delta, cover = {}, defaultdict(list)
    for r in dtx + drx:
        off, plen, mlen = num(r, 'xroce.data.msg_off'), num(r, 'xroce.data.payload_len'), num(r, 'xroce.data.msg_len')
        check(plen == num(r, 'udp.length') - 8 - 64, '%s: frame %s payload_len' % (name, fn(r)))
        check(off + plen <= mlen, '%s: frame %s off %d + len %d > msg_len %d' % (name, fn(r), off, plen, mlen))
        m, d = r['xroce.data.msg_id'], num(r, 'xroce.data.raddr') - off
        check(delta.setdefault(m, d) == d, '%s: frame %s raddr - msg_off changed in message %s' % (name, fn(r), m))
    for r in drx:
        cover[(r['xroce.data.msg_id'], num(r, 'xroce.data.msg_len'))].append(
            (num(r, 'xroce.data.msg_off'), num(r, 'xroce.data.msg_off') + num(r, 'xroce.data.payload_len')))
    for (m, mlen), iv in cover.items():
        end = 0
        for a, b in sorted(iv):
            if a > end:
                break
            end = max(end, b)
        check(end == mlen, '%s: message %s bytes %d..%d never arrived' % (name, m, end, mlen))
    if name == 'send':
        check(sum(l for _, l in cover) >= snd['bytes'], 'the messages hold less than the transfer')

    # ACKs against what arrived (on rx, data is tapped before the ACK it
    # causes comes back).
    seen, ts_of, nsack = set(), {}, 0
    for r in on[rx]:
        if r['xroce.type'] == '1' and r['ip.src'] == src:
            k = (r['xroce.path'], num(r, 'xroce.data.psn'))
            seen.add(k)
            ts_of[k] = r['xroce.data.ts']
        elif r['xroce.type'] == '2' and r['ip.src'] == dst:
            p, cack = r['xroce.path'], num(r, 'xroce.ack.cack')
            k = (p, num(r, 'xroce.ack.ack_psn'))
            check(k in seen, '%s: frame %s acks path %s psn %d before it arrived' % (name, fn(r), *k))
            check(ts_of.get(k) == r['xroce.ack.ts_echo'], '%s: frame %s ts_echo is not the data ts' % (name, fn(r)))
            raw = bytes.fromhex(r['xroce.ack.sack'].replace(':', ''))
            dec = []
            for w in range(4):
                word = int.from_bytes(raw[8 * w:8 * w + 8], 'big')
                dec += [(cack + 1 + 64 * w + i) % W for i in range(64) if word >> i & 1]
            got = [int(x) for x in r['xroce.ack.sack.psn'].split(',') if x]
            check(got == dec, '%s: frame %s SACK list %s, bitmap says %s' % (name, fn(r), got, dec))
            check(int(r['xroce.ack.sack.count']) == len(dec), '%s: frame %s sack.count' % (name, fn(r)))
            for s in got:
                check(1 <= after(s, cack) <= 256, '%s: frame %s SACKed psn %d not after cack %d' % (name, fn(r), s, cack))
                check((p, s) in seen, '%s: frame %s SACKs psn %d that never arrived' % (name, fn(r), s))
            nsack += bool(got)
    if name == 'send' and loss > 0:
        check(nsack > 0, 'loss but no ACK with a non-empty SACK list')
    stats.append('%s: %d DATA sent (%d RETX), %d arrived, %d ACKs (%d with SACK bits), %d paths, %d messages'
                 % (name, len(dtx), sum(map(retx, dtx)), len(drx), len(arx), nsack, len(last), len(cover)))

# The capture saw every loss the switch made.
lost = len([r for r in on['a0'] if r['ip.src'] == s_ip]) - len([r for r in on['b0'] if r['ip.src'] == s_ip])
check(lost == dropped, 'a0 - b0 = %d packets, the switch dropped %d' % (lost, dropped))

# UDP checksums, every xroce packet on both ports.
badck = [fn(r) for r in xr if r['udp.checksum.status'] != '1']
check(not badck, 'UDP checksum not good in frames %s' % badck[:10])
done()
print('%d xroce frames, %d dropped by the switch, all UDP checksums good' % (len(xr), dropped))
print('\n'.join(stats))
