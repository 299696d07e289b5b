#!/usr/bin/env bash
# router_bw.sh: loss-free goodput of one connection through a plain Linux
# router namespace (fabric.sh's `router`: kernel IP forwarding, no project
# fabric on the way), xroce beside TCP, as interleaved pairs.
#
#   xroce  `xroce perf client --mode bw` (RDMA WRITEs of SIZE)
#   TCP    iperf3, one stream, TSO/GSO/GRO off on both hosts (as the
#          loss sweep's baseline: the same per-packet path as xroce's)
#   base   with --base BIN: the same xroce run with another build (its own
#          XDP program attached for its runs), before/after in one run
# Each repeat runs every transport once, in turn, so that the load of the
# shared host falls on all of them alike.  Printed: every pair, then the
# median goodput of each transport, xroce's over TCP's, and the machine-wide
# busy CPU time per GB moved (all CPUs, /proc/stat, as loss_sweep.sh).
#
# Usage: tests/bench/router_bw.sh [--repeat R] [--secs S] [--size BYTES]
#                                 [--base BIN]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root
REPEAT=5
SECS=4
SIZE=65536
BASE=
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) REPEAT=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--base) BASE=$(realpath "$2"); shift 2 ;;
	*) xr_die "unknown option $1 (see the header)" ;;
	esac
done
[[ $REPEAT =~ ^[1-9][0-9]?$ ]] || xr_die "--repeat must be 1..99"
xr_need_cmd iperf3
[ -z "$BASE" ] || xr_need_exec "$BASE"
xr_bpffs
PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_private_bins
xr_fab_up router
# shellcheck disable=SC2154 # FAB_* from the fabric's description
A=$FAB_h0_NS B=$FAB_h1_NS BIP=$FAB_h1_IP4_0
for ns in "$A" "$B"; do
	nsx "$ns" ethtool -K eth0 tso off gso off gro off >/dev/null 2>&1 || true
done

cpu_ticks() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
HZ=$(getconf CLK_TCK)

xroce_bw() { # BIN -> "gbps cpu_s_per_gb"
	local bin=$1 spid c0 c1
	xr_fab_attach "$bin" "$A" "$B"
	nsx "$B" timeout -k 2 $((SECS + 40)) "$bin" perf server -i eth0 --once >/dev/null 2>&1 &
	spid=$!
	sleep 0.3
	c0=$(cpu_ticks)
	nsx "$A" timeout -k 2 $((SECS + 30)) "$bin" perf client -i eth0 "$BIP" --mode bw \
		-s "$SIZE" -d "$SECS" --json 2>/dev/null | tail -1 >"$TMP/x.json" || true
	c1=$(cpu_ticks)
	wait "$spid" || true
	xr_json '"%.3f %.3f" % (j["gbps"], float(a[0]) / float(a[1]) / (j["bytes"] / 1e9))' \
		$((c1 - c0)) "$HZ" <"$TMP/x.json" 2>/dev/null || echo "nan nan"
}

tcp_bw() { # -> "gbps cpu_s_per_gb"
	local spid c0 c1
	nsx "$A" ip link set dev eth0 xdp off
	nsx "$B" ip link set dev eth0 xdp off
	nsx "$B" timeout -k 2 $((SECS + 40)) iperf3 -s -1 >/dev/null 2>&1 &
	spid=$!
	sleep 0.3
	c0=$(cpu_ticks)
	nsx "$A" timeout -k 2 $((SECS + 30)) iperf3 -c "$BIP" -t "$SECS" -J \
		>"$TMP/i.json" 2>/dev/null || true
	c1=$(cpu_ticks)
	wait "$spid" || true
	xr_json '"%.3f %.3f" % (j["end"]["sum_received"]["bits_per_second"] / 1e9, float(a[0]) / float(a[1]) / (j["end"]["sum_received"]["bytes"] / 1e9))' \
		$((c1 - c0)) "$HZ" <"$TMP/i.json" 2>/dev/null || echo "nan nan"
}

echo "one connection through a Linux router, ${SECS} s per run, xroce WRITE $SIZE B, TCP TSO/GSO/GRO off"
: >"$TMP/rows"
for ((r = 1; r <= REPEAT; r++)); do
	x=$(xroce_bw "$XROCE")
	t=$(tcp_bw)
	b=
	[ -z "$BASE" ] || b=$(xroce_bw "$BASE")
	echo "pair $r: xroce ${x% *} Gbit/s, TCP ${t% *}${b:+, base ${b% *}}"
	echo "$x $t ${b:-nan nan}" >>"$TMP/rows"
done
python3 - "$TMP/rows" <<'EOF'
import statistics, sys
rows = [[float(v) for v in l.split()] for l in open(sys.argv[1]) if l.strip()]
def med(i):
    v = [r[i] for r in rows if r[i] == r[i]]
    return statistics.median(v) if v else float("nan")
x, xc, t, tc, b, bc = (med(i) for i in range(6))
print("median of %d pairs: xroce %.2f Gbit/s (%.2f CPU s/GB), TCP %.2f (%.2f)"
      % (len(rows), x, xc, t, tc) + ("" if b != b else ", base %.2f (%.2f)" % (b, bc)))
ratios = sorted(r[0] / r[2] for r in rows if r[2] > 0)
print("xroce / TCP: %.2fx (pairs %s); CPU per GB %.2fx TCP's"
      % (x / t, " ".join("%.2f" % v for v in ratios), xc / tc))
EOF
