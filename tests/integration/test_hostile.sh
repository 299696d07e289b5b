#!/usr/bin/env bash
# test_hostile.sh: the attacks of issue 15, end to end, against xroce as
# built.  Hosts A (h0, `xroce send`) and B (r, `xroce recv`) run xroce; M
# (h1) is an off-path attacker with plain Linux and tests/lib/xrtest/
# attack.py; the switch namespace is the on-path position.  Each attack is
# run without a key (what is still open is asserted as open) and, where a
# key changes the outcome, with one (everything refused).
#
#   1  malformed control datagrams, spoofed from A: dropped and counted
#      (malformed / unauth), the listener serves A afterwards
#   2  64 CONNECTs from M that never complete: answered with stateless
#      cookies (no key) or not at all (key); no slot held, A served
#   3  M connects first: accepted without key or --from (open, by design:
#      a listener accepts anyone unless told); refused and counted with
#      --from A or with a key (M without it, or with a wrong one)
#   4  on path: A's data dropped at the switch, a CLOSE claiming delivery
#      sent to A.  From the switch's own address: refused (spoofed), the
#      WRITE fails.  Spoofed as B without a key: the WRITE completes as
#      success (open: no key, no authentication).  With a key: refused
#      (unauth), the WRITE fails
#   5  a CONNECT claiming a third party's address as its data plane: no
#      answer at all (malformed), so nothing is sent to the third party
#   5b on path: A's CONNECT answered by the switch (nobody listens in B).
#      From the switch's address: dropped (spoofed).  Spoofed as B without
#      a key: taken (open: REJECT refuses, ACCEPT leads nowhere).  With a
#      key: dropped (unauthenticated); with B listening, A is served
#   6  on path: A's data dropped beyond the switch, each DATA packet seen
#      answered by a forged ACK (from B's data address and port, with the
#      token the CONNECT showed).  Without a key: taken, the WRITE
#      completes as success (open).  With a key: every one dropped
#      (drop_mac), the WRITE fails
#   7  B killed, a squatter (another process, no mark) binds B's control port: B's XDP still
#      sees the domain dead (drop_dead), A's send fails, nothing of it is
#      acknowledged into the orphaned memory
#   8  a connected peer M floods its own ACKs into B's stopped process: its
#      share of B's event ring stops them (drop_evq_share), the ring never
#      fills, A's data keeps arriving
# Also: a keyed 4 MiB transfer through many key epochs (shortened).
# Forged or altered WRITEs and replays (the rest of 6) and READs after
# dereg (the rest of 8) are shown on the XDP program itself:
# tests/bpf/bpf_keyed.c (docs/SECURITY.md has the table).
# Usage: tests/integration/test_hostile.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
xr_need_exec "$XROCE" "$XRFABRIC"
ATK=$XR_PY/attack.py
PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_up incast 2 --rate 10gbit
# shellcheck disable=SC2154 # FAB_* from the env file
{
	A=$FAB_h0_NS
	M=$FAB_h1_NS
	B=$FAB_r_NS
	SW=${FAB_r_PORT_0%%:*}
	AIP=$FAB_h0_IP4_0
	BIP=$FAB_r_IP4_0
}
nsx "$A" "$XROCE" attach --force eth0 >/dev/null || xr_die "attach in $A"
nsx "$B" "$XROCE" attach --force eth0 >/dev/null || xr_die "attach in $B"
od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$TMP/key"
od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$TMP/wrong"

# listen [OPTS...]: `xroce recv` in B (pid in RPID), up and listening
listen() {
	nsenter --net="/var/run/netns/$B" timeout 60 "$XROCE" recv -i eth0 -b 1M \
		--accept-timeout 40000 --idle 3000 --json -v "$@" >"$TMP/recv.json" 2>"$TMP/recv.err" &
	RPID=$!
	xr_cleanup_push "kill $RPID"
	xr_wait_listen "$B"
}

# ctrl NS REASON: control messages NS's running xroce process dropped for
# REASON (malformed unauthenticated spoofed no_room refused), or "cookies"
ctrl() {
	nsx "$1" "$XROCE" stats -n 1 --json | xr_json \
		'sum((d["ctrl_cookies"] if a[0] == "cookies" else d["ctrl_dropped"][a[0]]) for d in j["domains"])' "$2"
}

# on_path CMD ARGS...: attack.py CMD in the switch (the on-path position),
# its JSON line to $TMP/atk.json; returns once it watches, its pid in APID
on_path() {
	local i
	rm -f "$TMP/ready"
	nsx "$SW" python3 "$ATK" "$@" --ready "$TMP/ready" >"$TMP/atk.json" &
	APID=$!
	for ((i = 0; i < 100; i++)); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
	[ -e "$TMP/ready" ] || fail "the attacker did not start: $*"
}

# check_ctrl WHAT REASON N: B's listener, once ended, reported N control
# messages dropped for REASON (malformed unauthenticated spoofed refused)
# or N cookies sent, in its closing line (-v)
check_ctrl() {
	local line got
	line=$(grep "closing device" "$TMP/recv.err" | tail -1)
	[ -n "$line" ] || fail "$1: the listener reported nothing: $(cat "$TMP/recv.err")"
	case $2 in
	malformed) got=$(grep -oE '[0-9]+ malformed' <<<"$line") ;;
	unauthenticated) got=$(grep -oE '[0-9]+ unauthenticated' <<<"$line") ;;
	spoofed) got=$(grep -oE '[0-9]+ from the wrong address' <<<"$line") ;;
	refused) got=$(grep -oE '[0-9]+ from outside accept_from' <<<"$line") ;;
	cookies) got=$(grep -oE '[0-9]+ cookies sent' <<<"$line") ;;
	esac
	# A's own connect earns one cookie per attempt: at least N then
	if [ "$2" = cookies ]; then
		[ "${got%% *}" -ge "$3" ] || fail "$1: '$got', want >= $3 ($line)"
		pass "$1"
		return
	fi
	[ "${got%% *}" = "$3" ] || fail "$1: '$got', want $3 ($line)"
	pass "$1"
}

# (a client whose connect timed out tries again, as a real one would: on
# a loaded host 5 s may pass unscheduled; the listener is the same process)
served() {
	local i rc
	for i in 1 2 3; do
		rc=0
		nsx "$A" timeout 30 "$XROCE" send -i eth0 "$BIP" -n 64k "$@" >"$TMP/send.out" 2>&1 || rc=$?
		if [ "$rc" -eq 0 ] || ! grep -q "cannot connect" "$TMP/send.out"; then
			break
		fi
		xr_log "  (connect attempt $i timed out, again)"
	done
	[ "$rc" -eq 0 ] || fail "A not served: $(cat "$TMP/send.out") / $(cat "$TMP/recv.err")"
	wait "$RPID" || fail "recv failed: $(cat "$TMP/recv.err")"
	check_has "B verified A's data" "$(cat "$TMP/recv.json")" '"verified":true'
}

stop_listener() { kill "$RPID" 2>/dev/null || true; wait "$RPID" 2>/dev/null || true; }

atk() { local ns=$1; shift; nsx "$ns" python3 "$ATK" "$@"; }

# ---- 1 ---------------------------------------------------------------------
echo "== 1: malformed control datagrams, spoofed from A"
listen
atk "$M" bad "$BIP" --spoof "$AIP" >/dev/null
sleep 0.3
served
check_ctrl "no key: 4 dropped as malformed" malformed 4
listen --key "$TMP/key"
atk "$M" bad "$BIP" --spoof "$AIP" >/dev/null
sleep 0.3
served --key "$TMP/key"
check_ctrl "key: the CONNECT dropped as unauthenticated" unauthenticated 1
check_ctrl "key: the other 3 dropped as malformed" malformed 3

echo "== key epochs: 4 MiB keyed, epochs of 256 packets (XROCE_KEY_EPOCH_PKTS)"
e0=$(xr_counter "$B" key_epoch)
m0=$(xr_counter "$B" drop_mac)
export XROCE_KEY_EPOCH_PKTS=256
listen --key "$TMP/key"
nsx "$A" timeout 30 "$XROCE" send -i eth0 "$BIP" -n 4M --key "$TMP/key" >"$TMP/send.out" 2>&1 ||
	fail "A not served across epochs: $(cat "$TMP/send.out") / $(cat "$TMP/recv.err")"
wait "$RPID" || fail "recv failed: $(cat "$TMP/recv.err")"
unset XROCE_KEY_EPOCH_PKTS
check_has "B verified A's data across epochs" "$(cat "$TMP/recv.json")" '"verified":true'
e1=$(xr_counter "$B" key_epoch)
[ $((e1 - e0)) -ge 4 ] || fail "B's XDP saw $((e1 - e0)) new epochs, want >= 4"
pass "B's XDP saw the sender move through $((e1 - e0)) epochs"
check_eq "no MAC failures on the way" "$(xr_counter "$B" drop_mac)" "$m0"

# ---- 2 ---------------------------------------------------------------------
echo "== 2: 64 CONNECTs from M, never completed"
listen
out=$(atk "$M" flood "$BIP" 64)
check_eq "no key: every one answered with a cookie" "$(xr_json 'j["cookie"]' <<<"$out")" 64
check_eq "no key: none accepted" "$(xr_json 'j["accept"]' <<<"$out")" 0
served
check_ctrl "no key: cookies counted (64, and the one A got)" cookies 65
listen --key "$TMP/key"
out=$(atk "$M" flood "$BIP" 64)
check_eq "key: no answer at all" "$(xr_json 'sum(j[k] for k in ("cookie","accept","reject"))' <<<"$out")" 0
served --key "$TMP/key"
check_ctrl "key: 64 unauthenticated" unauthenticated 64

# ---- 3 ---------------------------------------------------------------------
echo "== 3: M connects first"
listen
out=$(atk "$M" connect "$BIP")
check_eq "no key, no --from: M is accepted (open: a listener accepts anyone)" \
	"$(xr_json 'j["accept"]' <<<"$out")" 1
stop_listener
listen --from "$AIP"
out=$(atk "$M" connect "$BIP")
check_eq "--from A: M gets no answer" "$(xr_json 'sum(j[k] for k in ("cookie","accept","reject"))' <<<"$out")" 0
served
check_ctrl "--from A: M refused and counted" refused 1
listen --key "$TMP/key"
out=$(atk "$M" connect "$BIP")
check_eq "key: M without the key gets no answer" "$(xr_json 'j["accept"] + j["cookie"]' <<<"$out")" 0
out=$(atk "$M" connect "$BIP" --key "$TMP/wrong")
check_eq "key: M with a wrong key gets no answer" "$(xr_json 'j["accept"] + j["cookie"]' <<<"$out")" 0
served --key "$TMP/key"
check_ctrl "key: both counted unauthenticated" unauthenticated 2

# ---- 4 ---------------------------------------------------------------------
echo "== 4: on path, A's data dropped and a CLOSE claiming delivery sent to A"
"$XRFABRIC" set --netns "$SW" --port h0 blackhole=dport:4793 >/dev/null
# forged_close AS WANT_REASON [OPTS...]: the attack; sets SENDERR
forged_close() {
	local as=$1 reason=$2 spid rc=0
	shift 2
	listen "$@"
	on_path close h0 --as "$as"
	nsx "$A" timeout 30 "$XROCE" send -i eth0 "$BIP" -n 16k -t 3000 "$@" >"$TMP/send.out" 2>&1 &
	spid=$!
	wait "$APID" || fail "the attacker failed"
	check_has "attacker saw the handshake and sent its CLOSE ($as)" "$(cat "$TMP/atk.json")" '"seen": true'
	sleep 0.3
	if [ "$reason" != - ]; then
		[ "$(ctrl "$A" "$reason")" -ge 1 ] || fail "A did not count the CLOSE as $reason"
		pass "A dropped the CLOSE as $reason"
	fi
	wait "$spid" || rc=$?
	[ "$rc" -ne 0 ] || fail "A's send succeeded though its data was dropped"
	SENDERR=$(cat "$TMP/send.out")
	stop_listener
}
forged_close own spoofed
check_has "no key, from the switch's address: the WRITE failed, no false success" \
	"$SENDERR" 'a WRITE failed'
forged_close listener -
check_has "no key, spoofed as B: the WRITE completed as success, the QP then failed (open without a key)" \
	"$SENDERR" 'the connection failed'
grep -q 'a WRITE failed' <<<"$SENDERR" && fail "expected the open case, got: $SENDERR"
forged_close listener unauthenticated --key "$TMP/key"
check_has "key, spoofed as B: refused; the WRITE failed, no false success" \
	"$SENDERR" 'a WRITE failed'
"$XRFABRIC" set --netns "$SW" --port h0 blackhole=off >/dev/null

# ---- 5 ---------------------------------------------------------------------
echo "== 5: a CONNECT claiming A's address as M's data plane"
listen
out=$(atk "$M" reflect "$BIP" "$AIP")
check_eq "no answer at all (not even a cookie)" \
	"$(xr_json 'sum(j[k] for k in ("cookie","accept","reject"))' <<<"$out")" 0
served
check_ctrl "counted malformed" malformed 1

# ---- 5b --------------------------------------------------------------------
echo "== 5b: on path, answers to A's CONNECT from elsewhere than B's listener"
# Nobody listens in B, so only the attacker answers (no race with B's).
# forged_answer OP AS WANT_REASON [OPTS...]: the attack; sets SENDERR
forged_answer() {
	local op=$1 as=$2 reason=$3 spid rc=0
	shift 3
	on_path answer h0 --op "$op" --as "$as"
	nsx "$A" timeout 30 "$XROCE" send -i eth0 "$BIP" -n 16k -t 3000 "$@" >"$TMP/send.out" 2>&1 &
	spid=$!
	wait "$APID" || fail "the attacker failed"
	check_has "attacker saw the CONNECT and sent its ${op^^} ($as)" "$(cat "$TMP/atk.json")" '"seen": true'
	sleep 0.3
	if [ "$reason" != - ]; then
		[ "$(ctrl "$A" "$reason")" -ge 1 ] || fail "A did not count the ${op^^} as $reason"
		pass "A dropped the ${op^^} as $reason"
	fi
	wait "$spid" || rc=$?
	[ "$rc" -ne 0 ] || fail "A's send succeeded with nobody listening"
	SENDERR=$(cat "$TMP/send.out")
}
forged_answer reject own spoofed
check_has "no key, REJECT from the switch's address: ignored, A's connect ran to its timeout" \
	"$SENDERR" 'no answer'
forged_answer reject listener -
check_has "no key, REJECT spoofed as B: taken (open without a key: an on-path attacker can refuse for B)" \
	"$SENDERR" 'refused the connection'
forged_answer accept listener -
check_has "no key, ACCEPT spoofed as B: taken (open), and xroce send finds no xroce recv behind it" \
	"$SENDERR" 'the peer is not `xroce recv`'
forged_answer reject listener unauthenticated --key "$TMP/key"
check_has "key, REJECT spoofed as B: refused, A's connect ran to its timeout" "$SENDERR" 'no answer|without a valid signature'
forged_answer accept listener unauthenticated --key "$TMP/key"
check_has "key, ACCEPT spoofed as B: refused, A's connect ran to its timeout" "$SENDERR" 'no answer|without a valid signature'
# With B listening and a key, the forged answer and B's race; either order,
# A drops the forged one (its signature is checked before anything else)
# and takes B's.
listen --key "$TMP/key"
on_path answer h0 --op reject --as listener
served --key "$TMP/key" -v
wait "$APID" || fail "the attacker failed"
check_has "key, B listening: the attacker answered A's CONNECT" "$(cat "$TMP/atk.json")" '"seen": true'
check_has "key, B listening: A dropped the forged REJECT as unauthenticated and was served" \
	"$(grep 'closing device' "$TMP/send.out")" ' [1-9][0-9]* unauthenticated'

# ---- 6 ---------------------------------------------------------------------
echo "== 6: on path, A's data dropped beyond the switch, forged ACKs claim it arrived"
# Dropped at the egress toward B, so the attacker at A's port still sees it.
"$XRFABRIC" set --netns "$SW" --port r --tc blackhole=dport:4793 >/dev/null
# forged_acks [OPTS...]: the attack; sets SENDERR, FORGED, MAC (A's drop_mac
# over the run) and ACKS (A's rx_ack over the run)
forged_acks() {
	local spid rc=0 m0 a0 o0
	listen "$@"
	on_path acks h0 --secs 4 --wait 20
	m0=$(xr_counter "$A" drop_mac)
	a0=$(xr_counter "$A" rx_ack)
	o0=$(other_drops)
	# A waits 6 s for an answer, B's listener gives up after 3 s of
	# silence (--idle): without a key, B's CLOSE ends A's wait, not A's
	# own timeout, whatever the host's load.
	nsx "$A" timeout 30 "$XROCE" send -i eth0 "$BIP" -n 16k -t 6000 "$@" >"$TMP/send.out" 2>&1 &
	spid=$!
	wait "$spid" || rc=$?
	wait "$APID" || fail "the attacker failed"
	check_has "attacker saw the CONNECT and A's data" "$(cat "$TMP/atk.json")" '"seen": true'
	FORGED=$(xr_json 'j["forged"]' <"$TMP/atk.json")
	[ "$FORGED" -ge 1 ] || fail "the attacker forged no ACK: $(cat "$TMP/atk.json")"
	[ "$rc" -ne 0 ] || fail "A's send succeeded though its data was dropped"
	SENDERR=$(cat "$TMP/send.out")
	MAC=$(($(xr_counter "$A" drop_mac) - m0))
	ACKS=$(($(xr_counter "$A" rx_ack) - a0))
	OTHER=$(($(other_drops) - o0))
	stop_listener
}
# other_drops: A's drops of packets for a connection that is gone or not
# connected (a forged ACK that arrives after A gave up)
other_drops() { echo $(($(xr_counter "$A" drop_conn_state) + $(xr_counter "$A" drop_no_conn))); }
forged_acks
[ "$ACKS" -ge 1 ] || fail "no key: A took none of the $FORGED forged ACKs"
check_has "no key: $ACKS of $FORGED forged ACKs taken, the WRITE completed as success, the QP then failed (open without a key)" \
	"$SENDERR" 'the connection failed'
grep -q 'a WRITE failed' <<<"$SENDERR" && fail "expected the open case, got: $SENDERR"
forged_acks --key "$TMP/key"
check_eq "key: A took none of the forged ACKs" "$ACKS" 0
[ "$MAC" -ge 1 ] && [ $((MAC + OTHER)) -ge "$FORGED" ] ||
	fail "key: of $FORGED forged ACKs A dropped $MAC as drop_mac and $OTHER for a closed connection"
pass "key: all $FORGED forged ACKs dropped: $MAC as drop_mac, $OTHER after A gave up"
check_has "key: the WRITE failed, no false success" "$SENDERR" 'a WRITE failed'
"$XRFABRIC" set --netns "$SW" --port r --tc blackhole=off >/dev/null

# ---- 7 ---------------------------------------------------------------------
echo "== 7: B dies, a squatter binds its control port"
nsenter --net="/var/run/netns/$B" "$XROCE" recv -i eth0 -b 64M --accept-timeout 20000 \
	--idle 60000 >/dev/null 2>"$TMP/recv.err" &
RPID=$!
xr_cleanup_push "kill $RPID"
xr_wait_listen "$B"
nsx "$A" timeout 60 "$XROCE" send -i eth0 "$BIP" -n 4G -t 5000 >"$TMP/send.out" 2>&1 &
spid=$!
xr_wait_conn "$B"
# The squatter waits for the port and takes it the moment the owner dies.
nsenter --net="/var/run/netns/$B" python3 "$ATK" squat 4794 60 --ready "$TMP/squat" >/dev/null &
xr_cleanup_push "kill $!"
d0=$(xr_counter "$B" drop_dead)
kill -9 "$RPID" 2>/dev/null || fail "B's recv ended before it was killed: $(cat "$TMP/recv.err")"
wait "$RPID" 2>/dev/null || true
for ((i = 0; i < 200; i++)); do [ -e "$TMP/squat" ] && break; sleep 0.05; done
[ -e "$TMP/squat" ] || fail "the squatter did not get the port"
r0=$(xr_counter "$B" rx_data)
rc=0
wait "$spid" || rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
	fail "A's send did not fail cleanly (rc $rc): $(cat "$TMP/send.out")"
fi
pass "A's send failed: $(tail -1 "$TMP/send.out")"
[ "$TMP/squat" -ot "$TMP/send.out" ] || fail "A gave up before the squatter held the port"
pass "the squatter held B's control port before A gave up"
d1=$(xr_counter "$B" drop_dead)
r1=$(xr_counter "$B" rx_data)
[ "$d1" -gt "$d0" ] || fail "B's XDP did not drop A's packets as for a dead domain ($d0 -> $d1)"
pass "B's XDP dropped A's packets for a dead domain ($((d1 - d0)))"
check_eq "nothing of A's accepted into the orphaned memory meanwhile" "$r1" "$r0"

# ---- 8 ---------------------------------------------------------------------
echo "== 8: a connected peer floods its own ACKs while B's process is stopped"
# B's `xroce perf server` serves A's WRITEs (placed by XDP, no record) and
# M's connection.  Stopped, B's process drains nothing: M's ACKs, each a
# valid record of its connection, stay in the ring.  Without shares they
# would fill it (60000 records, the ring holds some 41000 outside its
# reserve), and XDP would refuse everyone's data (drop_evq_full).
nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 >"$TMP/psrv.out" 2>&1 &
SPID=$!
xr_cleanup_push "kill -CONT $SPID 2>/dev/null; kill $SPID 2>/dev/null"
xr_wait_listen "$B" 4796
# 1 MiB WRITEs: each completed message is a record too (msg_done), and A's
# share of the stopped process's ring must outlast the stop.
nsx "$A" timeout 90 "$XROCE" perf client -i eth0 "$BIP" -s 1M -d 20 -j \
	>"$TMP/pcli.json" 2>"$TMP/pcli.err" &
cpid=$!
xr_wait_conn "$B"
nsx "$M" python3 "$ATK" ackflood "$BIP" 60000 --port 4796 --ready "$TMP/fready" \
	--go "$TMP/go" >"$TMP/flood.json" &
fpid=$!
for ((i = 0; i < 200; i++)); do [ -e "$TMP/fready" ] && break; sleep 0.05; done
[ -e "$TMP/fready" ] || fail "M did not connect: $(cat "$TMP/flood.json")"
kill -STOP "$SPID"
s0=$(xr_counter "$B" drop_evq_share)
f0=$(xr_counter "$B" drop_evq_full)
r0=$(xr_counter "$B" rx_data)
t0=$(date +%s%N)
touch "$TMP/go"
wait "$fpid" || fail "the flood failed"
r1=$(xr_counter "$B" rx_data)
t1=$(date +%s%N)
s1=$(xr_counter "$B" drop_evq_share)
f1=$(xr_counter "$B" drop_evq_full)
kill -CONT "$SPID"
sent=$(xr_json 'j["sent"]' <"$TMP/flood.json")
[ "$sent" -ge 40000 ] || fail "M sent only $sent ACKs"
[ $((s1 - s0)) -ge $((sent / 4)) ] && [ $((s1 - s0)) -le "$sent" ] ||
	fail "M's ACKs were not stopped by its share: drop_evq_share $s0 -> $s1 of $sent"
pass "M's flood stopped at its share of B's ring: $((s1 - s0)) of $sent ACKs dropped as drop_evq_share"
check_eq "B's ring never filled (drop_evq_full)" "$((f1 - f0))" 0
ms=$(((t1 - t0) / 1000000))
[ $((r1 - r0)) -ge 1000 ] || fail "A's data stopped during the flood: rx_data $r0 -> $r1 in $ms ms"
pass "A's data kept arriving while B was stopped and flooded ($((r1 - r0)) packets in the flood's $ms ms)"
rc=0
wait "$cpid" || rc=$?
[ "$rc" -eq 0 ] || fail "A's perf client failed (rc $rc): $(cat "$TMP/pcli.err")"
pass "A's run completed: $(xr_json 'j["gbps"]' <"$TMP/pcli.json") Gbit/s over 20 s"
kill "$SPID" 2>/dev/null || true
wait "$SPID" 2>/dev/null || true

xr_passed test_hostile
