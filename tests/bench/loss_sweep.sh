#!/usr/bin/env bash
# loss_sweep.sh: goodput of one connection against random loss, xroce beside
# TCP, measured in the same run through the same injector.
#
# Topology: tests/fabric/fabric.sh pair (host - BPF wire switch - host); the
# switch drops packets at random with the given probability in both
# directions (data and ACKs alike).  For each loss rate:
#   xroce  `xroce perf client --mode bw` (RDMA WRITEs of SIZE, 8 paths)
#   TCP    iperf3, one stream, TSO/GSO/GRO off (unless --gso), same MTU
# Printed: absolute goodput and the fraction of each one's loss-free goodput.
#
# Usage: tests/bench/loss_sweep.sh [--losses "0 0.01 0.1"] [--secs S]
#                                  [--size BYTES] [--mtu M] [--gso] [--json F]
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
while [ $# -gt 0 ]; do
	case $1 in
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

set_loss() {
	"$XRFABRIC" set --netns "$SW" --port a0 "loss=$1" >/dev/null
	"$XRFABRIC" set --netns "$SW" --port b0 "loss=$1" >/dev/null
}

xroce_run() {
	nsx "$A" "$XROCE" attach --force eth0 >/dev/null
	nsx "$B" "$XROCE" attach --force eth0 >/dev/null
	nsx "$B" "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	nsx "$A" "$XROCE" perf client -i eth0 "$BIP" -s "$SIZE" -d "$SECS" --json \
		2>"$TMP/perf.err" | tail -1 >"$TMP/x.json" || true
	wait "$spid" || true
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["gbps"], d["retx_pkts"], d["pkts"])' \
		"$TMP/x.json" 2>/dev/null || echo "0 0 0"
}

tcp_run() {
	# TCP needs a plain XDP program on the hosts (not xroce) so frames
	# redirected by the switch arrive: the fabric's pass program.
	nsx "$A" "$XROCE" detach eth0 >/dev/null 2>&1 || true
	nsx "$B" "$XROCE" detach eth0 >/dev/null 2>&1 || true
	"$XRFABRIC" attach --netns "$A" --host-pass eth0 >/dev/null
	"$XRFABRIC" attach --netns "$B" --host-pass eth0 >/dev/null
	nsx "$B" iperf3 -s -1 >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	nsx "$A" iperf3 -c "$BIP" -t "$SECS" -J >"$TMP/i.json" 2>/dev/null || true
	wait "$spid" || true
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["end"]; print(e["sum_received"]["bits_per_second"]/1e9, e["sum_sent"].get("retransmits",0))' \
		"$TMP/i.json" 2>/dev/null || echo "0 0"
}

echo "loss sweep: one connection, ${SECS}s per point, MTU $MTU, xroce WRITE $SIZE B x 8 paths, TCP $([ "$GSO" -eq 1 ] && echo "GSO/TSO on" || echo "TSO/GSO/GRO off")"
printf '%-7s | %-10s %-8s %-9s | %-10s %-8s %-9s\n' loss "xroce Gb/s" "of 0%" retx "TCP Gb/s" "of 0%" retx
: >"$TMP/rows"
for loss in $LOSSES; do
	set_loss "$loss"
	read -r xg xr xp < <(xroce_run)
	read -r tg tr < <(tcp_run)
	echo "$loss $xg $xr $xp $tg $tr" >>"$TMP/rows"
done
python3 - "$TMP/rows" "${JSON:-}" <<'PY'
import json, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
base_x = next((float(r[1]) for r in rows if float(r[0]) == 0), None)
base_t = next((float(r[4]) for r in rows if float(r[0]) == 0), None)
out = []
for r in rows:
    loss, xg, xr, xp, tg, tr = float(r[0]), float(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5])
    fx = xg / base_x if base_x else float('nan')
    ft = tg / base_t if base_t else float('nan')
    print(f"{loss*100:5.1f}%  | {xg:10.3f} {fx*100:7.1f}% {xr:9d} | {tg:10.3f} {ft*100:7.1f}% {tr:9d}")
    out.append(dict(loss=loss, xroce_gbps=xg, xroce_frac=fx, xroce_retx=xr, xroce_pkts=xp,
                    tcp_gbps=tg, tcp_frac=ft, tcp_retx=tr))
if sys.argv[2]:
    json.dump(out, open(sys.argv[2], 'w'), indent=1)
PY
