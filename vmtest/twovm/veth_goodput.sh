#!/usr/bin/env bash
# veth_goodput.sh MODE SIZE LOSS...: goodput of one connection over veth
# inside this machine, xroce attached in MODE on both hosts, one verified
# WRITE of SIZE per loss rate (random, both ways, made by the fabric
# emulator); prints "veth MODE LOSS GBIT/S" per transfer.  The twovm tests
# run it in a VM so that veth's figures sit beside virtio-net's and
# e1000e's under the same emulated CPUs.
#
#   native   tests/fabric/fabric.sh pair: the switch is an XDP wire
#   generic  fabric.sh incast 1 (one sender): a routed switch, because a
#            redirected frame only reaches a veth with native XDP
# shellcheck disable=SC2154 # FAB_* come from the topology's env file
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

[ $# -ge 3 ] || xr_die "usage: veth_goodput.sh native|generic SIZE LOSS..."
MODE=$1 SIZE=$2
shift 2
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
TS=${XR_TIME_SCALE:-1}

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
case $MODE in
native)
	bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
	# shellcheck disable=SC1091
	. "$TMP/env"
	A=$FAB_h0_NS B=$FAB_h1_NS DST=$FAB_h1_IP4_0 SW=${FAB_h0_PORT_0%%:*}
	PORTS="a0 b0" ;;
generic)
	bash tests/fabric/fabric.sh up incast 1 --rate 10gbit --prefix "$PFX" \
		--env "$TMP/env" >/dev/null
	# shellcheck disable=SC1091
	. "$TMP/env"
	A=$FAB_h0_NS B=$FAB_r_NS DST=10.81.0.2 SW=${FAB_BOTTLENECK%%:*}
	PORTS="h0 r" ;;
*) xr_die "MODE is native or generic" ;;
esac
nsx "$A" "$XROCE" attach --force --mode "$MODE" eth0 >/dev/null
nsx "$B" "$XROCE" attach --force --mode "$MODE" eth0 >/dev/null

for loss in "$@"; do
	for p in $PORTS; do
		"$XRFABRIC" set --netns "$SW" --port "$p" "loss=$loss" >/dev/null
	done
	nsx "$B" timeout $((300 * TS)) "$XROCE" recv -i eth0 -b 64M \
		--accept-timeout $((20000 * TS)) --idle $((20000 * TS)) --json \
		>"$TMP/recv.json" 2>"$TMP/recv.err" &
	rpid=$!
	for _ in $(seq 1 $((100 * TS))); do
		nsx "$B" ss -Hlun 'sport = :4794' | grep -q . && break
		sleep 0.1
	done
	nsx "$A" timeout $((300 * TS)) "$XROCE" send -i eth0 "$DST" -n "$SIZE" \
		-t $((2000 * TS)) --json >"$TMP/send.json" 2>"$TMP/send.err" ||
		xr_die "send at loss $loss: $(cat "$TMP/send.err")"
	wait "$rpid" || xr_die "recv at loss $loss: $(cat "$TMP/recv.err")"
	python3 - "$TMP/send.json" "$TMP/recv.json" "$MODE" "$loss" <<'EOF'
import json, sys
s, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert s["verified"] and r["verified"] and s["bytes"] == r["bytes"], (s, r)
print(f"veth {sys.argv[3]} {sys.argv[4]} {s['goodput_gbps']}")
EOF
done
