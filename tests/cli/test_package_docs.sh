#!/usr/bin/env bash
# tests/cli/test_package_docs.sh - the packages carry the docs that
# `make install` installs (TAP, no Slurm). Makefile.am's dist_doc_DATA (with
# README.md) is what a source install puts in the doc directory; the Debian
# package slurm-burst-common (debian/slurm-burst-common.docs) and the RPM
# (slurm-burst.spec.in's first %doc line) must list each of them, and
# dist_contrib_DATA must be in the agent's package (debian's .examples, the
# RPM's agent %doc). Each list is checked both ways: nothing missing,
# nothing named that the tree does not have.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a variable of Makefile.am, its continuation lines joined, one word a line
amvar() {
	sed -n ":a; /\\\\\$/ { N; s/\\\\\\n//; ba }; s/^$1[[:space:]]*=[[:space:]]*//p" "$src/Makefile.am" |
		tr -s ' \t' '\n\n' | sed '/^$/d' | sort -u
}
# the words of the first line of the spec starting with $1 (a %doc line
# after the %files line named $2)
specdoc() {
	awk -v files="$2" '
		$1 == "%files" { sect = ($0 == files) }
		sect && $1 == "%doc" { for (i = 2; i <= NF; i++) print $i; exit }
	' "$src/slurm-burst.spec.in" | sort -u
}
lines() { sed '/^#/d; /^$/d' "$1" | sort -u; }

{ echo README.md; amvar dist_doc_DATA; } | sort -u >"$tmp/docs"
amvar dist_contrib_DATA >"$tmp/contrib"
[ "$(wc -l <"$tmp/docs")" -ge 5 ] && [ -s "$tmp/contrib" ]
ok $? "Makefile.am's doc lists read ($(wc -l <"$tmp/docs") docs, $(wc -l <"$tmp/contrib") contrib files)" "$tmp/docs"
while read -r f; do
	[ -f "$src/$f" ] || echo "$f" >>"$tmp/gone"
done < <(cat "$tmp/docs" "$tmp/contrib")
[ ! -s "$tmp/gone" ]; ok $? "each of them is a file of the tree" "$tmp/gone"

# $1 the list the package has, $2 what it must have, $3 its name
same() {
	comm -3 "$2" "$1" >"$tmp/diff"
	[ ! -s "$tmp/diff" ]
	ok $? "$3 lists exactly these (left: missing; right: not installed by make install)" "$tmp/diff"
}
lines "$src/debian/slurm-burst-common.docs" >"$tmp/deb-docs"
same "$tmp/deb-docs" "$tmp/docs" "debian/slurm-burst-common.docs"
specdoc x '%files' >"$tmp/rpm-docs"
same "$tmp/rpm-docs" "$tmp/docs" "the RPM's %files %doc"
# the agent's examples hold more (burst.conf.example, job_submit.lua): the
# contrib files must be among them
lines "$src/debian/slurm-burst-agent.examples" >"$tmp/deb-ex"
comm -23 "$tmp/contrib" "$tmp/deb-ex" >"$tmp/miss"
[ ! -s "$tmp/miss" ]; ok $? "debian/slurm-burst-agent.examples has every contrib file" "$tmp/miss"
specdoc x '%files agent' >"$tmp/rpm-ex"
comm -23 "$tmp/contrib" "$tmp/rpm-ex" >"$tmp/miss"
[ ! -s "$tmp/miss" ]; ok $? "the RPM's agent %doc has every contrib file" "$tmp/miss"

# the man pages and the logrotate file make install installs, as the
# packages' file lists name them: each in the Debian packages' .install
# files and in the RPM's %files, and nothing there that make install lacks
{
	amvar dist_man_MANS | sed -E 's|^doc/man/(.*)\.([0-9])$|usr/share/man/man\2/\1.\2|'
	amvar dist_logrotate_DATA | sed 's|^contrib/logrotate/|etc/logrotate.d/|'
} | sort -u >"$tmp/inst"
[ "$(grep -c '^usr/share/man/' "$tmp/inst")" -ge 5 ] && grep -q '^etc/logrotate.d/' "$tmp/inst"
ok $? "Makefile.am's man pages and logrotate file read" "$tmp/inst"
cat "$src"/debian/*.install | grep -E '^(usr/share/man/|etc/logrotate.d/)' | sort -u >"$tmp/deb-inst"
same "$tmp/deb-inst" "$tmp/inst" "debian/*.install (man pages, logrotate)"
sed -n 's/^\(%config(noreplace) \)\{0,1\}\(%{_mandir}\|%{_sysconfdir}\)\/\([^ ]*\)$/\2\/\3/p' "$src/slurm-burst.spec.in" |
	sed -e 's|^%{_mandir}/\(.*\)\*$|usr/share/man/\1|' -e 's|^%{_sysconfdir}/logrotate.d/|etc/logrotate.d/|' |
	grep -E '^(usr/share/man/|etc/logrotate.d/)' | sort -u >"$tmp/rpm-inst"
same "$tmp/rpm-inst" "$tmp/inst" "the RPM's %files (man pages, logrotate)"
done_testing
