"""incast_run.py: one run of tests/bench/incast.sh: starts N `xroce perf
client`s at once (one per sender namespace), stamps their interval lines
as they arrive, samples the senders' telemetry (`xroce stats --json`) and
the switch's and hosts' counters before and after; writes DIR/run.json
(and the raw client stderr and stats samples beside it), which
incast_report.py turns into figures.

  incast_run.py --env FABRIC_ENV --dir DIR --xroce X --xrfabric F --n N
                --nmax NMAX --size B --secs S --interval-ms I --stats-ms M
                --nice K

FABRIC_ENV: the env file `fabric.sh up incast NMAX` wrote."""
import argparse
import json
import os
import selectors
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'xrtest'))
import fabenv  # noqa: E402
import procstat  # noqa: E402


def nsx(ns, *cmd):
    return ['nsenter', '--net=/var/run/netns/' + ns, *cmd]


def out(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def xroce_drops(xroce, ns):
    """drop_* counters of the xroce program in ns (`xroce status --json`)."""
    d = {}

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == 'stats' and isinstance(v, dict):
                    for n, x in v.items():
                        if n.startswith('drop_') and isinstance(x, int):
                            d[n] = d.get(n, 0) + x
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(json.loads(out(nsx(ns, xroce, 'status', '--json'))))
    return d


def counters(env, xrfabric, xroce, nmax):
    """Switch and veth counters: tbf, xrfabric ports, interface drops, and
    the drops of xroce's XDP program on the receiver and the senders."""
    sw, port = env['FAB_BOTTLENECK'].split(':')
    c = {}
    for q in json.loads(out(nsx(sw, 'tc', '-s', '-j', 'qdisc', 'show', 'dev', port))):
        if q['kind'] == 'tbf':
            c['tbf_pkts'], c['tbf_bytes'], c['tbf_drops'] = q['packets'], q['bytes'], q['drops']
    fab = json.loads(out([xrfabric, 'show', '--netns', sw, '--json']))
    for p in fab['ports']:
        if p['port'] == port and p['dir'] == 'egress':
            c['bn_rx'] = p['counters']['rx']
            c['bn_ce'] = p['counters']['ce_marked']
        for k in ('drop_loss', 'drop_ge', 'blackholed'):
            c['fab_drops'] = c.get('fab_drops', 0) + p['counters'][k]
    drops = 0
    nss = [sw, env['FAB_r_NS']] + [env['FAB_h%d_NS' % i] for i in range(nmax)]
    for ns in nss:
        for l in json.loads(out(nsx(ns, 'ip', '-s', '-j', 'link', 'show'))):
            s = l.get('stats64', {})
            if l['ifname'] != 'lo':
                drops += s.get('rx', {}).get('dropped', 0) + s.get('tx', {}).get('dropped', 0)
    c['veth_drops'] = drops
    for k, v in xroce_drops(xroce, env['FAB_r_NS']).items():
        c['r_' + k] = v
    for i in range(nmax):
        for k, v in xroce_drops(xroce, env['FAB_h%d_NS' % i]).items():
            c['h_' + k] = c.get('h_' + k, 0) + v
    return c


def run(a):
    env = fabenv.load(a.env)
    n = a.n
    os.makedirs(a.dir, exist_ok=True)
    bg = procstat.busy(0.5)
    c0 = counters(env, a.xrfabric, a.xroce, a.nmax)
    sel = selectors.DefaultSelector()
    procs, lines, errs = [], [[] for _ in range(n)], []
    launch = time.monotonic()
    for i in range(n):
        ns = env['FAB_h%d_NS' % i]
        err = open(os.path.join(a.dir, 'client%d.err' % i), 'w')
        errs.append(err)
        p = subprocess.Popen(nsx(ns, 'nice', '-n', str(a.nice), 'stdbuf', '-oL', a.xroce, 'perf', 'client', '-i', 'eth0',
                                 env['FAB_r_IP4_0'], '--mode', 'bw', '-s', str(a.size),
                                 '-d', str(a.secs), '--json', '--interval-ms', str(a.interval_ms)),
                             stdout=subprocess.PIPE, stderr=err)
        procs.append(p)
        os.set_blocking(p.stdout.fileno(), False)
        sel.register(p.stdout.fileno(), selectors.EVENT_READ, i)
    # Telemetry samplers, one per sender namespace (they sleep between rounds).
    samplers = []
    for i in range(n):
        ns = env['FAB_h%d_NS' % i]
        f = open(os.path.join(a.dir, 'stats%d.jsonl' % i), 'w')
        samplers.append((subprocess.Popen(nsx(ns, a.xroce, 'stats', '--json', '-i',
                                              str(a.stats_ms / 1000)),
                                          stdout=f, stderr=subprocess.DEVNULL), f))
    open_ = n
    deadline = launch + a.secs + 30
    part = [b''] * n  # an incomplete last line per client
    while open_ and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            # Raw reads: every complete line is stamped as it arrives (a
            # buffered reader would hold some back until more came).
            try:
                data = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            now = time.monotonic()
            i = key.data
            if not data:
                sel.unregister(key.fd)
                open_ -= 1
                continue
            *done, part[i] = (part[i] + data).split(b'\n')
            lines[i].extend((now, l.decode(errors='replace').strip()) for l in done)
    for s, f in samplers:
        s.terminate()
        s.wait()
        f.close()
    rcs = []
    for p in procs:
        try:
            rcs.append(p.wait(timeout=5))
        except subprocess.TimeoutExpired:
            p.kill()
            rcs.append(p.wait())
    for e in errs:
        e.close()
    c1 = counters(env, a.xrfabric, a.xroce, a.nmax)
    wall_off = time.time() - time.monotonic()
    res = {'n': n, 'launch': launch, 'rcs': rcs, 'clients': [], 'host_busy': bg,
           'counters': {k: c1[k] - c0.get(k, 0) for k in c1}}
    for i in range(n):
        ivl, summ = [], None
        for now, l in lines[i]:
            try:
                d = json.loads(l)
            except ValueError:
                continue
            if d.get('mode') == 'interval':
                # wall_ns (CLOCK_REALTIME when the row was sampled), where
                # the client prints it, placed on this monotonic clock
                w = d['wall_ns'] / 1e9 - wall_off if 'wall_ns' in d else None
                ivl.append((now, d['t_ms'], d['bytes'], w))
            elif d.get('mode') == 'bw':
                summ = d
        res['clients'].append({'intervals': ivl, 'summary': summ})
    json.dump(res, open(os.path.join(a.dir, 'run.json'), 'w'))


ap = argparse.ArgumentParser()
for k, t in (('env', str), ('dir', str), ('xroce', str), ('xrfabric', str), ('n', int),
             ('nmax', int), ('size', int), ('secs', float), ('interval_ms', int), ('stats_ms', int),
             ('nice', int)):
    ap.add_argument('--' + k.replace('_', '-'), dest=k, type=t, required=True)
run(ap.parse_args())
