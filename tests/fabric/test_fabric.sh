#!/usr/bin/env bash
# test_fabric.sh: proves the fabric emulator works, on real traffic.
#
#   tests/fabric/test_fabric.sh [pair|planes|leafspine|incast|cli|cleanup ...]
#
# (default: all).  Needs root and build/xrfabric.  For each impairment it
# sends numbered UDP datagrams (tests/lib/xrtest/udpnum.py)
# and checks both the fabric's counters and what the receiver actually got:
#   pair       wire mode: baseline, random loss (measured vs configured),
#              Gilbert-Elliott (loss rate and burst length), blackhole by
#              UDP sport and dport, ECN CE marking by sport (IPv4 + IPv6) and
#              by the rate-based virtual queue, payload corruption (the
#              receiving kernel's UdpInCsumErrors), reordering via the slow
#              lane, TCP iperf3 through the wire (clean, 1% loss, reorder)
#   planes     two planes are independent (blackhole one, the other flows)
#   leafspine  ECMP spreads UDP source ports over both spines; TC egress
#              blackhole on one uplink kills exactly the flows hashed to it
#   incast     the tbf bottleneck limits TCP to its rate; TC egress loss,
#              ECN and corruption and XDP ingress loss in routed mode
#   cli        bad input gives a clean error, never a crash
#   cleanup    a failed or interrupted `fabric.sh up` leaves nothing behind
# Exits non-zero on any failure; leaves no namespace behind (checked).
# shellcheck disable=SC2154 # FAB_* come from the topology's env file
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../lib/common.sh disable=SC1091
source "$ROOT/tests/lib/common.sh"
FAB="$HERE/fabric.sh"
XRF=$XRFABRIC

xr_need_root
[ -x "$XRF" ] || make -C "$ROOT" -s build/xrfabric || xr_die "cannot build $XRF"
xr_need_cmd python3 iperf3 nstat ethtool

FAILS=0
ok() { printf 'ok    %s\n' "$*"; }
bad() { printf 'FAIL  %s\n' "$*"; FAILS=$((FAILS + 1)); }
# check 'awk condition' 'description': the condition may use floats.
check() {
	if awk "BEGIN { exit !($1) }"; then ok "$2"; else bad "$2   [$1]"; fi
}

NS_BEFORE=$(ip netns list | sort)
# Registered first, so it runs last: after everything else was removed.
leftover_check() {
	local now
	sleep 0.2
	now=$(ip netns list | sort)
	if [ "$now" != "$NS_BEFORE" ]; then
		printf 'FAIL  namespaces left behind:\n%s\n' "$(comm -13 <(echo "$NS_BEFORE") <(echo "$now"))"
		exit 1
	fi
}
xr_cleanup_push leftover_check
xr_tmpdir xrfab

# udp SRC_NS DST_NS DST SPORTS COUNT [TOS] [PPS] [SIZE]: one run; the
# receiver's JSON lands in $TMP/rx.json.  COUNT is per source port.  The
# processes run in the topology's namespaces: `fabric.sh down` kills them.
udp() {
	local src=$1 dst=$2 addr=$3 sports=$4 count=$5 tos=${6:-0} pps=${7:-20000} size=${8:-200}
	local bind=0.0.0.0 nports timeout pid
	[[ $addr == *:* ]] && bind=::
	nports=$(($(tr -cd , <<<"$sports" | wc -c) + 1))
	timeout=$((count * nports / pps + 4))
	rm -f "$TMP/ready" "$TMP/rx.json"
	nsx "$dst" python3 "$XR_PY/udpnum.py" recv --bind "$bind" --port 5555 --expect "$count" \
		--timeout "$timeout" --ready "$TMP/ready" >"$TMP/rx.json" &
	pid=$!
	while [ ! -e "$TMP/ready" ]; do
		kill -0 "$pid" 2>/dev/null || xr_die "udp receiver did not start"
		sleep 0.05
	done
	nsx "$src" python3 "$XR_PY/udpnum.py" send --dst "$addr" --port 5555 --sports "$sports" \
		--count "$count" --tos "$tos" --pps "$pps" --size "$size"
	wait "$pid" || xr_die "udp receiver failed"
}
# rx SPORT FIELD[.INDEX]: from the last run (0 when the port got nothing).
rx() { python3 "$XR_PY/udpnum_field.py" "$TMP/rx.json" "$1" "$2"; }
# ctr NS PORT ingress|egress EXPR: EXPR over one snapshot of the port's
# counters, e.g. `drop_loss` or `rx - fwd`.
ctr() {
	"$XRF" show --netns "$1" --port "$2" --json |
		xr_json 'eval(a[1], {}, next(p["counters"] for p in j["ports"] if p["dir"] == a[0]))' "$3" "$4"
}
csum_errors() { nsx "$1" nstat -asz UdpInCsumErrors | awk '/UdpInCsumErrors/ { print $2 }'; }

# iperf3_tcp SRC_NS DST_NS DST SECONDS: prints Mbit/s received.
iperf3_tcp() {
	local pid
	nsx "$2" iperf3 -s -1 -p 5299 >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		nsx "$2" ss -ltn | grep -q ':5299 ' && break
		sleep 0.05
	done
	nsx "$1" iperf3 -c "$3" -p 5299 -t "$4" -J |
		xr_json 'round(j["end"]["sum_received"]["bits_per_second"] / 1e6)' || true
	kill "$pid" 2>/dev/null || true # a failed client leaves it waiting
	wait "$pid" 2>/dev/null || true
}

# ---- pair: every impairment in wire mode ------------------------------------
test_pair() {
	echo "== pair (wire mode)"
	xr_fab_up pair
	local A=$FAB_h0_NS B=$FAB_h1_NS SW=$FAB_SWITCHES IP=$FAB_h1_IP4_0 n m c e
	local set="$XRF set --netns $SW --port a0" reset="$XRF reset --netns $SW"

	udp "$A" "$B" "$IP" 40001 5000
	check "$(rx 40001 count) == 5000 && $(rx 40001 bad_payload) == 0" \
		"baseline: 5000/5000 delivered intact"
	check "$(ctr "$SW" a0 ingress rx) >= 5000 && $(ctr "$SW" a0 ingress 'rx - fwd') == 0" \
		"baseline: counters rx == fwd"

	$reset; $set loss=0.1
	n=20000
	udp "$A" "$B" "$IP" 40001 $n
	m=$(rx 40001 missing); c=$(ctr "$SW" a0 ingress drop_loss)
	check "$m / $n >= 0.085 && $m / $n <= 0.115" "loss=0.1: measured $(awk "BEGIN{print $m/$n}") over $n packets"
	check "$c == $m" "loss=0.1: drop_loss counter $c == missing $m"

	$reset; $set clear ge=0.01,0.2,0,1
	udp "$A" "$B" "$IP" 40001 $n
	m=$(rx 40001 missing); c=$(rx 40001 loss_bursts)
	check "$m / $n >= 0.028 && $m / $n <= 0.07" \
		"ge=0.01,0.2,0,1: loss $(awk "BEGIN{print $m/$n}") (expected 0.0476)"
	check "$c > 0 && $m / $c >= 3" "ge: mean burst $(awk "BEGIN{print $m/($c+!$c)}") packets (expected 5; random loss gives ~1)"
	check "$(ctr "$SW" a0 ingress drop_ge) == $m" "ge: drop_ge counter == missing"

	$reset; $set clear blackhole=sport:40001
	udp "$A" "$B" "$IP" 40001,40002 2000
	check "$(rx 40001 count) == 0 && $(rx 40002 count) == 2000" \
		"blackhole=sport:40001: 40001 got $(rx 40001 count), 40002 got $(rx 40002 count)/2000"
	check "$(ctr "$SW" a0 ingress blackholed) == 2000" "blackhole: counter == 2000"
	$set blackhole=dport:5555
	udp "$A" "$B" "$IP" 40002 1000
	check "$(rx 40002 count) == 0" "blackhole=dport:5555: nothing arrives"
	$set blackhole=off
	udp "$A" "$B" "$IP" 40002 1000
	check "$(rx 40002 count) == 1000" "blackhole=off: all arrive again"

	$reset; $set clear ecn-sport=40003
	udp "$A" "$B" "$IP" 40003,40004 2000 2 # ECT(0)
	check "$(rx 40003 ecn.3) == 2000 && $(rx 40004 ecn.2) == 2000" \
		"ecn-sport=40003 (IPv4): 40003 arrives CE $(rx 40003 ecn.3)/2000, 40004 stays ECT(0)"
	udp "$A" "$B" "$IP" 40003 1000 0 # not ECT: never marked
	check "$(rx 40003 ecn.0) == 1000" "ecn-sport: not-ECT packets stay not-ECT"
	udp "$A" "$B" "$FAB_h1_IP6_0" 40003 1000 1 # ECT(1) over IPv6
	check "$(rx 40003 ecn.3) == 1000" "ecn-sport (IPv6, ECT(1)): $(rx 40003 ecn.3)/1000 CE"
	check "$(ctr "$SW" a0 ingress ce_marked) == 3000" "ecn: ce_marked counter == 3000"

	$reset; $set clear ecn=100,30000
	udp "$A" "$B" "$IP" 40005 2000 2 1000 1000 # 8 Mbit/s: queue stays empty
	check "$(rx 40005 ecn.3) == 0 && $(rx 40005 count) == 2000" "ecn=100,30000 at 8 Mbit/s: no marks"
	udp "$A" "$B" "$IP" 40005 10000 2 50000 1000 # 400 Mbit/s: queue builds
	c=$(rx 40005 ecn.3)
	check "$c > 9000 && $c < 10000" "ecn=100,30000 at 400 Mbit/s: $c/10000 CE (first ~30 KB unmarked)"

	$reset; $set clear corrupt=0.2
	e=$(csum_errors "$B")
	udp "$A" "$B" "$IP" 40006 10000 0 20000 300
	c=$(ctr "$SW" a0 ingress corrupted); e=$(($(csum_errors "$B") - e))
	check "$c > 1700 && $c < 2300" "corrupt=0.2: $c/10000 corrupted"
	check "$e == $c" "corrupt: receiver's UdpInCsumErrors +$e == corrupted $c"
	check "$(rx 40006 count) == 10000 - $c && $(rx 40006 bad_payload) == 0" \
		"corrupt: the other $(rx 40006 count) arrive, none damaged"

	$reset; $set clear reorder=0.2
	udp "$A" "$B" "$IP" 40007 20000 0 20000
	c=$(ctr "$SW" a0 ingress reordered)
	check "$(rx 40007 count) == 20000 && $(rx 40007 dups) == 0" "reorder=0.2: all 20000 delivered once"
	# How late the slow lane delivers depends on when the other CPU runs
	# it (a busy 2-core host): a quarter of them overtaken proves it.
	check "$(rx 40007 reordered) > 0.25 * $c" \
		"reorder=0.2: $(rx 40007 reordered) arrivals out of order of $c sent down the slow lane, up to $(rx 40007 late_by_max) late"

	$set clear
	m=$(iperf3_tcp "$A" "$B" "$IP" 3)
	check "$m > 300" "TCP iperf3 through the wire: $m Mbit/s"
	$set loss=0.01
	m=$(iperf3_tcp "$A" "$B" "$IP" 3)
	check "$m > 30" "TCP iperf3, loss=0.01 one way: $m Mbit/s"
	$set clear reorder=0.01
	m=$(iperf3_tcp "$A" "$B" "$IP" 3)
	check "$m > 30" "TCP iperf3, reorder=0.01: $m Mbit/s"
	xr_fab_down
}

# ---- planes: independent parallel planes ------------------------------------
test_planes() {
	echo "== planes 2"
	xr_fab_up planes 2
	"$XRF" set --netns "$FAB_SWITCHES" --port a0 blackhole=all
	udp "$FAB_h0_NS" "$FAB_h1_NS" "$FAB_h1_IP4_0" 40010 500
	check "$(rx 40010 count) == 0" "plane 0 blackholed: nothing arrives"
	udp "$FAB_h0_NS" "$FAB_h1_NS" "$FAB_h1_IP4_1" 40010 500
	check "$(rx 40010 count) == 500" "plane 1 unaffected: 500/500"
	xr_fab_down
}

# ---- leafspine: ECMP on the UDP source port ----------------------------------
test_leafspine() {
	echo "== leafspine 4"
	xr_fab_up leafspine 4
	local L0=$FAB_h0_PORT_0 sports s0 s1 got
	L0=${L0%%:*}
	sports=$(seq -s, 41000 41031)
	"$XRF" reset --netns "$L0"
	udp "$FAB_h0_NS" "$FAB_h1_NS" "$FAB_h1_IP4_0" "$sports" 50 0 5000
	s0=$(ctr "$L0" s0 egress fwd); s1=$(ctr "$L0" s1 egress fwd)
	check "$s0 >= 100 && $s1 >= 100 && $s0 + $s1 >= 1600" \
		"ECMP: 32 source ports spread over spines: $s0 / $s1 packets"
	# Blackhole uplink s0: exactly the ports hashed there die, all of them.
	"$XRF" set --netns "$L0" --port s0 --tc blackhole=all
	udp "$FAB_h0_NS" "$FAB_h1_NS" "$FAB_h1_IP4_0" "$sports" 50 0 5000
	got=$(xr_json '"%d %d" % (len(j), sum(1 for v in j.values() if v["count"] == 50))' <"$TMP/rx.json")
	check "${got% *} == ${got#* } && ${got% *} > 0 && ${got% *} < 32" \
		"TC egress blackhole on one uplink: ${got% *}/32 ports still flow, each complete"
	xr_fab_down
}

# ---- incast: the bottleneck and routed-mode impairments ---------------------
test_incast() {
	echo "== incast 2 --rate 200mbit"
	xr_fab_up incast 2 --rate 200mbit
	local SW=${FAB_BOTTLENECK%%:*} R=$FAB_r_NS IP=$FAB_r_IP4_0 m c e
	m=$(iperf3_tcp "$FAB_h0_NS" "$R" "$IP" 3)
	check "$m > 150 && $m <= 205" "tbf bottleneck 200mbit: TCP gets $m Mbit/s"

	"$XRF" set --netns "$SW" --port r --tc loss=0.1
	udp "$FAB_h0_NS" "$R" "$IP" 42000 10000
	m=$(rx 42000 missing); c=$(ctr "$SW" r egress drop_loss)
	check "$m / 10000 > 0.085 && $m / 10000 < 0.115 && $c == $m" \
		"TC egress loss=0.1: measured $(awk "BEGIN{print $m/10000}"), counter $c"

	"$XRF" set --netns "$SW" --port r --tc clear ecn=150,20000
	udp "$FAB_h0_NS" "$R" "$IP" 42001 5000 2 1000 1000
	check "$(rx 42001 ecn.3) == 0" "TC egress ecn=150,20000 at 8 Mbit/s: no marks"
	udp "$FAB_h0_NS" "$R" "$IP" 42001 10000 2 30000 1000 # 240 Mbit/s
	c=$(rx 42001 ecn.3)
	check "$c > 1000" "TC egress ecn at 240 Mbit/s into 200mbit: $c CE-marked of $(rx 42001 count) delivered (IPv4 checksum fixed)"

	"$XRF" set --netns "$SW" --port r --tc clear corrupt=0.1
	e=$(csum_errors "$R")
	udp "$FAB_h0_NS" "$R" "$IP" 42002 5000 0 10000 300
	c=$(ctr "$SW" r egress corrupted); e=$(($(csum_errors "$R") - e))
	check "$c > 350 && $c == $e && $(rx 42002 count) == 5000 - $c" \
		"TC egress corrupt=0.1: $c corrupted, UdpInCsumErrors +$e"

	"$XRF" set --netns "$SW" --port r --tc clear
	"$XRF" set --netns "$SW" --port h1 loss=0.2
	udp "$FAB_h1_NS" "$R" "$IP" 42003 10000
	m=$(rx 42003 missing)
	check "$m / 10000 > 0.18 && $m / 10000 < 0.22" "XDP ingress loss=0.2 (routed): measured $(awk "BEGIN{print $m/10000}")"
	xr_fab_down
}

# ---- cli: clean errors -----------------------------------------------------
test_cli() {
	echo "== cli errors"
	xr_fab_up pair
	local SW=$FAB_SWITCHES w out
	for w in loss=2 loss=-0.1 loss=abc ge=0.1,0.2 ecn=0,10 blackhole=sport:0 \
		blackhole=sport:70000 corrupt= nokey=1 ecn-sport=x; do
		if out=$("$XRF" set --netns "$SW" --port a0 "$w" 2>&1); then
			bad "set $w accepted"
		elif [[ $out != xrfabric:* ]]; then
			bad "set $w: no clean error ($out)"
		fi
	done
	ok "bad settings refused with a message"
	! "$XRF" show --netns "nonexistent$$" 2>/dev/null || bad "unknown netns accepted"
	! "$XRF" set --netns "$SW" --port nope0 loss=0 2>/dev/null || bad "unknown port accepted"
	! "$XRF" set --netns "$SW" --port a0 --tc loss=0 2>/dev/null || bad "unattached TC side accepted"
	! "$XRF" show --netns "../$SW" 2>/dev/null || bad "netns path accepted"
	! "$XRF" frobnicate --netns "$SW" 2>/dev/null || bad "unknown command accepted"
	! "$XRF" attach --netns "$SW" --port a0 --to a0 2>/dev/null || bad "--to itself accepted"
	"$XRF" show --netns "$SW" --json | python3 -m json.tool >/dev/null || bad "show --json is not JSON"
	"$XRF" set --netns "$SW" --port a0 loss=0.5 ge=0.1,0.2,0,1 blackhole=sport:7 \
		ecn=100,2000 ecn-sport=9 corrupt=0.25 reorder=0.125
	out=$("$XRF" show --netns "$SW" --port a0 | head -1)
	[[ $out == *"loss=0.5 ge=0.1,0.2,0,1 blackhole=sport:7 ecn=100,2000 ecn-sport=9 corrupt=0.25 reorder=0.125"* ]] ||
		bad "settings do not read back: $out"
	ok "errors are clean, settings read back"
	xr_fab_down
}

# ---- cleanup: failed and interrupted builds leave nothing --------------------
test_cleanup() {
	echo "== cleanup"
	local p before
	before=$(ip netns list | sort)
	p=$(xr_prefix)
	xr_cleanup_push "bash '$FAB' down $p"
	XRFABRIC=/bin/false bash "$FAB" up pair --prefix "$p" >/dev/null 2>&1 && bad "up with a failing attach succeeded"
	check "$(ip netns list | grep -c "^$p-" || true) == 0" "failed up removed its namespaces"
	timeout -s INT 0.7 bash "$FAB" up leafspine 8 --prefix "$p" >/dev/null 2>&1 || true
	sleep 0.3
	check "$(ip netns list | grep -c "^$p-" || true) == 0" "interrupted up removed its namespaces"
	[ "$(ip netns list | sort)" = "$before" ] || bad "namespace list changed"
}

TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(cli cleanup pair planes leafspine incast)
for t in "${TESTS[@]}"; do
	declare -F "test_$t" >/dev/null || xr_die "unknown test $t"
	"test_$t"
done
if [ "$FAILS" -gt 0 ]; then
	echo "test_fabric: $FAILS check(s) failed"
	exit 1
fi
echo "test_fabric: all checks passed"
