"""abi.py: the layouts of include/contract/abi.h that the tests read or
write from outside the library, in one place for all of the tests' Python:
the telemetry pages (struct xr_telem_hdr, struct xr_telem, struct
xr_telem_path), the counters (enum xr_stat), and the map values
test_attach.sh writes (struct xr_mr, struct xr_conn).

Each layout is a list of (field, struct format) in the C order, packed
little-endian with no padding ('<'): test_abi.py computes the C layout
from the header and fails if a field, an offset or a size differs, so a
change to abi.h that is not made here too fails the unit tests."""
import struct

PAGE_SIZE = 4096
MAX_PATHS = 16        # XR_MAX_PATHS
MAX_PLANES = 4        # XR_MAX_PLANES

# ---- telemetry: the first pages of every domain's memory map -------------
TELEM_MAGIC = 0x4c545258  # "XRTL"
TELEM_VERSION = 3
TELEM_SLOTS = 256

TELEM_HDR_FIELDS = (
    ('magic', 'I'), ('version', 'I'), ('pid', 'I'), ('nslots', 'I'),
    ('slot_size', 'I'), ('ctrl_malformed', 'I'), ('ctrl_unauth', 'I'),
    ('ctrl_spoofed', 'I'), ('ctrl_no_room', 'I'), ('ctrl_refused', 'I'),
    ('ctrl_cookies', 'I'), ('plane_ifindex', '4I'), ('plane_engine', '4B'),
)
TELEM_PATH_FIELDS = (
    ('sport', 'H'), ('state', 'B'), ('plane', 'B'), ('cwnd', 'I'), ('inflight', 'I'),
    ('rtt_min_ns', 'I'), ('rtt_srtt_ns', 'I'), ('rtt_p99_ns', 'I'),
    ('tx_pkts', 'Q'), ('tx_bytes', 'Q'), ('retx_pkts', 'Q'), ('lost_pkts', 'Q'),
    ('acked_pkts', 'Q'), ('ce_pkts', 'Q'), ('rx_pkts', 'Q'), ('timeouts', 'Q'),
)
# struct xr_telem up to its path[] array, which follows it.
TELEM_FIELDS = (
    ('seq', 'I'), ('conn', 'I'), ('peer_conn', 'I'), ('npaths', 'I'),
    ('updated_ns', 'Q'), ('peer_addr', '16s'), ('state', 'I'), ('rate_hint_mbps', 'I'),
    ('tx_bytes', 'Q'), ('acked_bytes', 'Q'), ('retx_pkts', 'Q'), ('wr_completed', 'Q'),
    ('cwnd_milli', 'I'), ('pace_mbps', 'I'), ('cuts_ecn', 'Q'), ('cuts_delay', 'Q'),
    ('cuts_loss', 'Q'), ('compete', 'I'), ('rsvd', 'I'),
)


def _struct(fields):
    return struct.Struct('<' + ''.join(f for _, f in fields))


def _index(fields):
    """{field: its index in the unpacked tuple} (a 'Ns' field is one item,
    an 'NI' field N items)."""
    idx, i = {}, 0
    for name, f in fields:
        idx[name] = i
        i += 1 if f.endswith(('s', 'x')) else int(f[:-1] or 1)
    return idx


TELEM_HDR = _struct(TELEM_HDR_FIELDS)
TELEM = _struct(TELEM_FIELDS)
TELEM_PATH = _struct(TELEM_PATH_FIELDS)
T = _index(TELEM_FIELDS)           # TELEM.unpack(...)[T['acked_bytes']]
TP = _index(TELEM_PATH_FIELDS)     # TELEM_PATH.unpack(...)[TP['sport']]
TELEM_SLOT_SIZE = TELEM.size + MAX_PATHS * TELEM_PATH.size   # sizeof(struct xr_telem)
# The whole struct xr_telem, path[] as one field, as test_abi.py compares it.
TELEM_SLOT_FIELDS = TELEM_FIELDS + (('path', '%dx' % (MAX_PATHS * TELEM_PATH.size)),)
TELEM_BYTES = (TELEM_HDR.size + TELEM_SLOTS * TELEM_SLOT_SIZE + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1)

# enum xroce_path_state (include/xroce/xroce.h), as telemetry reports it.
PATH_GOOD, PATH_CONGESTED, PATH_SUSPECT, PATH_DOWN = 0, 1, 2, 3

# ---- counters: enum xr_stat, in order; `xroce status` names them so -------
STATS = (
    'rx_data', 'rx_bytes', 'rx_dup', 'rx_ack', 'rx_nak', 'tx_ack', 'tx_nak', 'msg_done',
    'probe', 'pass', 'drop_trunc', 'drop_version', 'drop_no_conn', 'drop_conn_state',
    'drop_token', 'drop_peer', 'drop_csum', 'drop_key', 'drop_bounds', 'drop_access',
    'drop_length', 'drop_opcode', 'drop_window', 'drop_evq_full', 'drop_no_mem',
    'drop_ack_lost', 'drop_frag', 'tx_ack_fail', 'evt_lost', 'drop_dead', 'nak_rnr',
    'tx_built', 'drop_txr', 'rx_bind', 'drop_bind', 'rx_csum_partial',
    'drop_mac', 'drop_evq_share', 'key_epoch',
)

# ---- map values -----------------------------------------------------------
MR_FIELDS = (
    ('domain', 'I'), ('pd', 'I'), ('access', 'I'), ('rkey', 'I'),
    ('iova', 'Q'), ('len', 'Q'), ('mem_off', 'Q'),
)
CONN_FIELDS = (
    ('domain', 'I'), ('pd', 'I'), ('state', 'I'), ('peer_conn', 'I'),
    ('rx_token', 'Q'), ('tx_token', 'Q'), ('peer_addr', '%ds' % (MAX_PLANES * 16)),
    ('npeer', 'B'), ('family', 'B'), ('peer_sport_lo', 'H'), ('peer_sport_n', 'H'),
    ('rsvd0', 'H'), ('flags', 'I'), ('rsvd1', 'I'),
    # keyed connections: struct xr_key_peer kpeer[2], struct xr_key_own kown[2]
    ('kpeer', '80s'), ('kown', '48s'),
)
MR = _struct(MR_FIELDS)
CONN = _struct(CONN_FIELDS)

# C struct name -> its fields here, for test_abi.py.
LAYOUTS = {
    'xr_telem_hdr': TELEM_HDR_FIELDS,
    'xr_telem_path': TELEM_PATH_FIELDS,
    'xr_telem': TELEM_SLOT_FIELDS,
    'xr_mr': MR_FIELDS,
    'xr_conn': CONN_FIELDS,
}
# #define name -> value here, for test_abi.py.
CONSTANTS = {
    'XR_PAGE_SIZE': PAGE_SIZE, 'XR_MAX_PATHS': MAX_PATHS, 'XR_MAX_PLANES': MAX_PLANES,
    'XR_TELEM_MAGIC': TELEM_MAGIC, 'XR_TELEM_VERSION': TELEM_VERSION,
    'XR_TELEM_SLOTS': TELEM_SLOTS,
}


def layout(fields):
    """[(field, offset, size)] of a layout above."""
    out, off = [], 0
    for name, f in fields:
        n = struct.calcsize('<' + f)
        out.append((name, off, n))
        off += n
    return out
