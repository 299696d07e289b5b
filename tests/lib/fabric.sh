# shellcheck shell=bash
# fabric.sh: an emulated fabric (tests/fabric/fabric.sh) for one test
# script, removed on exit; source it after tests/lib/netns.sh and
# tests/lib/check.sh.
#
#   xr_fab_up TOPO [ARGS...]  build TOPO with a fresh prefix (or $PFX when
#                             set) and source its description (FAB_*;
#                             written to $TMP/fab.env): needs TMP
#   xr_fab_down               remove it now (also done on exit)
#   xr_fab_pair [ARGS...]     `pair` with xroce attached to both hosts'
#                             eth0; sets A, B (host namespaces), SW (the
#                             switch's) and BIP (B's address)
#   xr_fab_loss P             random loss P on both ports of the pair's
#                             switch (a0: A -> B, b0: B -> A)
#   xr_fab_counter NAME [PORT]  the switch's counter NAME summed over its
#                             ports (or over PORT's)
#   xr_fab_attach BIN NS...   BIN's own XDP program on eth0 of each NS
#                             (any program there removed first), for
#                             benches that compare two builds
#   xr_private_bins           run on copies of build/xroce and build/xrfabric
#                             in TMP (their BPF objects are built in), so a
#                             rebuild during a long run cannot swap them
#                             halfway: sets XROCE and XRFABRIC
#
# XROCE and XRFABRIC name the binaries (default build/'s).

XROCE=${XROCE:-$XR_ROOT/build/xroce}
XRFABRIC=${XRFABRIC:-$XR_ROOT/build/xrfabric}

xr_fab_up() {
	local p=${PFX:-}
	[ -n "$p" ] || p=$(xr_prefix)
	xr_cleanup_push "bash '$XR_ROOT/tests/fabric/fabric.sh' down $p >/dev/null 2>&1"
	XRFABRIC=$XRFABRIC bash "$XR_ROOT/tests/fabric/fabric.sh" up "$@" --prefix "$p" \
		--env "$TMP/fab.env" >/dev/null || xr_die "fabric.sh up $* failed"
	# shellcheck disable=SC1091 # written by fabric.sh up
	. "$TMP/fab.env"
}

xr_fab_attach() {
	local bin=$1 ns
	shift
	for ns in "$@"; do
		# off first: a build that predates the layout check would
		# configure the other build's program in place instead of
		# replacing it
		nsx "$ns" ip link set dev eth0 xdp off
		nsx "$ns" "$bin" attach --force eth0 >/dev/null || xr_die "attach in $ns"
	done
}

xr_fab_down() { bash "$XR_ROOT/tests/fabric/fabric.sh" down "$FAB_PREFIX" >/dev/null; }

xr_fab_pair() {
	xr_fab_up pair "$@"
	# shellcheck disable=SC2034,SC2154 # for the caller; FAB_* from the env file
	{
		A=$FAB_h0_NS
		B=$FAB_h1_NS
		SW=${FAB_h0_PORT_0%%:*}
		BIP=$FAB_h1_IP4_0
	}
	nsx "$A" "$XROCE" attach --force eth0 >/dev/null || xr_die "attach in $A"
	nsx "$B" "$XROCE" attach --force eth0 >/dev/null || xr_die "attach in $B"
}

xr_fab_loss() {
	"$XRFABRIC" set --netns "$SW" --port a0 "loss=$1" >/dev/null
	"$XRFABRIC" set --netns "$SW" --port b0 "loss=$1" >/dev/null
}

xr_fab_counter() {
	"$XRFABRIC" show --netns "$SW" --json |
		xr_json 'sum(p["counters"][a[0]] for p in j["ports"] if a[1] in ("", p["port"]))' \
			"$1" "${2:-}"
}

xr_private_bins() {
	cp "$XR_ROOT/build/xroce" "$XR_ROOT/build/xrfabric" "$TMP/" ||
		xr_die "cannot copy the binaries"
	XROCE=$TMP/xroce
	XRFABRIC=$TMP/xrfabric
}
