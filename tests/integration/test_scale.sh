#!/usr/bin/env bash
# test_scale.sh: 4096 connections in one context between two hosts, all
# moving data at once (tests/integration/itest_scale.c): one verified
# WRITE_WITH_IMM of 4 KiB per connection, exactly one receive completion
# each.  Prints what a connection costs (library and XDP state) and how
# long set-up and the transfer took.
# Usage: tests/integration/test_scale.sh [N]   (root; N default 4096)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
xr_need_root
N=${1:-4096}
ITEST=$PWD/build/tests/itest_scale
xr_need_exec "$ITEST"
PFX=$(xr_prefix)
xr_tmpdir "$PFX"
xr_fab_pair
nsx "$B" timeout 300 "$ITEST" server eth0 "$N" >"$TMP/srv" 2>&1 &
spid=$!
xr_wait_listen "$B" 4799
nsx "$A" timeout 300 "$ITEST" client eth0 "$BIP" "$N" ||
	xr_die "client failed: $(cat "$TMP/srv")"
wait "$spid" || xr_die "server failed: $(cat "$TMP/srv")"
cat "$TMP/srv"
echo "test_scale: $N connections passed"
