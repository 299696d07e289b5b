"""mp_leafspine.py: test_multipath.sh's leafspine scenario: spine s0 of a
leaf-spine fabric blackholed mid-transfer.  Checks that ECMP had spread
the paths over both spines (exit 3 if not: all ports hashed onto one
spine, the run proves nothing), the transfer completed, data stopped
going to s0 once the paths moved, and every path the dead spine hit is
out of service or moved to a new source port that carries data.

  mp_leafspine.py PREFIX SIZE LEAF_BASE LEAF_PRE LEAF_MID LEAF_END SPINE_PRE SPINE_END"""
import sys

from mp_common import DOWN, MS, SUSPECT, ACKED, SPORT, TXP, at, check, common, load, ok, ports


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


leafspine(sys.argv[1], int(sys.argv[2]), *sys.argv[3:9])
