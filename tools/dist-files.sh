#!/bin/sh
# dist-files.sh TARBALL - check that the release tarball carries every file
# of the git checkout it was made from (run from the top of that checkout).
# The checks of 'make distcheck' run only the unit and CLI tests; this is
# what keeps a file that only an integration test, a bench or a doc needs
# from being left out of EXTRA_DIST. Not shipped on purpose: the CI entry
# point (.ci/) and .gitignore.
set -eu
tarball=${1:?usage: dist-files.sh TARBALL}
[ -f "$tarball" ] || { echo "dist-files.sh: no tarball $tarball (run make dist)" >&2; exit 2; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ echo "dist-files.sh: $(pwd) is not a git checkout: nothing to compare the tarball with" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -tzf "$tarball" | sed 's|^[^/]*/||' | sort -u >"$tmp/dist"
git ls-files | grep -v -e '^\.ci/' -e '^\.gitignore$' | sort -u >"$tmp/git"
missing=$(comm -23 "$tmp/git" "$tmp/dist")
if [ -n "$missing" ]; then
	echo "dist-files.sh: $(echo "$missing" | wc -l) file(s) of the checkout are not in $tarball;" \
		"add them to EXTRA_DIST (or a _SOURCES/dist_ variable) in Makefile.am:" >&2
	echo "$missing" | sed 's/^/  /' >&2
	exit 1
fi
echo "dist-files.sh: all $(wc -l <"$tmp/git") files of the checkout are in $(basename "$tarball")"
