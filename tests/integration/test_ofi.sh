#!/usr/bin/env bash
# test_ofi.sh: the libfabric provider (build/lib/libxroce-fi.so) under
# unmodified libfabric 1.17 tools, on two namespaces joined by the
# emulated switch (tests/fabric/fabric.sh pair):
#   - fi_info -p xroce lists it where xroce is attached (domain xroce_eth0,
#     fabric 10.77.0.0/24) and not where it is not; "xroce;ofi_rxm" is
#     FI_EP_RDM (ofi_rxm layers on it);
#   - ofi_hints: aws-ofi-nccl's and Open MPI's hints answered, -FI_ENODATA
#     for what it cannot do; ofi_badarg: bad arguments get -FI_E*;
#   - ofi_func (connection management, messages, RMA, wait objects, errors)
#     and Debian's fi_pingpong with -e msg and with -e rdm -p
#     "xroce;ofi_rxm", data checked (-c), loss-free and at 1% random loss
#     in both directions (the switch's drop counter must move).  The rdm
#     runs go twice: with ofi_rxm's own protocol limits (eager up to
#     16 KiB, segmentation up to 128 KiB, above that rendezvous: the
#     receiver READs the sender's buffer through xroce, fi_pingpong's
#     1 MiB), and with FI_PROVIDER=xroce, where the provider raises rxm's
#     SAR limit to 32 MiB (rxm's log must say so) so every large message is
#     segmented over SENDs instead.
# Usage: tests/integration/test_ofi.sh [--loss "0 0.01"]   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh

xr_need_root
for f in "$XROCE" "$XRFABRIC" build/lib/libxroce-fi.so build/tests/ofi_func \
	build/tests/ofi_hints build/tests/ofi_badarg; do
	[ -e "$f" ] || xr_die "$f missing: run make first"
done
xr_need_cmd fi_info fi_pingpong
LOSSES="0 0.01"
while [ $# -gt 0 ]; do
	case $1 in
	--loss) LOSSES=$2; shift 2 ;;
	*) xr_die "usage: $0 [--loss \"0 0.01\"]" ;;
	esac
done
export FI_PROVIDER_PATH=$PWD/build/lib
unset FI_OFI_RXM_SAR_LIMIT FI_OFI_RXM_USE_RNDV_WRITE

PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair

# pair NAME SERVER_CMD... -- CLIENT_CMD...: the server in B, the client in
# A, both under a timeout; both must succeed.
pair() {
	local name=$1 srv=() spid rc=0 src=0
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	nsx "$B" timeout 180 "${srv[@]}" >"$TMP/srv.out" 2>&1 &
	spid=$!
	xr_cleanup_push "kill $spid 2>/dev/null; wait $spid 2>/dev/null"
	sleep 1
	nsx "$A" timeout 180 "$@" >"$TMP/cli.out" 2>&1 || rc=$?
	wait "$spid" || src=$?
	if [ "$rc" -ne 0 ] || [ "$src" -ne 0 ]; then
		printf -- '--- client (rc %s)\n%s\n--- server (rc %s)\n%s\n' "$rc" \
			"$(tail -20 "$TMP/cli.out")" "$src" "$(tail -20 "$TMP/srv.out")" >&2
		xr_die "$name"
	fi
}

echo "== fi_info"
nsx "$A" fi_info -p xroce >"$TMP/info" || xr_die "fi_info -p xroce: $(cat "$TMP/info")"
grep -q "domain: xroce_eth0" "$TMP/info" && grep -q "fabric: 10.77.0.0/24" "$TMP/info" &&
	grep -q "type: FI_EP_MSG" "$TMP/info" || xr_die "fi_info -p xroce: $(cat "$TMP/info")"
pass "fi_info -p xroce: $(grep -c '^provider: xroce' "$TMP/info") entries, domain xroce_eth0, fabric 10.77.0.0/24"
if nsx "$SW" fi_info -p xroce >"$TMP/info" 2>&1; then
	xr_die "fi_info -p xroce answered where xroce is not attached: $(cat "$TMP/info")"
fi
pass "fi_info -p xroce: nothing where no interface carries xroce"
nsx "$A" fi_info -p "xroce;ofi_rxm" >"$TMP/info" || xr_die "fi_info -p xroce;ofi_rxm"
grep -q "type: FI_EP_RDM" "$TMP/info" || xr_die "xroce;ofi_rxm: $(cat "$TMP/info")"
pass "fi_info -p \"xroce;ofi_rxm\": FI_EP_RDM (ofi_rxm layers on xroce)"

echo "== hints and bad arguments"
nsx "$A" timeout 60 build/tests/ofi_hints >"$TMP/hints" 2>&1 || xr_die "ofi_hints: $(cat "$TMP/hints")"
grep -E "aws-ofi-nccl|mtl ofi" "$TMP/hints" | sed 's/^/  /'
pass "ofi_hints: $(grep -c ENODATA "$TMP/hints") refusals, aws-ofi-nccl and Open MPI hints answered"
nsx "$A" timeout 60 build/tests/ofi_badarg >"$TMP/bad" 2>&1 || xr_die "ofi_badarg: $(cat "$TMP/bad")"
pass "ofi_badarg: every bad call returned its -FI_E*"

for loss in $LOSSES; do
	echo "== loss $loss"
	xr_fab_loss "$loss"
	d0=$(xr_fab_counter drop_loss)
	pair "ofi_func at loss $loss" build/tests/ofi_func server 7471 -- \
		env FI_XROCE_CM_TIMEOUT_MS=1500 build/tests/ofi_func client "$BIP" 7471
	pass "ofi_func: connection management, messages, RMA, wait objects, errors"
	pair "fi_pingpong -e msg at loss $loss" fi_pingpong -p xroce -e msg -I 20 -c -- \
		fi_pingpong -p xroce -e msg -I 20 -c "$BIP"
	sed 's/^/     /' "$TMP/cli.out"
	pass "fi_pingpong -p xroce -e msg -c (every size)"
	# rxm's defaults; its log names the limits that make 1m a rendezvous.
	pair "fi_pingpong -e rdm at loss $loss" \
		env FI_LOG_LEVEL=info FI_LOG_PROV=ofi_rxm \
		fi_pingpong -p "xroce;ofi_rxm" -e rdm -I 20 -c -- \
		env FI_LOG_LEVEL=info FI_LOG_PROV=ofi_rxm \
		fi_pingpong -p "xroce;ofi_rxm" -e rdm -I 20 -c "$BIP"
	grep -q "Protocol limits: Eager: 16384, SAR: 131072" "$TMP/cli.out" ||
		xr_die "ofi_rxm's protocol limits are not the defaults: $(grep -i 'protocol limits' "$TMP/cli.out")"
	grep -E '^(bytes|[0-9]+[kmg]?) ' "$TMP/cli.out" | sed 's/^/     /'
	grep -q '^1m ' "$TMP/cli.out" || xr_die "fi_pingpong rdm ran no 1 MiB transfer"
	pass "fi_pingpong -p \"xroce;ofi_rxm\" -e rdm -c (every size; above 128 KiB by rendezvous READ)"
	pair "fi_pingpong -e rdm, FI_PROVIDER=xroce, at loss $loss" \
		env FI_PROVIDER=xroce FI_LOG_LEVEL=info FI_LOG_PROV=ofi_rxm \
		fi_pingpong -p "xroce;ofi_rxm" -e rdm -I 20 -c -- \
		env FI_PROVIDER=xroce FI_LOG_LEVEL=info FI_LOG_PROV=ofi_rxm \
		fi_pingpong -p "xroce;ofi_rxm" -e rdm -I 20 -c "$BIP"
	grep -q "Protocol limits: Eager: 16384, SAR: 33554432" "$TMP/cli.out" ||
		xr_die "FI_PROVIDER=xroce: rxm's SAR limit is not 32 MiB: $(grep -i 'protocol limits' "$TMP/cli.out")"
	grep -q '^1m ' "$TMP/cli.out" || xr_die "fi_pingpong rdm ran no 1 MiB transfer"
	pass "fi_pingpong -p \"xroce;ofi_rxm\" -e rdm -c, FI_PROVIDER=xroce: rxm's SAR limit 32 MiB (large messages segmented)"
	d1=$(xr_fab_counter drop_loss)
	if [ "$loss" != 0 ] && [ $((d1 - d0)) -lt 10 ]; then
		xr_die "loss $loss: the switch dropped only $((d1 - d0)) packets"
	fi
	[ "$loss" = 0 ] || pass "the switch dropped $((d1 - d0)) packets meanwhile"
done
xr_fab_loss 0
echo "test_ofi: $CHECKS checks passed"
