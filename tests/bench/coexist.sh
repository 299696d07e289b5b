#!/usr/bin/env bash
# coexist.sh: one xroce connection beside 1, 2 and 4 TCP flows through one
# bottleneck: does xroce get its fair share without starving TCP?  And the
# same with the xroce of another build (--compare, e.g. the controller
# before this one), interleaved run by run, side by side in one table.
#
# Topologies (built once, torn down at the end or on any failure):
#   droptail  a plain Linux router namespace: xroce sender, TCP sender and
#             receiver each on its own veth to it; the router's port to the
#             receiver is the bottleneck, a tbf of RATE Mbit/s whose queue
#             holds --queue-ms of it (drop-tail).  The router's ports carry
#             only an XDP_PASS program (a veth needs one for the hosts'
#             XDP_TX frames to arrive); TCP without ECN.
#   ecn       the fabric emulator (tests/fabric/fabric.sh incast 2): the same
#             tbf, and in front of it at TC egress the fabric's ECN virtual
#             queue (ecn=RATE,--ecn-thresh bytes) marking ECT packets CE;
#             TCP with ECN on (net.ipv4.tcp_ecn=1 on its sender).
#   lossy     (--loss-rows) the fabric emulator without marks, random loss
#             of the given rate on the switch's ingress from both senders:
#             loss before the drop-tail bottleneck, for both flows.
#   alone     (--alone) xroce by itself through the fabric's drop-tail
#             bottleneck at the given random losses: the bottleneck figures.
# xroce: `xroce perf client --mode bw` (64 KiB WRITEs, 8 paths, max_inflight
# --max-inflight; a --compare binary without that option runs with its
# default); TCP: one iperf3 client with -P N streams, congestion control
# --cc (cubic), TSO/GSO off (the queue sees packets, not 64 KB GSO
# aggregates, as behind a NIC).  DCTCP runs beside CUBIC in the ecn queue
# only if the kernel offers it (net.ipv4.tcp_available_congestion_control):
# modules cannot be loaded here, and a missing one is reported as skipped.
# Each binary attaches its own XDP program to both xroce hosts and runs its
# own `perf server` for its runs (builds may differ on the wire).
#
# Every configuration runs in both orders: the first flow starts alone,
# the second --lead seconds later, and both then run for --secs.  Shares
# are measured over those --secs (t = 0 at the later start), in 1 s bins:
# xroce's from its acknowledged bytes (perf --interval-ms, wall-clock
# stamped), TCP's from bytes_acked of each socket (ss on the TCP sender,
# sampled every --sample-ms).  "xroce / fair share" = xroce's bytes x (N+1)
# / all flows' bytes: 1.0 is an exact fair share of what the link carried;
# the target is 0.7..1.5.  "least TCP / fair": the same for the TCP flow
# that got least (nobody starved).  --repeat K runs the whole set K times
# (interleaved); the comparison table shows medians.
#
# Usage: tests/bench/coexist.sh [--quick] [--queues "droptail ecn"]
#          [--rates "1000 2000"] [--ecn-rates "1000"] [--tcp "1 2 4"]
#          [--orders "xroce tcp"] [--secs S] [--lead S] [--queue-ms MS]
#          [--burst B] [--ecn-thresh BYTES] [--cc "cubic dctcp"]
#          [--max-inflight N] [--loss-rows "0.01"] [--alone "0 0.01 0.1"]
#          [--alone-secs S] [--sample-ms MS] [--repeat K] [--compare BIN]
#          [--out DIR] [--json F] [--csv F] [--png F] [--md F]
# --rates: the drop-tail and lossy bottlenecks (Mbit/s); --ecn-rates the
# ECN-marking ones; --alone runs at the first of --rates.
# --quick: 8 s runs, 2 s lead, 1 TCP flow, xroce first, drop-tail and 1%
# loss at each rate, no ECN, alone at 0 and 10%.
# --compare BIN: also every run with BIN (label "base"; this tree's is
# "new"); default $XROCE_BASE if set.
# Needs root, build/xroce, build/xrfabric (or $XROCE, $XRFABRIC), iperf3,
# gnuplot (for --png).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root

QUEUES="droptail ecn"
RATES="1000 2000"
ECN_RATES="1000"
NTCP="1 2 4"
ORDERS="xroce tcp"
SECS=15
LEAD=3
QUEUE_MS=5
BURST=64kb
ECN_THRESH=60000
CCS="cubic dctcp"
MAXINF=1024
LOSS_ROWS="0.01"
ALONE="0 0.01 0.1"
ALONE_SECS=8
SAMPLE_MS=250
REPEAT=1
COMPARE=${XROCE_BASE:-}
OUT=
JSON=
CSV=
PNG=
MD=
QUICK=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	--queues) QUEUES=$2; shift 2 ;;
	--rates) RATES=$2; shift 2 ;;
	--ecn-rates) ECN_RATES=$2; shift 2 ;;
	--tcp) NTCP=$2; shift 2 ;;
	--orders) ORDERS=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--lead) LEAD=$2; shift 2 ;;
	--queue-ms) QUEUE_MS=$2; shift 2 ;;
	--burst) BURST=$2; shift 2 ;;
	--ecn-thresh) ECN_THRESH=$2; shift 2 ;;
	--cc) CCS=$2; shift 2 ;;
	--max-inflight) MAXINF=$2; shift 2 ;;
	--loss-rows) LOSS_ROWS=$2; shift 2 ;;
	--alone) ALONE=$2; shift 2 ;;
	--alone-secs) ALONE_SECS=$2; shift 2 ;;
	--sample-ms) SAMPLE_MS=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--compare) COMPARE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	--csv) CSV=$2; shift 2 ;;
	--png) PNG=$2; shift 2 ;;
	--md) MD=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) xr_die "unknown option $1 (--help)" ;;
	esac
done
if [ "$QUICK" = 1 ]; then
	SECS=8 LEAD=2 NTCP=1 ORDERS=xroce QUEUES=droptail ALONE="0 0.1" ALONE_SECS=5
fi
for q in $QUEUES; do case $q in droptail | ecn) ;; *) xr_die "--queues: droptail and/or ecn" ;; esac; done
for n in $NTCP; do [[ $n =~ ^[1-8]$ ]] || xr_die "--tcp: 1..8 each"; done
for o in $ORDERS; do case $o in xroce | tcp) ;; *) xr_die "--orders: xroce and/or tcp" ;; esac; done
for r in $RATES $ECN_RATES; do
	if ! [[ $r =~ ^[0-9]+$ ]] || [ "$r" -lt 10 ]; then xr_die "--rates/--ecn-rates: Mbit/s >= 10 each"; fi
done
[ -n "$RATES" ] || xr_die "--rates: at least one"
if ! [[ $SECS =~ ^[0-9]+$ ]] || [ "$SECS" -lt 2 ]; then xr_die "--secs: integer >= 2"; fi
[[ $LEAD =~ ^[0-9]+$ ]] || xr_die "--lead: integer seconds"
if ! [[ $ALONE_SECS =~ ^[0-9]+$ ]] || [ "$ALONE_SECS" -lt 2 ]; then xr_die "--alone-secs: integer >= 2"; fi
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || xr_die "--repeat: integer >= 1"
[[ $MAXINF =~ ^[0-9]+$ ]] || xr_die "--max-inflight: 0 (library default) or 2..4096"
xr_need_exec "$XROCE" "$XRFABRIC"
export XRFABRIC
[ -z "$COMPARE" ] || [ -x "$COMPARE" ] || xr_die "--compare: $COMPARE is not executable"
for t in iperf3 ss stdbuf python3 ethtool; do command -v "$t" >/dev/null || xr_die "$t missing"; done
xr_bpffs

# The TCP congestion controls to run: the ones the kernel has.
AVAIL=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)
RUN_CCS=
for cc in $CCS; do
	if [[ " $AVAIL " == *" $cc "* ]]; then
		RUN_CCS+="${RUN_CCS:+ }$cc"
	else
		echo "coexist: TCP congestion control '$cc' is not available on this kernel" \
			"(available: $AVAIL; modules cannot be loaded): skipped"
	fi
done
[ -n "$RUN_CCS" ] || xr_die "none of --cc '$CCS' is available (have: $AVAIL)"

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
[ -n "$OUT" ] || OUT=$TMP/out
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# build/'s binaries copied, so that a rebuild during the run cannot swap
# them halfway
if [ "$XROCE" = "$XR_ROOT/build/xroce" ] && [ "$XRFABRIC" = "$XR_ROOT/build/xrfabric" ]; then
	xr_private_bins
	export XRFABRIC
fi
CPID=
SPID=
stop_collector() {
	[ -n "$CPID" ] || return 0
	kill "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null || true # killed: 143
}
stop_server() {
	[ -n "$SPID" ] || return 0
	kill "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null || true # killed: 143
	SPID=
}
xr_cleanup_push stop_collector
xr_cleanup_push stop_server

# ---- the plain router --------------------------------------------------------
# $PFX-x (xroce sender), $PFX-t (TCP sender), $PFX-r (receiver), $PFX-rt
# (router, port pH towards host H).
router_up() {
	local p=$PFX h i=0
	xr_ns_add "$p-rt"
	nsx "$p-rt" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0
	for h in x t r; do
		xr_ns_add "$p-$h"
		xr_veth "$p-$h" eth0 "$p-rt" "p$h"
		nsx "$p-rt" ethtool -K "p$h" gro off >/dev/null
		nsx "$p-rt" ip addr add "10.84.$i.1/24" dev "p$h"
		nsx "$p-$h" ip addr add "10.84.$i.2/24" dev eth0
		nsx "$p-$h" ip route add default via "10.84.$i.1"
		nsx "$p-$h" sysctl -qw net.ipv4.conf.all.arp_ignore=1
		"$XRFABRIC" attach --netns "$p-rt" --host-pass "p$h" >/dev/null
		i=$((i + 1))
	done
	R_XNS=$p-x R_TNS=$p-t R_RNS=$p-r R_SW=$p-rt R_BN=pr R_DST=10.84.2.2
}

fabric_up() {
	PFX=${PFX}f xr_fab_up incast 2 --rate "${RATES%% *}mbit" --burst "$BURST"
	# shellcheck disable=SC2154 # FAB_* come from the env file
	F_XNS=$FAB_h0_NS F_TNS=$FAB_h1_NS F_RNS=$FAB_r_NS F_DST=$FAB_r_IP4_0
	F_SW=${FAB_BOTTLENECK%%:*} F_BN=${FAB_BOTTLENECK#*:}
}

# the hosts' parts that do not depend on the xroce binary: TCP's sender
# without segmentation offloads, iperf3's server
hosts_up() {
	local tns=$1 rns=$2 i
	# TCP's segments on the wire as a NIC would send them: the queue and
	# the ECN virtual queue see packets, not 64 KB GSO aggregates
	nsx "$tns" ethtool -K eth0 tso off gso off >/dev/null 2>&1 ||
		xr_die "cannot turn TSO/GSO off on the TCP sender"
	# nsenter itself in the background (not the nsx function, whose
	# subshell would be what $! names)
	nsenter --net="/var/run/netns/$rns" iperf3 -s >/dev/null 2>&1 &
	xr_cleanup_push "kill $! 2>/dev/null; wait $!"
	for ((i = 0; i < 100; i++)); do
		nsx "$rns" ss -Hltn 'sport = :5201' | grep -q . && return 0
		sleep 0.1
	done
	xr_die "iperf3 -s in $rns did not start"
}

# xroce_up BIN XNS RNS: BIN's XDP program on both xroce hosts and its
# perf server on the receiver (the previous one stopped)
xroce_up() {
	local bin=$1 xns=$2 rns=$3 i
	stop_server
	xr_fab_attach "$bin" "$xns" "$rns"
	# nsenter itself in the background (not the nsx function, whose
	# subshell would be what $! names)
	nsenter --net="/var/run/netns/$rns" "$bin" perf server -i eth0 >"$TMP/server.out" 2>&1 &
	SPID=$!
	for ((i = 0; i < 100; i++)); do
		nsx "$rns" ss -Hlun 'sport = :4796' | grep -q . && return 0
		sleep 0.1
	done
	xr_die "$bin perf server in $rns did not start: $(cat "$TMP/server.out")"
}

need_router=0 need_fabric=0
for q in $QUEUES; do [ "$q" = droptail ] && need_router=1; [ "$q" = ecn ] && need_fabric=1; done
[ -z "$LOSS_ROWS" ] && [ -z "$ALONE" ] || need_fabric=1
if [ "$need_router" = 1 ]; then
	router_up
	hosts_up "$R_TNS" "$R_RNS"
fi
if [ "$need_fabric" = 1 ]; then
	fabric_up
	hosts_up "$F_TNS" "$F_RNS"
fi

BINS=("new=$XROCE")
[ -z "$COMPARE" ] || BINS+=("base=$COMPARE")
RUNS=$TMP/runs.jsonl
: >"$RUNS"
NRUN=0

# one_run QUEUE RATE N ORDER CC LOSS REP: every binary once
one_run() {
	local queue=$1 rate=$2 n=$3 order=$4 cc=$5 loss=$6 rep=$7 topo xns tns rns sw bn dst
	local b label bin dir secs lead limit maxinf
	if [ "$queue" = droptail ]; then
		topo=router xns=$R_XNS tns=$R_TNS rns=$R_RNS sw=$R_SW bn=$R_BN dst=$R_DST
	else
		topo=fabric xns=$F_XNS tns=$F_TNS rns=$F_RNS sw=$F_SW bn=$F_BN dst=$F_DST
		if [ "$queue" = ecn ]; then
			"$XRFABRIC" set --netns "$sw" --port "$bn" --tc "ecn=$rate,$ECN_THRESH" >/dev/null
		else
			"$XRFABRIC" set --netns "$sw" --port "$bn" --tc ecn=off >/dev/null
		fi
		for p in h0 h1; do
			"$XRFABRIC" set --netns "$sw" --port "$p" "loss=$loss" >/dev/null
		done
	fi
	limit=$((rate * 1000000 * QUEUE_MS / 8000)) # tbf queue in bytes
	nsx "$sw" tc qdisc replace dev "$bn" root tbf rate "${rate}mbit" burst "$BURST" limit "$limit"
	nsx "$tns" sysctl -qw net.ipv4.tcp_ecn="$([ "$queue" = ecn ] && echo 1 || echo 0)"
	secs=$SECS lead=$LEAD
	[ "$n" -gt 0 ] || secs=$ALONE_SECS lead=0
	for b in "${BINS[@]}"; do
		label=${b%%=*} bin=${b#*=} maxinf=$MAXINF
		# a build without --max-inflight runs with its default
		"$bin" perf --help 2>&1 | grep -q -- --max-inflight || maxinf=0
		xroce_up "$bin" "$xns" "$rns"
		NRUN=$((NRUN + 1))
		dir=$OUT/runs/$(printf '%03d' "$NRUN")-$queue-$rate-n$n-$order-$cc-l$loss-$label
		mkdir -p "$dir"
		printf '{"label": "%s", "rep": %d, "queue": "%s", "fabric": %s, "n": %d, "order": "%s", '\
'"cc": "%s", "loss": %s, "secs": %d, "lead_s": %d, "xr_secs": %d, "tcp_secs": %d, "rate": %d, '\
'"queue_ms": %s, "size": 65536, "max_inflight": %d, "sample_s": %s, "xroce": "%s", '\
'"xrfabric": "%s", "xr_ns": "%s", "tcp_ns": "%s", "sw_ns": "%s", "bn_port": "%s", "dst_ip": "%s"}\n' \
			"$label" "$rep" "$queue" "$([ "$topo" = fabric ] && echo true || echo false)" "$n" \
			"$order" "$cc" "$loss" "$secs" "$lead" \
			"$((secs + $([ "$order" = xroce ] && echo "$lead" || echo 0)))" \
			"$((secs + $([ "$order" = tcp ] && echo "$lead" || echo 0)))" "$rate" "$QUEUE_MS" \
			"$maxinf" "$(awk -v m="$SAMPLE_MS" 'BEGIN { print m / 1000 }')" "$bin" "$XRFABRIC" \
			"$xns" "$tns" "$sw" "$bn" "$dst" >"$dir/cfg.json"
		python3 "$XR_BENCHPY/coexist_run.py" --cfg "$dir/cfg.json" --dir "$dir" &
		CPID=$!
		wait "$CPID" || xr_log "run $dir: collector failed"
		CPID=
		echo "{\"dir\": \"$dir\"}" >>"$RUNS"
		echo "  done: $queue $rate Mbit/s, N=$n, $order first, $cc, loss $loss, $label (rep $rep)" >&2
	done
}

echo "coexist: tbf $RATES Mbit/s (ECN: ${ECN_RATES}), burst $BURST, queue ${QUEUE_MS} ms; ECN vq > $ECN_THRESH B;" \
	"xroce max_inflight $MAXINF; ${SECS} s together after a ${LEAD} s lead; TCP: $RUN_CCS;" \
	"binaries: ${BINS[*]}; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((rep = 0; rep < REPEAT; rep++)); do
	for queue in $QUEUES; do
		rates=$RATES
		[ "$queue" = droptail ] || rates=$ECN_RATES
		for rate in $rates; do
			for cc in $RUN_CCS; do
				[ "$cc" != dctcp ] || [ "$queue" = ecn ] || continue # DCTCP needs marks
				for n in $NTCP; do
					for order in $ORDERS; do
						one_run "$queue" "$rate" "$n" "$order" "$cc" 0 "$rep"
					done
				done
			done
		done
	done
	for rate in $RATES; do
		for loss in $LOSS_ROWS; do
			for order in $ORDERS; do
				one_run lossy "$rate" 1 "$order" cubic "$loss" "$rep"
			done
		done
	done
	for loss in $ALONE; do
		one_run alone "${RATES%% *}" 0 xroce cubic "$loss" "$rep"
	done
done

args=(--runs "$RUNS" --secs "$SECS" --queue-ms "$QUEUE_MS")
[ -z "$JSON" ] || args+=(--json "$JSON")
[ -z "$CSV" ] || args+=(--csv "$CSV")
[ -z "$PNG" ] || args+=(--png "$PNG")
[ -z "$MD" ] || args+=(--md "$MD")
python3 "$XR_BENCHPY/coexist_report.py" "${args[@]}"
