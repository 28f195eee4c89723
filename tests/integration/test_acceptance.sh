#!/usr/bin/env bash
# test_acceptance.sh - burst-node accept end to end: a busybox image built
# here from busybox-static, a container test really run by Charliecloud's
# ch-run (its output must come from inside the image), a failing sanity
# check, tests that time out (and must be killed, not waited for), a
# performance test within tolerance of its instance type's reference and
# one with no reference for the node; TAP, exit codes, and a JUnit file
# checked by xmllint and by junitparser.
# burst-matrix: host-only (burst-node accept only, no Slurm in it: the same on every Slurm release)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
node_bin="$build/burst-node/burst-node"
[ -x "$node_bin" ] || bail "no $node_bin (build first)"
[ "$(id -u)" -eq 0 ] || bail "must run as root (ch-run as root, like the agent on a node)"
command -v ch-run >/dev/null || bail "no ch-run: apt-get install charliecloud-runtime"
command -v xmllint >/dev/null || bail "no xmllint: apt-get install libxml2-utils"
/usr/bin/python3 -c 'import junitparser' 2>/dev/null || bail "no junitparser: apt-get install python3-junitparser"

T=$(mktemp -d /tmp/burst-accept.XXXXXX) || bail "mktemp"
trap 'rm -rf "$T"' EXIT
marker="burst-image-$$-$RANDOM"

sh "$src/tests/acceptance/make-busybox-image.sh" "$T/images/bb" "$marker" 2>"$T/img.err"
ok $? "the busybox image builds" "$T/img.err"

cat >"$T/acceptance.conf" <<CONF
# the suite under test
Runtime=charliecloud ImageDir=$T/images
Test=container-hello Kind=container Image=bb Timeout=30 \
Command="/bin/sh -c 'echo inside \$(cat /etc/burst-image-marker) \$(test -e /etc/os-release && echo with || echo without)-os-release'" \
Sanity="^inside $marker without-os-release\$"
Test=sanity-fails Kind=hardware Command="echo goodbye" Sanity="^hello\$" Timeout=10
Test=times-out Kind=hardware Command="sleep 30" Sanity=. Timeout=1
Test=container-times-out Kind=container Image=bb Command="sleep 30" Sanity=. Timeout=1
Test=perf-ok Kind=container Image=bb Command="echo bw=1234.5 MB/s" Sanity="MB/s" \
Perf="bw=bw=([0-9.]+) MB/s" Reference=default:1:-0.1:+0.1 Reference=t.accept:1200:-0.1:+0.1
Test=perf-noref Kind=hardware Command="echo bw=1234.5 MB/s" Sanity="MB/s" \
Perf="bw=bw=([0-9.]+) MB/s" Reference=other.type:1200:-0.1:+0.1
Test=pingpong Kind=mpi Command="osu_latency" Sanity="^8 " Nodes=2
CONF
# the format has no continuation lines: join the ones written above for readability
sed -i -e ':a' -e '/\\$/N; s/\\\n//; ta' "$T/acceptance.conf"

start=$(date +%s%N)
# every process of the run carries this in its environment (ch-run passes it on)
# without USER, as under Slurm or systemd: ch-run as root needs it, burst-node sets it
env -u USER BURST_ACCEPT_PROBE=$marker "$node_bin" accept --conf "$T/acceptance.conf" --node accnode --instance-type t.accept \
	--junit "$T/junit.xml" --json "$T/results.json" >"$T/tap" 2>"$T/err"
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 1 ]; ok $? "exit code 1 when a test fails (got $rc)" "$T/tap" "$T/err"
[ "$elapsed_ms" -lt 10000 ]
ok $? "two 1 s timeouts on 'sleep 30' return in well under 30 s (took $elapsed_ms ms)"
TAP_DIAG="$T/tap $T/err"
grep -qx '1\.\.7' "$T/tap"; ok $? "TAP plan 1..7"
grep -qx 'ok [0-9]* - container-hello@accnode' "$T/tap"
ok $? "the container test passes: the marker inside the image, no /etc/os-release"
! grep -q "inside $marker" "$T/tap"; ok $? "the output of a passing test is not dumped into TAP"
grep -qx 'not ok [0-9]* - sanity-fails@accnode' "$T/tap" &&
	grep -q '^# reason: sanity: the output does not match /^hello$/' "$T/tap"
ok $? "the sanity failure fails, with its reason"
grep -qx 'not ok [0-9]* - times-out@accnode' "$T/tap" &&
	grep -qx 'not ok [0-9]* - container-times-out@accnode' "$T/tap" &&
	[ "$(grep -c '^# reason: timed out after 1 s$' "$T/tap")" -eq 2 ]
ok $? "both timeouts fail with 'timed out after 1 s'"
grep -qx 'ok [0-9]* - perf-ok@accnode' "$T/tap" &&
	grep -q '^# perf bw = 1234.5 (reference 1200 for t.accept' "$T/tap"
ok $? "the perf test passes against its instance type's reference (not default's)"
grep -qx 'not ok [0-9]* - perf-noref@accnode' "$T/tap" &&
	grep -q '^# reason: performance: bw = 1234.5 but there is no reference for this node' "$T/tap"
ok $? "a perf test with no reference for the node fails, saying so"
grep -qx 'ok [0-9]* - pingpong@accnode # SKIP multi-node test.*' "$T/tap"
ok $? "the mpi test is listed as not run here"
sleep 0.2
left=$(grep -lsa "BURST_ACCEPT_PROBE=$marker" /proc/[0-9]*/environ)
[ -z "$left" ]
ok $? "the timed-out tests left no process behind (in or out of the container)${left:+: $left}"

xmllint --noout "$T/junit.xml" 2>"$T/xml.err"
ok $? "the JUnit file is well-formed XML (xmllint)" "$T/xml.err"
cat >"$T/check.py" <<'PY'
import sys
from junitparser import JUnitXml, Failure, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
marker = sys.argv[2]
cases = [c for s in xml for c in s]
names = [c.name for c in cases]
fails = {c.name: r.message for c in cases for r in c.result if isinstance(r, Failure)}
skips = [c.name for c in cases for r in c.result if isinstance(r, Failure) is False and isinstance(r, Skipped)]
errs = []
if len(cases) != 7: errs.append("testcases: %d, want 7" % len(cases))
if len(set(names)) != len(names): errs.append("names not unique: %s" % names)
if not all(n.endswith("@accnode") for n in names): errs.append("names not check@node: %s" % names)
if sorted(fails) != sorted(["sanity-fails@accnode", "times-out@accnode",
                            "container-times-out@accnode", "perf-noref@accnode"]):
    errs.append("failures: %s" % sorted(fails))
if skips != ["pingpong@accnode"]: errs.append("skipped: %s" % skips)
if fails.get("times-out@accnode") != "timed out after 1 s": errs.append("timeout message: %r" % fails.get("times-out@accnode"))
if any(c.classname != "t.accept" for c in cases): errs.append("classname not the instance type")
suite = next(iter(xml))
if (suite.tests, suite.failures, suite.skipped) != (7, 4, 1):
    errs.append("suite counts %s" % ((suite.tests, suite.failures, suite.skipped),))
hello = [c for c in cases if c.name == "container-hello@accnode"][0]
if marker not in (hello.system_out or ""): errs.append("system-out lacks the marker: %r" % hello.system_out)
if float(hello.time) <= 0: errs.append("no time on the container test")
print("\n".join(errs))
sys.exit(1 if errs else 0)
PY
/usr/bin/python3 "$T/check.py" "$T/junit.xml" "$marker" >"$T/py.out" 2>&1
ok $? "junitparser: 7 tests, 4 failures, 1 skipped, unique check@node names, classname, output" "$T/py.out"

/usr/bin/python3 - "$T/results.json" >"$T/json.out" 2>&1 <<'PY'
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))}
p = r["perf-ok"]["perf"]["bw"]
assert r["perf-ok"]["passed"] is True, r["perf-ok"]
assert (p["value"], p["reference"], p["lower"], p["upper"], p["target"]) == (1234.5, 1200, -0.1, 0.1, "t.accept"), p
assert r["perf-noref"]["passed"] is False and r["perf-noref"]["perf"]["bw"]["reference"] is None
assert r["times-out"]["reason"] == "timed out after 1 s" and r["times-out"]["duration"] < 5
assert r["container-hello"]["kind"] == "container" and r["container-hello"]["node"] == "accnode"
PY
ok $? "JSON results for the agent" "$T/json.out"

# only the passing container test: exit 0
grep -E '^(Runtime|Test=container-hello)' "$T/acceptance.conf" >"$T/pass.conf"
"$node_bin" accept --conf "$T/pass.conf" --node accnode --tap "$T/pass.tap" >"$T/pass.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -qx 'ok 1 - container-hello@accnode' "$T/pass.tap" && [ ! -s "$T/pass.out" ]
ok $? "exit 0 when everything passes; --tap writes the file, not stdout (got $rc)" "$T/pass.tap" "$T/pass.out"

# --kind hardware: only the hardware tests
"$node_bin" accept --conf "$T/acceptance.conf" --node accnode --kind hardware >"$T/hw.tap" 2>&1
[ "$(grep -c '^\(not \)\?ok ' "$T/hw.tap")" -eq 3 ] && ! grep -q container "$T/hw.tap"
ok $? "--kind hardware runs only the hardware tests" "$T/hw.tap"

# a configuration error: exit 2, file:line and a suggestion
printf 'Test=x Kind=hardware Command=true Sanity=.\nTest=y Kind=hardware Comand=true Sanity=.\n' >"$T/bad.conf"
"$node_bin" accept --conf "$T/bad.conf" >"$T/bad.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "$T/bad.conf:2: unknown Test key 'Comand'; did you mean 'Command'?" "$T/bad.out"
ok $? "a configuration error exits 2 naming file:line and the nearest key (got $rc)" "$T/bad.out"

done_testing
