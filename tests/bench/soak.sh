#!/usr/bin/env bash
# soak.sh: mixed xroce traffic for a long time on impaired two-plane
# fabrics (tests/fabric/fabric.sh planes 2), checking that nothing is
# corrupted, nothing that should succeed fails, and nothing grows.
#
# One AF_XDP socket per (interface, queue) is all the kernel allows, and
# libxroce binds queue 0 of every plane: one xroce process per host
# interface at a time.  So the concurrent parts each get a planes-2 fabric
# of their own (two hosts, a switch, two planes), all impaired alike:
#   perf     an `xroce perf server` (h1, both planes) that lives the whole
#            soak, its RSS sampled every round; each round an `xroce perf
#            client` from h0: bandwidth with 1-16 connections and 1-16 paths
#            each, or latency ping-pong
#   xferK    (K = 1, 2) each round an `xroce send` -> `xroce recv` pair
#            over both planes, in a random direction, of a random size
#            (1 B .. 64 MiB), WRITE size and number of paths: WRITEs +
#            WRITE_WITH_IMM; the receiver checks every byte and the sender
#            gets its verdict
#   verbs    if build/tests/itest_verbs exists: each round a client/server
#            pair on plane 0 (SEND/RECV, READ, streams, receiver not
#            ready, remote errors: it checks every completion itself)
# The fault injector, all the time on every fabric: every 1-4 s a new
# random loss rate (0..10%) on every switch port (data, ACKs and control
# messages, both ways), and every 2-6 s plane 1 is blackholed or given back
# (both directions): its paths fail over to plane 0 and come back.
#
# After each round (all its parts finished): every host's XDP program
# must hold exactly the map entries it held before the first round
# (domains, memory regions, connections, posted receives, open READ
# windows: only the perf server's), and `xroce stats` must show the same
# connections.  At the end the perf server's RSS must not have grown by
# more than max(16 MiB, 25%) over its value after the first round.
#
# Exit 1 on any failed or unverified transfer, failed perf or itest run,
# state that does not return to baseline, or RSS growth; the soak runs its
# whole time regardless and lists every failure.  Summary: rounds,
# transfers, bytes, packets the switches dropped and blackholed, plane-1
# failovers, connections made, RSS start/end.
#
# Usage: tests/bench/soak.sh [--minutes N] [--quick] [--seed S] [--keep DIR]
#   --minutes N  duration (default 10)       --quick     60 s (test suite)
#   --seed S     RANDOM seed (default: time) --keep DIR  keep the logs
# Needs root; everything it creates is removed on exit or Ctrl-C.
# shellcheck disable=SC2154 # FAB_* come from the fabrics' env files
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

SECS=600
SEED=$(date +%s)
KEEP=
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) [[ ${2:-} =~ ^[1-9][0-9]{0,3}$ ]] || xr_die "--minutes: 1..9999"; SECS=$(($2 * 60)); shift 2 ;;
	--quick) SECS=60; shift ;;
	--seed) [[ ${2:-} =~ ^[0-9]+$ ]] || xr_die "--seed: a number"; SEED=$2; shift 2 ;;
	--keep) KEEP=${2:-}; [ -n "$KEEP" ] || xr_die "--keep: a directory"; shift 2 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) xr_die "usage: $0 [--minutes N] [--quick] [--seed S] [--keep DIR]" ;;
	esac
done
RANDOM=$SEED
xr_need_root
xr_need_exec build/xroce build/xrfabric
xr_need_cmd python3 bpftool nsenter ss timeout
TS=${XR_TIME_SCALE:-1}

xr_tmpdir xrsoak
[ -z "$KEEP" ] || xr_cleanup_push "mkdir -p '$KEEP' && cp -r '$TMP'/. '$KEEP'/"
# Copies of the binaries: a rebuild during the soak cannot swap them.
xr_private_bins
XRF=$XRFABRIC
ITEST=
if [ -x build/tests/itest_verbs ]; then
	cp build/tests/itest_verbs "$TMP/" && ITEST=$TMP/itest_verbs
fi

FABS=(perf xfer1 xfer2)
[ -z "$ITEST" ] || FABS+=(verbs)
declare -A NS_A NS_B SWNS IP_A IP_B
for f in "${FABS[@]}"; do
	xr_fab_up planes 2
	NS_A[$f]=$FAB_h0_NS
	NS_B[$f]=$FAB_h1_NS
	SWNS[$f]=$FAB_SWITCHES
	IP_A[$f]=$FAB_h0_IP4_0
	IP_B[$f]=$FAB_h1_IP4_0
	for ns in "$FAB_h0_NS" "$FAB_h1_NS"; do
		for i in 0 1; do
			nsx "$ns" "$XROCE" attach --force "eth$i" >/dev/null || xr_die "attach eth$i in $ns"
		done
	done
done
IFS2="-i eth0 -i eth1"

FAILS=()
fail_note() { FAILS+=("$*"); printf '  FAIL %s\n' "$*"; }

# Background jobs of this script, killed on exit (tearing the fabrics
# down kills what runs inside their namespaces).
BG=()
bg_kill() {
	local p
	for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${BG[@]}"; do wait "$p" 2>/dev/null; done
	BG=()
}
xr_cleanup_push "bg_kill"

# ---- the fault injector ------------------------------------------------------
fabset() { # PORT SETTING: on every fabric's switch
	local f
	for f in "${FABS[@]}"; do
		"$XRF" set --netns "${SWNS[$f]}" --port "$1" "$2" >/dev/null
	done
}
chaos() {
	local t=0 bh=0 next_loss=0 next_bh=$((2 + RANDOM % 5)) p port
	RANDOM=$((SEED + 1))
	while :; do
		if [ "$t" -ge "$next_loss" ]; then
			p=$(printf '0.%03d' $((RANDOM % 101)))
			for port in a0 b0 a1 b1; do fabset "$port" "loss=$p"; done
			echo "$(date +%s) loss $p"
			next_loss=$((t + 1 + RANDOM % 4))
		fi
		if [ "$t" -ge "$next_bh" ]; then
			bh=$((1 - bh))
			if [ "$bh" -eq 1 ]; then
				fabset a1 blackhole=all
				fabset b1 blackhole=all
				echo "$(date +%s) blackhole on"
			else
				fabset a1 blackhole=off
				fabset b1 blackhole=off
				echo "$(date +%s) blackhole off"
			fi
			next_bh=$((t + 2 + RANDOM % 5))
		fi
		sleep 1
		t=$((t + 1))
	done
}
chaos_calm() {
	local port
	for port in a0 b0 a1 b1; do fabset "$port" loss=0; done
	fabset a1 blackhole=off
	fabset b1 blackhole=off
}

# ---- observations ----------------------------------------------------------
# map_counts NS: "domains mrs conns rq reads" of the xroce program in NS.
map_counts() { nsx "$1" python3 "$XR_PY/xdpstate.py" --counts "$XROCE" eth0; }
# stats_conns NS: connections `xroce stats` sees in NS (telemetry slots)
stats_conns() {
	nsx "$1" "$XROCE" stats --json -n 1 2>/dev/null |
		xr_json 'len(j["connections"])' 2>/dev/null || echo error
}
host_state() { echo "$(map_counts "$1") / $(stats_conns "$1")"; }
all_state() {
	local f
	for f in "${FABS[@]}"; do
		printf '%s: %s | %s; ' "$f" "$(host_state "${NS_A[$f]}")" "$(host_state "${NS_B[$f]}")"
	done
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# ---- the long-lived perf server ----------------------------------------------
# nsenter execs the program: $! is the server itself (for its RSS).
# shellcheck disable=SC2086 # IFS2 is a list of options
nsenter --net="/var/run/netns/${NS_B[perf]}" "$XROCE" perf server $IFS2 --port 4796 \
	>"$TMP/perf_server.log" 2>&1 &
PSRV=$!
BG+=("$PSRV")
xr_listening "${NS_B[perf]}" 4796 || xr_die "the perf server does not listen: $(cat "$TMP/perf_server.log")"

chaos >"$TMP/chaos.log" 2>&1 &
CHAOS=$!
BG+=("$CHAOS")

# ---- the parts of a round (each in the background, result in files) --------
SIZES=(1 4k 100k 1M 3M 16M 64M 23456789)
WRS=(64k 256k 1M)
BUFS=(2M 8M 16M)
TRANSFERS=0
BYTES=0
ROUNDS=0
PERF_RUNS=0
CONNS=0
ITEST_RUNS=0

bytes_of() { # 1 4k 1M ... -> bytes
	case $1 in
	*k) echo $((${1%k} * 1024)) ;;
	*M) echo $((${1%M} * 1048576)) ;;
	*) echo "$1" ;;
	esac
}

xfer_start() { # FABRIC
	local f=$1 size=${SIZES[RANDOM % ${#SIZES[@]}]} wr=${WRS[RANDOM % ${#WRS[@]}]}
	local buf=${BUFS[RANDOM % ${#BUFS[@]}]} paths=$((1 + RANDOM % 16))
	local src=${NS_A[$f]} dst=${NS_B[$f]} ip=${IP_B[$f]}
	if [ $((RANDOM % 3)) -eq 0 ]; then src=${NS_B[$f]} dst=${NS_A[$f]} ip=${IP_A[$f]}; fi
	echo "$size (WRITEs of $wr, $paths paths)" >"$TMP/$f.what"
	echo "$size" >"$TMP/$f.size"
	(
		# shellcheck disable=SC2086
		nsx "$dst" timeout $((180 * TS)) "$XROCE" recv $IFS2 -P "$paths" -b "$buf" \
			--accept-timeout $((30000 * TS)) --idle $((15000 * TS)) -t $((5000 * TS)) --json \
			>"$TMP/$f.recv" 2>"$TMP/$f.recv.err"
		echo $? >"$TMP/$f.recv.rc"
	) &
	PIDS+=($!)
	(
		xr_listening "$dst" 4794 || { echo 99 >"$TMP/$f.send.rc"; exit; }
		# shellcheck disable=SC2086
		nsx "$src" timeout $((180 * TS)) "$XROCE" send $IFS2 -P "$paths" "$ip" -n "$size" \
			-w "$wr" -t $((5000 * TS)) --json >"$TMP/$f.send" 2>"$TMP/$f.send.err"
		echo $? >"$TMP/$f.send.rc"
	) &
	PIDS+=($!)
}

xfer_check() { # FABRIC
	local f=$1 want
	want=$(bytes_of "$(cat "$TMP/$f.size")")
	if ! python3 "$XR_PY/soak_xfer_check.py" "$TMP/$f" "$want" 2>"$TMP/$f.why"; then
		fail_note "round $ROUNDS: $f transfer of $(cat "$TMP/$f.what"): $(tail -1 "$TMP/$f.why"); send: $(tail -c 200 "$TMP/$f.send.err" | tr '\n' ' '); recv: $(tail -c 200 "$TMP/$f.recv.err" | tr '\n' ' ')"
		for x in send.err recv.err send recv; do
			cp "$TMP/$f.$x" "$TMP/fail_r${ROUNDS}_$f.$x" 2>/dev/null
		done
		return
	fi
	TRANSFERS=$((TRANSFERS + 1))
	BYTES=$((BYTES + want))
	CONNS=$((CONNS + 1))
}

perf_start() {
	local args c=1
	if [ $((RANDOM % 3)) -eq 0 ]; then
		args="-m lat -n $((300 + RANDOM % 1500)) -s 8,4096 -P $((1 + RANDOM % 16))"
	else
		c=$((1 + RANDOM % 16))
		args="-d $((1 + RANDOM % 3)) -c $c -P $((1 + RANDOM % 16)) -q $((4 + RANDOM % 29)) -s 4096,65536"
	fi
	echo "$args" >"$TMP/perf.args"
	echo "$c" >"$TMP/perf.conns"
	(
		# shellcheck disable=SC2086
		nsx "${NS_A[perf]}" timeout $((120 * TS)) "$XROCE" perf client $IFS2 "${IP_B[perf]}" \
			-p 4796 $args --json >"$TMP/perf.json" 2>"$TMP/perf.err"
		echo $? >"$TMP/perf.rc"
	) &
	PIDS+=($!)
}

perf_check() {
	if [ "$(cat "$TMP/perf.rc")" != 0 ]; then
		fail_note "round $ROUNDS: perf client ($(cat "$TMP/perf.args")) exit $(cat "$TMP/perf.rc"): $(tail -c 300 "$TMP/perf.err" | tr '\n' ' ')"
		cp "$TMP/perf.err" "$TMP/fail_r${ROUNDS}_perf.err"
		return
	fi
	PERF_RUNS=$((PERF_RUNS + 1))
	CONNS=$((CONNS + $(cat "$TMP/perf.conns")))
}

itest_start() {
	(
		nsx "${NS_B[verbs]}" timeout $((300 * TS)) "$ITEST" server eth0 >"$TMP/itest.srv" 2>&1
		echo $? >"$TMP/itest.srv.rc"
	) &
	PIDS+=($!)
	(
		xr_listening "${NS_B[verbs]}" 4797 || { echo 99 >"$TMP/itest.cli.rc"; exit; }
		# Whether stream 2 overtakes stream 1 depends on where the losses
		# fall: a property test_verbs.sh checks, not a soak check.
		nsx "${NS_A[verbs]}" env XR_VERBS_STREAM_OVERTAKE=0 timeout $((300 * TS)) "$ITEST" \
			client eth0 "${IP_B[verbs]}" >"$TMP/itest.cli" 2>&1
		echo $? >"$TMP/itest.cli.rc"
	) &
	PIDS+=($!)
}

itest_check() {
	if [ "$(cat "$TMP/itest.cli.rc")" != 0 ] || [ "$(cat "$TMP/itest.srv.rc")" != 0 ]; then
		fail_note "round $ROUNDS: itest_verbs client exit $(cat "$TMP/itest.cli.rc"), server exit $(cat "$TMP/itest.srv.rc"): $(grep -hE "FAIL|ERROR|SUMMARY" "$TMP/itest.cli" "$TMP/itest.srv" | head -3 | tr '\n' ' ')"
		cp "$TMP/itest.cli" "$TMP/fail_r${ROUNDS}_itest.cli"
		cp "$TMP/itest.srv" "$TMP/fail_r${ROUNDS}_itest.srv"
		return
	fi
	ITEST_RUNS=$((ITEST_RUNS + 1))
}

# Once a round's processes are gone, the XDP maps and the telemetry must
# be back at the baseline (closing takes a moment: CLOSE messages cross the
# lossy fabric, and a peer that never heard one notices after its timeout).
settle_check() {
	local i now
	for i in $(seq 1 $((30 * TS))); do
		now=$(all_state)
		[ "$now" = "$BASE" ] && return 0
		sleep 0.5
	done
	fail_note "round $ROUNDS: state did not return to baseline: now $now; baseline $BASE"
	BASE=$now # report each growth once
}

sleep 1
BASE=$(all_state)
BASE0=$BASE
echo "soak: ${SECS} s, fabrics ${FABS[*]} (seed $SEED)"
echo "baseline (domains mrs conns rq reads / telemetry conns, h0 | h1): $BASE"
T0=$(date +%s)
RSS0=
while [ $(($(date +%s) - T0)) -lt "$SECS" ]; do
	ROUNDS=$((ROUNDS + 1))
	PIDS=()
	rm -f "$TMP"/*.rc
	perf_start
	xfer_start xfer1
	xfer_start xfer2
	[ -z "$ITEST" ] || itest_start
	for p in "${PIDS[@]}"; do wait "$p"; done
	perf_check
	xfer_check xfer1
	xfer_check xfer2
	[ -z "$ITEST" ] || itest_check
	settle_check
	rs=$(rss_kb "$PSRV")
	[ -n "$RSS0" ] || RSS0=$rs
	printf 'round %d (%d s): %d transfers verified (%d MiB), %d perf runs, %d itest runs; perf server RSS %d kB; %s\n' \
		"$ROUNDS" $(($(date +%s) - T0)) "$TRANSFERS" $((BYTES >> 20)) "$PERF_RUNS" "$ITEST_RUNS" \
		"$rs" "$(tail -1 "$TMP/chaos.log" 2>/dev/null | cut -d' ' -f2-)"
	kill -0 "$PSRV" 2>/dev/null || { fail_note "the perf server died: $(tail -3 "$TMP/perf_server.log")"; break; }
done

# ---- the end ----------------------------------------------------------------
kill "$CHAOS" 2>/dev/null
wait "$CHAOS" 2>/dev/null
chaos_calm
RSS1=$(rss_kb "$PSRV")
if [ -n "$RSS0" ]; then
	lim=$((RSS0 / 4))
	[ "$lim" -ge 16384 ] || lim=16384
	[ "$RSS1" -le $((RSS0 + lim)) ] || fail_note "perf server RSS grew from $RSS0 kB to $RSS1 kB"
fi
FINAL=$(all_state)
[ "$FINAL" = "$BASE0" ] || fail_note "state at the end: $FINAL; at the start: $BASE0"
DROPS=0
BH=0
for f in "${FABS[@]}"; do
	read -r d b <<<"$("$XRF" show --netns "${SWNS[$f]}" --json |
		xr_json '"%d %d" % tuple(sum(p["counters"][k] for p in j["ports"]) for k in ("drop_loss", "blackholed"))')"
	DROPS=$((DROPS + d))
	BH=$((BH + b))
done
FAILOVERS=$(grep -c "blackhole on" "$TMP/chaos.log")
RATES=$(grep -c " loss " "$TMP/chaos.log")

printf '\n=== soak summary (%d s, seed %d, fabrics: %s)\n' $(($(date +%s) - T0)) "$SEED" "${FABS[*]}"
printf 'rounds                 %d\n' "$ROUNDS"
printf 'transfers verified     %d (%d MiB)\n' "$TRANSFERS" $((BYTES >> 20))
printf 'perf client runs       %d\n' "$PERF_RUNS"
printf 'itest_verbs runs       %s\n' "$([ -n "$ITEST" ] && echo "$ITEST_RUNS" || echo "skipped (no build/tests/itest_verbs)")"
printf 'connections (send/recv + perf)  %d\n' "$CONNS"
printf 'loss settings          %d (0..10%%); %d packets dropped by the switches\n' "$RATES" "$DROPS"
printf 'plane-1 failovers      %d blackhole episodes; %d packets blackholed\n' "$FAILOVERS" "$BH"
printf 'perf server RSS        %s kB after round 1, %s kB at the end\n' "${RSS0:-?}" "$RSS1"
printf 'state at the start     %s\n' "$BASE0"
printf 'state at the end       %s\n' "$FINAL"
if [ ${#FAILS[@]} -gt 0 ]; then
	printf '%d failure(s):\n' "${#FAILS[@]}"
	printf '  %s\n' "${FAILS[@]}"
	exit 1
fi
echo "soak: passed"
