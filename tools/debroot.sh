#!/usr/bin/env bash
# tools/debroot.sh - a Debian root with another Slurm release, for running the
# integration tests against it (check.sh's version matrix).
#
#   tools/debroot.sh ensure            make the root if it is missing or
#                                      incomplete; print its path
#   tools/debroot.sh run [-b HOSTDIR:DIR]... [-w DIR] -- CMD [ARG...]
#                                      run CMD as root inside it
#   tools/debroot.sh path              print its path (made or not)
#
# The root is Debian 13 (trixie, Slurm 24.11) made with 'debootstrap
# --variant=minbase' from the Debian mirror of this host's apt sources
# (BURST_DEBIAN_MIRROR overrides it), with Slurm, munge and the project's
# build and lab packages (tools/deps.sh) installed by apt inside it. It is
# cached under /var/cache/slurm-burst/roots/ (BURST_ROOTS_DIR overrides it)
# and made again when missing or incomplete: the stamp file, written last,
# lists what was installed; a package added to tools/deps.sh is installed
# into the cached root on the next use. Concurrent users are safe: making
# the root holds an exclusive lock, running in it a shared one.
#
# 'run' gives CMD a mount namespace of its own (nothing it mounts is seen
# outside, and it all goes away with it) whose root is the Debian root: bind-
# mounted onto itself and made / with pivot_root (so that 'ip netns exec'
# inside can make / a slave, and Charliecloud can make user namespaces,
# which the kernel refuses in a chroot), /proc, /sys and /dev,
# a tmpfs on /run and /tmp, /var/tmp from a fresh directory of the host that
# is removed afterwards (so a run leaves nothing in the cached root), an
# /etc/hosts that resolves this host's name (the root shares it), and
# each -b HOSTDIR:DIR bind-mounted at DIR. -w DIR: the working directory.
# The network namespace is the host's: the labs' bridges and ports must not
# collide with the host's (tests/integration/lab.sh picks free ones).
#
# BURST_ROOT_SUITE=bookworm BURST_ROOT_BARE=yes (with BURST_ROOTS_DIR set to
# a directory of its own) makes instead a Debian 12 root with nothing but
# minbase, git and ca-certificates: a fresh machine for
# tools/fresh-machine-check.sh, on which the project's own scripts must
# install everything else they need.
set -euo pipefail
PATH=/usr/sbin:/usr/bin:/sbin:/bin
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/deps.sh"

suite=${BURST_ROOT_SUITE:-trixie}
case "$suite" in trixie|bookworm) ;; *) echo "debroot: BURST_ROOT_SUITE=$suite: only trixie (Slurm 24.11) or bookworm (a fresh Debian 12)" >&2; exit 1 ;; esac
roots=${BURST_ROOTS_DIR:-/var/cache/slurm-burst/roots}
R="$roots/debian-$suite"
lock="$roots/debian-$suite.lock"
stamp="$R/.slurm-burst-root"

die() { echo "debroot: $*" >&2; exit 1; }

# what the root must hold: the project's build and lab packages, Debian 13's
# names where they differ, and moto for the AWS tests (tests/integration)
root_packages() {
	local p out=()
	if [ "${BURST_ROOT_BARE:-no}" = yes ]; then
		# a fresh machine: what a clone needs to be made, nothing more
		printf '%s\n' ca-certificates git
		return
	fi
	# moto_server needs Flask and flask-cors, which python3-moto only recommends;
	# nodejs runs the gitlab-ci-local that check.sh installed on the host (and
	# bind-mounts here) for tests/integration/test_gitlab_ci_local.sh
	for p in $BURST_BUILD_DEPS $BURST_LAB_DEPS python3-moto python3-flask python3-flask-cors nodejs; do
		case "$p" in
		valgrind) continue ;;             # check.sh runs valgrind on the host only
		mariadb-server | slurmdbd) continue ;;   # the lab's slurmdbd: test_cost.sh, host-only
		esac
		out+=("$(burst_pkg_name "$p" "$suite")")
	done
	printf '%s\n' "${out[@]}" | LC_ALL=C sort -u
}

mirror() {
	local m=${BURST_DEBIAN_MIRROR:-}
	if [ -z "$m" ]; then
		# the first .../debian source of this host's apt
		m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			sed -n 's,^URIs: *\([^ ]*/debian\)/*$,\1,p' | head -1)
		[ -n "$m" ] || m=$(cat /etc/apt/sources.list 2>/dev/null |
			sed -n 's,^deb  *\([^ ]*/debian\)/* .*,\1,p' | head -1)
	fi
	[ -n "$m" ] || die "no Debian mirror in this host's apt sources: set BURST_DEBIAN_MIRROR"
	echo "$m"
}

mounted_under() {   # DIR: is anything mounted at or below it?
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { found = 1 } END { exit !found }' /proc/self/mounts
}

# CMD inside the root, in a mount namespace of its own (see the top)
in_root() {
	local binds=() wd=/ vt rc
	while [ $# -gt 0 ]; do
		case "$1" in
		-b) binds+=("$2"); shift 2 ;;
		-w) wd=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || die "run: no command"
	[ -d "$R/.oldroot" ] || mkdir "$R/.oldroot"   # where the host's root goes, then is detached
	vt=$(mktemp -d /var/tmp/burst-root-vartmp.XXXXXX)
	chmod 1777 "$vt"
	# the root shares this host's name (its UTS namespace): it must resolve
	# there as on any Debian host (127.0.1.1, as the installer writes it).
	# Slurm 24.11 looks up the name srun runs on (to tell it its job ended)
	# and retries a failed lookup for 10 s, its jobs waiting meanwhile.
	hosts=$(mktemp /var/tmp/burst-root-hosts.XXXXXX)
	{ cat "$R/etc/hosts"; awk -v h="$(hostname)" '$1 !~ /^#/ { for (i = 2; i <= NF; i++) if ($i == h) f = 1 }
		END { if (!f) printf "127.0.1.1\t%s\n", h }' "$R/etc/hosts"; } >"$hosts"
	chmod 644 "$hosts"
	set +e
	unshare -m --propagation private /bin/bash -c '
		set -e
		R=$1 vt=$2 hosts=$3 wd=$4 nb=$5; shift 5
		mount --bind "$R" "$R"
		mount --bind "$hosts" "$R/etc/hosts"
		mount -t proc proc "$R/proc"
		mount --rbind /sys "$R/sys"
		mount --rbind /dev "$R/dev"
		mount -t tmpfs -o mode=755 tmpfs "$R/run"
		mkdir -p "$R/run/lock" "$R/run/munge"
		mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
		mount --bind "$vt" "$R/var/tmp"
		while [ "$nb" -gt 0 ]; do
			src=${1%%:*} dst=${1#*:}
			mkdir -p "$R$dst"
			mount --bind "$src" "$R$dst"
			shift; nb=$((nb - 1))
		done
		# pivot_root, not chroot: in a chroot the kernel refuses to make
		# user namespaces (Charliecloud'"'"'s ch-run in the acceptance tests)
		cd "$R"
		pivot_root . .oldroot
		exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" ${CI:+CI=$CI} \
			/bin/sh -c "umount -l /.oldroot && cd \"\$0\" && exec \"\$@\"" "$wd" "$@"
	' debroot "$R" "$vt" "$hosts" "$wd" "${#binds[@]}" "${binds[@]}" "$@"
	rc=$?
	set -e
	rm -rf "$vt" "$hosts"
	return $rc
}

complete() {   # the stamp lists every package wanted now
	[ -f "$stamp" ] && [ -z "$(root_packages | LC_ALL=C sort -u | LC_ALL=C comm -23 - <(LC_ALL=C sort -u "$stamp"))" ]
}

make_root() {
	local m pkgs
	complete && return 0
	mkdir -p "$roots"
	exec 8>"$lock"
	flock 8
	complete && { exec 8>&-; return 0; }
	if [ ! -f "$R/.debootstrap-done" ]; then
		if [ -e "$R" ]; then
			mounted_under "$R" && die "$R is incomplete but something is mounted under it; unmount it first"
			echo "debroot: removing the incomplete root $R" >&2
			rm -rf "$R"
		fi
		burst_install_deps $BURST_MATRIX_DEPS || die "cannot install $BURST_MATRIX_DEPS"
		m=$(mirror)
		echo "debroot: debootstrap --variant=minbase $suite $R $m (a few minutes)" >&2
		# in a mount namespace of its own: a debootstrap that dies leaves no mounts
		unshare -m --propagation private \
			debootstrap --variant=minbase "$suite" "$R" "$m" >"$roots/debootstrap.log" 2>&1 ||
			{ tail -20 "$roots/debootstrap.log" >&2; die "debootstrap failed (log: $roots/debootstrap.log)"; }
		: >"$R/.debootstrap-done"
	fi
	# no daemon starts at install time
	printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
	grep -qs '^127.0.0.1' "$R/etc/hosts" || printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >>"$R/etc/hosts"
	mapfile -t pkgs < <(root_packages)
	echo "debroot: installing ${#pkgs[@]} packages into $R" >&2
	in_root -- /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"' sh "${pkgs[@]}" \
		>"$roots/apt.log" 2>&1 ||
		{ tail -20 "$roots/apt.log" >&2; die "apt-get install in $R failed (log: $roots/apt.log)"; }
	in_root -- apt-get clean >/dev/null 2>&1 || true
	# written last: what the root holds (what was there and what was added)
	{ cat "$stamp" 2>/dev/null; root_packages; } | LC_ALL=C sort -u >"$stamp.new" && mv "$stamp.new" "$stamp"
	exec 8>&-
	echo "debroot: $R is ready ($(in_root -- slurmctld -V 2>/dev/null || echo "no Slurm in it"))" >&2
}

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, mount namespaces)"
case "${1:-}" in
path)
	echo "$R"
	;;
ensure)
	make_root
	echo "$R"
	;;
run)
	shift
	make_root
	exec 9>"$lock"
	flock -s 9
	complete || die "$R became incomplete while waiting"
	in_root "$@"
	;;
*)
	die "usage: debroot.sh ensure | path | run [-b HOSTDIR:DIR]... [-w DIR] -- CMD [ARG...]"
	;;
esac
