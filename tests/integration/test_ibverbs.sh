#!/usr/bin/env bash
# test_ibverbs.sh: Debian's own ibverbs binaries, unmodified, between two
# namespaces on xroce (`xroce run` puts build/lib/libibverbs.so.1 first):
#
#   ibv_devices, ibv_devinfo -v    the device, its port (ACTIVE, Ethernet),
#                                  its RoCE v2 GIDs (::ffff:a.b.c.d)
#   ibv_rc_pingpong -g 0 -c        SEND ping-pong with its data check;
#                                  also with -e (completion channel)
#   ibv_srq_pingpong, ib_send_bw --use-srq [-q 4]
#                                  16 QPs / one QP / four QPs on a shared
#                                  receive queue, at 0% and 1% loss (with
#                                  four, receives lent to a QP that is done
#                                  must move to the one still receiving)
#   ib_send_bw -q 4 -s 8M          four QPs with 8 MiB messages on one
#                                  device: none may starve the others
#   ib_write_bw ib_write_lat ib_send_bw ib_send_lat ib_read_bw ib_read_lat
#                                  at 0% and 1% random loss (both ways,
#                                  data, ACKs, connection exchange),
#                                  ib_write_bw also at 10%
#   itest_ibv_basic                our own ibverbs program (its header)
#   ibv_rc_pingpong with --key     a cluster key on both sides connects;
#                                  another key on one side connects nothing
#
# on one plane (fabric.sh pair) and on four (fabric.sh planes 4, one
# device over the four interfaces: XROCE_IBV_DEVICES); on four planes every
# interface must have carried data (the connection sprays over them).  At
# loss the switch must really have dropped packets.
#
# Usage: tests/integration/test_ibverbs.sh [--quick]   (root)
#   --quick  one plane, no 10% run
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh
# shellcheck source=tests/lib/xroce.sh
. tests/lib/xroce.sh

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
ITEST=$PWD/build/tests/itest_ibv_basic
for f in "$XROCE" "$XRFABRIC" "$ITEST" build/lib/libibverbs.so.1; do
	[ -e "$f" ] || xr_die "$f missing: run make first"
done
for b in ibv_devices ibv_devinfo ibv_rc_pingpong ib_write_bw ib_read_lat; do
	command -v "$b" >/dev/null || xr_die "$b missing: bash tests/deps.sh"
done
QUICK=0
[ "${1:-}" = --quick ] && QUICK=1
TS=${XR_TIME_SCALE:-1}
TCP_PORT=18515
# Why a QP failed (peer silence, retries, ...) is a library warning: kept
# in each program's output, shown when a pair fails.
export XROCE_LOG_LEVEL=${XROCE_LOG_LEVEL:-warn}

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"

# ---- fabric ------------------------------------------------------------------
# fabric NPLANES: namespaces A and B joined by NPLANES planes, xroce on each.
fabric() {
	local n=$1 i
	FAB=${PFX}p$n
	xr_cleanup_push "bash tests/fabric/fabric.sh down $FAB >/dev/null 2>&1"
	if [ "$n" -eq 1 ]; then
		bash tests/fabric/fabric.sh up pair --prefix "$FAB" --env "$TMP/env" >/dev/null
	else
		bash tests/fabric/fabric.sh up planes "$n" --prefix "$FAB" \
			--env "$TMP/env" >/dev/null
	fi
	# shellcheck disable=SC1091 # written by fabric.sh up
	. "$TMP/env"
	# shellcheck disable=SC2154 # FAB_* come from the env file
	{
		A=$FAB_h0_NS
		B=$FAB_h1_NS
		SW=${FAB_h0_PORT_0%%:*}
		BIP=$FAB_h1_IP4_0
	}
	NPLANES=$n
	IFS_LIST=""
	for ((i = 0; i < n; i++)); do
		nsx "$A" "$XROCE" attach --force "eth$i" >/dev/null
		nsx "$B" "$XROCE" attach --force "eth$i" >/dev/null
		IFS_LIST+="${IFS_LIST:+,}eth$i"
	done
	if [ "$n" -eq 1 ]; then
		DEV=xroce_eth0
		unset XROCE_IBV_DEVICES
	else
		DEV=xroce_planes
		export XROCE_IBV_DEVICES="$DEV=$IFS_LIST"
	fi
}

set_loss() {
	local i
	for ((i = 0; i < NPLANES; i++)); do
		"$XRFABRIC" set --netns "$SW" --port "a$i" "loss=$1" >/dev/null
		"$XRFABRIC" set --netns "$SW" --port "b$i" "loss=$1" >/dev/null
	done
}

drops() {
	"$XRFABRIC" show --netns "$SW" --json |
		xr_json 'sum(p["counters"]["drop_loss"] for p in j["ports"])'
}

# tx bytes of each of A's planes, space separated
tx_bytes() {
	local i out=""
	for ((i = 0; i < NPLANES; i++)); do
		out+="$(nsx "$A" ip -s -j link show "eth$i" | xr_json 'j[0]["stats64"]["tx"]["bytes"]') "
	done
	echo "$out"
}

wait_tcp() {
	local _
	for _ in $(seq 1 200); do
		nsx "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# pair NAME SERVER_CMD... -- CLIENT_CMD...: server in B, client in A (both
# under `xroce run`, with the options in SRUN / CRUN); both must exit 0.
# On failure both outputs are shown without their address lines (a
# program's stderr comes before its buffered stdout, and 16 QPs print 32
# address lines).
SRUN=()
CRUN=()
pair() {
	local name=$1 scmd=() ccmd=() spid rc=0 src=0
	shift
	while [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	nsx "$B" timeout $((180 * TS)) "$XROCE" run "${SRUN[@]}" -- "${scmd[@]}" >"$TMP/srv.out" 2>&1 &
	spid=$!
	xr_cleanup_push "kill $spid 2>/dev/null; wait $spid 2>/dev/null"
	wait_tcp "$B" "$TCP_PORT" || true # if not, the client says why
	nsx "$A" timeout $((180 * TS)) "$XROCE" run "${CRUN[@]}" -- "${ccmd[@]}" >"$TMP/cli.out" 2>&1 || rc=$?
	wait "$spid" || src=$?
	if [ "$rc" -ne 0 ] || [ "$src" -ne 0 ]; then
		printf -- '--- client (rc %s): %s\n%s\n--- server (rc %s): %s\n%s\n' \
			"$rc" "${ccmd[*]}" "$(grep -v 'address' "$TMP/cli.out" | tail -30)" \
			"$src" "${scmd[*]}" "$(grep -v 'address' "$TMP/srv.out" | tail -30)" >&2
		# the library's warnings (stderr, so before the buffered output)
		printf -- '--- library messages, client then server:\n%s\n%s\n' \
			"$(grep '^xroce: ' "$TMP/cli.out" | tail -20)" \
			"$(grep '^xroce: ' "$TMP/srv.out" | tail -20)" >&2
		xr_die "$name"
	fi
}

# perftest TOOL LOSS [ARGS]: one run of a perftest benchmark, its result line kept
perftest() {
	local tool=$1 loss=$2 args=(-d "$DEV" -x 0 -p "$TCP_PORT") line
	shift 2
	args+=("$@")
	case " $* " in
	*" -n "*) ;;
	*)
		case $tool in
		*_bw) args+=(-n 1000) ;;
		*_lat) args+=(-n 200) ;;
		esac
		;;
	esac
	pair "$tool at $loss loss ($NPLANES planes)" "$tool" "${args[@]}" -- \
		"$tool" "${args[@]}" "$BIP"
	# the line after the column headers: size, iterations, figures
	line=$(awk '/#bytes/ { getline; print; exit }' "$TMP/cli.out")
	[ -n "$line" ] || xr_die "$tool: no result line: $(cat "$TMP/cli.out")"
	python3 "$XR_PY/perftest_line.py" check "$tool" "$line" ||
		xr_die "$tool: implausible result: $line"
	RESULT=$line
}

# With a cluster key (xroce run --key) the connection halves are signed:
# the same key on both sides connects; another key on the client's side
# connects nothing: the server's halves reach the client's XDP program
# (rx_bind) and are refused there by the library, the client's work fails
# as unanswered, no data moves.
keyed() {
	local spid rc=0 b0 b1
	head -c 32 /dev/urandom >"$TMP/key1"
	head -c 32 /dev/urandom >"$TMP/key2"
	SRUN=(--key "$TMP/key1")
	CRUN=(--key "$TMP/key1")
	pair "ibv_rc_pingpong with a cluster key" ibv_rc_pingpong -d "$DEV" -g 0 -c -n 200 \
		-p "$TCP_PORT" -- ibv_rc_pingpong -d "$DEV" -g 0 -c -n 200 -p "$TCP_PORT" "$BIP"
	grep -q "200 iters" "$TMP/cli.out" || xr_die "keyed ibv_rc_pingpong: $(cat "$TMP/cli.out")"
	pass "ibv_rc_pingpong -c with the same cluster key on both sides"
	SRUN=()
	CRUN=()
	b0=$(xr_counter "$A" rx_bind)
	nsx "$B" timeout $((60 * TS)) "$XROCE" run --key "$TMP/key1" -- ibv_rc_pingpong \
		-d "$DEV" -g 0 -n 5 -p "$TCP_PORT" >"$TMP/srv.out" 2>&1 &
	spid=$!
	xr_cleanup_push "kill $spid 2>/dev/null; wait $spid 2>/dev/null"
	wait_tcp "$B" "$TCP_PORT" || true
	nsx "$A" timeout $((60 * TS)) "$XROCE" run -v --key "$TMP/key2" -- ibv_rc_pingpong \
		-d "$DEV" -g 0 -n 5 -p "$TCP_PORT" "$BIP" >"$TMP/cli.out" 2>&1 || rc=$?
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		xr_die "ibv_rc_pingpong with another key: rc $rc: $(tail -5 "$TMP/cli.out")"
	fi
	grep -q "iters in" "$TMP/cli.out" && xr_die "another key: data moved: $(cat "$TMP/cli.out")"
	grep -q "did not answer the connection exchange" "$TMP/cli.out" ||
		xr_die "another key: not refused as unanswered: $(cat "$TMP/cli.out")"
	b1=$(xr_counter "$A" rx_bind)
	[ "$((b1 - b0))" -gt 0 ] || xr_die "another key: no half of the server arrived"
	pass "with another key on the client: $((b1 - b0)) halves of the server arrived and were refused, the client's work failed unanswered (rc $rc)"
}

run_plane_set() {
	local loss t d0 d1 tx0 tx1 carried
	fabric "$1"
	echo "== $NPLANES plane(s): device $DEV"
	nsx "$A" "$XROCE" run -- ibv_devices >"$TMP/devs.out" 2>&1
	grep -q "$DEV" "$TMP/devs.out" || xr_die "ibv_devices: $(cat "$TMP/devs.out")"
	nsx "$A" "$XROCE" run -- ibv_devinfo -v -d "$DEV" >"$TMP/info.out" 2>&1 ||
		xr_die "ibv_devinfo: $(cat "$TMP/info.out")"
	grep -q "state:.*PORT_ACTIVE" "$TMP/info.out" &&
		grep -q "link_layer:.*Ethernet" "$TMP/info.out" &&
		grep -q "GID\[  0\]:.*::ffff:$FAB_h0_IP4_0, RoCE v2" "$TMP/info.out" ||
		xr_die "ibv_devinfo: $(cat "$TMP/info.out")"
	pass "ibv_devices, ibv_devinfo -v: $DEV, port active, Ethernet, GID 0 ::ffff:$FAB_h0_IP4_0 RoCE v2"
	for loss in 0 0.01; do
		set_loss "$loss"
		d0=$(drops)
		tx0=$(tx_bytes)
		pair "ibv_rc_pingpong -c at $loss" ibv_rc_pingpong -d "$DEV" -g 0 -c -n 500 \
			-p "$TCP_PORT" -- ibv_rc_pingpong -d "$DEV" -g 0 -c -n 500 -p "$TCP_PORT" "$BIP"
		grep -q "500 iters" "$TMP/cli.out" || xr_die "ibv_rc_pingpong: $(cat "$TMP/cli.out")"
		pass "ibv_rc_pingpong -g 0 -c (data checked) at $loss loss"
		pair "ibv_srq_pingpong at $loss" ibv_srq_pingpong -d "$DEV" -g 0 -n 2000 \
			-p "$TCP_PORT" -- ibv_srq_pingpong -d "$DEV" -g 0 -n 2000 -p "$TCP_PORT" "$BIP"
		grep -q "2000 iters" "$TMP/cli.out" || xr_die "ibv_srq_pingpong: $(cat "$TMP/cli.out")"
		pass "ibv_srq_pingpong (16 QPs on one shared receive queue) at $loss loss"
		perftest ib_send_bw "$loss" --use-srq
		pass "ib_send_bw --use-srq at $loss loss: $RESULT"
		perftest ib_send_bw "$loss" --use-srq -q 4
		pass "ib_send_bw --use-srq -q 4 at $loss loss: $RESULT"
		perftest ib_send_bw "$loss" -q 4 -s 8388608 -n 100
		pass "ib_send_bw -q 4 -s 8M (every QP gets transmit room) at $loss loss: $RESULT"
		for t in ib_write_bw ib_write_lat ib_send_bw ib_send_lat ib_read_bw ib_read_lat; do
			perftest "$t" "$loss"
			pass "$t at $loss loss: $RESULT"
		done
		d1=$(drops)
		tx1=$(tx_bytes)
		if [ "$loss" != 0 ]; then
			[ $((d1 - d0)) -gt 50 ] || xr_die "loss $loss: the switch dropped only $((d1 - d0))"
			pass "the switch dropped $((d1 - d0)) packets"
		fi
		if [ "$NPLANES" -gt 1 ]; then
			carried=$(python3 "$XR_PY/planes_carried.py" "$tx0" "$tx1" 10) ||
				xr_die "not every plane carried more than 10 MB: $carried"
			pass "every plane carried data: $carried"
		fi
	done
	set_loss 0
	pair "ibv_rc_pingpong -e" ibv_rc_pingpong -d "$DEV" -g 0 -e -n 300 -p "$TCP_PORT" \
		-- ibv_rc_pingpong -d "$DEV" -g 0 -e -n 300 -p "$TCP_PORT" "$BIP"
	pass "ibv_rc_pingpong -e (completion channel)"
	[ "$NPLANES" -gt 1 ] || keyed
	if [ "$NPLANES" -eq 1 ] && [ "$QUICK" -eq 0 ]; then
		set_loss 0.1
		d0=$(drops)
		perftest ib_write_bw 0.1
		pass "ib_write_bw at 10% loss: $RESULT (switch dropped $(($(drops) - d0)))"
		set_loss 0
	fi
	for loss in 0 0.01; do
		[ "$NPLANES" -gt 1 ] && [ "$loss" != 0 ] && continue
		set_loss "$loss"
		# With loss, the client also keeps deregistered memory idle
		# (phase K checks both ways).
		cache=0
		[ "$loss" != 0 ] && cache=16
		pair "itest_ibv_basic at $loss" env ITEST_IBV_DEVICE="$DEV" "$ITEST" server \
			"$TCP_PORT" -- env ITEST_IBV_DEVICE="$DEV" XROCE_MR_CACHE_MB=$cache \
			"$ITEST" client "$BIP" "$TCP_PORT"
		grep -q "client: all phases passed" "$TMP/cli.out" &&
			grep -q "server: all phases passed" "$TMP/srv.out" ||
			xr_die "itest_ibv_basic: $(cat "$TMP/cli.out" "$TMP/srv.out")"
		grep -E "^client [A-K]:|^server [B-CGH]:" "$TMP/cli.out" "$TMP/srv.out" |
			sed 's/^[^:]*:/     /'
		pass "itest_ibv_basic at $loss loss"
	done
	set_loss 0
	bash tests/fabric/fabric.sh down "$FAB" >/dev/null 2>&1
}

run_plane_set 1
[ "$QUICK" -eq 1 ] || run_plane_set 4
echo "test_ibverbs: $CHECKS checks passed"
