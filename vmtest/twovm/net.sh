#!/usr/bin/env bash
# net.sh: the wires between the twovm pair, on the host (root): one network
# namespace holding, per plane, a bridge and the two VMs' tap devices.  The
# VMs' qemu processes run inside that namespace and open the taps there,
# so nothing of it touches the host's own interfaces.
#
#   net.sh up PREFIX QUEUES   create PREFIX-fab (fails if it exists)
#   net.sh down PREFIX        delete it (kills what still runs in it)
#
# Planes and taps (VM x in a, b):
#   v  PREFIX<x>v  multiqueue tap (QUEUES queues, virtio-net header) for the
#                VM's virtio-net NIC; bridge PREFIXv
#   e  PREFIX<x>e  single-queue tap without virtio-net header for the VM's
#                e1000e NIC (qemu's e1000e computes checksums itself);
#                bridge PREFIXe
# Every tap carries the fabric emulator's TC egress program (bpf/fabric.bpf.c,
# routed mode): impairments set with `xrfabric set --netns NS --port TAP
# --tc` act on what the bridge sends towards that VM, i.e. on what the VM
# receives.  The bridge keeps the kernel's checksum state of each frame,
# unlike an XDP redirect between taps, which would hand the receiving
# guest partially checksummed frames without saying so.
#
# `up` prints bash-sourceable settings: TV_NS, TV_TAP_<x><plane>.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
XRFABRIC=${XRFABRIC:-$ROOT/build/xrfabric}

die() { printf 'twovm/net.sh: %s\n' "$*" >&2; exit 1; }
inns() { nsenter --net="/var/run/netns/$NS" "$@"; }

[ $# -ge 2 ] || die "usage: net.sh up PREFIX QUEUES | down PREFIX"
CMD=$1 PFX=$2
NS=$PFX-fab
case $CMD in
down)
	[ -e "/var/run/netns/$NS" ] || exit 0
	pids=$(ip netns pids "$NS" 2>/dev/null || true)
	# shellcheck disable=SC2086 # one word per pid
	[ -z "$pids" ] || kill $pids 2>/dev/null || true
	ip netns del "$NS"
	exit 0 ;;
up) ;;
*) die "unknown command $CMD" ;;
esac
QUEUES=${3:?queues}
[ -x "$XRFABRIC" ] || die "$XRFABRIC missing: run make first"
[ -e /dev/net/tun ] || die "no /dev/net/tun: the host kernel has no tun/tap"
[ ! -e "/var/run/netns/$NS" ] || die "namespace $NS exists already"

ok=0
trap '[ "$ok" = 1 ] || { ip netns del "$NS" 2>/dev/null; true; }' EXIT
ip netns add "$NS"
inns ip link set lo up
for plane in v e; do
	br=$PFX$plane
	inns ip link add "$br" type bridge forward_delay 0 stp_state 0 ||
		die "cannot create bridge $br (no bridge support in the host kernel?)"
	inns ip link set "$br" mtu 9000 up
	for vm in a b; do
		tap=$PFX$vm$plane
		if [ "$plane" = v ]; then
			inns ip tuntap add dev "$tap" mode tap multi_queue vnet_hdr
		else
			inns ip tuntap add dev "$tap" mode tap
		fi
		inns ip link set "$tap" mtu 9000 master "$br" up
		"$XRFABRIC" attach --netns "$NS" --port "$tap" --tc >/dev/null ||
			die "cannot attach the fabric emulator to $tap"
		printf 'TV_TAP_%s%s=%s\n' "$vm" "$plane" "$tap"
	done
done
printf 'TV_NS=%s\nTV_QUEUES=%s\n' "$NS" "$QUEUES"
ok=1
