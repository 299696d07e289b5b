#!/usr/bin/env bash
# run.sh: the benchmarks side by side in one run (`make bench`): tables on
# the terminal, and in the output directory the raw JSON/CSV and log of
# every part, PNG plots (gnuplot) and results.md (every table, the plots).
#
# Parts, in this order:
#   loss      goodput of one connection against random loss 0, 0.1, 1, 5 and
#             10%, xroce beside TCP (iperf3), absolute and as a fraction of
#             each one's loss-free goodput: MTU 1500 with TCP's TSO/GSO/GRO
#             off, then MTU 9000 with them on (loss_sweep.sh)
#   latency   round trips of 8 B, 64 B and 4 KiB messages, xroce beside UDP
#             and TCP ping-pong (sockperf), loss-free and at 1% loss:
#             min / median / p99 / p99.9 (latency.sh)
#   failover  goodput in 1 ms bins over 4 paths (4 planes) while one is
#             blackholed: time back to 90% of the rest's share, packets and
#             bytes retransmitted (failover.sh)
#   incast    2, 4 and 8 senders into one receiver behind a tbf bottleneck,
#             the receiver's rate hints on and off: Jain fairness, time to
#             converge, per-sender rates over time (incast.sh)
#   txengine  raw packet rate of the transmit engines (txengine.sh), beside
#             xroce's loss-free goodput and packet rate on its two engines:
#             the default from part loss (test_run on veth, where AF_XDP
#             is copy mode), af_xdp measured here (XROCE_TX_ENGINE=af_xdp
#             loss_sweep.sh --losses 0)
#   cpu       CPU-seconds per GB moved, xroce beside TCP, machine-wide (from
#             /proc/stat, all CPUs), from the loss-free runs of part loss:
#             `--only cpu` runs part loss too
# Every table names the command it comes from, the commit (`git rev-parse
# --short HEAD`, "-dirty" when the tree had changes or untracked files,
# the output directory aside) and the date.  The binaries are build/'s as
# they are: `make bench` builds first, running this script directly does not.
#
# Output files (DIR): loss-1500.json loss-9000.json latency.json
# failover.json failover.csv incast.json incast-rates.csv txengine.json
# txengine-xroce-other.json cpu.json, PART.log (everything the sub-scripts printed), the plots
# goodput-vs-loss.png latency.png failover.png incast-rates.png, and
# results.md, which describes this run only (the parts --only chose).
#
# A part that fails (or runs out of its time limit) prints its error and the
# run goes on with the next; the exit status is 1 if any part failed.  The
# sub-scripts create and remove their own network namespaces (unique
# prefixes, tests/lib/netns.sh); Ctrl-C stops the running one, which cleans
# up after itself.
#
# Usage: tests/bench/run.sh [--quick] [--only PARTS] [--out DIR]
#   --quick       smoke run, ~3 minutes: short runs, rough figures
#   --only PARTS  comma list of loss,latency,failover,incast,txengine,cpu
#                 (default: all)
#   --out DIR     output directory (default docs/perf)
# The full run takes ~10 minutes on the 2-core development host (~4 min
# loss, ~2 latency, 10 s failover, ~2 incast, ~2 txengine).  Needs root,
# a built tree (make), iperf3, sockperf and gnuplot.
set -euo pipefail
cd "$(dirname "$0")/../.."

ALL_PARTS="loss latency failover incast txengine cpu"
QUICK=0
ONLY=
OUT=docs/perf
ARGV=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	--only) ONLY=${2:-}; [ -n "$ONLY" ] || { echo "run.sh: --only needs a list" >&2; exit 2; }; shift 2 ;;
	--out) OUT=${2:-}; [ -n "$OUT" ] || { echo "run.sh: --out needs a directory" >&2; exit 2; }; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1 (--help)" >&2; exit 2 ;;
	esac
done
PARTS=$ALL_PARTS
if [ -n "$ONLY" ]; then
	want=" ${ONLY//,/ } "
	for p in $want; do
		case " $ALL_PARTS " in *" $p "*) ;; *) echo "run.sh: unknown part $p (parts: $ALL_PARTS)" >&2; exit 2 ;; esac
	done
	# cpu is computed from the loss-free runs of loss
	case $want in *" cpu "*) want+=" loss " ;; esac
	PARTS=
	for p in $ALL_PARTS; do
		case $want in *" $p "*) PARTS+="${PARTS:+ }$p" ;; esac
	done
fi
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root" >&2; exit 1; }
for t in python3 gnuplot timeout; do
	command -v "$t" >/dev/null || { echo "run.sh: $t missing" >&2; exit 1; }
done

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d /tmp/xrbench.XXXXXX)
exec 3>&2 # the terminal's stderr, for on_signal while a part's goes to a file
CHILD=
TAILPID=
on_signal() {
	trap '' INT TERM
	echo "run.sh: interrupted, stopping the running part" >&3
	# timeout relays the signal to its whole process group: the sub-script
	# and everything it started; the sub-script then cleans up.
	if [ -n "$CHILD" ]; then
		kill -TERM "$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true # errexit holds in traps too
	fi
	[ -z "$TAILPID" ] || kill "$TAILPID" 2>/dev/null || true
	exit 130
}
trap 'rm -rf "$TMP"' EXIT
trap on_signal INT TERM

# ---- what was measured, where, when ---------------------------------------
if COMMIT=$(git rev-parse --short HEAD 2>/dev/null); then
	rel=$(realpath -m --relative-to="$PWD" "$OUT")
	excl=()
	case $rel in ..* | /*) ;; *) excl=(":(exclude)$rel") ;; esac
	[ -z "$(git status --porcelain -- . "${excl[@]}" 2>/dev/null)" ] || COMMIT+=-dirty
else
	COMMIT=unknown
fi
CMDLINE="bash tests/bench/run.sh${ARGV[*]:+ ${ARGV[*]}}"
RUN_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
busy_ticks() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
b0=$(busy_ticks); sleep 1; b1=$(busy_ticks)
BG=$(awk -v a="$b0" -v b="$b1" -v hz="$(getconf CLK_TCK)" -v n="$(nproc)" 'BEGIN { printf "%.0f", 100 * (b - a) / hz / n }')
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
BUILT=$(date -u -r build/xroce '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo "missing")
cat >"$TMP/meta.json" <<EOF
{"commit": "$COMMIT", "cmdline": $(printf '%s' "$CMDLINE" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))'),
 "date": "$RUN_DATE", "kernel": "$(uname -r)", "ncpu": $(nproc),
 "cpu_model": $(printf '%s' "$CPU_MODEL" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))'),
 "built": "$BUILT", "bg_pct": $BG, "quick": $QUICK, "parts": "$PARTS"}
EOF

# ---- configuration --------------------------------------------------------
LOSSES="0 0.001 0.01 0.05 0.1"
if [ "$QUICK" = 1 ]; then
	LOSS_SECS=1 LOSS_REP=1
	LAT_ARGS=(--iters 2000)
	FAIL_ARGS=(--secs 2 --fail-at 1)
	INCAST_ARGS=(--secs 2)
	TX_ARGS=(--secs 0.5 --rounds 1 --sizes "64,1408")
	INCAST_SECS=2 INCAST_REP=1 TX_ROWS_S=6
else
	LOSS_SECS=4 LOSS_REP=3
	LAT_ARGS=(--iters 100000)
	FAIL_ARGS=()
	INCAST_ARGS=(--repeat 3)
	TX_ARGS=(--sizes "64,1408")
	INCAST_SECS=3 INCAST_REP=3 TX_ROWS_S=72 # 12 rows x 3 rounds x 2 s
fi
NLOSS=$(wc -w <<<"$LOSSES")
# The engine part txengine measures xroce on besides the default one.
OTHER_ENGINE=af_xdp

echo "== xroce benchmarks: $CMDLINE"
echo "   commit $COMMIT, $RUN_DATE, kernel $(uname -r), $(nproc) CPUs ($CPU_MODEL)"
echo "   build/xroce built $BUILT; host busy before the run: $BG% of all CPUs"
echo "   parts: $PARTS; output: $OUT"

# ---- running ------------------------------------------------------------------
# run_cmd LOG LIMIT cmd...: run cmd with a time limit, its output appended to
# LOG and shown as it comes; its exit status.
run_cmd() {
	local log=$1 limit=$2 rc=0 size before after
	shift 2
	echo "\$ $*" | tee -a "$log"
	size=$(stat -c %s "$log")
	before=$(ip netns list 2>/dev/null | awk '{ print $1 }' | sort)
	timeout -k 20 "$limit" "$@" >>"$log" 2>&1 </dev/null &
	CHILD=$!
	tail -c +$((size + 1)) -s 0.2 -f --pid="$CHILD" "$log" &
	TAILPID=$!
	wait "$CHILD" || rc=$?
	CHILD=
	wait "$TAILPID" 2>/dev/null || true
	TAILPID=
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "run.sh: '$1 ...' ran out of its $limit s limit and was stopped" | tee -a "$log" >&2
		after=$(ip netns list 2>/dev/null | awk '{ print $1 }' | sort)
		left=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
		[ -z "${left// /}" ] || echo "run.sh: namespaces that appeared meanwhile and remain (maybe not ours): $left" | tee -a "$log" >&2
	fi
	return "$rc"
}

# stamp NAME cmd...: record a command of part NAME for its table captions.
stamp() {
	local name=$1
	shift
	printf '%s\n' "$*" >>"$TMP/$name.cmds"
}

REPORT=$TMP/report.py
report() { python3 "$REPORT" "$@" --meta "$TMP/meta.json" --out "$OUT" --tmp "$TMP"; }

part_loss() {
	local rc=0 mtu args
	for mtu in 1500 9000; do
		args=(--losses "$LOSSES" --secs "$LOSS_SECS" --repeat "$LOSS_REP" --mtu "$mtu")
		[ "$mtu" = 1500 ] || args+=(--gso)
		rm -f "$OUT/loss-$mtu.json"
		stamp loss "bash tests/bench/loss_sweep.sh ${args[*]} --json loss-$mtu.json"
		run_cmd "$OUT/loss.log" $((LOSS_REP * NLOSS * 2 * (LOSS_SECS + 15) + 60)) \
			bash tests/bench/loss_sweep.sh "${args[@]}" --json "$OUT/loss-$mtu.json" || rc=1
	done
	report loss || rc=1
	return "$rc"
}

part_latency() {
	local rc=0
	rm -f "$OUT/latency.json"
	stamp latency "bash tests/bench/latency.sh ${LAT_ARGS[*]} --json latency.json"
	run_cmd "$OUT/latency.log" 900 bash tests/bench/latency.sh "${LAT_ARGS[@]}" \
		--json "$OUT/latency.json" || rc=1
	report latency || rc=1
	return "$rc"
}

part_failover() {
	local rc=0
	rm -f "$OUT/failover.json" "$OUT/failover.csv"
	stamp failover "bash tests/bench/failover.sh ${FAIL_ARGS[*]} --out failover.csv --json failover.json"
	run_cmd "$OUT/failover.log" 180 bash tests/bench/failover.sh ${FAIL_ARGS[@]+"${FAIL_ARGS[@]}"} \
		--out "$OUT/failover.csv" --json "$OUT/failover.json" || rc=1
	report failover || rc=1
	return "$rc"
}

part_incast() {
	local rc=0
	rm -f "$OUT/incast.json" "$OUT/incast-rates.csv"
	# the per-run raw output (megabytes of telemetry samples) stays in TMP;
	# rates.csv is the per-sender timeline of every run
	stamp incast "bash tests/bench/incast.sh ${INCAST_ARGS[*]} --out DIR --json incast.json (DIR/rates.csv: incast-rates.csv)"
	run_cmd "$OUT/incast.log" $((6 * INCAST_REP * (INCAST_SECS + 20) + 120)) \
		bash tests/bench/incast.sh "${INCAST_ARGS[@]}" --out "$TMP/incast" \
		--json "$OUT/incast.json" || rc=1
	[ ! -f "$TMP/incast/rates.csv" ] || cp "$TMP/incast/rates.csv" "$OUT/incast-rates.csv"
	report incast || rc=1
	return "$rc"
}

part_txengine() {
	local rc=0
	rm -f "$OUT/txengine.json" "$OUT/txengine-xroce-other.json"
	stamp txengine "bash tests/bench/txengine.sh ${TX_ARGS[*]}"
	run_cmd "$OUT/txengine.log" $((TX_ROWS_S * 2 + 180)) bash tests/bench/txengine.sh "${TX_ARGS[@]}" || rc=1
	# xroce on its other engine (part loss measured the default, which
	# on veth is test_run: AF_XDP would be copy mode); loss_sweep.sh
	# measures TCP beside it, which this part does not show
	stamp txengine "XROCE_TX_ENGINE=$OTHER_ENGINE bash tests/bench/loss_sweep.sh --losses 0 --secs $LOSS_SECS --repeat $LOSS_REP --json txengine-xroce-other.json"
	run_cmd "$OUT/txengine.log" $((2 * LOSS_REP * (LOSS_SECS + 15) + 90)) \
		env XROCE_TX_ENGINE="$OTHER_ENGINE" \
		bash tests/bench/loss_sweep.sh --losses 0 --secs "$LOSS_SECS" --repeat "$LOSS_REP" \
		--json "$OUT/txengine-xroce-other.json" || rc=1
	report txengine --log "$OUT/txengine.log" --with-loss "$LOSS_RAN" || rc=1
	return "$rc"
}

part_cpu() {
	[ "$LOSS_RAN" = 1 ] || { echo "part cpu: part loss did not run" >&2; return 1; }
	cp "$TMP/loss.cmds" "$TMP/cpu.cmds"
	cp "$TMP/loss.date" "$TMP/cpu.date"
	report cpu
}

# ---- the report generator -------------------------------------------------
cat >"$REPORT" <<'PY'
"""Tables (markdown, also printed) and plots for run.sh's parts."""
import argparse, json, math, os, re, statistics as st, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument('part')
ap.add_argument('--meta', required=True)
ap.add_argument('--out', required=True)
ap.add_argument('--tmp', required=True)
ap.add_argument('--log', default='')
ap.add_argument('--with-loss', default='0')
a = ap.parse_args()
META = json.load(open(a.meta))
OUT, TMP = a.out, a.tmp
md = []          # this part's markdown
errors = []      # problems that make the part fail (after its tables)


def caption():
    """Where a part's tables come from: the commands, commit, date."""
    try:
        cmds = [l.strip() for l in open(os.path.join(TMP, a.part + '.cmds')) if l.strip()]
    except OSError:
        cmds = []
    c = ', '.join('`%s`' % x for x in cmds) or '(no command)'
    try:
        date = open(os.path.join(TMP, a.part + '.date')).read().strip()
    except OSError:
        date = META['date']
    return '*Measured by %s on commit `%s`, %s (output files relative to the output directory).*' % (
        c, META['commit'], date)


def load(name):
    p = os.path.join(OUT, name)
    try:
        return json.load(open(p))
    except (OSError, ValueError) as e:
        errors.append('%s: %s' % (name, e))
        return None


def num(v, f='%.3f', none='–'):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return none
    return f % v


def table(hdr, rows, align=None):
    align = align or ['r'] * len(hdr)
    sep = ['---:' if x == 'r' else ':---' for x in align]
    md.append('| ' + ' | '.join(hdr) + ' |')
    md.append('|' + '|'.join(sep) + '|')
    for r in rows:
        md.append('| ' + ' | '.join(str(x) for x in r) + ' |')
    md.append('')


def gnuplot(script, png):
    """Run a gnuplot script; a failure is the part's error."""
    p = os.path.join(TMP, os.path.basename(png) + '.gp')
    with open(p, 'w') as f:
        f.write(script)
    r = subprocess.run(['gnuplot', p], capture_output=True, text=True)
    if r.returncode or not os.path.exists(png):
        errors.append('gnuplot %s: %s' % (os.path.basename(png), r.stderr.strip()[-500:]))
        return False
    md.append('![%s](%s)' % (os.path.basename(png)[:-4], os.path.basename(png)))
    md.append('')
    return True


TERM = "set terminal pngcairo size %d,%d font 'Sans,10'\n"


def pct(v):
    return num(None if v is None else 100 * v, '%.1f%%')


# ---- loss -----------------------------------------------------------------
def part_loss():
    md.append(caption())
    md.append('')
    md.append('One connection; the switch drops packets at random in both directions (data and '
              'ACKs). xroce: `xroce perf client --mode bw`, 64 KiB WRITEs over 8 paths; TCP: '
              'iperf3, one stream. "of 0%": fraction of its own loss-free goodput; the ceiling '
              'is 1 − p. Target: xroce keeps ≥ 97% at 1% loss and ≥ 85% at 10%.')
    md.append('')
    series = {}
    for mtu, tcp in ((1500, 'TSO/GSO/GRO off'), (9000, 'TSO/GSO/GRO on')):
        d = load('loss-%d.json' % mtu)
        if not d:
            continue
        series[mtu] = d
        engines = sorted({r.get('xroce_tx_engine', '?') for r in d})
        nrep = max(len(r.get('runs', [])) for r in d) or 1
        md.append('**MTU %d, TCP %s** (xroce transmit engine: %s; %s)' % (
            mtu, tcp, ', '.join(engines),
            'median of %d interleaved runs per point' % nrep if nrep > 1 else 'one run per point'))
        md.append('')
        table(['loss', 'xroce Gb/s', 'xroce of 0%', 'xroce retx pkts', 'TCP Gb/s', 'TCP of 0%',
               'TCP retx', '1 − p'],
              [['%g%%' % (100 * r['loss']), num(r['xroce_gbps']), pct(r['xroce_frac']),
                r['xroce_retx'], num(r['tcp_gbps']), pct(r['tcp_frac']), r['tcp_retx'],
                pct(1 - r['loss'])] for r in d])
        bad = [r['loss'] for r in d if not r['xroce_gbps'] or not r['tcp_gbps']]
        if bad:
            errors.append('MTU %d: no goodput measured at loss %s' % (mtu, bad))
    if not series:
        return
    # plot: categorical loss axis; fraction of loss-free and absolute goodput
    losses = sorted({r['loss'] for d in series.values() for r in d})
    dat = os.path.join(TMP, 'loss.dat')
    with open(dat, 'w') as f:
        f.write('# x loss x1500f t1500f x9000f t9000f x1500g t1500g x9000g t9000g ceil\n')
        for i, l in enumerate(losses):
            v = []
            for key in ('frac', 'gbps'):
                for mtu in (1500, 9000):
                    r = next((r for r in series.get(mtu, []) if r['loss'] == l), None)
                    for tr in ('xroce', 'tcp'):
                        x = r['%s_%s' % (tr, key)] if r else None
                        v.append('?' if x is None or (isinstance(x, float) and math.isnan(x)) else '%g' % x)
            f.write('%d %g %s %g\n' % (i, 100 * l, ' '.join(v[:4] + v[4:]), 1 - l))
    png = os.path.join(OUT, 'goodput-vs-loss.png')
    tics = ', '.join('"%g" %d' % (100 * l, i) for i, l in enumerate(losses))
    gnuplot(TERM % (1200, 450) + f"""
set output '{png}'
set datafile missing '?'
set multiplot layout 1,2 title 'Goodput of one connection vs random loss (commit {META['commit']}, {META['date']})'
set xtics ({tics})
set xlabel 'random loss, % (both directions)'
set xrange [-0.3:{len(losses) - 0.7}]
set grid
set key below maxrows 3 font ',9'
set ylabel 'fraction of its own loss-free goodput'
set yrange [0:1.05<*]
plot '{dat}' u 1:11 w l dt 2 lc 'gray' t '1 - p (ceiling)', \\
     '' u 1:3 w lp pt 7 lc 1 t 'xroce MTU 1500', \\
     '' u 1:4 w lp pt 5 lc 2 t 'TCP MTU 1500, TSO/GSO off', \\
     '' u 1:5 w lp pt 7 dt 3 lc 1 t 'xroce MTU 9000', \\
     '' u 1:6 w lp pt 5 dt 3 lc 2 t 'TCP MTU 9000, GSO on'
set ylabel 'goodput, Gbit/s'
set yrange [0:*]
plot '{dat}' u 1:7 w lp pt 7 lc 1 t 'xroce MTU 1500', \\
     '' u 1:8 w lp pt 5 lc 2 t 'TCP MTU 1500, TSO/GSO off', \\
     '' u 1:9 w lp pt 7 dt 3 lc 1 t 'xroce MTU 9000', \\
     '' u 1:10 w lp pt 5 dt 3 lc 2 t 'TCP MTU 9000, GSO on'
unset multiplot
""", png)


# ---- latency --------------------------------------------------------------
def part_latency():
    md.append(caption())
    md.append('')
    d = load('latency.json')
    if not d:
        return
    md.append('Round trip in µs on the pair fabric (MTU 1500), one connection. xroce: '
              'WRITE_WITH_IMM ping-pong (`xroce perf client --mode lat`), both ends busy-polling '
              '(xroce) or sleeping on the completion event (xroce-wait, `--wait`); UDP and TCP: sockperf '
              'ping-pong (TCP_NODELAY; messages below 14 B are sent as 14 B, its header). '
              '"p99 vs 0%": this p99 over the same transport\'s loss-free p99. Target: xroce\'s '
              'median and p99 below UDP\'s and TCP\'s; at 1% loss its p99 at most 2× the loss-free one.')
    md.append('')
    base = {(r['size'], r['transport']): r['p99_us'] for r in d if r['loss'] == 0}
    rows, notes = [], set()
    for r in d:
        stalled = r['transport'] == 'udp' and any(math.isnan(r[k]) for k in ('p50_us', 'p99_us'))
        ratio = None
        b = base.get((r['size'], r['transport']))
        if r['loss'] and b and not math.isnan(r['p99_us']):
            ratio = r['p99_us'] / b
        note = ''
        if stalled:
            note = 'stalled¹'
            notes.add(1)
        elif r['transport'] == 'udp' and r['loss'] and r['size'] + 28 > 1500:
            note = 'not dropped²'
            notes.add(2)
        rows.append(['%g%%' % (100 * r['loss']), r['size'], r['transport'],
                     num(r['min_us'], '%.1f'), num(r['p50_us'], '%.1f'), num(r['p99_us'], '%.1f'),
                     num(r['p999_us'], '%.1f'), r['dropped'], num(ratio, '%.2f×'), note])
    table(['loss', 'size B', 'transport', 'min', 'median', 'p99', 'p99.9', 'dropped',
           'p99 vs 0%', 'note'], rows, ['r', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'])
    if 1 in notes:
        md.append('¹ sockperf ping-pong waits for each reply and never resends: after the first '
                  'lost message or reply it waits until the end of the run, so there are no valid '
                  'observations (UDP gives an application no recovery).')
    if 2 in notes:
        md.append('² a 4 KiB UDP message is IP-fragmented at MTU 1500, and the fabric\'s loss '
                  'injector passes IP fragments untouched (bpf/fabric.bpf.c): this row is in fact '
                  'loss-free.')
    if notes:
        md.append('')
    sizes = sorted({r['size'] for r in d})
    losses = sorted({r['loss'] for r in d})
    trs = [t for t in ('xroce', 'xroce-wait', 'udp', 'tcp') if any(r['transport'] == t for r in d)]
    dat = os.path.join(TMP, 'lat.dat')
    with open(dat, 'w') as f:
        for li, l in enumerate(losses):
            f.write('# loss %g\n' % l)
            for ti, t in enumerate(trs):
                for si, s in enumerate(sizes):
                    r = next((r for r in d if r['loss'] == l and r['size'] == s and r['transport'] == t), None)
                    v = [r[k] if r else float('nan') for k in ('min_us', 'p50_us', 'p99_us', 'p999_us')]
                    v = ['?' if math.isnan(x) else '%g' % x for x in v]
                    f.write('%g %s\n' % (si + (ti - (len(trs) - 1) / 2) * 0.18, ' '.join(v)))
                f.write('\n\n')
    png = os.path.join(OUT, 'latency.png')
    tics = ', '.join('"%d B" %d' % (s, i) for i, s in enumerate(sizes))
    plots = []
    for li, l in enumerate(losses):
        p = ['set title "%s"' % ('loss-free' if l == 0 else 'random loss %g%%' % (100 * l)),
             "plot " + ', \\\n     '.join(
                 "'%s' index %d u 1:3:2:4 w yerrorbars pt 7 lc %d t '%s median (bar: min..p99)'" %
                 (dat, li * len(trs) + ti, ti + 1, t) for ti, t in enumerate(trs)) + ', \\\n     ' +
             ', \\\n     '.join("'%s' index %d u 1:5 w p pt 2 lc %d t '%s p99.9'" %
                                (dat, li * len(trs) + ti, ti + 1, t) for ti, t in enumerate(trs))]
        plots.append('\n'.join(p))
    gnuplot(TERM % (600 * len(losses), 450) + f"""
set output '{png}'
set datafile missing '?'
set multiplot layout 1,{len(losses)} title 'Round-trip latency, xroce vs UDP and TCP ping-pong (commit {META['commit']}, {META['date']})'
set xtics ({tics})
set xrange [-0.6:{len(sizes) - 0.4}]
set logscale y
set ylabel 'round trip, us'
set grid ytics mytics
set key below maxrows 2 font ',8'
""" + '\n'.join(plots) + '\nunset multiplot\n', png)


# ---- failover -------------------------------------------------------------
def part_failover():
    md.append(caption())
    md.append('')
    d = load('failover.json')
    if not d:
        return
    md.append('One connection, 4 paths over 4 planes, 64 KiB WRITEs; plane 2 is blackholed in both '
              'directions mid-run. Goodput from acknowledged bytes in 1 ms bins; "back to 90%": from '
              'the failure until a 5 ms moving average reaches 90% of 3/4 of the goodput before it. '
              'Retransmitted bytes ≈ packets × 1408 B (full segments at MTU 1500). Target: no error '
              'reaches the application, back to ≥ 90% within 10 ms.')
    md.append('')
    rec = d.get('recover_ms')
    table(['goodput before', 'target (90% of 3/4)', 'lowest 1 ms bin (50 ms after)', 'back to 90% after',
           'run average', 'retransmitted'],
          [['%.3f Gb/s' % d['before_gbps'], '%.3f Gb/s' % (0.9 * 0.75 * d['before_gbps']),
            '%.3f Gb/s' % d['dip_gbps'], 'never' if rec is None else '%.1f ms' % rec,
            '%.3f Gb/s' % d['avg_gbps'],
            '%d pkts ≈ %.0f kB' % (d['retx_pkts'], d['retx_pkts'] * 1408 / 1e3)]])
    if rec is None:
        errors.append('failover: goodput never back at 90% of the remaining paths\' share')
    csv = os.path.join(OUT, 'failover.csv')
    if not os.path.exists(csv):
        errors.append('failover.csv missing')
        return
    # 5 ms moving average beside the 1 ms bins
    rows = [l.strip().split(',') for l in open(csv)][1:]
    t = [float(r[0]) for r in rows]
    g = [float(r[1]) for r in rows]
    dat = os.path.join(TMP, 'failover.dat')
    with open(dat, 'w') as f:
        for i in range(len(t)):
            w = g[max(0, i - 4):i + 1]
            f.write('%g %g %g\n' % (t[i] - d['fail_ms'], g[i], sum(w) / len(w)))
    png = os.path.join(OUT, 'failover.png')
    target = 0.9 * 0.75 * d['before_gbps']
    gnuplot(TERM % (1200, 450) + f"""
set output '{png}'
set multiplot layout 1,2 title 'Failover: 4 paths, one blackholed at t = 0 (commit {META['commit']}, {META['date']})'
set xlabel 'ms from the failure'
set ylabel 'goodput, Gbit/s (1 ms bins)'
set grid
set yrange [0:*]
set key bottom right
set arrow 1 from 0, graph 0 to 0, graph 1 nohead lc 'red' dt 2
plot '{dat}' u 1:2 w l lc 'gray' t '1 ms', '' u 1:3 w l lw 2 lc 1 t '5 ms average', \\
     {target} w l dt 2 lc 'black' t '90% of 3/4 before'
set title 'around the failure'
set xrange [-20:60]
plot '{dat}' u 1:2 w lp pt 7 ps 0.4 lc 'gray' t '1 ms', '' u 1:3 w l lw 2 lc 1 t '5 ms average', \\
     {target} w l dt 2 lc 'black' t '90% of 3/4 before'
unset multiplot
""", png)


# ---- incast ---------------------------------------------------------------
def part_incast():
    md.append(caption())
    md.append('')
    d = load('incast.json')
    if not d:
        return
    md.append('N senders into one receiver behind one bottleneck (tbf with an ECN-marking virtual '
              'queue in front, incast.sh\'s defaults: 500 Mbit/s); hints "on": the receiver\'s '
              'rate-capacity hint. J run: Jain fairness over the run from 100 ms; J50 min: the worst '
              '50 ms window; fair%: windows with J ≥ 0.95; t_conv: from when on every 50 ms window is '
              'fair ("never": the last one is not); min share: the slowest sender over the fair share. '
              'Definitions in tests/bench/incast.sh. Target: rates settle within a few RTTs, '
              'J ≥ 0.95, no collapse.')
    md.append('')
    rows = []
    for r in d:
        if 'jain_run' in r and r.get('dur_s', 0) <= 0.1:
            # the senders' starts spread over more than the run: no interval
            # when all of them send, the figures mean nothing
            rows.append([r['n'], r['hints'], r['rep']] + ['–'] * 10 +
                        ['no common interval: the senders started %.0f ms apart' % r['skew_ms']])
            errors.append('incast N=%d hints=%s rep %d: the senders\' starts are %.0f ms apart, '
                          'no interval when all send' % (r['n'], r['hints'], r['rep'], r['skew_ms']))
            del r['jain_run']
            continue
        if 'jain_run' not in r:
            rows.append([r['n'], r['hints'], r['rep']] + ['–'] * 10 + ['no data (exit codes %s)' % r.get('rcs')])
            errors.append('incast N=%d hints=%s rep %d: no data' % (r['n'], r['hints'], r['rep']))
            continue
        rows.append([r['n'], r['hints'], r['rep'], '%.0f' % r['goodput_mbps'], pct(r['goodput_frac']),
                     '%.3f' % r['jain_run'], '%.3f' % r['j50_min'], '%.0f%%' % (100 * r['j50_fair']),
                     'never' if r['t_conv_ms'] is None else '%d ms' % r['t_conv_ms'],
                     '%.2f' % r['min_share'], r['retx'], r['tbf_drops'], pct(r['ecn_frac']),
                     ' '.join('%.0f' % x for x in r['sender_mbps']) +
                     ('' if r['ok'] else ' (exit codes %s)' % r['rcs'])])
        if not r['ok']:
            errors.append('incast N=%d hints=%s rep %d: a client failed' % (r['n'], r['hints'], r['rep']))
    table(['N', 'hints', 'rep', 'goodput Mb/s', 'of rate', 'J run', 'J50 min', 'fair%', 't_conv',
           'min share', 'retx', 'tbf drops', 'ECN', 'per-sender Mb/s'], rows,
          ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'])
    reps = max(r['rep'] for r in d) + 1
    if reps > 1:
        md.append('Over the %d repeats, median [min..max]:' % reps)
        md.append('')
        out = []
        for n in sorted({r['n'] for r in d}):
            for h in ('on', 'off'):
                rs = [r for r in d if r['n'] == n and r['hints'] == h and 'jain_run' in r]
                if not rs:
                    continue
                def mm(f, fm):
                    v = [f(r) for r in rs if f(r) is not None]
                    return (fm % st.median(v) + ' [' + fm % min(v) + '..' + fm % max(v) + ']') if v else '–'
                never = sum(1 for r in rs if r['t_conv_ms'] is None)
                out.append([n, h, mm(lambda r: 100 * r['goodput_frac'], '%.1f') + '%',
                            mm(lambda r: r['jain_run'], '%.3f'), mm(lambda r: r['j50_min'], '%.3f'),
                            mm(lambda r: r['t_conv_ms'], '%.0f') + ' ms' + (' (never: %d/%d)' % (never, len(rs)) if never else ''),
                            mm(lambda r: r['min_share'], '%.2f')])
        table(['N', 'hints', 'goodput of rate', 'J run', 'J50 min', 't_conv', 'min share'], out,
              ['r', 'l', 'r', 'r', 'r', 'r', 'r'])
    csv = os.path.join(OUT, 'incast-rates.csv')
    if not os.path.exists(csv):
        errors.append('incast-rates.csv missing')
        return
    # per-sender rates, first repeat, 20 ms bins: one panel per (N, hints)
    rates = {}
    bin_ms = None
    for l in list(open(csv))[1:]:
        n, h, rep, s, t, v = l.strip().split(',')
        if rep != '0':
            continue
        rates.setdefault((int(n), h), {}).setdefault(int(s), []).append((float(t), float(v)))
    # every configuration run has its place in the grid, data or not
    panels = sorted({(r['n'], r['hints']) for r in d}, key=lambda k: (k[0], k[1] == 'off'))
    if not rates:
        errors.append('incast-rates.csv: no rows')
        return
    plots = []
    for n, h in panels:
        ok = any(r['n'] == n and r['hints'] == h and r['rep'] == 0 and 'jain_run' in r for r in d)
        if (n, h) not in rates or not ok:
            plots.append(f"set title 'N = {n}, hints {h}'\nset label 1 'no data' at graph 0.5, graph 0.5 center\n"
                         "plot [0:1] [0:1] NaN notitle\nunset label 1")
            continue
        dat = os.path.join(TMP, 'incast-%d-%s.dat' % (n, h))
        with open(dat, 'w') as f:
            for s in sorted(rates[(n, h)]):
                pts = sorted(rates[(n, h)][s])
                bin_ms = pts[1][0] - pts[0][0] if len(pts) > 1 else 5
                k = max(1, int(round(20 / bin_ms)))
                for i in range(0, len(pts) - k + 1, k):
                    f.write('%g %g\n' % (pts[i][0], sum(v for _, v in pts[i:i + k]) / k))
                f.write('\n\n')
        plots.append(f"set title 'N = {n}, hints {h}'\n"
                     f"plot for [i=0:{len(rates[(n, h)]) - 1}] '{dat}' index i u 1:2 w l t sprintf('h%d', i)")
    png = os.path.join(OUT, 'incast-rates.png')
    nrow = len({p[0] for p in panels})
    ncol = len({p[1] for p in panels})
    gnuplot(TERM % (550 * ncol, 300 * nrow) + f"""
set output '{png}'
set multiplot layout {nrow},{ncol} title 'Incast: per-sender goodput over time, 20 ms bins, first run (commit {META['commit']}, {META['date']})'
set xlabel "ms from the last sender's start"
set ylabel 'Mbit/s'
set yrange [0:*]
set grid
set key outside right font ',8'
""" + '\n'.join(plots) + '\nunset multiplot\n', png)


# ---- txengine -------------------------------------------------------------
SUMMARY = re.compile(r'^(\w+)\s+(\d+)\s+(\d+)\s+(\S+)\s+([\d.]+) \[\s*([\d.]+)\.\.\s*([\d.]+)\]\s+'
                     r'([\d.]+) \[\s*([\d.]+)\.\.\s*([\d.]+)\]\s+(\d+) \[\s*(\d+)\.\.\s*(\d+)\]\s+'
                     r'([\d.]+)\s+([\d.]+)\s*$')


def part_txengine():
    md.append(caption())
    md.append('')
    try:
        text = open(a.log).read()
    except OSError as e:
        errors.append(str(e))
        return
    # the last run in the log: from its "Summary over" line on
    i = text.find('Summary over')
    if i < 0:
        errors.append('txengine: no summary table in its output')
        return
    rows, desc = [], {}
    for l in text[i:].splitlines()[1:]:
        if l.startswith('$ '):
            break  # the next command's output
        m = SUMMARY.match(l.strip())
        if m:
            g = m.groups()
            rows.append(dict(variant=g[0], payload=int(g[1]), frame=int(g[2]),
                             batch=None if g[3] == '-' else int(g[3]),
                             mpps=float(g[4]), mpps_min=float(g[5]), mpps_max=float(g[6]),
                             gbps=float(g[7]), gbps_min=float(g[8]), gbps_max=float(g[9]),
                             cpu_ns_pkt=float(g[10]), cpu_ns_min=float(g[11]), cpu_ns_max=float(g[12]),
                             loss_pct=float(g[13]), mpps_per_core=float(g[14])))
            continue
        m = re.match(r'^\s+(\w+)\s{2,}(\S.*)$', l)
        if m and not m.group(1).isdigit():
            desc[m.group(1)] = m.group(2).strip()
    rounds = re.search(r'Summary over (\d+) round', text[i:])
    if not rows:
        errors.append('txengine: summary table empty or not understood')
        return
    for r in rows:
        r['desc'] = desc.get(r['variant'], '')
        r['payload_gbps'] = r['mpps'] * r['payload'] * 8 / 1e3
    # xroce's loss-free goodput on each engine: the default one from part
    # loss, the other measured by this part; keyed by the engine each run
    # reports (perf's tx_engine).
    by_engine = {}
    srcs = [load('txengine-xroce-other.json')]
    if a.with_loss == '1':
        srcs.insert(0, load('loss-1500.json'))
    for d in srcs:
        x = next((r for r in d or [] if r['loss'] == 0 and r['xroce_gbps'] > 0), None)
        if x:
            by_engine.setdefault(x.get('xroce_tx_engine', '?'), x)
    if not by_engine:
        errors.append('xroce: no loss-free goodput on either engine')
    xr, xt = by_engine.get('af_xdp'), by_engine.get('test_run')
    json.dump(dict(rounds=int(rounds.group(1)) if rounds else None, engines=rows,
                   xroce_af_xdp_loss_free_1500=xr, xroce_test_run_loss_free_1500=xt),
              open(os.path.join(OUT, 'txengine.json'), 'w'), indent=1)
    md.append('Frames sent by each engine from one namespace to an XDP program that counts and drops '
              'them in another (veth), median [min..max] over the rounds; Gb/s counts whole frames, '
              '"payload Gb/s" the payload alone (Mpps × payload). CPU: sender thread + ksoftirqd per '
              'delivered frame. "xroce of it": xroce\'s loss-free goodput (part loss, MTU 1500, one '
              'connection, 1408 B segments: the same frames as the 1408 B rows) as a fraction of this '
              'engine\'s payload rate, on each of xroce\'s two engines: af_xdp '
              '(`XROCE_TX_ENGINE=af_xdp`, variant a2\'s way) and test_run (XDP builds the frames '
              'from descriptors, variant c\'s way; the default here, where AF_XDP would be copy '
              'mode). Target: xroce reaches ≥ 85% of the raw rate of the engine it uses.')
    md.append('')
    out = []
    for r in rows:
        fa = ft = ''
        if r['payload'] == 1408 and r['payload_gbps'] > 0:
            fa = pct(xr['xroce_gbps'] / r['payload_gbps']) if xr else ''
            ft = pct(xt['xroce_gbps'] / r['payload_gbps']) if xt else ''
        out.append(['%s: %s' % (r['variant'], r['desc']) if r['desc'] else r['variant'], r['payload'], r['frame'],
                    r['batch'] or '–', '%.2f [%.2f..%.2f]' % (r['mpps'], r['mpps_min'], r['mpps_max']),
                    '%.1f' % r['gbps'], '%.2f' % r['payload_gbps'], '%.0f' % r['cpu_ns_pkt'],
                    '%.2f' % r['mpps_per_core'], '%.1f' % r['loss_pct'], fa, ft])
    for x, name in ((xr, 'af_xdp engine'), (xt, 'test_run engine')):
        if x:
            out.append(['**xroce**, %s: one connection, 8 paths, MTU 1500, loss-free' % name, 1408, 1514, '–',
                        '%.3f (data pkts)' % x.get('xroce_mpps', float('nan')), '–',
                        '%.2f (goodput)' % x['xroce_gbps'], '–', '–', '–', '', ''])
    for x, name in ((xr, 'af_xdp'), (xt, 'test_run')):
        if not x:
            md.append('(xroce on %s: not measured in this run.)' % name)
            md.append('')
    table(['engine', 'payload B', 'frame B', 'batch', 'Mpps', 'Gb/s', 'payload Gb/s', 'CPU ns/pkt',
           'Mpps/core', 'loss%', 'xroce af_xdp of it', 'xroce test_run of it'], out,
          ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'])


# ---- cpu ------------------------------------------------------------------
def part_cpu():
    md.append(caption())
    md.append('')
    md.append('CPU-seconds per GB moved in the loss-free runs of part loss, machine-wide: busy time '
              '(user + nice + system + irq + softirq) of all %d CPUs from /proc/stat, right before and '
              'after each client, over the bytes it moved. On veth the receiver\'s and the switch\'s '
              'work runs in the sender\'s softirq, so this counts sender, receiver and switch '
              'together, and anything else the host ran meanwhile: "host busy before" is the share '
              'of all CPUs busy during 1 s before the sweep with no traffic. "xroce client process": '
              'the perf client\'s own CPU time (getrusage), for comparison.' % META['ncpu'])
    md.append('')
    out, cj = [], []
    for mtu in (1500, 9000):
        d = load('loss-%d.json' % mtu)
        r = next((r for r in d or [] if r['loss'] == 0), None)
        if not r:
            continue
        if not r['xroce_bytes'] or not r['tcp_bytes']:
            errors.append('cpu: MTU %d: a loss-free run moved no bytes' % mtu)
        if 'xroce_cpu_s_per_gb' not in r:
            errors.append('loss-%d.json has no CPU fields (old loss_sweep.sh?)' % mtu)
            continue
        x, t = r['xroce_cpu_s_per_gb'], r['tcp_cpu_s_per_gb']
        out.append([mtu, 'on' if r['tcp_gso'] else 'off', num(r['xroce_gbps']), num(x, '%.2f'),
                    num(r['tcp_gbps']), num(t, '%.2f'), num(x / t if t else None, '%.2f×'),
                    num(r.get('xroce_client_cpu_s_per_gb'), '%.2f'), '%.0f%%' % (100 * r['bg_cpu_frac'])])
        cj.append(dict(mtu=mtu, tcp_gso=r['tcp_gso'], secs=r['secs'], xroce_gbps=r['xroce_gbps'],
                       xroce_cpu_s_per_gb=x, tcp_gbps=r['tcp_gbps'], tcp_cpu_s_per_gb=t,
                       xroce_client_cpu_s_per_gb=r.get('xroce_client_cpu_s_per_gb'),
                       bg_cpu_frac=r['bg_cpu_frac']))
    if not out:
        errors.append('cpu: no loss-free rows')
        return
    table(['MTU', 'TCP TSO/GSO', 'xroce Gb/s', 'xroce CPU-s/GB', 'TCP Gb/s', 'TCP CPU-s/GB',
           'xroce / TCP', 'xroce client process CPU-s/GB', 'host busy before'], out)
    json.dump(cj, open(os.path.join(OUT, 'cpu.json'), 'w'), indent=1)


# ---- results.md -----------------------------------------------------------
TITLES = dict(loss='Goodput under random loss', latency='Small-message latency',
              failover='Failover: one of four paths blackholed', incast='Incast',
              txengine='Transmit engines: raw packet rate beside xroce', cpu='CPU cost per GB')


def assemble():
    m = META
    status = dict(l.split() for l in open(os.path.join(TMP, 'status')) if l.strip())
    lines = ['# xroce performance results', '',
             'Generated by `%s` on commit `%s`, %s.' % (m['cmdline'], m['commit'], m['date']), '',
             'Host: Linux %s, %d CPUs (%s); build/xroce built %s; other work on the host before the '
             'run: %d%% of all CPUs busy.%s' % (
                 m['kernel'], m['ncpu'], m['cpu_model'], m['built'], m['bg_pct'],
                 ' **Quick (smoke) run: short measurements, rough figures.**' if m['quick'] else ''), '',
             'Raw data beside this file: `loss-1500.json`, `loss-9000.json`, `latency.json`, '
             '`failover.json`, `failover.csv`, `incast.json`, `incast-rates.csv`, `txengine.json`, '
             '`txengine-xroce-other.json`, '
             '`cpu.json`, and each part\'s output in `PART.log`.', '']
    lines += ['| part | result |', '|:---|:---|']
    for p in m['parts'].split():
        lines.append('| [%s](#%s) | %s |' % (TITLES[p], p, 'ok' if status.get(p) == '0' else
                                           '**failed** (exit %s, see `%s.log`)' % (status.get(p, '?'), p)))
    lines.append('')
    for p in m['parts'].split():
        lines += ['<a id="%s"></a>' % p, '## %s' % TITLES[p], '']
        try:
            lines += open(os.path.join(TMP, p + '.md')).read().rstrip('\n').split('\n')
        except OSError:
            lines.append('(no output)')
        if status.get(p) != '0':
            lines += ['', '**This part failed** (exit %s):' % status.get(p, '?'), '', '```']
            try:
                lines += open(os.path.join(TMP, p + '.err')).read().rstrip('\n').split('\n')
            except OSError:
                pass
            lines.append('```')
        lines.append('')
    open(os.path.join(OUT, 'results.md'), 'w').write('\n'.join(lines))


if a.part == 'assemble':
    assemble()
    sys.exit(0)
globals()['part_' + a.part]()
text = '\n'.join(md).rstrip('\n') + '\n'
open(os.path.join(TMP, a.part + '.md'), 'w').write(text)
sys.stdout.write(text)
for e in errors:
    print('ERROR: ' + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# ---- the run ----------------------------------------------------------------
LOSS_RAN=0 # part loss ran in this run (its files are this run's)
FAILED=()
: >"$TMP/status"
T_ALL=$SECONDS
for p in $PARTS; do
	echo
	echo "== part $p ($(date -u '+%H:%M:%S UTC'))"
	[ "$p" = cpu ] || : >"$OUT/$p.log"
	date -u '+%Y-%m-%d %H:%M UTC' >"$TMP/$p.date"
	t0=$SECONDS
	rc=0
	# In the main shell (not a subshell), so that on_signal knows the
	# running command; errexit is off inside (a `||` context): the parts
	# check every step themselves.
	"part_$p" 2>"$TMP/$p.err" || rc=$?
	cat "$TMP/$p.err" >&2
	[ "$p" = loss ] && LOSS_RAN=1
	echo "$p $rc" >>"$TMP/status"
	if [ "$rc" = 0 ]; then
		echo "== part $p done in $((SECONDS - t0)) s"
	else
		FAILED+=("$p")
		# what the sub-scripts said last, for results.md and the summary
		{ cat "$TMP/$p.err" 2>/dev/null; grep -h -i -E 'fail|error' "$OUT/$p.log" 2>/dev/null | tail -5; } |
			awk '!seen[$0]++' | tail -20 >"$TMP/$p.err2" || true
		mv "$TMP/$p.err2" "$TMP/$p.err"
		echo "== part $p FAILED (exit $rc) after $((SECONDS - t0)) s" >&2
	fi
done
[ -f "$OUT/cpu.log" ] || rm -f "$OUT/cpu.log"
python3 "$REPORT" assemble --meta "$TMP/meta.json" --out "$OUT" --tmp "$TMP" ||
	{ echo "run.sh: cannot write results.md" >&2; FAILED+=(results.md); }
echo
echo "== $((SECONDS - T_ALL)) s; results: $OUT/results.md"
if [ ${#FAILED[@]} -gt 0 ]; then
	echo "== FAILED: ${FAILED[*]}" >&2
	exit 1
fi
