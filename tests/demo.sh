#!/usr/bin/env bash
# demo.sh: what `make demo` runs.  Two hosts (network namespaces) joined by
# an emulated switch that drops packets at random in both directions; xroce
# attached to both hosts; one 256 MiB RDMA WRITE transfer at 0%, 1%, 5% and
# 10% loss, checked byte for byte at the receiver; what happened is printed.
# Everything is removed afterwards, also on failure or Ctrl-C.
# Usage: tests/demo.sh [SIZE]   (root; SIZE like 256M, default 256M)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
[ "$(id -u)" -eq 0 ] || xr_die "the demo needs root (network namespaces, XDP)"
SIZE=${1:-256M}
xr_need_exec "$XROCE" "$XRFABRIC"
xr_bpffs

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
echo "Building the fabric: host $PFX-h0 -- switch $PFX-sw -- host $PFX-h1"
xr_fab_up pair
SW=${FAB_h0_PORT_0%%:*}
# Attached here rather than by xr_fab_pair: the demo shows what attach says.
for h in h0 h1; do
	ns_var="FAB_${h}_NS"
	nsx "${!ns_var}" "$XROCE" attach --force eth0 | sed "s/^/  [$h] /"
done
echo
printf '%-6s %-10s %-10s %-9s %-9s %-12s %s\n' loss goodput packets retx "by SACK" "by timer" "switch drops (data+ACK)"
for loss in 0 0.01 0.05 0.1; do
	xr_fab_loss "$loss"
	d0=$(xr_fab_counter drop_loss)
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
	d1=$(xr_fab_counter drop_loss)
	python3 "$XR_PY/demo_row.py" "$loss" "$((d1 - d0))" "$TMP/send.json" "$TMP/recv.json"
done
echo
echo "XDP counters on the receiving host ($FAB_h1_NS):"
nsx "$FAB_h1_NS" "$XROCE" status eth0 | sed -n '/counters/,$p' | head -16
echo
echo "Goodput here is the sender's (first WRITE to receiver's verdict), on this"
echo "host's shared cores, transmit engine $(xr_json 'j["tx_engine"]' <"$TMP/send.json") (README: transmit engines);"
echo "see docs/PERFORMANCE.md for benchmarks."
