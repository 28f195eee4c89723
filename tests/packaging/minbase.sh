# tests/packaging/minbase.sh - the clean Debian root the packaging tests
# install into, sourced by them: minbase_root sets $base to a Debian 12
# root made by 'debootstrap --variant=minbase' (cached under
# /var/cache/slurm-burst/roots, BURST_ROOTS_DIR; from the Debian mirror of
# this host's apt sources, BURST_DEBIAN_MIRROR) and makes it when missing.
# A test works on a fresh copy (cp -a "$base" ...), never on $base itself.
# Needs $tmp (a scratch directory) and tap.sh's bail.
minbase_root() {
	local suite=bookworm roots mirror
	roots=${BURST_ROOTS_DIR:-/var/cache/slurm-burst/roots}
	base="$roots/debian-$suite-minbase"
	[ -f "$base/.slurm-burst-minbase" ] && return 0
	mirror=${BURST_DEBIAN_MIRROR:-$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
		sed -n -e 's,^URIs: *\([^ ]*/debian\)/*$,\1,p' -e 's,^deb  *\([^ ]*/debian\)/* .*,\1,p' | head -1)}
	[ -n "$mirror" ] || bail "no Debian mirror in this host's apt sources: set BURST_DEBIAN_MIRROR"
	rm -rf "$base.tmp"
	mkdir -p "$roots"
	unshare -m debootstrap --variant=minbase "$suite" "$base.tmp" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
		{ tail -20 "$tmp/debootstrap.log"; bail "debootstrap $suite failed"; }
	rm -rf "$base" && mv "$base.tmp" "$base" && : >"$base/.slurm-burst-minbase"
}
