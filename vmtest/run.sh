#!/usr/bin/env bash
# run.sh: boot a VM on another kernel and run xroce's tests inside it
# (`make vmtest`).  Root, build first (`make`).
#
#   vmtest/run.sh [options] [TEST...]
#
# TEST groups (default: the smoke set kcheck bpf transfer multiprog):
#   kcheck        kernel features xroce needs + the verifier on xroce.bpf.o
#   bpf           build/tests/bpf_* (the XDP program on crafted frames)
#   transfer      tests/integration/test_transfer.sh --quick (netns, loss)
#   multiprog     vmtest/test_multiprog.sh (xdp-loader dispatcher, 2 programs)
#   unit attach fabric transfer-full     the other tests one by one
#   suite         tests/run-all.sh, everything `make test` runs
#   twovm         TWO VMs joined by taps in a namespace of the host, each
#                 with a multiqueue virtio-net (native XDP) and an e1000e
#                 (generic XDP): vmtest/twovm/test_twovm.sh, the full set
#   twovm-smoke   its short subset (what CI runs)
#   twovm-drivers 32 MiB at 0% and 1% loss over each NIC, and the MTU case
#                 (the per-driver figures of docs/PERFORMANCE.md)
#   The twovm groups run on their own (not mixed with the one-VM groups).
#
# Options:
#   --kernel-pkg PKG  Debian kernel package to boot (default: the one
#                     linux-image-amd64 depends on, i.e. bookworm's 6.1)
#   --kernel-deb FILE a linux-image-*.deb already at hand
#   --kernel FILE     a bzImage/vmlinuz; with --modules DIR (its
#                     lib/modules/VERSION), else virtio, 9p, veth, clsact...
#                     must be built in
#   --accel A         auto (default: KVM when it boots the guest, else TCG),
#                     kvm, tcg
#   --runner R        auto (vng when installed and the kernel's modules are
#                     in /lib/modules, else qemu), qemu, vng (untested here:
#                     Debian bookworm has no virtme-ng package)
#   --timeout S       limit for the whole VM (default 900 s with KVM,
#                     3600 s under TCG)
#   --scale N         timeout multiplier inside the guest (1 KVM, 10 TCG)
#   --mem MB, --smp N guest size (2048, 2; twovm: each VM)
#   --queues N        twovm: queue pairs of each virtio-net NIC (8)
#   --cache DIR       downloaded kernels (~/.cache/xroce-vmtest)
#   -q, --quiet       do not stream the console, print the summary only
#
# The environment may set the same: XRVM_TESTS ("kcheck bpf"), XRVM_ACCEL,
# XRVM_RUNNER, XRVM_TIMEOUT, XRVM_SCALE, XRVM_KERNEL_PKG, XRVM_QUIET=1, XRVM_QUEUES,
# XRVM_KVM_PROBE (seconds KVM gets to reach the guest's init, 20), and
# XROCE_VMTEST_CACHE; e.g. `make vmtest XRVM_TESTS=multiprog XRVM_ACCEL=tcg`.
#
# Without /dev/kvm (or when nested KVM does not boot the guest) qemu
# emulates the CPU (TCG): it says so, and everything is 10-20x slower.
# The console goes to build/vmtest/console.log (twovm: console-a.log,
# console-b.log, and the tests' own log twovm.log).  Exit status: 0 when every
# test passed in the guest, 1 when one failed, 2 on usage errors, 3 when
# the VM could not be prepared or did not finish (timeout, crash).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=$ROOT/build/vmtest

# The modules the guest needs, when the kernel has them as modules:
# virtio + 9p (the root file system), overlay (writable tree), veth, the
# qdiscs and classifiers the fabric emulator and the tests use, and a
# hardware RNG so that nothing waits for entropy.
MODULES=(virtio_pci virtio_rng 9pnet_virtio 9p overlay veth sch_ingress
	cls_bpf act_bpf sch_tbf sch_htb)
# twovm: the NIC drivers under test, and netem for the guests' own use.
MODULES_TWOVM=(virtio_net e1000e sch_netem)
# rxe: the kernel's RoCE v2 (rdma_rxe, its verbs device files), netem, and
# the crc32 implementation rxe's ICRC asks the crypto API for.
MODULES_RXE=(rdma_rxe ib_uverbs sch_netem crc32_generic)

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}
die() { printf 'vmtest: %s\n' "$*" >&2; exit 3; }
note() { printf 'vmtest: %s\n' "$*" >&2; }

# Defaults from the environment, for `make vmtest XRVM_TESTS=...` and CI.
KPKG=${XRVM_KERNEL_PKG:-} KDEB='' KIMG='' KMODS='' ACCEL=${XRVM_ACCEL:-auto} RUNNER=${XRVM_RUNNER:-auto}
TIMEOUT=${XRVM_TIMEOUT:-} SCALE=${XRVM_SCALE:-} MEM=2048 SMP=2 QUIET=${XRVM_QUIET:-0}
QUEUES=${XRVM_QUEUES:-8}
CACHE=${XROCE_VMTEST_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/xroce-vmtest}
TESTS=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel-pkg) KPKG=${2:?}; shift ;;
	--kernel-deb) KDEB=${2:?}; shift ;;
	--kernel) KIMG=${2:?}; shift ;;
	--modules) KMODS=${2:?}; shift ;;
	--accel) ACCEL=${2:?}; shift ;;
	--runner) RUNNER=${2:?}; shift ;;
	--timeout) TIMEOUT=${2:?}; shift ;;
	--scale) SCALE=${2:?}; shift ;;
	--mem) MEM=${2:?}; shift ;;
	--smp) SMP=${2:?}; shift ;;
	--queues) QUEUES=${2:?}; shift ;;
	--cache) CACHE=${2:?}; shift ;;
	-q | --quiet) QUIET=1 ;;
	-h | --help) usage ;;
	-*) note "unknown option $1"; usage ;;
	*) TESTS+=("$1") ;;
	esac
	shift
done
if [ ${#TESTS[@]} -eq 0 ]; then
	IFS=', ' read -r -a TESTS <<<"${XRVM_TESTS:-kcheck bpf transfer multiprog}"
fi
case $ACCEL in auto | kvm | tcg) ;; *) note "--accel: auto, kvm or tcg"; usage ;; esac
# The twovm groups boot two VMs and drive them from here: not one VM's job.
TWOVM=0
for t in "${TESTS[@]}"; do
	case $t in twovm | twovm-*) TWOVM=1 ;; esac
done
if [ "$TWOVM" = 1 ]; then
	for t in "${TESTS[@]}"; do
		case $t in
		twovm | twovm-*) ;;
		*) note "the twovm groups run on their own, not with '$t'"; usage ;;
		esac
	done
	[[ $QUEUES =~ ^[1-8]$ ]] || { note "--queues: 1..8"; usage; }
fi
case $RUNNER in auto | qemu | vng) ;; *) note "--runner: auto, qemu or vng"; usage ;; esac
[ "$(id -u)" -eq 0 ] || die "needs root (the guest runs the tests as root on the host's files)"
for f in build/xroce build/bpf/xroce.bpf.o; do
	[ -e "$f" ] || die "$f missing: run make first"
done
mkdir -p "$OUT" "$CACHE"
START=$(date +%s)

# ---- the kernel ---------------------------------------------------------
# Sets VMLINUZ and MODDIR (empty: no modules to load).
kernel_from_deb() { # DEB DESTDIR: the kernel and the module directories used
	local deb=$1 dest=$2 tmp
	tmp=$dest.tmp
	rm -rf "$tmp" && mkdir -p "$tmp"
	# Only what a guest can need (the whole package is ~400 MB unpacked).
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards \
		'./boot/*' './lib/modules/*/modules.builtin' \
		'./lib/modules/*/kernel/net/*' './lib/modules/*/kernel/fs/*' \
		'./lib/modules/*/kernel/lib/*' './lib/modules/*/kernel/crypto/*' \
		'./lib/modules/*/kernel/drivers/virtio/*' './lib/modules/*/kernel/drivers/net/*' \
		'./lib/modules/*/kernel/drivers/char/*' \
		'./lib/modules/*/kernel/drivers/infiniband/*' ||
		die "cannot unpack $deb"
	rm -rf "$dest" && mv "$tmp" "$dest"
}

if [ -n "$KIMG" ]; then
	[ -f "$KIMG" ] || die "no kernel image $KIMG"
	VMLINUZ=$KIMG
	MODDIR=$KMODS
	KNAME=$(basename "$KIMG")
else
	if [ -n "$KDEB" ]; then
		[ -f "$KDEB" ] || die "no file $KDEB"
		KNAME=$(dpkg-deb -f "$KDEB" Package)_$(dpkg-deb -f "$KDEB" Version)
	else
		if [ -z "$KPKG" ]; then
			KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null |
				awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
			[ -n "$KPKG" ] || die "apt knows no linux-image-amd64: run apt-get update, or pass --kernel-pkg/--kernel-deb"
		fi
		KVER=$(apt-cache show --no-all-versions "$KPKG" 2>/dev/null | awk '/^Version:/ {print $2; exit}')
		[ -n "$KVER" ] || die "apt knows no package $KPKG (apt-get update?)"
		KNAME=${KPKG}_$KVER
	fi
	KDIR=$CACHE/$KNAME
	# .complete-2: the extraction includes drivers/infiniband (rxe)
	if [ ! -e "$KDIR/.complete-2" ]; then
		if [ -z "$KDEB" ]; then
			note "downloading $KPKG $KVER into $CACHE"
			dl=$(mktemp -d "$CACHE/dl.XXXXXX")
			(cd "$dl" && apt-get download -q -o APT::Sandbox::User=root "$KPKG=$KVER" >/dev/null) ||
				{ rm -rf "$dl"; die "apt-get download $KPKG=$KVER failed"; }
			KDEB_DL=$(echo "$dl"/*.deb)
			kernel_from_deb "$KDEB_DL" "$KDIR"
			rm -rf "$dl"
		else
			kernel_from_deb "$KDEB" "$KDIR"
		fi
		touch "$KDIR/.complete-2"
	fi
	VMLINUZ=$(echo "$KDIR"/boot/vmlinuz-*)
	MODDIR=$(echo "$KDIR"/lib/modules/*)
	if [ ! -f "$VMLINUZ" ] || [ ! -d "$MODDIR" ]; then
		die "$KDIR holds no kernel (remove it to download again)"
	fi
fi

# ---- what the guest runs ----------------------------------------------------
CFLAGS_VM=(-O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE)
gcc "${CFLAGS_VM[@]}" -static -o "$OUT/init" vmtest/init.c || die "cannot build vmtest/init.c (libc6-dev's libc.a?)"
gcc "${CFLAGS_VM[@]}" -o "$OUT/kcheck" vmtest/kcheck.c -lbpf -lelf -lz || die "cannot build vmtest/kcheck.c"
[ "$TWOVM" = 1 ] && MODULES+=("${MODULES_TWOVM[@]}")
for t in "${TESTS[@]}"; do [ "$t" = rxe ] && MODULES+=("${MODULES_RXE[@]}"); done
if [ -n "$MODDIR" ]; then
	MODS=$(python3 vmtest/mkinitramfs.py --host-list "$OUT/modules.host" \
		"$OUT/initramfs.cpio.gz" "$OUT/init" "$MODDIR" "${MODULES[@]}") ||
		die "cannot build the initramfs"
else
	note "no --modules: assuming virtio, 9p, overlay, veth, ... are built into $KNAME"
	python3 vmtest/mkinitramfs.py "$OUT/initramfs.cpio.gz" "$OUT/init" /nonexistent >/dev/null ||
		die "cannot build the initramfs"
	MODS="(none)"
	: >"$OUT/modules.host"
fi

# ---- accelerator ------------------------------------------------------------
kvm_usable() { [ -r /dev/kvm ] && [ -w /dev/kvm ]; }
if [ "$ACCEL" = auto ]; then
	if kvm_usable; then
		ACCEL=kvm-probe
	else
		note "no usable /dev/kvm: emulating the CPU (TCG), expect 10-20x slower"
		ACCEL=tcg
	fi
elif [ "$ACCEL" = kvm ] && ! kvm_usable; then
	die "--accel kvm, but /dev/kvm is missing or not accessible"
fi

# ---- run --------------------------------------------------------------------
LOG=$OUT/console.log
QPIDS=() TPIDS=() CLEANUPS=()
stop_vm() {
	local p i
	for p in "${QPIDS[@]}" "${TPIDS[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	QPIDS=() TPIDS=()
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUPS[i]}" >/dev/null 2>&1 || true
	done
	CLEANUPS=()
	return 0
}
trap 'stop_vm' EXIT
trap 'stop_vm; exit 130' INT TERM

# no_timer_check: under emulation on a busy host the kernel's check of the
# IO-APIC timer can fail and panic the boot ("IO-APIC + timer doesn't work").
cmdline() { # SCALE [NAME=VALUE...]: the kernel command line
	local t scale=$1
	shift
	t=$(IFS=,; echo "${TESTS[*]}")
	echo "console=ttyS0 panic=-1 loglevel=4 mitigations=off no_timer_check XRVM_GUEST=$ROOT/vmtest/guest.sh XRVM_DIR=$ROOT XRVM_TESTS=$t XRVM_SCALE=$scale${*:+ $*}"
}

# qemu_start LOG ERRFILE ACCEL APPEND [QEMU ARGS...]: start one VM in the
# background (its pid is appended to QPIDS), its console into LOG; the
# part of the command line every VM shares.  QEMU_PREFIX (an array) may
# name a command to run qemu under, e.g. nsenter into a network namespace.
QEMU_PREFIX=()
qemu_start() {
	local log=$1 err=$2 accel=$3 append=$4 cpu
	shift 4
	# shellcheck disable=SC2054 # commas inside qemu's option values
	local qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
		-m "$MEM" -smp "$SMP" -serial "file:$log" -monitor none
		-device virtio-rng-pci
		-virtfs local,path=/,mount_tag=xrroot,security_model=none,readonly=on,multidevs=remap
		-virtfs "local,path=$ROOT,mount_tag=xrproj,security_model=none,readonly=on,multidevs=remap"
		-kernel "$VMLINUZ" -initrd "$OUT/initramfs.cpio.gz" -append "$append")
	if [ "$accel" = kvm ]; then cpu=host; else cpu=max; fi
	: >"$log"
	"${QEMU_PREFIX[@]}" "${qemu[@]}" -accel "$accel" -cpu "$cpu" "$@" 2>"$err" &
	QPIDS+=($!)
}

# boot ACCEL LIMIT PROBE SCALE: run the VM; PROBE>0: give up after PROBE
# seconds when the guest's init has not spoken yet.  Returns 0 when the VM
# ended by itself, 2 when the probe failed, 3 on timeout.  boot_twovm
# (vmtest/twovm/boot.sh) does the same for the twovm groups.
boot() {
	local accel=$1 limit=$2 probe=$3 scale=$4 t=0 qpid
	qemu_start "$LOG" "$OUT/qemu.err" "$accel" "$(cmdline "$scale")"
	qpid=${QPIDS[-1]}
	if [ "$QUIET" -eq 0 ]; then
		tail -n +1 -f --pid="$qpid" "$LOG" &
		TPIDS+=($!)
	fi
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 1
		t=$((t + 1))
		if [ "$probe" -gt 0 ] && [ "$t" -ge "$probe" ] && ! grep -q 'xrvm-init: kernel up' "$LOG"; then
			stop_vm
			return 2
		fi
		if [ "$t" -ge "$limit" ]; then
			stop_vm
			return 3
		fi
	done
	wait "$qpid" 2>/dev/null || true
	for t in "${TPIDS[@]}"; do
		wait "$t" 2>/dev/null || true
	done
	QPIDS=() TPIDS=()
	# qemu gave up before the guest's init ran (e.g. KVM refused the CPU).
	if [ "$probe" -gt 0 ] && ! grep -q 'xrvm-init: kernel up' "$LOG"; then
		return 2
	fi
	return 0
}

# vng boots its own init over the host's files; guest.sh loads our modules.
boot_vng() {
	local limit=$1 scale=$2 t
	t=$(IFS=,; echo "${TESTS[*]}")
	note "using virtme-ng ($(command -v vng))"
	timeout -k 10 "$limit" vng --run "$VMLINUZ" --cpus "$SMP" --memory "${MEM}M" \
		${VNG_NO_KVM:+--disable-kvm} --exec "env XRVM_DIR=$ROOT XRVM_TESTS=$t XRVM_SCALE=$scale \
XRVM_MODLIST=$OUT/modules.host XRVM_INITBIN=$OUT/init bash $ROOT/vmtest/guest.sh; echo XRVM-EXIT \$?" \
		2>&1 | tee "$LOG"
}

note "kernel $KNAME, modules: $MODS"
note "tests: ${TESTS[*]}"
BOOT=boot
if [ "$TWOVM" = 1 ]; then
	# shellcheck source=vmtest/twovm/boot.sh
	. "$ROOT/vmtest/twovm/boot.sh"
	BOOT=boot_twovm
	LOG=$OUT/twovm.log
	[ "$RUNNER" = vng ] && die "--runner vng cannot boot the twovm pair: use qemu"
	RUNNER=qemu
fi
# vng boots distribution kernels with the modules under /lib/modules/VER
# (it needs virtio and 9p/virtiofs before our list is loaded); a kernel
# downloaded here has its modules only in the cache, so qemu boots it.
if [ "$RUNNER" = auto ] && command -v vng >/dev/null; then
	if [ -z "$MODDIR" ] || [ -d "/lib/modules/$(basename "$MODDIR")" ]; then
		RUNNER=vng
	else
		note "vng is installed, but $KNAME's modules are not in /lib/modules: booting it with qemu directly"
		RUNNER=qemu
	fi
fi
if [ "$RUNNER" = vng ]; then
	command -v vng >/dev/null || die "--runner vng, but vng is not installed"
	[ "$ACCEL" = tcg ] && VNG_NO_KVM=1
	SCALE=${SCALE:-$([ "$ACCEL" = tcg ] && echo 10 || echo 1)}
	boot_vng "${TIMEOUT:-$([ "$ACCEL" = tcg ] && echo 3600 || echo 900)}" "$SCALE" || true
	USED=vng
else
	command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 missing: apt-get install qemu-system-x86 (or install virtme-ng)"
	rc=0
	if [ "$ACCEL" = kvm-probe ] || [ "$ACCEL" = kvm ]; then
		probe=0
		[ "$ACCEL" = kvm-probe ] && probe=${XRVM_KVM_PROBE:-20}
		SCALE_K=${SCALE:-1}
		"$BOOT" kvm "${TIMEOUT:-900}" "$probe" "$SCALE_K" || rc=$?
		if [ "$rc" -eq 2 ]; then
			note "KVM is there but did not boot the guest within ${probe}s or failed ($(head -c 300 "$OUT/qemu.err" | tr '\n' ' ')); falling back to emulation (TCG), expect 10-20x slower"
			ACCEL=tcg
			rc=0
		else
			ACCEL=kvm
			SCALE=$SCALE_K
		fi
	fi
	if [ "$ACCEL" = tcg ]; then
		SCALE=${SCALE:-10}
		"$BOOT" tcg "${TIMEOUT:-3600}" 0 "$SCALE" || rc=$?
	fi
	[ "$rc" -eq 3 ] && note "the VM did not finish within its time limit: stopped"
	USED="qemu/$ACCEL"
fi

# ---- verdict ----------------------------------------------------------------
ELAPSED=$(($(date +%s) - START))
tr -d '\r' <"$LOG" >"$LOG.tmp" && mv "$LOG.tmp" "$LOG"
EXIT=$(sed -n 's/^XRVM-EXIT \([0-9]*\)$/\1/p' "$LOG" | tail -1)
printf '\n=== vmtest: %s, %s, %ss in all (timeouts x%s)\n' "$KNAME" "$USED" "$ELAPSED" "${SCALE:-?}"
grep -E '^XRVM-TEST [^ ]+ (PASS|FAIL)' "$LOG" | sed 's/^XRVM-TEST /  /' || true
if [ -z "$EXIT" ]; then
	note "the guest did not report an exit status (timeout, crash, or boot failure); the end of $LOG:"
	tail -n 30 "$LOG" >&2
	[ -s "$OUT/qemu.err" ] && note "qemu said: $(cat "$OUT/qemu.err")"
	exit 3
fi
if [ "$EXIT" -ne 0 ]; then
	printf 'vmtest: FAILED (guest exit status %s); console log: %s\n' "$EXIT" "$LOG"
	exit 1
fi
printf 'vmtest: all passed; console log: %s\n' "$LOG"
