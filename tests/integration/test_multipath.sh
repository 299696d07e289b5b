#!/usr/bin/env bash
# test_multipath.sh: multipath spraying, failure and congestion handling end
# to end, on emulated fabrics (tests/fabric/fabric.sh) impaired with
# build/xrfabric while `xroce send` moves verified data to `xroce recv`.
#
#   failover   planes 4, 8 paths, 256 MiB: 80 MiB into the transfer (~0.3-
#              0.6 s) one plane (chosen at random) is blackholed in both
#              directions (data and ACKs).
#              The transfer completes, verified, without an error
#              completion; the dead plane's paths show losses/timeouts and
#              are suspect/down (or stopped carrying data); the other three
#              planes carry the rest.  Prints (FIGURE lines) when the dead
#              paths left service, when goodput was back at 90% of the
#              three planes' rate (and the same measure at a moment without
#              a fault, the noise floor) and the retransmissions.
#   ecn        planes 2: every ECT packet of plane 1 is CE-marked (a 10
#              Mbit/s virtual queue, data direction) for a whole transfer:
#              plane 1's paths report the marks and carry clearly less
#              than plane 0's (printed shares).
#   leafspine  leafspine 2 with 2 spines, ECMP on the UDP 5-tuple: the 8
#              paths' entropy spreads them over both spines (leaf uplink
#              counters); spine s0 is blackholed mid-transfer: the transfer
#              completes, the hit paths get new source ports (or are
#              suspect/down) and data stops going to s0.  (If the random
#              ports all hash onto one spine, 1 in 128, it runs once more.)
#              Then, s0 still dead, 8 new connections (`xroce perf`, each
#              client a new control port): every one is set up, although a
#              fixed pair of control ports crosses s0 3 times in 4 (a
#              CONNECT that goes unanswered is resent from other source
#              ports); s0's ports must have blackholed control messages.
#   restore    planes 2: plane 1 blackholed, then the blackhole lifted
#              during a longer transfer: its paths go suspect/down, then
#              return to service and carry traffic again.
#
# The sender is followed by a telemetry sampler (the library's shared
# telemetry pages, the same ones `xroce stats` reads, every ~1 ms), which
# also fires the fault injections once given amounts of data were
# acknowledged, so they hit a transfer in full flow whatever the speed.
# Usage: tests/integration/test_multipath.sh [SCENARIO...]   (root)
#        XRMP_KEEP=DIR keeps the raw samples and JSON in DIR
# shellcheck disable=SC2154 # FAB_* come from the topology's env file
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
xr_need_exec build/xroce build/xrfabric
xr_need_cmd python3 bpftool nsenter ss

# Slow machines (vmtest under emulation) stretch the timing: XR_TIME_SCALE.
TS=${XR_TIME_SCALE:-1}

xr_tmpdir xrmp
# XRMP_KEEP=DIR keeps the raw results (telemetry samples, JSON) for study.
[ -z "${XRMP_KEEP:-}" ] || xr_cleanup_push "mkdir -p '$XRMP_KEEP' && cp -r '$TMP'/. '$XRMP_KEEP'/"

xr_private_bins
XRF=$XRFABRIC

# ---- fabric and transfers ----------------------------------------------
# attach NS N: xroce on eth0..eth(N-1); the second and later interfaces get
# the same program (the library needs that for multi-plane).
attach() {
	local i
	for ((i = 0; i < $2; i++)); do
		nsx "$1" "$XROCE" attach --force "eth$i" >/dev/null || fail "attach eth$i in $1"
	done
}

# xfer NAME SIZE IFACES DST [--at 'BYTES:CMD' ...]: one verified transfer
# A -> B, the sampler following the sender.  Results: $TMP/NAME.{send,recv,tl}
xfer() {
	local name=$1 size=$2 ifs=$3 dst=$4 rpid tpid rc=0 i
	shift 4
	rm -f "$TMP/ready"
	# shellcheck disable=SC2086 # IFACES is a list of -i options
	nsx "$B" timeout $((120 * TS)) "$XROCE" recv $ifs -b 64M --accept-timeout $((30000 * TS)) \
		--idle $((10000 * TS)) -t $((2000 * TS)) --json \
		>"$TMP/$name.recv" 2>"$TMP/$name.recv.err" &
	rpid=$!
	nsx "$A" timeout $((120 * TS)) python3 "$XR_PY/telem.py" --iface eth0 --out "$TMP/$name.tl" \
		--ready "$TMP/ready" --timeout $((100 * TS)) "$@" 2>"$TMP/$name.tl.err" &
	tpid=$!
	for ((i = 0; i < 200 * TS; i++)); do
		[ -e "$TMP/ready" ] && nsx "$B" ss -Hlun "sport = :4794" | grep -q . && break
		if ! kill -0 "$tpid" 2>/dev/null || ! kill -0 "$rpid" 2>/dev/null; then
			break
		fi
		sleep 0.05
	done
	[ -e "$TMP/ready" ] || fail "telemetry sampler did not start: $(cat "$TMP/$name.tl.err")"
	nsx "$B" ss -Hlun "sport = :4794" | grep -q . ||
		fail "the receiver does not listen: $(cat "$TMP/$name.recv.err")"
	# shellcheck disable=SC2086
	nsx "$A" timeout $((120 * TS)) "$XROCE" send $ifs "$dst" -n "$size" -t $((2000 * TS)) \
		--json >"$TMP/$name.send" 2>"$TMP/$name.send.err" || rc=$?
	wait "$rpid" || fail "$name: recv failed: $(cat "$TMP/$name.recv.err")"
	[ "$rc" -eq 0 ] || fail "$name: send failed (exit $rc): $(cat "$TMP/$name.send.err")"
	wait "$tpid" || fail "$name: sampler: $(cat "$TMP/$name.tl.err")"
}

show() { "$XRF" show --netns "$1" --json >"$2"; }

# both CMD1 CMD2: a shell command running the two at once (both directions
# of a link fail together), failing if either fails.
# shellcheck disable=SC2016 # expanded by the sh that runs it
both() { printf '%s & p=$!; %s; r=$?; wait $p && [ $r -eq 0 ]' "$1" "$2"; }

# ---- scenarios -----------------------------------------------------------
scenario_failover() {
	echo "== failover: planes 4, 8 paths, one plane blackholed mid-transfer"
	xr_fab_up planes 4
	A=$FAB_h0_NS B=$FAB_h1_NS
	local sw=$FAB_SWITCHES dead=$((RANDOM % 4))
	attach "$A" 4
	attach "$B" 4
	show "$sw" "$TMP/f.pre"
	xfer f 268435456 "-i eth0 -i eth1 -i eth2 -i eth3" "$FAB_h1_IP4_0" \
		--at "$((80 << 20)):$(both "$XRF set --netns $sw --port a$dead blackhole=all" \
			"$XRF set --netns $sw --port b$dead blackhole=all")"
	show "$sw" "$TMP/f.end"
	python3 "$XR_PY/mp_failover.py" "$TMP/f" 268435456 "$dead" 4 "$TMP/f.pre" "$TMP/f.end" ||
		fail "failover"
	xr_fab_down
}

scenario_ecn() {
	echo "== ecn: planes 2, every ECT packet of plane 1 CE-marked"
	xr_fab_up planes 2
	A=$FAB_h0_NS B=$FAB_h1_NS
	local sw=$FAB_SWITCHES
	attach "$A" 2
	attach "$B" 2
	"$XRF" set --netns "$sw" --port a1 ecn=10,1500 >/dev/null
	show "$sw" "$TMP/e.pre"
	xfer e 268435456 "-i eth0 -i eth1" "$FAB_h1_IP4_0"
	show "$sw" "$TMP/e.end"
	python3 "$XR_PY/mp_ecn.py" "$TMP/e" 268435456 1 2 "$TMP/e.pre" "$TMP/e.end" || fail "ecn"
	xr_fab_down
}

scenario_restore() {
	echo "== restore: planes 2, plane 1 blackholed, then lifted"
	xr_fab_up planes 2
	A=$FAB_h0_NS B=$FAB_h1_NS
	local sw=$FAB_SWITCHES
	attach "$A" 2
	attach "$B" 2
	show "$sw" "$TMP/r.pre"
	xfer r 536870912 "-i eth0 -i eth1" "$FAB_h1_IP4_0" \
		--at "$((80 << 20)):$(both "$XRF set --netns $sw --port a1 blackhole=all" \
			"$XRF set --netns $sw --port b1 blackhole=all")" \
		--at "$((200 << 20)):$(both "$XRF set --netns $sw --port a1 blackhole=off" \
			"$XRF set --netns $sw --port b1 blackhole=off")"
	show "$sw" "$TMP/r.end"
	python3 "$XR_PY/mp_restore.py" "$TMP/r" 536870912 1 2 "$TMP/r.pre" "$TMP/r.end" || fail "restore"
	xr_fab_down
}

scenario_leafspine() {
	echo "== leafspine: 2 hosts, 2 spines, spine s0 blackholed mid-transfer"
	xr_fab_up leafspine 2 --spines 2
	A=$FAB_h0_NS B=$FAB_h1_NS
	local l0=${FAB_h0_PORT_0%%:*} s0=$FAB_PREFIX-s0 try rc
	attach "$A" 1
	attach "$B" 1
	for try in 1 2; do
		show "$l0" "$TMP/l.base"
		show "$s0" "$TMP/l.spre"
		xfer l 268435456 "-i eth0" "$FAB_h1_IP4_0" \
			--at "$((80 << 20)):$XRF show --netns $l0 --json >$TMP/l.pre && { $(both \
				"$XRF set --netns $s0 --port l0 blackhole=all" \
				"$XRF set --netns $s0 --port l1 blackhole=all"); }" \
			--at "$((128 << 20)):$XRF show --netns $l0 --json >$TMP/l.mid"
		show "$l0" "$TMP/l.end"
		show "$s0" "$TMP/l.spost"
		rc=0
		python3 "$XR_PY/mp_leafspine.py" "$TMP/l" 268435456 "$TMP/l.base" "$TMP/l.pre" \
			"$TMP/l.mid" "$TMP/l.end" "$TMP/l.spre" "$TMP/l.spost" || rc=$?
		[ "$rc" -eq 0 ] && break
		# Exit 3: the paths' random ports all hashed onto one spine (1 in
		# 128): nothing to learn from that run; once more with new ports.
		if [ "$rc" -ne 3 ] || [ "$try" -ne 1 ]; then
			fail "leafspine"
		fi
		echo "  (all paths hashed onto one spine; once more with new ports)"
		"$XRF" set --netns "$s0" --port l0 blackhole=off >/dev/null
		"$XRF" set --netns "$s0" --port l1 blackhole=off >/dev/null
	done
	connects_across_dead_spine "$s0"
	xr_fab_down
}

# connects_across_dead_spine S0: with S0 blackholed both ways, new
# connections from A to B must all be set up.
connects_across_dead_spine() {
	local s0=$1 spid i h0 h1
	"$XRF" set --netns "$s0" --port l0 blackhole=all >/dev/null
	"$XRF" set --netns "$s0" --port l1 blackhole=all >/dev/null
	h0=$(spine_holed "$s0")
	nsx "$B" timeout $((120 * TS)) "$XROCE" perf server -i eth0 >"$TMP/cs.srv" 2>&1 &
	spid=$!
	xr_cleanup_push "kill $spid 2>/dev/null"
	xr_wait_listen "$B" 4796
	for ((i = 1; i <= 8; i++)); do
		nsx "$A" timeout $((30 * TS)) "$XROCE" perf client -i eth0 "$FAB_h1_IP4_0" \
			-s 4k -d 0.2 >"$TMP/cs.$i" 2>&1 ||
			fail "connect $i of 8 across the dead spine: $(tail -2 "$TMP/cs.$i")"
	done
	kill "$spid" 2>/dev/null || true
	h1=$(spine_holed "$s0")
	[ $((h1 - h0)) -gt 0 ] || fail "spine s0 blackholed nothing during the connects"
	pass "s0 dead: 8 of 8 new connections set up ($((h1 - h0)) packets blackholed at s0)"
}

# spine_holed S0: packets the spine's ports blackholed so far.
spine_holed() {
	"$XRF" show --netns "$1" --json | python3 -c '
import json, sys
print(sum(p["counters"]["blackholed"] for p in json.load(sys.stdin)["ports"]))'
}

SCEN=("$@")
[ ${#SCEN[@]} -gt 0 ] || SCEN=(failover ecn leafspine restore)
for s in "${SCEN[@]}"; do
	declare -F "scenario_$s" >/dev/null || xr_die "unknown scenario $s"
	"scenario_$s"
done
echo "test_multipath: ${#SCEN[@]} scenario(s) passed"
