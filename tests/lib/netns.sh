# shellcheck shell=bash
# netns.sh: helpers for tests that build network namespaces; source it.
#
# Everything a test creates is registered with xr_cleanup_push and removed,
# newest first, by xr_cleanup_run, which runs on EXIT (so also after
# `set -e` failures) and on INT/TERM.  Do not replace the EXIT trap: push
# cleanup steps instead.
#
#   xr_prefix                 unique short name prefix ("x" + 5 hex digits)
#   xr_ns_add NS              create NS (lo up), removed on exit
#   xr_ns_del NS              kill its processes and delete it
#   xr_veth NS1 IF1 NS2 IF2   veth pair created inside the two namespaces,
#                             up, tx checksum offload off
#   nsx NS cmd...             run cmd in NS's network namespace (keeps bpffs
#                             visible, unlike `ip netns exec`)
#   xr_bg NS cmd...           start cmd in NS in the background, killed on
#                             exit; its pid is left in XR_BG_PID
#   xr_bpffs                  mount bpffs on /sys/fs/bpf when missing
#   xr_csum_off NS IF         ethtool -K IF tx off
#   xr_cleanup_push 'cmd'     run cmd (a string, eval'd) on exit; its stderr
#                             is discarded, its stdout is not
#   xr_cleanup_run            run and forget all cleanup steps now
#   xr_cleanup_disarm         forget them without running (keep what exists)
#   xr_log / xr_die           messages on stderr; xr_die exits 1

XR_CLEANUP=()

xr_log() { printf '%s\n' "$*" >&2; }
xr_die() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

xr_cleanup_push() { XR_CLEANUP+=("$1"); }
xr_cleanup_disarm() { XR_CLEANUP=(); }

xr_cleanup_run() {
	local i
	for ((i = ${#XR_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${XR_CLEANUP[i]}" 2>/dev/null || true
	done
	XR_CLEANUP=()
}

# Cleanup on a signal exits with 128+signal, so the EXIT trap runs too; a
# second Ctrl-C during cleanup is ignored so the cleanup completes.
trap 'XR_RC=$?; trap - EXIT; trap "" INT TERM; xr_cleanup_run; exit $XR_RC' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

nsx() {
	local ns=$1
	shift
	nsenter --net="/var/run/netns/$ns" "$@"
}

xr_prefix() {
	local p i
	for i in 1 2 3 4 5 6 7 8; do
		p=x$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n' | cut -c1-5)
		if ! ip netns list | grep -q "^$p"; then
			echo "$p"
			return 0
		fi
	done
	xr_die "no free name prefix"
}

xr_ns_del() {
	local ns=$1 pids
	[ -e "/var/run/netns/$ns" ] || return 0
	pids=$(ip netns pids "$ns" 2>/dev/null)
	if [ -n "$pids" ]; then
		# shellcheck disable=SC2086 # one word per pid
		kill $pids 2>/dev/null
		sleep 0.2
		pids=$(ip netns pids "$ns" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null
	fi
	ip netns del "$ns"
}

xr_ns_add() {
	local ns=$1
	[ ! -e "/var/run/netns/$ns" ] || xr_die "namespace $ns exists already"
	# Registered first: a signal may land right after `ip netns add`.
	xr_cleanup_push "xr_ns_del '$ns'"
	ip netns add "$ns" || xr_die "cannot create namespace $ns"
	nsx "$ns" ip link set lo up
}

xr_csum_off() {
	nsx "$1" ethtool -K "$2" tx off >/dev/null 2>&1 ||
		xr_die "cannot turn tx checksum offload off on $2 in $1"
}

# Both ends are created directly in their namespaces, so names only need to
# be unique there; deleting either namespace deletes the pair.
xr_veth() {
	local ns1=$1 if1=$2 ns2=$3 if2=$4
	ip link add "$if1" netns "$ns1" type veth peer name "$if2" netns "$ns2" ||
		xr_die "cannot create veth $ns1/$if1 - $ns2/$if2"
	xr_csum_off "$ns1" "$if1"
	xr_csum_off "$ns2" "$if2"
	nsx "$ns1" ip link set "$if1" up
	nsx "$ns2" ip link set "$if2" up
}

xr_bg() {
	local ns=$1
	shift
	nsx "$ns" "$@" &
	XR_BG_PID=$!
	# Only while it still runs in NS: its pid may be reused after it ends.
	xr_cleanup_push "ip netns pids '$ns' | grep -qx $XR_BG_PID && kill $XR_BG_PID; wait $XR_BG_PID"
}

xr_bpffs() {
	mountpoint -q /sys/fs/bpf 2>/dev/null && return 0
	mount -t bpf bpf /sys/fs/bpf || xr_die "cannot mount bpffs"
}
