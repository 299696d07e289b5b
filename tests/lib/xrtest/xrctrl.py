"""xrctrl.py: xroce's control message (struct xr_ctrl_msg in
include/contract/wire.h) as an attacker sees it: build one, read one, sign
one with a cluster key the way libsodium's crypto_auth_hmacsha512256 does
(HMAC-SHA-512 cut to 32 bytes).  Standard library only.

The layout is checked against wire.h's offsets by test_xrctrl.py."""
import hashlib
import hmac
import ipaddress
import os
import struct

VERSION = 1
T_CTRL = 4
CONNECT, ACCEPT, REJECT, CLOSE, CLOSE_ACK, COOKIE = 1, 2, 3, 4, 5, 6
OPS = {CONNECT: 'connect', ACCEPT: 'accept', REJECT: 'reject', CLOSE: 'close',
       CLOSE_ACK: 'close_ack', COOKIE: 'cookie'}
CF_AUTH = 0x1
SIZE = 256
MAC_OFF = 224
DATA_PORT = 4793
CTRL_PORT = 4794

# (name, struct format, offset): every field up to the MAC.
FIELDS = (
    ('ver_type', 'B', 0), ('op', 'B', 1), ('status', 'H', 2), ('dst_conn', 'I', 4),
    ('token', 'Q', 8), ('nonce', 'Q', 16), ('src_conn', 'I', 24), ('mtu', 'I', 28),
    ('rx_token', 'Q', 32), ('init_psn', 'I', 40), ('init_csn', 'I', 44),
    ('data_port', 'H', 48), ('sport_lo', 'H', 50), ('sport_n', 'H', 52),
    ('nplanes', 'B', 54), ('family', 'B', 55), ('npaths', 'I', 56), ('flags', 'I', 60),
    ('addr', '64s', 64), ('priv_len', 'B', 128), ('priv', '60s', 132),
    ('cookie', '16s', 192), ('nonce2', 'Q', 208), ('mac', '32s', 224),
)


def mapped(ip):
    """16 bytes of an address as the wire carries it (IPv4 as ::ffff:a.b.c.d)."""
    a = ipaddress.ip_address(ip)
    if a.version == 4:
        return b'\0' * 10 + b'\xff\xff' + a.packed
    return a.packed


def pack(**f):
    """A control message: the named fields (host values), the rest zero."""
    b = bytearray(SIZE)
    f.setdefault('ver_type', VERSION << 4 | T_CTRL)
    for name, fmt, off in FIELDS:
        if name in f:
            struct.pack_into('>' + fmt, b, off, f[name])
    return bytes(b)


def unpack(b):
    """The fields of message b (a dict), or None if it is not one."""
    if len(b) != SIZE or b[0] != (VERSION << 4 | T_CTRL):
        return None
    return {name: struct.unpack_from('>' + fmt, b, off)[0] for name, fmt, off in FIELDS}


def sign(key, msg):
    """msg with XR_CF_AUTH set and its MAC under key (32 bytes)."""
    b = bytearray(msg)
    flags = struct.unpack_from('>I', b, 60)[0] | CF_AUTH
    struct.pack_into('>I', b, 60, flags)
    b[MAC_OFF:] = hmac.new(key, bytes(b[:MAC_OFF]), hashlib.sha512).digest()[:32]
    return bytes(b)


def read_key(path):
    """A key file as `xroce --key` reads it: 32 raw bytes or 64 hex digits."""
    raw = open(path, 'rb').read()
    if len(raw) == 32:
        return raw
    return bytes.fromhex(raw.decode().strip())


def connect(my_ip, cookie=b'\0' * 16, nonce=None, nplanes=1, claim=None, conn=None):
    """A CONNECT from my_ip (claiming the data-plane address claim, default
    my_ip): valid in every field unless told otherwise."""
    nonce = nonce if nonce is not None else int.from_bytes(os.urandom(8), 'big')
    conn = conn if conn is not None else 1 + int.from_bytes(os.urandom(2), 'big')
    return pack(op=CONNECT, nonce=nonce, src_conn=conn, mtu=1500,
                rx_token=int.from_bytes(os.urandom(8), 'big'), init_psn=1, init_csn=1,
                data_port=DATA_PORT, sport_lo=49152, sport_n=64, nplanes=nplanes,
                family=4, npaths=8, addr=mapped(claim or my_ip).ljust(64, b'\0'),
                cookie=cookie)
