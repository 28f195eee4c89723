#!/usr/bin/env bash
# tools/fresh-machine-check.sh - try the project as a new user would: on a
# fresh Debian 12 machine, from a clone with nothing beside it, in a
# directory with a space in its name, run the two commands README.md gives.
#
#   tools/fresh-machine-check.sh [--demo-only] [--keep]
#
# Makes a bare Debian 12 root (tools/debroot.sh with BURST_ROOT_SUITE=
# bookworm BURST_ROOT_BARE=yes: minbase, git and ca-certificates, nothing
# else) in a new directory under /var/tmp, clones this checkout's HEAD
# into "/tmp/fresh clone/slurm-burst" there (a host directory bind-mounted
# at that path, so the build is on disk, not in the root's tmpfs /tmp),
# and runs ./demo.sh, then ./check.sh (not with --demo-only), as root
# inside. Every package they need they must install themselves. Logs go to
# _build/fresh-machine/ of this checkout; the last line says what passed.
# The root is removed afterwards unless --keep. Root only; about an hour
# for the whole check.sh on two cores.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
demo_only=no keep=no
for a in "$@"; do
	case "$a" in
	--demo-only) demo_only=yes ;;
	--keep) keep=yes ;;
	*) echo "usage: fresh-machine-check.sh [--demo-only] [--keep]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine-check: must run as root" >&2; exit 2; }
logs="$top/_build/fresh-machine"
mkdir -p "$logs"
work=$(mktemp -d /var/tmp/burst-fresh.XXXXXX)
cleanup() {
	if [ "$keep" = yes ]; then
		echo "fresh-machine-check: kept $work" >&2
	else
		rm -rf --one-file-system "$work"
	fi
}
trap cleanup EXIT
export BURST_ROOT_SUITE=bookworm BURST_ROOT_BARE=yes BURST_ROOTS_DIR="$work/roots"
"$top/tools/debroot.sh" ensure >"$logs/root.log" 2>&1 ||
	{ tail -20 "$logs/root.log" >&2; echo "fresh-machine-check: could not make the root (log: $logs/root.log)" >&2; exit 1; }
# A site's machines trust the site's own certificate authorities (a TLS-
# inspecting proxy's, an internal registry's), installed by its machine
# image as local CAs: the fresh root gets this host's, as a new machine of
# the same site would. Without them npm (gitlab-ci-local) and any other
# HTTPS fetch through such a proxy fail inside the root.
cas=(/usr/local/share/ca-certificates/*.crt)
if [ -e "${cas[0]}" ]; then
	rootdir=$("$top/tools/debroot.sh" path)
	mkdir -p "$rootdir/usr/local/share/ca-certificates"
	cp "${cas[@]}" "$rootdir/usr/local/share/ca-certificates/"
	"$top/tools/debroot.sh" run -- update-ca-certificates >>"$logs/root.log" 2>&1 ||
		{ tail -5 "$logs/root.log" >&2; echo "fresh-machine-check: update-ca-certificates failed in the root" >&2; exit 1; }
	echo "fresh-machine-check: the root trusts this site's local CAs too (${#cas[@]} from /usr/local/share/ca-certificates)"
fi
mkdir -p "$work/clone"
git clone -q --no-hardlinks "$top" "$work/clone/slurm-burst"
git -C "$work/clone/slurm-burst" checkout -q --detach "$(git -C "$top" rev-parse HEAD)"
dir="/tmp/fresh clone"
inside() {   # NAME CMD: run CMD in the clone inside the root, log to NAME.log
	local name=$1 t0 rc; shift
	t0=$(date +%s)
	set +e
	"$top/tools/debroot.sh" run -b "$work/clone:$dir" -w "$dir/slurm-burst" -- "$@" >"$logs/$name.log" 2>&1
	rc=$?
	set -e
	echo "fresh-machine-check: $name: exit $rc after $(( $(date +%s) - t0 )) s; last line: $(tail -1 "$logs/$name.log")"
	return $rc
}
rc=0
inside demo ./demo.sh || rc=1
if [ "$demo_only" = no ]; then
	inside check ./check.sh || rc=1
fi
[ $rc -eq 0 ] && echo "fresh-machine-check: passed on a fresh Debian 12 root ($dir/slurm-burst)" ||
	echo "fresh-machine-check: FAILED (logs: $logs)"
exit $rc
