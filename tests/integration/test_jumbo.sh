#!/usr/bin/env bash
# test_jumbo.sh: test_transfer.sh's transfers, completions and peer deaths
# over MTU 9000 links (1 B .. 256 MiB at 0, 1 and 10% loss).  Jumbo frames arrive at
# the XDP program (xdp.frags) as a linear part plus fragments, so placement,
# the checksum and the ACK built in place work across fragments; they leave
# the sender as a header frame plus payload pieces sent from the memory map
# (multi-buffer AF_XDP), 8192 bytes of payload a packet.
# Usage: tests/integration/test_jumbo.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash tests/integration/test_transfer.sh --mtu 9000
