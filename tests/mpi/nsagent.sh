#!/usr/bin/env bash
# nsagent.sh: Open MPI's remote shell (plm_rsh_agent) on the fabric
# emulator: "logging in" to a host enters its network namespace, so an
# ordinary hostfile of host names launches ranks on the emulated hosts.
#
#   mpirun --mca plm_rsh_agent tests/mpi/nsagent.sh --hostfile H ...
#
# mpirun calls it like ssh: [options] HOST COMMAND...; the words of COMMAND
# are run by sh, as a remote shell would.  HOST is looked up in the file
# $XR_MPI_HOSTMAP ("host namespace" per line), else taken as a namespace
# name.  nsenter --net, not `ip netns exec`, which remounts /sys and hides
# bpffs (xroce finds its maps there).  Each host also gets its own UTS
# namespace named after it, so the daemons report distinct host names and
# Open MPI does not take them for one node.
set -euo pipefail
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
	shift # ssh options (-x, ...) mean nothing here
done
[ $# -ge 2 ] || { echo "usage: nsagent.sh HOST COMMAND..." >&2; exit 2; }
host=$1
shift
ns=$host
if [ -n "${XR_MPI_HOSTMAP:-}" ]; then
	ns=$(awk -v h="$host" '$1 == h { print $2; exit }' "$XR_MPI_HOSTMAP")
	[ -n "$ns" ] || { echo "nsagent: $host is not in $XR_MPI_HOSTMAP" >&2; exit 255; }
fi
[ -e "/var/run/netns/$ns" ] || { echo "nsagent: no namespace $ns" >&2; exit 255; }
# shellcheck disable=SC2016 # expanded by the inner shells
exec nsenter --net="/var/run/netns/$ns" unshare --uts \
	sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
