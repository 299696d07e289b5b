"""mp_ecn.py: test_multipath.sh's ecn scenario: every ECT packet of one
plane CE-marked for a whole transfer.  Checks that the switch marked most
of that plane's packets, its paths (only they) report marks, and it
carried less than half of a clean plane's share; prints the shares.

  mp_ecn.py PREFIX SIZE PLANE NPLANES FABRIC_PRE FABRIC_END"""
import sys

from mp_common import TXP, check, common, load, plane_sum, ports


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


ecn(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6])
