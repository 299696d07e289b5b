#!/bin/bash
# guest.sh: runs inside the vmtest VM (started by vmtest/init.c, or by vng's
# init), prepares the system and runs the tests named in XRVM_TESTS.
#
# The root file system is the host's /, read-only over 9p, and the project
# directory is shared again on its own (it may live under /tmp).  Writable:
# /tmp /run /var/tmp /dev/shm (tmpfs), /run/netns, bpffs on /sys/fs/bpf, and
# the project directory XRVM_DIR through an overlay whose upper layer is a
# tmpfs, so tests may write anywhere in the tree and the host's copy is
# never touched.
#
# Settings (environment, from the kernel command line):
#   XRVM_DIR     the project directory (same path as on the host)
#   XRVM_TESTS   comma-separated test groups, see run_group below
#   XRVM_SCALE   timeout multiplier (10 or so under TCG emulation), also
#                exported to the tests as XR_TIME_SCALE
#   XRVM_MODLIST when set, a file of kernel modules to load first (vng)
#   XRVM_INITBIN vmtest/init.c's binary, which loads them
#   XRVM_VM      a or b: one VM of the twovm pair (vmtest/twovm/boot.sh);
#                runs no tests itself but vmtest/twovm/agent.sh on the
#                writable share run.sh gives it (tag xrshare, /run/xrshare)
# Prints "XRVM-TEST <name> PASS|FAIL <seconds>s" per test for run.sh, and
# exits 0 only if every test passed.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp/home LC_ALL=C TERM=dumb
DIR=${XRVM_DIR:?XRVM_DIR not set}
SCALE=${XRVM_SCALE:-1}
# For tests that stretch their own timing on a slow (emulated) machine.
export XR_TIME_SCALE=$SCALE
IFS=, read -r -a GROUPS_WANTED <<<"${XRVM_TESTS:-kcheck,bpf,transfer,multiprog}"
[ -n "${XRVM_VM:-}" ] && GROUPS_WANTED=(agent)

say() { printf 'xrvm-guest: %s\n' "$*"; }

mnt() { # mnt TYPE DIR [OPTIONS]: mount unless something is there already
	mountpoint -q "$2" && return 0
	mkdir -p "$2" 2>/dev/null
	mount -t "$1" ${3:+-o "$3"} "$1" "$2" || say "cannot mount $1 on $2"
}

setup() {
	mnt proc /proc
	mnt sysfs /sys
	mnt devtmpfs /dev
	mnt devpts /dev/pts
	# What udev would add: bash's process substitution needs /dev/fd.
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
	[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
	[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
	mnt tmpfs /dev/shm
	mnt tmpfs /tmp mode=1777
	mnt tmpfs /run mode=755
	mnt tmpfs /var/tmp mode=1777
	mkdir -p /run/netns /tmp/home
	mnt bpf /sys/fs/bpf
	mnt tracefs /sys/kernel/tracing
	mnt debugfs /sys/kernel/debug
	if [ -n "${XRVM_MODLIST:-}" ]; then
		"$XRVM_INITBIN" --load-modules "$XRVM_MODLIST" || say "some modules did not load"
	fi
	# The project comes as its own 9p share (run.sh's tag xrproj), mounted
	# after the tmpfs mounts so that a tree under /tmp is reachable too.
	if grep -qs xrproj /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag; then
		mkdir -p "$DIR" 2>/dev/null
		mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose xrproj "$DIR" ||
			say "cannot mount the project share on $DIR"
	fi
	# twovm: the share the host's test driver and this VM's agent use.
	if grep -qs xrshare /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag; then
		mkdir -p /run/xrshare
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 xrshare /run/xrshare ||
			say "cannot mount the twovm share"
	fi
	# The tree writable, changes kept in memory.
	mkdir -p /run/xrvm/up /run/xrvm/work
	if ! mount -t overlay overlay \
		-o "lowerdir=$DIR,upperdir=/run/xrvm/up,workdir=/run/xrvm/work" "$DIR"; then
		say "no overlay on $DIR: the tree stays read-only"
	fi
	ip link set lo up
	ulimit -l unlimited
	hostname "xrvm${XRVM_VM:+-$XRVM_VM}" 2>/dev/null
}

RESULTS=()
FAILED=0

# run_test NAME TIMEOUT_S CMD...: one test, its output on the console.
run_test() {
	local name=$1 limit=$(($2 * SCALE)) start rc secs verdict
	shift 2
	printf '\nXRVM-TEST-START %s\n' "$name"
	start=$(date +%s%N)
	timeout -k 10 "$limit" "$@"
	rc=$?
	secs=$((($(date +%s%N) - start) / 1000000))
	secs=$((secs / 1000)).$(printf '%03d' $((secs % 1000)) | cut -c1)
	verdict=PASS
	if [ "$rc" -ne 0 ]; then
		verdict=FAIL
		FAILED=$((FAILED + 1))
		[ "$rc" -eq 124 ] && say "$name: timed out after ${limit}s"
	fi
	RESULTS+=("$verdict  $name (${secs}s, exit $rc)")
	printf 'XRVM-TEST %s %s %ss exit=%d\n' "$name" "$verdict" "$secs" "$rc"
}

run_group() {
	local t
	case $1 in
	kcheck) # the kernel features xroce needs, and the verifier on its object
		run_test kcheck 120 build/vmtest/kcheck --obj build/bpf/xroce.bpf.o ;;
	bpf) # the XDP program on crafted frames
		for t in build/tests/bpf_*; do
			[ -x "$t" ] && run_test "bpf:${t##*/}" 300 "$t"
		done ;;
	unit) # cmocka tests (kernel-independent, but cheap to include)
		for t in build/tests/test_*; do
			[ -x "$t" ] && run_test "unit:${t##*/}" 300 "$t"
		done ;;
	transfer) # netns transfers with loss, short set
		run_test transfer 600 bash tests/integration/test_transfer.sh --quick ;;
	transfer-full)
		run_test transfer-full 1800 bash tests/integration/test_transfer.sh ;;
	attach)
		run_test attach 600 bash tests/integration/test_attach.sh ;;
	fabric)
		run_test fabric 900 bash tests/fabric/test_fabric.sh ;;
	rxe) # perftest on the kernel's RoCE v2 and on xroce, netem loss
		run_test rxe 1800 bash vmtest/test_rxe.sh ;;
	multiprog) # xroce next to another program in libxdp's dispatcher
		run_test multiprog 600 env XRVM_REQUIRE_MULTIPROG=1 bash vmtest/test_multiprog.sh ;;
	agent) # twovm: run what the host's driver asks, until it says exit
		run_test "agent:${XRVM_VM:-?}" 86400 bash vmtest/twovm/agent.sh /run/xrshare ;;
	suite) # the whole suite, as `make test` runs it
		run_test suite 3600 bash tests/run-all.sh ;;
	*)
		say "unknown test group '$1'"
		RESULTS+=("FAIL  $1 (unknown test group)")
		FAILED=$((FAILED + 1)) ;;
	esac
}

setup
cd "$DIR" || exit 1
say "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MiB, timeouts x$SCALE"
say "tests: ${GROUPS_WANTED[*]}"
for g in "${GROUPS_WANTED[@]}"; do
	run_group "$g"
done
printf '\n=== vmtest summary (kernel %s)\n' "$(uname -r)"
printf '%s\n' "${RESULTS[@]}"
sync
[ "$FAILED" -eq 0 ]
