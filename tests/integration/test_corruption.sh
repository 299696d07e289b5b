#!/usr/bin/env bash
# test_corruption.sh: corrupted packets are never placed.
#
# The switch flips bits in the UDP payload of a fraction of the packets
# without fixing the UDP checksum (tests/fabric: corrupt=P).  xroce's XDP
# program verifies the UDP checksum before it places anything (the data
# plane's end-to-end check, like RoCE's ICRC), drops and counts the packet,
# and the sender's SACK-driven recovery resends it.  Checked: the transfer
# completes and the receiver's pattern check passes byte for byte; the
# receiver's drop_csum counter equals (within the ACK direction's share)
# the number of data packets the switch corrupted; and with checksum
# verification switched off (xroce attach --no-csum) corruption does reach
# memory, which proves the check is what protects it.
# Usage: tests/integration/test_corruption.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair

run_transfer() { # SIZE: 0 if verified
	nsx "$B" timeout 120 "$XROCE" recv -i eth0 -b 64M --accept-timeout 20000 \
		--idle 10000 >"$TMP/recv.out" 2>&1 &
	local rpid=$! rc=0
	xr_wait_listen "$B"
	nsx "$A" timeout 120 "$XROCE" send -i eth0 "$BIP" -n "$1" \
		>"$TMP/send.out" 2>&1 || rc=1
	wait "$rpid" || rc=1
	return $rc
}

echo "== checksum verification on: corrupted packets dropped, data intact"
"$XRFABRIC" set --netns "$SW" --port a0 corrupt=0.05 >/dev/null
"$XRFABRIC" set --netns "$SW" --port b0 corrupt=0.05 >/dev/null
c0=$(xr_counter "$B" drop_csum)
a0=$(xr_counter "$A" drop_csum)
k0=$(xr_fab_counter corrupted a0)
run_transfer 64M || xr_die "transfer with corruption failed: $(cat "$TMP/send.out" "$TMP/recv.out")"
grep -q "integrity verified" "$TMP/recv.out" || xr_die "receiver did not verify: $(cat "$TMP/recv.out")"
dc=$(( $(xr_counter "$B" drop_csum) - c0 ))
ac=$(( $(xr_counter "$A" drop_csum) - a0 ))
kc=$(( $(xr_fab_counter corrupted a0) - k0 ))
echo "  switch corrupted $kc data packets; receiver dropped $dc on checksum; sender dropped $ac corrupted ACKs"
[ "$kc" -gt 100 ] || xr_die "the switch corrupted too few packets ($kc)"
# The switch also corrupts the few control messages (CONNECT, CLOSE) that
# cross it; the kernel, not xroce, drops those.
[ "$dc" -le "$kc" ] && [ "$dc" -ge $((kc - 6)) ] ||
	xr_die "receiver checksum drops ($dc) do not match corrupted packets ($kc)"
echo "  ok   every corrupted data packet was dropped before placement; data verified"

echo "== checksum verification off: the same corruption reaches memory"
nsx "$B" "$XROCE" attach eth0 --no-csum >/dev/null
if run_transfer 64M; then
	xr_die "corruption went unnoticed with verification off: the test cannot tell"
fi
grep -q "corrupted\|FAILED\|failed" "$TMP/recv.out" "$TMP/send.out" ||
	xr_die "expected a corruption report: $(cat "$TMP/recv.out")"
echo "  ok   without the check the receiver's pattern check catches corrupted bytes: $(grep -h -m1 "corrupt" "$TMP/recv.out" || true)"
nsx "$B" "$XROCE" attach eth0 --csum >/dev/null
echo "test_corruption: passed"
