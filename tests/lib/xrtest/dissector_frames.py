"""dissector_frames.py: a pcap of hand-built xroce frames for
test_dissector.sh, the cases a healthy transfer never shows: SEND_IMM with
flags, payload past the message end, truncated DATA and ACK, an ACK across
the PSN wrap with ECE and a rate hint, a NAK, probe and probe reply,
CONNECT over IPv6 with a v4-mapped plane, REJECT, bad version and type,
frames only the heuristic sees, a CTRL lying about its private data.
Ethernet/IPv4/UDP frames carrying headers laid out as in wire.h;
dissector_crafted.py says what each must decode to.

  dissector_frames.py OUT.pcap"""
import socket, struct, sys

def ip_csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def frame(payload, sport=49200, dport=4793):
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton('10.9.0.1'), socket.inet_aton('10.9.0.2'))
    ip = ip[:10] + struct.pack('!H', ip_csum(ip)) + ip[12:]
    return b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + udp

def data(op, flags, path, conn, psn, csn, msg, off, mlen, payload, imm=0, stream=0, ssn=0, vt=0x11):
    h = struct.pack('!BBBBIQIIIIQIIIIIHH', vt, flags, op, path, conn, 0x1122334455667788,
                    psn, psn - 2, csn, 123456, 0x7f0000001000 + off, 0xabcd, msg, mlen,
                    off, imm, stream, ssn)
    assert len(h) == 64
    return h + payload

def ack(t, flags, reason, path, conn, cack, words, nak_csn=0, hint=0):
    h = struct.pack('!BBBBIQIIII4QIIII', 0x10 | t, flags, reason, path, conn, 0x99,
                    cack, cack + 3, 777, hint, *words, 1, 50, 1000, nak_csn)
    assert len(h) == 80
    return h

def ctrl(op, status, conn, src, family, addrs, priv, priv_len=None):
    a = b''.join(addrs) + b'\0' * (16 * (4 - len(addrs)))
    h = struct.pack('!BBHIQQIIQIIHHHBBII', 0x14, op, status, conn, 0, 0x55, src, 1500, 0x66,
                    1000, 2000, 4793, 49152, 16384, len(addrs), family, 8, 0)
    h += a + struct.pack('!B3x', len(priv) if priv_len is None else priv_len)
    h += priv + b'\0' * (60 - len(priv))
    h += b'\0' * 64  # cookie, listener nonce, reserved, MAC
    assert len(h) == 256
    return h

v6 = socket.inet_pton(socket.AF_INET6, 'fd77::1')
v4m = b'\0' * 10 + b'\xff\xff' + socket.inet_aton('10.1.2.3')
W = 2 ** 32
frames = [
    # 1 SEND_IMM, AR|LAST, stream 3, its 9th message
    frame(data(4, 0x05, 1, 7, 10, 20, 5, 900, 1000, b'x' * 100, imm=0xdeadbeef, stream=3, ssn=9)),
    # 2 payload past the end of the message
    frame(data(1, 0x00, 1, 7, 11, 21, 5, 950, 1000, b'y' * 100)),
    # 3 DATA cut after 40 bytes
    frame(data(1, 0, 1, 7, 12, 22, 5, 0, 1000, b'')[:40]),
    # 4 ACK across the PSN wrap: bits w0:0,5,63 w1:0 w3:63, ECE, SACK, hint
    frame(ack(2, 0x21, 0, 2, 9, W - 6, [1 | 1 << 5 | 1 << 63, 1, 0, 1 << 63], hint=1000),
          sport=4793, dport=52001),
    # 5 NAK BOUNDS of csn 77
    frame(ack(3, 0, 2, 2, 9, 100, [0, 0, 0, 0], nak_csn=77), sport=4793, dport=52001),
    # 6 PROBE_REPLY
    frame(struct.pack('!BBBBIQIIII', 0x16, 0, 0, 3, 9, 0x99, 42, 5, 2500, 0),
          sport=4793, dport=52001),
    # 7 CONNECT over IPv6: plane 0 fd77::1, plane 1 v4-mapped 10.1.2.3
    frame(ctrl(1, 0, 0, 31, 6, [v6, v4m], b'hello'), sport=40000, dport=4794),
    # 8 REJECT ECONNREFUSED
    frame(ctrl(3, 111, 31, 0, 4, [v4m], b''), sport=4794, dport=40000),
    # 9 version 2
    frame(b'\x21' + b'\0' * 79, sport=4793, dport=52001),
    # 10 type 7
    frame(b'\x17' + b'\0' * 31),
    # 11 ACK between two ports nobody registered: only the heuristic sees it
    frame(ack(2, 0x20, 0, 0, 9, 500, [0b1010, 0, 0, 0]), sport=47793, dport=52002),
    # 12 80 bytes of something else on those ports: not xroce
    frame(b'\x02' + b'\0' * 79, sport=47793, dport=52002),
    # 13 ACK cut after 50 bytes
    frame(ack(2, 0, 0, 0, 9, 500, [0, 0, 0, 0])[:50], sport=4793, dport=52001),
    # 14 CTRL claiming 70 bytes of private data
    frame(ctrl(2, 0, 31, 32, 4, [v4m], b'', priv_len=70), sport=4794, dport=40000),
    # 15 PROBE
    frame(struct.pack('!BBBBIQIIII', 0x15, 0, 0, 3, 9, 0x99, 41, 5, 0, 0), sport=49200, dport=4793),
    # 16 ACK with SACK bits but without the SACK flag: they are read as zero
    frame(ack(2, 0, 0, 0, 9, 500, [0b1010, 0, 0, 0]), sport=4793, dport=52001),
]
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack('<IIII', i + 1, 0, len(fr), len(fr)) + fr)
