"""coexist_run.py: one run of tests/bench/coexist.sh: starts the xroce
and TCP clients in the configured order (the second --lead seconds after
the first), samples the TCP sender's sockets (ss) and xroce's telemetry
(`xroce stats --json`), reads the bottleneck's counters before and after;
writes DIR/run.json (and the clients' raw output beside it), which
coexist_report.py turns into figures.

  coexist_run.py --cfg CFG_JSON --dir DIR

CFG_JSON: what coexist.sh wrote for the run (queue, rate, n, order, cc,
loss, secs, lead_s, the binaries, namespaces, bottleneck port, ...)."""
import argparse
import json
import os
import re
import subprocess
import threading
import time


def nsx(ns, *cmd):
    return ['nsenter', '--net=/var/run/netns/' + ns, *cmd]


def out(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def bottleneck_counters(c):
    """tbf packets/drops of the bottleneck, and the fabric's CE marks there."""
    r = {}
    for q in json.loads(out(nsx(c['sw_ns'], 'tc', '-s', '-j', 'qdisc', 'show', 'dev', c['bn_port']))):
        if q['kind'] == 'tbf':
            r['tbf_pkts'], r['tbf_drops'] = q['packets'], q['drops']
    if c['fabric']:
        fab = json.loads(out([c['xrfabric'], 'show', '--netns', c['sw_ns'], '--json']))
        for p in fab['ports']:
            if p['port'] == c['bn_port'] and p['dir'] == 'egress':
                r['ce_marked'] = p['counters']['ce_marked']
                r['bn_seen'] = p['counters']['rx']
            for k in ('drop_loss',):
                r['rand_drops'] = r.get('rand_drops', 0) + p['counters'][k]
    return r


def host_busy(secs):
    """Share of all CPUs busy over secs, and the 1-minute load average."""
    def snap():
        with open('/proc/stat') as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t0, i0 = snap()
    time.sleep(secs)
    t1, i1 = snap()
    with open('/proc/loadavg') as f:
        load = float(f.read().split()[0])
    return (1 - (i1 - i0) / (t1 - t0)) if t1 > t0 else 0.0, load


SS_FIELD = re.compile(r'\b(bytes_acked|cwnd|rtt|retrans|delivery_rate|ssthresh):(\S+)')


def ss_sample(c):
    """The TCP sender's sockets to the receiver: (port, bytes_acked, cwnd,
    rtt ms, total retransmissions) each."""
    txt = out(nsx(c['tcp_ns'], 'ss', '-Htin', 'state', 'established', 'dst', c['dst_ip']))
    res, cur = [], None
    for line in txt.splitlines():
        if not line.startswith((' ', '\t')):
            f = line.split()
            # Recv-Q Send-Q Local:Port Peer:Port
            cur = int(f[2].rsplit(':', 1)[1]) if len(f) >= 4 else None
            continue
        if cur is None:
            continue
        d = dict(SS_FIELD.findall(line))
        ca = line.split()[0] if line.split() else ''
        res.append(dict(port=cur, ca=ca, acked=int(d.get('bytes_acked', 0)),
                        cwnd=int(d.get('cwnd', 0)),
                        rtt=float(d['rtt'].split('/')[0]) if 'rtt' in d else None,
                        retrans=int(d['retrans'].split('/')[1]) if 'retrans' in d else 0))
        cur = None
    return res


def run(a):
    c = json.load(open(a.cfg))
    os.makedirs(a.dir, exist_ok=True)
    busy = host_busy(0.5)
    c0 = bottleneck_counters(c)
    stop = threading.Event()
    ss_rows = []

    def sampler():
        while not stop.is_set():
            t = time.time()
            try:
                ss_rows.append((t, ss_sample(c)))
            except (subprocess.CalledProcessError, OSError, ValueError):
                pass
            stop.wait(max(0.0, c['sample_s'] - (time.time() - t)))

    xr_cmd = nsx(c['xr_ns'], 'timeout', '-k', '2', str(c['xr_secs'] + 30), 'stdbuf', '-oL',
                 c['xroce'], 'perf', 'client', '-i', 'eth0', c['dst_ip'], '--mode', 'bw',
                 '-s', str(c['size']), '-d', str(c['xr_secs']), '--json',
                 '--interval-ms', str(int(c['sample_s'] * 1000)))
    if c['max_inflight']:
        xr_cmd += ['--max-inflight', str(c['max_inflight'])]
    tcp_cmd = nsx(c['tcp_ns'], 'timeout', '-k', '2', str(c['tcp_secs'] + 30), 'iperf3', '-c',
                  c['dst_ip'], '-t', str(c['tcp_secs']), '-P', str(c['n']), '-C', c['cc'],
                  '-J', '-i', '0')
    xr_out = open(os.path.join(a.dir, 'xroce.out'), 'w')
    xr_err = open(os.path.join(a.dir, 'xroce.err'), 'w')
    tcp_out = open(os.path.join(a.dir, 'iperf3.json'), 'w')
    tcp_err = open(os.path.join(a.dir, 'iperf3.err'), 'w')
    stats_f = open(os.path.join(a.dir, 'stats.jsonl'), 'w')
    stats = subprocess.Popen(nsx(c['xr_ns'], c['xroce'], 'stats', '--json', '-i',
                                 str(c['sample_s'])), stdout=stats_f,
                             stderr=subprocess.DEVNULL)
    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    starts = {}
    order = [('xroce', xr_cmd, xr_out, xr_err), ('tcp', tcp_cmd, tcp_out, tcp_err)]
    if c['order'] == 'tcp':
        order.reverse()
    if not c['n']:
        order = order[:1] if order[0][0] == 'xroce' else order[1:]
    procs = {}
    for i, (k, cmd, fo, fe) in enumerate(order):
        if i:
            time.sleep(c['lead_s'])
        starts[k] = time.time()
        procs[k] = subprocess.Popen(cmd, stdout=fo, stderr=fe)
    rcs = {}
    for k, p in procs.items():
        try:
            rcs[k] = p.wait(timeout=c['lead_s'] + c['secs'] + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            rcs[k] = p.wait()
    stop.set()
    th.join()
    stats.terminate()
    stats.wait()
    for f in (xr_out, xr_err, tcp_out, tcp_err, stats_f):
        f.close()
    c1 = bottleneck_counters(c)
    res = dict(cfg=c, starts=starts, rcs=rcs, host_busy=busy[0], load1=busy[1],
               mono_to_wall=time.time() - time.monotonic(),
               counters={k: c1[k] - c0.get(k, 0) for k in c1}, ss=ss_rows)
    json.dump(res, open(os.path.join(a.dir, 'run.json'), 'w'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cfg', required=True)
    ap.add_argument('--dir', required=True)
    run(ap.parse_args())


if __name__ == '__main__':
    main()
