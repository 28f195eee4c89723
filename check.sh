#!/usr/bin/env bash
# check.sh - build slurm-burst and run every test.
#
# Run as root on Debian 12 from a clean clone: installs the missing Debian
# packages and, where the system's Python lacks it, moto for the AWS tests
# (tools/moto.sh), and gitlab-ci-local from npm for the GitLab CI test
# (tools/gitlab-ci-local.sh); builds with -Werror, runs the unit and CLI
# tests, the unit tests again under ASan/UBSan and valgrind, checks that the shipped catalog
# is what tools/build-catalog.py makes from share/catalog-src, and runs
# 'make distcheck' (CLI tests; the tarball's unit tests run in the RPM's %check), checks the tarball carries every
# file of the checkout, builds the .debs and RPMs and follows the admin guide
# with the .debs in a clean Debian 12 root (make check-packages). Then it
# runs the integration tests again against Debian 13's Slurm 24.11, with
# the project built inside a Debian root of its own against that Slurm's
# headers (tools/debroot.sh, cached under /var/cache/slurm-burst/roots;
# made on first use, about 2 minutes; BURST_SECOND_SLURM=no leaves this
# part out; 11 to 15 minutes, 2 of them debootstrap on first use). There
# run the integration tests of what Slurm does with the agent's programs
# and calls: submit, power saving, bursting, lifecycle, admission, MPI
# acceptance, the aws agent, the reconciler, contract ranking, the site
# network, slurm-conf, job refusal, boot failures, health, driver join, a
# hung slurmctld, GitLab CI. Not there, each named in the output with its
# reason, are those whose file has a line "# burst-matrix: host-only (why)":
# the tests with no Slurm in them (EC2 with moto and with faults, the aws
# driver, catalog refresh, burst-node accept, lab.sh's networks); those of the agent's own
# machinery whose Slurm calls the tests above make too (join-port floods,
# crash recovery, a hung provider, standby agents, metrics, join checks,
# budgets, cost), left out to keep the run within CI's time; and the
# OpenStack ones (Nova and Keystone are not in the root). doc/compat.md has
# the table. The steps that need no Slurm daemon (ASan, valgrind, catalog,
# distcheck, packages), and the second Slurm's root, build and integration
# tests, run beside the host's test suite as two more streams, each one job
# at a time (their output follows the suite's); the host's longest
# integration tests (Makefile.am's integration_late) run in the second
# Slurm's stream once its tests are done, not at the end of the suite.
# Before the last line it prints one line per Slurm release,
# "slurm 22.05.8: N passed, N failed", the skipped points and expected
# failures, and what did not run (the second release, the host-only files);
# the last line, "N passed, N failed", counts both releases. A make step
# that exits non-zero, a test-suite.log that is missing, a TAP script whose
# plan does not match its points and automake's XPASS each count as a
# failure (tools/suite-count.sh, the counting, says which).
set -uo pipefail
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
. tools/deps.sh
burst_install_deps $BURST_BUILD_DEPS $BURST_LAB_DEPS $BURST_OPENSTACK_DEPS $BURST_MATRIX_DEPS \
	$BURST_PACKAGING_DEPS || exit 2

jobs=$(nproc 2>/dev/null || echo 2)
out="$top/_build"
mkdir -p "$out"

# The AWS tests run against moto_server: use a python3 that has moto, or
# provide one (Debian 13's python3-moto, or pip in a venv; tools/moto.sh).
. tools/moto.sh
BURST_MOTO_PYTHON=$(burst_moto_python "$out/moto") || exit 2
export BURST_MOTO_PYTHON
echo "moto: $BURST_MOTO_PYTHON ($("$BURST_MOTO_PYTHON" -c 'import moto; print("moto", moto.__version__)'))"
# tests/integration/test_gitlab_ci_local.sh runs the GitLab CI template with
# gitlab-ci-local from npm (tools/gitlab-ci-local.sh): installed here, where
# the registry is reached as this host is set up, into a directory that the
# Debian 13 root gets bind-mounted (it runs it with its own node). Without
# it (the registry out of reach) that one test fails, saying why; the rest run.
. tools/gitlab-ci-local.sh
gcl_dir=
if gcl=$(burst_gitlab_ci_local); then
	gcl_dir=${gcl%/node_modules/.bin/gitlab-ci-local}
	echo "gitlab-ci-local: $gcl ($("$gcl" --version))"
else
	echo "gitlab-ci-local: not installed (above: why); tests/integration/test_gitlab_ci_local.sh will fail"
fi
# The gcp tests check the tests' fake Compute Engine with Google's own
# client (tools/npm-tool.sh gce-client, from npm into $npm_dir, which the
# Debian 13 root gets bind-mounted too). Without it (the registry out of
# reach) the tests that need it fail, saying why; the rest run.
. tools/npm-tool.sh
npm_dir=${BURST_NPM_DIR:-/var/cache/slurm-burst/npm}
if gce_client=$(burst_npm_tool gce-client "$npm_dir"); then
	echo "Google's Compute Engine client: $gce_client"
else
	echo "Google's Compute Engine client: not installed (above: why); the gcp tests that check the fake with it will fail"
fi
# the same for the azure tests: Microsoft's SDK (@azure/arm-compute, @azure/identity)
if azure_sdk=$(burst_npm_tool azure-sdk "$npm_dir"); then
	echo "Microsoft's Azure SDK: $azure_sdk"
else
	echo "Microsoft's Azure SDK: not installed (above: why); the azure tests that check the fake with it will fail"
fi
[ -d "$npm_dir" ] || npm_dir=
# the counters, count_suite, count_tap, side_counts, side_add, suite_summary
. tools/suite-count.sh

# A check that is one test: a name and a command.
step() {
	local name=$1 t0; shift
	echo "== $name"
	t0=$(date +%s)
	if ( "$@" ) >"$out/$name.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok: $name ($(($(date +%s) - t0)) s)"
	else
		suite_fail 1 "$name: see $out/$name.log"
		echo "FAILED: $name (last lines of $out/$name.log:)"
		tail -30 "$out/$name.log"
	fi
}

step autoreconf autoreconf -fi

# 1. the normal build, warnings fatal, and its tests
configure_build() {
	# configure by a relative path: autoconf refuses an absolute source
	# directory with a blank ("unsafe srcdir value"), and a clone may be in one
	local dir=$1; shift
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" &&
		"$(realpath --relative-to=. "$top")/configure" --enable-werror "$@" && make -j"$jobs"
}
step build configure_build "$out/main"
# the test programs, built before the side work below runs them under valgrind
[ -f "$out/main/Makefile" ] && step build-tests make -C "$out/main" -j"$jobs" check TESTS=

# Steps 2 to 6 and step 7 (the second Slurm's root, build and integration
# tests) run beside the host's test suite, one job at a time: its
# integration tests mostly wait on daemons and leave a core free, and the
# run takes about 13 minutes less (steps 2 to 6) and about 11 more (step
# 7's tests, once run after the suite). They build in their own directories (the release tarball
# from the ASan tree, not from the tree the suite runs in); their output is
# printed once the suite is done, and their results counted as before.

# 2. unit tests under AddressSanitizer and UBSan
asan_units() {
	rm -f "$out/asan/test-suite.log"
	(cd "$out/asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 make -j"$jobs" check-unit) \
		>"$out/check-asan.log" 2>&1
	count_suite "$out/asan/test-suite.log" "make check-unit (ASan/UBSan)" $?
}

# 3. unit tests under valgrind
valgrind_units() {
	local t rc=0
	cd "$out/main" || return 1
	export BURST_TOP_SRCDIR="$top" BURST_CATALOG_DIR="$top/share/catalog"
	for t in tests/unit/test_*; do
		case "$t" in *.c|*.o|*.log|*.trs) continue ;; esac
		[ -x "$t" ] || continue
		echo "-- $t"
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
			"$t" >/dev/null || { echo "valgrind: $t failed"; rc=1; }
	done
	return $rc
}

# 5. the release tarball builds, installs and passes its CLI tests (its unit
#    tests run in the RPM build's %check, step 6; the integration tests ran
#    above, from this same source), and it carries every file of the
#    checkout (tools/dist-files.sh)
tarname() { echo "$(sed -n 's/^PACKAGE_TARNAME = //p' "$out/main/Makefile")-$(sed -n 's/^PACKAGE_VERSION = //p' "$out/main/Makefile")"; }
distcheck() {
	local d rc
	case "$out" in
	*[[:space:]]*)
		# libtool cannot install under a path with a blank, and distcheck
		# installs under the build tree: the same tarball is checked from
		# a directory without one
		d=$(mktemp -d /var/tmp/burst-distcheck.XXXXXX) || return 1
		make -C "$out/asan" dist && tar -xzf "$out/asan/$(tarname).tar.gz" -C "$d" &&
			(cd "$d/$(tarname)" && ./configure --enable-werror >/dev/null &&
				make -j"$jobs" distcheck-quick DISTCHECK_CONFIGURE_FLAGS=--enable-werror)
		rc=$?
		rm -rf "$d"
		return $rc
		;;
	esac
	make -C "$out/asan" -j"$jobs" distcheck-quick DISTCHECK_CONFIGURE_FLAGS=--enable-werror
}

# 7's set-up: the Debian 13 root that tools/debroot.sh makes (cached between
# runs), and the project built inside it against that Slurm's headers
root_build="$out/debian-trixie"
root_run() {
	local binds=(-b "$top:$top")
	[ -n "$gcl_dir" ] && binds+=(-b "$gcl_dir:$gcl_dir")
	[ -n "$npm_dir" ] && [ "$npm_dir" != "$gcl_dir" ] && binds+=(-b "$npm_dir:$npm_dir")
	tools/debroot.sh run "${binds[@]}" -w "$root_build" -- "$@"
}
root_setup() {
	step debian-13-root tools/debroot.sh ensure
	if [ -f "$(tools/debroot.sh path)/.slurm-burst-root" ]; then
		# (root_run enters $root_build: made first)
		rm -rf "$root_build" && mkdir -p "$root_build"
		root_slurm=$(root_run slurmctld -V 2>/dev/null | awk '{ print $2 }')
		# (the side work is a subshell: the summary reads the release here)
		echo "$root_slurm" >"$out/side-root.slurm"
		# configure by a relative path, as above (a blank in the clone's path)
		step "build-slurm-${root_slurm:-unknown}" root_run /bin/sh -c \
			"'$(realpath --relative-to="$root_build" "$top")/configure' --enable-werror && make -j$jobs && make -j$jobs check TESTS="
	fi
}

# 7. the integration tests again against Debian 13's Slurm (24.11), in the
# Debian root, with the project built inside it against that Slurm's
# headers (root_setup); the source and the build directory are bind-mounted
# at the same paths as here. A stream of its own (root_work), started with
# the host's suite and the side work, not after the side work's steps (the
# labs of both Slurms take distinct bridges and ports, tests/integration/
# lab.sh's lab_pick_net, and the root has its own /run, /tmp and /var/tmp). One test at a time, each TAP
# point counted, its time printed. Not there: a test whose file has the line
# "# burst-matrix: host-only (why)" near its top (no Slurm in it, or what it
# needs is not in the root, e.g. Nova's packages for the OpenStack tests);
# each is named with its reason.
root_tests() {
	local t log rc why t0 hostonly=0
	for t in "$top"/tests/integration/test_*.sh; do
		why=$(sed -n 's/^# burst-matrix: host-only *//p' "$t" | head -1)
		if grep -q '^# burst-matrix: host-only' "$t"; then
			echo "$(basename "$t"): host-only, not run on Slurm ${root_slurm:-?} ${why:-}"
			hostonly=$((hostonly + 1))
			continue
		fi
		log="$root_build/$(basename "$t" .sh).log"
		t0=$(date +%s)
		root_run env BURST_TOP_SRCDIR="$top" BURST_TOP_BUILDDIR="$root_build" ${npm_dir:+BURST_NPM_DIR="$npm_dir"} \
			BURST_CATALOG_DIR="$top/share/catalog" bash "$t" >"$log" 2>&1
		rc=$?
		# each point counted, the plan checked against them (count_tap)
		count_tap "$log" "$(basename "$t") on Slurm ${root_slurm:-?}" "$rc" ", $(($(date +%s) - t0)) s"
	done
	suite_notrun "$hostonly host-only files not run on Slurm ${root_slurm:-?} (named above)"
}
root_side_tests() {
	if ! [ -f "$(tools/debroot.sh path)/.slurm-burst-root" ] || ! [ -x "$root_build/burst-agent/burst-agent" ]; then
		suite_notrun "the integration tests on Slurm ${root_slurm:-unknown}: the Debian 13 root or the build in it failed (above)"
		[ "$failed" -gt 0 ] || suite_fail 1 "the integration tests on Slurm ${root_slurm:-unknown} did not run: no root or no build in it"
		return 0
	fi
	echo "== integration tests on Slurm ${root_slurm:-unknown}"
	root_tests
}
side_work() {
	local jobs=1
	suite_reset
	step build-asan configure_build "$out/asan" --enable-sanitizers
	if [ -f "$out/asan/Makefile" ]; then
		asan_units
	else
		suite_notrun "the unit tests under ASan/UBSan (no build: see build-asan above)"
	fi
	if [ -f "$out/main/Makefile" ]; then
		step valgrind valgrind_units
	else
		suite_notrun "the unit tests under valgrind (no build: see build above)"
	fi
	# 4. the shipped catalog is exactly what the script makes from the source data
	#    (share/catalog-src, part of the tree and of the release tarball)
	step catalog-regenerates python3 tools/build-catalog.py --check
	if [ -f "$out/asan/Makefile" ]; then
		step distcheck distcheck
		if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			step dist-files tools/dist-files.sh "$out/asan/$(tarname).tar.gz"
		else
			echo "== dist-files: not a git checkout, nothing to compare the tarball with"
		fi
		# 6. the packages: .debs and RPMs from the tarball, the .debs in a clean
		#    Debian 12 root, and the admin guide's steps followed as written there
		#    until a job bursts (tests/packaging; about 5 minutes)
		step packages make -C "$out/asan" check-packages
	else
		suite_notrun "distcheck, dist-files and the packages (no ASan build: see build-asan above)"
	fi
	side_counts "$out/side-host.counts"
}
# 7. in its own process beside the other two: its tests mostly wait on
# Slurm's and the agent's timers, the steps above mostly compute
root_work() {
	local jobs=1 t0
	suite_reset
	if [ "${BURST_SECOND_SLURM:-yes}" != no ]; then
		t0=$(date +%s)
		root_setup
		root_side_tests
		echo "== Slurm ${root_slurm:-unknown} in the Debian 13 root: $(($(date +%s) - t0)) s in all (set-up, build and tests, beside the host's suite)"
	fi
	side_counts "$out/side-root.counts"
}
# 8. the host's longest integration tests (Makefile.am's integration_late,
# the end of its chain: crash recovery at every point, the OpenStack
# driver and agent), run here on the host's Slurm once step 7 is done, in
# that stream, instead of after the rest of the suite: the suite below
# (make check-early) runs all but them, and the three streams end about
# together. Each counted as the suite's are, with the host's release.
late_work() {
	local t log rc t0 n=0
	suite_reset
	if [ -f "$out/main/Makefile" ]; then
		echo "== the host's late integration tests (Makefile.am's integration_late, beside the suite)"
		for t in $(make -s -C "$out/main" integration-late); do
			log="$out/main/${t%.sh}.log"
			mkdir -p "${log%/*}"
			t0=$(date +%s)
			(cd "$out/main" && BURST_TOP_SRCDIR="$top" BURST_TOP_BUILDDIR="$out/main" \
				BURST_CATALOG_DIR="$top/share/catalog" bash "$top/$t") >"$log" 2>&1
			rc=$?
			count_tap "$log" "$(basename "$t")" "$rc" ", $(($(date +%s) - t0)) s"
			n=$((n + 1))
		done
		[ $n -gt 0 ] || suite_fail 1 "make integration-late named no test (Makefile.am's integration_late)"
	else
		suite_notrun "the late integration tests (no build: see build above)"
	fi
	side_counts "$out/side-late.counts"
}
rm -f "$out/side-host.counts" "$out/side-root.counts" "$out/side-root.slurm" "$out/side-late.counts"
side_work >"$out/side.log" 2>&1 &
side_pid=$!
{ root_work >"$out/root.log" 2>&1; late_work >"$out/late.log" 2>&1; } &
root_pid=$!

# 1. (continued) the host's test suite: unit, CLI and integration tests
if [ -f "$out/main/Makefile" ]; then
	echo "== make check-early (beside it: steps 2 to 6, $out/side.log; step 7, $out/root.log, then 8, $out/late.log)"
	rm -f "$out/main/test-suite.log"
	(cd "$out/main" && make -j"$jobs" check-early) >"$out/check.log" 2>&1
	count_suite "$out/main/test-suite.log" "make check-early" $?
else
	suite_notrun "make check: the unit, CLI and integration tests (no build: see build above)"
fi
wait "$side_pid"
cat "$out/side.log"
side_add "$out/side-host.counts" "steps 2 to 6" "$out/side.log"
wait "$root_pid"
cat "$out/late.log"
side_add "$out/side-late.counts" "step 8, the late integration tests" "$out/late.log"
cat "$out/root.log"

# the host's Slurm: everything above
host_slurm=$(slurmctld -V 2>/dev/null | awk '{ print $2 }')
host_passed=$passed host_failed=$failed

root_slurm=
releases=("slurm ${host_slurm:-unknown}: $host_passed passed, $host_failed failed")
if [ "${BURST_SECOND_SLURM:-yes}" = no ]; then
	echo "== the second Slurm release: not run (BURST_SECOND_SLURM=no)"
	suite_notrun "the second Slurm release (BURST_SECOND_SLURM=no)"
else
	side_add "$out/side-root.counts" "the second Slurm's root, build and tests" "$out/root.log"
	root_slurm=$(cat "$out/side-root.slurm" 2>/dev/null)
	releases+=("slurm ${root_slurm:-unknown}: $((passed - host_passed)) passed, $((failed - host_failed)) failed")
fi

# the failures and skips by name, one line per release, what did not run,
# and last "N passed, N failed"
suite_summary "${releases[@]}"
