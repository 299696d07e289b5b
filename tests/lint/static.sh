#!/usr/bin/env bash
# static.sh: static analysis of the C sources, as the test suite runs it.
#   cppcheck    warnings, performance, portability (exit 1 on findings)
#   clang-tidy  clang-analyzer-* and bugprone-* (exit 1 on findings)
# Checks switched off are listed below with the reason.  Generated
# skeletons (build/*.skel.h) are not ours: their findings are ignored.
# Usage: tests/lint/static.sh [--fast]   (--fast: cppcheck only)
set -uo pipefail
cd "$(dirname "$0")/../.."
rc=0
SRCS=(user/*/*.c user/ibverbs/standin/*.c loader/*.c tests/integration/itest_*.c
      tests/fabric/*.c tests/ofi/*.c)

echo "== cppcheck"
# LIBBPF_OPTS is a libbpf macro cppcheck cannot see through.
cppcheck --quiet --platform=unix64 --enable=warning,performance,portability \
	--error-exitcode=1 --inline-suppr -Iinclude -Iuser/util -Iuser/algo -Iuser/io -Iuser/engine -Iuser/ofi -Itests/ofi -Ibpf -Ibuild \
	--suppress=missingIncludeSystem --suppress=missingInclude \
	-D__linux__ -D__x86_64__ \
	"-DLIBBPF_OPTS(T,N,...)=struct T N = {.sz = sizeof(struct T), __VA_ARGS__}" \
	"${SRCS[@]}" || rc=1

[ "${1:-}" = "--fast" ] && exit $rc

echo "== clang-tidy"
# Off: easily-swappable-parameters, narrowing-conversions, implicit-widening
# and assignment-in-if (style of the whole code base: u32/u64 protocol
# arithmetic is deliberate); reserved-identifier (kernel UAPI names);
# DeprecatedOrUnsafeBufferHandling (wants memcpy_s, not in glibc);
# valist.Uninitialized (false positives on va_start with glibc 2.36).
CHECKS='-*,clang-analyzer-*,bugprone-*,-bugprone-easily-swappable-parameters'
CHECKS+=',-bugprone-reserved-identifier,-bugprone-narrowing-conversions'
CHECKS+=',-bugprone-implicit-widening-of-multiplication-result'
CHECKS+=',-bugprone-assignment-in-if-condition'
CHECKS+=',-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling'
CHECKS+=',-clang-analyzer-valist.Uninitialized'
out=$(clang-tidy --quiet -checks="$CHECKS" "${SRCS[@]}" -- -std=gnu11 \
	-D_GNU_SOURCE -Iinclude -Iuser/util -Iuser/algo -Iuser/io -Iuser/engine -Iuser/ofi -Itests/ofi -Ibpf -isystem build -Iloader -Itests/fabric \
	-I"$(clang -print-resource-dir)/include" 2>/dev/null |
	grep -E "warning:|error:" | grep -v "^build/")
if [ -n "$out" ]; then
	echo "$out"
	rc=1
fi
[ $rc -eq 0 ] && echo "lint: clean"
exit $rc
