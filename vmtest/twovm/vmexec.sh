# shellcheck shell=bash
# vmexec.sh: the host's side of vmtest/twovm/agent.sh: run commands in the
# VMs of the twovm pair; source it.  Needs TV_SHARE (the share, with a/
# and b/ for the two VMs) and TV_SCALE (timeout multiplier).
#
#   vm_start VM SCRIPT     start SCRIPT (bash text) in VM (a or b) in the
#                          background; its id is left in VM_ID
#   vm_wait VM ID [S]      wait until it ended, at most S seconds x TV_SCALE
#                          (default 120); returns its exit status, 124 on
#                          timeout (it keeps running then), 125 when the VM
#                          died (its qemu ended: a guest kernel panic)
#   vm VM SCRIPT [S]       vm_start + vm_wait, its stdout on stdout and its
#                          stderr on stderr
#   vm_out VM ID, vm_err VM ID   paths of its stdout and stderr (host side)
#   vm_kill VM ID          SIGTERM its session (SIGKILL 2 s later)
#   vm_ready VM [S]        wait until VM's agent listens
#   vm_stop_all            kill every command started so far that still runs
#   vm_alive VM            is VM's qemu running (TV_QPID_a/b from boot.sh)

VM_ID=
VM_STARTED=()

vm_out() { printf '%s/%s/out/%s.out' "$TV_SHARE" "$1" "$2"; }
vm_err() { printf '%s/%s/out/%s.err' "$TV_SHARE" "$1" "$2"; }

vm_start() {
	local vm=$1 req=$TV_SHARE/$1/req
	# Unique and in time order also when called in a subshell ($(vm ...)):
	# microseconds since the epoch, then the calling shell's pid.
	VM_ID=$(printf '%s-%07d' "${EPOCHREALTIME/./}" "$BASHPID")
	printf '%s\n' "$2" >"$req/.$VM_ID.tmp"
	mv "$req/.$VM_ID.tmp" "$req/$VM_ID.sh"
	VM_STARTED+=("$vm:$VM_ID")
}

vm_wait() {
	local vm=$1 limit=$((${3:-120} * TV_SCALE * 10)) t=0
	local rc=$TV_SHARE/$1/out/$2.rc
	while [ ! -e "$rc" ]; do
		[ "$t" -ge "$limit" ] && return 124
		if [ -n "${TV_QPID_a:-}" ] && [ $((t % 10)) -eq 0 ] && ! vm_alive "$vm"; then
			printf 'vm %s: the VM is gone (crashed? see %s)\n' "$vm" \
				"${TV_OUT:-build/vmtest}/console-$vm.log" >&2
			return 125
		fi
		sleep 0.1
		t=$((t + 1))
	done
	return "$(cat "$rc")"
}

vm() {
	local vm=$1 rc=0
	vm_start "$vm" "$2"
	vm_wait "$vm" "$VM_ID" "${3:-120}" || rc=$?
	cat "$(vm_out "$vm" "$VM_ID")" 2>/dev/null
	cat "$(vm_err "$vm" "$VM_ID")" >&2 2>/dev/null
	[ "$rc" -ne 124 ] || printf 'vm %s: timed out after %ss: %s\n' "$vm" \
		"$((${3:-120} * TV_SCALE))" "$2" >&2
	return "$rc"
}

# Is VM's qemu still running?  (TV_QPID_a/b, set by boot.sh.)
vm_alive() {
	local p
	eval "p=\${TV_QPID_$1:-}"
	[ -z "$p" ] || kill -0 "$p" 2>/dev/null
}

vm_kill() {
	[ -e "$TV_SHARE/$1/out/$2.rc" ] && return 0
	: >"$TV_SHARE/$1/req/$2.kill"
}

vm_ready() {
	local t=0 limit=$((${2:-120} * TV_SCALE * 10))
	until [ -e "$TV_SHARE/$1/ready" ]; do
		[ "$t" -ge "$limit" ] && return 1
		vm_alive "$1" || return 1
		sleep 0.1
		t=$((t + 1))
	done
}

vm_stop_all() {
	local x
	for x in "${VM_STARTED[@]}"; do
		vm_kill "${x%%:*}" "${x#*:}"
	done
	VM_STARTED=()
}
