"""mp_restore.py: test_multipath.sh's restore scenario: one plane blackholed,
then given back, during a transfer.  Checks that its paths left service
during the blackhole, came back after it, are in service at the end and
carried traffic again; prints how long they took.

  mp_restore.py PREFIX SIZE PLANE NPLANES FABRIC_PRE FABRIC_END"""
import sys

from mp_common import CONGESTED, DOWN, GOOD, MS, SUSPECT, STATE, TXP, at, check, common, load, ports


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


restore(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6])
