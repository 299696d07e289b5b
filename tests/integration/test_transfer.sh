#!/usr/bin/env bash
# test_transfer.sh: reliable WRITE transfers end to end on two network
# namespaces joined through an emulated switch (tests/fabric/fabric.sh pair)
# whose ports drop packets at random, in both directions (data and ACKs).
#
#   - `xroce send` -> `xroce recv` of 1 B, 4 KiB, 1 MiB and 256 MiB at 0%,
#     1% and 10% loss: the receiver checks every byte against the pattern
#     and a hash of the stream; the sender's retransmissions must cover
#     every data packet the switch dropped, and not exceed what the drops
#     (data and ACKs) can explain.
#   - itest_wr: exactly one completion per work request on each side,
#     in order, with the right immediate data and length (0% and 10% loss).
#   - the receiver killed mid-transfer: the sender fails with an error
#     completion within its timeout, no hang; the sender killed: the
#     receiver gives up after its idle time.
#   --mtu M: the same over links of MTU M (9000: jumbo frames, which
#     arrive at XDP in fragments and leave through multi-buffer AF_XDP);
#     the sender must then use packets as large as the MTU allows.
# Usage: tests/integration/test_transfer.sh [--quick] [--mtu M]   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
ITEST=$PWD/build/tests/itest_wr
for f in "$XROCE" "$XRFABRIC" "$ITEST"; do
	[ -x "$f" ] || xr_die "$f missing: run make first"
done
QUICK=0
# Slow machines (vmtest under emulation) stretch the timing: XR_TIME_SCALE.
TS=${XR_TIME_SCALE:-1}
MTU=1500
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	--mtu) MTU=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done

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
nsx "$A" "$XROCE" attach --force eth0 >/dev/null
nsx "$B" "$XROCE" attach --force eth0 >/dev/null

CHECKS=0
pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }
fail() { xr_die "$*"; }


# wait_listen NS [PORT]: until a receiver in NS listens on its control port
wait_listen() {
	local i
	for i in $(seq 1 200); do
		nsx "$1" ss -Hlun "sport = :${2:-4794}" | grep -q . && return 0
		sleep 0.05
	done
	fail "nobody listens on port ${2:-4794} in $1"
}

# wait_conn NS: until NS's xroce program holds a connection in state rts
wait_conn() {
	local i
	for i in $(seq 1 200); do
		nsx "$1" "$XROCE" status eth0 --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if any(c["state"] == "rts" for p in j["programs"] for c in p["connections"]) else 1)' && return 0
		sleep 0.05
	done
	fail "no connection came up in $1"
}

set_loss() {
	"$XRFABRIC" set --netns "$SW" --port a0 "loss=$1" >/dev/null
	"$XRFABRIC" set --netns "$SW" --port b0 "loss=$1" >/dev/null
}

# switch drops so far: "data ack" (port a0 carries h0 -> h1, b0 the ACKs)
drops() {
	"$XRFABRIC" show --netns "$SW" --json |
		python3 -c 'import json,sys; d={p["port"]: p["counters"]["drop_loss"] for p in json.load(sys.stdin)["ports"]}; print(d["a0"], d["b0"])'
}

# transfer SIZE LOSS: one verified send/recv
transfer() {
	local size=$1 loss=$2 out rc d0 d1
	set_loss "$loss"
	d0=$(drops)
	nsx "$B" timeout 120 "$XROCE" recv -i eth0 -b 64M --accept-timeout 20000 \
		--idle 10000 --json >"$TMP/recv.json" 2>"$TMP/recv.err" &
	local rpid=$!
	wait_listen "$B"
	rc=0
	out=$(nsx "$A" timeout 120 "$XROCE" send -i eth0 "$BIP" -n "$size" --json \
		2>"$TMP/send.err") || rc=$?
	wait "$rpid" || fail "recv of $size at loss $loss failed: $(cat "$TMP/recv.err")"
	[ "$rc" -eq 0 ] || fail "send of $size at loss $loss failed: $(cat "$TMP/send.err")"
	d1=$(drops)
	python3 - "$out" "$(cat "$TMP/recv.json")" "$size" "$loss" "$d0" "$d1" "$MTU" <<'EOF' || fail "transfer $size at loss $loss: bad report"
import json, sys
s, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
mtu = int(sys.argv[7])
size = {'1': 1, '4k': 4096, '1M': 1 << 20, '256M': 256 << 20}[sys.argv[3]]
loss = float(sys.argv[4])
d0, d1 = [int(x) for x in sys.argv[5].split()], [int(x) for x in sys.argv[6].split()]
data_drops, ack_drops = d1[0] - d0[0], d1[1] - d0[1]
assert s['verified'] and r['verified'], 'not verified'
assert s['bytes'] == size and r['bytes'] == size, 'byte count'
# Port a0 carries everything h0 sends: the sender's data and its ACKs of
# the receiver's few credit messages.  Every data packet dropped there must
# have been resent, so retransmissions are at least those drops (less the
# handful of credit ACKs among them); a dropped ACK costs at most a
# timer-driven resend of what it covered.
assert s['retx_pkts'] + 16 >= data_drops, \
    f"{s['retx_pkts']} retransmissions for {data_drops} dropped data packets"
assert s['retx_pkts'] <= 2 * (data_drops + ack_drops) + 64, \
    f"{s['retx_pkts']} retransmissions for {data_drops}+{ack_drops} drops"
# Port a0 also carries the sender's ACKs of a few credit messages: more
# drops than those must have cost retransmissions.  (A 1 MiB transfer at
# MTU 9000 is 130 packets: at 1% loss a quarter of the runs lose none.)
if size >= (1 << 20) and data_drops > 3:
    assert s['retx_pkts'] > 0, 'no retransmission despite loss'
# Packets as large as the MTU allows (IPv4: 92 bytes of headers; at most
# 8192 bytes of payload a packet); each message (the sender's chunks, its
# credit WRITE_WITH_IMMs) may end in a shorter one: 1% slack.
seg = min(mtu - 92, 8192)
first = s['tx_pkts'] - s['retx_pkts']
assert first <= size / seg * 1.01 + 16, f"{first} packets for {size} B: segments below {seg} B"
print(f"{size} B at {loss*100:g}% loss: {s['goodput_gbps']:.2f} Gbit/s, "
      f"{s['tx_pkts']} packets, {s['retx_pkts']} retransmitted "
      f"({s['fast_retx']} SACK, {s['timeout_retx']} timer); switch dropped "
      f"{data_drops} data-direction, {ack_drops} ACK-direction")
EOF
	pass "transfer $size at $loss loss"
}

echo "== transfers (pattern checked byte by byte at the receiver)"
SIZES="1 4k 1M 256M"
LOSSES="0 0.01 0.1"
[ "$QUICK" -eq 1 ] && SIZES="1 4k 1M" && LOSSES="0 0.1"
for loss in $LOSSES; do
	for size in $SIZES; do
		transfer "$size" "$loss"
	done
done

echo "== one completion per work request"
for loss in 0 0.1; do
	set_loss "$loss"
	nsx "$B" timeout 60 "$ITEST" server eth0 >"$TMP/srv.out" 2>&1 &
	spid=$!
	wait_listen "$B" 4795
	nsx "$A" timeout 60 "$ITEST" client eth0 "$BIP" >"$TMP/cli.out" 2>&1 ||
		fail "itest_wr client at loss $loss: $(cat "$TMP/cli.out")"
	wait "$spid" || fail "itest_wr server at loss $loss: $(cat "$TMP/srv.out")"
	pass "completions at $loss loss: $(tail -1 "$TMP/cli.out") / $(tail -1 "$TMP/srv.out")"
done
set_loss 0

echo "== peer killed mid-transfer"
# nsenter execs the program, so $! is the program itself (nsx would leave a
# subshell in between, and the kill would miss).
nsenter --net="/var/run/netns/$B" "$XROCE" recv -i eth0 -b 64M \
	--accept-timeout 20000 >/dev/null 2>&1 &
rpid=$!
wait_listen "$B"
start=$(date +%s%N)
nsx "$A" timeout $((60 * TS)) "$XROCE" send -i eth0 "$BIP" -n 4G -t $((1000 * TS)) >"$TMP/send.out" 2>&1 &
spid=$!
wait_conn "$B"
kill -9 "$rpid"
wait "$rpid" 2>/dev/null || true
rc=0
wait "$spid" || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "sender did not fail cleanly (rc $rc): $(cat "$TMP/send.out")"
# Data outstanding: an error completion ("transport retry counter
# exceeded"); all acknowledged and waiting for a credit: xroce send's own
# timeout ("nothing from the receiver").
grep -q "retry\|failed\|nothing from the receiver" "$TMP/send.out" ||
	fail "no error reported: $(cat "$TMP/send.out")"
pass "receiver killed: sender failed in ${ms} ms: $(tail -1 "$TMP/send.out")"

nsx "$B" timeout $((60 * TS)) "$XROCE" recv -i eth0 -b 64M --accept-timeout 20000 --idle $((1000 * TS)) \
	>"$TMP/recv.out" 2>&1 &
rpid=$!
wait_listen "$B"
nsenter --net="/var/run/netns/$A" "$XROCE" send -i eth0 "$BIP" -n 4G \
	>/dev/null 2>&1 &
spid=$!
wait_conn "$B"
kill -9 "$spid"
wait "$spid" 2>/dev/null || true
rc=0
wait "$rpid" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "receiver did not give up cleanly (rc $rc)"
pass "sender killed: receiver gave up: $(grep -m1 "within" "$TMP/recv.out")"

echo "test_transfer: $CHECKS checks passed"
