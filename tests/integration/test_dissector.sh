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
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

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

[ "$(id -u)" -eq 0 ] || xr_die "needs root"
command -v tshark >/dev/null || xr_die "tshark missing (apt-get install -y tshark)"
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
LUA=$PWD/docs/xroce.lua
for f in "$XROCE" "$XRFABRIC"; do
	[ -x "$f" ] || xr_die "$f missing: run make first"
done
[ -r "$LUA" ] || xr_die "$LUA missing"

CHECKS=0
pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"

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
python3 - "$TMP/crafted.pcap" <<'EOF'
# Ethernet/IPv4/UDP frames carrying hand-built xroce headers (wire.h).
import socket, struct, sys

def ip_csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def frame(payload, sport=49200, dport=4793):
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton('10.9.0.1'), socket.inet_aton('10.9.0.2'))
    ip = ip[:10] + struct.pack('!H', ip_csum(ip)) + ip[12:]
    return b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + udp

def data(op, flags, path, conn, psn, csn, msg, off, mlen, payload, imm=0, stream=0, ssn=0, vt=0x11):
    h = struct.pack('!BBBBIQIIIIQIIIIIHH', vt, flags, op, path, conn, 0x1122334455667788,
                    psn, psn - 2, csn, 123456, 0x7f0000001000 + off, 0xabcd, msg, mlen,
                    off, imm, stream, ssn)
    assert len(h) == 64
    return h + payload

def ack(t, flags, reason, path, conn, cack, words, nak_csn=0, hint=0):
    h = struct.pack('!BBBBIQIIII4QIIII', 0x10 | t, flags, reason, path, conn, 0x99,
                    cack, cack + 3, 777, hint, *words, 1, 50, 1000, nak_csn)
    assert len(h) == 80
    return h

def ctrl(op, status, conn, src, family, addrs, priv, priv_len=None):
    a = b''.join(addrs) + b'\0' * (16 * (4 - len(addrs)))
    h = struct.pack('!BBHIQQIIQIIHHHBBII', 0x14, op, status, conn, 0, 0x55, src, 1500, 0x66,
                    1000, 2000, 4793, 49152, 16384, len(addrs), family, 8, 0)
    h += a + struct.pack('!B3x', len(priv) if priv_len is None else priv_len)
    h += priv + b'\0' * (60 - len(priv))
    h += b'\0' * 64  # cookie, listener nonce, reserved, MAC
    assert len(h) == 256
    return h

v6 = socket.inet_pton(socket.AF_INET6, 'fd77::1')
v4m = b'\0' * 10 + b'\xff\xff' + socket.inet_aton('10.1.2.3')
W = 2 ** 32
frames = [
    # 1 SEND_IMM, AR|LAST, stream 3, its 9th message
    frame(data(4, 0x05, 1, 7, 10, 20, 5, 900, 1000, b'x' * 100, imm=0xdeadbeef, stream=3, ssn=9)),
    # 2 payload past the end of the message
    frame(data(1, 0x00, 1, 7, 11, 21, 5, 950, 1000, b'y' * 100)),
    # 3 DATA cut after 40 bytes
    frame(data(1, 0, 1, 7, 12, 22, 5, 0, 1000, b'')[:40]),
    # 4 ACK across the PSN wrap: bits w0:0,5,63 w1:0 w3:63, ECE, hint
    frame(ack(2, 0x01, 0, 2, 9, W - 6, [1 | 1 << 5 | 1 << 63, 1, 0, 1 << 63], hint=1000),
          sport=4793, dport=52001),
    # 5 NAK BOUNDS of csn 77
    frame(ack(3, 0, 2, 2, 9, 100, [0, 0, 0, 0], nak_csn=77), sport=4793, dport=52001),
    # 6 PROBE_REPLY
    frame(struct.pack('!BBBBIQIIII', 0x16, 0, 0, 3, 9, 0x99, 42, 5, 2500, 0),
          sport=4793, dport=52001),
    # 7 CONNECT over IPv6: plane 0 fd77::1, plane 1 v4-mapped 10.1.2.3
    frame(ctrl(1, 0, 0, 31, 6, [v6, v4m], b'hello'), sport=40000, dport=4794),
    # 8 REJECT ECONNREFUSED
    frame(ctrl(3, 111, 31, 0, 4, [v4m], b''), sport=4794, dport=40000),
    # 9 version 2
    frame(b'\x21' + b'\0' * 79, sport=4793, dport=52001),
    # 10 type 7
    frame(b'\x17' + b'\0' * 31),
    # 11 ACK between two ports nobody registered: only the heuristic sees it
    frame(ack(2, 0, 0, 0, 9, 500, [0b1010, 0, 0, 0]), sport=47793, dport=52002),
    # 12 80 bytes of something else on those ports: not xroce
    frame(b'\x02' + b'\0' * 79, sport=47793, dport=52002),
    # 13 ACK cut after 50 bytes
    frame(ack(2, 0, 0, 0, 9, 500, [0, 0, 0, 0])[:50], sport=4793, dport=52001),
    # 14 CTRL claiming 70 bytes of private data
    frame(ctrl(2, 0, 31, 32, 4, [v4m], b'', priv_len=70), sport=4794, dport=40000),
    # 15 PROBE
    frame(struct.pack('!BBBBIQIIII', 0x15, 0, 0, 3, 9, 0x99, 41, 5, 0, 0), sport=49200, dport=4793),
]
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack('<IIII', i + 1, 0, len(fr), len(fr)) + fr)
EOF
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
python3 - "$TMP/crafted.txt" "$TMP/crafted.exp" <<'EOF' || xr_die "crafted frames decoded wrongly"
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('|')
    rows[int(f[0])] = f
exp = {}
for line in open(sys.argv[2]):
    n, e = line.split()
    exp.setdefault(int(n), set()).add(e)
W = 2 ** 32
want_info = {
    1: 'DATA SEND_IMM conn 7 path 1 psn 10 csn 20 msg 5 off 900/1000 len 100 stream 3 ssn 9 imm 0xdeadbeef [AR,LAST]',
    3: 'DATA (truncated: 40 of 64 bytes)',
    4: 'ACK conn 9 path 2 cack %d sack {%d,0,58-59,250} hint 1000 [ECE]' % (W - 6, W - 5),
    5: 'NAK BOUNDS conn 9 path 2 cack 100 csn 77',
    6: 'PROBE_REPLY conn 9 path 3 seq 42 hint 2500',
    7: 'CTRL CONNECT src_conn 31 fd77::1,10.1.2.3 port 4793 paths 8 psn 1000 csn 2000 priv 5',
    8: 'CTRL REJECT conn 31 src_conn 0 status ECONNREFUSED',
    11: 'ACK conn 9 path 0 cack 500 sack {502,504}',
    13: 'ACK (truncated: 50 of 80 bytes)',
    15: 'PROBE conn 9 path 3 seq 41',
}
want_exp = {1: set(), 2: {'bounds'}, 3: {'truncated'}, 4: {'ece'}, 5: {'nak'},
            6: set(), 7: set(), 8: {'reject'}, 9: {'version'}, 10: {'type'},
            11: set(), 12: set(), 13: {'truncated'}, 14: {'value'}, 15: set()}
bad = []
for n, info in want_info.items():
    if rows[n][1] != info:
        bad.append('frame %d info %r, want %r' % (n, rows[n][1], info))
for n, e in want_exp.items():
    if exp.get(n, set()) != e:
        bad.append('frame %d expert %s, want %s' % (n, sorted(exp.get(n, set())), sorted(e)))
def field(n, i): return rows[n][i]
checks = [
    (field(1, 3), '1'), (field(1, 4), '0'), (field(1, 5), '1'), (field(1, 14), '100'),
    (field(4, 6), '%d,%d,58,59,250' % (W - 5, 0)), (field(4, 7), '5'),
    (field(4, 8), '{%d,0,58-59,250}' % (W - 5)),
    (field(5, 9), '2'), (field(7, 10), 'fd77::1'), (field(7, 11), '10.1.2.3'),
    (field(7, 12), '68656c6c6f'), (field(8, 13), '111'),
    (field(11, 6), '502,504'), (field(12, 2), ''),
]
for i, (got, want) in enumerate(checks):
    if got != want:
        bad.append('field check %d: %r, want %r' % (i, got, want))
if bad:
    print('\n'.join(bad))
    sys.exit(1)
print('%d crafted frames decoded as expected' % len(rows))
EOF
pass "crafted frames: names, flags, SACK across the PSN wrap, IPv6/v4-mapped addresses, expert infos, heuristic"

echo "== capture of a real transfer ($BYTES, loss $LOSS)"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091
. "$TMP/env"
# FAB_* come from the env file.
# shellcheck disable=SC2154
{ A=$FAB_h0_NS; B=$FAB_h1_NS; SW=${FAB_h0_PORT_0%%:*}; BIP=$FAB_h1_IP4_0; }

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
nsx "$A" "$XROCE" attach --force eth0 >/dev/null
nsx "$B" "$XROCE" attach --force eth0 >/dev/null
"$XRFABRIC" set --netns "$SW" --port b0 --tc "loss=$LOSS" >/dev/null

drops() {
	"$XRFABRIC" show --netns "$SW" --json | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(sum(p["counters"]["drop_loss"] for p in d["ports"]))'
}

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

d0=$(drops)
nsx "$B" timeout 60 "$XROCE" recv -i eth0 --accept-timeout 20000 --idle 10000 --json \
	>"$TMP/recv.json" 2>"$TMP/recv.err" &
RPID=$!
sleep 0.3
nsx "$A" timeout 60 "$XROCE" send -i eth0 "$BIP" -n "$BYTES" --json \
	>"$TMP/send.json" 2>"$TMP/send.err" || xr_die "send failed: $(cat "$TMP/send.err")"
wait "$RPID" || xr_die "recv failed: $(cat "$TMP/recv.err")"
d1=$(drops)
sleep 0.5
kill -INT "${TSPIDS[@]}"
wait "${TSPIDS[@]}" || true
for p in a0 b0; do
	! grep -q "dropped" "$TMP/capture-$p.err" ||
		xr_die "the capture on $p dropped packets: $(grep dropped "$TMP/capture-$p.err")"
done
# Merging keeps each file's own order, which the checks rely on.
mergecap -w "$TMP/cap.pcapng" "$TMP/a0.pcapng" "$TMP/b0.pcapng" || xr_die "mergecap failed"
pass "captured: a0 $(grep -o '[0-9]* packets captured' "$TMP/capture-a0.err"), b0 $(grep -o '[0-9]* packets captured' "$TMP/capture-b0.err"); $(python3 -c '
import json, sys; s = json.load(open(sys.argv[1]))
print("sender: %d packets, %d retransmitted, %d redundant copies, verified %s" % (s["tx_pkts"], s["retx_pkts"], s.get("dup_pkts", 0), s["verified"]))' "$TMP/send.json")"

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

python3 - "$TMP/fields.tsv" "$TMP/send.json" "$LOSS" "$((d1 - d0))" <<'EOF' ||
import json, sys
from collections import defaultdict

W = 2 ** 32
rows = []
with open(sys.argv[1]) as f:
    head = f.readline().rstrip('\n').split('\t')
    for line in f:
        rows.append(dict(zip(head, line.rstrip('\n').split('\t'))))
snd = json.load(open(sys.argv[2]))
loss, dropped = float(sys.argv[3]), int(sys.argv[4])
fails = []
def check(cond, msg):
    if not cond:
        fails.append(msg)
    return cond
def done():
    if fails:
        print('\n'.join(fails[:20]) + ('\n... %d failures' % len(fails) if len(fails) > 20 else ''))
        sys.exit(1)
def num(r, k): return int(r[k], 0)
def after(a, b): return (a - b) % W  # serial distance a - b
def retx(r): return r['xroce.data.flags.retx'] in ('1', 'True')
def dup(r): return r['xroce.data.flags.dup'] in ('1', 'True')
fn = lambda r: r['frame.number']

# Capture order per interface (pcapng keeps each interface's order).
on = {i: [r for r in rows if r['frame.interface_name'] == i] for i in ('a0', 'b0')}
xr = [r for r in rows if r['xroce.type']]
check(xr, 'no frame decoded as xroce: the Lua script did not load')
check(all(r['xroce.version'] == '1' for r in xr), 'version is not 1 everywhere')
check(not any(r['_ws.lua.error'] or r['_ws.malformed'] for r in rows), 'Lua error or malformed frame')
def T(rs, t, src=None): return [r for r in rs if r['xroce.type'] == str(t) and src in (None, r['ip.src'])]
ctrl = {int(r['xroce.ctrl.op']): r for r in T(on['a0'], 4)}
check(set(ctrl) >= {1, 2, 4, 5}, 'control ops seen: %s' % sorted(ctrl))
done()
conn, acc = ctrl[1], ctrl[2]
check(T(xr, 1) and T(xr, 2), 'no DATA or no ACK')
check(not T(xr, 3), 'a NAK in a healthy transfer')
ops = {r['xroce.data.opcode'] for r in T(xr, 1)}
check(ops <= {'1', '2'}, 'data opcodes %s, want WRITE/WRITE_IMM' % ops)

# The data direction (the sender's WRITEs) and the reverse one (the
# receiver's credits).  Each: who sends, its control message and the
# peer's, the interface that sees its packets first (tx) and the one on the
# far side of the lossy port (rx).
s_ip, r_ip = conn['ip.src'], conn['ip.dst']
dirs = [('send', s_ip, r_ip, conn, acc, 'a0', 'b0'), ('recv', r_ip, s_ip, acc, conn, 'b0', 'a0')]
stats = []
for name, src, dst, mine, peer, tx, rx in dirs:
    dtx, drx = T(on[tx], 1, src), T(on[rx], 1, src)
    atx, arx = T(on[tx], 2, dst), T(on[rx], 2, dst)
    if name == 'send':
        check(dtx, 'no DATA from the sender')
        check(len(dtx) == snd['tx_pkts'], 'sender DATA on a0 %d != its tx_pkts %d' % (len(dtx), snd['tx_pkts']))
        n = sum(map(retx, dtx))
        check(n == snd['retx_pkts'], 'RETX on a0 %d != sender retx_pkts %d' % (n, snd['retx_pkts']))
        n = sum(map(dup, dtx))
        check(n == snd.get('dup_pkts', 0), 'DUP on a0 %d != sender dup_pkts %d' % (n, snd.get('dup_pkts', 0)))
    else:
        check(len(dtx) == len(drx), 'receiver DATA lost on a loss-free direction')

    # Per-path PSNs in transmit order, psn_base.
    init_psn, init_csn = num(mine, 'xroce.ctrl.init_psn'), num(mine, 'xroce.ctrl.init_csn')
    last, base = {}, {}
    for r in dtx:
        p, psn, pb = r['xroce.path'], num(r, 'xroce.data.psn'), num(r, 'xroce.data.psn_base')
        want = init_psn if p not in last else (last[p] + 1) % W
        check(psn == want, '%s: frame %s path %s psn %d, want %d' % (name, fn(r), p, psn, want))
        check(after(psn, pb) < W // 2, '%s: frame %s psn_base %d after psn %d' % (name, fn(r), pb, psn))
        check(p not in base or after(pb, base[p]) < W // 2, '%s: frame %s psn_base went back' % (name, fn(r)))
        last[p], base[p] = psn, pb

    # CSNs: first transmissions unique and consecutive from init_csn; a
    # retransmission or a redundant copy (DUP, small messages) repeats the
    # CSN of one with the same content, a copy on another path.
    first, path_of = {}, {}
    content = lambda r: tuple(r[k] for k in ('xroce.data.msg_id', 'xroce.data.msg_off',
                                             'xroce.data.payload_len', 'xroce.data.raddr'))
    for r in dtx:
        if not retx(r) and not dup(r):
            c = num(r, 'xroce.data.csn')
            check(c not in first, '%s: csn %d sent twice without RETX or DUP' % (name, c))
            first[c] = content(r)
            path_of[c] = r['xroce.path']
    check(set(first) == {(init_csn + i) % W for i in range(len(first))},
          '%s: first-transmission CSNs are not init_csn..+%d' % (name, len(first)))
    for r in dtx:
        if retx(r) or dup(r):
            c = num(r, 'xroce.data.csn')
            check(first.get(c) == content(r),
                  '%s: frame %s resends csn %s with other content' % (name, fn(r), r['xroce.data.csn']))
        if dup(r):
            check(path_of.get(num(r, 'xroce.data.csn')) != r['xroce.path'],
                  '%s: frame %s: a redundant copy on its original\'s path' % (name, fn(r)))

    # Connection ids, tokens, addressing.
    for r in dtx + drx:
        check(r['xroce.dst_conn'] == peer['xroce.ctrl.src_conn'] and r['xroce.token'] == peer['xroce.ctrl.rx_token'],
              '%s: frame %s DATA conn/token are not the peer\'s' % (name, fn(r)))
    srcs = {(r['ip.src'], r['udp.srcport'], r['xroce.path']) for r in dtx}
    for r in atx + arx:
        check(r['xroce.dst_conn'] == mine['xroce.ctrl.src_conn'] and r['xroce.token'] == mine['xroce.ctrl.rx_token'],
              '%s: frame %s ACK conn/token are not the data sender\'s' % (name, fn(r)))
        check((r['ip.dst'], r['udp.dstport'], r['xroce.path']) in srcs and r['udp.srcport'] == peer['xroce.ctrl.data_port'],
              '%s: frame %s ACK not sent from the data port back to a data source' % (name, fn(r)))

    # Placement fields; coverage of every message at the receiving side.
    delta, cover = {}, defaultdict(list)
    for r in dtx + drx:
        off, plen, mlen = num(r, 'xroce.data.msg_off'), num(r, 'xroce.data.payload_len'), num(r, 'xroce.data.msg_len')
        check(plen == num(r, 'udp.length') - 8 - 64, '%s: frame %s payload_len' % (name, fn(r)))
        check(off + plen <= mlen, '%s: frame %s off %d + len %d > msg_len %d' % (name, fn(r), off, plen, mlen))
        m, d = r['xroce.data.msg_id'], num(r, 'xroce.data.raddr') - off
        check(delta.setdefault(m, d) == d, '%s: frame %s raddr - msg_off changed in message %s' % (name, fn(r), m))
    for r in drx:
        cover[(r['xroce.data.msg_id'], num(r, 'xroce.data.msg_len'))].append(
            (num(r, 'xroce.data.msg_off'), num(r, 'xroce.data.msg_off') + num(r, 'xroce.data.payload_len')))
    for (m, mlen), iv in cover.items():
        end = 0
        for a, b in sorted(iv):
            if a > end:
                break
            end = max(end, b)
        check(end == mlen, '%s: message %s bytes %d..%d never arrived' % (name, m, end, mlen))
    if name == 'send':
        check(sum(l for _, l in cover) >= snd['bytes'], 'the messages hold less than the transfer')

    # ACKs against what arrived (on rx, data is tapped before the ACK it
    # causes comes back).
    seen, ts_of, nsack = set(), {}, 0
    for r in on[rx]:
        if r['xroce.type'] == '1' and r['ip.src'] == src:
            k = (r['xroce.path'], num(r, 'xroce.data.psn'))
            seen.add(k)
            ts_of[k] = r['xroce.data.ts']
        elif r['xroce.type'] == '2' and r['ip.src'] == dst:
            p, cack = r['xroce.path'], num(r, 'xroce.ack.cack')
            k = (p, num(r, 'xroce.ack.ack_psn'))
            check(k in seen, '%s: frame %s acks path %s psn %d before it arrived' % (name, fn(r), *k))
            check(ts_of.get(k) == r['xroce.ack.ts_echo'], '%s: frame %s ts_echo is not the data ts' % (name, fn(r)))
            raw = bytes.fromhex(r['xroce.ack.sack'].replace(':', ''))
            dec = []
            for w in range(4):
                word = int.from_bytes(raw[8 * w:8 * w + 8], 'big')
                dec += [(cack + 1 + 64 * w + i) % W for i in range(64) if word >> i & 1]
            got = [int(x) for x in r['xroce.ack.sack.psn'].split(',') if x]
            check(got == dec, '%s: frame %s SACK list %s, bitmap says %s' % (name, fn(r), got, dec))
            check(int(r['xroce.ack.sack.count']) == len(dec), '%s: frame %s sack.count' % (name, fn(r)))
            for s in got:
                check(1 <= after(s, cack) <= 256, '%s: frame %s SACKed psn %d not after cack %d' % (name, fn(r), s, cack))
                check((p, s) in seen, '%s: frame %s SACKs psn %d that never arrived' % (name, fn(r), s))
            nsack += bool(got)
    if name == 'send' and loss > 0:
        check(nsack > 0, 'loss but no ACK with a non-empty SACK list')
    stats.append('%s: %d DATA sent (%d RETX), %d arrived, %d ACKs (%d with SACK bits), %d paths, %d messages'
                 % (name, len(dtx), sum(map(retx, dtx)), len(drx), len(arx), nsack, len(last), len(cover)))

# The capture saw every loss the switch made.
lost = len([r for r in on['a0'] if r['ip.src'] == s_ip]) - len([r for r in on['b0'] if r['ip.src'] == s_ip])
check(lost == dropped, 'a0 - b0 = %d packets, the switch dropped %d' % (lost, dropped))

# UDP checksums, every xroce packet on both ports.
badck = [fn(r) for r in xr if r['udp.checksum.status'] != '1']
check(not badck, 'UDP checksum not good in frames %s' % badck[:10])
done()
print('%d xroce frames, %d dropped by the switch, all UDP checksums good' % (len(xr), dropped))
print('\n'.join(stats))
EOF
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
echo "test_dissector: $CHECKS checks passed"
