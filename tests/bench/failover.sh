#!/usr/bin/env bash
# failover.sh: goodput over time in 1 ms bins while one of four paths is
# blackholed mid-run.
#
# Topology: tests/fabric/fabric.sh planes 4 (four parallel planes); one
# connection with 4 paths (one per plane), `xroce perf client --mode bw
# --interval-ms 1` (goodput from packet-level acknowledgements).  At
# --fail-at seconds the switch blackholes plane --plane in both directions.
# Reported: goodput before the failure, the time from the failure until a
# 5 ms moving average is back at 90% of 3/4 of that goodput (the remaining
# paths' share), packets retransmitted, and the timeline (--out FILE, CSV
# t_ms,gbps) for plotting.
#
# Usage: tests/bench/failover.sh [--secs S] [--fail-at S] [--plane N]
#                                [--out FILE] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"
SECS=3
FAIL_AT=1.5
PLANE=2
OUT=
JSON=
while [ $# -gt 0 ]; do
	case $1 in
	--secs) SECS=$2; shift 2 ;;
	--fail-at) FAIL_AT=$2; shift 2 ;;
	--plane) PLANE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	*) xr_die "unknown option $1" ;;
	esac
done
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
bash tests/fabric/fabric.sh up planes 4 --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091
. "$TMP/env"
A=$FAB_h0_NS
B=$FAB_h1_NS
IFS_A=()
IFS_B=()
for i in 0 1 2 3; do
	va="FAB_h0_IF_$i"; vb="FAB_h1_IF_$i"
	nsx "$A" "$XROCE" attach --force "${!va}" >/dev/null
	nsx "$B" "$XROCE" attach --force "${!vb}" >/dev/null
	IFS_A+=(-i "${!va}")
	IFS_B+=(-i "${!vb}")
done
port_a="FAB_h0_PORT_$PLANE"; port_b="FAB_h1_PORT_$PLANE"
SW=${!port_a%%:*}

nsx "$B" timeout -k 2 $((SECS + 40)) "$XROCE" perf server "${IFS_B[@]}" --once \
	>/dev/null 2>&1 &
spid=$!
sleep 0.3
( sleep "$FAIL_AT"
  "$XRFABRIC" set --netns "$SW" --port "${!port_a##*:}" blackhole=all >/dev/null
  "$XRFABRIC" set --netns "$SW" --port "${!port_b##*:}" blackhole=all >/dev/null
  date +%s%N >"$TMP/fail_ns" ) &
fpid=$!
date +%s%N >"$TMP/start_ns"
nsx "$A" timeout -k 2 $((SECS + 30)) "$XROCE" perf client "${IFS_A[@]}" \
	"$FAB_h1_IP4_0" -P 4 -s 65536 \
	-d "$SECS" --interval-ms 1 --json >"$TMP/perf.json" 2>"$TMP/perf.err" ||
	xr_die "perf failed: $(cat "$TMP/perf.err")"
wait "$fpid" || true
wait "$spid" || true
python3 - "$TMP/perf.json" "$(cat "$TMP/fail_ns")" "${OUT:-}" "${JSON:-}" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
iv = [r for r in rows if r.get('mode') == 'interval']
tl = [(r['t_ms'], r['gbps']) for r in iv]
summ = [r for r in rows if r.get('mode') == 'bw'][-1]
# The failure instant on the client's timeline (both clocks are realtime).
fail_ns = int(sys.argv[2])
r0 = iv[0]
fail_ms = r0['t_ms'] + (fail_ns - r0['wall_ns']) / 1e6
before = [g for t, g in tl if fail_ms - 500 <= t < fail_ms - 5]
base = sum(before) / len(before) if before else 0
target = 0.9 * 0.75 * base
rec = None
for i, (t, g) in enumerate(tl):
    if t < fail_ms:
        continue
    win = [x[1] for x in tl[i:i + 5]]
    if len(win) == 5 and sum(win) / 5 >= target:
        rec = t - fail_ms
        break
dip = min((g for t, g in tl if fail_ms <= t < fail_ms + 50), default=0)
print(f"failover: 4 paths on 4 planes, plane blackholed at t = {fail_ms:.0f} ms of the run")
print(f"  goodput before      {base:8.3f} Gbit/s (target after: 90% of 3/4 = {target:.3f})")
print(f"  lowest 1 ms bin     {dip:8.3f} Gbit/s in the 50 ms after the failure")
print(f"  back at target after {rec:.1f} ms" if rec is not None else "  never back at target")
print(f"  run: {summ['gbps']:.3f} Gbit/s average, {summ['retx_pkts']} packets retransmitted "
      f"({summ['retx_pkts'] * 1408 / 1e3:.0f} kB), no error completion")
if sys.argv[3]:
    with open(sys.argv[3], 'w') as f:
        f.write("t_ms,gbps\n")
        for t, g in tl:
            f.write(f"{t:.3f},{g:.4f}\n")
if sys.argv[4]:
    json.dump(dict(fail_ms=fail_ms, before_gbps=base, recover_ms=rec, dip_gbps=dip,
                   avg_gbps=summ['gbps'], retx_pkts=summ['retx_pkts']),
              open(sys.argv[4], 'w'), indent=1)
PY
