"""cm_cookie.py: a listening port (xroce_listen) takes a request only after
the cookie round-trip, and survives whatever else comes to it.

Sent from a plain UDP socket to HOST:PORT (test_cm.sh, phase E):
  - garbage: 7 bytes, 256 zero bytes, a CONNECT of the wrong version;
  - a well-formed CONNECT with private data "E" and no cookie: the only
    answer must be a COOKIE for its nonce, from HOST:PORT itself (resent
    while lost);
  - the same CONNECT carrying that cookie: now it is a request (the server
    rejects it with "noE"), and the REJECT comes from HOST:PORT.
Any ACCEPT or REJECT before the cookie was returned fails the check.
With --keyed (the listener holds a cluster key) the unsigned CONNECT must
get no answer at all, not even a COOKIE.

  cm_cookie.py [--keyed] HOST PORT OWN_ADDR [DATA_PORT]"""
import os
import socket
import struct
import sys
import time

OP_CONNECT, OP_REJECT, OP_COOKIE = 1, 3, 6
VER_CTRL = 0x14                     # XR_VER_TYPE(XR_T_CTRL), version 1


def connect_msg(nonce, own, data_port, priv, cookie=b'', ver=VER_CTRL):
    """A CONNECT as contract/wire.h's struct xr_ctrl_msg (256 bytes)."""
    addr = b'\0' * 10 + b'\xff\xff' + socket.inet_aton(own)
    h = struct.pack('!BBHIQQIIQIIHHHBBII', ver, OP_CONNECT, 0, 0, 0, nonce, 77,
                    1500, 0x6677, 1000, 2000, data_port, 49152, 16384, 1, 4, 8, 0)
    h += addr + b'\0' * 48 + struct.pack('!B3x', len(priv))
    h += priv + b'\0' * (60 - len(priv))
    h += cookie.ljust(16, b'\0') + b'\0' * 48   # cookie, nonce2, rsvd2, MAC
    assert len(h) == 256
    return h


def await_op(s, peer, nonce, want, tries, send):
    """Send (again and again) until a message for nonce arrives; it must come
    from peer and have op want.  Returns it."""
    for _ in range(tries):
        send()
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            s.settimeout(max(end - time.monotonic(), 0.01))
            try:
                m, src = s.recvfrom(2048)
            except socket.timeout:
                break
            if len(m) != 256 or struct.unpack_from('!Q', m, 16)[0] != nonce:
                continue
            if src[:2] != peer:
                sys.exit(f"cm_cookie: an answer from {src}, not from {peer}")
            if m[1] != want:
                sys.exit(f"cm_cookie: op {m[1]} for nonce {nonce:#x}, expected {want}")
            return m
    sys.exit(f"cm_cookie: no op {want} for nonce {nonce:#x} after {tries} tries")


def expect_silence(s, msg, peer):
    """Send msg a few times; nothing may come back."""
    for _ in range(5):
        s.sendto(msg, peer)
        s.settimeout(0.2)
        try:
            m, src = s.recvfrom(2048)
        except socket.timeout:
            continue
        sys.exit(f"cm_cookie: {len(m)} bytes from {src} for an unsigned CONNECT")


def main():
    args = sys.argv[1:]
    keyed = args[:1] == ['--keyed']
    args = args[1:] if keyed else args
    host, port, own = args[0], int(args[1]), args[2]
    data_port = int(args[3]) if len(args) > 3 else 4793
    peer = (host, port)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((own, 0))
    nonce = int.from_bytes(os.urandom(8), 'big') | 1
    for junk in (b'garbage', b'\0' * 256,
                 connect_msg(nonce ^ 2, own, data_port, b'X', ver=0x24)):
        s.sendto(junk, peer)
    plain = connect_msg(nonce, own, data_port, b'E')
    if keyed:
        expect_silence(s, plain, peer)
        print("cm_cookie: the unsigned CONNECT got no answer (cluster key)")
        return
    c = await_op(s, peer, nonce, OP_COOKIE, 30, lambda: s.sendto(plain, peer))
    cookie = c[192:208]
    print(f"cm_cookie: the CONNECT without a cookie got a COOKIE from port {port}")
    with_cookie = connect_msg(nonce, own, data_port, b'E', cookie)
    r = await_op(s, peer, nonce, OP_REJECT, 30, lambda: s.sendto(with_cookie, peer))
    priv = r[132:132 + r[128]]
    if priv != b'noE':
        sys.exit(f"cm_cookie: REJECT with private data {priv!r}, expected b'noE'")
    print(f"cm_cookie: with the cookie it became a request, refused from port {port}")


if __name__ == '__main__':
    main()
