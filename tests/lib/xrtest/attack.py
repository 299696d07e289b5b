"""attack.py: the attacker of tests/integration/test_hostile.sh, a plain
Linux host that knows xroce's wire format (and, when told, a key of its
own) but holds no secret of the hosts it attacks.  Each command is one
attack of issue 15 and prints one JSON line of what came back.

  attack.py bad DST --spoof SRC       malformed control datagrams (CONNECT
                                      with nplanes 0, short, wrong version,
                                      unknown op) to DST's listener, from SRC
  attack.py flood DST N               N CONNECTs from here, never completed
  attack.py connect DST [--key F]     the whole handshake from here (cookie
                                      echoed); --key signs with key file F
  attack.py reflect DST VICTIM        a CONNECT from here claiming VICTIM's
                                      address as its data plane
  attack.py close IFACE --as own|listener [--delay S] [--ready FILE]
                                      on path: watch IFACE for a CONNECT and
                                      its ACCEPT, then send the requester a
                                      CLOSE claiming everything arrived, from
                                      our own address or spoofed as the
                                      listener's control socket
  attack.py answer IFACE --op accept|reject --as own|listener [--ready F]
                                      on path: answer the first CONNECT
                                      seen on IFACE (its nonce read there)
                                      with an ACCEPT or REJECT to the
                                      requester, from our own address or
                                      spoofed as the listener's
  attack.py acks IFACE [--secs S] [--ready FILE]
                                      on path: learn a connection from its
                                      CONNECT on IFACE, then answer each of
                                      the requester's DATA packets seen
                                      there with a forged ACK (spoofed as
                                      the listener's data port) claiming it
                                      arrived; for S seconds after the first
  attack.py ackflood DST N [--port P] [--ready F] [--go F]
                                      a peer's flood: connect to DST (its
                                      listener on port P) as a legitimate
                                      client would, create F, wait for the
                                      file --go, then send N ACK frames of
                                      that connection to DST, as answers to its data
  attack.py squat PORT SECS [--ready F]  bind PORT (no mark) as soon as it
                                      is free, hold it SECS

Answers are counted by op: {"cookie": 1, "accept": 0, ...}."""
import argparse
import json
import os
import socket
import time

import rawnet
import xrctrl
import xrdata


def _answers(s, until, on_msg=None):
    """Control messages arriving on socket s until `until`, counted by op."""
    seen = {name: 0 for name in xrctrl.OPS.values()}
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return seen
        s.settimeout(left)
        try:
            b = s.recv(2048)
        except socket.timeout:
            return seen
        m = xrctrl.unpack(b)
        if not m or m['op'] not in xrctrl.OPS:
            continue
        seen[xrctrl.OPS[m['op']]] += 1
        if on_msg and on_msg(m):
            return seen


def _sock(dst):
    """A UDP socket of ours toward dst, and our address on that route."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((dst, xrctrl.CTRL_PORT))
    return s, s.getsockname()[0]


def cmd_bad(a):
    msgs = [xrctrl.connect(a.spoof, nplanes=0),
            xrctrl.connect(a.spoof)[:100],
            b'\x20' + xrctrl.connect(a.spoof)[1:],
            xrctrl.pack(op=9)]
    sport = 40000 + int.from_bytes(os.urandom(2), 'big') % 20000
    for m in msgs:
        rawnet.send_spoofed(a.spoof, sport, a.dst, xrctrl.CTRL_PORT, m)
    return {'sent': len(msgs)}


def cmd_flood(a):
    s, me = _sock(a.dst)
    for _ in range(a.n):
        s.send(xrctrl.connect(me))
    out = _answers(s, time.monotonic() + a.wait)
    out['sent'] = a.n
    return out


def _handshake(s, me, wait, key=None):
    """The whole handshake on connected socket s (our address me), the
    cookie echoed, signed with key if given: the answers counted by op,
    our CONNECT's fields, and the ACCEPT's or REJECT's (empty if none)."""
    first = xrctrl.connect(me)
    m0 = xrctrl.unpack(first)
    last = {}

    def send(msg):
        s.send(xrctrl.sign(key, msg) if key else msg)

    def on_msg(m):
        if m['op'] == xrctrl.COOKIE and m['nonce'] == m0['nonce']:
            send(xrctrl.connect(me, cookie=m['cookie'], nonce=m0['nonce'],
                                conn=m0['src_conn']))
            return False
        if m['op'] in (xrctrl.ACCEPT, xrctrl.REJECT):
            last.update(m)
            return True
        return False

    send(first)
    return _answers(s, time.monotonic() + wait, on_msg), m0, last


def _send_as(as_, listener, to, msg):
    """Send msg to `to` (addr, port) from our own address, or spoofed as
    the listener (addr, port) when as_ is 'listener'."""
    if as_ == 'listener':
        rawnet.send_spoofed(listener[0], listener[1], to[0], to[1], msg)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(msg, to)
        s.close()


def cmd_connect(a):
    s, me = _sock(a.dst)
    key = xrctrl.read_key(a.key) if a.key else None
    return _handshake(s, me, a.wait, key)[0]


def cmd_ackflood(a):
    """Connect, then flood the connection's own ACKs: each passes every
    check (id, token, address, port), so it is a record in the listener's
    event ring, and only the connection's share of the ring stops them."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((a.dst, a.port))
    me = s.getsockname()[0]
    seen, m0, got = _handshake(s, me, a.wait)
    if got.get('op') != xrctrl.ACCEPT:
        return {'accepted': False, 'answers': seen}
    # From the data port our CONNECT announced, to a source port of the
    # listener's range, as answers to its data come.
    d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    d.bind((me, xrctrl.DATA_PORT))
    d.connect((a.dst, got['sport_lo']))
    if a.ready:
        open(a.ready, 'w').close()
    until = time.monotonic() + a.wait
    while a.go and not os.path.exists(a.go):
        if time.monotonic() > until:
            return {'accepted': True, 'sent': 0}
        time.sleep(0.01)
    sent = 0
    for i in range(a.n):
        ack = xrdata.pack_ack(path=i % 8, dst_conn=got['src_conn'], token=got['rx_token'],
                              cack=m0['init_psn'], ack_psn=m0['init_psn'],
                              rx_pkts=i, csn_cum=m0['init_csn'])
        try:
            d.send(ack)
            sent += 1
        except OSError:          # a full socket buffer: try the next one
            time.sleep(0.0005)
    return {'accepted': True, 'sent': sent}


def cmd_reflect(a):
    s, me = _sock(a.dst)
    first = xrctrl.connect(me, claim=a.victim)
    m0 = xrctrl.unpack(first)

    def on_msg(m):
        if m['op'] == xrctrl.COOKIE:
            s.send(xrctrl.connect(me, cookie=m['cookie'], nonce=m0['nonce'],
                                  conn=m0['src_conn'], claim=a.victim))
        return m['op'] in (xrctrl.ACCEPT, xrctrl.REJECT)

    s.send(first)
    return _answers(s, time.monotonic() + a.wait, on_msg)


def cmd_close(a):
    """Learn the connection from its handshake, then forge the CLOSE."""
    st = {}

    def want(src, sport, dst, dport, payload):
        m = xrctrl.unpack(payload)
        if not m:
            return False
        if m['op'] == xrctrl.CONNECT and dport == xrctrl.CTRL_PORT:
            st['req'] = (src, sport, m)
        elif m['op'] == xrctrl.ACCEPT and 'req' in st and \
                m['nonce'] == st['req'][2]['nonce']:
            st['lis'] = (src, sport)
            return True
        return False

    if not rawnet.sniff(a.iface, time.monotonic() + a.wait, want, a.ready):
        return {'seen': False}
    time.sleep(a.delay)
    rsrc, rport, req = st['req']
    close = xrctrl.pack(op=xrctrl.CLOSE, dst_conn=req['src_conn'], token=req['rx_token'],
                        init_csn=(req['init_csn'] + 100000) & 0xffffffff)
    for _ in range(3):
        _send_as(a.as_, st['lis'], (rsrc, rport), close)
        time.sleep(0.1)
    return {'seen': True, 'conn': req['src_conn'], 'to': '%s:%d' % (rsrc, rport),
            'as': a.as_}


def cmd_answer(a):
    """Answer a CONNECT in the listener's place."""
    st = {}

    def want(src, sport, dst, dport, payload):
        m = xrctrl.unpack(payload)
        if m and m['op'] == xrctrl.CONNECT and dport == xrctrl.CTRL_PORT:
            st['req'] = (src, sport, dst, dport, m)
            return True
        return False

    if not rawnet.sniff(a.iface, time.monotonic() + a.wait, want, a.ready):
        return {'seen': False}
    src, sport, dst, dport, req = st['req']
    op = xrctrl.ACCEPT if a.op == 'accept' else xrctrl.REJECT
    msg = xrctrl.pack(op=op, nonce=req['nonce'], dst_conn=req['src_conn'],
                      token=req['rx_token'], src_conn=1, mtu=1500, status=111,
                      rx_token=int.from_bytes(os.urandom(8), 'big'), init_psn=1,
                      init_csn=1, data_port=xrctrl.DATA_PORT, sport_lo=49152,
                      sport_n=64, nplanes=1, family=4, npaths=8,
                      addr=xrctrl.mapped(dst) + b'\0' * 48)
    for _ in range(3):
        _send_as(a.as_, (dst, dport), (src, sport), msg)
        time.sleep(0.05)
    return {'seen': True, 'op': a.op, 'as': a.as_, 'to': '%s:%d' % (src, sport)}


def cmd_acks(a):
    """Learn the requester's connection id and token from its CONNECT,
    then claim delivery of every DATA packet it sends: per path, a
    cumulative ACK up to the packet, and the connection's CSN past it."""
    st = {'forged': 0, 'data': 0}
    rx = {}   # path -> packets acknowledged

    def want(src, sport, dst, dport, payload):
        if dport == xrctrl.CTRL_PORT:
            m = xrctrl.unpack(payload)
            if m and m['op'] == xrctrl.CONNECT and 'req' not in st:
                st['req'] = (src, m)
            return False
        d = xrdata.parse_data(payload)
        if not d or 'req' not in st or src != st['req'][0]:
            return False
        if 'until' not in st:
            st['until'] = time.monotonic() + a.secs
        st['data'] += 1
        req = st['req'][1]
        csn = max(st.get('csn', 0), (d['csn'] + 1) & 0xffffffff)
        st['csn'] = csn
        rx[d['path']] = rx.get(d['path'], 0) + 1
        ack = xrdata.pack_ack(path=d['path'], dst_conn=req['src_conn'], token=req['rx_token'],
                              cack=(d['psn'] + 1) & 0xffffffff, ack_psn=d['psn'],
                              ts_echo=d['ts'], rx_pkts=rx[d['path']], csn_cum=csn)
        rawnet.send_spoofed(dst, dport, src, sport, ack)
        st['forged'] += 1
        return time.monotonic() > st['until']

    deadline = time.monotonic() + a.wait
    rawnet.sniff(a.iface, deadline, want, a.ready)
    return {'seen': 'req' in st, 'data': st['data'], 'forged': st['forged']}


def cmd_squat(a):
    """Bind PORT as soon as it is free (the owner died), then hold it."""
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    until = time.monotonic() + a.secs
    while True:
        try:
            s.bind(('::', a.port))
            break
        except OSError:
            if time.monotonic() > until:
                return {'bound': False}
            time.sleep(0.001)
    if a.ready:
        open(a.ready, 'w').close()
    time.sleep(max(0.0, until - time.monotonic()))
    return {'bound': True}


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    c = sub.add_parser('bad')
    c.add_argument('dst')
    c.add_argument('--spoof', required=True)
    c = sub.add_parser('flood')
    c.add_argument('dst')
    c.add_argument('n', type=int)
    c.add_argument('--wait', type=float, default=3.0)
    c = sub.add_parser('connect')
    c.add_argument('dst')
    c.add_argument('--key')
    c.add_argument('--wait', type=float, default=3.0)
    c = sub.add_parser('reflect')
    c.add_argument('dst')
    c.add_argument('victim')
    c.add_argument('--wait', type=float, default=3.0)
    c = sub.add_parser('close')
    c.add_argument('iface')
    c.add_argument('--as', dest='as_', choices=('own', 'listener'), required=True)
    c.add_argument('--delay', type=float, default=0.3)
    c.add_argument('--wait', type=float, default=15.0)
    c.add_argument('--ready', help='file created once it watches')
    c = sub.add_parser('answer')
    c.add_argument('iface')
    c.add_argument('--op', choices=('accept', 'reject'), required=True)
    c.add_argument('--as', dest='as_', choices=('own', 'listener'), required=True)
    c.add_argument('--wait', type=float, default=15.0)
    c.add_argument('--ready', help='file created once it watches')
    c = sub.add_parser('acks')
    c.add_argument('iface')
    c.add_argument('--secs', type=float, default=8.0)
    c.add_argument('--wait', type=float, default=30.0)
    c.add_argument('--ready', help='file created once it watches')
    c = sub.add_parser('ackflood')
    c.add_argument('dst')
    c.add_argument('n', type=int)
    c.add_argument('--port', type=int, default=xrctrl.CTRL_PORT)
    c.add_argument('--wait', type=float, default=10.0)
    c.add_argument('--ready', help='file created once connected')
    c.add_argument('--go', help='file to wait for before the flood')
    c = sub.add_parser('squat')
    c.add_argument('port', type=int)
    c.add_argument('secs', type=float)
    c.add_argument('--ready', help='file created once bound')
    a = p.parse_args()
    print(json.dumps(globals()['cmd_' + a.cmd](a)), flush=True)


if __name__ == '__main__':
    main()
