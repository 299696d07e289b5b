#!/usr/bin/env bash
# test_multipath.sh: multipath spraying, failure and congestion handling end
# to end, on emulated fabrics (tests/fabric/fabric.sh) impaired with
# build/xrfabric while `xroce send` moves verified data to `xroce recv`.
#
#   failover   planes 4, 8 paths, 256 MiB: 80 MiB into the transfer (~0.3-
#              0.6 s) one plane (chosen at random) is blackholed in both
#              directions (data and ACKs).
#              The transfer completes, verified, without an error
#              completion; the dead plane's paths show losses/timeouts and
#              are suspect/down (or stopped carrying data); the other three
#              planes carry the rest.  Prints (FIGURE lines) when the dead
#              paths left service, when goodput was back at 90% of the
#              three planes' rate (and the same measure at a moment without
#              a fault, the noise floor) and the retransmissions.
#   ecn        planes 2: every ECT packet of plane 1 is CE-marked (a 10
#              Mbit/s virtual queue, data direction) for a whole transfer:
#              plane 1's paths report the marks and carry clearly less
#              than plane 0's (printed shares).
#   leafspine  leafspine 2 with 2 spines, ECMP on the UDP 5-tuple: the 8
#              paths' entropy spreads them over both spines (leaf uplink
#              counters); spine s0 is blackholed mid-transfer: the transfer
#              completes, the hit paths get new source ports (or are
#              suspect/down) and data stops going to s0.  (If the random
#              ports all hash onto one spine, 1 in 128, it runs once more.)
#   restore    planes 2: plane 1 blackholed, then the blackhole lifted
#              during a longer transfer: its paths go suspect/down, then
#              return to service and carry traffic again.
#
# The sender is followed by a telemetry sampler (the library's shared
# telemetry pages, the same ones `xroce stats` reads, every ~1 ms), which
# also fires the fault injections once given amounts of data were
# acknowledged, so they hit a transfer in full flow whatever the speed.
# Usage: tests/integration/test_multipath.sh [SCENARIO...]   (root)
#        XRMP_KEEP=DIR keeps the raw samples and JSON in DIR
# shellcheck disable=SC2154 # FAB_* come from the topology's env file
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
ROOT=$PWD
for f in build/xroce build/xrfabric; do
	[ -x "$f" ] || xr_die "$f missing: run make first"
done
for t in python3 bpftool nsenter ss; do
	command -v "$t" >/dev/null || xr_die "$t missing"
done

# Slow machines (vmtest under emulation) stretch the timing: XR_TIME_SCALE.
TS=${XR_TIME_SCALE:-1}

TMP=$(mktemp -d "/tmp/xrmp.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
# XRMP_KEEP=DIR keeps the raw results (telemetry samples, JSON) for study.
[ -z "${XRMP_KEEP:-}" ] || xr_cleanup_push "mkdir -p '$XRMP_KEEP' && cp -r '$TMP'/. '$XRMP_KEEP'/"

# The run uses copies of the binaries (their BPF objects are built in), so
# a rebuild during the run cannot swap them halfway.
cp build/xroce build/xrfabric "$TMP/" || xr_die "cannot copy the binaries"
XROCE=$TMP/xroce
XRF=$TMP/xrfabric
export XRFABRIC=$XRF # for fabric.sh

fail() { xr_die "$*"; }

# ---- telemetry sampler --------------------------------------------------
cat >"$TMP/telem.py" <<'EOF'
"""Follows the xroce connection of this network namespace through the
library's telemetry pages (abi.h: struct xr_telem, in the first pages of
each domain's memory map; `xroce stats` reads the same) every PERIOD, fast
enough to time a failover, and runs fault-injection commands at chosen
moments without pausing the sampling.

  telem.py --iface IF --out FILE --ready FILE [--period-us N] [--timeout S]
           [--at 'BYTES:CMD' ...]

--at: once BYTES have been acknowledged (so the fault hits a transfer in
full flow, whatever the machine's speed), run CMD with sh -c in the
background; its start and end times are recorded.  Commands run one after
the other, in BYTES order.  Output, JSON lines: {"t", "ev", "t_end", "rc"} per command, and
per telemetry update {"t", "upd", "acked", "tx", "retx", "state",
"p": [[sport, state, plane, cwnd, inflight, tx_pkts, tx_bytes, retx, lost,
acked, ce, rx, timeouts] per path]}.  Exits when the connection is gone."""
import argparse, ctypes, json, mmap, os, struct, subprocess, sys, time

SYS_BPF = 321  # x86_64
BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_NEXT_KEY, BPF_MAP_GET_FD_BY_ID = 1, 4, 14
MAGIC, VERSION, SLOTS, SLOT_SIZE, HDR = 0x4c545258, 1, 256, 1488, 64
TELEM_BYTES = (HDR + SLOTS * SLOT_SIZE + 4095) & ~4095
SLOT = struct.Struct('<IIIIQ16sIIQQQQ')    # struct xr_telem up to path[]
PATH = struct.Struct('<HBBIIIIIQQQQQQQQ')  # struct xr_telem_path
assert SLOT.size == 80 and PATH.size == 88

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
            mm = mmap.mmap(fd, TELEM_BYTES, mmap.MAP_SHARED, mmap.PROT_READ)
        except OSError:
            continue
        finally:
            os.close(fd)
        magic, ver, _pid, nslots, ssize = struct.unpack_from('<IIIII', mm, 0)
        if magic != MAGIC:
            mm.close()
            continue
        if ver != VERSION or ssize != SLOT_SIZE or nslots > SLOTS:
            sys.exit('telem.py: telemetry layout changed (version %d, slot %d B)' % (ver, ssize))
        views.append(mm)
    return views


def read_slot(mm, s):
    off = HDR + s * SLOT_SIZE
    for _ in range(1000):
        a = struct.unpack_from('<I', mm, off)[0]
        if a & 1:
            continue
        raw = mm[off:off + SLOT_SIZE]
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
                for s in range(SLOTS):
                    raw = read_slot(mm, s)
                    if raw and SLOT.unpack_from(raw, 0)[1]:
                        where = (mm, s, SLOT.unpack_from(raw, 0)[1])
                        break
                if where:
                    break
            if where is None:
                time.sleep(0.002)
                continue
        raw = read_slot(where[0], where[1])
        now = time.monotonic_ns()
        if raw is not None:
            f = SLOT.unpack_from(raw, 0)
            if f[1] != where[2]:
                break  # the connection is gone
            npaths, upd, tx, acked, retx = f[3], f[4], f[8], f[9], f[10]
            if upd != last_upd:
                last_upd = upd
                paths = []
                for i in range(npaths):
                    q = PATH.unpack_from(raw, SLOT.size + i * PATH.size)
                    paths.append(list(q[0:5]) + list(q[8:16]))
                out.write(json.dumps({'t': now, 'upd': upd, 'acked': acked, 'tx': tx,
                                      'retx': retx, 'state': f[6], 'p': paths}) + '\n')
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
EOF

# ---- checks on the results -----------------------------------------------
cat >"$TMP/check.py" <<'EOF'
"""Assertions and figures for one scenario, from the sender's and receiver's
JSON, the sampler's telemetry and the fabric's counters."""
import json, sys

GOOD, CONGESTED, SUSPECT, DOWN = 0, 1, 2, 3
# telemetry path fields
SPORT, STATE, PLANE, CWND, INFL, TXP, TXB, RETX, LOST, ACKED, CE, RX, TMO = range(13)
MS = 1e6


def ok(msg):
    print('  ok   ' + msg)


def check(cond, msg):
    if not cond:
        print('FAIL: ' + msg, file=sys.stderr)
        sys.exit(1)
    ok(msg)


def load(prefix):
    s = json.load(open(prefix + '.send'))
    r = json.load(open(prefix + '.recv'))
    samples, events = [], []
    for line in open(prefix + '.tl'):
        x = json.loads(line)
        (events if 'ev' in x else samples).append(x)
    samples.sort(key=lambda x: x['upd'])
    return s, r, samples, events


def ports(path):
    """xrfabric show --json: {(port, dir): counters}."""
    d = json.load(open(path))
    return {(p['port'], p['dir']): p['counters'] for p in d['ports']}


def common(s, r, size):
    check(s['verified'] and r['verified'] and s['bytes'] == size == r['bytes'],
          '%d bytes delivered, verified by the receiver, no error completion '
          '(sender exit 0, %.2f Gbit/s)' % (size, s['goodput_gbps']))


def at(samples, t):
    """The last sample at or before t (or the first one)."""
    best = samples[0]
    for x in samples:
        if x['upd'] > t:
            break
        best = x
    return best


def plane_sum(paths, plane, f, base=None):
    return sum(p[f] - (base[i][f] if base else 0)
               for i, p in enumerate(paths) if p[PLANE] == plane)


def intervals(samples):
    """(t_start, t_end, acked bytes) between telemetry updates while the
    library was running.  Updates come every ~1 ms while the application
    drives the library (up to a few ms when the two cores are contended); a
    longer gap is the application busy elsewhere (`xroce send` fills each
    32 MiB chunk with its pattern between calls, ~15 ms): such gaps are
    left out of goodput figures."""
    out, skipped = [], 0
    for a, b in zip(samples, samples[1:]):
        dt = b['upd'] - a['upd']
        if dt <= 6 * MS:
            out.append((a['upd'], b['upd'], b['acked'] - a['acked']))
        else:
            skipped += dt
    return out, skipped


def rate(iv, t0, t1):
    """Goodput (bytes/ns) over the intervals inside [t0, t1]."""
    b = d = 0
    for a, e, n in iv:
        if a >= t0 and e <= t1:
            b += n
            d += e - a
    return (b / d if d else None), d


# ---- failover --------------------------------------------------------------
def plain_rate(S, t0, t1):
    """Goodput (bytes/ns) between the samples nearest t0 and t1."""
    x, y = at(S, t0), at(S, t1)
    return (y['acked'] - x['acked']) / (y['upd'] - x['upd']) if y['upd'] > x['upd'] else None


def fault_time(S, tf, tfe, dead):
    """When the blackhole took effect: the fault command runs between tf and
    tfe (several ms on a loaded machine); the dead plane's last ACK came
    after the previous sample, so the fault was on after that (and surely
    by tfe)."""
    t = tf
    for a, b in zip(S, S[1:]):
        if b['upd'] <= tf:
            continue
        if a['upd'] >= tfe:
            break
        if sum(b['p'][i][ACKED] for i in dead) > sum(a['p'][i][ACKED] for i in dead):
            t = max(tf, a['upd'])
    return min(t, tfe)


def failover(prefix, size, plane, nplanes, fab_pre, fab_end):
    s, r, S, E = load(prefix)
    common(s, r, size)
    P = s['path']
    dead = [i for i, p in enumerate(P) if p['plane'] == plane]
    tf, tfe = E[0]['t'], E[0]['t_end']
    t0 = fault_time(S, tf, tfe, dead)
    end = S[-1]['upd']
    check(end - tfe > 300 * MS, 'the transfer ran %.0f ms past the fault' % ((end - tfe) / MS))
    pre, post = ports(fab_pre), ports(fab_end)
    bh = [post[k]['blackholed'] - pre[k]['blackholed']
          for k in (('a%d' % plane, 'ingress'), ('b%d' % plane, 'ingress'))]
    check(bh[0] > 0 and bh[1] > 0, 'plane %d blackholed: the switch dropped %d data '
          'packets and %d ACKs/probes' % (plane, bh[0], bh[1]))
    base = at(S, tfe)['p']
    post_tx = [p['tx_pkts'] - base[i][TXP] for i, p in enumerate(P)]
    tot = sum(post_tx)
    for i in dead:
        p = P[i]
        hit = p['lost_pkts'] + p['timeouts'] > 0
        out = p['state'] in (SUSPECT, DOWN) or post_tx[i] <= 0.01 * tot
        check(hit and out, 'path %d (dead plane): %d lost, %d timeouts, state %d, '
              '%d packets after the fault' % (i, p['lost_pkts'], p['timeouts'],
                                              p['state'], post_tx[i]))
    shares = {pl: sum(post_tx[i] for i, p in enumerate(P) if p['plane'] == pl) / tot
              for pl in range(nplanes)}
    live = [pl for pl in range(nplanes) if pl != plane]
    check(shares[plane] <= 0.02 and all(shares[pl] >= 0.2 for pl in live),
          'after the fault the live planes carried %s of %d packets, the dead one %.1f%%'
          % (', '.join('%d: %.1f%%' % (pl, 100 * shares[pl]) for pl in live), tot,
             100 * shares[plane]))
    r4 = plain_rate(S, t0 - 200 * MS, t0)
    r3 = plain_rate(S, t0 + 100 * MS, end)
    check(r4 and r3 and r3 > 0.3 * r4, 'goodput %.2f Gbit/s on %d planes before the fault, '
          '%.2f Gbit/s on %d after' % (8 * (r4 or 0), nplanes, 8 * (r3 or 0), nplanes - 1))

    # Figures.  Goodput over 5-ms windows of library activity after the
    # fault, against the three planes' rate measured soon after (this
    # machine's speed drifts over seconds).  The same measure taken at a
    # moment without a fault (100 ms earlier) shows what noise alone gives.
    iv, _ = intervals(S)
    W = 5 * MS

    def recovery(t, ref):
        """ms from t until the first 5-ms window at >= 90% of ref: 0 if the
        window starting at t already is (no dip at this resolution)."""
        if not ref:
            return None
        starts = [a for a, e, n in iv if t <= a <= t + 200 * MS]
        back = next((x for x in starts if (rate(iv, x, x + W)[0] or 0) >= 0.9 * ref), None)
        if back is None:
            return None
        return 0.0 if back == starts[0] else (back - t) / MS

    ref, _ = rate(iv, t0 + 50 * MS, t0 + 250 * MS)
    before, _ = rate(iv, t0 - 250 * MS, t0)
    rec = recovery(t0, ref)
    ctl_ref, _ = rate(iv, t0 - 250 * MS, t0 - 100 * MS)
    ctl = recovery(t0 - 100 * MS, ctl_ref) if ctl_ref else None
    t_out = next((x['upd'] for x in S if x['upd'] >= t0 and
                  all(x['p'][i][STATE] in (SUSPECT, DOWN) for i in dead)), None)
    # longest run of library activity without a single acknowledged byte
    stall = run = 0
    prev_e = None
    for a, e, n in iv:
        if e < t0 or a > t0 + 200 * MS:
            continue
        if n > 0 or (prev_e is not None and a != prev_e):
            run = 0
        if n == 0:
            run += e - a
            stall = max(stall, run)
        prev_e = e
    gaps = [b['upd'] - a['upd'] for a, b in zip(S, S[1:]) if t0 - 1 * MS <= a['upd'] <= t0 + 50 * MS]
    x0, x1 = at(S, t0), at(S, t0 + 100 * MS)
    pkt = x1['tx'] / max(1, sum(p[TXP] for p in x1['p']))
    retx = x1['retx'] - x0['retx']
    retx_ctl = x0['retx'] - at(S, t0 - 100 * MS)['retx']
    print('FIGURE failover: plane %d of %d blackholed both ways at %.1f ms into the %.1f-ms '
          'fault command; %d telemetry samples in the next 50 ms (largest gap %.1f ms)'
          % (plane, nplanes, (t0 - tf) / MS, (tfe - tf) / MS, len(gaps),
             max(gaps) / MS if gaps else 0))
    print('FIGURE failover: its paths out of service (suspect/down) %s after the fault'
          % ('%.1f ms' % ((t_out - t0) / MS) if t_out else 'NEVER'))

    def fmt(v):
        return 'not measured' if v is None else '%.1f ms' % v

    print('FIGURE failover: goodput %.2f Gbit/s before, %.2f Gbit/s on the %d planes left; '
          'back at >= 90%% of that (5-ms windows) after %s (0: no dip); the same '
          'measure at a moment without fault: %s' % (8 * (before or 0), 8 * (ref or 0), nplanes - 1,
                                           fmt(rec), fmt(ctl)))
    print('FIGURE failover: longest time without any acknowledged byte %.1f ms' % (stall / MS))
    print('FIGURE failover: retransmitted in the 100 ms after the fault: %d packets '
          '(~%.0f kB; %d in the 100 ms before); whole transfer: %d packets (~%.0f kB; '
          '%d by timer, %d by SACK)'
          % (retx, retx * pkt / 1e3, retx_ctl, s['retx_pkts'], s['retx_pkts'] * pkt / 1e3,
             s['timeout_retx'], s['fast_retx']))


# ---- ecn ---------------------------------------------------------------
def ecn(prefix, size, plane, nplanes, fab_pre, fab_end):
    s, r, S, E = load(prefix)
    common(s, r, size)
    pre, post = ports(fab_pre), ports(fab_end)
    k = ('a%d' % plane, 'ingress')
    ce = post[k]['ce_marked'] - pre[k]['ce_marked']
    fwd = post[k]['fwd'] - pre[k]['fwd']
    check(ce > 0.5 * fwd, 'the switch CE-marked %d of the %d packets of plane %d'
          % (ce, fwd, plane))
    P = s['path']
    for i, p in enumerate(P):
        if p['plane'] == plane:
            check(p['ecn_marked'] > 0, 'path %d (marked plane): %d packets acknowledged '
                  'as CE-marked' % (i, p['ecn_marked']))
        else:
            check(p['ecn_marked'] == 0, 'path %d (clean plane %d): no marks'
                  % (i, p['plane']))
    tot = sum(p['tx_pkts'] for p in P)
    sh = {pl: sum(p['tx_pkts'] for p in P if p['plane'] == pl) / tot for pl in range(nplanes)}
    clean = [sh[pl] for pl in range(nplanes) if pl != plane]
    # the second half of the transfer, once the windows have settled
    m, e = S[len(S) // 2]['p'], S[-1]['p']
    t2 = sum(q[TXP] - m[i][TXP] for i, q in enumerate(e))
    sh2 = {pl: plane_sum(e, pl, TXP, m) / max(1, t2) for pl in range(nplanes)}
    print('FIGURE ecn: traffic shares, whole transfer: %s; second half: %s'
          % (', '.join('plane %d%s %.1f%%' % (pl, ' (marked)' if pl == plane else '',
                                              100 * sh[pl]) for pl in range(nplanes)),
             ', '.join('plane %d %.1f%%' % (pl, 100 * sh2[pl]) for pl in range(nplanes))))
    print('FIGURE ecn: per path packets: %s' % ' '.join(
        '%d%s:%d' % (i, '*' if p['plane'] == plane else '', p['tx_pkts']) for i, p in enumerate(P)))
    check(sh[plane] < 0.5 * min(clean), 'the marked plane carried %.1f%%, less than half '
          'of a clean plane\'s %.1f%%' % (100 * sh[plane], 100 * min(clean)))


# ---- restore -----------------------------------------------------------
def restore(prefix, size, plane, nplanes, fab_pre, fab_end):
    s, r, S, E = load(prefix)
    common(s, r, size)
    E.sort(key=lambda x: x['t'])
    tf, tl = E[0]['t'], E[1]['t_end']
    end = S[-1]['upd']
    pre, post = ports(fab_pre), ports(fab_end)
    bh = [post[k]['blackholed'] - pre[k]['blackholed']
          for k in (('a%d' % plane, 'ingress'), ('b%d' % plane, 'ingress'))]
    check(bh[0] > 0 and bh[1] > 0, 'plane %d blackholed for %.0f ms: %d data packets and '
          '%d ACKs/probes dropped' % (plane, (tl - tf) / MS, bh[0], bh[1]))
    mine = [i for i, p in enumerate(s['path']) if p['plane'] == plane]
    check(mine, 'paths %s use plane %d' % (mine, plane))
    during = [x for x in S if tf <= x['upd'] <= tl]
    for i in mine:
        st = {x['p'][i][STATE] for x in during}
        check(st & {SUSPECT, DOWN}, 'path %d left service during the blackhole (states %s)'
              % (i, sorted(st)))
    back = next((x['upd'] for x in S if x['upd'] > tl and
                 all(x['p'][i][STATE] in (GOOD, CONGESTED) for i in mine)), None)
    check(back is not None, 'the plane\'s paths were back in service %.1f ms after the '
          'blackhole was lifted' % ((back - tl) / MS if back else -1))
    P = s['path']
    for i in mine:
        check(P[i]['state'] in (GOOD, CONGESTED), 'path %d in service at the end (state %d)'
              % (i, P[i]['state']))
    check(end - back > 300 * MS, 'the transfer went on %.0f ms after that' % ((end - back) / MS))
    base = at(S, back + 100 * MS)['p']
    post_tx = [p['tx_pkts'] - base[i][TXP] for i, p in enumerate(P)]
    tot = sum(post_tx)
    sh = sum(post_tx[i] for i in mine) / tot
    for i in mine:
        check(post_tx[i] > 0.01 * tot, 'path %d carried %d of %d packets after its return'
              % (i, post_tx[i], tot))
    # Half when the windows do not bind (here the sender's CPU does); less
    # where they do, as a restored path restarts from the initial window.
    check(sh >= 0.1, 'the restored plane carried %.1f%% of the traffic after its return'
          % (100 * sh))
    print('FIGURE restore: paths back in service %.1f ms after the blackhole was lifted; '
          'plane %d share afterwards %.1f%%' % ((back - tl) / MS, plane, 100 * sh))


# ---- leafspine ---------------------------------------------------------
def leafspine(prefix, size, fab_base, fab_pre, fab_mid, fab_end, spine_pre, spine_end):
    s, r, S, E = load(prefix)
    E.sort(key=lambda x: x['t'])
    tf = E[0]['t_end']  # snapshot first, then the blackhole
    base, pre, mid, endc = ports(fab_base), ports(fab_pre), ports(fab_mid), ports(fab_end)
    up = [('s0', 'egress'), ('s1', 'egress')]
    n = [pre[k]['fwd'] - base[k]['fwd'] for k in up]
    # spread: the leaf uplinks before the fault
    if min(n) <= 0.05 * sum(n):
        print('  note: before the fault %d / %d data packets on uplinks s0 / s1: all '
              'paths on one spine' % tuple(n))
        sys.exit(3)
    common(s, r, size)
    ok('ECMP spread the %d paths over both spines before the fault: %d / %d data '
       'packets on uplinks s0 / s1' % (len(s['path']), n[0], n[1]))
    sp, spe = ports(spine_pre), ports(spine_end)
    bh = sum(spe[k]['blackholed'] - sp[k]['blackholed'] for k in spe if k[1] == 'ingress')
    check(bh > 0, 'spine s0 blackholed: %d packets dropped there' % bh)
    # after the paths were moved: no more data into s0
    d = [endc[k]['fwd'] - mid[k]['fwd'] for k in up]
    check(d[1] > 1000 and d[0] <= 0.02 * d[1], 'once the paths moved, uplink s0 got %d '
          'packets, s1 %d' % tuple(d))
    P = s['path']
    b = at(S, E[0]['t'])['p']  # just before the fault
    # A path is on the dead spine (data or ACK direction) if, with the port
    # it had at the fault, nothing more was acknowledged once ACKs already
    # on their way had been processed (30 ms), or if its port changed
    # before that (the reaction to the fault; ports also change now and
    # then without a fault, after spurious timeouts on this busy machine).
    t1 = tf + 30 * MS
    hit = []
    for i in range(len(P)):
        chg = next((x['upd'] for x in S if x['upd'] > tf and
                    x['p'][i][SPORT] != b[i][SPORT]), None)
        if chg is not None and chg <= t1:
            hit.append(i)
            continue
        upto = at(S, (chg or S[-1]['upd'] + 1) - 1)['p'][i][ACKED]
        if upto - at(S, t1)['p'][i][ACKED] <= 0:
            hit.append(i)
    share0 = n[0] / sum(n)
    check(len(hit) >= max(1, round(share0 * len(P)) - 1),
          'paths hit by the dead spine: %s (uplink s0 carried %.0f%% of the data before)'
          % (hit, 100 * share0))
    for i in hit:
        p = P[i]
        if p['state'] in (SUSPECT, DOWN):
            ok('path %d: %s at the end (entropy %d -> %d)'
               % (i, 'suspect' if p['state'] == SUSPECT else 'down', b[i][SPORT], p['sport']))
            continue
        # In service: it must have a new port, and carry data on it.
        t_new = next((x['upd'] for x in S if x['upd'] > tf and
                      all(y['p'][i][SPORT] == p['sport'] for y in S if y['upd'] >= x['upd'])),
                     S[-1]['upd'])
        q = at(S, t_new)['p'][i]
        check(p['sport'] != b[i][SPORT] and p['tx_pkts'] > q[TXP] and p['acked_pkts'] > q[ACKED],
              'path %d moved off the dead spine: entropy %d -> %d, then %d packets sent and '
              '%d acknowledged on the new port' % (i, b[i][SPORT], p['sport'],
                                                   p['tx_pkts'] - q[TXP], p['acked_pkts'] - q[ACKED]))
    print('FIGURE leafspine: %d of %d paths hit (data or ACKs through s0); entropy: %s'
          % (len(hit), len(P), ' '.join('%d:%d->%d' % (i, b[i][SPORT], P[i]['sport'])
                                         for i in hit)))


cmd = sys.argv[1]
args = sys.argv[2:]
if cmd == 'leafspine':
    leafspine(args[0], int(args[1]), *args[2:])
else:
    globals()[cmd](args[0], int(args[1]), int(args[2]), int(args[3]), args[4], args[5])
EOF

# ---- fabric and transfers ----------------------------------------------
# fab_up TOPO ARGS...: build it (removed on exit), source its description.
fab_up() {
	local p
	p=$(xr_prefix)
	xr_cleanup_push "bash '$ROOT/tests/fabric/fabric.sh' down $p >/dev/null 2>&1"
	bash tests/fabric/fabric.sh up "$@" --prefix "$p" --env "$TMP/fab.env" >/dev/null ||
		fail "fabric.sh up $* failed"
	# shellcheck disable=SC1091
	. "$TMP/fab.env"
}
fab_down() { bash tests/fabric/fabric.sh down "$FAB_PREFIX" >/dev/null; }

# attach NS N: xroce on eth0..eth(N-1); the second and later interfaces get
# the same program (the library needs that for multi-plane).
attach() {
	local i
	for ((i = 0; i < $2; i++)); do
		nsx "$1" "$XROCE" attach --force "eth$i" >/dev/null || fail "attach eth$i in $1"
	done
}

# xfer NAME SIZE IFACES DST [--at 'BYTES:CMD' ...]: one verified transfer
# A -> B, the sampler following the sender.  Results: $TMP/NAME.{send,recv,tl}
xfer() {
	local name=$1 size=$2 ifs=$3 dst=$4 rpid tpid rc=0 i
	shift 4
	rm -f "$TMP/ready"
	# shellcheck disable=SC2086 # IFACES is a list of -i options
	nsx "$B" timeout $((120 * TS)) "$XROCE" recv $ifs -b 64M --accept-timeout $((30000 * TS)) \
		--idle $((10000 * TS)) -t $((2000 * TS)) --json \
		>"$TMP/$name.recv" 2>"$TMP/$name.recv.err" &
	rpid=$!
	nsx "$A" timeout $((120 * TS)) python3 "$TMP/telem.py" --iface eth0 --out "$TMP/$name.tl" \
		--ready "$TMP/ready" --timeout $((100 * TS)) "$@" 2>"$TMP/$name.tl.err" &
	tpid=$!
	for ((i = 0; i < 200 * TS; i++)); do
		[ -e "$TMP/ready" ] && nsx "$B" ss -Hlun "sport = :4794" | grep -q . && break
		if ! kill -0 "$tpid" 2>/dev/null || ! kill -0 "$rpid" 2>/dev/null; then
			break
		fi
		sleep 0.05
	done
	[ -e "$TMP/ready" ] || fail "telemetry sampler did not start: $(cat "$TMP/$name.tl.err")"
	nsx "$B" ss -Hlun "sport = :4794" | grep -q . ||
		fail "the receiver does not listen: $(cat "$TMP/$name.recv.err")"
	# shellcheck disable=SC2086
	nsx "$A" timeout $((120 * TS)) "$XROCE" send $ifs "$dst" -n "$size" -t $((2000 * TS)) \
		--json >"$TMP/$name.send" 2>"$TMP/$name.send.err" || rc=$?
	wait "$rpid" || fail "$name: recv failed: $(cat "$TMP/$name.recv.err")"
	[ "$rc" -eq 0 ] || fail "$name: send failed (exit $rc): $(cat "$TMP/$name.send.err")"
	wait "$tpid" || fail "$name: sampler: $(cat "$TMP/$name.tl.err")"
}

show() { "$XRF" show --netns "$1" --json >"$2"; }

# both CMD1 CMD2: a shell command running the two at once (both directions
# of a link fail together), failing if either fails.
# shellcheck disable=SC2016 # expanded by the sh that runs it
both() { printf '%s & p=$!; %s; r=$?; wait $p && [ $r -eq 0 ]' "$1" "$2"; }

# ---- scenarios -----------------------------------------------------------
scenario_failover() {
	echo "== failover: planes 4, 8 paths, one plane blackholed mid-transfer"
	fab_up planes 4
	A=$FAB_h0_NS B=$FAB_h1_NS
	local sw=$FAB_SWITCHES dead=$((RANDOM % 4))
	attach "$A" 4
	attach "$B" 4
	show "$sw" "$TMP/f.pre"
	xfer f 268435456 "-i eth0 -i eth1 -i eth2 -i eth3" "$FAB_h1_IP4_0" \
		--at "$((80 << 20)):$(both "$XRF set --netns $sw --port a$dead blackhole=all" \
			"$XRF set --netns $sw --port b$dead blackhole=all")"
	show "$sw" "$TMP/f.end"
	python3 "$TMP/check.py" failover "$TMP/f" 268435456 "$dead" 4 "$TMP/f.pre" "$TMP/f.end" ||
		fail "failover"
	fab_down
}

scenario_ecn() {
	echo "== ecn: planes 2, every ECT packet of plane 1 CE-marked"
	fab_up planes 2
	A=$FAB_h0_NS B=$FAB_h1_NS
	local sw=$FAB_SWITCHES
	attach "$A" 2
	attach "$B" 2
	"$XRF" set --netns "$sw" --port a1 ecn=10,1500 >/dev/null
	show "$sw" "$TMP/e.pre"
	xfer e 268435456 "-i eth0 -i eth1" "$FAB_h1_IP4_0"
	show "$sw" "$TMP/e.end"
	python3 "$TMP/check.py" ecn "$TMP/e" 268435456 1 2 "$TMP/e.pre" "$TMP/e.end" || fail "ecn"
	fab_down
}

scenario_restore() {
	echo "== restore: planes 2, plane 1 blackholed, then lifted"
	fab_up planes 2
	A=$FAB_h0_NS B=$FAB_h1_NS
	local sw=$FAB_SWITCHES
	attach "$A" 2
	attach "$B" 2
	show "$sw" "$TMP/r.pre"
	xfer r 536870912 "-i eth0 -i eth1" "$FAB_h1_IP4_0" \
		--at "$((80 << 20)):$(both "$XRF set --netns $sw --port a1 blackhole=all" \
			"$XRF set --netns $sw --port b1 blackhole=all")" \
		--at "$((200 << 20)):$(both "$XRF set --netns $sw --port a1 blackhole=off" \
			"$XRF set --netns $sw --port b1 blackhole=off")"
	show "$sw" "$TMP/r.end"
	python3 "$TMP/check.py" restore "$TMP/r" 536870912 1 2 "$TMP/r.pre" "$TMP/r.end" || fail "restore"
	fab_down
}

scenario_leafspine() {
	echo "== leafspine: 2 hosts, 2 spines, spine s0 blackholed mid-transfer"
	fab_up leafspine 2 --spines 2
	A=$FAB_h0_NS B=$FAB_h1_NS
	local l0=${FAB_h0_PORT_0%%:*} s0=$FAB_PREFIX-s0 try rc
	attach "$A" 1
	attach "$B" 1
	for try in 1 2; do
		show "$l0" "$TMP/l.base"
		show "$s0" "$TMP/l.spre"
		xfer l 268435456 "-i eth0" "$FAB_h1_IP4_0" \
			--at "$((80 << 20)):$XRF show --netns $l0 --json >$TMP/l.pre && { $(both \
				"$XRF set --netns $s0 --port l0 blackhole=all" \
				"$XRF set --netns $s0 --port l1 blackhole=all"); }" \
			--at "$((128 << 20)):$XRF show --netns $l0 --json >$TMP/l.mid"
		show "$l0" "$TMP/l.end"
		show "$s0" "$TMP/l.spost"
		rc=0
		python3 "$TMP/check.py" leafspine "$TMP/l" 268435456 "$TMP/l.base" "$TMP/l.pre" \
			"$TMP/l.mid" "$TMP/l.end" "$TMP/l.spre" "$TMP/l.spost" || rc=$?
		[ "$rc" -eq 0 ] && break
		# Exit 3: the paths' random ports all hashed onto one spine (1 in
		# 128): nothing to learn from that run; once more with new ports.
		if [ "$rc" -ne 3 ] || [ "$try" -ne 1 ]; then
			fail "leafspine"
		fi
		echo "  (all paths hashed onto one spine; once more with new ports)"
		"$XRF" set --netns "$s0" --port l0 blackhole=off >/dev/null
		"$XRF" set --netns "$s0" --port l1 blackhole=off >/dev/null
	done
	fab_down
}

SCEN=("$@")
[ ${#SCEN[@]} -gt 0 ] || SCEN=(failover ecn leafspine restore)
for s in "${SCEN[@]}"; do
	declare -F "scenario_$s" >/dev/null || xr_die "unknown scenario $s"
	"scenario_$s"
done
echo "test_multipath: ${#SCEN[@]} scenario(s) passed"
