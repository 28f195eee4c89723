#!/usr/bin/env bash
# tests/cli/bless_report.sh - `burstctl bless --from-report DIR` (TAP): from
# the artifacts of a green node acceptance run (JUnit reports as the CI job
# writes them: suite "acceptance" per node, TEST@NODE, and
# "mpi-acceptance", TEST@HOSTLIST; provenance-NODE.json of the fixture
# sysroots' records, each the record of an admission in the agent's
# database) it blesses each distinct kernel and every driver with a
# recorded version. Refused, nothing blessed, with a message naming what: a
# red report (a <failure> or <error>, or a failures= count); a run whose
# cases were skipped (a skip is no pass) or that lacks a required suite on
# a node; a record that is not one the agent admitted (unless --unverified,
# which blesses it saying so); artifacts over the size, file and case
# limits (refused at once, in little memory), or not regular files; a
# report without JUnit or test cases, a record without a kernel, a record
# of a node no test ran on, broken XML or JSON. What a message quotes from
# the artifacts has its control characters written out.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
NB="$build/burst-node/burst-node"
RF="$build/tests/unit/record_fixture"
S="$src/tests/fixtures/sysroots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/err"
mkdir "$tmp/state"
echo "StateDir=$tmp/state" >"$tmp/burst.conf"
export BURST_CONF="$tmp/burst.conf"
K="$tmp/state/blessed-kernels" D="$tmp/state/blessed-drivers"
DB="$tmp/state/agent.db"

# record FIXTURE NODE > file: the fixture's expected record as burst-node
# provenance --node NODE writes it
record() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); r["identity"]["node"] = sys.argv[2]; print(json.dumps(r, indent=2))' \
		"$S/$1.expected.json" "$2"
}
# admit FILE NODE: the agent admitted NODE with that record (agent.db)
admit() {
	local id
	id=$("$NB" provenance --admitted --record "$1" --id) &&
		"$RF" "$DB" "$2" "i-$2" "$id" admitted "$1" "$(date +%s)" ||
		echo "admit $1 $2 failed" >&2
}
# the records the agent admitted (made once: python starts slowly)
mkdir "$tmp/rec"
record a100x8 g-1 >"$tmp/rec/a100x8-g-1.json" && record a100x8 g-2 >"$tmp/rec/a100x8-g-2.json" &&
	record a10gx4 g-1 >"$tmp/rec/a10gx4-g-1.json" && record a10gx4 g-9 >"$tmp/rec/a10gx4-g-9.json" ||
	bail "cannot make the records from the fixtures"
admit "$tmp/rec/a100x8-g-1.json" g-1
admit "$tmp/rec/a100x8-g-2.json" g-2
admit "$tmp/rec/a10gx4-g-1.json" g-1
# junit FILE SUITE AT CASE...: a report of one suite whose cases ran at AT
# (a node, or a host list); a CASE "name:fail", ":error" or ":skip" is so
junit() {
	local f=$1 suite=$2 at=$3 c; shift 3
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		echo "<testsuites tests=\"$#\"><testsuite name=\"$suite\" tests=\"$#\">"
		for c in "$@"; do
			case "$c" in
			*:fail) echo "<testcase classname=\"p4d.24xlarge\" name=\"${c%:fail}@$at\"><failure message=\"sanity: no match\"/></testcase>" ;;
			*:error) echo "<testcase classname=\"p4d.24xlarge\" name=\"${c%:error}@$at\"><error message=\"crashed\"/></testcase>" ;;
			*:skip) echo "<testcase classname=\"p4d.24xlarge\" name=\"${c%:skip}@$at\"><skipped message=\"not run here\"/></testcase>" ;;
			*) echo "<testcase classname=\"p4d.24xlarge\" name=\"$c@$at\"><system-out>ok</system-out></testcase>" ;;
			esac
		done
		echo '</testsuite></testsuites>'
	} >"$f"
}
green() {   # DIR: two nodes of a100x8 the agent admitted, node and MPI reports all passed
	mkdir -p "$1"
	cp "$tmp/rec/a100x8-g-1.json" "$1/provenance-g-1.json"
	cp "$tmp/rec/a100x8-g-2.json" "$1/provenance-g-2.json"
	junit "$1/node-report-g-1.xml" acceptance g-1 gpu-count nccl
	junit "$1/node-report-g-2.xml" acceptance g-2 gpu-count nccl
	junit "$1/report.xml" mpi-acceptance 'g-[1-2]' ranks pingpong allreduce
	echo '1..2' >"$1/node-report-g-1.tap"
}
unchanged() { [ ! -e "$K" ] && [ ! -e "$D" ]; }
# maxrss CMD...: run it; its exit status, and its peak RSS in KiB on fd 3
maxrss() {
	python3 -c 'import os, resource, subprocess, sys
rc = subprocess.run(sys.argv[1:]).returncode
os.write(3, b"%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$@"
}

# --- red, and other reports that bless nothing ---
green "$tmp/red"
junit "$tmp/red/node-report-g-2.xml" acceptance g-2 gpu-count nccl:fail
"$B" bless --from-report "$tmp/red" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "^burstctl bless: the report in $tmp/red is red: 1 of 7 test cases failed (nccl@g-2 (node-report-g-2.xml)); a kernel or driver is blessed only from a green run: nothing blessed$" "$tmp/err"
ok $? "a red report is refused: exit 1, the failed case and its file named (exit $rc)" "$tmp/err"
unchanged; ok $? "... and nothing is blessed"

junit "$tmp/red/node-report-g-2.xml" acceptance g-2 gpu-count nccl:error
"$B" bless --from-report "$tmp/red" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'is red: 1 of 7 test cases failed (nccl@g-2' "$tmp/err" && unchanged
ok $? "an <error> case is red too" "$tmp/err"

junit "$tmp/red/node-report-g-2.xml" acceptance g-2 gpu-count nccl
sed -i 's/tests="2"/tests="3" failures="1"/' "$tmp/red/node-report-g-2.xml"
"$B" bless --from-report "$tmp/red" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'is red: a test suite counts failures or errors' "$tmp/err" && unchanged
ok $? "a suite whose failures= count is above 0 is red" "$tmp/err"

# --- a skip is no pass; every node needs a pass of each required suite ---
green "$tmp/skips"
junit "$tmp/skips/node-report-g-1.xml" acceptance g-1 gpu-count:skip nccl:skip
junit "$tmp/skips/node-report-g-2.xml" acceptance g-2 gpu-count:skip nccl:skip
junit "$tmp/skips/report.xml" mpi-acceptance 'g-[1-2]' ranks:skip
"$B" bless --from-report "$tmp/skips" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q "^burstctl bless: $tmp/skips/provenance-g-1.json is the record of node g-1, which passed no test case of suite acceptance (2 skipped): a skipped case is not a pass" "$tmp/err" && unchanged
ok $? "a run whose every case was skipped is refused (exit $rc), naming the node and the suite; nothing blessed" "$tmp/err"

junit "$tmp/skips/node-report-g-1.xml" acceptance g-1 gpu-count nccl
junit "$tmp/skips/node-report-g-2.xml" acceptance g-2 gpu-count nccl
"$B" bless --from-report "$tmp/skips" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-1.json is the record of node g-1, which passed no test case of suite mpi-acceptance (1 skipped)" "$tmp/err" && unchanged
ok $? "... and so is one whose multi-node suite was only skipped (the node suites passed)" "$tmp/err"

green "$tmp/nompi"
rm "$tmp/nompi/report.xml"
"$B" bless --from-report "$tmp/nompi" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-1.json is the record of node g-1, which has no test case of suite mpi-acceptance in the report: a node's kernel is blessed only when the node passed every required suite (--require-suites; default acceptance,mpi-acceptance)" "$tmp/err" && unchanged
ok $? "a run without the multi-node suite (report.xml) is refused, naming the suite missing" "$tmp/err"
junit "$tmp/nompi/report.xml" mpi-acceptance 'g-1' ranks
"$B" bless --from-report "$tmp/nompi" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-2.json is the record of node g-2, which has no test case of suite mpi-acceptance" "$tmp/err" && unchanged
ok $? "... and one whose multi-node cases did not run on every record's node" "$tmp/err"
rm "$tmp/nompi/report.xml"
"$B" bless --from-report "$tmp/nompi" --require-suites acceptance >"$tmp/out" 2>"$tmp/err"
ok $? "--require-suites acceptance blesses the run without it" "$tmp/err"
rm -f "$K" "$D"

# --- the records must be the agent's admissions ---
green "$tmp/forged"
python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); r["kernel"]["release"] = "6.6.6-evil"; r["kernel"]["build_id"] = "deadbeef"
r["drivers"]["nvidia"]["version"] = "999.1"; json.dump(r, open(sys.argv[1], "w"), indent=2)' "$tmp/forged/provenance-g-2.json"
"$B" bless --from-report "$tmp/forged" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q "^burstctl bless: refused: cannot verify provenance-g-2.json: no admission of node g-2 in $DB has its provenance id [0-9a-f]\{16\}\.\.\. (the CI job saves the record the node was admitted with: burst-node provenance --admitted); --unverified blesses the run all the same, unverified; nothing blessed$" "$tmp/err" &&
	! grep -q 'cannot verify provenance-g-1.json' "$tmp/err" && unchanged
ok $? "a record that is no admission of the agent (6.6.6-evil, nvidia=999.1) is refused (exit $rc), naming it; nothing blessed" "$tmp/err"
"$B" bless --from-report "$tmp/forged" --unverified >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -q '^6.6.6-evil:deadbeef  # from report .* (unverified)$' "$K" && grep -q '^nvidia=999.1  # from report .* (unverified)$' "$D"
ok $? "--unverified blesses it (exit $rc), the entries marked unverified" "$K" "$D" "$tmp/err"
grep -q "warning: cannot verify provenance-g-2.json" "$tmp/err" &&
	grep -q "^burstctl bless: warning: the blessing from $tmp/forged is UNVERIFIED: 1 of 2 records are not the record of an admission the agent made (--unverified)$" "$tmp/err" &&
	grep -q "2 provenance records, UNVERIFIED" "$tmp/out"
ok $? "... and says so: a warning per record, and the blessing called unverified" "$tmp/err" "$tmp/out"
rm -f "$K" "$D"
mkdir "$tmp/nodb"
"$B" bless --from-report "$tmp/nompi" --require-suites acceptance --state-dir "$tmp/nodb" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "refused: cannot verify the records against the agent's admissions: no agent state at $tmp/nodb/agent.db" "$tmp/err" &&
	[ ! -e "$tmp/nodb/blessed-kernels" ]
ok $? "without the agent's database nothing is verified, and nothing blessed without --unverified" "$tmp/err"

# --- bounds: the size of an artifact, the number of files and cases ---
green "$tmp/big"
python3 -c 'import sys
f = open(sys.argv[1], "w")
f.write("<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"acceptance\">\n")
line = "<testcase name=\"x@g-1\"><system-out>" + "y" * 1000 + "</system-out></testcase>\n"
for i in range(48 * 1024):
    f.write(line)
f.write("</testsuite></testsuites>\n")' "$tmp/big/node-report-g-1.xml"
t0=$(date +%s%N)
maxrss timeout 10 "$B" bless --from-report "$tmp/big" >"$tmp/out" 2>"$tmp/err" 3>"$tmp/rss"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000)) rss=$(cat "$tmp/rss")
[ $rc = 2 ] && grep -q "^burstctl bless: $tmp/big/node-report-g-1.xml is over 16 MiB, the limit of one artifact file (a node acceptance report is far smaller; --max-file-mib N raises the limit); nothing blessed$" "$tmp/err" && unchanged
ok $? "a 48 MB report is refused (exit $rc), naming the file, the limit and how to raise it" "$tmp/err"
[ "$rss" -lt 102400 ]
ok $? "... in little memory: peak RSS ${rss} KiB, under 100 MB ($ms ms)" "$tmp/err"
"$B" bless --from-report "$tmp/big" --max-file-mib 64 >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && grep -q "green, 49157 test cases" "$tmp/out"
ok $? "--max-file-mib 64 reads it" "$tmp/err" "$tmp/out"
rm -f "$K" "$D"
# one within the limit is read as a stream: its captured output is not held
python3 -c 'import sys
f = open(sys.argv[1], "w")
f.write("<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"acceptance\">\n")
for i in range(12):
    f.write("<testcase name=\"t%d@g-1\"><system-out>%s</system-out></testcase>\n" % (i, "y" * (1 << 20)))
f.write("</testsuite></testsuites>\n")' "$tmp/big/node-report-g-1.xml"
maxrss "$B" bless --from-report "$tmp/big" >"$tmp/out" 2>"$tmp/err" 3>"$tmp/rss"
rc=$? rss=$(cat "$tmp/rss")
[ $rc = 0 ] && [ "$rss" -lt 102400 ]
ok $? "a 12 MiB report within the limit is read in under 100 MB (exit $rc, peak RSS $rss KiB)" "$tmp/err"
rm -f "$K" "$D"

"$B" bless --from-report "$tmp/red" --max-files 4 >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "^burstctl bless: $tmp/red has more than 4 artifact files (\*.xml, provenance-\*.json): over the limit of a run (--max-files N raises it); nothing blessed$" "$tmp/err"
ok $? "more artifact files than --max-files are refused, naming the limit" "$tmp/err"
green "$tmp/cases"
"$B" bless --from-report "$tmp/cases" --max-cases 5 >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "^burstctl bless: more than 5 test cases in the reports (at report.xml): over the limit of a run (--max-cases N raises it); nothing blessed$" "$tmp/err" && unchanged
ok $? "more test cases than --max-cases are refused, naming the limit and where" "$tmp/err"
"$B" bless --from-report "$tmp/cases" --max-cases 0 >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q -- "--max-cases 0: give a whole number from 1" "$tmp/err"
ok $? "a limit of 0 is a usage error" "$tmp/err"
"$B" bless --kernel 6.1.0 --unverified >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q -- "--unverified and the --max-\* limits go with --from-report" "$tmp/err" && unchanged
ok $? "--unverified without --from-report is a usage error" "$tmp/err"

green "$tmp/fifo"
rm "$tmp/fifo/report.xml" && mkfifo "$tmp/fifo/report.xml"
timeout 10 "$B" bless --from-report "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "$tmp/fifo/report.xml is not a regular file (a FIFO)" "$tmp/err"
ok $? "a FIFO named like a report is refused, not waited on" "$tmp/err"
rm "$tmp/fifo/report.xml" && ln -s /dev/zero "$tmp/fifo/report.xml"
timeout 10 "$B" bless --from-report "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "$tmp/fifo/report.xml is a symbolic link" "$tmp/err" && unchanged
ok $? "... and a symbolic link (to /dev/zero) too" "$tmp/err"

# --- other reports that bless nothing ---
mkdir "$tmp/nojunit"
cp "$tmp/rec/a100x8-g-1.json" "$tmp/nojunit/provenance-g-1.json"
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
cp "$tmp/rec/a10gx4-g-9.json" "$tmp/stranger/provenance-g-9.json"
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
[ $? = 2 ] && grep -q "provenance-g-1.json is not a JSON object (cut short)" "$tmp/err" && unchanged
ok $? "broken JSON is named" "$tmp/err"
echo '{"kernel": {}} {}' >"$tmp/badjson/provenance-g-1.json"
"$B" bless --from-report "$tmp/badjson" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "provenance-g-1.json is not a JSON object (another JSON value, or more after it)" "$tmp/err" && unchanged
ok $? "... and so is JSON with more after the record" "$tmp/err"

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
grep -qx "report $tmp/green: green, 7 test cases (7 passed, 0 skipped) in 3 JUnit files; 2 provenance records, each the record of an admission in agent.db: 1 kernels, 4 driver versions" "$tmp/out"
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

# a skipped case beside passed ones of each suite is fine
green "$tmp/someskip"
junit "$tmp/someskip/node-report-g-1.xml" acceptance g-1 gpu-count nccl:skip
"$B" bless --from-report "$tmp/someskip" >"$tmp/out" 2>"$tmp/err" &&
	grep -q "green, 7 test cases (6 passed, 1 skipped)" "$tmp/out"
ok $? "a skipped case beside a passed one of each suite blesses, counting it" "$tmp/err" "$tmp/out"

# a second, green run on another image adds its kernel and versions
green "$tmp/green2"
cp "$tmp/rec/a10gx4-g-1.json" "$tmp/green2/provenance-g-1.json"
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
