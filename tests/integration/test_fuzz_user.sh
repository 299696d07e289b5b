#!/usr/bin/env bash
# test_fuzz_user.sh: the userspace fuzzers (tests/fuzz/: control messages
# and XDP event records fed to libxroce under ASan + UBSan, with the
# queue-pair and completion invariants checked after every step), briefly:
# the regression inputs, then a fixed, seeded run of each (about 10 s).  Longer runs:
# tests/fuzz/run.sh SECONDS.
# Usage: tests/integration/test_fuzz_user.sh   (root: the fuzzers create BPF maps)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash tests/fuzz/run.sh --quick
