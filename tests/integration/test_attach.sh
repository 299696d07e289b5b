#!/usr/bin/env bash
# test_attach.sh: `xroce attach / detach / status` on veth pairs in two
# private network namespaces (root).
#
#   N (host under test)          M (peer)
#   p0 ------------------------- q0     plane 0, 10.77.0.1 - 10.77.0.2
#   p1 ------------------------- q1     plane 1
#
# Checked against iproute2's view of the interfaces (ip -j link), not only
# against xroce's own output:
#   - attach native, status shows it; a second interface gets the same
#     program (shared maps); config is shared; counters count real packets;
#     connections/domains/MRs written into the maps are listed; detach.
#   - a program attached by `ip link ... xdp obj ... sec xdp.frags` and by
#     `xdp-loader load` is found; `xroce attach` configures it in place.
#   - another XDP program is not replaced without --force, is with it.
#   - generic mode; automatic fallback to generic where native is refused.
#   - bad interface names and options: one line on stderr, non-zero exit.
#   - every program seen is freed after its last detach.
# Usage: tests/integration/test_attach.sh   (XROCE=path overrides build/xroce)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
XROCE=${XROCE:-$PWD/build/xroce}
OBJ=$PWD/build/bpf/xroce.bpf.o
xr_need_exec "$XROCE"
[ -f "$OBJ" ] || xr_die "$OBJ missing: run make first"
xr_need_cmd xdp-loader python3 bpftool clang unshare

PFX=$(xr_prefix)
N=${PFX}n
M=${PFX}m
xr_tmpdir "$PFX"
xr_ns_add "$N"
xr_ns_add "$M"
xr_veth "$N" p0 "$M" q0
xr_veth "$N" p1 "$M" q1
nsx "$N" ip addr add 10.77.0.1/24 dev p0
nsx "$M" ip addr add 10.77.0.2/24 dev q0

SEEN_IDS=()

# ---- helpers -------------------------------------------------------------

# run NS cmd...: sets RC, OUT (stdout), ERR (stderr); never fails itself.
run() {
	local ns=$1
	shift
	set +e
	nsx "$ns" "$@" >"$TMP/out" 2>"$TMP/err"
	RC=$?
	set -e
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

xr() { run "$1" "$XROCE" "${@:2}"; }

# ok WHAT: the last command succeeded.
ok() {
	[ "$RC" -eq 0 ] || xr_die "$1: exit $RC; stdout: $OUT; stderr: $ERR"
	pass "$1"
}

# fails WHAT RC: the last command failed with exit status RC and said why
# in exactly one line on stderr.
fails() {
	[ "$RC" -eq "$2" ] || xr_die "$1: exit $RC, expected $2; stdout: $OUT; stderr: $ERR"
	if [ -z "$ERR" ] || [ "$(printf '%s\n' "$ERR" | wc -l)" -ne 1 ]; then
		xr_die "$1: expected one line on stderr, got: '$ERR'"
	fi
	pass "$1"
}

has() { check_has "$@"; }
eq() { check_eq "$@"; }

# link_xdp NS IF: "ID MODE" of IF's XDP program as iproute2 reports it
# (MODE native|generic|offload), or "0 none".
link_xdp() {
	nsx "$1" ip -j link show dev "$2" | xr_json '"0 none" if "prog" not in (j[0].get("xdp") or {}) else "%d %s" % (j[0]["xdp"]["prog"]["id"], {1: "native", 2: "generic", 3: "offload"}.get(j[0]["xdp"]["mode"], "mode%d" % j[0]["xdp"]["mode"]))'
}

# jq_py EXPR: evaluate a Python expression over the JSON in $OUT (as j).
jq_py() { xr_json "$1" <<<"$OUT"; }

# In NS's network namespace and a private mount namespace with its own
# bpffs: what iproute2 (tc/globals, ip and xdp links) and libxdp (its xdp/
# lock directory) create under /sys/fs/bpf disappears with it.
nsx_privfs() {
	local ns=$1
	shift
	# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
	unshare -m --propagation private sh -c \
		'mount -t bpf bpf /sys/fs/bpf && exec nsenter --net="/var/run/netns/$0" "$@"' \
		"$ns" "$@"
}

seen() { SEEN_IDS+=("$1"); }

# foreign NAME: build $TMP/NAME.bpf.c and attach it to M's q0 with ip link;
# its program id in FOREIGN_ID (and seen).
foreign() {
	clang -O2 -g -target bpf -I"/usr/include/$(gcc -dumpmachine)" \
		-c "$TMP/$1.bpf.c" -o "$TMP/$1.bpf.o"
	nsx_privfs "$M" ip link set dev q0 xdp obj "$TMP/$1.bpf.o" sec xdp 2>/dev/null
	read -r FOREIGN_ID _ < <(link_xdp "$M" q0)
	seen "$FOREIGN_ID"
}

# ---- usage errors and bad interfaces -------------------------------------

xr "$N" --version
ok "--version"
has "--version" "$OUT" '^xroce [0-9]+\.[0-9]+'
xr "$N" help
ok "help"
HELP=$OUT
for c in attach detach status; do
	has "help lists $c" "$HELP" "^  $c "
	xr "$N" "$c" --help
	ok "$c --help"
	has "$c --help" "$OUT" "^usage: xroce $c"
done
xr "$N"
fails "no command" 2
xr "$N" frobnicate
fails "unknown command" 2
xr "$N" attach --bogus p0
fails "unknown option" 2
xr "$N" attach p0 --mode turbo
fails "bad --mode" 2
xr "$N" attach p0 --port 0
fails "bad --port" 2
xr "$N" attach p0 --max-conns x
fails "bad --max-conns" 2
xr "$N" attach
fails "attach without interface" 2
for c in attach detach status; do
	xr "$N" "$c" nosuch0
	fails "$c on a missing interface" 1
	has "$c on a missing interface" "$ERR" "nosuch0: no such interface"
	xr "$N" "$c" "$(printf 'x%.0s' {1..40})"
	fails "$c on a too long name" 1
done
eq "nothing attached by failed commands" "$(link_xdp "$N" p0)" "0 none"

# ---- nothing attached ----------------------------------------------------

xr "$N" status
ok "status with nothing attached"
has "status with nothing attached" "$OUT" "not attached to any interface"
xr "$N" status --json
ok "status --json with nothing attached"
eq "empty json" "$(jq_py 'len(j["interfaces"]) + len(j["programs"])')" 0
xr "$N" status p0
fails "status of an interface without XDP" 1
xr "$N" detach p0
fails "detach of an interface without XDP" 1

# ---- native attach, second plane shares it -------------------------------

xr "$N" attach p0 --mode native
ok "attach p0 native"
read -r ID0 MODE0 < <(link_xdp "$N" p0)
seen "$ID0"
eq "p0 mode (ip link)" "$MODE0" native
[ "$ID0" -gt 0 ] || xr_die "p0 has no XDP program after attach"
has "attach prints id, mode, port" "$OUT" "^p0: attached xroce prog $ID0 in native mode, data port 4793/udp, flags verify_csum$"

xr "$N" status p0
ok "status p0"
has "status p0 line" "$OUT" "^p0: xroce prog $ID0, native mode, data port 4793/udp, flags verify_csum$"
has "status p0 counters" "$OUT" "^ +rx_data +[0-9]+ +drop_"
has "status p0 counts" "$OUT" "domains 0/64, memory regions 0/16384, connections 0/8192"

xr "$N" attach p1
ok "attach p1"
read -r ID1 MODE1 < <(link_xdp "$N" p1)
eq "p1 runs p0's program (shared maps)" "$ID1" "$ID0"
eq "p1 mode (auto on veth)" "$MODE1" native
has "attach p1 says shared" "$OUT" "shared with p0"

xr "$N" status --json
ok "status --json, two planes"
eq "one program" "$(jq_py 'len(j["programs"])')" 1
eq "its planes" "$(jq_py '" ".join(j["programs"][0]["interfaces"])')" "p0 p1"
eq "interfaces" "$(jq_py '" ".join("%s:%d:%s" % (i["name"], i["prog_id"], i["mode"]) for i in j["interfaces"])')" \
	"p0:$ID0:native p1:$ID0:native"
eq "port" "$(jq_py 'j["programs"][0]["config"]["udp_port"]')" 4793
eq "flags" "$(jq_py '",".join(j["programs"][0]["config"]["flags"])')" verify_csum
# Every enumerator of enum xr_stat but XR_STAT_MAX has a counter, by its
# name (abi.py's list, which tests/lib/xrtest/test_abi.py checks against
# the header).
eq "all counters named" "$(jq_py 'sorted(j["programs"][0]["stats"])')" \
	"$(PYTHONPATH=$XR_PY python3 -c 'import abi; print(sorted(abi.STATS))')"

# Attaching again: reported, nothing replaced.
xr "$N" attach p0
ok "attach p0 again"
has "attach p0 again" "$OUT" "already attached"
eq "p0 unchanged" "$(link_xdp "$N" p0)" "$ID0 native"
xr "$N" attach p0 --mode generic
fails "attach p0 again in another mode" 1
xr "$N" attach p1 --max-conns 16
fails "--max-conns on a running program" 1

# ---- counters count real packets; other traffic passes -------------------

# Not xroce traffic (another UDP port) must reach the stack untouched.
nsx "$N" python3 "$XR_PY/udp_once.py" 10.77.0.1 7777 "$TMP/bound" >"$TMP/rx" 2>&1 &
RXPID=$!
xr_cleanup_push "kill $RXPID; wait $RXPID"
for _ in $(seq 50); do [ -e "$TMP/bound" ] && break; sleep 0.1; done
run "$M" bash -c 'printf hello-not-xroce > /dev/udp/10.77.0.1/7777'
ok "send a datagram to another port"
wait "$RXPID" || xr_die "other traffic did not pass: $(cat "$TMP/rx")"
eq "other traffic passed untouched" "$(cat "$TMP/rx")" hello-not-xroce
for _ in 1 2 3; do
	run "$M" bash -c 'printf x > /dev/udp/10.77.0.1/4793'
done
for _ in $(seq 20); do
	xr "$N" status --json
	ok "status --json while counting"
	[ "$(jq_py 'j["programs"][0]["stats"]["drop_version"]')" -ge 3 ] && break
	sleep 0.1
done
eq "bad-version datagrams to the data port dropped and counted" \
	"$(jq_py 'j["programs"][0]["stats"]["drop_version"] >= 3')" True
eq "ARP and the other datagram passed and counted" "$(jq_py 'j["programs"][0]["stats"]["pass"] >= 2')" True

# ---- domains, MRs and connections in the maps are listed -----------------
# Entries written with bpftool in the layouts of include/contract/abi.h
# (tests/lib/xrtest/abi.py), as the library would; status must decode them.
MAPS=$(jq_py '" ".join("%s=%d" % kv for kv in j["programs"][0]["map_ids"].items())')
map_id() { tr ' ' '\n' <<<"$MAPS" | sed -n "s/^$1=//p"; }
# map_put MAP KEY_U32 PYTHON_BYTES_EXPR: one entry, value built by Python
# (with struct and abi at hand).
map_put() {
	local -a key val
	read -ra key < <(python3 -c "import struct; print(' '.join('%02x' % b for b in struct.pack('<I', $2)))")
	read -ra val < <(PYTHONPATH=$XR_PY python3 -c "import abi, struct; print(' '.join('%02x' % b for b in $3))")
	bpftool map update id "$(map_id "$1")" key hex "${key[@]}" value hex "${val[@]}"
}
vsize() { bpftool -j map show id "$(map_id "$1")" | xr_json 'j["bytes_value"]'; }
# Status only counts domains: zero padding keeps this independent of the
# layout of struct xr_domain.
map_put xr_domains 1 "struct.pack('<QI', 1 << 20, 4242).ljust($(vsize xr_domains), bytes(1))"
map_put xr_mrs 0x11 "abi.MR.pack(1, 2, 2, 0x11, 0x1000, 4096, 0)"
V4="bytes(10) + b'\\xff\\xff' + bytes([10, 77, 0, 2])"
V4B="bytes(10) + b'\\xff\\xff' + bytes([10, 78, 0, 2])"
map_put xr_conns 7 "abi.CONN.pack(1, 2, 1, 9, 1, 2, $V4 + $V4B + bytes(32), 2, 4, 49152, 64, 0, 0, 0, b'', b'')"
map_put xr_conns 3 "abi.CONN.pack(1, 2, 2, 4, 1, 2, bytes([0xfd]) + bytes(14) + bytes([5]) + bytes(48), 1, 6, 1000, 8, 0, 0, 0, b'', b'')"
xr "$N" status p1
ok "status with a connection"
has "domains and MRs counted" "$OUT" "domains 1/64, memory regions 1/16384, connections 2/8192"
has "IPv6 connection listed" "$OUT" "^ +3 +error +1 +2 +4 +1000\+8 +fd00::5$"
has "IPv4 connection listed" "$OUT" "^ +7 +rts +1 +2 +9 +49152\+64 +10\.77\.0\.2,10\.78\.0\.2$"
xr "$N" status --json
ok "status --json with connections"
eq "connections in json" "$(jq_py '" ".join("%d:%s:%s" % (c["id"], c["state"], ",".join(c["peer_addrs"])) for c in j["programs"][0]["connections"])')" \
	"3:error:fd00::5 7:rts:10.77.0.2,10.78.0.2"

# ---- shared config --------------------------------------------------------

xr "$N" attach p1 --port 5000 --no-csum
ok "reconfigure through p1"
xr "$N" status p0 --json
ok "status p0 after reconfiguring p1"
eq "port shared" "$(jq_py 'j["programs"][0]["config"]["udp_port"]')" 5000
eq "flags shared" "$(jq_py 'j["programs"][0]["config"]["flags_raw"]')" 0
xr "$N" attach p0
ok "attach without options keeps the config"
has "config kept" "$OUT" "data port 5000/udp, flags none$"

# ---- detach ---------------------------------------------------------------

xr "$N" detach p0
ok "detach p0"
eq "p0 free (ip link)" "$(link_xdp "$N" p0)" "0 none"
eq "p1 keeps it (ip link)" "$(link_xdp "$N" p1)" "$ID0 native"
has "detach says who keeps it" "$OUT" "still attached to: p1"
xr "$N" detach p1
ok "detach p1"
eq "p1 free (ip link)" "$(link_xdp "$N" p1)" "0 none"
xr "$N" status
ok "status after detaching all"
has "status after detaching all" "$OUT" "not attached to any interface"

# ---- attached by ip link --------------------------------------------------

nsx_privfs "$M" ip link set dev q0 xdp obj "$OBJ" sec xdp.frags 2>"$TMP/iplink.err" ||
	xr_die "ip link could not attach $OBJ: $(cat "$TMP/iplink.err")"
read -r IDIP MODEIP < <(link_xdp "$M" q0)
seen "$IDIP"
xr "$M" status q0 --json
ok "status finds the ip-link program"
eq "its id" "$(jq_py 'j["interfaces"][0]["prog_id"]')" "$IDIP"
eq "its mode" "$(jq_py 'j["interfaces"][0]["mode"]')" "$MODEIP"
eq "port unset" "$(jq_py 'j["programs"][0]["config"]["port_set"]')" False
xr "$M" status q0
ok "status text of the ip-link program"
has "says the port is unset" "$OUT" "^q0: xroce prog $IDIP, $MODEIP mode, data port unset"
xr "$M" attach q0
ok "attach configures the ip-link program"
has "attach says so" "$OUT" "already attached"
eq "not replaced" "$(link_xdp "$M" q0)" "$IDIP $MODEIP"
xr "$M" status q0 --json
ok "status after configuring"
eq "port set" "$(jq_py 'j["programs"][0]["config"]["udp_port"]')" 4793
eq "checksums verified" "$(jq_py 'j["programs"][0]["config"]["flags"]')" "['verify_csum']"

# ---- attached by xdp-loader ----------------------------------------------

nsx_privfs "$M" xdp-loader load -v q1 "$OBJ" >"$TMP/xdpl.out" 2>&1 ||
	xr_die "xdp-loader could not load $OBJ: $(cat "$TMP/xdpl.out")"
xr "$M" status q1 --json
ok "status finds the xdp-loader program"
IDXL=$(jq_py 'j["interfaces"][0]["prog_id"]')
DISP=$(jq_py 'j["interfaces"][0]["in_dispatcher"]')
seen "$IDXL"
[ "$IDXL" != "$IDIP" ] || xr_die "xdp-loader's program has ip link's id"
if [ "$DISP" = False ]; then
	eq "xdp-loader single-program mode: xroce itself attached" \
		"$(link_xdp "$M" q1 | cut -d' ' -f1)" "$IDXL"
else
	xr_log "note: xdp-loader used its dispatcher here"
fi
xr "$M" attach q1 --port 6000 --no-csum
ok "attach configures the xdp-loader program"
xr "$M" status --json
ok "status of both"
eq "two separate programs in M" "$(jq_py 'len(j["programs"])')" 2
eq "xdp-loader program configured" \
	"$(jq_py '[(p["config"]["udp_port"], p["config"]["flags_raw"]) for p in j["programs"] if p["prog_id"] == '"$IDXL"']')" \
	"[(6000, 0)]"
eq "ip-link program untouched" \
	"$(jq_py '[p["config"]["udp_port"] for p in j["programs"] if p["prog_id"] == '"$IDIP"']')" "[4793]"
if [ "$DISP" = False ]; then
	xr "$M" detach q1
	ok "detach the xdp-loader program"
else
	xr "$M" detach q1
	fails "detach refuses a dispatcher without --force" 1
	nsx_privfs "$M" xdp-loader unload q1 --all
fi
eq "q1 free" "$(link_xdp "$M" q1)" "0 none"
xr "$M" detach q0
ok "detach the ip-link program"

# ---- another XDP program: refused unless --force --------------------------

cat >"$TMP/other.bpf.c" <<'EOF'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp") int not_xroce(struct xdp_md *ctx) { return XDP_PASS; }
char LICENSE[] SEC("license") = "GPL";
EOF
foreign other
IDO=$FOREIGN_ID
xr "$M" attach q0
fails "attach over another program" 1
has "refusal names it and --force" "$ERR" "not_xroce.*--force"
eq "other program kept" "$(link_xdp "$M" q0 | cut -d' ' -f1)" "$IDO"
xr "$M" detach q0
fails "detach another program" 1
xr "$M" status q0
fails "status of another program" 1
xr "$M" attach q0 --force
ok "attach --force"
read -r IDF MODEF < <(link_xdp "$M" q0)
seen "$IDF"
[ "$IDF" != "$IDO" ] || xr_die "--force did not replace the program"
has "--force says what it replaced" "$OUT" "replaced XDP program 'not_xroce' \(prog $IDO\)"
eq "mode after --force" "$MODEF" native

# ---- xroce of another build: refused, replaced with --force ---------------
# A program named as xroce's whose xr_stats map has another layout than
# this build's (as after an upgrade that added counters): configuring it in
# place, or opening a device on it, would use the wrong offsets.

xr "$M" detach q0
ok "detach before the other build"
cat >"$TMP/oldxroce.bpf.c" <<'EOF'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} xr_stats SEC(".maps");
SEC("xdp") int xroce_xdp(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&xr_stats, &k);

	if (v)
		(*v)++;
	return XDP_PASS;
}
char LICENSE[] SEC("license") = "GPL";
EOF
foreign oldxroce
IDB=$FOREIGN_ID
xr "$M" attach q0
fails "attach over xroce of another build" 1
has "refusal says another build, which map, and --force" "$ERR" \
	"another build's \(map xr_stats: 4\+8 bytes x 3; this build's: 4\+8 x [0-9]+\); --force"
eq "the other build's program kept" "$(link_xdp "$M" q0 | cut -d' ' -f1)" "$IDB"
xr "$M" perf client -i q0 10.77.0.1 -d 1
has "the library refuses it too, saying how to replace it" "$ERR" \
	"another build's .*xroce attach --force q0. replaces it"
xr "$M" attach q0 --force
ok "attach --force over xroce of another build"
has "--force says it replaced another build's xroce" "$OUT" "replacing xroce prog $IDB of another build"
read -r IDF _ < <(link_xdp "$M" q0)
seen "$IDF"
[ "$IDF" != "$IDB" ] || xr_die "--force did not replace the other build's program"

# ---- generic mode; fallback to generic ------------------------------------

xr "$M" attach q1 --mode generic
ok "attach generic"
eq "q1 generic, shares q0's program (ip link)" "$(link_xdp "$M" q1)" "$IDF generic"
xr "$M" status q1
ok "status q1"
has "status says generic" "$OUT" "^q1: xroce prog $IDF, generic mode"
# lo has no native XDP: auto must fall back and say so.
xr "$M" attach lo
ok "attach lo (auto)"
has "fallback announced" "$ERR" "native XDP refused.*generic"
eq "lo generic (ip link)" "$(link_xdp "$M" lo)" "$IDF generic"
xr "$M" attach lo --separate
ok "attach lo again"
has "lo already attached" "$OUT" "already attached"
for i in lo q1 q0; do
	xr "$M" detach "$i"
	ok "detach $i"
	eq "$i free" "$(link_xdp "$M" "$i")" "0 none"
done

# ---- nothing left behind: every program seen is freed -------------------

for id in "${SEEN_IDS[@]}"; do
	for _ in $(seq 30); do
		bpftool prog show id "$id" >/dev/null 2>&1 || break
		sleep 0.1
	done
	bpftool prog show id "$id" >/dev/null 2>&1 &&
		xr_die "program $id still exists after its last detach"
	pass "program $id freed after its last detach"
done

echo "PASS test_attach ($CHECKS checks; xdp-loader: $(grep -o 'Falling back.*' "$TMP/xdpl.out" || echo 'no fallback message'))"
