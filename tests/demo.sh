#!/usr/bin/env bash
# demo.sh: what `make demo` runs.  Two hosts (network namespaces) joined by
# an emulated switch that drops packets at random in both directions; xroce
# attached to both hosts; one 256 MiB RDMA WRITE transfer at 0%, 1%, 5% and
# 10% loss, checked byte for byte at the receiver; what happened is printed.
# Everything is removed afterwards, also on failure or Ctrl-C.
# Usage: tests/demo.sh [SIZE]   (root; SIZE like 256M, default 256M)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "the demo needs root (network namespaces, XDP)"
SIZE=${1:-256M}
XROCE=$PWD/build/xroce
XRFABRIC=$PWD/build/xrfabric
[ -x "$XROCE" ] && [ -x "$XRFABRIC" ] || xr_die "run make first"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
echo "Building the fabric: host $PFX-h0 -- switch $PFX-sw -- host $PFX-h1"
bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091
. "$TMP/env"
SW=${FAB_h0_PORT_0%%:*}
for h in h0 h1; do
	ns_var="FAB_${h}_NS"
	nsx "${!ns_var}" "$XROCE" attach --force eth0 | sed "s/^/  [$h] /"
done
echo
printf '%-6s %-10s %-10s %-9s %-9s %-12s %s\n' loss goodput packets retx "by SACK" "by timer" "switch drops (data+ACK)"
for loss in 0 0.01 0.05 0.1; do
	for p in a0 b0; do "$XRFABRIC" set --netns "$SW" --port "$p" "loss=$loss" >/dev/null; done
	d0=$("$XRFABRIC" show --netns "$SW" --json | python3 -c 'import json,sys; print(sum(p["counters"]["drop_loss"] for p in json.load(sys.stdin)["ports"]))')
	nsx "$FAB_h1_NS" "$XROCE" recv -i eth0 -b 64M --accept-timeout 20000 --json \
		>"$TMP/recv.json" 2>"$TMP/recv.err" &
	rpid=$!
	sleep 0.3
	if ! nsx "$FAB_h0_NS" "$XROCE" send -i eth0 "$FAB_h1_IP4_0" -n "$SIZE" --json \
		>"$TMP/send.json" 2>"$TMP/send.err"; then
		cat "$TMP/send.err" >&2
		xr_die "transfer at loss $loss failed"
	fi
	wait "$rpid" || { cat "$TMP/recv.err" >&2; xr_die "receiver failed"; }
	d1=$("$XRFABRIC" show --netns "$SW" --json | python3 -c 'import json,sys; print(sum(p["counters"]["drop_loss"] for p in json.load(sys.stdin)["ports"]))')
	python3 - "$loss" "$((d1 - d0))" "$TMP/send.json" "$TMP/recv.json" <<'PY'
import json, sys
loss, drops = float(sys.argv[1]), int(sys.argv[2])
s, r = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
ok = 'verified' if s['verified'] and r['verified'] else 'CORRUPT'
print(f"{loss*100:4g}%  {s['goodput_gbps']:6.2f} Gb/s {s['tx_pkts']:>9} {s['retx_pkts']:>9} "
      f"{s['fast_retx']:>9} {s['timeout_retx']:>9}    {drops:>8}   data {ok}")
PY
done
echo
echo "XDP counters on the receiving host ($FAB_h1_NS):"
nsx "$FAB_h1_NS" "$XROCE" status eth0 | sed -n '/counters/,$p' | head -16
echo
echo "Goodput here is the sender's (first WRITE to receiver's verdict), on this"
echo "host's shared cores, transmit engine $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tx_engine"])' "$TMP/send.json") (README: transmit engines);"
echo "see docs/PERFORMANCE.md for benchmarks."
