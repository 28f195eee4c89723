#!/usr/bin/env bash
# tests/cli/integration_order.sh - the integration tests run one at a time
# (TAP, no Slurm): each starts a private Slurm cluster, and two side by
# side under 'make -j' miss their timing (and on two cores starve each
# other). Makefile.am orders them with one prerequisite line per test,
# "tests/integration/B.log: tests/integration/A.log"; a test added to
# integration_tests without its line runs beside the others. This checks
# that the lines make one chain through every integration test.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$src/Makefile.am" >"$tmp/out" 2>&1 <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
m = re.search(r"^integration_tests\s*=(.*)$", text, re.M)
if not m:
    print("bad: Makefile.am has no integration_tests"); sys.exit(0)
tests = [t[:-3] for t in m.group(1).split()]
print("tests: " + " ".join(t + ".sh" for t in tests))
prereq = {}
for b, a in re.findall(r"^(tests/integration/\S+)\.log\s*:\s*(tests/integration/\S+)\.log\s*$", text, re.M):
    if b in prereq:
        print("bad: %s.log has two ordering lines" % b)
    prereq[b] = a
first = [t for t in tests if t not in prereq]
print("unordered: " + " ".join(first))
after = {}
for b, a in prereq.items():
    if a in after:
        print("bad: both %s and %s run after %s (side by side)" % (after[a], b, a))
    after[a] = b
    if b not in tests or a not in tests:
        print("bad: ordering line %s.log: %s.log names a test not in integration_tests" % (b, a))
# walk the chain from the first
seen, t = [], first[0] if first else None
while t and t not in seen:
    seen.append(t)
    t = after.get(t)
print("chain: %d of %d" % (len(seen), len(tests)))
# check.sh runs integration_late apart, once the rest is done: they must be
# the chain's last, in their order (else make would run one as a
# prerequisite of another test, beside check.sh's own run of it)
m = re.search(r"^integration_late\s*=(.*)$", text, re.M)
late = [t[:-3] for t in m.group(1).split()] if m else []
print("late: " + " ".join(t + ".sh" for t in late))
if not late:
    print("bad: Makefile.am has no integration_late")
elif seen[-len(late):] != late:
    print("bad: the chain must end with integration_late (%s), in that order; it ends with %s: a new test's ordering line goes before %s"
          % (" ".join(late), " ".join(seen[-len(late):]), late[0]))
for t in late:
    if t not in tests:
        print("bad: integration_late names %s.sh, not in integration_tests" % t)
PY
cat "$tmp/out" | sed 's/^/# /'
n=$(sed -n 's/^unordered: //p' "$tmp/out" | wc -w)
[ "$n" -eq 1 ]
ok $? "exactly one integration test has no ordering line: the first ($(sed -n 's/^unordered: //p' "$tmp/out"))" "$tmp/out"
grep '^bad:' "$tmp/out" | grep -v integration_late >"$tmp/bad"
[ ! -s "$tmp/bad" ]
ok $? "no test runs after two others, or two after one; every ordered name is an integration test" "$tmp/bad"
grep -Eq '^chain: ([0-9]+) of \1$' "$tmp/out"
ok $? "one chain runs through every integration test ($(sed -n 's/^chain: //p' "$tmp/out"))" "$tmp/out"
grep -q '^late: .' "$tmp/out" && ! grep -q '^bad: .*integration_late' "$tmp/out"
ok $? "the chain ends with integration_late, which ./check.sh runs apart ($(sed -n 's/^late: //p' "$tmp/out"))" "$tmp/out"
# make check runs each test by its path: one without its x bit fails
# ("Permission denied") there, though it passes when run with bash
: >"$tmp/notx"
for t in $(sed -n 's/^tests: //p' "$tmp/out"); do
	[ -x "$src/$t" ] || echo "$t" >>"$tmp/notx"
done
[ ! -s "$tmp/notx" ]
ok $? "every integration test is executable (not: $(tr '\n' ' ' <"$tmp/notx"))" "$tmp/notx"
done_testing
