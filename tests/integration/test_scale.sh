#!/usr/bin/env bash
# test_scale.sh: 4096 connections in one context between two hosts, all
# moving data at once (tests/integration/itest_scale.c): one verified
# WRITE_WITH_IMM of 4 KiB per connection, exactly one receive completion
# each.  Prints what a connection costs (library and XDP state) and how
# long set-up and the transfer took.
# Usage: tests/integration/test_scale.sh [N]   (root; N default 4096)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
[ "$(id -u)" -eq 0 ] || xr_die "needs root"
N=${1:-4096}
XROCE=$PWD/build/xroce
ITEST=$PWD/build/tests/itest_scale
[ -x "$ITEST" ] || xr_die "$ITEST missing: run make first"
PFX=$(xr_prefix)
TMP=$(mktemp -d "/tmp/${PFX}.XXXXXX")
xr_cleanup_push "rm -rf '$TMP'"
xr_cleanup_push "bash tests/fabric/fabric.sh down $PFX >/dev/null 2>&1"
bash tests/fabric/fabric.sh up pair --prefix "$PFX" --env "$TMP/env" >/dev/null
# shellcheck disable=SC1091
. "$TMP/env"
nsx "$FAB_h0_NS" "$XROCE" attach --force eth0 >/dev/null
nsx "$FAB_h1_NS" "$XROCE" attach --force eth0 >/dev/null
nsx "$FAB_h1_NS" timeout 300 "$ITEST" server eth0 "$N" >"$TMP/srv" 2>&1 &
spid=$!
for _ in $(seq 1 200); do
	nsx "$FAB_h1_NS" ss -Hlun "sport = :4799" | grep -q . && break
	sleep 0.05
done
nsx "$FAB_h0_NS" timeout 300 "$ITEST" client eth0 "$FAB_h1_IP4_0" "$N" ||
	xr_die "client failed: $(cat "$TMP/srv")"
wait "$spid" || xr_die "server failed: $(cat "$TMP/srv")"
cat "$TMP/srv"
echo "test_scale: $N connections passed"
