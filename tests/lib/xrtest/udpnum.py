"""udpnum.py: numbered UDP datagrams with a checkable payload, the traffic
tests/fabric/test_fabric.sh measures the fabric emulator with.  `recv`
reports per source port: count, ECN codepoints [notect, ect1, ect0, ce],
reordered arrivals (and how late), missing sequence numbers, loss bursts,
payloads that arrived damaged, as JSON.

  udpnum.py send --dst ADDR --port P --sports P1,P2.. [--count N] [--size B]
                 [--tos T] [--pps R]
  udpnum.py recv --bind ADDR --port P --ready FILE [--expect N] [--idle S]
                 [--timeout S]"""
import argparse, json, select, socket, struct, sys, time

PAT = bytes(k & 0xff for k in range(70000))

def payload(seq, size):
    o = seq & 0xff
    return struct.pack('!Q', seq) + PAT[o:o + size - 8]

def send(a):
    fam = socket.AF_INET6 if ':' in a.dst else socket.AF_INET
    socks = []
    for sport in map(int, a.sports.split(',')):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind(('::' if fam == socket.AF_INET6 else '0.0.0.0', sport))
        if fam == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, a.tos)
        else:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
        socks.append(s)
    batch, n, t0 = max(1, a.pps // 1000), len(socks), time.monotonic()
    for i in range(a.count * n):  # round robin over the source ports
        socks[i % n].sendto(payload(i // n, a.size), (a.dst, a.port))
        if i % batch == batch - 1:  # paced: veth rings hold 256 frames
            ahead = t0 + (i + 1) / a.pps - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
            elif ahead < -0.002:
                # Late (descheduled): resume the rate from now rather than
                # catch up in a burst, which a shallow ECN threshold at a
                # slow rate would mark (test_fabric, "no marks" at 8 Mbit/s).
                t0 -= ahead

def recv(a):
    fam = socket.AF_INET6 if ':' in a.bind else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, getattr(socket, 'SO_RCVBUFFORCE', 33), 16 << 20)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
    else:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
    s.bind((a.bind, a.port))
    open(a.ready, 'w').close()
    st, last, deadline = {}, None, time.monotonic() + a.timeout
    while time.monotonic() < deadline:
        wait = a.idle if last else deadline - time.monotonic()
        if not select.select([s], [], [], max(wait, 0))[0]:
            if last:
                break
            continue
        data, anc, _, src = s.recvmsg(70000, 64)
        last = time.monotonic()
        tos = 0
        for _, _, val in anc:
            tos = val[0] if len(val) == 1 else struct.unpack('i', val[:4])[0]
        p = st.setdefault(src[1], {'count': 0, 'ecn': [0, 0, 0, 0], 'reordered': 0,
                                   'late_by_max': 0, 'bad_payload': 0, 'max': -1,
                                   'seen': set()})
        seq = struct.unpack('!Q', data[:8])[0] if len(data) >= 8 else -1
        p['count'] += 1
        p['ecn'][tos & 3] += 1
        if data != payload(seq, len(data)):
            p['bad_payload'] += 1
        if seq < p['max']:
            p['reordered'] += 1
            p['late_by_max'] = max(p['late_by_max'], p['max'] - seq)
        p['max'] = max(p['max'], seq)
        p['seen'].add(seq)
    for p in st.values():
        seen = p.pop('seen')
        missing = [i for i in range(max(a.expect, p['max'] + 1)) if i not in seen]
        p['dups'] = p['count'] - len(seen)
        p['missing'] = len(missing)
        p['loss_bursts'] = sum(1 for k, i in enumerate(missing)
                               if k == 0 or missing[k - 1] != i - 1)
    json.dump({str(k): v for k, v in st.items()}, sys.stdout)
    print()

ap = argparse.ArgumentParser()
sub = ap.add_subparsers(dest='cmd', required=True)
x = sub.add_parser('send')
x.add_argument('--dst', required=True)
x.add_argument('--port', type=int, required=True)
x.add_argument('--sports', required=True)
x.add_argument('--count', type=int, default=1000, help='per source port')
x.add_argument('--size', type=int, default=200)
x.add_argument('--tos', type=int, default=0)
x.add_argument('--pps', type=int, default=20000, help='all ports together')
x = sub.add_parser('recv')
x.add_argument('--bind', required=True)
x.add_argument('--port', type=int, required=True)
x.add_argument('--expect', type=int, default=0)
x.add_argument('--idle', type=float, default=0.5)
x.add_argument('--timeout', type=float, default=60)
x.add_argument('--ready', required=True)
a = ap.parse_args()
send(a) if a.cmd == 'send' else recv(a)
