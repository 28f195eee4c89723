#!/usr/bin/env bash
# tests/cli/test_crash_points.sh - burst-agent's crash points for tests
# (TAP, no Slurm): --list-crash-points prints the table, one point a line
# with its description; it covers every node state (before and after its
# transition is durable), every provider call before and after its answer,
# spool intake, join and admission; doc/crash_points.md lists the same
# points; a BURST_CRASH_POINT that names no point, or a bad count, stops the
# agent at once with an error that says what to do.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
AGENT="$build/burst-agent/burst-agent"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out $tmp/err"

"$AGENT" --list-crash-points >"$tmp/out" 2>"$tmp/err"
ok $? "burst-agent --list-crash-points"
! grep -qv $'^[a-z_.]*\t[^\t][^\t]*$' "$tmp/out" && [ -s "$tmp/out" ]
ok $? "... one point a line: its name, a tab, a description"
cut -f1 "$tmp/out" >"$tmp/names"
[ "$(sort -u "$tmp/names" | wc -l)" = "$(wc -l <"$tmp/names")" ]
ok $? "... no name twice" "$tmp/names"

# the node states, from their one table (lib/core/node_state.c)
states=$(sed -n 's/^\t\[NS_[A-Z_]*\] = "\([a-z_]*\)",$/\1/p' "$src/lib/core/node_state.c")
[ "$(echo "$states" | wc -w)" = "$(sed -n 's/^\t\(NS_[A-Z_]*\),.*/\1/p' "$src/lib/core/node_state.h" | grep -vc NS_COUNT)" ]
ok $? "the node states read from lib/core/node_state.c: $(echo $states)"
miss=
for s in $states; do
	for w in before after; do grep -qx "state.$s.$w" "$tmp/names" || miss="$miss state.$s.$w"; done
done
for c in launch terminate list exists console ended; do
	for w in before after; do grep -qx "provider.$c.$w" "$tmp/names" || miss="$miss provider.$c.$w"; done
done
for p in spool.read spool.taken spool.removed join.received join.verified join.rejected join.admitted join.answered; do
	grep -qx "$p" "$tmp/names" || miss="$miss $p"
done
[ -z "$miss" ]; ok $? "every state transition, provider call, spool intake, join and admission has its points (missing:${miss:- none})" "$tmp/names"

# the documentation lists the same points
sed -n 's/^| `\([a-z_.]*\)` |.*/\1/p' "$src/doc/crash_points.md" >"$tmp/doc"
diff "$tmp/names" "$tmp/doc" >"$tmp/err"
ok $? "doc/crash_points.md lists the same points, in the same order" "$tmp/err"

# a point that does not exist, a bad count: refused at start, status 2
BURST_CRASH_POINT=state.nowhere "$AGENT" -c "$tmp/none.conf" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q 'BURST_CRASH_POINT=state.nowhere: no crash point state.nowhere (burst-agent --list-crash-points lists them; the variable is for tests only: unset it)' "$tmp/err"
ok $? "an unknown crash point is refused at start, naming the variable and the listing"
for bad in 0 -1 x 2x ''; do
	BURST_CRASH_POINT="join.admitted:$bad" "$AGENT" -c "$tmp/none.conf" >"$tmp/out" 2>"$tmp/err"
	[ $? = 2 ] && grep -q "BURST_CRASH_POINT=join.admitted:$bad: the count after ':' must be a whole number from 1" "$tmp/err"
	ok $? "count '$bad' is refused"
done
# a good one is taken (the agent then fails on the missing burst.conf, not on the point)
BURST_CRASH_POINT=join.admitted:3 "$AGENT" -c "$tmp/none.conf" >"$tmp/out" 2>"$tmp/err"
grep -q 'BURST_CRASH_POINT=join.admitted:3: this agent ends at that point (for tests only)' "$tmp/err"
ok $? "a point and count that exist are armed, and the agent says so"
# unset: inert (nothing said)
env -u BURST_CRASH_POINT "$AGENT" -c "$tmp/none.conf" >"$tmp/out" 2>"$tmp/err"
! grep -qi 'crash' "$tmp/err"; ok $? "unset, no crash point is armed or mentioned"
done_testing
