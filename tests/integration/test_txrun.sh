#!/usr/bin/env bash
# test_txrun.sh: the test-run transmit engine (XROCE_TX_ENGINE=test_run:
# frames built by the XDP program from descriptors, sent by XDP_TX out of
# BPF_PROG_TEST_RUN with live frames; include/contract/txring.h) end to end.
#
#   - the default engine on veth is this one (AF_XDP would be copy mode), so
#     the rest of the suite runs on it; test_transfer.sh --quick here runs
#     every process on AF_XDP instead (XROCE_TX_ENGINE=af_xdp), so both
#     engines carry verified transfers at 0 and 10% loss, completions and
#     peer deaths (and test_jumbo.sh's MTU 9000 is AF_XDP's: frames larger
#     than this engine builds);
#   - the engine is really what sent: on a pair fabric a perf run moves the
#     sender's tx_built counter by about as many frames as it sent, with no
#     refused trigger (drop_txr) and nothing left in xr_txq afterwards;
#   - misuse is refused with a message: XROCE_TX_ENGINE=bogus, and the engine
#     over a program attached in generic mode (its test runs would wait for
#     an RCU grace period each).
# Usage: tests/integration/test_txrun.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"
XROCE=$PWD/build/xroce

echo "== test_transfer.sh --quick on AF_XDP (the default here is the test-run engine)"
XROCE_TX_ENGINE=af_xdp bash tests/integration/test_transfer.sh --quick |
	sed 's/^/    /'

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
fail() { xr_die "$*"; }

# counter NS NAME: a counter of NS's xroce program
counter() {
	nsx "$1" "$XROCE" status eth0 --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["programs"][0]["stats"][sys.argv[1]])' "$2"
}

echo "== the engine is what sends"
b0=$(counter "$A" tx_built)
d0=$(counter "$A" drop_txr)
nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 --once >/dev/null 2>&1 &
spid=$!
sleep 0.3
out=$(nsx "$A" env -u XROCE_TX_ENGINE "$XROCE" perf client -i eth0 "$BIP" -d 1 --json | tail -1)
wait "$spid" || true
b1=$(counter "$A" tx_built)
d1=$(counter "$A" drop_txr)
python3 - "$out" "$b0" "$b1" "$d0" "$d1" <<'EOF' || fail "the sender's frames were not built by XDP"
import json, sys
r = json.loads(sys.argv[1])
built, refused = int(sys.argv[3]) - int(sys.argv[2]), int(sys.argv[5]) - int(sys.argv[4])
pkts = r['pkts']
assert r.get('tx_engine') == 'test_run', f"default engine on veth: {r.get('tx_engine')}"
assert pkts > 1000, f'{pkts} packets'
# Every data packet, plus probes: built by XDP, none refused.
assert pkts <= built <= pkts + 200, f'{built} frames built for {pkts} packets'
assert refused == 0, f'{refused} triggers refused'
print(f"{r['gbps']:.2f} Gbit/s, {pkts} packets, {built} frames built by XDP, 0 refused")
EOF
pass "perf client, default engine: test_run on veth, every packet built by XDP (tx_built), none refused"
left=$(nsx "$A" bpftool -j map show | python3 -c '
import json, subprocess, sys
for m in json.load(sys.stdin):
    if m.get("name") == "xr_txq":
        d = json.loads(subprocess.check_output(["bpftool", "-j", "map", "dump", "id", str(m["id"])]))
        print(len(d)); break
else:
    print("missing")')
[ "$left" = 0 ] || fail "xr_txq after the run: $left"
pass "no transmit ring left in xr_txq"

echo "== misuse"
rc=0
nsx "$A" env XROCE_TX_ENGINE=bogus "$XROCE" send -i eth0 "$BIP" -n 4k \
	>"$TMP/bogus.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "XROCE_TX_ENGINE=bogus" "$TMP/bogus.out" ||
	fail "XROCE_TX_ENGINE=bogus: rc $rc: $(cat "$TMP/bogus.out")"
pass "XROCE_TX_ENGINE=bogus refused: $(grep -m1 bogus "$TMP/bogus.out")"
nsx "$A" "$XROCE" detach eth0 >/dev/null
nsx "$A" "$XROCE" attach --mode generic eth0 >/dev/null
rc=0
nsx "$A" env XROCE_TX_ENGINE=test_run "$XROCE" send -i eth0 "$BIP" -n 4k \
	>"$TMP/generic.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "native mode" "$TMP/generic.out" ||
	fail "engine over generic mode: rc $rc: $(cat "$TMP/generic.out")"
pass "the engine over a generic-mode program refused: $(grep -m1 "native mode" "$TMP/generic.out")"

echo "test_txrun: $CHECKS checks passed"
