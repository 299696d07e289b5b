#!/usr/bin/env bash
# test_dissector.sh: the Wireshark dissector (docs/xroce.lua) on a real
# xroce transfer, captured with tshark, plus crafted frames for the cases a
# healthy transfer never shows (NAK, IPv6 addresses, truncation, ...).
#
# Where the capture is taken: xroce's data plane never reaches a packet
# socket on a host.  The sender transmits with AF_XDP (the kernel's
# direct-xmit path skips the capture taps) and the receiver's XDP program
# places data and turns it into the ACK with XDP_TX, so `tshark -i eth0` on
# either host sees only the control messages.  So the pair fabric's switch
# is turned from an XDP patch cable into a kernel bridge (its ports keep
# fabric_xdp in routed mode: impair, then XDP_PASS, which also lets the
# hosts' XDP_TX frames arrive), and tshark captures both switch ports:
#   a0  the sender's side: every packet the sender transmitted;
#   b0  the receiver's side: what survived the loss injected at b0's TC
#       egress (after a0's tap, before b0's), and the ACKs as sent.
#
# Checks on the decoded capture (tshark -X lua_script:docs/xroce.lua):
#   - CTRL CONNECT/ACCEPT/CLOSE/CLOSE_ACK, DATA WRITE/WRITE_IMM and ACKs
#     present, version 1 everywhere, no Lua error, no malformed frame;
#   - the capture is complete: DATA on a0 = the sender's tx_pkts, RETX-flagged
#     DATA = its retx_pkts, and a0 - b0 = the packets the switch dropped;
#   - per path, PSNs on a0 start at CONNECT.init_psn and go up by one per
#     DATA packet; psn_base never passes psn and never goes back;
#   - CSNs of first transmissions are exactly init_csn .. init_csn+N-1, each
#     retransmission reuses the CSN of a first transmission with the same
#     message, offset, length and address;
#   - DATA dst_conn/token = ACCEPT's src_conn/rx_token; every ACK's dst_conn
#     and token = CONNECT's src_conn/rx_token and it goes from the data port
#     to the (address, port, path) some DATA packet came from;
#   - payload_len = UDP length - 8 - 64, msg_off + len <= msg_len, raddr -
#     msg_off constant per message, every byte of every message reached b0;
#   - each ACK's (path, ack_psn) was delivered on b0 before it, with ts_echo
#     = that packet's ts; the SACK bitmap decoded independently from the raw
#     bytes equals the dissector's PSN list; every SACKed PSN is after cack
#     (by 1..256) and was delivered on b0 before the ACK; with loss, some ACK
#     has a non-empty SACK list;
#   - every UDP checksum (data, ACKs built by XDP, control) is valid;
#   - the preferences work: with both ports unregistered the heuristic alone
#     decodes every frame the same way; with the heuristic off too, nothing.
#
# Usage: tests/integration/test_dissector.sh [--loss P] [--bytes N] [--keep DIR]
#   --loss P   random loss on the data direction (default 0.05)
#   --bytes N  transfer size for xroce send -n (default 1M)
#   --keep DIR copy the capture and decoded text to DIR
# Needs root, tshark, and `make` run first.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

LOSS=0.05
BYTES=1M
KEEP=""
while [ $# -gt 0 ]; do
	case $1 in
	--loss) LOSS=$2; shift 2 ;;
	--bytes) BYTES=$2; shift 2 ;;
	--keep) KEEP=$2; shift 2 ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done

xr_need_root
xr_need_cmd tshark
LUA=$PWD/docs/xroce.lua
xr_need_exec "$XROCE" "$XRFABRIC"
[ -r "$LUA" ] || xr_die "$LUA missing"

PFX=$(xr_prefix)
xr_tmpdir "$PFX"

# tshark over a capture with the dissector; extra arguments are passed on.
# tshark as root warns on stderr but (Wireshark 4.0: init.lua has
# run_user_scripts_when_superuser = true) still runs the script; the checks
# below fail if it did not.
ts() {
	local f=$1
	shift
	tshark -n -r "$f" -X "lua_script:$LUA" -o udp.check_checksum:TRUE "$@" 2>>"$TMP/tshark-read.err"
}

echo "== crafted frames"
python3 "$XR_PY/dissector_frames.py" "$TMP/crafted.pcap"
# One row per frame: info column, the expert infos fired, selected fields.
ts "$TMP/crafted.pcap" -T fields -E separator='|' -e frame.number -e _ws.col.Info \
	-e xroce.type -e xroce.data.flags.ar -e xroce.data.flags.retx -e xroce.data.flags.last \
	-e xroce.ack.sack.psn -e xroce.ack.sack.count -e xroce.ack.sack.list \
	-e xroce.ack.reason -e xroce.ctrl.addr6 -e xroce.ctrl.addr4 -e xroce.ctrl.priv \
	-e xroce.ctrl.status -e xroce.data.payload_len >"$TMP/crafted.txt"
for e in truncated version type bounds nak reject value ece; do
	ts "$TMP/crafted.pcap" -Y "xroce.expert.$e" -T fields -e frame.number |
		sed "s/\$/ $e/" >>"$TMP/crafted.exp"
done
python3 "$XR_PY/dissector_crafted.py" "$TMP/crafted.txt" "$TMP/crafted.exp" ||
	xr_die "crafted frames decoded wrongly"
pass "crafted frames: names, flags, SACK across the PSN wrap, IPv6/v4-mapped addresses, expert infos, heuristic"

echo "== capture of a real transfer ($BYTES, loss $LOSS)"
xr_fab_pair

# The switch becomes a kernel bridge (see the header for why).
"$XRFABRIC" attach --netns "$SW" --port a0
"$XRFABRIC" attach --netns "$SW" --port b0
"$XRFABRIC" attach --netns "$SW" --port b0 --tc
nsx "$SW" ip link add br0 type bridge forward_delay 0 stp_state 0
for p in a0 b0; do
	nsx "$SW" ethtool -K "$p" gro off >/dev/null
	nsx "$SW" ip link set "$p" master br0
done
nsx "$SW" ip link set br0 up
"$XRFABRIC" set --netns "$SW" --port b0 --tc "loss=$LOSS" >/dev/null

# One tshark per port: with several -i, dumpcap reads them in threads that
# hand packets to its writer through a bounded queue, and on this 2-core
# machine it drops from that queue during the burst (whatever -B is).
# nsenter execs tshark, so $! is tshark itself; SIGINT makes it stop its
# dumpcap, and deleting the switch namespace kills whatever is left.
TSPIDS=()
for p in a0 b0; do
	nsenter --net="/var/run/netns/$SW" tshark -q -n -B 32 -i "$p" -w "$TMP/$p.pcapng" \
		>"$TMP/capture-$p.out" 2>"$TMP/capture-$p.err" &
	TSPIDS+=($!)
	# only while it still runs there: its pid may be reused after it ends
	xr_cleanup_push "ip netns pids '$SW' | grep -qx $! && kill $!; wait $!"
done
for p in a0 b0; do
	for _ in $(seq 100); do
		grep -q "Capturing on" "$TMP/capture-$p.err" && break
		sleep 0.1
	done
	grep -q "Capturing on" "$TMP/capture-$p.err" ||
		xr_die "tshark did not start on $p: $(cat "$TMP/capture-$p.err")"
done
sleep 0.5 # "Capturing on" comes a little before the ring is live

d0=$(xr_fab_counter drop_loss)
nsx "$B" timeout 60 "$XROCE" recv -i eth0 --accept-timeout 20000 --idle 10000 --json \
	>"$TMP/recv.json" 2>"$TMP/recv.err" &
RPID=$!
sleep 0.3
nsx "$A" timeout 60 "$XROCE" send -i eth0 "$BIP" -n "$BYTES" --json \
	>"$TMP/send.json" 2>"$TMP/send.err" || xr_die "send failed: $(cat "$TMP/send.err")"
wait "$RPID" || xr_die "recv failed: $(cat "$TMP/recv.err")"
d1=$(xr_fab_counter drop_loss)
sleep 0.5
kill -INT "${TSPIDS[@]}"
wait "${TSPIDS[@]}" || true
for p in a0 b0; do
	! grep -q "dropped" "$TMP/capture-$p.err" ||
		xr_die "the capture on $p dropped packets: $(grep dropped "$TMP/capture-$p.err")"
done
# Merging keeps each file's own order, which the checks rely on.
mergecap -w "$TMP/cap.pcapng" "$TMP/a0.pcapng" "$TMP/b0.pcapng" || xr_die "mergecap failed"
pass "captured: a0 $(grep -o '[0-9]* packets captured' "$TMP/capture-a0.err"), b0 $(grep -o '[0-9]* packets captured' "$TMP/capture-b0.err"); $(xr_json '"sender: %d packets, %d retransmitted, %d redundant copies, verified %s" % (j["tx_pkts"], j["retx_pkts"], j.get("dup_pkts", 0), j["verified"])' <"$TMP/send.json")"

FIELDS=(frame.number frame.interface_name ip.src ip.dst udp.srcport udp.dstport udp.length
	udp.checksum.status xroce.version xroce.type xroce.path xroce.dst_conn xroce.token
	xroce.data.flags.retx xroce.data.flags.dup xroce.data.opcode xroce.data.psn xroce.data.psn_base xroce.data.csn
	xroce.data.ts xroce.data.raddr xroce.data.msg_id xroce.data.msg_len xroce.data.msg_off
	xroce.data.payload_len xroce.ack.cack xroce.ack.ack_psn xroce.ack.ts_echo xroce.ack.sack
	xroce.ack.sack.psn xroce.ack.sack.count xroce.ctrl.op xroce.ctrl.src_conn
	xroce.ctrl.rx_token xroce.ctrl.init_psn xroce.ctrl.init_csn xroce.ctrl.data_port
	_ws.lua.error _ws.malformed)
EARGS=()
for f in "${FIELDS[@]}"; do EARGS+=(-e "$f"); done
ts "$TMP/cap.pcapng" -Y udp -T fields -E header=y -E separator=/t "${EARGS[@]}" >"$TMP/fields.tsv"
ts "$TMP/cap.pcapng" -Y xroce >"$TMP/decoded.txt"
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	cp "$TMP/cap.pcapng" "$TMP/decoded.txt" "$TMP/fields.tsv" "$KEEP/"
fi

python3 "$XR_PY/dissector_capture.py" "$TMP/fields.tsv" "$TMP/send.json" "$LOSS" "$((d1 - d0))" ||
	xr_die "decoded capture failed the checks"
pass "decoded fields consistent with the transfer"

# A healthy transfer raises no expert info but the retransmission notes.
bad=$(ts "$TMP/cap.pcapng" -Y 'xroce.expert.truncated || xroce.expert.version ||
	xroce.expert.type || xroce.expert.length || xroce.expert.value || xroce.expert.rsvd ||
	xroce.expert.bounds || xroce.expert.nak || xroce.expert.reject' | wc -l)
[ "$bad" -eq 0 ] || xr_die "$bad frames of a healthy transfer carry xroce warnings"
nretx=$(ts "$TMP/cap.pcapng" -Y 'xroce.expert.retx' | wc -l)
nflag=$(ts "$TMP/cap.pcapng" -Y 'xroce.data.flags.retx == 1' | wc -l)
[ "$nretx" -eq "$nflag" ] || xr_die "$nretx retransmission notes for $nflag RETX packets"
pass "expert info: none on the healthy capture but $nretx retransmission notes (one per RETX packet)"

# Preferences: ports unregistered -> the heuristic alone; heuristic off too
# -> nothing.  Frame by frame, the heuristic's decode must equal the port's.
ts "$TMP/cap.pcapng" -T fields -e frame.number -e xroce.type -e xroce.data.psn -e xroce.ack.cack \
	>"$TMP/byport.txt"
ts "$TMP/cap.pcapng" -o xroce.data_port:0 -o xroce.ctrl_port:0 -T fields -e frame.number \
	-e xroce.type -e xroce.data.psn -e xroce.ack.cack >"$TMP/byheur.txt"
n=$(ts "$TMP/cap.pcapng" -o xroce.data_port:0 -o xroce.ctrl_port:0 -o xroce.heuristic:FALSE \
	-Y xroce | wc -l)
cmp -s "$TMP/byport.txt" "$TMP/byheur.txt" || xr_die "heuristic decode differs from the port decode"
[ "$n" -eq 0 ] || xr_die "$n frames decoded with both ports and the heuristic off"
pass "preferences: heuristic alone decodes all $(grep -c $'\t[0-9]' "$TMP/byheur.txt") xroce frames the same; nothing when off"

echo "-- sample: the receiver's side (b0) as tshark -X lua_script:docs/xroce.lua shows it"
ts "$TMP/cap.pcapng" -Y 'xroce && frame.interface_name == "b0"' >"$TMP/decoded-b0.txt"
sample() { grep -m"$1" -e "$2" "$TMP/decoded-b0.txt" || true; }
{ sample 2 "CTRL CONNECT\|CTRL ACCEPT"; sample 3 "DATA WRITE"; sample 2 "RETX"
  sample 4 "sack {"; sample 2 "msg 1 "; sample 2 "CTRL CLOSE"; } | sed 's/^ */     /'
xr_passed test_dissector
