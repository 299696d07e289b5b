#!/usr/bin/env bash
# loss_sweep.sh: goodput of one connection against random loss, xroce beside
# TCP, measured in the same run through the same injector.
#
# Topology: tests/fabric/fabric.sh pair (host - BPF wire switch - host); the
# switch drops packets at random with the given probability in both
# directions (data and ACKs alike).  For each loss rate:
#   xroce  `xroce perf client --mode bw` (RDMA WRITEs of SIZE, 8 paths)
#   TCP    iperf3, one stream, TSO/GSO/GRO off (unless --gso), same MTU
# Printed: absolute goodput and the fraction of each one's loss-free goodput,
# and the CPU cost of every run: machine-wide CPU-seconds per GB moved.  On
# veth the receiver's and the switch's work runs in the sender's softirq, so
# no one process's time is the cost: the script reads /proc/stat (user + nice
# + system + irq + softirq of all CPUs) right before and after each client
# and divides by the bytes the client moved (xroce: bytes acknowledged by
# WRITE completions; TCP: bytes iperf3's server received).  Anything else
# running on the host counts too: "bg" (JSON bg_cpu_frac) is the share of
# all CPUs busy during 1 s before the sweep, with no traffic.
#
# --repeat R runs the whole sweep R times, interleaved (0, 1%, ..., 0, 1%,
# ...), and reports the median of each point (JSON: also every run), so a
# slow or fast moment of a noisy 2-core host does not decide the fractions.
# xroce's transmit engine (perf's tx_engine: auto unless XROCE_TX_ENGINE
# says) is reported with it.
#
# Usage: tests/bench/loss_sweep.sh [--losses "0 0.01 0.1"] [--secs S]
#                                  [--size BYTES] [--mtu M] [--gso] [--json F]
#                                  [--repeat R]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root

LOSSES="0 0.01 0.1"
SECS=5
SIZE=65536
MTU=1500
GSO=0
JSON=
REPEAT=1
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) REPEAT=$2; shift 2 ;;
	--losses) LOSSES=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--mtu) MTU=$2; shift 2 ;;
	--gso) GSO=1; shift ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
xr_need_cmd iperf3
xr_bpffs

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
# xroce is attached here and again before every run (the TCP runs
# replace it with the fabric's pass program).
xr_fab_pair --mtu "$MTU"
for ns in "$A" "$B"; do
	if [ "$GSO" -eq 1 ]; then
		nsx "$ns" ethtool -K eth0 tso on gso on gro on >/dev/null 2>&1 || true
	else
		nsx "$ns" ethtool -K eth0 tso off gso off gro off >/dev/null 2>&1 || true
	fi
done

# Busy CPU time of all CPUs, in clock ticks (/proc/stat: user nice system
# idle iowait irq softirq ...; steal and guest are not ours).
cpu_ticks() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
HZ=$(getconf CLK_TCK)
bg_frac() { # share of all CPUs busy during 1 s
	local c0 c1
	c0=$(cpu_ticks)
	sleep 1
	c1=$(cpu_ticks)
	awk -v a="$c0" -v b="$c1" -v hz="$HZ" -v n="$(nproc)" 'BEGIN { printf "%.4f", (b - a) / hz / n }'
}

xroce_run() {
	nsx "$A" "$XROCE" attach --force eth0 >/dev/null
	nsx "$B" "$XROCE" attach --force eth0 >/dev/null
	# Every process is bounded: a client that cannot connect must not
	# leave its server (or the sweep) waiting for ever.
	nsx "$B" timeout -k 2 $((SECS + 40)) "$XROCE" perf server -i eth0 --once \
		>/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	local c0 c1
	c0=$(cpu_ticks)
	nsx "$A" timeout -k 2 $((SECS + 30)) "$XROCE" perf client -i eth0 "$BIP" \
		-s "$SIZE" -d "$SECS" --json \
		2>"$TMP/perf.err" | tail -1 >"$TMP/x.json" || true
	c1=$(cpu_ticks)
	wait "$spid" || true
	[ -s "$TMP/x.json" ] || xr_log "xroce perf client failed at loss $loss: $(tail -3 "$TMP/perf.err")"
	# gbps retx pkts bytes cpu_ticks mpps client_cpu_s_per_gb
	xr_json '" ".join(str(x) for x in (j["gbps"], j["retx_pkts"], j["pkts"], j["bytes"], a[0], j.get("mpps", 0), j.get("cpu_s_per_gb", 0), j.get("tx_engine", "?")))' \
		$((c1 - c0)) <"$TMP/x.json" 2>/dev/null || echo "0 0 0 0 0 0 0 ?"
}

tcp_run() {
	# TCP needs a plain XDP program on the hosts (not xroce) so frames
	# redirected by the switch arrive: the fabric's pass program.
	nsx "$A" "$XROCE" detach eth0 >/dev/null 2>&1 || true
	nsx "$B" "$XROCE" detach eth0 >/dev/null 2>&1 || true
	"$XRFABRIC" attach --netns "$A" --host-pass eth0 >/dev/null
	"$XRFABRIC" attach --netns "$B" --host-pass eth0 >/dev/null
	nsx "$B" timeout -k 2 $((SECS + 40)) iperf3 -s -1 >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	local c0 c1
	c0=$(cpu_ticks)
	nsx "$A" timeout -k 2 $((SECS + 30)) iperf3 -c "$BIP" -t "$SECS" -J \
		>"$TMP/i.json" 2>/dev/null || true
	c1=$(cpu_ticks)
	wait "$spid" || true
	[ -s "$TMP/i.json" ] || xr_log "iperf3 client failed at loss $loss"
	# gbps retx bytes cpu_ticks
	xr_json '" ".join(str(x) for x in (j["end"]["sum_received"]["bits_per_second"] / 1e9, j["end"]["sum_sent"].get("retransmits", 0), j["end"]["sum_received"]["bytes"], a[0]))' \
		$((c1 - c0)) <"$TMP/i.json" 2>/dev/null || echo "0 0 0 0"
}

echo "loss sweep: one connection, ${SECS}s per point, MTU $MTU, xroce WRITE $SIZE B x 8 paths, TCP $([ "$GSO" -eq 1 ] && echo "GSO/TSO on" || echo "TSO/GSO/GRO off")"
BG=$(bg_frac)
echo "CPU s/GB: machine-wide busy CPU time (all $(nproc) CPUs) per GB moved; other work on the host before the sweep: $(awk -v b="$BG" 'BEGIN { printf "%.1f", 100 * b }')% of all CPUs"
printf '%-7s | %-10s %-8s %-9s %-8s | %-10s %-8s %-9s %-8s\n' loss "xroce Gb/s" "of 0%" retx "CPU s/GB" "TCP Gb/s" "of 0%" retx "CPU s/GB"
: >"$TMP/rows"
[[ $REPEAT =~ ^[1-9][0-9]?$ ]] || xr_die "--repeat must be 1..99"
for rep in $(seq 1 "$REPEAT"); do
	for loss in $LOSSES; do
		xr_fab_loss "$loss"
		read -r xg xr xp xb xc xm xpc xe < <(xroce_run)
		read -r tg tr tb tc < <(tcp_run)
		echo "$loss $xg $xr $xp $tg $tr $xb $xc $tb $tc $xm $xpc $xe $rep" >>"$TMP/rows"
	done
done
[ "$REPEAT" -gt 1 ] && echo "(median of $REPEAT interleaved runs per point)"
python3 "$XR_BENCHPY/loss_table.py" "$TMP/rows" "${JSON:-}" "$HZ" "$BG" "$SECS" "$MTU" "$GSO"
