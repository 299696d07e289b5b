#!/usr/bin/env bash
# txengine.sh: raw packet rate and CPU cost of the transmit engines, side by
# side in one run, on a veth pair between two private namespaces:
#   a   AF_XDP copy mode, prebuilt frames (what test_xsk --bench measures)
#   a2  AF_XDP copy mode, each frame built in userspace (libxroce today)
#   b   XDP test run with BPF_F_TEST_XDP_LIVE_FRAMES, one prebuilt frame
#   c   the same, BPF builds every frame from a descriptor ring
# The receiving veth runs an XDP program that counts, checks a sample of
# checksums and drops.  Before measuring, frames built by BPF are captured
# and compared byte for byte with libxroce's own xr_build_frame().
#
# Usage: tests/bench/txengine.sh [txengine options]
#   --secs S (2)  --rounds R (3)  --sizes 64,1400  --batches 256,1024
#   --kbatch N (kernel frames per softirq section; 64)  --variants a,a2,b,c
#   --cpu N (pin the sender)  --redirect (bpf_redirect instead of XDP_TX)
#   --xsk-budget N (256)  --sample-mask M (63)  --prog-stats  --verify-only
#   --no-park (do not keep the test-run programs in the XDP dispatcher)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root

make -s --no-print-directory txengine >&2 || xr_die "cannot build the benchmark (make txengine)"

PFX=$(xr_prefix)
A=${PFX}a
B=${PFX}b
xr_ns_add "$A"
xr_ns_add "$B"
# No IPv6 autoconfiguration chatter in the counts.
for ns in "$A" "$B"; do
	nsx "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
xr_veth "$A" "${PFX}0" "$B" "${PFX}1"
# A veth pair that stays down, in A: the test-run programs are attached
# there only so that the kernel's XDP dispatcher holds them (see park() in
# txengine.c); --no-park measures without it.
PARK=(--park "${PFX}p0,${PFX}p1")
for a in "$@"; do [ "$a" = --no-park ] && PARK=(); done
if [ ${#PARK[@]} -gt 0 ]; then
	nsx "$A" ip link add "${PFX}p0" type veth peer name "${PFX}p1" ||
		xr_die "cannot create the parking veth"
fi
ARGS=()
for a in "$@"; do [ "$a" = --no-park ] || ARGS+=("$a"); done

echo "kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
build/bench/txengine --obj build/bench/txengine.bpf.o \
	--ns-a "$A" --if-a "${PFX}0" --ns-b "$B" --if-b "${PFX}1" \
	${PARK[@]+"${PARK[@]}"} ${ARGS[@]+"${ARGS[@]}"}
