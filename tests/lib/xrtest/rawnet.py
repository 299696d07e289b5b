"""rawnet.py: the two things a plain Linux attacker does below the socket
API: send an IPv4 UDP datagram from any source address and port (a raw
socket with its own IP header), and watch a link's UDP traffic (a packet
socket on the interface).  Standard library only; needs CAP_NET_RAW."""
import socket
import struct
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800


def _csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def udp4(src, sport, dst, dport, payload):
    """An IPv4 header + UDP datagram, both checksums right."""
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    ulen = 8 + len(payload)
    pseudo = s + d + struct.pack('!BBH', 0, 17, ulen)
    u = struct.pack('!HHHH', sport, dport, ulen, 0) + payload
    c = _csum(pseudo + u) or 0xffff
    u = u[:6] + struct.pack('!H', c) + u[8:]
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + ulen, 0, 0x4000, 64, 17, 0, s, d)
    ip = ip[:10] + struct.pack('!H', _csum(ip)) + ip[12:]
    return ip + u


def send_spoofed(src, sport, dst, dport, payload):
    """Send payload to dst:dport as if from src:sport."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    try:
        s.sendto(udp4(src, sport, dst, dport, payload), (dst, 0))
    finally:
        s.close()


def sniff(ifname, until, want, ready=None):
    """UDP/IPv4 datagrams seen on ifname (either direction) until the
    monotonic time `until`: for each, want(src, sport, dst, dport, payload)
    is called; sniff returns as soon as it returns True (then True), or
    False at the deadline.  The file `ready` is created once it listens."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, ETH_P_ALL))
    if ready:
        open(ready, 'w').close()
    try:
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return False
            s.settimeout(left)
            try:
                f = s.recv(65535)
            except socket.timeout:
                return False
            if len(f) < 42 or struct.unpack_from('!H', f, 12)[0] != ETH_P_IP:
                continue
            ihl = (f[14] & 0xf) * 4
            if f[23] != 17 or len(f) < 14 + ihl + 8:
                continue
            src, dst = socket.inet_ntoa(f[26:30]), socket.inet_ntoa(f[30:34])
            u = 14 + ihl
            sport, dport, ulen = struct.unpack_from('!HHH', f, u)
            if want(src, sport, dst, dport, f[u + 8:u + ulen]):
                return True
    finally:
        s.close()
