#!/usr/bin/env bash
# tests/cli/test_spec_files.sh - the RPM spec's %files lists against what
# `make install` installs (TAP). rpmbuild fails on an installed file that no
# %files list claims, but this machine builds no RPM: so `make install
# DESTDIR=` into a scratch root, the spec's macros set to this build's
# directories (read from its Makefile), and every installed file must be
# claimed by an entry of slurm-burst.spec.in: a path or a glob, a directory
# entry that is not %dir, or, for what make install puts under the doc
# directory (the spec removes it and lists the sources), a %doc or %license
# file of the same name. The other way, an entry that names a file (not a
# %doc, %dir or %config'd directory) must match something installed.
# And the packages agree with the guide on restarts at an upgrade.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
spec="$src/slurm-burst.spec.in"
tmp=$(mktemp -d /tmp/test_spec_files.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
[ -f "$build/Makefile" ] || bail "no $build/Makefile (configure first)"

# this build's directories, as make expands them
dirs=$(make -s -C "$build" -f Makefile -f - spec-dirs <<'EOF'
spec-dirs:
	@echo "_bindir=$(bindir)"; echo "_sbindir=$(sbindir)"; echo "_datadir=$(datadir)"; echo "_mandir=$(mandir)"
	@echo "_libexecdir=$(libexecdir)"; echo "_unitdir=$(systemdunitdir)"; echo "_sysconfdir=$(sysconfdir)"
	@echo "_localstatedir=$(localstatedir)"; echo "spank_plugindir=$(spankplugindir)"; echo "docdir=$(docdir)"
EOF
)
ok $? "this build's directories read from its Makefile"
eval "$(printf '%s\n' "$dirs" | sed -n "s/^\([a-z_]*\)=\(.*\)$/\1='\2'/p")"
make -s -C "$build" install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1
ok $? "make install DESTDIR=$tmp/root" "$tmp/install.log"
(cd "$tmp/root" && find . \( -type f -o -type l \) | sed 's/^\.//' | sort) >"$tmp/installed"
[ -s "$tmp/installed" ]
ok $? "it installed $(wc -l <"$tmp/installed") files"

# entries SPEC: the %files sections' entries, macros expanded: "KIND PATH" (KIND: file, dir, doc)
entries() {
awk -v bindir="$_bindir" -v sbindir="$_sbindir" -v datadir="$_datadir" -v mandir="$_mandir" \
	-v libexecdir="$_libexecdir" -v unitdir="$_unitdir" -v sysconfdir="$_sysconfdir" \
	-v localstatedir="$_localstatedir" -v spank="$spank_plugindir" '
	function expand(p) {
		gsub(/%\{_bindir\}/, bindir, p); gsub(/%\{_sbindir\}/, sbindir, p); gsub(/%\{_datadir\}/, datadir, p)
		gsub(/%\{_mandir\}/, mandir, p); gsub(/%\{_libexecdir\}/, libexecdir, p); gsub(/%\{_unitdir\}/, unitdir, p)
		gsub(/%\{_sysconfdir\}/, sysconfdir, p); gsub(/%\{_localstatedir\}/, localstatedir, p)
		gsub(/%\{spank_plugindir\}/, spank, p); gsub(/%\{name\}/, "slurm-burst", p)
		return p
	}
	/^%files/ { infiles = 1; next }
	/^%changelog/ || /^%(post|postun|pre|preun|install|build|prep|description|package)/ { infiles = 0 }
	# files %install deletes after make install (find ... -name X -delete): "gone X"
	/^find %\{buildroot\}/ && / -name / && / -delete/ {
		n = $0; sub(/.* -name \047/, "", n); sub(/\047.*/, "", n)
		print "gone " n; next
	}
	# the node package takes the MPI acceptance program by its %install find line
	/^find %\{buildroot\}/ && / -name / && />node\.files/ {
		d = $2; sub(/^%\{buildroot\}/, "", d); n = $0; sub(/.* -name \047/, "", n); sub(/\047.*/, "", n)
		print "file " expand(d) "/" n; next
	}
	!infiles || /^#/ || NF == 0 { next }
	{
		kind = "file"
		if ($1 == "%doc" || $1 == "%license") {
			for (i = 2; i <= NF; i++) print "doc " $i
			next
		}
		if ($1 == "%dir") { kind = "dir"; $1 = "" }
		if ($1 ~ /^%config/) $1 = ""
		p = $0; sub(/^ +/, "", p)
		print kind " " expand(p)
	}' "$1"
}
entries "$spec" >"$tmp/entries"
grep -q '^file /' "$tmp/entries" && ! grep -q '%{' "$tmp/entries"
ok $? "the spec's %files entries read, every macro known ($(wc -l <"$tmp/entries") entries)" "$tmp/entries"

# unclaimed ENTRIES: the installed files no entry claims
unclaimed() {
while read -r f; do
	claimed=
	case $f in
	"$docdir"/*)
		grep -qx "doc .*/$(basename "$f")\|doc $(basename "$f")" "$1" && claimed=1 ;;
	*)
		while read -r kind p; do
			[ "$kind" = doc ] && continue
			# shellcheck disable=SC2254
			if [ "$kind" = gone ]; then case ${f##*/} in $p) claimed=1; break ;; esac; continue; fi
			# shellcheck disable=SC2254
			case $f in $p) [ "$kind" = file ] && claimed=1 ;; $p/*) [ "$kind" = file ] && claimed=1 ;; esac
			[ -n "$claimed" ] && break
		done <"$1" ;;
	esac
	[ -n "$claimed" ] || echo "$f"
done <"$tmp/installed"
}
unclaimed "$tmp/entries" >"$tmp/unclaimed"
[ ! -s "$tmp/unclaimed" ]
ok $? "every file make install installs is in a %files list of slurm-burst.spec.in" "$tmp/unclaimed"

# every file entry matches something installed
: >"$tmp/unmatched"
while read -r kind p; do
	[ "$kind" = file ] || continue
	hit=
	while read -r f; do
		# shellcheck disable=SC2254
		case $f in $p | $p/*) hit=1; break ;; esac
	done <"$tmp/installed"
	[ -n "$hit" ] || echo "$p" >>"$tmp/unmatched"
done <"$tmp/entries"
[ ! -s "$tmp/unmatched" ]
ok $? "every file the spec lists is installed by make install" "$tmp/unmatched"

# the check itself: with a line taken out of the spec, the file it claimed is named
sed '/%{_mandir}\/man8\/burst-agent.8\*/d' "$spec" >"$tmp/spec.less"
entries "$tmp/spec.less" >"$tmp/entries.less"
unclaimed "$tmp/entries.less" >"$tmp/unclaimed.less"
[ "$(cat "$tmp/unclaimed.less")" = "$_mandir/man8/burst-agent.8" ]
ok $? "a spec without burst-agent(8)'s line: the check names $_mandir/man8/burst-agent.8 alone" "$tmp/unclaimed.less"
sed '/contrib\/logrotate\|logrotate.d\/burst-agent/d' "$spec" >"$tmp/spec.less"
entries "$tmp/spec.less" >"$tmp/entries.less"
unclaimed "$tmp/entries.less" >"$tmp/unclaimed.less"
[ "$(cat "$tmp/unclaimed.less")" = "$_sysconfdir/logrotate.d/burst-agent" ]
ok $? "a spec without the logrotate file's line: the check names it" "$tmp/unclaimed.less"
sed '/^%doc /s| doc/gcp.md||' "$spec" >"$tmp/spec.less"
entries "$tmp/spec.less" >"$tmp/entries.less"
unclaimed "$tmp/entries.less" >"$tmp/unclaimed.less"
[ "$(cat "$tmp/unclaimed.less")" = "$docdir/gcp.md" ]
ok $? "a spec whose %doc line lacks doc/gcp.md: the check names the installed $docdir/gcp.md" "$tmp/unclaimed.less"

# restarts on upgrade: neither package starts or restarts the agent (the
# guide's upgrade has the admin run `systemctl restart burst-agent`, which
# tests/packaging/test_guide.sh runs while a job runs on a burst node)
grep -q '^[[:space:]]*dh_installsystemd .*--no-start' "$src/debian/rules" &&
	! grep -qE 'deb-systemd-invoke|systemctl (re|try-re)?start|invoke-rc.d' "$src"/debian/*.postinst "$src"/debian/*.postrm
ok $? "the .debs do not start or restart burst-agent (dh_installsystemd --no-start, no restart in a maintainer script)"
! grep -qE '%systemd_post(un)?_with_restart|systemctl (re|try-re|condre)?start' "$spec"
ok $? "nor does the RPM (no restart in %post or %postun)"
grep -q 'The packages do \*\*not\*\* restart the agent' "$src/doc/admin-guide.md" &&
	grep -q '^    systemctl restart burst-agent$' "$src/doc/admin-guide.md"
ok $? "the guide says so, and its upgrade restarts the agent itself"
done_testing
