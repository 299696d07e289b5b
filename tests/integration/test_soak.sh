#!/usr/bin/env bash
# test_soak.sh: the soak (tests/bench/soak.sh) for about a minute: mixed
# WRITE / WRITE_WITH_IMM / SEND / READ traffic with many connections over
# two planes under random loss and plane blackholes; no corruption, no
# failed transfer, no map entry or connection left behind, bounded RSS.
# The full run: tests/bench/soak.sh --minutes 10.
# Usage: tests/integration/test_soak.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash tests/bench/soak.sh --quick "$@"
