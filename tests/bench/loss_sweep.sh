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
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"

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
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
command -v iperf3 >/dev/null || xr_die "iperf3 missing (bash tests/deps.sh)"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
bash tests/fabric/fabric.sh up pair --prefix "$PFX" --mtu "$MTU" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091
. "$TMP/env"
A=$FAB_h0_NS
B=$FAB_h1_NS
SW=${FAB_h0_PORT_0%%:*}
BIP=$FAB_h1_IP4_0
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

set_loss() {
	"$XRFABRIC" set --netns "$SW" --port a0 "loss=$1" >/dev/null
	"$XRFABRIC" set --netns "$SW" --port b0 "loss=$1" >/dev/null
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
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["gbps"], d["retx_pkts"], d["pkts"], d["bytes"], sys.argv[2], d.get("mpps", 0), d.get("cpu_s_per_gb", 0), d.get("tx_engine", "?"))' \
		"$TMP/x.json" $((c1 - c0)) 2>/dev/null || echo "0 0 0 0 0 0 0 ?"
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
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["end"]; print(e["sum_received"]["bits_per_second"]/1e9, e["sum_sent"].get("retransmits",0), e["sum_received"]["bytes"], sys.argv[2])' \
		"$TMP/i.json" $((c1 - c0)) 2>/dev/null || echo "0 0 0 0"
}

echo "loss sweep: one connection, ${SECS}s per point, MTU $MTU, xroce WRITE $SIZE B x 8 paths, TCP $([ "$GSO" -eq 1 ] && echo "GSO/TSO on" || echo "TSO/GSO/GRO off")"
BG=$(bg_frac)
echo "CPU s/GB: machine-wide busy CPU time (all $(nproc) CPUs) per GB moved; other work on the host before the sweep: $(awk -v b="$BG" 'BEGIN { printf "%.1f", 100 * b }')% of all CPUs"
printf '%-7s | %-10s %-8s %-9s %-8s | %-10s %-8s %-9s %-8s\n' loss "xroce Gb/s" "of 0%" retx "CPU s/GB" "TCP Gb/s" "of 0%" retx "CPU s/GB"
: >"$TMP/rows"
[[ $REPEAT =~ ^[1-9][0-9]?$ ]] || xr_die "--repeat must be 1..99"
for rep in $(seq 1 "$REPEAT"); do
	for loss in $LOSSES; do
		set_loss "$loss"
		read -r xg xr xp xb xc xm xpc xe < <(xroce_run)
		read -r tg tr tb tc < <(tcp_run)
		echo "$loss $xg $xr $xp $tg $tr $xb $xc $tb $tc $xm $xpc $xe $rep" >>"$TMP/rows"
	done
done
[ "$REPEAT" -gt 1 ] && echo "(median of $REPEAT interleaved runs per point)"
python3 - "$TMP/rows" "${JSON:-}" "$HZ" "$BG" "$SECS" "$MTU" "$GSO" <<'PY'
import json, statistics, sys
raw = [l.split() for l in open(sys.argv[1]) if l.strip()]
hz, bg, secs, mtu, gso = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), sys.argv[7] == '1'
# Each point: the run with the median xroce goodput and, separately, the
# run with the median TCP goodput (the columns of a row can come from
# different repetitions; every run is in the JSON).
points = {}
for r in raw:
    points.setdefault(r[0], []).append(r)
def median_run(rs, col):
    s = sorted(rs, key=lambda r: float(r[col]))
    return s[(len(s) - 1) // 2]
rows = []
for loss in dict.fromkeys(r[0] for r in raw):
    rx, rt = median_run(points[loss], 1), median_run(points[loss], 4)
    rows.append(rx[:4] + rt[4:6] + rx[6:8] + rt[8:10] + rx[10:13])
base_x = next((float(r[1]) for r in rows if float(r[0]) == 0), None)
base_t = next((float(r[4]) for r in rows if float(r[0]) == 0), None)
def per_gb(ticks, nbytes):
    return ticks / hz / (nbytes / 1e9) if nbytes > 0 else float('nan')
out = []
for r in rows:
    loss, xg, xr, xp, tg, tr = float(r[0]), float(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5])
    xb, xc, tb, tc = int(r[6]), int(r[7]), int(r[8]), int(r[9])
    xm, xpc, xe = float(r[10]), float(r[11]), r[12]
    runs = [dict(xroce_gbps=float(q[1]), tcp_gbps=float(q[4]), rep=int(q[13]))
            for q in points[r[0]]]
    fx = xg / base_x if base_x else float('nan')
    ft = tg / base_t if base_t else float('nan')
    xcg, tcg = per_gb(xc, xb), per_gb(tc, tb)
    print(f"{loss*100:5.1f}%  | {xg:10.3f} {fx*100:7.1f}% {xr:9d} {xcg:8.2f} | {tg:10.3f} {ft*100:7.1f}% {tr:9d} {tcg:8.2f}")
    out.append(dict(loss=loss, secs=secs, mtu=mtu, tcp_gso=gso, bg_cpu_frac=bg,
                    xroce_gbps=xg, xroce_frac=fx, xroce_retx=xr, xroce_pkts=xp,
                    xroce_mpps=xm, xroce_bytes=xb, xroce_cpu_s=xc / hz, xroce_cpu_s_per_gb=xcg,
                    xroce_client_cpu_s_per_gb=xpc, xroce_tx_engine=xe, runs=runs,
                    tcp_gbps=tg, tcp_frac=ft, tcp_retx=tr,
                    tcp_bytes=tb, tcp_cpu_s=tc / hz, tcp_cpu_s_per_gb=tcg))
if sys.argv[2]:
    json.dump(out, open(sys.argv[2], 'w'), indent=1)
PY
