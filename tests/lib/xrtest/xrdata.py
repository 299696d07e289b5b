"""xrdata.py: xroce's data-plane headers (struct xr_data_hdr and struct
xr_ack_hdr in include/contract/wire.h) as an on-path attacker sees them:
read a DATA header off the wire, build the ACK that claims it arrived.
Standard library only; all fields big-endian, as on the wire.

The layout is checked against wire.h's offsets by test_xrdata.py."""
import struct

VERSION = 1
T_DATA, T_ACK = 1, 2
SACK_WORDS = 4
DATA_SIZE = 64
ACK_SIZE = 80

# (name, struct format, offset) of the fields an attacker reads or forges;
# 'token' also is where a keyed connection's MAC travels.
DATA_FIELDS = (
    ('ver_type', 'B', 0), ('flags', 'B', 1), ('opcode', 'B', 2), ('path', 'B', 3),
    ('dst_conn', 'I', 4), ('token', 'Q', 8), ('psn', 'I', 16), ('psn_base', 'I', 20),
    ('csn', 'I', 24), ('ts', 'I', 28), ('raddr', 'Q', 32), ('rkey', 'I', 40),
    ('msg_id', 'I', 44), ('msg_len', 'I', 48), ('msg_off', 'I', 52), ('imm', 'I', 56),
    ('stream', 'H', 60), ('ssn', 'H', 62),
)
ACK_FIELDS = (
    ('ver_type', 'B', 0), ('flags', 'B', 1), ('reason', 'B', 2), ('path', 'B', 3),
    ('dst_conn', 'I', 4), ('token', 'Q', 8), ('cack', 'I', 16), ('ack_psn', 'I', 20),
    ('ts_echo', 'I', 24), ('rate_hint', 'I', 28), ('sack', '32s', 32),
    ('ce_pkts', 'I', 64), ('rx_pkts', 'I', 68), ('csn_cum', 'I', 72), ('nak_csn', 'I', 76),
)


def ver_type(t):
    return (VERSION << 4) | t


def parse_data(b):
    """The fields of a DATA header at the start of b, or None if b is not one."""
    if len(b) < DATA_SIZE or b[0] != ver_type(T_DATA):
        return None
    return {n: struct.unpack_from('!' + f, b, o)[0] for n, f, o in DATA_FIELDS}


def pack_ack(**f):
    """An ACK header: the named fields (host values), the rest zero."""
    b = bytearray(ACK_SIZE)
    f.setdefault('ver_type', ver_type(T_ACK))
    for n, fmt, o in ACK_FIELDS:
        if n in f:
            struct.pack_into('!' + fmt, b, o, f[n])
    return bytes(b)
