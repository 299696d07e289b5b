#!/usr/bin/env bash
# test_planewatch.sh: the library watching its planes under a live
# connection (user/planewatch.c), on the pair fabric (veth, native XDP):
#
#   - the MTU of both hosts' interfaces lowered to 1280 while a connection
#     idles (`xroce send --pause-at`): the transfer goes on with 1188-byte
#     packets, verified; with the test-run engine a 1408-byte packet would
#     now be dropped by the kernel (larger than the MTU), so the old
#     packet size could not have finished it
#   - `xroce detach` of the receiver's interface under a live transfer:
#     the receiver fails within seconds saying its program was detached,
#     the sender within seconds with "the peer closed the connection"
# vmtest/twovm/test_twovm.sh runs the same on virtio-net.
# Usage: tests/integration/test_planewatch.sh   (root)
# shellcheck disable=SC2154 # FAB_* come from the topology's env file
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
XROCE=$PWD/build/xroce
[ -x "$XROCE" ] || xr_die "$XROCE missing: run make first"
TS=${XR_TIME_SCALE:-1}

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091
. "$TMP/env"
A=$FAB_h0_NS
B=$FAB_h1_NS
BIP=$FAB_h1_IP4_0
nsx "$A" "$XROCE" attach --force eth0 >/dev/null
nsx "$B" "$XROCE" attach --force eth0 >/dev/null

CHECKS=0
pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }

wait_listen() {
	for _ in $(seq 1 $((200 * TS))); do
		nsx "$B" ss -Hlun 'sport = :4794' | grep -q . && return 0
		sleep 0.05
	done
	xr_die "nobody listens in $B"
}

echo "== MTU lowered under an idle connection"
TOTAL=$((32 << 20))
nsx "$B" timeout $((120 * TS)) "$XROCE" recv -i eth0 -b $((TOTAL / 2)) \
	--accept-timeout $((20000 * TS)) --idle $((60000 * TS)) --json \
	>"$TMP/recv.json" 2>"$TMP/recv.err" &
rpid=$!
wait_listen
nsx "$A" timeout $((120 * TS)) "$XROCE" send -v -i eth0 "$BIP" -n $TOTAL \
	--pause-at $((TOTAL / 4)) --pause-ms $((3000 * TS)) --json \
	>"$TMP/send.json" 2>"$TMP/send.err" &
spid=$!
for _ in $(seq 1 $((1200 * TS))); do
	grep -q "idle for" "$TMP/send.err" && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.05
done
grep -q "idle for" "$TMP/send.err" ||
	xr_die "the sender did not pause: $(cat "$TMP/send.err"); receiver: $(cat "$TMP/recv.err")"
nsx "$A" ip link set eth0 mtu 1280
nsx "$B" ip link set eth0 mtu 1280
rc=0
wait "$spid" || rc=$?
wait "$rpid" || xr_die "recv failed: $(cat "$TMP/recv.err")"
[ "$rc" -eq 0 ] || xr_die "send failed ($rc): $(tail -3 "$TMP/send.err")"
grep -q "MTU 1500 -> 1280, 1188-byte packets" "$TMP/send.err" ||
	xr_die "the sender did not take the new MTU: $(grep -i mtu "$TMP/send.err")"
python3 - "$TMP/send.json" "$TMP/recv.json" $((TOTAL / 4)) $TOTAL <<'EOF' || xr_die "MTU transfer: $(cat "$TMP/send.json")"
import json, sys
s, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
part, total = int(sys.argv[3]), int(sys.argv[4])
assert s["verified"] and r["verified"] and s["bytes"] == total, (s, r)
first = s["tx_pkts"] - s["retx_pkts"]
# 1408 payload bytes a packet before the pause, 1188 after (IPv4, the
# 40-byte data header); each WRITE may end in a shorter packet.
want = -(-part // 1408) + -(-(total - part) // 1188)
assert want <= first <= want * 1.01 + 16, f"{first} first transmissions, expected {want}"
print(f"  ..   {first} packets sent once (expected {want}), engine {s['tx_engine']}")
EOF
nsx "$A" ip link set eth0 mtu 1500
nsx "$B" ip link set eth0 mtu 1500
pass "MTU 1500 -> 1280 under an idle connection: it went on with 1188-byte packets, verified"

echo "== xroce detach under a live connection"
# nsenter execs the program, so $! is the program itself.
nsenter --net="/var/run/netns/$B" "$XROCE" recv -i eth0 -b 64M \
	--accept-timeout $((20000 * TS)) --idle $((60000 * TS)) >"$TMP/r.out" 2>&1 &
rpid=$!
wait_listen
nsenter --net="/var/run/netns/$A" "$XROCE" send -i eth0 "$BIP" -n 4G \
	-t $((60000 * TS)) >"$TMP/s.out" 2>&1 &
spid=$!
for _ in $(seq 1 $((200 * TS))); do
	nsx "$B" "$XROCE" status eth0 --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if j["programs"][0]["stats"]["rx_data"] > 1000 else 1)' && break
	sleep 0.05
done
start=$(date +%s%N)
nsx "$B" "$XROCE" detach eth0 >/dev/null
# Both must end long before their 60 s timeouts.
for _ in $(seq 1 $((100 * TS))); do
	kill -0 "$rpid" 2>/dev/null || kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$rpid" 2>/dev/null && xr_die "the receiver still runs 10 s after the detach"
kill -0 "$spid" 2>/dev/null && xr_die "the sender still runs 10 s after the detach"
ms=$((($(date +%s%N) - start) / 1000000))
wait "$rpid" && xr_die "the receiver succeeded"
wait "$spid" && xr_die "the sender succeeded"
grep -q "xroce's XDP program was detached from eth0" "$TMP/r.out" ||
	xr_die "the receiver did not say why: $(cat "$TMP/r.out")"
grep -q "the peer closed the connection" "$TMP/s.out" ||
	xr_die "the sender did not say why: $(cat "$TMP/s.out")"
pass "detach under a live transfer: both sides failed within ${ms} ms, saying why"

echo "PASS test_planewatch ($CHECKS checks)"
