#!/usr/bin/env bash
# latency.sh: small-message round-trip latency, xroce beside UDP and TCP
# socket ping-pong (sockperf, TCP_NODELAY), on the same fabric in one run,
# loss-free and at 1% random loss (both directions).
#
#   xroce  `xroce perf client --mode lat`: WRITE_WITH_IMM of SIZE, the
#          server writes the same back on its completion; both ends
#          busy-poll their completion queues (as ib_write_lat does)
#   xroce-wait  the same with --wait: both ends sleep in xroce_wait_cq
#          until the completion's event, as the socket baselines sleep in
#          recv
#   UDP    sockperf ping-pong (lost messages are not retried: they are
#          reported as dropped and do not count in its percentiles)
#   TCP    sockperf ping-pong --tcp (Nagle off)
#   (sockperf's messages are at least 14 bytes: its own header; smaller
#   sizes are sent as 14 bytes on the sockets, as their floor.)
# Printed: round-trip min / median / p99 / p99.9 in microseconds.
#
# Usage: tests/bench/latency.sh [--sizes "8 64 4096"] [--losses "0 0.01"]
#                               [--iters N] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"
SIZES="8 64 4096"
LOSSES="0 0.01"
ITERS=20000
JSON=
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) SIZES=$2; shift 2 ;;
	--losses) LOSSES=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
command -v sockperf >/dev/null || xr_die "sockperf missing (bash tests/deps.sh)"
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091
. "$TMP/env"
A=$FAB_h0_NS
B=$FAB_h1_NS
SW=${FAB_h0_PORT_0%%:*}
BIP=$FAB_h1_IP4_0
nsx "$A" "$XROCE" attach --force eth0 >/dev/null
nsx "$B" "$XROCE" attach --force eth0 >/dev/null

set_loss() {
	"$XRFABRIC" set --netns "$SW" --port a0 "loss=$1" >/dev/null
	"$XRFABRIC" set --netns "$SW" --port b0 "loss=$1" >/dev/null
}

xroce_lat() { # SIZE [FLAG] -> "min p50 p99 p999"
	nsx "$B" timeout -k 2 300 "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	nsx "$A" timeout -k 2 290 "$XROCE" perf client -i eth0 "$BIP" --mode lat \
		-s "$1" -n "$ITERS" ${2:-} \
		--json 2>/dev/null | tail -1 >"$TMP/x.json" || true
	wait "$spid" || true
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["rtt_min_us"], d["rtt_p50_us"], d["rtt_p99_us"], d["rtt_p999_us"])' \
		"$TMP/x.json" 2>/dev/null || echo "nan nan nan nan"
}

sock_lat() { # SIZE udp|tcp -> "min p50 p99 p999 dropped"
	local flag=
	[ "$2" = tcp ] && flag=--tcp
	# nsenter (not nsx) so that $! is sockperf itself and the kill works
	nsenter --net="/var/run/netns/$B" sockperf server -i "$BIP" -p 11111 $flag \
		>/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	# sockperf runs for a time, not a count: about ITERS round trips at
	# ~50 us each, at least 2 s.
	nsx "$A" timeout -k 2 120 sockperf ping-pong -i "$BIP" -p 11111 $flag -m "$(( $1 < 14 ? 14 : $1 ))" \
		-t "$(( ITERS / 20000 > 2 ? ITERS / 20000 : 2 ))" --full-rtt \
		>"$TMP/s.out" 2>&1 || true
	kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
	python3 - "$TMP/s.out" <<'PY'
import re, sys
t = re.sub(r'\x1b\[[0-9;]*m', '', open(sys.argv[1]).read())
def g(pat):
    m = re.search(pat, t)
    return float(m.group(1)) if m else float('nan')
drop = re.search(r'# dropped messages = (\d+)', t)
print(g(r'<MIN> observation =\s*([\d.]+)'), g(r'percentile 50\.000 =\s*([\d.]+)'),
      g(r'percentile 99\.000 =\s*([\d.]+)'), g(r'percentile 99\.900 =\s*([\d.]+)'),
      drop.group(1) if drop else 'nan')
PY
}

: >"$TMP/rows"
for loss in $LOSSES; do
	set_loss "$loss"
	for size in $SIZES; do
		read -r a b c d < <(xroce_lat "$size") || true
		echo "$loss $size xroce $a $b $c $d 0" >>"$TMP/rows"
		read -r a b c d < <(xroce_lat "$size" --wait) || true
		echo "$loss $size xroce-wait $a $b $c $d 0" >>"$TMP/rows"
		read -r a b c d e < <(sock_lat "$size" udp) || true
		echo "$loss $size udp $a $b $c $d $e" >>"$TMP/rows"
		read -r a b c d e < <(sock_lat "$size" tcp) || true
		echo "$loss $size tcp $a $b $c $d $e" >>"$TMP/rows"
	done
done
set_loss 0
python3 - "$TMP/rows" "${JSON:-}" <<'PY'
import json, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("round-trip latency (us), one connection, xroce vs sockets")
print(f"{'loss':>5} {'size':>6} {'transport':>10} {'min':>8} {'median':>8} {'p99':>9} {'p99.9':>9} {'dropped':>8}")
out = []
for r in rows:
    loss, size, tr = float(r[0]), int(r[1]), r[2]
    v = [float(x) for x in r[3:7]]
    print(f"{loss*100:4.1f}% {size:6d} {tr:>10} {v[0]:8.1f} {v[1]:8.1f} {v[2]:9.1f} {v[3]:9.1f} {r[7]:>8}")
    out.append(dict(loss=loss, size=size, transport=tr, min_us=v[0], p50_us=v[1],
                    p99_us=v[2], p999_us=v[3], dropped=r[7]))
if sys.argv[2]:
    json.dump(out, open(sys.argv[2], 'w'), indent=1)
PY
