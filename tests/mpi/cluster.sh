#!/usr/bin/env bash
# cluster.sh: an emulated cluster for MPI jobs: the leaf-spine fabric of
# tests/fabric/fabric.sh (ECMP over the spines, impairments on the switch
# ports) plus a management network, as clusters have one: every host's mg0
# on a bridge in namespace PREFIX-mg, where mpirun runs.  Open MPI's own
# traffic (daemons, wire-up) stays there, off the impaired fabric; the
# ranks' traffic goes over eth0 (xroce, or Open MPI's TCP BTL).
#
#   cluster.sh up N [--prefix P] [--env FILE] [--mtu M] [--spines S]
#   cluster.sh down PREFIX
#
# `up` attaches xroce to every host's eth0 and writes (to --env FILE, and
# prints) the fabric's description plus:
#   CL_MGMT_NS   namespace of the management bridge (run mpirun there)
#   CL_HOSTFILE  hostfile: h0 .. h(N-1), one slot each
#   CL_HOSTMAP   host -> namespace map for nsagent.sh (XR_MPI_HOSTMAP)
#   CL_MGMT_NET  the management network (oob_tcp_if_include)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../lib/netns.sh disable=SC1091
source "$ROOT/tests/lib/netns.sh"
MGMT_NET=192.168.77

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

cmd_up() {
	local n=${1:-} envfile="" p="" extra=() i ns
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 64 ] || usage
	shift
	while [ $# -gt 0 ]; do
		[ $# -ge 2 ] || usage
		case $1 in
		--prefix) p=$2 ;;
		--env) envfile=$2 ;;
		--mtu | --spines) extra+=("$1" "$2") ;;
		*) usage ;;
		esac
		shift 2
	done
	[ -n "$p" ] || p=$(xr_prefix)
	[ -n "$envfile" ] || envfile=$(mktemp "/tmp/$p.cluster.XXXXXX")
	# Removed again if anything below fails.
	xr_cleanup_push "bash '$ROOT/tests/fabric/fabric.sh' down '$p' >/dev/null 2>&1"
	bash "$ROOT/tests/fabric/fabric.sh" up leafspine "$n" --prefix "$p" \
		--env "$envfile" "${extra[@]}" >/dev/null
	# shellcheck disable=SC1090
	. "$envfile"
	xr_ns_add "$p-mg"
	nsx "$p-mg" ip link add br0 type bridge
	nsx "$p-mg" ip addr add "$MGMT_NET.1/24" dev br0
	nsx "$p-mg" ip link set br0 up
	: >"$envfile.hosts"
	: >"$envfile.map"
	for ((i = 0; i < n; i++)); do
		ns=$p-h$i
		ip link add mg0 netns "$ns" type veth peer name "h$i" netns "$p-mg"
		nsx "$p-mg" ip link set "h$i" master br0 up
		nsx "$ns" ip addr add "$MGMT_NET.$((10 + i))/24" dev mg0
		nsx "$ns" ip link set mg0 up
		nsx "$ns" "$ROOT/build/xroce" attach --force eth0 >/dev/null
		echo "h$i slots=1" >>"$envfile.hosts"
		echo "h$i $ns" >>"$envfile.map"
	done
	{
		echo "CL_MGMT_NS=$p-mg"
		echo "CL_HOSTFILE=$envfile.hosts"
		echo "CL_HOSTMAP=$envfile.map"
		echo "CL_MGMT_NET=$MGMT_NET.0/24"
	} >>"$envfile"
	cat "$envfile"
	xr_cleanup_disarm
}

cmd_down() {
	local p=${1:-}
	[[ $p =~ ^[A-Za-z0-9_]{1,20}$ ]] || usage
	bash "$ROOT/tests/fabric/fabric.sh" down "$p"
}

[ "$(id -u)" = 0 ] || xr_die "cluster.sh needs root"
case ${1:-} in
up) shift; cmd_up "$@" ;;
down) shift; cmd_down "$@" ;;
*) usage ;;
esac
