#!/usr/bin/env bash
# node.sh: one VM's side of the twovm tests; runs in the guest (through the
# agent).  Planes: xv0 = the virtio-net NIC, xe0 = the e1000e NIC.
#
#   node.sh setup VM MAC_V MAC_E QUEUES
#       name the NICs by their MACs, address them (VM a: .1, b: .2 on
#       10.88.0.0/24 over xv0 and 10.88.1.0/24 over xe0), QUEUES combined
#       queues on xv0 (more than the CPUs when QUEUES > nproc), links up
#   node.sh rxq IF      packets received per RX queue: "N0 N1 ..."
#   node.sh facts IF    driver, RX queues, offload features (one line)
set -euo pipefail
die() { printf 'node.sh: %s\n' "$*" >&2; exit 1; }

ifname_of() { # MAC: the interface that has it
	local f
	for f in /sys/class/net/*/address; do
		[ "$(cat "$f")" = "$1" ] && { basename "$(dirname "$f")"; return 0; }
	done
	return 1
}

name_nic() { # MAC NAME
	local old
	old=$(ifname_of "$1") || die "no NIC with MAC $1"
	[ "$old" = "$2" ] && return 0
	ip link set "$old" down
	ip link set "$old" name "$2"
}

setup() {
	local vm=$1 macv=$2 mace=$3 queues=$4 n
	case $vm in a) n=1 ;; b) n=2 ;; *) die "VM is a or b" ;; esac
	name_nic "$macv" xv0
	name_nic "$mace" xe0
	ip addr flush dev xv0
	ip addr flush dev xe0
	ip addr add "10.88.0.$n/24" dev xv0
	ip addr add "10.88.1.$n/24" dev xe0
	ethtool -L xv0 combined "$queues" ||
		die "cannot set $queues combined queues on xv0"
	ip link set xv0 up
	ip link set xe0 up
	# Until the links are up and the peer answers ARP the tests would
	# only measure the boot; the peer may still be booting, so no ping.
}

rxq() {
	ethtool -S "$1" | awk -F: '/rx_queue_[0-9]+_packets|rx-?[0-9]+[._]packets/ {
		gsub(/ /, "", $2); printf "%s%s", sep, $2; sep = " " } END { print "" }'
}

facts() {
	local drv q
	drv=$(basename "$(readlink "/sys/class/net/$1/device/driver")")
	q=$(find "/sys/class/net/$1/queues" -maxdepth 1 -name 'rx-*' | wc -l)
	echo "$1 driver=$drv rxq=$q cpus=$(nproc) $(ethtool -k "$1" | awk -F': ' '
		/^(rx-checksumming|tx-checksumming|generic-receive-offload|large-receive-offload|rx-gro-hw|rx-lro)/ {
			printf "%s=%s ", $1, $2 }')"
}

cmd=${1:-}
shift || true
case $cmd in
setup) setup "$@" ;;
rxq) rxq "$@" ;;
facts) facts "$@" ;;
*) die "usage: node.sh setup|rxq|facts ..." ;;
esac
