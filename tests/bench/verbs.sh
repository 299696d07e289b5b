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
# (bandwidth) or difference (latency), then every run.  Then what the
# device's progress thread costs (the verbs library opens every device
# with one):
#
#   idle       an ibv_rc_pingpong server that opened its device and waits
#              for its client: CPU seconds over SECS (/proc/PID/stat)
#   load       an ib_write_bw server, whose own thread sleeps on its TCP
#              socket while the client WRITEs: CPU seconds over the run
#              (/usr/bin/time), so nearly all of it is the progress thread
#
# Usage: tests/bench/verbs.sh [--repeat N] [--secs S] [--size BYTES]
#                             [--depth N] [--iters N] [--planes N]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh
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
# shellcheck disable=SC2154 # FAB_* come from the env file
{
	A=$FAB_h0_NS
	B=$FAB_h1_NS
	BIP=$FAB_h1_IP4_0
}
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
	if [ "$mode" = bw ]; then
		tail -1 <<<"$out" | xr_json '"%.3f" % j["gbps"]'
	else
		tail -1 <<<"$out" | xr_json '"%.2f %.2f" % (j["rtt_p50_us"], j["rtt_p99_us"])'
	fi
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
	python3 "$XR_PY/perftest_line.py" "$mode" "$line"
}

declare -a NB VB NL VL
for ((r = 1; r <= REPEAT; r++)); do
	NB+=("$(perf_native bw)")
	VB+=("$(perf_verbs bw)")
	NL+=("$(perf_native lat)")
	VL+=("$(perf_verbs lat)")
	echo "run $r: bw native ${NB[-1]} verbs ${VB[-1]} Gbit/s; lat (median p99 us) native ${NL[-1]} verbs ${VL[-1]}" >&2
done

# CPU seconds (user + system) of PID so far
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"
}

# thread_idle: CPU seconds of a waiting ibv_rc_pingpong server over SECS
thread_idle() {
	local pid c0 c1
	nsx "$B" "$XROCE" run -- ibv_rc_pingpong -d "$DEV" -g 0 -p 18517 >/dev/null 2>&1 &
	pid=$!
	xr_cleanup_push "kill $pid 2>/dev/null"
	wait_port "$B" t 18517 || xr_die "ibv_rc_pingpong server did not start"
	c0=$(cpu_of "$pid")
	sleep "$SECS"
	c1=$(cpu_of "$pid")
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	awk -v a="$c0" -v b="$c1" -v s="$SECS" 'BEGIN { printf "%.4f", (b - a) / s }'
}

# thread_load: "CPU-seconds wall-seconds" of an ib_write_bw server
thread_load() {
	local spid args=(-d "$DEV" -x 0 -s "$SIZE" -t "$DEPTH" -D "$SECS" -p 18518)
	nsx "$B" "$XROCE" run -- /usr/bin/time -f "%U %S %e" -o "$TMP/time" \
		ib_write_bw "${args[@]}" >"$TMP/srv.out" 2>&1 &
	spid=$!
	wait_port "$B" t 18518 || xr_die "ib_write_bw server did not start"
	nsx "$A" "$XROCE" run -- ib_write_bw "${args[@]}" "$BIP" >"$TMP/cli.out" 2>&1 ||
		xr_die "ib_write_bw: $(tail -5 "$TMP/cli.out")"
	wait "$spid" || true
	awk '{ printf "%.3f %.3f", $1 + $2, $3 }' "$TMP/time"
}

python3 "$XR_BENCHPY/verbs_table.py" "$SIZE" "$DEPTH" "$PLANES" "${NB[*]}" "${VB[*]}" "${NL[*]}" "${VL[*]}"
idle=$(thread_idle)
read -r lcpu lwall <<<"$(thread_load)"
echo
echo "progress thread, CPU share of one core: idle $(awk -v x="$idle" 'BEGIN { printf "%.2f%%", 100 * x }');" \
	"ib_write_bw server under load $(awk -v c="$lcpu" -v w="$lwall" 'BEGIN { printf "%.0f%% (%.2f s over %.2f s)", 100 * c / w, c, w }')"
