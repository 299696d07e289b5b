#!/bin/bash
# agent.sh: runs in each VM of the twovm pair (vmtest/guest.sh starts it)
# and executes what the host's test driver (vmtest/twovm/vmexec.sh) puts
# into the share DIR, until told to stop.
#
#   DIR/req/ID.sh    a bash script: run in its own session, in the project
#                    directory; stdout and stderr to DIR/out/ID.out and
#                    ID.err, its pid to ID.pid at once and its exit status
#                    to ID.rc when it ends (files appear whole: renamed)
#   DIR/req/ID.kill  SIGTERM to ID's session, SIGKILL 2 s later
#   DIR/req/exit     stop: kill what still runs, exit 0
# DIR/ready appears once the agent listens.  Scripts are taken in name
# order; the driver names them by a counter.
set -u
DIR=${1:?usage: agent.sh SHARE_DIR}
cd "${XRVM_DIR:?XRVM_DIR not set}" || exit 1

# A tick without forking sleep(1), five times a second.
mkfifo /tmp/agent.tick && exec 3<>/tmp/agent.tick || exit 1
SESSIONS=()

start() { # ID
	local id=$1 o=$DIR/out/$1
	(
		# shellcheck disable=SC2016 # $$ and $1 belong to the inner bash
		setsid -w bash -c 'echo $$ >"$1.pid.tmp" && mv "$1.pid.tmp" "$1.pid" && exec bash "$2"' \
			_ "$o" "$DIR/run/$id.sh" >"$o.out" 2>"$o.err" </dev/null
		echo $? >"$o.rc.tmp"
		mv "$o.rc.tmp" "$o.rc"
	) &
	SESSIONS+=("$id")
}

stop() { # ID
	local pid
	pid=$(cat "$DIR/out/$1.pid" 2>/dev/null) || return 0
	kill -TERM -- "-$pid" 2>/dev/null || return 0
	(sleep 2 && kill -KILL -- "-$pid" 2>/dev/null) &
}

printf '%s %s\n' "$(uname -r)" "$(nproc)" >"$DIR/.ready.tmp" && mv "$DIR/.ready.tmp" "$DIR/ready"
echo "agent: listening on $DIR"
while :; do
	for f in "$DIR"/req/*; do
		[ -e "$f" ] || continue
		id=${f##*/}
		case $id in
		exit)
			for id in "${SESSIONS[@]}"; do
				[ -e "$DIR/out/$id.rc" ] || stop "$id"
			done
			echo "agent: told to stop"
			exit 0 ;;
		*.sh)
			mv "$f" "$DIR/run/$id"
			start "${id%.sh}" ;;
		*.kill)
			rm -f "$f"
			stop "${id%.kill}" ;;
		*)
			rm -f "$f" ;;
		esac
	done
	read -r -t 0.2 -u 3 _
done
