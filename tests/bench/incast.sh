#!/usr/bin/env bash
# incast.sh: N senders into one receiver through one rate-limited bottleneck,
# with and without the receiver's rate hints: goodput, fairness, time to
# converge, losses, ECN marks, and per-sender rates over time.
#
# Topology: tests/fabric/fabric.sh incast NMAX: senders h0..h(NMAX-1) and the
# receiver r behind one routed switch; the switch's port to r is the
# bottleneck: tbf RATE, burst --burst, queue --queue (tbf latency), and in
# front of it, at TC egress, xrfabric's rate-based virtual queue marks
# ECN-capable packets CE when its backlog exceeds --ecn-thresh bytes
# (ecn=RATE,THRESH: the same rate as the tbf, so senders see marks before
# the tbf queue fills and drops).  Every host runs xroce; the receiver runs
# one `xroce perf server`, each sender one `xroce perf client --mode bw`
# (RDMA WRITEs of --size bytes, 8 paths), all started at once, for --secs.
#
# Hints: "on" sets the receiver's --rate-capacity to --hint-frac of the
# bottleneck's goodput capacity, i.e. RATE * hint-frac * PAYLOAD/FRAME: the
# hint is in payload Mbit/s (the sender converts it with its segment size,
# 1408 B at MTU 1500, while the tbf counts whole 1514 B frames), so 95% of
# the raw rate would ask for ~102% of the wire.  "off" sets it to 0.
#
# DEFINITIONS (all on one time axis, CLOCK_MONOTONIC of every namespace):
#   start  each client's own t0 (after its connection is up), recovered from
#          its interval rows: wall_ns - t_ms (the wall clock stamp it prints),
#          or for clients without it min(arrival time - t_ms) (stdout is line
#          buffered, so arrival follows printing closely).  t = 0 is the
#          LAST client's start (from then on all N send); the analysis ends
#          at the FIRST client's end of sending (its t0 + secs).  "skew" is
#          the spread of the starts.
#   bins   each client prints the bytes acknowledged since its previous line
#          (--interval-ms, default 5); those bytes are spread uniformly over
#          the line's interval and summed into --bin-ms bins (default 5).
#   Jain   J = (sum x)^2 / (N sum x^2) over the senders' goodputs x.
#          "J run": over [100 ms, end).  "J50 min/med": over consecutive
#          non-overlapping --window-ms windows (default 50) in [100 ms, end);
#          "fair%": the share of those windows with J >= --fair.
#   t_conv the smallest t (a multiple of bin-ms, t >= 0) such that EVERY
#          window [t', t' + window-ms) with t' >= t on the bin grid (sliding
#          by one bin, up to the end) has J >= --fair (default 0.95).  So
#          t_conv = 0 means fair from the first window on; "never" means the
#          last window is below the threshold.  It is the start of the first
#          window of the settled run, with bin-ms resolution.
#   minshare  the smallest sender goodput over [100 ms, end) divided by the
#          fair share (aggregate / N): below 0.3 counts as collapse.
#   goodput   acknowledged payload over [0, end), all senders, Mbit/s, and
#          as a fraction of the tbf's RATE (raw; payload can reach at most
#          ~93% of it with 64 KiB WRITEs at MTU 1500: 47 frames, 70518 B).
#   retx      the clients' retransmitted packets (whole run, summaries);
#   tbf drop  dropped packets of the bottleneck's tbf (tc -s, whole run);
#   veth drop rx/tx drops of every fabric interface (the 256-entry rings of
#             veths with XDP), whole run;
#   xr drop   packets xroce's XDP program dropped (drop_* counters of `xroce
#             status` on the receiver and the senders: event ring full,
#             window, ...), whole run; the kinds are in the --json rows;
#   ECN%      CE-marked / packets seen by the bottleneck's TC egress;
#   hint      median rate hint (Mbit/s) the senders held, from `xroce stats
#             --json` sampled every --stats-ms in every sender's namespace;
#   cwnd      median over samples of a sender's summed path windows (pkts);
#   skew      ms between the first and the last client's start;
#   bg%       share of the CPUs busy during 0.5 s before the run, and
#   bgrun     the mean number of runnable tasks then: other work on the
#             host, which the senders compete with for the 2 CPUs.
#
# SETTINGS (defaults) AND WHY, as measured on the 2-core development host:
#   --rate 500     Mbit/s: without hints 8 senders fill it (80-92% of the raw
#                  rate, the payload ceiling being ~93%) when the host is
#                  not busy with other work; at 1000 the same host reached
#                  only 59-82% with 4-8 senders: the senders' CPU is the
#                  limit there, not the bottleneck.
#   --ecn-thresh 30000  bytes of virtual queue (0.5 ms at 500 Mbit/s).  The
#                  virtual queue has no token bucket, the tbf a 32 KB one, so
#                  a burst marks before the tbf queues at all; larger
#                  thresholds (65 KB, 130 KB) let queues reach the 1 ms
#                  minimum RTO and gave thousands of spurious timeouts per
#                  run (zero drops anywhere) without hints.
#   --active-window 50000  us, the receiver's window for counting active
#                  senders.  With the library's default (1000) it counted 1
#                  sender in every sampled window while 4 were sending: the
#                  senders are busy-polling processes that send in bursts
#                  while scheduled (off the CPU for tens of ms when the host
#                  is busy), so each 1 ms sees one or two of them and every
#                  hint was the whole capacity; 20 ms still counted only 3
#                  of 8.  --active-window 0 keeps the library default.
# Usage: tests/bench/incast.sh [--senders "2 4 8"] [--hints "on off"]
#          [--rate MBIT] [--secs S] [--repeat K] [--size BYTES]
#          [--ecn-thresh BYTES] [--burst B] [--queue LAT] [--hint-frac F]
#          [--active-window US] [--interval-ms N] [--bin-ms N]
#          [--window-ms N] [--fair J] [--stats-ms N] [--nice N]
#          [--out DIR] [--json FILE] [--quiet]
# --out DIR keeps everything: per run raw client output, stats samples,
# counters, and rates.csv (run, n, hints, rep, sender, t_ms, mbps per bin)
# for plotting; --json FILE the summary rows.  --nice N runs the clients
# and the server at that niceness.  Needs root, build/xroce and
# build/xrfabric (or the binaries named by $XROCE and $XRFABRIC, e.g. to
# compare two builds).  Ctrl-C, a TERM or any failure removes the
# namespaces and every process started.  Several minutes for the default
# set (6 configurations, ~10-15 s each, times --repeat).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"

SENDERS="2 4 8"
HINTS="on off"
RATE=500
SECS=3
REPEAT=1
SIZE=65536
ECN_THRESH=30000
BURST=32kb
QUEUE=20ms
HINT_FRAC=0.95
ACTIVE_WIN=50000
INTERVAL_MS=5
BIN_MS=5
WINDOW_MS=50
FAIR=0.95
STATS_MS=200
NICE=0
OUT=
JSON=
QUIET=0
while [ $# -gt 0 ]; do
	case $1 in
	--senders) SENDERS=$2; shift 2 ;;
	--hints) HINTS=$2; shift 2 ;;
	--rate) RATE=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--ecn-thresh) ECN_THRESH=$2; shift 2 ;;
	--burst) BURST=$2; shift 2 ;;
	--queue) QUEUE=$2; shift 2 ;;
	--hint-frac) HINT_FRAC=$2; shift 2 ;;
	--active-window) ACTIVE_WIN=$2; shift 2 ;;
	--interval-ms) INTERVAL_MS=$2; shift 2 ;;
	--bin-ms) BIN_MS=$2; shift 2 ;;
	--window-ms) WINDOW_MS=$2; shift 2 ;;
	--fair) FAIR=$2; shift 2 ;;
	--stats-ms) STATS_MS=$2; shift 2 ;;
	--nice) NICE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	--quiet) QUIET=1; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) xr_die "unknown option $1 (--help)" ;;
	esac
done
for n in $SENDERS; do
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 32 ]; then xr_die "--senders: 1..32"; fi
done
for h in $HINTS; do [ "$h" = on ] || [ "$h" = off ] || xr_die "--hints: on and/or off"; done
if ! [[ $RATE =~ ^[0-9]+$ ]] || [ "$RATE" -lt 10 ]; then xr_die "--rate: Mbit/s, >= 10"; fi
if ! [[ $REPEAT =~ ^[0-9]+$ ]] || [ "$REPEAT" -lt 1 ]; then xr_die "--repeat: >= 1"; fi
if ! [[ $NICE =~ ^[0-9]+$ ]] || [ "$NICE" -gt 19 ]; then xr_die "--nice: 0..19"; fi
XROCE=${XROCE:-$PWD/build/xroce}
XRFABRIC=${XRFABRIC:-$PWD/build/xrfabric}
export XRFABRIC
[ -x "$XROCE" ] || xr_die "$XROCE missing: make"
[ -x "$XRFABRIC" ] || xr_die "$XRFABRIC missing: make build/xrfabric"
command -v stdbuf >/dev/null || xr_die "stdbuf missing (coreutils)"
xr_bpffs

NMAX=0
for n in $SENDERS; do [ "$n" -gt "$NMAX" ] && NMAX=$n; done
PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
[ -n "$OUT" ] || OUT=$TMP/out
mkdir -p "$OUT"
# Registered after the temp dir: runs first, and kills every process in
# the namespaces (clients, servers, stats samplers) before deleting them.
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
# Runs before that: the collector (it would wait for its clients).
CPID=
stop_collector() {
	[ -n "$CPID" ] || return 0
	kill "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
}
xr_cleanup_push stop_collector
bash tests/fabric/fabric.sh up incast "$NMAX" --prefix "$PFX" --rate "${RATE}mbit" \
	--burst "$BURST" --latency "$QUEUE" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1090,SC1091
. "$TMP/env"
cp "$TMP/env" "$OUT/fabric.env"
SW=${FAB_BOTTLENECK%%:*}
BPORT=${FAB_BOTTLENECK#*:}
# shellcheck disable=SC2154 # FAB_* come from the env file
RNS=$FAB_r_NS
"$XRFABRIC" set --netns "$SW" --port "$BPORT" --tc "ecn=$RATE,$ECN_THRESH" >/dev/null
for ((i = 0; i < NMAX; i++)); do
	ns_var=FAB_h${i}_NS
	nsx "${!ns_var}" "$XROCE" attach --force eth0 >/dev/null
done
nsx "$RNS" "$XROCE" attach --force eth0 >/dev/null
MTU=$(nsx "$RNS" ip -o link show eth0 | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
# Payload per frame: IPv4 20 + UDP 8 + xroce data header 64, as the
# library computes its segment size; the frame adds Ethernet's 14.
SEG=$((MTU - 28 - 64))
HINT_CAP=$(awk -v r="$RATE" -v f="$HINT_FRAC" -v s="$SEG" -v m="$MTU" \
	'BEGIN { printf "%d", r * f * s / (m + 14) }')

# The collector: starts N clients at once, stamps their lines, samples
# telemetry and switch counters; `report` turns runs into the table.
cat >"$TMP/incast.py" <<'PY'
import json, os, selectors, statistics as st, subprocess, sys, time

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

def host_busy(secs):
    """Other work on the host over secs (before a run): the share of all
    CPUs busy, and the mean number of runnable tasks besides this one."""
    def snap():
        with open('/proc/stat') as f:
            t = f.read().split('\n')
        v = [int(x) for x in t[0].split()[1:]]
        run = next(int(l.split()[1]) for l in t if l.startswith('procs_running'))
        return sum(v), v[3] + v[4], run  # total, idle + iowait, runnable
    t0, i0, _ = snap()
    runs = []
    for _ in range(10):
        time.sleep(secs / 10)
        runs.append(snap()[2] - 1)
    t1, i1, _ = snap()
    return (1 - (i1 - i0) / (t1 - t0) if t1 > t0 else 0.0), sum(runs) / len(runs)

def run(a):
    env = json.load(open(a.env))
    n = a.n
    os.makedirs(a.dir, exist_ok=True)
    bg = host_busy(0.5)
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

def pct(v):
    return '%.1f' % (100 * v)

def analyse(r, cfg):
    """One run: the figures of the header's definitions."""
    n, bin_s, win_s = r['n'], cfg['bin_ms'] / 1000, cfg['window_ms'] / 1000
    cl = r['clients']
    ok = all(rc == 0 for rc in r['rcs']) and all(c['summary'] for c in cl) and \
        all(c['intervals'] for c in cl)
    row = dict(n=n, hints=cfg['hints'], rep=cfg['rep'], ok=ok, rcs=r['rcs'],
               host_busy=r['host_busy'][0], host_runnable=r['host_busy'][1])
    cn = r['counters']
    row.update(tbf_drops=cn.get('tbf_drops', 0), veth_drops=cn.get('veth_drops', 0),
               fab_drops=cn.get('fab_drops', 0),
               xr_drops=sum(v for k, v in cn.items() if k.startswith(('r_drop', 'h_drop'))),
               xr_drop_kinds={k: v for k, v in cn.items() if k.startswith(('r_drop', 'h_drop')) and v},
               ecn_frac=cn['bn_ce'] / cn['bn_rx'] if cn.get('bn_rx') else 0.0,
               retx=sum(c['summary']['retx_pkts'] for c in cl if c['summary']),
               pkts=sum(c['summary']['pkts'] for c in cl if c['summary']))
    if not all(c['intervals'] for c in cl):
        return row, None
    # A client's start: from its rows' wall clock stamps when it prints
    # them (exact), else from their arrival here (an upper bound each).
    starts = [st.median(w - t_ms / 1000 for _, t_ms, _, w in c['intervals'])
              if c['intervals'][0][3] is not None else
              min(now - t_ms / 1000 for now, t_ms, _, _ in c['intervals']) for c in cl]
    T0, T1 = max(starts), min(starts) + cfg['secs']
    row['skew_ms'] = 1000 * (T0 - min(starts))
    nb = int((T1 - T0) / bin_s)
    row['dur_s'] = nb * bin_s
    bins = [[0.0] * nb for _ in range(n)]
    for i, c in enumerate(cl):
        prev = 0.0
        for _, t_ms, b, _ in c['intervals']:
            a0, a1 = starts[i] + prev - T0, starts[i] + t_ms / 1000 - T0
            prev = t_ms / 1000
            if a1 <= a0 or b == 0:
                continue
            # spread b uniformly over [a0, a1) onto the bins it overlaps
            k0, k1 = max(0, int(a0 // bin_s)), min(nb - 1, int(a1 // bin_s))
            for k in range(k0, k1 + 1):
                ov = min(a1, (k + 1) * bin_s) - max(a0, k * bin_s)
                if ov > 0:
                    bins[i][k] += b * ov / (a1 - a0)
    def jain(xs):
        s, q = sum(xs), sum(x * x for x in xs)
        return s * s / (len(xs) * q) if q > 0 else 0.0
    skip = int(round(0.1 / bin_s))
    tot = [sum(bins[i][skip:]) for i in range(n)]
    wb = max(1, int(round(win_s / bin_s)))
    row['goodput_mbps'] = sum(sum(b) for b in bins) * 8 / (nb * bin_s) / 1e6
    row['goodput_frac'] = row['goodput_mbps'] / cfg['rate']
    row['jain_run'] = jain(tot)
    fair = sum(tot) / n
    row['min_share'] = min(tot) / fair if fair else 0.0
    row['sender_mbps'] = [t * 8 / ((nb - skip) * bin_s) / 1e6 for t in tot]
    blocks = [jain([sum(bins[i][k:k + wb]) for i in range(n)])
              for k in range(skip, nb - wb + 1, wb)]
    row['j50_min'] = min(blocks) if blocks else 0.0
    row['j50_med'] = st.median(blocks) if blocks else 0.0
    row['j50_fair'] = sum(1 for j in blocks if j >= cfg['fair']) / len(blocks) if blocks else 0.0
    slide = [jain([sum(bins[i][k:k + wb]) for i in range(n)]) for k in range(0, nb - wb + 1)]
    conv = None
    for k in range(len(slide) - 1, -1, -1):
        if slide[k] < cfg['fair']:
            break
        conv = k
    row['t_conv_ms'] = None if conv is None else conv * cfg['bin_ms']
    # telemetry: hints and windows the senders held after the first 100 ms
    hints, cw = [], []
    for i in range(n):
        try:
            for l in open(os.path.join(cfg['dir'], 'stats%d.jsonl' % i)):
                d = json.loads(l)
                if d['time_ns'] / 1e9 < T0 + 0.1 or d['time_ns'] / 1e9 > T1:
                    continue
                for c in d['connections']:
                    if c['tx_bytes']:
                        hints.append(c['rate_hint_mbps'])
                        cw.append(sum(p['cwnd'] for p in c['paths']))
        except (OSError, ValueError, KeyError):
            pass
    row['hint_med'] = st.median(hints) if hints else None
    row['cwnd_med'] = st.median(cw) if cw else None
    return row, (T0, bins)

def fmt(v, f):
    return '-' if v is None else f % v

HDR = ('%-3s %-5s %-3s %8s %6s %6s %6s %6s %5s %6s %6s %6s %6s %6s %6s %6s %5s %5s %5s %4s %5s' %
       ('N', 'hints', 'rep', 'goodput', '%rate', 'J run', 'J50mn', 'J50md', 'fair%', 't_conv',
        'minsh', 'retx', 'tbfdr', 'vethd', 'xrdr', 'ECN%', 'hint', 'cwnd', 'skew', 'bg%', 'bgrun'))

def line(r):
    if 'jain_run' not in r:
        return '%-3d %-5s %-3s  (no data: exit codes %s)' % (r['n'], r['hints'], r['rep'], r['rcs'])
    return ('%-3d %-5s %-3s %8.1f %6s %6.3f %6.3f %6.3f %5.0f %6s %6.2f %6d %6d %6d %6d %6s %5s %5s %5.0f %4.0f %5.1f%s' %
            (r['n'], r['hints'], r['rep'], r['goodput_mbps'], pct(r['goodput_frac']),
             r['jain_run'], r['j50_min'], r['j50_med'], 100 * r['j50_fair'],
             'never' if r['t_conv_ms'] is None else '%d' % r['t_conv_ms'],
             r['min_share'], r['retx'], r['tbf_drops'], r['veth_drops'], r['xr_drops'], pct(r['ecn_frac']),
             fmt(r['hint_med'], '%.0f'), fmt(r['cwnd_med'], '%.0f'), r['skew_ms'], 100 * r['host_busy'], r['host_runnable'],
             '' if r['ok'] else '  ERROR exit codes %s' % r['rcs']))

def report(a):
    cfgs = [json.loads(l) for l in open(a.runs)]
    rows, csv = [], open(os.path.join(a.out, 'rates.csv'), 'w')
    csv.write('n,hints,rep,sender,t_ms,mbps\n')
    for cfg in cfgs:
        try:
            r = json.load(open(os.path.join(cfg['dir'], 'run.json')))
        except (OSError, ValueError):
            rows.append(dict(n=cfg['n'], hints=cfg['hints'], rep=cfg['rep'], ok=False, rcs=['?']))
            continue
        row, tl = analyse(r, cfg)
        rows.append(row)
        if tl:
            for i, b in enumerate(tl[1]):
                for k, v in enumerate(b):
                    csv.write('%d,%s,%d,%d,%g,%.2f\n' % (cfg['n'], cfg['hints'], cfg['rep'], i,
                                                       k * cfg['bin_ms'], v * 8 / (cfg['bin_ms'] / 1000) / 1e6))
            if not a.quiet:
                # a coarse timeline: every sender's Mbit/s per 20 ms, first 200 ms
                step = max(1, int(round(20 / cfg['bin_ms'])))
                print('  N=%d hints=%s rep %d: per-sender Mbit/s, 20 ms steps from t=0:' %
                      (cfg['n'], cfg['hints'], cfg['rep']))
                for i, b in enumerate(tl[1]):
                    v = [sum(b[k:k + step]) * 8 / (step * cfg['bin_ms'] / 1000) / 1e6
                         for k in range(0, min(len(b), 10 * step), step)]
                    print('    h%-2d %s' % (i, ' '.join('%5.0f' % x for x in v)))
    csv.close()
    print()
    print(HDR)
    for r in rows:
        print(line(r))
    # run-to-run variation: median [min..max] per configuration
    keys = sorted({(r['n'], r['hints']) for r in rows}, key=lambda k: (k[0], k[1] == 'off'))
    if max(r['rep'] for r in rows) > 0:
        print('\nper configuration over repeats: median [min..max]')
        for k in keys:
            rs = [r for r in rows if (r['n'], r['hints']) == k and 'jain_run' in r]
            if not rs:
                continue
            def mm(f, fm='%.3f'):
                v = [f(r) for r in rs if f(r) is not None]
                return (fm % st.median(v) + ' [' + fm % min(v) + '..' + fm % max(v) + ']') if v else '-'
            never = sum(1 for r in rs if r['t_conv_ms'] is None)
            print('N=%d hints=%-3s goodput%% %s  J run %s  J50 min %s  fair%% %s  t_conv ms %s%s  retx %s  tbf drops %s' %
                  (k[0], k[1], mm(lambda r: 100 * r['goodput_frac'], '%.1f'), mm(lambda r: r['jain_run']),
                   mm(lambda r: r['j50_min']), mm(lambda r: 100 * r['j50_fair'], '%.0f'),
                   mm(lambda r: r['t_conv_ms'], '%.0f'),
                   ' (never: %d/%d)' % (never, len(rs)) if never else '',
                   mm(lambda r: r['retx'], '%d'), mm(lambda r: r['tbf_drops'], '%d')))
    if a.json:
        json.dump(rows, open(a.json, 'w'), indent=1)
    print('\nrates per %d ms bin: %s' % (cfgs[0]['bin_ms'], os.path.join(a.out, 'rates.csv')))

import argparse
ap = argparse.ArgumentParser()
sub = ap.add_subparsers(dest='cmd', required=True)
x = sub.add_parser('run')
for k, t in (('env', str), ('dir', str), ('xroce', str), ('xrfabric', str), ('n', int),
             ('nmax', int), ('size', int), ('secs', float), ('interval_ms', int), ('stats_ms', int),
             ('nice', int)):
    x.add_argument('--' + k.replace('_', '-'), dest=k, type=t, required=True)
x = sub.add_parser('report')
x.add_argument('--runs', required=True)
x.add_argument('--out', required=True)
x.add_argument('--json', default='')
x.add_argument('--quiet', action='store_true')
a = ap.parse_args()
run(a) if a.cmd == 'run' else report(a)
PY

# The env file as JSON for the collector.
python3 - "$TMP/env" >"$TMP/env.json" <<'PY'
import json, shlex, sys
env = {}
for l in open(sys.argv[1]):
    k, _, v = l.rstrip('\n').partition('=')
    env[k] = ' '.join(shlex.split(v)) if v else ''
print(json.dumps(env))
PY

echo "incast: bottleneck tbf ${RATE} Mbit/s (burst $BURST, queue $QUEUE), ECN vq ${RATE} Mbit/s > ${ECN_THRESH} B;" \
	"hints on = receiver capacity $HINT_CAP Mbit/s (payload), active window $([ "$ACTIVE_WIN" = 0 ] && echo "library default" || echo "$ACTIVE_WIN us");" \
	"${SECS} s WRITEs of $SIZE B x 8 paths per sender; $REPEAT run(s) each nice $NICE"
RUNS=$TMP/runs.jsonl
: >"$RUNS"
for n in $SENDERS; do
	for hints in $HINTS; do
		for ((rep = 0; rep < REPEAT; rep++)); do
			cap=0
			[ "$hints" = on ] && cap=$HINT_CAP
			aw=()
			[ "$ACTIVE_WIN" = 0 ] || aw=(--active-window "$ACTIVE_WIN")
			nsx "$RNS" "$XROCE" attach --force eth0 --rate-capacity "$cap" "${aw[@]}" >/dev/null
			dir=$OUT/n${n}-${hints}-r${rep}
			mkdir -p "$dir"
			# nsenter itself (not the nsx function, whose background
			# subshell would be what $! names): $! is the server.
			nsenter --net="/var/run/netns/$RNS" nice -n "$NICE" "$XROCE" perf server -i eth0 \
				>"$dir/server.out" 2>&1 &
			spid=$!
			for ((i = 0; i < 200; i++)); do # until it listens (port 4796)
				nsx "$RNS" ss -Hlun 'sport = :4796' | grep -q . && break
				kill -0 "$spid" 2>/dev/null || xr_die "perf server died: $(cat "$dir/server.out")"
				sleep 0.05
			done
			# In the background, so that a signal runs the cleanup at once
			# (bash runs traps only after a foreground child ends).
			python3 "$TMP/incast.py" run --env "$TMP/env.json" --dir "$dir" --xroce "$XROCE" \
				--xrfabric "$XRFABRIC" --n "$n" --nmax "$NMAX" --size "$SIZE" --secs "$SECS" \
				--interval-ms "$INTERVAL_MS" --stats-ms "$STATS_MS" --nice "$NICE" &
			CPID=$!
			wait "$CPID" || xr_log "run n=$n hints=$hints rep=$rep: collector failed"
			CPID=
			kill "$spid" 2>/dev/null || true
			wait "$spid" 2>/dev/null || true
			printf '{"n":%d,"hints":"%s","rep":%d,"dir":"%s","secs":%s,"rate":%d,"bin_ms":%d,"window_ms":%d,"fair":%s}\n' \
				"$n" "$hints" "$rep" "$dir" "$SECS" "$RATE" "$BIN_MS" "$WINDOW_MS" "$FAIR" >>"$RUNS"
			[ "$QUIET" = 1 ] || echo "  done: N=$n hints=$hints run $rep" >&2
		done
	done
done
q=()
[ "$QUIET" = 1 ] && q=(--quiet)
python3 "$TMP/incast.py" report --runs "$RUNS" --out "$OUT" --json "$JSON" "${q[@]}"
