#!/usr/bin/env bash
# test_multiprog.sh: xroce attached by `xdp-loader load` in libxdp's
# multi-program mode, next to another XDP program on the same interface,
# still carries a verified transfer (root).
#
#   A (sender)                    B (receiver)
#   a0 -------------------------- b0     10.79.0.1 - 10.79.0.2
#   xroce attach                  xdp-loader: libxdp dispatcher running
#                                   vmtest/xdp_count.bpf.c (counts, passes)
#                                   and build/bpf/xroce.bpf.o
#
# Two orders, each checked against the counters of both programs:
#   counter first (prio 10, xroce 20): every frame xroce handled went
#     through the counter first:      count >= xroce rx_data + pass
#   xroce first (prio 10, counter 20): only what xroce passed on (ARP, the
#     control exchange) reaches the counter, none of the data; during the
#     transfer:                       0 < count <= xroce pass, count < rx_data
# Also: `xroce status` finds xroce inside the dispatcher (libxroce finds its
# maps through it), `xroce attach` configures it there, and `xdp-loader
# unload --all` leaves the interface without XDP.
#
# The host kernel of the build machine refuses the dispatcher (libxdp falls
# back to one program per interface): then this test says so and exits 0
# (SKIP), or 1 with XRVM_REQUIRE_MULTIPROG=1, which vmtest/guest.sh sets,
# since Debian's 6.1 kernel accepts it.
#
# Everything runs in a private mount namespace with its own bpffs, so
# libxdp's pins vanish with the test whatever happens.
# Usage: vmtest/test_multiprog.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${XRMP_PRIVATE_MNT:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "FAIL: test_multiprog needs root" >&2; exit 1; }
	XRMP_PRIVATE_MNT=1 exec unshare -m --propagation private bash "$0" "$@"
fi

# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

XROCE=$PWD/build/xroce
OBJ=$PWD/build/bpf/xroce.bpf.o
for f in "$XROCE" "$OBJ"; do
	[ -e "$f" ] || xr_die "$f missing: run make first"
done
for t in xdp-loader bpftool clang python3 ethtool; do
	command -v "$t" >/dev/null || xr_die "$t is not installed"
done
# Timeouts of the transfer; vmtest stretches them under emulation (TCG).
SCALE=${XRVM_SCALE:-1}
SIZE=${XRMP_SIZE:-4M}

mount -t bpf bpf /sys/fs/bpf || xr_die "cannot mount a private bpffs"

PFX=$(xr_prefix)
A=${PFX}a
B=${PFX}b
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_ns_add "$A"
xr_ns_add "$B"
xr_veth "$A" a0 "$B" b0
nsx "$A" ip addr add 10.79.0.1/24 dev a0
nsx "$B" ip addr add 10.79.0.2/24 dev b0
# Whatever xdp-loader left, even after a failure (the namespace going
# away would detach it too; this keeps the order of teardown plain).
xr_cleanup_push "nsx '$B' xdp-loader unload b0 --all >/dev/null 2>&1"

clang -O2 -g -target bpf -mcpu=v3 -Wall -Werror -I"/usr/include/$(gcc -dumpmachine)" \
	-c vmtest/xdp_count.bpf.c -o "$TMP/xdp_count.bpf.o"

CHECKS=0
pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }

# The program attached to b0 (what the kernel sees): "ID NAME".
attached() {
	nsx "$B" ip -j link show dev b0 | python3 -c '
import json, sys
x = json.load(sys.stdin)[0].get("xdp", {}).get("prog")
print("%d %s" % (x["id"], x["name"]) if x else "0 none")'
}

# Prio and id of NAME inside b0's dispatcher, from `xdp-loader status`
# (" =>  PRIO  NAME  ID  TAG  ACTIONS": component lines have no mode).
component() {
	nsx "$B" xdp-loader status b0 | awk -v n="$1" '
		$1 == "=>" && $3 == n { for (i = 4; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $2, $i; exit } }'
}

# Frames the counter saw, summed over CPUs.
count_frames() {
	local id map
	id=$(component xdp_count | cut -d' ' -f2)
	[ -n "$id" ] || xr_die "xdp_count not in b0's dispatcher"
	map=$(bpftool prog show id "$id" --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["map_ids"][0])')
	bpftool map dump id "$map" --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    e = e.get("formatted", e)
    key = e["key"] if isinstance(e["key"], int) else int(e["key"][0], 16)
    if key != 0:
        continue
    tot = 0
    for v in e["values"]:
        val = v["value"]
        tot += val if isinstance(val, int) else int.from_bytes(bytes(int(b, 16) for b in val), "little")
    print(tot)'
}

# xroce's own counter NAME on b0.
xr_stat() {
	nsx "$B" "$XROCE" status b0 --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["programs"][0]["stats"]["'"$1"'"])'
}

# One verified transfer A -> B.
transfer() {
	local rpid rc=0
	nsx "$B" timeout $((60 * SCALE)) "$XROCE" recv -i b0 -b 16M \
		--accept-timeout $((20000 * SCALE)) --idle $((10000 * SCALE)) \
		-t $((2000 * SCALE)) --json >"$TMP/recv.json" 2>"$TMP/recv.err" &
	rpid=$!
	# Under emulation the receiver takes a while to listen.
	for _ in $(seq 1 $((50 * SCALE))); do
		nsx "$B" ss -Hlun 'sport = :4794' | grep -q . && break
		sleep 0.1
	done
	nsx "$A" timeout $((60 * SCALE)) "$XROCE" send -i a0 10.79.0.2 -n "$SIZE" \
		-t $((2000 * SCALE)) --json >"$TMP/send.json" 2>"$TMP/send.err" || rc=$?
	wait "$rpid" || xr_die "recv failed: $(cat "$TMP/recv.err")"
	[ "$rc" -eq 0 ] || xr_die "send failed ($rc): $(cat "$TMP/send.err")"
	python3 - "$TMP/send.json" "$TMP/recv.json" <<'EOF' || xr_die "transfer not verified"
import json, sys
s, r = (json.load(open(p)) for p in sys.argv[1:3])
assert s["verified"] and r["verified"], (s, r)
assert s["bytes"] == r["bytes"] > 0, (s["bytes"], r["bytes"])
print(f"  ..   {s['bytes']} B verified, {s['goodput_gbps']:.2f} Gbit/s, "
      f"{s['tx_pkts']} packets, {s['retx_pkts']} retransmitted")
EOF
}

# load_both PRIO_COUNTER PRIO_XROCE
load_both() {
	local first=$1 second=$2 out
	nsx "$B" xdp-loader load -v -m native -P "$1" b0 "$TMP/xdp_count.bpf.o" >"$TMP/l1" 2>&1 ||
		xr_die "xdp-loader load xdp_count: $(cat "$TMP/l1")"
	name=$(attached | cut -d' ' -f2)
	if [ "$name" != xdp_dispatcher ]; then
		xr_log "xdp-loader did not use its dispatcher here (kernel $(uname -r)):"
		xr_log "$(grep -i 'dispatcher\|fall' "$TMP/l1" || cat "$TMP/l1")"
		if [ "${XRVM_REQUIRE_MULTIPROG:-0}" = 1 ]; then
			xr_die "libxdp multi-program mode is required here"
		fi
		echo "SKIP test_multiprog: this kernel refuses libxdp's dispatcher (run it in vmtest/run.sh)"
		exit 0
	fi
	nsx "$B" xdp-loader load -m native -P "$2" b0 "$OBJ" >"$TMP/l2" 2>&1 ||
		xr_die "xdp-loader load xroce next to xdp_count: $(cat "$TMP/l2")"
	[ "$(component xdp_count | cut -d' ' -f1)" = "$first" ] ||
		xr_die "xdp_count not at prio $first: $(nsx "$B" xdp-loader status b0)"
	[ "$(component xroce_xdp | cut -d' ' -f1)" = "$second" ] ||
		xr_die "xroce_xdp not at prio $second: $(nsx "$B" xdp-loader status b0)"
	pass "xdp-loader: xdp_count (prio $first) and xroce_xdp (prio $second) in one dispatcher"
	out=$(nsx "$B" "$XROCE" attach b0 2>&1) || xr_die "xroce attach b0 in the dispatcher: $out"
	nsx "$B" "$XROCE" status b0 --json >"$TMP/st.json" || xr_die "xroce status b0"
	python3 - "$TMP/st.json" "$(component xroce_xdp | cut -d' ' -f2)" \
		"$(attached | cut -d' ' -f1)" <<'EOF' || xr_die "xroce status does not see it in the dispatcher: $(nsx "$B" xdp-loader status b0) $(cat "$TMP/st.json")"
import json, sys
j = json.load(open(sys.argv[1]))
i = j["interfaces"][0]
assert i["in_dispatcher"] is True
assert i["prog_id"] == int(sys.argv[2]) and i["attached_prog_id"] == int(sys.argv[3]), i
assert j["programs"][0]["config"]["port_set"] is True
EOF
	pass "xroce status/attach find and configure xroce inside dispatcher $(attached | cut -d' ' -f1)"
}

unload_all() {
	nsx "$B" xdp-loader unload b0 --all >"$TMP/u" 2>&1 || xr_die "xdp-loader unload: $(cat "$TMP/u")"
	[ "$(attached)" = "0 none" ] || xr_die "b0 still has XDP after unload: $(attached)"
	pass "xdp-loader unload --all: b0 has no XDP program"
}

nsx "$A" "$XROCE" attach --force a0 >/dev/null

echo "== counter first, xroce second"
load_both 10 20
transfer
data=$(xr_stat rx_data)
passed=$(xr_stat pass)
frames=$(count_frames)
[ "$data" -gt 0 ] || xr_die "xroce placed no data"
[ "$frames" -ge $((data + passed)) ] ||
	xr_die "counter saw $frames frames, fewer than xroce handled ($data data + $passed passed)"
pass "transfer through both: counter saw $frames frames >= xroce's $data data + $passed passed"
unload_all

echo "== xroce first, counter second"
load_both 20 10
# The counter ran alone until xroce joined the dispatcher: compare what
# both saw during the transfer.  Read xroce before the counter at the start
# and after it at the end, so that every frame the counter saw in between
# was passed by xroce in between (both run in one softirq, back to back).
passed0=$(xr_stat pass)
frames0=$(count_frames)
transfer
frames=$(($(count_frames) - frames0))
data=$(xr_stat rx_data)
passed=$(($(xr_stat pass) - passed0))
[ "$data" -gt 0 ] || xr_die "xroce placed no data"
[ "$frames" -gt 0 ] || xr_die "nothing reached the counter behind xroce"
[ "$frames" -le "$passed" ] ||
	xr_die "counter saw $frames frames, more than the $passed xroce passed on"
[ "$frames" -lt "$data" ] || xr_die "data frames reached the counter ($frames >= $data)"
pass "xroce consumed the data ($data frames) and passed $passed on; the counter saw $frames of those"
unload_all

echo "PASS test_multiprog ($CHECKS checks)"
