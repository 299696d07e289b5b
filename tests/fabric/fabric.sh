#!/usr/bin/env bash
# fabric.sh: build and tear down emulated fabrics (namespaces + veths +
# bpf/fabric.bpf.c on the switch ports) for xroce's tests and benchmarks.
#
#   fabric.sh up TOPO [--prefix P] [--env FILE] [--mtu M]
#                     [--spines S] [--rate R] [--burst B] [--latency L]
#   fabric.sh down PREFIX
#
# TOPO:
#   pair          h0 - sw - h1, wire mode (the switch is a BPF patch cable)
#   planes N      N parallel wire planes h0 <-> h1 through one switch
#                 namespace, plane i on 10.77.i.0/24 and fd77:i::/64
#   leafspine K   K hosts (10.78.i.2/24) alternating over leaves l0/l1, S
#                 spines (default 2); kernel routing, ECMP over the spines
#                 hashed on the UDP/TCP 5-tuple (fib_multipath_hash_policy=1)
#   router        h0 (10.82.0.2) - r - h1 (10.82.1.2): a plain Linux router
#                 namespace (kernel forwarding; its ports carry only a pass
#                 program, which veth needs to take frames sent by XDP_TX),
#                 no impairments
#   incast N      senders h0..h(N-1) and receiver r (10.81.0.2) on one routed
#                 switch; the switch port r is the bottleneck: tbf rate R
#                 (default 1gbit), burst B (32kb), queue L (latency, 20ms)
#
# Every switch port gets fabric_xdp (ingress impairments; wire ports also the
# slow lane), routed switch ports also fabric_tc (egress impairments, before
# the qdisc).  Host interfaces get fabric_pass so redirected frames arrive
# (xroce replaces it with its own program).  Impair with build/xrfabric.
#
# `up` prints a bash-sourceable description (and writes it to --env FILE):
#   FAB_PREFIX FAB_TOPO FAB_XRFABRIC FAB_HOSTS ("h0 h1 ...") FAB_SWITCHES
#   FAB_SW_PORTS ("ns:port ...")  and per host H and interface index I:
#   FAB_H_NS FAB_H_NIF FAB_H_IF_I FAB_H_IP4_I FAB_H_IP6_I FAB_H_MAC_I
#   FAB_H_PORT_I ("switchns:port" it plugs into); incast adds
#   FAB_BOTTLENECK ("ns:port") and FAB_RATE; leafspine adds FAB_UPLINKS.
# Namespaces are named PREFIX-NAME; `down PREFIX` deletes them all (and
# kills whatever runs in them).  A failed `up` removes what it created.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../lib/netns.sh disable=SC1091
source "$ROOT/tests/lib/netns.sh"
XRFABRIC=${XRFABRIC:-$ROOT/build/xrfabric}

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&"$((${1:-1} ? 2 : 1))"
	exit "${1:-1}"
}

# int_in VALUE LO HI: VALUE is a decimal integer in [LO, HI].
int_in() { [[ $1 =~ ^[0-9]{1,6}$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

ENV_LINES=()
env_set() { ENV_LINES+=("$1=$(printf '%q' "$2")"); }

# Host records: host_add NAME NS; host_link NAME IF IP4 IP6 SWNS SWPORT.
HOSTS=()
SWITCHES=()
SW_PORTS=()
declare -A NIF
host_add() {
	HOSTS+=("$1")
	NIF[$1]=0
	env_set "FAB_$1_NS" "$2"
}
host_link() {
	local h=$1 ns=$2 ifn=$3 ip4=$4 ip6=$5 swns=$6 swport=$7 i=${NIF[$1]}
	nsx "$ns" ip addr add "$ip4" dev "$ifn"
	[ -z "$ip6" ] || nsx "$ns" ip -6 addr add "$ip6" dev "$ifn" nodad
	env_set "FAB_${h}_IF_$i" "$ifn"
	env_set "FAB_${h}_IP4_$i" "${ip4%/*}"
	env_set "FAB_${h}_IP6_$i" "${ip6%/*}"
	env_set "FAB_${h}_MAC_$i" "$(nsx "$ns" ip -br link show "$ifn" | awk '{print $3}')"
	env_set "FAB_${h}_PORT_$i" "$swns:$swport"
	NIF[$h]=$((i + 1))
	"$XRFABRIC" attach --netns "$ns" --host-pass "$ifn"
}

switch_add() {
	local ns=$1 routed=$2
	xr_ns_add "$ns"
	SWITCHES+=("$ns")
	# No IPv6 chatter (RS/MLD) from the switch itself.
	nsx "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	if [ "$routed" = 1 ]; then
		nsx "$ns" sysctl -qw net.ipv4.ip_forward=1 \
			net.ipv4.fib_multipath_hash_policy=1 \
			net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	fi
}

# A routed switch port: XDP ingress (also needed so hosts' XDP_TX frames
# arrive) and TC egress.  GRO off, so TC egress impairs packets, not TCP
# aggregates of up to 64 KB.
routed_port() {
	nsx "$1" ethtool -K "$2" gro off >/dev/null
	"$XRFABRIC" attach --netns "$1" --port "$2"
	"$XRFABRIC" attach --netns "$1" --port "$2" --tc
	SW_PORTS+=("$1:$2")
}

host_ns_add() {
	xr_ns_add "$1"
	# The host answers ARP only for its own interface's address.
	nsx "$1" sysctl -qw net.ipv4.conf.all.arp_ignore=1
}

set_mtu() {
	[ -n "$MTU" ] || return 0
	nsx "$1" ip link set "$2" mtu "$MTU"
}

topo_planes() {
	local n=$1 sw=$P-sw a=$P-h0 b=$P-h1 i
	int_in "$n" 1 64 || xr_die "planes: N in 1..64"
	switch_add "$sw" 0
	host_ns_add "$a"
	host_ns_add "$b"
	host_add h0 "$a"
	host_add h1 "$b"
	for ((i = 0; i < n; i++)); do
		xr_veth "$a" "eth$i" "$sw" "a$i"
		xr_veth "$b" "eth$i" "$sw" "b$i"
		set_mtu "$a" "eth$i"; set_mtu "$sw" "a$i"
		set_mtu "$b" "eth$i"; set_mtu "$sw" "b$i"
		"$XRFABRIC" attach --netns "$sw" --port "a$i" --to "b$i"
		"$XRFABRIC" attach --netns "$sw" --port "b$i" --to "a$i"
		SW_PORTS+=("$sw:a$i" "$sw:b$i")
		host_link h0 "$a" "eth$i" "10.77.$i.1/24" "fd77:$i::1/64" "$sw" "a$i"
		host_link h1 "$b" "eth$i" "10.77.$i.2/24" "fd77:$i::2/64" "$sw" "b$i"
	done
}

topo_leafspine() {
	local k=$1 i j l net nh uplinks=()
	int_in "$k" 2 200 || xr_die "leafspine: K in 2..200"
	int_in "$SPINES" 1 16 || xr_die "leafspine: --spines in 1..16"
	for l in 0 1; do switch_add "$P-l$l" 1; done
	for ((j = 0; j < SPINES; j++)); do switch_add "$P-s$j" 1; done
	for l in 0 1; do
		nh=()
		for ((j = 0; j < SPINES; j++)); do
			net=10.79.$((l * 16 + j))
			xr_veth "$P-l$l" "s$j" "$P-s$j" "l$l"
			set_mtu "$P-l$l" "s$j"; set_mtu "$P-s$j" "l$l"
			nsx "$P-l$l" ip addr add "$net.1/24" dev "s$j"
			nsx "$P-s$j" ip addr add "$net.2/24" dev "l$l"
			routed_port "$P-l$l" "s$j"
			routed_port "$P-s$j" "l$l"
			uplinks+=("$P-l$l:s$j")
			nh+=(nexthop via "$net.2" dev "s$j")
		done
		nsx "$P-l$l" ip route add default "${nh[@]}"
	done
	for ((i = 0; i < k; i++)); do
		l=$((i % 2))
		host_ns_add "$P-h$i"
		host_add "h$i" "$P-h$i"
		xr_veth "$P-h$i" eth0 "$P-l$l" "h$i"
		set_mtu "$P-h$i" eth0; set_mtu "$P-l$l" "h$i"
		nsx "$P-l$l" ip addr add "10.78.$i.1/24" dev "h$i"
		routed_port "$P-l$l" "h$i"
		host_link "h$i" "$P-h$i" eth0 "10.78.$i.2/24" "" "$P-l$l" "h$i"
		nsx "$P-h$i" ip route add default via "10.78.$i.1"
		for ((j = 0; j < SPINES; j++)); do
			nsx "$P-s$j" ip route add "10.78.$i.0/24" via "10.79.$((l * 16 + j)).1" dev "l$l"
		done
	done
	env_set FAB_UPLINKS "${uplinks[*]}"
}

topo_router() {
	local r=$P-r i
	switch_add "$r" 1
	for i in 0 1; do
		host_ns_add "$P-h$i"
		host_add "h$i" "$P-h$i"
		xr_veth "$P-h$i" eth0 "$r" "h$i"
		set_mtu "$P-h$i" eth0; set_mtu "$r" "h$i"
		nsx "$r" ip addr add "10.82.$i.1/24" dev "h$i"
		"$XRFABRIC" attach --netns "$r" --host-pass "h$i"
		host_link "h$i" "$P-h$i" eth0 "10.82.$i.2/24" "" "$r" "h$i"
		nsx "$P-h$i" ip route add default via "10.82.$i.1"
	done
}

topo_incast() {
	local n=$1 sw=$P-sw i
	int_in "$n" 1 200 || xr_die "incast: N in 1..200"
	switch_add "$sw" 1
	for ((i = 0; i < n; i++)); do
		host_ns_add "$P-h$i"
		host_add "h$i" "$P-h$i"
		xr_veth "$P-h$i" eth0 "$sw" "h$i"
		set_mtu "$P-h$i" eth0; set_mtu "$sw" "h$i"
		nsx "$sw" ip addr add "10.80.$i.1/24" dev "h$i"
		routed_port "$sw" "h$i"
		host_link "h$i" "$P-h$i" eth0 "10.80.$i.2/24" "" "$sw" "h$i"
		nsx "$P-h$i" ip route add default via "10.80.$i.1"
	done
	host_ns_add "$P-r"
	host_add r "$P-r"
	xr_veth "$P-r" eth0 "$sw" r
	set_mtu "$P-r" eth0; set_mtu "$sw" r
	nsx "$sw" ip addr add 10.81.0.1/24 dev r
	# The bottleneck: a real queue that builds and delays.
	nsx "$sw" tc qdisc add dev r root tbf rate "$RATE" burst "$BURST" latency "$LATENCY" ||
		xr_die "tbf rate $RATE burst $BURST latency $LATENCY refused"
	routed_port "$sw" r
	host_link r "$P-r" eth0 10.81.0.2/24 "" "$sw" r
	nsx "$P-r" ip route add default via 10.81.0.1
	env_set FAB_BOTTLENECK "$sw:r"
	env_set FAB_RATE "$RATE"
}

cmd_up() {
	local topo=${1:-} arg=${2:-} envfile="" h
	[ -n "$topo" ] || usage
	shift
	case $topo in
	pair) arg=1 ;;
	router) ;;
	planes | leafspine | incast) [ -n "$arg" ] || usage; shift ;;
	*) usage ;;
	esac
	P="" MTU="" SPINES=2 RATE=1gbit BURST=32kb LATENCY=20ms
	while [ $# -gt 0 ]; do
		[ $# -ge 2 ] || usage
		case $1 in
		--prefix) P=$2 ;;
		--env) envfile=$2 ;;
		--mtu) MTU=$2 ;;
		--spines) SPINES=$2 ;;
		--rate) RATE=$2 ;;
		--burst) BURST=$2 ;;
		--latency) LATENCY=$2 ;;
		*) usage ;;
		esac
		shift 2
	done
	[ "$(id -u)" = 0 ] || xr_die "fabric.sh needs root"
	[ -x "$XRFABRIC" ] || xr_die "$XRFABRIC missing: run make build/xrfabric"
	[ -n "$P" ] || P=$(xr_prefix)
	[[ $P =~ ^[A-Za-z0-9_]{1,20}$ ]] || xr_die "bad prefix '$P'"
	! ip netns list | grep -q "^$P-" || xr_die "namespaces $P-* exist already"
	xr_bpffs
	env_set FAB_PREFIX "$P"
	env_set FAB_TOPO "$topo"
	env_set FAB_XRFABRIC "$XRFABRIC"
	case $topo in
	pair | planes) topo_planes "$arg" ;;
	leafspine) topo_leafspine "$arg" ;;
	router) topo_router ;;
	incast) topo_incast "$arg" ;;
	esac
	env_set FAB_HOSTS "${HOSTS[*]}"
	env_set FAB_SWITCHES "${SWITCHES[*]}"
	env_set FAB_SW_PORTS "${SW_PORTS[*]}"
	for h in "${HOSTS[@]}"; do env_set "FAB_${h}_NIF" "${NIF[$h]}"; done
	if [ -n "$envfile" ]; then
		printf '%s\n' "${ENV_LINES[@]}" >"$envfile" || xr_die "cannot write $envfile"
	fi
	printf '%s\n' "${ENV_LINES[@]}"
	xr_cleanup_disarm # success: the topology stays until `down`
}

cmd_down() {
	local p=${1:-} ns
	[[ $p =~ ^[A-Za-z0-9_]{1,20}$ ]] || xr_die "down: bad prefix '$p'"
	for ns in $(ip netns list | awk '{print $1}' | grep "^$p-" || true); do
		xr_ns_del "$ns" || xr_log "could not delete $ns"
	done
	! ip netns list | grep -q "^$p-" || xr_die "namespaces $p-* remain"
}

case ${1:-} in
up) shift; cmd_up "$@" ;;
down) shift; cmd_down "$@" ;;
-h | --help | help) usage 0 ;;
*) usage ;;
esac
