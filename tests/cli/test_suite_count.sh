#!/usr/bin/env bash
# tests/cli/test_suite_count.sh - check.sh's counting (tools/suite-count.sh)
# on crafted logs (TAP, no Slurm): a unit test that AddressSanitizer stopped,
# a test-suite.log that is missing, a make that failed with a clean log, an
# XPASS, a TAP script whose plan says 5 and that ran 4 points, one with no
# plan, one that bailed out: each makes the last line report a failure;
# skips are named, expected failures counted, and what did not run is named
# just above the last line, which stays "N passed, N failed". Also: check.sh
# hands every make's exit status to the counting.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_DIAG="$tmp/out"

# run the counting in a subshell of its own: "run NAME; CMDS..." leaves
# its output in $tmp/out and the summary's status in $tmp/rc
run() {
	(
		. "$src/tools/suite-count.sh"
		eval "$1"
		suite_summary "slurm test: a release line"
	) >"$tmp/out" 2>&1
	echo $? >"$tmp/rc"
}
last() { tail -1 "$tmp/out"; }
has() { grep -qF -- "$1" "$tmp/out"; }

# an automake test-suite.log: the counts, then the logs of the tests that
# did not all pass, as automake writes it
suite_log() {   # suite_log FILE PASS SKIP XFAIL FAIL XPASS ERROR  (body on stdin)
	local f=$1
	{
		echo "========================================="
		echo "   slurm-burst 0.1.0: ./test-suite.log"
		echo "========================================="
		echo
		echo "# TOTAL: $(($2 + $3 + $4 + $5 + $6 + $7))"
		echo "# PASS:  $2"
		echo "# SKIP:  $3"
		echo "# XFAIL: $4"
		echo "# FAIL:  $5"
		echo "# XPASS: $6"
		echo "# ERROR: $7"
		echo
		echo ".. contents:: :depth: 2"
		echo
		cat
	} >"$f"
}

# 1. a unit test that ASan stopped half-way (a use after free): tap-driver
#    reports the missing plan and the abort as ERRORs, make exits 2
suite_log "$tmp/asan.log" 3987 0 0 0 0 2 <<'EOF'
ERROR: tests/unit/test_broken
=============================

=================================================================
==15564==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55cb66ef228c bp 0x7ffd430633c0 sp 0x7ffd430633b8
WRITE of size 1 at 0x602000000010 thread T0
    #0 0x55cb66ef228b in main tests/unit/test_broken.c:3
SUMMARY: AddressSanitizer: heap-use-after-free tests/unit/test_broken.c:3 in main
==15564==ABORTING
Aborted
ok 1 - first
PASS: tests/unit/test_broken 1 - first
ERROR: tests/unit/test_broken - missing test plan
ERROR: tests/unit/test_broken - exited with status 134 (terminated by signal 6?)

EOF
run "count_suite '$tmp/asan.log' 'make check-unit (ASan/UBSan)' 2"
[ "$(last)" = "3987 passed, 2 failed" ] && [ "$(cat "$tmp/rc")" = 1 ]
ok $? "a unit test stopped by ASan: the last line reports its failures ($(last)), status 1"
has "failed: make check-unit (ASan/UBSan): 0 failed, 2 errors, 0 unexpected passes (XPASS): see $tmp/asan.log" &&
	has "ERROR: tests/unit/test_broken - exited with status 134 (terminated by signal 6?)"
ok $? "... named in the failures, with automake's ERROR lines"

# 2. the log is missing: the make step ran no test (a unit test that does
#    not compile under the sanitizers, a test entry whose file is gone)
run "count_suite '$tmp/nowhere/test-suite.log' 'make check-unit (ASan/UBSan)' 2"
[ "$(last)" = "0 passed, 1 failed" ] && [ "$(cat "$tmp/rc")" = 1 ]
ok $? "a missing test-suite.log is a failure ($(last))"
has "failed: make check-unit (ASan/UBSan): its test-suite.log is missing (make exited 2; it ran no test)"
ok $? "... named, with make's status"
: >"$tmp/empty.log"
run "count_suite '$tmp/empty.log' 'make check' 0"
[ "$(last)" = "0 passed, 1 failed" ]
ok $? "a test-suite.log with no counts is a failure ($(last))"

# 3. make failed, but the log it left shows every test passed
suite_log "$tmp/clean.log" 40 0 0 0 0 0 </dev/null
run "count_suite '$tmp/clean.log' 'make check' 2"
[ "$(last)" = "40 passed, 1 failed" ] && has "failed: make check: make exited 2 though $tmp/clean.log shows no failure"
ok $? "make's non-zero status with a clean log is a failure ($(last))"
run "count_suite '$tmp/clean.log' 'make check' 0"
[ "$(last)" = "40 passed, 0 failed" ] && [ "$(cat "$tmp/rc")" = 0 ]
ok $? "the same log with make's status 0 passes ($(last)), status 0"

# 4. XPASS is a failure; SKIP is shown by name; XFAIL counted
suite_log "$tmp/x.log" 10 1 1 0 1 0 <<'EOF'
SKIP: tests/unit/test_a
=======================

ok 1 - runs
PASS: tests/unit/test_a 1 - runs
ok 2 - # SKIP no IPv6 on this host
SKIP: tests/unit/test_a 2 - # SKIP no IPv6 on this host

XPASS: tests/unit/test_b
========================

ok 1 - a bug to fix # TODO the fix
XPASS: tests/unit/test_b 1 - a bug to fix # TODO the fix
not ok 2 - another # TODO later
XFAIL: tests/unit/test_b 2 - another # TODO later

EOF
run "count_suite '$tmp/x.log' 'make check' 2"
[ "$(last)" = "10 passed, 1 failed" ] && has "0 failed, 0 errors, 1 unexpected passes (XPASS)" &&
	has "XPASS: tests/unit/test_b 1 - a bug to fix # TODO the fix"
ok $? "an XPASS is a failure, shown ($(last))"
has "skipped: make check: SKIP: tests/unit/test_a 2 - # SKIP no IPv6 on this host" &&
	has "1 skipped, 1 expected failures (XFAIL), 1 unexpected passes (XPASS, counted as failed)"
ok $? "... the SKIP is named in the summary; SKIP, XFAIL and XPASS are counted"

# 5. the 24.11 tier's TAP scripts: each checked against its plan
tap() { printf '%s\n' "$@" >"$tmp/t.log"; }
tap "ok 1 - a" "ok 2 - b" "ok 3 - c" "ok 4 - d" "1..5"
run "count_tap '$tmp/t.log' 'test_x.sh on Slurm 24.11' 0"
[ "$(last)" = "4 passed, 1 failed" ] && has "test_x.sh on Slurm 24.11: its plan is 1..5 but it ran 4 points"
ok $? "a script whose plan says 5 and that has 4 oks is a failure ($(last))"
tap "ok 1 - a" "ok 2 - b" "ok 3 - c" "ok 4 - d"
run "count_tap '$tmp/t.log' 'test_x.sh' 0"
[ "$(last)" = "4 passed, 1 failed" ] && has "test_x.sh: no plan (1..N)"
ok $? "a script with no plan is a failure ($(last))"
tap "ok 1 - a" "1..1" "ok 2 - b" "1..2"
run "count_tap '$tmp/t.log' 'test_x.sh' 0"
[ "$(last)" = "2 passed, 1 failed" ] && has "test_x.sh: 2 plans"
ok $? "a script with two plans is a failure ($(last))"
tap "ok 1 - a" "Bail out! no munged"
run "count_tap '$tmp/t.log' 'test_x.sh' 1"
[ "$(last)" = "1 passed, 2 failed" ] && has "test_x.sh: it bailed out"
ok $? "a bail-out is a failure, besides its missing plan ($(last))"
tap "ok 1 - a" "ok 2 - b" "1..2"
run "count_tap '$tmp/t.log' 'test_x.sh' 3"
[ "$(last)" = "2 passed, 1 failed" ] && has "test_x.sh: it exited 3 with no point failed"
ok $? "a script that exits non-zero with every point passed is a failure ($(last))"
tap "ok 1 - a" "not ok 2 - b" "ok 3 - c # SKIP no GPU" "ok 4 - d # TODO fix" "not ok 5 - e # TODO later" "1..5"
run "count_tap '$tmp/t.log' 'test_x.sh' 1 ', 7 s'"
[ "$(last)" = "1 passed, 2 failed" ] && has "test_x.sh: 1 ok, 1 not ok, 1 skipped, 7 s" &&
	has "skipped: test_x.sh: ok 3 - c # SKIP no GPU" && ! has "its plan is"
ok $? "not ok and a TODO ok fail, a SKIP is named, a TODO not ok is an expected failure ($(last))"
run "count_tap '$tmp/nowhere.log' 'test_x.sh' 0"
[ "$(last)" = "0 passed, 1 failed" ]
ok $? "a script whose output is missing is a failure ($(last))"
tap "ok 1 - a" "ok 2 - b" "# a comment" "ok 3" "1..3"
run "count_tap '$tmp/t.log' 'test_x.sh' 0"
[ "$(last)" = "3 passed, 0 failed" ] && [ "$(cat "$tmp/rc")" = 0 ]
ok $? "a script whose points match its plan passes ($(last)), status 0"

# 6. the side work's counts travel through a file; what did not run is
#    named just above the last line
run "suite_fail 2 'step x: see x.log'; skipped=1 skips=('make check: SKIP: t 2'); xpassed=0
	suite_notrun '14 host-only files not run on Slurm 24.11.5 (named above)'; passed=7
	side_counts '$tmp/side.counts'; suite_reset; passed=3
	side_add '$tmp/side.counts' 'steps 2 to 6'"
[ "$(last)" = "10 passed, 2 failed" ] && has "failed: step x: see x.log" && has "skipped: make check: SKIP: t 2" &&
	[ "$(tail -2 "$tmp/out" | head -1)" = "not run: 14 host-only files not run on Slurm 24.11.5 (named above)" ]
ok $? "side_counts and side_add carry the counts, failures, skips and what did not run ($(last))"
grep -qx "slurm test: a release line" "$tmp/out"
ok $? "... the release lines come before the last line"
run "side_add '$tmp/none.counts' 'the second Slurm' '/x/side.log'"
[ "$(last)" = "0 passed, 1 failed" ] && has "failed: the side work (the second Slurm) did not finish: see /x/side.log"
ok $? "side work that left no counts is a failure ($(last))"

# 7. check.sh uses this counting and gives it every make's status
grep -q '^\. tools/suite-count\.sh$' "$src/check.sh"
ok $? "check.sh sources tools/suite-count.sh"
grep -n 'count_suite ' "$src/check.sh" | grep -v '\$?$' >"$tmp/out"
[ "$(grep -c 'count_suite .*\$?$' "$src/check.sh")" -ge 2 ] && [ ! -s "$tmp/out" ]
ok $? "every count_suite call in check.sh is given the status of the make before it"
grep -q 'count_tap "$log" .* "$rc"' "$src/check.sh" && ! grep -q "grep -c '^ok '" "$src/check.sh"
ok $? "check.sh's 24.11 tier counts each script with count_tap (its plan checked), not by grep -c"
grep -q 'suite_notrun "the second Slurm release (BURST_SECOND_SLURM=no)"' "$src/check.sh" &&
	grep -q 'suite_notrun "$hostonly host-only files not run' "$src/check.sh"
ok $? "check.sh names the second release and the host-only files when they do not run"
[ "$(tail -1 "$src/check.sh")" = 'suite_summary "${releases[@]}"' ]
ok $? "check.sh ends with the summary (its status is check.sh's)"
done_testing
