# shellcheck shell=bash
# common.sh: everything a test or benchmark script takes from tests/lib/,
# in one line: `. tests/lib/common.sh` (from the repository's root).
#   netns.sh   namespaces, veths, cleanup on exit
#   check.sh   preconditions, pass/fail, temp dir, JSON
#   fabric.sh  an emulated fabric for the script
#   xroce.sh   xroce's counters, listeners, connections, map state
_xr_lib=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/lib/netns.sh
. "$_xr_lib/netns.sh"
# shellcheck source=tests/lib/check.sh
. "$_xr_lib/check.sh"
# shellcheck source=tests/lib/fabric.sh
. "$_xr_lib/fabric.sh"
# shellcheck source=tests/lib/xroce.sh
. "$_xr_lib/xroce.sh"
unset _xr_lib
