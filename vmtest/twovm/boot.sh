# shellcheck shell=bash
# shellcheck disable=SC2153 # QPIDS, TPIDS and the rest are run.sh's
# boot.sh: the twovm pair, sourced by vmtest/run.sh (uses its settings and
# helpers: qemu_start, cmdline, OUT, ROOT, MEM, SMP, QUEUES, QUIET, TESTS,
# CLEANUPS, QPIDS, TPIDS, stop_vm, note).
#
# boot_twovm ACCEL LIMIT PROBE SCALE: like run.sh's boot, for two VMs.
#   - vmtest/twovm/net.sh builds the wires in a namespace of the host;
#   - VMs a and b boot there, each with a multiqueue virtio-net NIC and an
#     e1000e NIC on those wires, a writable share (OUT/twovm/share/<vm>)
#     and a monitor socket; guest.sh runs vmtest/twovm/agent.sh in each,
#     which executes what the driver puts into the share;
#   - the driver, vmtest/twovm/test_twovm.sh, runs HERE and writes the
#     XRVM-TEST lines and XRVM-EXIT into LOG (run.sh's verdict reads it).
# Returns 0 when the driver finished, 2 when PROBE > 0 and a guest's init
# did not speak within PROBE seconds, 3 on timeout.

# MAC of VM (a|b) on plane (v|e): the guests find their NICs by it.
twovm_mac() {
	printf '52:54:00:78:%s:%s' "$([ "$1" = a ] && echo 0a || echo 0b)" \
		"$([ "$2" = v ] && echo 01 || echo 02)"
}

# Wait until both consoles say "kernel up" (PROBE seconds at most); 0 if so.
twovm_probe() {
	local probe=$1 t=0
	while [ "$t" -lt "$probe" ]; do
		grep -q 'xrvm-init: kernel up' "$OUT/console-a.log" &&
			grep -q 'xrvm-init: kernel up' "$OUT/console-b.log" && return 0
		sleep 1
		t=$((t + 1))
	done
	return 1
}

boot_twovm() {
	local accel=$1 limit=$2 probe=$3 scale=$4 pfx vm rc=0 t dpid i=0
	local dir=$OUT/twovm
	pfx=x$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n' | cut -c1-5)
	rm -rf "$dir"
	mkdir -p "$dir"
	for vm in a b; do
		mkdir -p "$dir/share/$vm/req" "$dir/share/$vm/run" "$dir/share/$vm/out"
	done
	CLEANUPS+=("bash '$ROOT/vmtest/twovm/net.sh' down '$pfx'")
	bash "$ROOT/vmtest/twovm/net.sh" up "$pfx" "$QUEUES" >"$dir/net.env" ||
		{ note "cannot build the twovm wires"; return 3; }
	# shellcheck disable=SC2034 # run.sh's qemu_start runs qemu under it
	QEMU_PREFIX=(nsenter --net="/var/run/netns/$pfx-fab")
	for vm in a b; do
		# virtio-net: QUEUES queue pairs, a vector per queue plus config
		# and control, and RSS (the receive queue from the flow's hash,
		# as a real NIC picks it; without it qemu keeps the queue a frame
		# left the sending VM's tap on, that is the sender's CPU);
		# e1000e: one queue, generic XDP only.
		# shellcheck disable=SC2054 # commas inside qemu's option values
		qemu_start "$OUT/console-$vm.log" "$OUT/qemu-$vm.err" "$accel" \
			"$(cmdline "$scale" "XRVM_VM=$vm")" \
			-netdev "tap,id=nv,ifname=$pfx${vm}v,script=no,downscript=no,vhost=off,queues=$QUEUES" \
			-device "virtio-net-pci,netdev=nv,mac=$(twovm_mac "$vm" v),mq=on,rss=on,vectors=$((2 * QUEUES + 2))" \
			-netdev "tap,id=ne,ifname=$pfx${vm}e,script=no,downscript=no,vnet_hdr=off" \
			-device "e1000e,netdev=ne,mac=$(twovm_mac "$vm" e)" \
			-virtfs "local,path=$dir/share/$vm,mount_tag=xrshare,security_model=none,multidevs=remap" \
			-monitor "unix:$dir/monitor-$vm.sock,server=on,wait=off"
	done
	# shellcheck disable=SC2034
	QEMU_PREFIX=()
	if [ "$QUIET" -eq 0 ]; then
		for vm in a b; do
			tail -n +1 -f --pid="${QPIDS[i]}" "$OUT/console-$vm.log" | sed -u "s/^/[$vm] /" &
			TPIDS+=($!)
			i=$((i + 1))
		done
	fi
	if [ "$probe" -gt 0 ] && ! twovm_probe "$probe"; then
		cat "$OUT/qemu-a.err" "$OUT/qemu-b.err" >"$OUT/qemu.err" 2>/dev/null
		stop_vm
		return 2
	fi
	# The driver: everything it says goes to LOG (and the terminal).
	: >"$LOG"
	(
		set -a
		# shellcheck disable=SC1091
		. "$dir/net.env"
		set +a
		export TV_DIR=$dir TV_SHARE=$dir/share TV_PREFIX=$pfx TV_SCALE=$scale
		export TV_QPID_a=${QPIDS[0]} TV_QPID_b=${QPIDS[1]} TV_SMP=$SMP TV_OUT=$OUT
		export TV_MAC_av TV_MAC_ae TV_MAC_bv TV_MAC_be
		TV_MAC_av=$(twovm_mac a v) TV_MAC_ae=$(twovm_mac a e)
		TV_MAC_bv=$(twovm_mac b v) TV_MAC_be=$(twovm_mac b e)
		# A copy: bash reads a script as it goes, and the tree's may be
		# edited meanwhile.
		cp "$ROOT/vmtest/twovm/test_twovm.sh" "$dir/test_twovm.sh"
		export TV_ROOT=$ROOT
		exec timeout -k 10 "$limit" bash "$dir/test_twovm.sh" "${TESTS[@]}"
	) >"$LOG" 2>&1 &
	dpid=$!
	# stop_vm (run.sh's traps) ends the driver too.
	TPIDS+=("$dpid")
	if [ "$QUIET" -eq 0 ]; then
		tail -n +1 -f --pid="$dpid" "$LOG" &
		TPIDS+=($!)
	fi
	wait "$dpid" || rc=$?
	# The agents stop on request; then guest.sh powers its VM off.
	for vm in a b; do
		: >"$dir/share/$vm/req/exit"
	done
	for t in $(seq 1 $((30 * scale))); do
		kill -0 "${QPIDS[0]}" 2>/dev/null || kill -0 "${QPIDS[1]}" 2>/dev/null || break
		sleep 1
	done
	stop_vm
	[ "$rc" -eq 124 ] && return 3
	return 0
}
