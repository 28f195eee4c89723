#!/usr/bin/env bash
# tests/cli/bless_report.sh - `burstctl bless --from-report DIR` (TAP): from
# the artifacts of a green node acceptance run (JUnit reports and
# provenance-NODE.json of the fixture sysroots' records) it blesses each
# distinct kernel and every driver with a recorded version; a red report
# (a <failure> or <error>, or a failures= count), a report without JUnit or
# test cases, a record without a kernel, a record of a node no test ran on,
# broken XML or JSON: refused with a message naming what, nothing blessed;
# what a message quotes from the artifacts has its control characters
# written out.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
S="$src/tests/fixtures/sysroots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/err"
mkdir "$tmp/state"
echo "StateDir=$tmp/state" >"$tmp/burst.conf"
export BURST_CONF="$tmp/burst.conf"
K="$tmp/state/blessed-kernels" D="$tmp/state/blessed-drivers"

# record FIXTURE NODE > file: the fixture's expected record as burst-node
# provenance --node NODE writes it
record() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); r["identity"]["node"] = sys.argv[2]; print(json.dumps(r, indent=2))' \
		"$S/$1.expected.json" "$2"
}
# junit FILE NODE CASE...: a node report; a CASE "name:fail" fails
junit() {
	local f=$1 node=$2 c; shift 2
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		echo "<testsuites><testsuite name=\"acceptance@$node\" tests=\"$#\">"
		for c in "$@"; do
			case "$c" in
			*:fail) echo "<testcase classname=\"p4d.24xlarge\" name=\"${c%:fail}@$node\"><failure message=\"sanity: no match\"/></testcase>" ;;
			*:error) echo "<testcase classname=\"p4d.24xlarge\" name=\"${c%:error}@$node\"><error message=\"crashed\"/></testcase>" ;;
			*) echo "<testcase classname=\"p4d.24xlarge\" name=\"$c@$node\"/>" ;;
			esac
		done
		echo '</testsuite></testsuites>'
	} >"$f"
}
green() {   # DIR: two nodes of a100x8, node and MPI reports all passed
	mkdir -p "$1"
	record a100x8 g-1 >"$1/provenance-g-1.json"
	record a100x8 g-2 >"$1/provenance-g-2.json"
	junit "$1/node-report-g-1.xml" g-1 gpu-count nccl
	junit "$1/node-report-g-2.xml" g-2 gpu-count nccl
	junit "$1/report.xml" 'g-[1-2]' ranks pingpong allreduce
	echo '1..2' >"$1/node-report-g-1.tap"
}
unchanged() { [ ! -e "$K" ] && [ ! -e "$D" ]; }

# --- red, and other reports that bless nothing ---
green "$tmp/red"
junit "$tmp/red/node-report-g-2.xml" g-2 gpu-count nccl:fail
"$B" bless --from-report "$tmp/red" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "^burstctl bless: the report in $tmp/red is red: 1 of 7 test cases failed (nccl@g-2 (node-report-g-2.xml)); a kernel or driver is blessed only from a green run: nothing blessed$" "$tmp/err"
ok $? "a red report is refused: exit 1, the failed case and its file named (exit $rc)" "$tmp/err"
unchanged; ok $? "... and nothing is blessed"

junit "$tmp/red/node-report-g-2.xml" g-2 gpu-count nccl:error
"$B" bless --from-report "$tmp/red" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'is red: 1 of 7 test cases failed (nccl@g-2' "$tmp/err" && unchanged
ok $? "an <error> case is red too" "$tmp/err"

junit "$tmp/red/node-report-g-2.xml" g-2 gpu-count nccl
sed -i 's/tests="2"/tests="3" failures="1"/' "$tmp/red/node-report-g-2.xml"
"$B" bless --from-report "$tmp/red" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'is red: a test suite counts failures or errors' "$tmp/err" && unchanged
ok $? "a suite whose failures= count is above 0 is red" "$tmp/err"

mkdir "$tmp/nojunit"
record a100x8 g-1 >"$tmp/nojunit/provenance-g-1.json"
"$B" bless --from-report "$tmp/nojunit" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "$tmp/nojunit has no JUnit report" "$tmp/err" && unchanged
ok $? "no JUnit report: exit 2, said so" "$tmp/err"
echo '<testsuites/>' >"$tmp/nojunit/report.xml"
"$B" bless --from-report "$tmp/nojunit" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "JUnit reports without any test case" "$tmp/err" && unchanged
ok $? "a JUnit report without test cases blesses nothing" "$tmp/err"

green "$tmp/norec"
rm "$tmp/norec"/provenance-*.json
"$B" bless --from-report "$tmp/norec" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "has no provenance record (provenance-NODE.json" "$tmp/err" && unchanged
ok $? "no provenance record: exit 2, said so" "$tmp/err"

green "$tmp/stranger"
record a10gx4 g-9 >"$tmp/stranger/provenance-g-9.json"
"$B" bless --from-report "$tmp/stranger" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-9.json is the record of node g-9, but no test case of the report ran there" "$tmp/err" && unchanged
ok $? "a record of a node no test ran on is refused, naming it" "$tmp/err"
# the record's strings are the artifact's: written out, never sent to the terminal raw
record a10gx4 "$(printf 'g-9\033]0;pwned\007')" >"$tmp/stranger/provenance-g-9.json"
"$B" bless --from-report "$tmp/stranger" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -qF 'is the record of node g-9\x1b]0;pwned\x07, but' "$tmp/err" && ! grep -q "$(printf '\033')" "$tmp/err"
ok $? "... its node's control characters written out (\\x1b), not raw" "$tmp/err"

green "$tmp/nokernel"
python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); del r["kernel"]["release"]; json.dump(r, open(sys.argv[1], "w"))' \
	"$tmp/nokernel/provenance-g-2.json"
"$B" bless --from-report "$tmp/nokernel" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-2.json names no kernel release" "$tmp/err" && unchanged
ok $? "a record without a kernel release is refused, naming the file" "$tmp/err"

green "$tmp/badxml"
echo '<testsuites><testsuite>' >"$tmp/badxml/report.xml"
"$B" bless --from-report "$tmp/badxml" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "$tmp/badxml/report.xml is not well-formed XML" "$tmp/err" && unchanged
ok $? "broken XML is named" "$tmp/err"

green "$tmp/badjson"
echo '{"kernel": ' >"$tmp/badjson/provenance-g-1.json"
"$B" bless --from-report "$tmp/badjson" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-1.json is not a JSON object" "$tmp/err" && unchanged
ok $? "broken JSON is named" "$tmp/err"

: >"$tmp/badjson/provenance-g-1.json"
"$B" bless --from-report "$tmp/badjson" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-1.json is empty: burst-node provenance failed on that node in the job" "$tmp/err" && unchanged
ok $? "an empty record (provenance failed in the job) is named as such" "$tmp/err"

"$B" bless --from-report "$tmp/none" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "cannot read the report directory $tmp/none" "$tmp/err"
ok $? "a missing directory is named" "$tmp/err"
"$B" bless --from-report "$tmp/red" --kernel 6.1.0 >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q 'give one of --kernel, --driver, --from, --from-report, --list' "$tmp/err"
ok $? "--from-report with another action is a usage error" "$tmp/err"

# --- green: the kernel and the drivers with versions ---
green "$tmp/green"
# another XML artifact (not JUnit) does not count or hurt
echo '<coverage/>' >"$tmp/green/coverage.xml"
"$B" bless --from-report "$tmp/green" >"$tmp/out" 2>"$tmp/err"
ok $? "a green report: exit 0" "$tmp/err" "$tmp/out"
grep -qx "report $tmp/green: green, 7 test cases in 3 JUnit files; 2 provenance records: 1 kernels, 4 driver versions" "$tmp/out"
ok $? "it says what it read" "$tmp/out"
[ "$(grep -v '^#' "$K")" = "5.15.0-91-generic:b0bf2a764c76a427b48c6edad500ecbaf2387c6c  # from report $tmp/green" ]
ok $? "the kernel (release:build-id) of the records is blessed once" "$K"
[ "$(grep -v '^#' "$D" | sed 's/  #.*//' | sort | tr '\n' ' ')" = "mlx5_core=23.10-1.1.9 mlx5_ib=23.10-1.1.9 nvidia=550.54.15 nvidia_uvm=550.54.15 " ]
ok $? "every driver with a recorded version is blessed" "$D"
grep -q "note: $tmp/green/provenance-g-1.json: driver ib_core has no recorded version; not blessed" "$tmp/err"
ok $? "a driver without a version is named, not blessed" "$tmp/err"
"$B" bless --list >"$tmp/list" 2>"$tmp/err" &&
	grep -q "^5.15.0-91-generic:b0bf2a764c76a427b48c6edad500ecbaf2387c6c	$K$" "$tmp/list" &&
	grep -q "^nvidia=550.54.15	$D$" "$tmp/list"
ok $? "bless --list reads both files back (the note is a comment)" "$tmp/list" "$tmp/err"
"$B" bless --from-report "$tmp/green" >"$tmp/out" 2>"$tmp/err" &&
	[ "$(grep -c '^5.15' "$K")" = 1 ] && [ "$(grep -c '^nvidia=' "$D")" = 1 ] &&
	grep -q 'already blessed' "$tmp/out"
ok $? "blessing the same report again adds nothing" "$tmp/out"

# a second, green run on another image adds its kernel and versions
green "$tmp/green2"
record a10gx4 g-1 >"$tmp/green2/provenance-g-1.json"
"$B" bless --from-report "$tmp/green2" >"$tmp/out" 2>"$tmp/err"
ok $? "a second green report (two images) exits 0" "$tmp/err"
grep -q '^5.15.0-1051-aws:a218fe16855581639c165ab4f6d33586e2200c57 ' "$K" && grep -qx 'nvidia=535.161.07  # from report .*' "$D" &&
	grep -qx 'lustre=2.15.4  # from report .*' "$D" && [ "$(grep -c '^5.15' "$K")" = 2 ]
ok $? "... both records' kernels and drivers are blessed" "$K" "$D"

# a report path with a newline cannot add a line of its own
nl="$tmp/x
6.6.6"
green "$nl"
rm -f "$K" "$D"
"$B" bless --from-report "$nl" >"$tmp/out" 2>"$tmp/err"
ok $? "a report directory whose name has a newline works" "$tmp/err"
! grep -q '^6.6.6' "$K" && [ "$(grep -vc '^#' "$K")" = 1 ]
ok $? "... and its name stays in the note, on the entry's line" "$K"
done_testing
