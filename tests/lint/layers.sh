#!/usr/bin/env bash
# layers.sh: the structure rules the compiler cannot see.
#   1. user/: a layer includes only its own headers and those of the layers
#      below it (util, algo, io, engine, api, bottom up; the Makefile's -I
#      flags make most violations a compile error already), and the api
#      layer includes nothing of the engine but engine.h.  The libfabric
#      provider (ofi) sits above the public API: its own headers and, of
#      include/, only xroce/xroce.h and xroce/fi_xroce.h (no contract/).
#   2. loader/ includes no header of the library's internal layers (only
#      include/, include/contract/ and user/util/, which it shares), and
#      the ibverbs compatibility layer (user/ibverbs/) nothing of the
#      library but the public xroce.h.
#   3. Each layer's room header names every source file of the room, so the
#      map of the room cannot go stale.
#   4. No function of the library, the command or the XDP programs is
#      longer than MAX_FN_LINES lines, and none hides a helper in a bare
#      { } block.
# Usage: tests/lint/layers.sh   (exit 1 on a violation, each one printed)
set -uo pipefail
cd "$(dirname "$0")/../.."
MAX_FN_LINES=120
rc=0
fail() { echo "layers: $*"; rc=1; }

declare -A BELOW=(
	[util]="util"
	[algo]="algo"
	[io]="io algo"
	[engine]="engine io algo util"
	[api]="api engine"
	[ofi]="ofi"
)
declare -A ROOM_HEADER=(
	[util]=user/util/util.h [algo]=user/algo/algo.h [io]=user/io/io.h
	[engine]=user/engine/engine.h [api]=include/xroce/xroce.h
	[ofi]=user/ofi/ofi.h
)

# Where a quoted include resolves for a file of layer $1: prints the folder.
resolve() {
	local layer=$1 inc=$2 dir l
	dir=$(dirname "$3")
	[ -e "$dir/$inc" ] && { echo "$dir"; return; }
	[ -e "include/$inc" ] && { echo include; return; }
	# A BPF skeleton, generated from bpf/NAME.bpf.c into build/.
	[[ $inc == *.skel.h && -e bpf/${inc%.skel.h}.bpf.c ]] && { echo include; return; }
	for l in util algo io engine api ofi; do
		[ -e "user/$l/$inc" ] && { echo "user/$l"; return; }
	done
	echo "?"
}

for layer in util algo io engine api ofi; do
	for f in user/$layer/*.[ch]; do
		[ -e "$f" ] || continue
		while IFS= read -r inc; do
			where=$(resolve "$layer" "$inc" "$f")
			if [ "$layer" = ofi ] && [ "$where" = include ] &&
				[ "$inc" != xroce/xroce.h ] && [ "$inc" != xroce/fi_xroce.h ]; then
				fail "$f (ofi) includes \"$inc\" (only the public xroce/ headers)"
			fi
			case $where in
			include) continue ;;
			"?") fail "$f includes \"$inc\", found nowhere" ;;
			user/*)
				l=${where#user/}
				[[ " ${BELOW[$layer]} " == *" $l "* ]] ||
					fail "$f ($layer) includes \"$inc\" of layer $l"
				;;
			esac
			if [ "$layer" = api ] && [ "$where" = user/engine ] &&
				[ "$inc" != engine.h ]; then
				fail "$f (api) includes engine header \"$inc\" (only engine.h)"
			fi

		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
	hdr=${ROOM_HEADER[$layer]}
	[ "$layer" = api ] && continue
	for c in user/$layer/*.c; do
		name=$(basename "$c" .c)
		grep -qw "$name" "$hdr" || fail "$hdr does not name $c"
	done
done

for f in loader/*.[ch]; do
	while IFS= read -r inc; do
		for l in algo io engine api; do
			[ -e "user/$l/$inc" ] && fail "$f includes \"$inc\" of user/$l"
		done
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

for f in user/ibverbs/*.[ch] user/ibverbs/standin/*.c; do
	while IFS= read -r inc; do
		[ "$inc" = xroce/xroce.h ] || [ -e "$(dirname "$f")/$inc" ] ||
			fail "$f (ibverbs) includes \"$inc\": only xroce/xroce.h of the library"
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# Function bodies: from a line starting a definition at column 0 to the
# closing brace at column 0.  Bare blocks: a line holding only "{" whose
# previous line ends a statement (not an if/for/while/else/switch/do, a
# function header or an initialiser).
for f in user/*/*.c user/ibverbs/standin/*.c loader/*.c bpf/*.bpf.c bpf/lib/*.h \
	include/contract/*.h; do
	awk -v f="$f" -v max=$MAX_FN_LINES '
	/^[a-zA-Z_].*\(/ && !/;[ \t]*$/ { name = $0; start = NR; infn = 0 }
	/^\{/ && start { infn = 1; body = NR }
	/^\}/ && infn {
		if (NR - start + 1 > max) {
			sub(/\(.*/, "", name); n = split(name, w, /[ *]+/)
			printf "layers: %s:%d: %s is %d lines (max %d)\n", f, start, w[n], NR - start + 1, max
			bad = 1
		}
		infn = 0; start = 0
	}
	/^[ \t]+\{[ \t]*$/ && prev ~ /;[ \t]*$/ {
		printf "layers: %s:%d: a bare { } block (name the helper)\n", f, NR
		bad = 1
	}
	{ if ($0 !~ /^[ \t]*$/) prev = $0 }
	END { exit bad }' "$f" || rc=1
done

[ $rc -eq 0 ] && echo "layers: clean"
exit $rc
