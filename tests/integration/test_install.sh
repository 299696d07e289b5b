#!/usr/bin/env bash
# test_install.sh: `make install` as a packager runs it, into a staging
# directory (DESTDIR) with PREFIX=/usr/local, after a build made with the
# default prefix:
#   - exactly the files a user needs: the command, the shared library
#     (libxroce.so.0, soname libxroce.so.0, and the libxroce.so link), the
#     static library, include/xroce/xroce.h alone (no include/contract), the
#     XDP object xroce.bpf.o (the one built, not the fabric emulator's),
#     xroce.pc, the two man pages and the bash completion;
#   - xroce.pc names the install's prefix (also another one, with its own
#     LIBDIR), and a tiny program compiles and links against the staged
#     tree with `pkg-config --cflags --libs xroce`, shared and --static,
#     and runs (a call that fails cleanly: no device, no root needed);
#   - the man pages render with no groff warning, and xroce(8) covers every
#     command of `xroce help` and every option of each one's --help;
#   - `make uninstall` leaves no file behind.
# The staging directories are removed at the end.
# Usage: tests/integration/test_install.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh

for t in pkg-config cc groff readelf; do
	command -v "$t" >/dev/null || xr_die "$t missing: run tests/deps.sh"
done
TMP=$(mktemp -d /tmp/xroce-install.XXXXXX)
xr_cleanup_push "rm -rf '$TMP'"
CHECKS=0
pass() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }

# stage DIR VAR=VALUE...: make install into DIR
stage() {
	local dir=$1
	shift
	make -s --no-print-directory install DESTDIR="$dir" "$@" >"$TMP/make.log" 2>&1 ||
		xr_die "make install $*: $(tail -5 "$TMP/make.log")"
}

# (grep -q in a pipe would stop reading early: with pipefail, the writer's
# SIGPIPE would fail the check, hence grep >/dev/null.)

# files DIR: every file and link under DIR, relative, sorted
files() { (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort); }

S=$TMP/stage
P=$S/usr/local
stage "$S" PREFIX=/usr/local
expected="usr/local/bin/xroce
usr/local/include/xroce/fi_xroce.h
usr/local/include/xroce/xroce.h
usr/local/lib/libfabric/libxroce-fi.so
usr/local/lib/libxroce.a
usr/local/lib/libxroce.so
usr/local/lib/libxroce.so.0
usr/local/lib/pkgconfig/xroce.pc
usr/local/lib/xroce/verbs/libefa.so.1
usr/local/lib/xroce/verbs/libibverbs.so.1
usr/local/lib/xroce/verbs/libmlx5.so.1
usr/local/lib/xroce/xroce.bpf.o
usr/local/share/bash-completion/completions/xroce
usr/local/share/man/man3/libxroce.3
usr/local/share/man/man8/xroce.8"
got=$(files "$S")
[ "$got" = "$expected" ] ||
	xr_die "installed files differ from the list: $(diff <(echo "$expected") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
pass "the file list: $(echo "$got" | wc -l) files, no test object, no contract header"

[ "$(readlink "$P/lib/libxroce.so")" = libxroce.so.0 ] || xr_die "libxroce.so is not a link to libxroce.so.0"
readelf -d "$P/lib/libxroce.so.0" | grep 'SONAME.*\[libxroce\.so\.0\]' >/dev/null ||
	xr_die "libxroce.so.0 has not the soname libxroce.so.0"
if [ ! -x "$P/bin/xroce" ] || [ -x "$P/lib/libxroce.a" ] || [ -x "$P/include/xroce/xroce.h" ]; then
	xr_die "modes: the command must be executable, the headers and archives not"
fi
cmp -s "$P/lib/xroce/xroce.bpf.o" build/bpf/xroce.bpf.o || xr_die "xroce.bpf.o is not the XDP object built"
readelf -S "$P/lib/xroce/xroce.bpf.o" | grep ' xdp\.frags ' >/dev/null || xr_die "xroce.bpf.o has no xdp.frags program"
cmp -s "$P/share/bash-completion/completions/xroce" loader/xroce-completion.bash ||
	xr_die "the completion installed is not loader/xroce-completion.bash"
[[ $("$P/bin/xroce" --version) =~ ^xroce\ [0-9.]+$ ]] || xr_die "the installed xroce does not run"
pass "libxroce.so -> libxroce.so.0 (soname libxroce.so.0), modes, the XDP object, the completion, xroce --version"

# The libfabric provider finds the libxroce.so.0 installed beside it
# (RUNPATH $ORIGIN/..), wherever the tree is.
FIP=$P/lib/libfabric/libxroce-fi.so
# shellcheck disable=SC2016 # $ORIGIN is literal
readelf -d "$FIP" | grep RUNPATH | grep -F '$ORIGIN/..' >/dev/null || xr_die "libxroce-fi.so: $(readelf -d "$FIP" | grep -E 'RUNPATH|RPATH')"
ldd "$FIP" | grep -F "$P/lib/libfabric/../libxroce.so.0" >/dev/null ||
	xr_die "libxroce-fi.so does not load the staged libxroce.so.0: $(ldd "$FIP" | grep xroce)"
pass "libxroce-fi.so in lib/libfabric loads the libxroce.so.0 installed with it"

export PKG_CONFIG_SYSROOT_DIR=$S PKG_CONFIG_PATH=$P/lib/pkgconfig
grep -qx 'prefix=/usr/local' "$P/lib/pkgconfig/xroce.pc" || xr_die "xroce.pc: $(head -1 "$P/lib/pkgconfig/xroce.pc")"
[ "$(pkg-config --variable=libdir xroce)" = "$P/lib" ] || xr_die "xroce.pc: libdir $(pkg-config --variable=libdir xroce)"
pkg-config --cflags xroce | grep -- "-I$P/include" >/dev/null || xr_die "pkg-config --cflags: $(pkg-config --cflags xroce)"
pkg-config --libs xroce | grep -- "-L$P/lib -lxroce" >/dev/null || xr_die "pkg-config --libs: $(pkg-config --libs xroce)"
pass "xroce.pc: prefix /usr/local, -I and -L into the staged tree"

cat >"$TMP/app.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <xroce/xroce.h>

/* A device with no interface: the library refuses it with -EINVAL and a
 * one-line message, which needs neither root nor xroce attached. */
int main(void)
{
	struct xroce_device_attr attr = { .nplanes = 0 };
	struct xroce_device *dev;
	int rc = xroce_open_device(&attr, &dev);

	printf("%s %d\n", xroce_wc_status_str(XROCE_WC_SUCCESS), rc);
	return rc == -EINVAL ? 0 : 1;
}
EOF
# shellcheck disable=SC2046
cc -Wall -Werror -o "$TMP/app" "$TMP/app.c" $(pkg-config --cflags --libs xroce) 2>"$TMP/cc.log" ||
	xr_die "shared link: $(cat "$TMP/cc.log")"
readelf -d "$TMP/app" | grep 'NEEDED.*\[libxroce\.so\.0\]' >/dev/null || xr_die "the program does not need libxroce.so.0"
out=$(LD_LIBRARY_PATH=$P/lib "$TMP/app" 2>"$TMP/app.err") || xr_die "the program failed: $out $(cat "$TMP/app.err")"
[ "$out" = "success -22" ] || xr_die "the program printed '$out'"
grep -q 'nplanes' "$TMP/app.err" || xr_die "no one-line reason from the library: $(cat "$TMP/app.err")"
pass "a program built with pkg-config --cflags --libs xroce links libxroce.so.0 and runs"

# shellcheck disable=SC2046
cc -Wall -Werror -static -o "$TMP/app-static" "$TMP/app.c" $(pkg-config --static --cflags --libs xroce) \
	2>"$TMP/cc.log" || xr_die "static link: $(cat "$TMP/cc.log")"
! readelf -d "$TMP/app-static" 2>/dev/null | grep NEEDED >/dev/null || xr_die "the static program needs shared libraries"
[ "$("$TMP/app-static" 2>/dev/null)" = "success -22" ] || xr_die "the static program failed"
pass "and with pkg-config --static, fully static"
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH

for m in "$P/share/man/man8/xroce.8" "$P/share/man/man3/libxroce.3"; do
	warn=$(groff -man -ww -z "$m" 2>&1)
	[ -z "$warn" ] || xr_die "${m##*/}: $warn"
	[ "$(groff -man -Tutf8 "$m" 2>/dev/null | wc -l)" -gt 100 ] || xr_die "${m##*/} renders to almost nothing"
done
pass "man pages render with no groff warning"

# Every command of `xroce help` has its section in xroce(8), and every
# option of its --help is there.
man8=$(groff -man -Tutf8 -P-cbou "$P/share/man/man8/xroce.8" 2>/dev/null | sed 's/\xe2\x80\x90/-/g')
for c in $("$P/bin/xroce" help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}'); do
	grep -i "^THE .*\b$c\b.* COMMAND" <<<"$man8" >/dev/null || xr_die "xroce(8) has no section for $c"
	for o in $("$P/bin/xroce" "$c" --help | sed -nE 's/^ +(-[A-Za-z], )?(--[a-z-]+).*/\2/p'); do
		[ "$o" = --help ] || grep -e "$o" <<<"$man8" >/dev/null || xr_die "xroce(8) does not name $c $o"
	done
done
pass "xroce(8) has a section for every command and names every option of each --help"

S2=$TMP/stage2
stage "$S2" PREFIX=/opt/xr LIBDIR=/opt/xr/lib64
pc2=$(head -2 "$S2/opt/xr/lib64/pkgconfig/xroce.pc" | tr '\n' ' ')
# shellcheck disable=SC2016
[ "$pc2" = 'prefix=/opt/xr libdir=${prefix}/lib64 ' ] ||
	xr_die "xroce.pc for PREFIX=/opt/xr LIBDIR=/opt/xr/lib64: $pc2"
if [ ! -e "$S2/opt/xr/lib64/libxroce.so.0" ] || [ ! -e "$S2/opt/xr/bin/xroce" ]; then
	xr_die "PREFIX=/opt/xr LIBDIR=/opt/xr/lib64: $(files "$S2" | tr '\n' ' ')"
fi
pass "another PREFIX and LIBDIR at install time: xroce.pc and the files follow"

make -s --no-print-directory uninstall DESTDIR="$S" PREFIX=/usr/local >"$TMP/make.log" 2>&1 ||
	xr_die "make uninstall: $(tail -5 "$TMP/make.log")"
left=$(files "$S")
[ -z "$left" ] || xr_die "make uninstall left: $(echo "$left" | tr '\n' ' ')"
if [ -e "$P/lib/xroce" ] || [ -e "$P/include/xroce" ]; then
	xr_die "make uninstall left xroce's own directories"
fi
pass "make uninstall removes every file, and lib/xroce and include/xroce"

echo "test_install: $CHECKS checks passed"
