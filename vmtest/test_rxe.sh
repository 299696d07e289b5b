#!/usr/bin/env bash
# test_rxe.sh: the same perftest binaries on RoCE v2 and on xroce, through
# one Linux router whose ports carry netem loss, side by side (vmtest group
# `rxe`, on Debian's 6.1 kernel: rdma_rxe and sch_netem are modules there).
#
#   RoCE v2   the kernel's rdma_rxe under Debian's own libibverbs (and its
#             librxe provider), go-back-N retransmission after a timeout
#   xroce     ours: `xroce run` puts build/lib/libibverbs.so.1 first
#
#              root ns: rxe_A on $P-ra ----+          +---- $P-rb: rxe_B
#                                      ra  |  router  | rb
#                                          | (netem   |
#              ns $P-a: xroce on eth0 -- xa|  on each | xb -- eth0 ns $P-b
#                                          |  port)   |
#
# Every frame between the two ends of either stack crosses the router
# namespace and, on its way out of the router, a netem qdisc with the loss
# under test (both directions: data, ACKs, NAKs).  rxe's two ends sit in
# the root namespace (on 6.1, rxe endpoints inside network namespaces fail
# perftest's connection), so policy routing sends their traffic out of
# one veth and back in by the other (accept_local); perftest's own TCP
# exchange between them stays on loopback.  xroce's ends are namespaces,
# as in every other xroce test.
#
# Prints one table per tool: per loss, each stack's goodput (the tool's BW
# average, Gbit/s, over --iters messages of --size bytes) and its fraction
# of the same stack's loss-free figure.
# Passes when both stacks ran loss-free and xroce ran at every loss; a rxe
# run that fails at loss is reported in the table (it is the baseline's
# result, not this test's failure).
#
# Usage: vmtest/test_rxe.sh [--losses "0 0.1 1 5"] [--tools "ib_write_bw ib_read_bw ib_send_bw"]
#          [--iters N] [--size BYTES]                    (root, in the VM)
# Needs: build/xroce, build/lib, perftest, rdma (iproute2), the rdma_rxe,
# ib_uverbs and sch_netem modules loaded (vmtest/run.sh does it).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

LOSSES="0 0.1 1 5"
TOOLS="ib_write_bw ib_read_bw ib_send_bw"
ITERS=400
SIZE=65536
while [ $# -gt 0 ]; do
	case $1 in
	--losses) LOSSES=$2; shift 2 ;;
	--tools) TOOLS=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	*) xr_die "usage: $0 [--losses \"0 0.1 1 5\"] [--tools \"ib_write_bw\"] [--iters N] [--size B]" ;;
	esac
done
xr_need_root
xr_need_exec "$XROCE" "$XRFABRIC"
for c in rdma ib_write_bw tc; do xr_need_cmd "$c"; done
[ -d /sys/module/rdma_rxe ] || xr_die "no rdma_rxe module loaded (run this in vmtest: XRVM_TESTS=rxe make vmtest)"
if ! tc qdisc add dev lo root netem loss 0% 2>/dev/null; then
	xr_die "no netem qdisc (sch_netem)"
fi
tc qdisc del dev lo root
TS=${XR_TIME_SCALE:-1}
TCP_PORT=18515

P=$(xr_prefix)
xr_tmpdir "$P"
R=$P-rt A=$P-a B=$P-b
RA=${P}ra RB=${P}rb # root-namespace veths (interface names: <= 15 chars)
IP_RA=10.93.1.2 IP_RB=10.93.2.2 IP_XA=10.93.3.2 IP_XB=10.93.4.2

# ---- the router and the four links ----------------------------------------------
xr_ns_add "$R"
nsx "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
	net.ipv4.conf.default.rp_filter=0
link_root() { # link_root ROOT_IF ROUTER_PORT NET: a root-namespace end
	ip link add "$1" type veth peer name "$2" netns "$R" ||
		xr_die "cannot create veth $1 - $R/$2"
	xr_cleanup_push "ip link del $1 2>/dev/null"
	ip link set "$1" up
	nsx "$R" ip link set "$2" up
	ip addr add "$3.2/24" dev "$1"
	nsx "$R" ip addr add "$3.1/24" dev "$2"
	sysctl -qw "net.ipv4.conf.$1.accept_local=1" "net.ipv4.conf.$1.rp_filter=0"
}
link_ns() { # link_ns NS ROUTER_PORT NET: a namespace end (xroce's)
	xr_ns_add "$1"
	xr_veth "$1" eth0 "$R" "$2"
	nsx "$1" ip addr add "$3.2/24" dev eth0
	nsx "$1" ip route add default via "$3.1"
	nsx "$R" ip addr add "$3.1/24" dev "$2"
	# a veth passes the host's XDP_TX/AF_XDP frames on only to an XDP peer
	"$XRFABRIC" attach --netns "$R" --host-pass "$2" >/dev/null
}
link_root "$RA" ra 10.93.1
link_root "$RB" rb 10.93.2
link_ns "$A" xa 10.93.3
link_ns "$B" xb 10.93.4
sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.all.rp_filter=0

# Root namespace: what rxe sends from one of its addresses to the other
# leaves by its own veth towards the router (rules before the local table,
# for locally sent packets only: iif lo); what comes back in is local.
ip rule add pref 100 lookup local
ip rule del pref 0 lookup local
xr_cleanup_push "ip rule add pref 0 lookup local 2>/dev/null; ip rule del pref 100 lookup local 2>/dev/null"
ip rule add pref 10 iif lo from "$IP_RA" to "$IP_RB" lookup 193
ip rule add pref 10 iif lo from "$IP_RB" to "$IP_RA" lookup 194
xr_cleanup_push "ip rule del pref 10 lookup 193 2>/dev/null; ip rule del pref 10 lookup 194 2>/dev/null"
ip route add "$IP_RB" via 10.93.1.1 dev "$RA" table 193
ip route add "$IP_RA" via 10.93.2.1 dev "$RB" table 194

set_loss() { # percent, on all four router ports (both stacks, both ways)
	local p
	for p in ra rb xa xb; do
		nsx "$R" tc qdisc replace dev "$p" root netem loss "$1%" limit 10000 ||
			xr_die "netem on $R/$p"
	done
}
router_drops() { # packets netem dropped so far, all ports
	local p n=0 d
	for p in ra rb xa xb; do
		d=$(nsx "$R" tc -s qdisc show dev "$p" | awk '/dropped/ { sub(",", "", $7); print $7; exit }')
		n=$((n + ${d:-0}))
	done
	echo "$n"
}

# ---- the two stacks -----------------------------------------------------------------
rdma link add "${P}_a" type rxe netdev "$RA" || xr_die "rdma link add on $RA"
xr_cleanup_push "rdma link delete ${P}_a 2>/dev/null"
rdma link add "${P}_b" type rxe netdev "$RB" || xr_die "rdma link add on $RB"
xr_cleanup_push "rdma link delete ${P}_b 2>/dev/null"
rxe_gid() { # rxe_gid DEV IPv4: the index of its RoCE v2 GID ::ffff:IPv4
	local g d=/sys/class/infiniband/$1/ports/1 want i o
	IFS=. read -r -a o <<<"$2"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${o[@]}")
	for ((i = 0; i < 16; i++)); do
		g=$(cat "$d/gids/$i" 2>/dev/null) || continue
		[ "$g" = "$want" ] &&
			[ "$(cat "$d/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			{ echo "$i"; return 0; }
	done
	return 1
}
for _ in $(seq 1 50); do
	GID_A=$(rxe_gid "${P}_a" "$IP_RA") && GID_B=$(rxe_gid "${P}_b" "$IP_RB") && break
	sleep 0.1
done
if [ -z "${GID_A:-}" ] || [ -z "${GID_B:-}" ]; then
	xr_die "rxe devices have no RoCE v2 GID for their addresses"
fi
nsx "$A" "$XROCE" attach --force eth0 >/dev/null
nsx "$B" "$XROCE" attach --force eth0 >/dev/null
echo "rxe: ${P}_a on $RA ($IP_RA, GID $GID_A), ${P}_b on $RB ($IP_RB, GID $GID_B); xroce: $A/eth0 ($IP_XA), $B/eth0 ($IP_XB)"

wait_tcp() { # wait_tcp NS|- PORT
	local _
	for _ in $(seq 1 $((100 * TS))); do
		if [ "$1" = - ]; then ss -Hltn "sport = :$2" | grep -q . && return 0
		else nsx "$1" ss -Hltn "sport = :$2" | grep -q . && return 0; fi
		sleep 0.1
	done
	return 1
}

# one STACK TOOL: server and client of TOOL on STACK; RESULT is the
# client's result line, or "" when the run failed (its output in $TMP).
one() {
	local stack=$1 tool=$2 args=(-p "$TCP_PORT" -s "$SIZE" -n "$ITERS") spid rc=0 src=0
	local limit=$((120 * TS))
	RESULT=""
	if [ "$stack" = rxe ]; then
		timeout "$limit" "$tool" -d "${P}_b" -x "$GID_B" "${args[@]}" >"$TMP/srv.out" 2>&1 &
		spid=$!
		wait_tcp - "$TCP_PORT" || true
		timeout "$limit" "$tool" -d "${P}_a" -x "$GID_A" "${args[@]}" "$IP_RB" \
			>"$TMP/cli.out" 2>&1 || rc=$?
	else
		nsenter --net="/var/run/netns/$B" timeout "$limit" "$XROCE" run -- \
			"$tool" -d xroce_eth0 -x 0 "${args[@]}" >"$TMP/srv.out" 2>&1 &
		spid=$!
		wait_tcp "$B" "$TCP_PORT" || true
		nsx "$A" timeout "$limit" "$XROCE" run -- "$tool" -d xroce_eth0 -x 0 \
			"${args[@]}" "$IP_XB" >"$TMP/cli.out" 2>&1 || rc=$?
	fi
	wait "$spid" || src=$?
	if [ "$rc" -eq 0 ] && [ "$src" -eq 0 ]; then
		RESULT=$(awk '/#bytes/ { getline; print; exit }' "$TMP/cli.out")
		python3 "$XR_PY/perftest_line.py" check "$tool" "$RESULT" 2>/dev/null || RESULT=""
	fi
	[ -n "$RESULT" ] || {
		printf '   %s %s failed (rc %s):\n' "$stack" "$tool" "$rc"
		[ "$rc" -ne 124 ] || echo "     timed out after ${limit}s"
		echo "     exit status: client $rc, server $src"
		{ grep -vE "^ *[-*]+$|^ *$" "$TMP/cli.out" || true; } | tail -8 | sed 's/^/     client: /'
		{ grep -vE "^ *[-*]+$|^ *$" "$TMP/srv.out" || true; } | tail -8 | sed 's/^/     server: /'
	}
}

declare -A GBPS
FAILS=0
for tool in $TOOLS; do
	for loss in $LOSSES; do
		set_loss "$loss"
		for stack in rxe xroce; do
			d0=$(router_drops)
			one "$stack" "$tool"
			d1=$(router_drops)
			if [ -n "$RESULT" ]; then
				GBPS[$tool,$stack,$loss]=$(python3 "$XR_PY/perftest_line.py" bw "$RESULT")
				pass "$stack $tool at $loss% loss: ${GBPS[$tool,$stack,$loss]} Gbit/s (router dropped $((d1 - d0)))"
			else
				GBPS[$tool,$stack,$loss]=failed
				if [ "$stack" = xroce ] || [ "$loss" = 0 ]; then
					FAILS=$((FAILS + 1))
				fi
			fi
			if [ -n "$RESULT" ] && [ $((d1 - d0)) -lt 1 ] &&
				awk -v l="$loss" 'BEGIN { exit !(l >= 1) }'; then
				xr_die "$stack at $loss%: netem dropped nothing"
			fi
		done
	done
	set_loss 0
done

# ---- the table ----------------------------------------------------------------------
echo
echo "=== RoCE v2 (rdma_rxe) and xroce, the same perftest binaries, netem loss on the router ($(uname -r), -s $SIZE -n $ITERS)"
for tool in $TOOLS; do
	printf '%-12s %6s | %12s %8s | %12s %8s\n' "$tool" "loss %" "rxe Gbit/s" "of 0%" "xroce Gbit/s" "of 0%"
	for loss in $LOSSES; do
		row=""
		for stack in rxe xroce; do
			v=${GBPS[$tool,$stack,$loss]:-failed} z=${GBPS[$tool,$stack,0]:-failed}
			if [ "$v" = failed ] || [ "$z" = failed ]; then
				row+=$(printf ' %12s %8s |' "$v" "-")
			else
				row+=$(python3 -c "print(' %12.3f %8.2f |' % ($v, $v / $z if $z > 0 else 0))")
			fi
		done
		printf '%-12s %6s |%s\n' "" "$loss" "${row%|}"
	done
done
[ "$FAILS" -eq 0 ] || xr_die "$FAILS run(s) that must succeed failed (see above)"
xr_passed test_rxe
