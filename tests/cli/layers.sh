#!/usr/bin/env bash
# tests/cli/layers.sh - lib/'s four folders are four layers, and an include
# across them is a build error (TAP, no Slurm). core is the ground floor;
# state, admit and cloud each use core alone (doc/design.md §2). Each
# library is compiled with the include flags Makefile.am gives it
# (lib_LAYER_libburst_LAYER_la_CPPFLAGS); here a file that includes a header
# of each folder is compiled with each library's flags as the build has them:
# its own folder's and core's headers must be found, every other folder's
# must not. And no file of lib/ reaches around the rule with a path in its
# include ("../admit/x.h").
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"

[ -f "$build/Makefile" ] || bail "no Makefile in $build (configure first, or set BURST_TOP_BUILDDIR)"
# a variable of the build's Makefile, as make expands it
mkvar() {
	printf 'print-var:\n\t@echo $(%s)\n' "$1" >"$tmp/print.mk"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$build" -o Makefile -o config.status -f Makefile -f "$tmp/print.mk" print-var 2>/dev/null
}
cc=$(mkvar CC)
[ -n "$cc" ] || bail "cannot read CC from $build/Makefile"
layers="core state admit cloud"
for from in $layers; do
	cppflags=$(mkvar "lib_${from}_libburst_${from}_la_CPPFLAGS")
	cflags=$(mkvar "lib_${from}_libburst_${from}_la_CFLAGS")
	[ -n "$cppflags" ]
	ok $? "the $from library has include flags of its own in Makefile.am"
	for to in $layers; do
		# one header of the folder (the first, in name order), and every
		# header, compiled from a file outside lib/ as a file of $from is
		h=$(cd "$src/lib/$to" && ls ./*.h | head -1)
		h=${h#./}
		echo "#include \"$h\"" >"$tmp/probe.c"
		# (the probe's folder is not lib/$from: the quoted include is looked
		# up with the flags alone, as from a file of $from for any header
		# not in $from itself)
		# (from the build's folder, as make runs it: configure may have been
		# given a relative path, and the flags' paths are then relative)
		(cd "$build" && eval "$cc $cppflags $cflags -fsyntax-only -I'$src/lib/$from' '$tmp/probe.c'") \
			>"$tmp/cc.out" 2>&1
		rc=$?
		if [ "$to" = "$from" ] || [ "$to" = core ]; then
			[ $rc -eq 0 ]
			ok $? "lib/$from sees lib/$to's $h" "$tmp/cc.out"
		else
			[ $rc -ne 0 ] && grep -q "$h: No such file" "$tmp/cc.out"
			ok $? "lib/$from including lib/$to's $h is a build error" "$tmp/cc.out"
		fi
	done
done
# no path in a quoted include of lib/: it would go around the flags
(cd "$src" && grep -n '#[[:space:]]*include[[:space:]]*"[^"]*/' lib/*/*.[ch]) >"$tmp/paths"
[ ! -s "$tmp/paths" ]
ok $? "no include in lib/ names a path (found: $(head -3 "$tmp/paths" | tr '\n' ' '))" "$tmp/paths"
# nothing is left in lib/ outside the four folders
(cd "$src" && find lib -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \)) >"$tmp/loose"
[ ! -s "$tmp/loose" ]
ok $? "every source of lib/ is in one of its four folders (loose: $(tr '\n' ' ' <"$tmp/loose"))"
done_testing
