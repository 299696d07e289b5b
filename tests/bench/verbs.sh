#!/usr/bin/env bash
# verbs.sh: what the ibverbs layer costs.  Debian's ib_write_bw and
# ib_write_lat, unmodified on xroce (`xroce run`), beside `xroce perf` (the
# native API) on the same fabric path in the same run, interleaved:
#
#   bandwidth  ib_write_bw -s SIZE -t DEPTH -D SECS  vs
#              xroce perf --mode bw -s SIZE -q DEPTH -d SECS
#              (one connection, WRITEs of SIZE, DEPTH in flight)
#   latency    ib_write_lat -s 8 -n ITERS  vs  xroce perf --mode lat -s 8
#              (perftest prints half the round trip: doubled here; its
#              ping-pong is WRITE + polling memory, xroce perf's
#              WRITE_WITH_IMM + polling the CQ; both busy-poll)
#
# Each pair runs REPEAT times; printed: the median of each and the ratio
# (bandwidth) or difference (latency), then every run.
#
# Usage: tests/bench/verbs.sh [--repeat N] [--secs S] [--size BYTES]
#                             [--depth N] [--iters N] [--planes N]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"
REPEAT=3
SECS=5
SIZE=65536
DEPTH=128
ITERS=10000
PLANES=1
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) REPEAT=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--depth) DEPTH=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--planes) PLANES=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
command -v ib_write_bw >/dev/null || xr_die "perftest missing (bash tests/deps.sh)"
XROCE=$PWD/build/xroce
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
if [ "$PLANES" -eq 1 ]; then
	bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
else
	bash tests/fabric/fabric.sh up planes "$PLANES" --prefix "$PFX" --env "$TMP/env" >/dev/null
fi
# shellcheck disable=SC1091
. "$TMP/env"
A=$FAB_h0_NS
B=$FAB_h1_NS
BIP=$FAB_h1_IP4_0
IFARGS=()
IFS_LIST=""
for ((i = 0; i < PLANES; i++)); do
	nsx "$A" "$XROCE" attach --force "eth$i" >/dev/null
	nsx "$B" "$XROCE" attach --force "eth$i" >/dev/null
	IFARGS+=(-i "eth$i")
	IFS_LIST+="${IFS_LIST:+,}eth$i"
done
export XROCE_IBV_DEVICES="xroce_bench=$IFS_LIST"
DEV=xroce_bench

wait_port() { # NS PROTO PORT
	local _
	for _ in $(seq 1 200); do
		nsx "$1" ss -Hl"$2"n "sport = :$3" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# perf_native MODE: one xroce perf run, its figure on stdout
perf_native() {
	local mode=$1 out spid
	nsx "$B" timeout 120 "$XROCE" perf server "${IFARGS[@]}" --once >/dev/null 2>&1 &
	spid=$!
	wait_port "$B" u 4796 || xr_die "xroce perf server did not start"
	if [ "$mode" = bw ]; then
		out=$(nsx "$A" timeout 120 "$XROCE" perf client "${IFARGS[@]}" "$BIP" \
			-m bw -s "$SIZE" -q "$DEPTH" -d "$SECS" --json)
	else
		out=$(nsx "$A" timeout 120 "$XROCE" perf client "${IFARGS[@]}" "$BIP" \
			-m lat -s 8 -n "$ITERS" --json)
	fi
	wait "$spid" || true
	python3 - "$mode" "$out" <<'EOF'
import json, sys
mode, d = sys.argv[1], json.loads(sys.argv[2].strip().splitlines()[-1])
if mode == "bw":
    print("%.3f" % d["gbps"])                 # Gbit/s
else:
    print("%.2f %.2f" % (d["rtt_p50_us"], d["rtt_p99_us"]))  # round trip
EOF
}

# perf_verbs MODE: one perftest run under xroce run
perf_verbs() {
	local mode=$1 tool spid args line
	if [ "$mode" = bw ]; then
		tool=ib_write_bw
		args=(-d "$DEV" -x 0 -s "$SIZE" -t "$DEPTH" -D "$SECS")
	else
		tool=ib_write_lat
		args=(-d "$DEV" -x 0 -s 8 -n "$ITERS")
	fi
	nsx "$B" timeout 120 "$XROCE" run -- "$tool" "${args[@]}" >"$TMP/srv.out" 2>&1 &
	spid=$!
	wait_port "$B" t 18515 || xr_die "$tool server did not start: $(cat "$TMP/srv.out")"
	nsx "$A" timeout 120 "$XROCE" run -- "$tool" "${args[@]}" "$BIP" >"$TMP/cli.out" 2>&1 ||
		xr_die "$tool: $(tail -5 "$TMP/cli.out")"
	wait "$spid" || true
	line=$(awk '/#bytes/ { getline; print; exit }' "$TMP/cli.out")
	python3 - "$mode" "$line" <<'EOF'
import sys
mode, f = sys.argv[1], sys.argv[2].split()
if mode == "bw":
    print("%.3f" % (float(f[3]) * 8 * 1048576 / 1e9))  # MB/s (MiB) -> Gbit/s
else:
    # t_typical is the median of half round trips; 99% percentile too
    print("%.2f %.2f" % (2 * float(f[4]), 2 * float(f[7])))
EOF
}

declare -a NB VB NL VL
for ((r = 1; r <= REPEAT; r++)); do
	NB+=("$(perf_native bw)")
	VB+=("$(perf_verbs bw)")
	NL+=("$(perf_native lat)")
	VL+=("$(perf_verbs lat)")
	echo "run $r: bw native ${NB[-1]} verbs ${VB[-1]} Gbit/s; lat (median p99 us) native ${NL[-1]} verbs ${VL[-1]}" >&2
done

python3 - "$SIZE" "$DEPTH" "$PLANES" "${NB[*]}" "${VB[*]}" "${NL[*]}" "${VL[*]}" <<'EOF'
import statistics as st, sys
size, depth, planes = sys.argv[1:4]
nb = [float(x) for x in sys.argv[4].split()]
vb = [float(x) for x in sys.argv[5].split()]
nl = [float(x) for x in sys.argv[6].split()[0::2]]
nlp = [float(x) for x in sys.argv[6].split()[1::2]]
vl = [float(x) for x in sys.argv[7].split()[0::2]]
vlp = [float(x) for x in sys.argv[7].split()[1::2]]
m = st.median
print(f"ibverbs on xroce vs xroce perf, {planes} plane(s), {len(nb)} interleaved runs (medians)")
print(f"| metric | xroce perf | ib_write_* on xroce | verbs / native |")
print(f"|---|---|---|---|")
print(f"| WRITE bandwidth, {size} B, {depth} in flight (Gbit/s) | {m(nb):.2f} | {m(vb):.2f} | {m(vb) / m(nb):.2f} |")
print(f"| 8 B round trip, median (us) | {m(nl):.1f} | {m(vl):.1f} | {m(vl) - m(nl):+.1f} us |")
print(f"| 8 B round trip, p99 (us) | {m(nlp):.1f} | {m(vlp):.1f} | {m(vlp) - m(nlp):+.1f} us |")
EOF
