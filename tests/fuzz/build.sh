#!/usr/bin/env bash
# build.sh: build the libFuzzer harnesses of libxroce's input parsers,
# without the Makefile: clang with -fsanitize=fuzzer,address,undefined,
# the library's sources compiled in directly (user/*/*.c except io/xsk.c, whose
# AF_XDP socket tests/fuzz/xsk_loop.c replaces), and the operating system
# around the library simulated through -Wl,--wrap (tests/fuzz/sim.h).
#
#   build/fuzz/fuzz_ctrl     control messages (fuzz_ctrl.c)
#   build/fuzz/fuzz_events   XDP event records: ACK/NAK/RECV/READ/PROBE
#   build/fuzz/fuzz_bind     BIND records and xroce_qp_bind (fuzz_bind.c)
#
# Usage: tests/fuzz/build.sh [OUTDIR]   (default build/fuzz)
#        CLANG=clang-19 tests/fuzz/build.sh   another compiler
set -euo pipefail
cd "$(dirname "$0")/../.." || exit 1

CLANG=${CLANG:-clang}
OUT=${1:-build/fuzz}
OBJ=$OUT/obj
command -v "$CLANG" >/dev/null || { echo "build.sh: $CLANG not found" >&2; exit 1; }

CFLAGS=(-g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter
	-Iinclude -Iuser/util -Iuser/algo -Iuser/io -Iuser/engine -Ibpf -Ibuild -Itests/fuzz
	-fno-omit-frame-pointer -fno-sanitize-recover=all)
# The library: coverage for the fuzzer, sanitizers everywhere.
SAN=address,undefined
LIB_SAN=("-fsanitize=fuzzer-no-link,$SAN")
HARNESS_SAN=("-fsanitize=fuzzer,$SAN")
WRAPS=(sendmsg xr_now_ns xr_random64 xr_nl_resolve ring_buffer__new ring_buffer__consume
	ring_buffer__free recvfrom sendto poll)
LDFLAGS=()
for w in "${WRAPS[@]}"; do LDFLAGS+=("-Wl,--wrap=$w"); done
LIBS=(-lbpf -lelf -lz -lm -lpthread)

mkdir -p "$OBJ"
# Objects are rebuilt when their source or any header is newer.
newest_hdr=$(find user include bpf/lib tests/fuzz -name '*.h' -printf '%T@ %p\n' |
	sort -n | tail -1 | cut -d' ' -f2-)
compile() { # SRC OBJ FLAGS...
	local src=$1 obj=$2
	shift 2
	if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_hdr" -nt "$obj" ] ||
		[ "$0" -nt "$obj" ]; then
		"$CLANG" "${CFLAGS[@]}" "$@" -c "$src" -o "$obj"
	fi
}

lib_objs=()
for src in user/*/*.c; do
	[ "$src" = user/io/xsk.c ] && continue
	base=${src#user/}
	obj=$OBJ/lib_${base//\//_}
	obj=${obj%.c}.o
	compile "$src" "$obj" "${LIB_SAN[@]}"
	lib_objs+=("$obj")
done
common=()
for src in tests/fuzz/sim.c tests/fuzz/xsk_loop.c tests/fuzz/harness.c tests/fuzz/testhooks.c; do
	obj=$OBJ/$(basename "${src%.c}").o
	compile "$src" "$obj" "${LIB_SAN[@]}"
	common+=("$obj")
done
for h in fuzz_ctrl fuzz_events fuzz_bind; do
	compile "tests/fuzz/$h.c" "$OBJ/$h.o" "${LIB_SAN[@]}"
	"$CLANG" "${HARNESS_SAN[@]}" -o "$OUT/$h" "$OBJ/$h.o" "${common[@]}" \
		"${lib_objs[@]}" "${LDFLAGS[@]}" "${LIBS[@]}"
	echo "built $OUT/$h"
done
