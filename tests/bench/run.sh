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
#   router    round trips of 64 B and 4 KiB messages through a plain Linux
#             router namespace, xroce (busy-polling and --wait) beside UDP
#             and TCP ping-pong, medians of 3 interleaved repeats, then
#             `xroce perf --breakdown` of each size (router_lat.sh); and
#             one connection's loss-free goodput beside TCP's through the
#             same router (router_bw.sh, router_bw.log)
#   failover  goodput in 1 ms bins over 4 paths (4 planes) while one is
#             blackholed: time back to 90% of the rest's share, packets and
#             bytes retransmitted (failover.sh)
#   incast    2, 4 and 8 senders into one receiver behind a tbf bottleneck,
#             the receiver's rate hints on and off: Jain fairness, time to
#             converge, per-sender rates over time (incast.sh)
#   coexist   one xroce connection beside 1, 2 and 4 TCP CUBIC flows through
#             one bottleneck (a plain router's drop-tail tbf at 1 and 2
#             Gbit/s; the fabric's ECN-marking queue at 1 Gbit/s with ECN
#             TCP; 1% random loss before a drop-tail one), both starting
#             orders: xroce's share against its fair share, per second;
#             alone through the bottleneck at 0, 1 and 10% random loss; with
#             $XROCE_BASE (another build's xroce, e.g. the previous
#             controller's) run beside this build's, run by run (coexist.sh)
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
# Output files (DIR): loss-1500.json loss-9000.json latency.json router.json
# failover.json failover.csv incast.json incast-rates.csv coexist.json
# coexist-rates.csv txengine.json txengine-xroce-other.json cpu.json,
# PART.log (everything the sub-scripts printed), the plots
# goodput-vs-loss.png latency.png failover.png incast-rates.png
# coexist.png, and results.md, which describes this run only (the parts
# --only chose).
#
# A part that fails (or runs out of its time limit) prints its error and the
# run goes on with the next; the exit status is 1 if any part failed.  The
# sub-scripts create and remove their own network namespaces (unique
# prefixes, tests/lib/netns.sh); Ctrl-C stops the running one, which cleans
# up after itself.
#
# Usage: tests/bench/run.sh [--quick] [--only PARTS] [--out DIR]
#   --quick       smoke run, ~3 minutes: short runs, rough figures
#   --only PARTS  comma list of loss,latency,router,failover,incast,coexist,
#                 txengine,cpu (default: all)
#   --out DIR     output directory (default docs/perf)
# The full run takes ~27 minutes on the 2-core development host (~4 min
# loss, ~2 latency, ~2 router, 10 s failover, ~2 incast, ~14 coexist, twice that with
# XROCE_BASE, ~2 txengine).  Needs root, a built tree (make), iperf3,
# sockperf and gnuplot.
set -euo pipefail
cd "$(dirname "$0")/../.."

ALL_PARTS="loss latency router failover incast coexist txengine cpu"
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
	ROUTER_ARGS=(--iters 2000 --repeat 1)
	ROUTER_BW_ARGS=(--repeat 1 --secs 1)
	FAIL_ARGS=(--secs 2 --fail-at 1)
	INCAST_ARGS=(--secs 2)
	TX_ARGS=(--secs 0.5 --rounds 1 --sizes "64,1408")
	COEX_ARGS=(--quick)
	INCAST_SECS=2 INCAST_REP=1 TX_ROWS_S=6 COEX_LIMIT=600
else
	LOSS_SECS=4 LOSS_REP=3
	LAT_ARGS=(--iters 100000)
	ROUTER_ARGS=(--iters 20000 --repeat 3)
	ROUTER_BW_ARGS=(--repeat 5 --secs 4)
	FAIL_ARGS=()
	INCAST_ARGS=(--repeat 3)
	TX_ARGS=(--sizes "64,1408")
	COEX_ARGS=()
	COEX_LIMIT=3600
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

# The tables and plots: tests/lib/xrbench/report.py, one module per part.
REPORT=tests/lib/xrbench/report.py
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

part_router() {
	local rc=0
	rm -f "$OUT/router.json"
	stamp router "bash tests/bench/router_lat.sh ${ROUTER_ARGS[*]} --breakdown --json router.json"
	run_cmd "$OUT/router.log" 900 bash tests/bench/router_lat.sh "${ROUTER_ARGS[@]}" \
		--breakdown --json "$OUT/router.json" || rc=1
	report router || rc=1
	# Goodput through the same router, xroce beside TCP (printed in the
	# log: its last two lines are the medians and the ratio).
	stamp router "bash tests/bench/router_bw.sh ${ROUTER_BW_ARGS[*]}"
	run_cmd "$OUT/router_bw.log" 600 bash tests/bench/router_bw.sh "${ROUTER_BW_ARGS[@]}" || rc=1
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

part_coexist() {
	local rc=0 base=()
	rm -f "$OUT/coexist.json" "$OUT/coexist-rates.csv" "$OUT/coexist.png"
	[ -z "${XROCE_BASE:-}" ] || base=(--compare "$XROCE_BASE")
	stamp coexist "bash tests/bench/coexist.sh ${COEX_ARGS[*]:+${COEX_ARGS[*]} }${XROCE_BASE:+--compare $XROCE_BASE }--json coexist.json --csv coexist-rates.csv"
	run_cmd "$OUT/coexist.log" "$COEX_LIMIT" env -u XROCE_BASE bash tests/bench/coexist.sh \
		${COEX_ARGS[@]+"${COEX_ARGS[@]}"} ${base[@]+"${base[@]}"} --out "$TMP/coexist" \
		--json "$OUT/coexist.json" --csv "$OUT/coexist-rates.csv" || rc=1
	report coexist || rc=1
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
