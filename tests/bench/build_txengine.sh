#!/usr/bin/env bash
# build_txengine.sh: build the transmit-engine benchmark (not part of the
# product, so not built by the project Makefile):
#   build/bench/txengine.bpf.o   its BPF programs (clang -target bpf)
#   build/bench/txengine         the driver (gcc, no sanitizers: it measures)
# The driver links user/xsk.c, user/pktbuild.c and user/csum.c directly, so
# it needs no prior `make`.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-build/bench}
mkdir -p "$OUT"
MULTIARCH=$(gcc -dumpmachine)
CLANG=${CLANG:-clang}
CC=${CC:-gcc}
"$CLANG" -O2 -g -target bpf -mcpu=v3 -Wall -Werror -Wno-unused-function \
	-I"/usr/include/$MULTIARCH" -Iinclude -Ibpf -Itests/bench \
	-c tests/bench/txengine.bpf.c -o "$OUT/txengine.bpf.o"
"$CC" -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
	-Iinclude -Iuser -Itests/bench -o "$OUT/txengine" tests/bench/txengine.c \
	user/xsk.c user/pktbuild.c user/csum.c -lbpf -lelf -lz
