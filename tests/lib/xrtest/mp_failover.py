"""mp_failover.py: test_multipath.sh's failover scenario: one plane of
NPLANES blackholed both ways mid-transfer.  Checks that the transfer
completed verified, ran on past the fault, the switch really dropped both
directions, the dead plane's paths were hit and left service, the live
planes carried the rest at a goodput above 30% of before; prints FIGURE
lines (time out of service, goodput recovery against a fault-free
control, longest stall, retransmissions).

  mp_failover.py PREFIX SIZE PLANE NPLANES FABRIC_PRE FABRIC_END

PREFIX.{send,recv,tl}: xroce send/recv --json and telem.py's samples;
FABRIC_*: `xrfabric show --json` of the switch before and after."""
import sys

from mp_common import DOWN, MS, SUSPECT, ACKED, STATE, TXP, at, check, common, intervals, load, ports, rate


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


failover(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6])
