"""telem.py: follows the xroce connection of this network namespace
through the library's telemetry pages (abi.py: struct xr_telem, in the
first pages of each domain's memory map; `xroce stats` reads the same)
every PERIOD, fast enough to time a failover, and runs fault-injection
commands at chosen moments without pausing the sampling
(test_multipath.sh).

  telem.py --iface IF --out FILE --ready FILE [--period-us N] [--timeout S]
           [--at 'BYTES:CMD' ...]

--at: once BYTES have been acknowledged (so the fault hits a transfer in
full flow, whatever the machine's speed), run CMD with sh -c in the
background; its start and end times are recorded.  Commands run one after
the other, in BYTES order.  Output, JSON lines: {"t", "ev", "t_end", "rc"}
per command, and per telemetry update {"t", "upd", "acked", "tx", "retx",
"state", "p": [[sport, state, plane, cwnd, inflight, tx_pkts, tx_bytes,
retx, lost, acked, ce, rx, timeouts] per path]}.  Exits when the
connection is gone."""
import argparse
import ctypes
import json
import mmap
import os
import struct
import subprocess
import sys
import time

import abi

SYS_BPF = 321  # x86_64
BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_NEXT_KEY, BPF_MAP_GET_FD_BY_ID = 1, 4, 14
T, TP = abi.T, abi.TP
# The path fields written out, in the order of the docstring.
PATH_OUT = [TP[k] for k in ('sport', 'state', 'plane', 'cwnd', 'inflight', 'tx_pkts',
                            'tx_bytes', 'retx_pkts', 'lost_pkts', 'acked_pkts', 'ce_pkts',
                            'rx_pkts', 'timeouts')]

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    return libc.syscall(SYS_BPF, cmd, buf, 128)


def fd_by_id(map_id):
    return bpf(BPF_MAP_GET_FD_BY_ID, struct.pack('<III', map_id, 0, 0))


def u32_keys(fd):
    keys, kb, nk = [], ctypes.create_string_buffer(4), ctypes.create_string_buffer(4)
    while True:
        kp = ctypes.addressof(kb) if keys else 0
        if bpf(BPF_MAP_GET_NEXT_KEY, struct.pack('<IIQQQ', fd, 0, kp, ctypes.addressof(nk), 0)):
            return keys
        keys.append(struct.unpack('<I', nk.raw)[0])
        kb.raw = nk.raw


def lookup_u32(fd, key):
    kb = ctypes.create_string_buffer(struct.pack('<I', key), 4)
    vb = ctypes.create_string_buffer(4)
    if bpf(BPF_MAP_LOOKUP_ELEM, struct.pack('<IIQQQ', fd, 0, ctypes.addressof(kb),
                                            ctypes.addressof(vb), 0)):
        return None
    return struct.unpack('<I', vb.raw)[0]


def xr_mem_id(iface):
    """The domain -> memory map of the xroce program on iface."""
    link = json.loads(subprocess.check_output(['ip', '-j', 'link', 'show', iface]))[0]
    prog = link['xdp']['prog']['id']
    info = json.loads(subprocess.check_output(['bpftool', '-j', 'prog', 'show', 'id', str(prog)]))
    for m in info['map_ids']:
        mi = json.loads(subprocess.check_output(['bpftool', '-j', 'map', 'show', 'id', str(m)]))
        if mi.get('name') == 'xr_mem':
            return m
    sys.exit('telem.py: no xr_mem map behind %s' % iface)


def open_views(outer_fd):
    views = []
    for d in u32_keys(outer_fd):
        inner = lookup_u32(outer_fd, d)
        fd = fd_by_id(inner) if inner is not None else -1
        if fd < 0:
            continue
        try:
            mm = mmap.mmap(fd, abi.TELEM_BYTES, mmap.MAP_SHARED, mmap.PROT_READ)
        except OSError:
            continue
        finally:
            os.close(fd)
        h = abi.TELEM_HDR.unpack_from(mm, 0)
        magic, ver, nslots, ssize = h[0], h[1], h[3], h[4]
        if magic != abi.TELEM_MAGIC:
            mm.close()
            continue
        if ver != abi.TELEM_VERSION or ssize != abi.TELEM_SLOT_SIZE or nslots > abi.TELEM_SLOTS:
            sys.exit('telem.py: telemetry layout changed (version %d, slot %d B)' % (ver, ssize))
        views.append(mm)
    return views


def read_slot(mm, s):
    """Slot s copied under its sequence count (odd while being written)."""
    off = abi.TELEM_HDR.size + s * abi.TELEM_SLOT_SIZE
    for _ in range(1000):
        a = struct.unpack_from('<I', mm, off)[0]
        if a & 1:
            continue
        raw = mm[off:off + abi.TELEM_SLOT_SIZE]
        if struct.unpack_from('<I', mm, off)[0] == a:
            return raw
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--iface', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--ready', required=True)
    ap.add_argument('--period-us', type=int, default=1000)
    ap.add_argument('--timeout', type=float, default=120)
    ap.add_argument('--at', action='append', default=[])
    a = ap.parse_args()
    events = sorted((float(x.split(':', 1)[0]), x.split(':', 1)[1]) for x in a.at)
    outer = fd_by_id(xr_mem_id(a.iface))
    if outer < 0:
        sys.exit('telem.py: cannot open xr_mem')
    out = open(a.out, 'w')
    open(a.ready, 'w').close()
    deadline = time.monotonic() + a.timeout
    views, where, last_upd, acked, running = [], None, None, 0, None
    period = a.period_us / 1e6

    def finished(proc, t0, cmd):
        out.write(json.dumps({'t': t0, 'ev': cmd, 't_end': time.monotonic_ns(),
                              'rc': proc.returncode}) + '\n')
        out.flush()
        if proc.returncode:
            sys.exit('telem.py: %s failed' % cmd)

    while time.monotonic() < deadline:
        if where is None:  # wait for the connection to appear
            for mm in views:
                mm.close()
            views = open_views(outer)
            for mm in views:
                for s in range(abi.TELEM_SLOTS):
                    raw = read_slot(mm, s)
                    if raw and abi.TELEM.unpack_from(raw, 0)[T['conn']]:
                        where = (mm, s, abi.TELEM.unpack_from(raw, 0)[T['conn']])
                        break
                if where:
                    break
            if where is None:
                time.sleep(0.002)
                continue
        raw = read_slot(where[0], where[1])
        now = time.monotonic_ns()
        if raw is not None:
            f = abi.TELEM.unpack_from(raw, 0)
            if f[T['conn']] != where[2]:
                break  # the connection is gone
            npaths, upd, acked = f[T['npaths']], f[T['updated_ns']], f[T['acked_bytes']]
            if upd != last_upd:
                last_upd = upd
                paths = []
                for i in range(npaths):
                    q = abi.TELEM_PATH.unpack_from(raw, abi.TELEM.size + i * abi.TELEM_PATH.size)
                    paths.append([q[k] for k in PATH_OUT])
                out.write(json.dumps({'t': now, 'upd': upd, 'acked': acked, 'tx': f[T['tx_bytes']],
                                      'retx': f[T['retx_pkts']], 'state': f[T['state']],
                                      'p': paths}) + '\n')
        if running and running[0].poll() is not None:
            finished(*running)
            running = None
        if not running and events and acked >= events[0][0]:
            cmd = events.pop(0)[1]
            running = (subprocess.Popen(['sh', '-c', cmd]), time.monotonic_ns(), cmd)
        time.sleep(period)
    if running:
        running[0].wait()
        finished(*running)
    out.close()
    if where is None:
        sys.exit('telem.py: no connection appeared')
    if events:
        sys.exit('telem.py: the transfer ended before %d fault command(s) ran' % len(events))


main()
