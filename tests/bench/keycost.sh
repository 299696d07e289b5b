#!/usr/bin/env bash
# keycost.sh: what a cluster key costs end to end.  `xroce perf` with and
# without `--key`, interleaved on one `pair` fabric (so both sides see the
# same host and the same moment), REPEAT pairs of each:
#
#   bandwidth  xroce perf client --mode bw -s SIZE -d SECS  (WRITEs,
#              32 in flight; every DATA and ACK carries a SipHash-2-4 MAC
#              with the key, the token without)
#   latency    xroce perf client --mode lat -s 64 -n ITERS (WRITE_WITH_IMM
#              ping-pong, both ends busy-polling)
#
# Printed: the median of each mode with and without the key and their ratio
# (goodput) or difference (latency), then every run.  The target
# (docs/DESIGN.md, issue 15): at most 10% less goodput with header MACs.
#
# Usage: tests/bench/keycost.sh [--repeat N] [--secs S] [--size BYTES]
#                               [--iters N] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"
REPEAT=5
SECS=4
SIZE=65536
ITERS=20000
JSON=""
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) REPEAT=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || xr_die "--repeat: a count >= 1"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_private_bins
xr_fab_pair
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/key"
SPID=""

# server on|off: a fresh `xroce perf server` in B, with the key or without
server() {
	stop_server
	local opt=()
	[ "$1" = on ] && opt=(--key "$TMP/key")
	# nsenter itself (not the nsx function) so that $! is the server
	nsenter --net="/var/run/netns/$B" "$XROCE" perf server -i eth0 "${opt[@]}" \
		>"$TMP/server.log" 2>&1 &
	SPID=$!
	xr_listening "$B" 4796 || xr_die "perf server (key $1) did not listen: $(cat "$TMP/server.log")"
}
stop_server() {
	[ -n "$SPID" ] || return 0
	kill "$SPID" 2>/dev/null || true
	wait "$SPID" 2>/dev/null || true
	SPID=""
}
xr_cleanup_push stop_server

# client KEY MODE ARGS...: one JSON line of `xroce perf client`
client() {
	local k=$1 opt=()
	shift
	[ "$k" = on ] && opt=(--key "$TMP/key")
	local out
	out=$(nsx "$A" "$XROCE" perf client -i eth0 "$BIP" "${opt[@]}" -j "$@" 2>"$TMP/client.log") ||
		xr_die "perf client (key $k, $*): $(cat "$TMP/client.log")"
	tail -n 1 <<<"$out"
}

# The key is in force: a client without it is refused by the keyed server.
server on
if nsx "$A" "$XROCE" perf client -i eth0 "$BIP" -m lat -n 10 >/dev/null 2>&1; then
	xr_die "a client without the key was served by the keyed server"
fi

RUNS="$TMP/runs"
: >"$RUNS"
for ((r = 1; r <= REPEAT; r++)); do
	# alternate which goes first, so a drift of the host favours neither
	order=(off on)
	[ $((r % 2)) -eq 0 ] && order=(on off)
	for k in "${order[@]}"; do
		server "$k"
		bw=$(client "$k" --mode bw -s "$SIZE" -d "$SECS" |
			xr_json 'str(j["gbps"]) + " " + str(j["retx_pkts"]) + " " + str(j["pkts"])')
		lat=$(client "$k" --mode lat -s 64 -n "$ITERS" | xr_json 'j["rtt_p50_us"]')
		echo "$r $k ${bw%% *} $lat ${bw#* }" >>"$RUNS"
	done
done
stop_server

/usr/bin/python3 - "$RUNS" "$SIZE" "$SECS" "$ITERS" "$JSON" <<'EOF'
import json, statistics, sys
runs, size, secs, iters, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rows = [l.split() for l in open(runs) if l.strip()]
def med(k, i):
    return statistics.median(float(r[i]) for r in rows if r[1] == k)
bw_off, bw_on = med('off', 2), med('on', 2)
lat_off, lat_on = med('off', 3), med('on', 3)
print(f"cluster key, end to end ({len(rows) // 2} interleaved pairs on one pair fabric)")
print(f"  goodput, {size} B WRITEs, {secs} s: key off {bw_off:.2f} Gbit/s, on {bw_on:.2f}"
      f"  -> {bw_on / bw_off:.2f}x ({(1 - bw_on / bw_off) * 100:+.1f}% lost; target <= 10%)")
print(f"  64 B round trip p50, {iters} iters: key off {lat_off:.1f} us, on {lat_on:.1f}"
      f"  -> {lat_on - lat_off:+.1f} us")
pairs = sorted({r[0] for r in rows}, key=int)
ratio = {p: float(next(r[2] for r in rows if r[0] == p and r[1] == 'on')) /
         float(next(r[2] for r in rows if r[0] == p and r[1] == 'off')) for p in pairs}
print("  goodput on/off per pair: " + ", ".join(f"{ratio[p]:.2f}" for p in pairs) +
      f" (median {statistics.median(ratio.values()):.2f})")
print("  runs (pair key goodput_gbps rtt_p50_us retx_pkts pkts):")
for r in rows:
    print("   ", " ".join(r))
if out:
    json.dump({'size': size, 'goodput_gbps': {'off': bw_off, 'on': bw_on},
               'rtt_p50_us': {'off': lat_off, 'on': lat_on},
               'pair_ratios': [ratio[p] for p in pairs],
               'runs': [{'pair': int(r[0]), 'key': r[1], 'goodput_gbps': float(r[2]),
                         'rtt_p50_us': float(r[3]), 'retx_pkts': int(r[4]),
                         'pkts': int(r[5])} for r in rows]}, open(out, 'w'), indent=1)
EOF
