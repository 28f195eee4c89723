#!/usr/bin/env bash
# tests/cli/test_moto_setup.sh - tools/moto.sh, when it cannot provide moto,
# says why in one line (TAP, no Slurm, no network). Run as a user (root
# drops to nobody: as root the script would install packages), with a PATH
# of a few tools and the system's python3 pointed elsewhere: with no python3
# at all it names that, and what to install; with a python3 that has no
# moto and no venv, it says neither apt nor pip could provide it.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work"
for t in bash mkdir tee tail id rm sed cat timeout; do
	ln -s "$(command -v $t)" "$tmp/bin/$t" || bail "no $t"
done
cp "$src/tools/moto.sh" "$tmp/moto.sh"
chmod 755 "$tmp" "$tmp/bin"
chmod 644 "$tmp/moto.sh"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
	chown 65534:65534 "$tmp/work"
	as_user=(setpriv --reuid 65534 --regid 65534 --clear-groups)
fi
run() {   # run DIR: burst_moto_python DIR as the user, PATH = $tmp/bin alone
	"${as_user[@]}" env -i PATH="$tmp/bin" HOME="$tmp/work" BURST_MOTO_SYSTEM_PYTHON="$tmp/no-python3" \
		"$tmp/bin/bash" -c '. "$1"; burst_moto_python "$2"' sh "$tmp/moto.sh" "$1"
}

run "$tmp/work/a" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && [ ! -s "$tmp/out" ] &&
	grep -q "^moto: this machine has no python3, which moto_server runs on: as root, apt-get install python3" "$tmp/err" &&
	! grep -q "neither apt nor pip" "$tmp/err"
ok $? "no python3 anywhere: rc $rc, and the message says so and what to install" "$tmp/err"

# a python3 without moto, and without the venv module
printf '#!%s\nexit 1\n' "$(command -v bash)" >"$tmp/bin/python3"
chmod 755 "$tmp/bin/python3"
run "$tmp/work/b" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && [ ! -s "$tmp/out" ] &&
	grep -q "^moto: neither apt nor pip could provide it (see $tmp/work/b/moto-setup.log)" "$tmp/err" &&
	! grep -q "has no python3" "$tmp/err" &&
	grep -q "no venv module for $tmp/bin/python3" "$tmp/work/b/moto-setup.log"
ok $? "a python3 without moto or venv: rc $rc, neither apt nor pip, the reason in the log" "$tmp/err" "$tmp/work/b/moto-setup.log"
done_testing
